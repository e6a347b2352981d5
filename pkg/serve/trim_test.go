package serve

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"
)

// TestPagedList: a list is read in pages of listPage, at the latest
// resourceVersion rather than the watch cache's "0" (which may ignore the
// limit), and each page's objects are transformed before the next page
// is asked for; the informer gets the transformed objects and the list's
// resourceVersion.
func TestPagedList(t *testing.T) {
	var asked []metav1.ListOptions
	transformed := 0
	page := func(n int, cont string) *corev1.PodList {
		l := &corev1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: "42", Continue: cont}}
		for i := range 2 {
			l.Items = append(l.Items, corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: fmt.Sprintf("p%d-%d", n, i)}})
		}
		return l
	}
	lw := pagedList(&cache.ListWatch{ListWithContextFunc: func(_ context.Context, opts metav1.ListOptions) (runtime.Object, error) {
		assert.Equal(t, 2*len(asked), transformed, "every page before this one transformed")
		asked = append(asked, opts)
		switch opts.Continue {
		case "":
			return page(0, "c1"), nil
		case "c1":
			return page(1, "c2"), nil
		default:
			return page(2, ""), nil
		}
	}}, func(obj any) (any, error) {
		transformed++
		return trimPod(nil)(obj)
	})
	out, err := lw.ListWithContext(context.Background(), metav1.ListOptions{ResourceVersion: "0", Limit: 500})
	require.NoError(t, err)
	require.Len(t, asked, 3)
	for i, o := range asked {
		assert.EqualValues(t, listPage, o.Limit)
		assert.Empty(t, o.ResourceVersion, "page %d", i)
	}
	assert.Equal(t, []string{"", "c1", "c2"}, []string{asked[0].Continue, asked[1].Continue, asked[2].Continue})
	list := out.(*objectList)
	assert.Equal(t, "42", list.ResourceVersion)
	require.Len(t, list.Items, 6)
	for _, o := range list.Items {
		assert.IsType(t, &podState{}, o)
	}
	assert.True(t, lw.DisableChunking, "client-go's pager would gather the pages")
}

// TestTrimPod: of a pod that holds accelerators the informer keeps its
// node, devices, UID and resourceVersion (and the recorder's annotations
// and labels, when it runs); of one that holds none, its name alone.
func TestTrimPod(t *testing.T) {
	gpu := func(n string) corev1.ResourceList {
		return corev1.ResourceList{"nvidia.com/gpu": resource.MustParse(n)}
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "train", UID: "u1", ResourceVersion: "7",
			Annotations: map[string]string{"opendatahub.io/hardware-profile-name": "gpu", "other": "x"}, Labels: map[string]string{"app": "x"}},
		Spec: corev1.PodSpec{NodeName: "n1", Containers: []corev1.Container{{Name: "c", Image: "big/image", Env: []corev1.EnvVar{{Name: "SECRET", Value: "s"}},
			Resources: corev1.ResourceRequirements{Limits: gpu("2")}}}},
	}
	keep := func(p *corev1.Pod) (map[string]string, map[string]string) {
		return map[string]string{"opendatahub.io/hardware-profile-name": p.Annotations["opendatahub.io/hardware-profile-name"]}, nil
	}
	got, err := trimPod(keep)(pod)
	require.NoError(t, err)
	assert.Equal(t, &podState{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "train", UID: "u1", ResourceVersion: "7",
		Annotations: map[string]string{"opendatahub.io/hardware-profile-name": "gpu"}}, Node: "n1", Devices: 2}, got)

	pod.Spec.Containers[0].Resources = corev1.ResourceRequirements{}
	got, err = trimPod(keep)(pod)
	require.NoError(t, err)
	assert.Equal(t, &podState{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "train"}, Node: "n1"}, got)

	again, err := trimPod(keep)(got)
	require.NoError(t, err)
	assert.Same(t, got, again, "a kept pod is kept as it is")
}
