package live

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protowire"
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"

	"github.com/accelc/accelc/pkg/inventory"
)

// The decoders are checked against k8s.io/api: objects are encoded by the
// API machinery's own protobuf and JSON serializers, as kube-apiserver
// encodes them, and what proto.go and json.go read must be what the
// generic decoding into corev1 types gave before (the reference functions
// below are the former implementation).

// encodeList encodes list as the API server does, protobuf or JSON.
func encodeList(t testing.TB, list runtime.Object, proto bool) []byte {
	t.Helper()
	scheme := coreScheme(t)
	var enc runtime.Encoder
	if proto {
		enc = protobuf.NewSerializer(scheme, scheme)
	} else {
		info, ok := runtime.SerializerInfoForMediaType(serializer.NewCodecFactory(scheme).SupportedMediaTypes(), runtime.ContentTypeJSON)
		require.True(t, ok)
		enc = info.Serializer
	}
	codec := serializer.NewCodecFactory(scheme).EncoderForVersion(enc, corev1.SchemeGroupVersion)
	var buf bytes.Buffer
	require.NoError(t, codec.Encode(list, &buf))
	return buf.Bytes()
}

func coreScheme(t testing.TB) *runtime.Scheme {
	t.Helper()
	scheme := runtime.NewScheme()
	require.NoError(t, corev1.AddToScheme(scheme))
	return scheme
}

// decodeGeneric decodes body into list as client-go does.
func decodeGeneric(t testing.TB, body []byte, list runtime.Object) {
	t.Helper()
	_, _, err := serializer.NewCodecFactory(coreScheme(t)).UniversalDeserializer().Decode(body, nil, list)
	require.NoError(t, err)
}

// readPods decodes a PodList body as listInUse does, per pod.
func readPods(body []byte) (namespaces, nodes []string, counts []int, cont string, err error) {
	var p podUse
	add := func() {
		namespaces, nodes, counts = append(namespaces, p.namespace), append(nodes, p.nodeName), append(counts, p.accelerators())
	}
	cont, err = decodeList(bytes.NewReader(body), "PodList",
		func(b []byte) error {
			err := decodePod(b, &p)
			add()
			return err
		},
		func(d *json.Decoder) error {
			err := decodeJSONPod(d, &p)
			add()
			return err
		})
	return namespaces, nodes, counts, cont, err
}

func readNodes(body []byte) ([]inventory.RawNode, string, error) {
	var out []inventory.RawNode
	cont, err := decodeList(bytes.NewReader(body), "NodeList",
		func(b []byte) error {
			n, err := decodeNode(b)
			out = append(out, n)
			return err
		},
		func(d *json.Decoder) error {
			n, err := decodeJSONNode(d)
			out = append(out, n)
			return err
		})
	return out, cont, err
}

// randomPod is a pod with containers asking for accelerators and other
// resources in every way a spec can: limits, requests or both, init
// containers, sidecars, MIG devices; and the fields around them that
// decoding must skip.
func randomPod(r *rand.Rand, i int) corev1.Pod {
	resources := []corev1.ResourceName{"nvidia.com/gpu", "amd.com/gpu", "nvidia.com/mig-1g.10gb", "habana.ai/gaudi", "nvidia.com/gpu.shared", "cpu", "memory", "example.com/fpga"}
	quantities := []string{"0", "1", "2", "8", "100m", "1500m", "1k", "2Gi", "64", "1e3"}
	list := func() corev1.ResourceList {
		if r.IntN(3) == 0 {
			return nil
		}
		l := corev1.ResourceList{}
		for range r.IntN(4) {
			l[resources[r.IntN(len(resources))]] = resource.MustParse(quantities[r.IntN(len(quantities))])
		}
		return l
	}
	container := func(j int) corev1.Container {
		c := corev1.Container{Name: fmt.Sprint("c", j), Image: "registry.example/app:1", Args: []string{"--x"},
			Env: []corev1.EnvVar{{Name: "A", Value: "b"}}, Resources: corev1.ResourceRequirements{Limits: list(), Requests: list()}}
		switch r.IntN(3) {
		case 0:
			always := corev1.ContainerRestartPolicyAlways
			c.RestartPolicy = &always
		case 1:
			never := corev1.ContainerRestartPolicy("Never")
			c.RestartPolicy = &never
		}
		return c
	}
	p := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprint("p", i), Namespace: fmt.Sprint("team-", r.IntN(3)),
		Labels: map[string]string{"app": "x"}, Annotations: map[string]string{"a": "b"}, ResourceVersion: "7",
		ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "m", Operation: metav1.ManagedFieldsOperationUpdate,
			FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:spec":{}}`)}}}}}
	if r.IntN(5) > 0 {
		p.Spec.NodeName = fmt.Sprint("node-", r.IntN(4))
	}
	for j := range r.IntN(4) {
		p.Spec.Containers = append(p.Spec.Containers, container(j))
	}
	for j := range r.IntN(3) {
		p.Spec.InitContainers = append(p.Spec.InitContainers, container(10+j))
	}
	p.Spec.Tolerations = []corev1.Toleration{{Key: "nvidia.com/gpu", Operator: corev1.TolerationOpExists}}
	p.Spec.Overhead = list()
	p.Status = corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.1.2.3",
		ContainerStatuses: []corev1.ContainerStatus{{Name: "c0", Ready: true, RestartCount: 3}}}
	return p
}

func TestDecodePods(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	list := &corev1.PodList{ListMeta: metav1.ListMeta{Continue: "next-token", ResourceVersion: "42"}}
	for i := range 2000 {
		list.Items = append(list.Items, randomPod(r, i))
	}
	for _, proto := range []bool{true, false} {
		t.Run(fmt.Sprint("protobuf=", proto), func(t *testing.T) {
			body := encodeList(t, list, proto)
			// What the former decoding counted.
			var generic corev1.PodList
			decodeGeneric(t, body, &generic)
			var wantNS, wantNodes []string
			var wantCounts []int
			nonzero := 0
			for i := range generic.Items {
				p := &generic.Items[i]
				wantNS, wantNodes = append(wantNS, p.Namespace), append(wantNodes, p.Spec.NodeName)
				wantCounts = append(wantCounts, podAcceleratorsReference(&p.Spec))
				if wantCounts[i] > 0 {
					nonzero++
				}
			}
			require.Greater(t, nonzero, 500, "the pods hold accelerators")
			ns, nodes, counts, cont, err := readPods(body)
			require.NoError(t, err)
			assert.Equal(t, "next-token", cont)
			assert.Equal(t, wantNS, ns)
			assert.Equal(t, wantNodes, nodes)
			assert.Equal(t, wantCounts, counts)
		})
	}
}

// TestDecodePodCounts: the counts the scheduler would make, by hand.
func TestDecodePodCounts(t *testing.T) {
	always := corev1.ContainerRestartPolicyAlways
	gpus := func(limit, request string) corev1.ResourceRequirements {
		var rr corev1.ResourceRequirements
		if limit != "" {
			rr.Limits = corev1.ResourceList{"nvidia.com/gpu": resource.MustParse(limit)}
		}
		if request != "" {
			rr.Requests = corev1.ResourceList{"nvidia.com/gpu": resource.MustParse(request)}
		}
		return rr
	}
	for _, tc := range []struct {
		name       string
		containers []corev1.Container
		inits      []corev1.Container
		want       int
	}{
		{"limit only", []corev1.Container{{Resources: gpus("2", "")}}, nil, 2},
		{"request only", []corev1.Container{{Resources: gpus("", "3")}}, nil, 3},
		{"request wins", []corev1.Container{{Resources: gpus("4", "1")}}, nil, 1},
		{"containers add up", []corev1.Container{{Resources: gpus("2", "")}, {Resources: gpus("1", "")}}, nil, 3},
		{"larger init", []corev1.Container{{Resources: gpus("1", "")}}, []corev1.Container{{Resources: gpus("3", "")}}, 3},
		{"sidecar adds", []corev1.Container{{Resources: gpus("8", "")}}, []corev1.Container{{Resources: gpus("1", ""), RestartPolicy: &always}}, 9},
		{"init after sidecar", []corev1.Container{{Resources: gpus("1", "")}},
			[]corev1.Container{{Resources: gpus("2", ""), RestartPolicy: &always}, {Resources: gpus("4", "")}}, 6},
		{"negative", []corev1.Container{{Resources: gpus("-1", "")}}, nil, 0},
		{"huge", []corev1.Container{{Resources: gpus("1e12", "")}}, nil, inventory.MaxDevices},
	} {
		t.Run(tc.name, func(t *testing.T) {
			list := &corev1.PodList{Items: []corev1.Pod{{Spec: corev1.PodSpec{NodeName: "n", Containers: tc.containers, InitContainers: tc.inits}}}}
			require.Equal(t, tc.want, podAcceleratorsReference(&list.Items[0].Spec))
			for _, proto := range []bool{true, false} {
				_, _, counts, _, err := readPods(encodeList(t, list, proto))
				require.NoError(t, err)
				assert.Equal(t, []int{tc.want}, counts, "protobuf=%v", proto)
				if t.Failed() {
					return
				}
			}
		})
	}
}

// TestDecodeNodes: real nodes (GPU Feature Discovery's labels, capacity,
// conditions, images, addresses) and a taint, through both encodings.
func TestDecodeNodes(t *testing.T) {
	data, err := os.ReadFile("../../../testdata/nodes/real-nodes-sample.json")
	require.NoError(t, err)
	var list corev1.NodeList
	require.NoError(t, json.Unmarshal(data, &list))
	require.NotEmpty(t, list.Items)
	list.Items[0].Spec.Taints = []corev1.Taint{{Key: "nvidia.com/gpu", Value: "present", Effect: corev1.TaintEffectNoSchedule, TimeAdded: &metav1.Time{}},
		{Key: "dedicated", Effect: corev1.TaintEffectNoExecute}}
	list.Items[0].Spec.Unschedulable = true
	list.Items = append(list.Items, corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "bare"}})
	list.Continue = "more"
	for _, proto := range []bool{true, false} {
		t.Run(fmt.Sprint("protobuf=", proto), func(t *testing.T) {
			body := encodeList(t, &list, proto)
			var generic corev1.NodeList
			decodeGeneric(t, body, &generic)
			var want []inventory.RawNode
			for i := range generic.Items {
				want = append(want, rawFromNodeReference(&generic.Items[i]))
			}
			require.Len(t, want, len(list.Items))
			got, cont, err := readNodes(body)
			require.NoError(t, err)
			assert.Equal(t, "more", cont)
			assert.Equal(t, want, got)
		})
	}
}

// TestDecodeNamespaces: of each namespace only its name is read, from
// protobuf as from JSON, with its labels and status around it.
func TestDecodeNamespaces(t *testing.T) {
	list := corev1.NamespaceList{Items: []corev1.Namespace{
		{ObjectMeta: metav1.ObjectMeta{Name: "kube-system", Labels: map[string]string{"kubernetes.io/metadata.name": "kube-system"}, UID: "u1"},
			Status: corev1.NamespaceStatus{Phase: corev1.NamespaceActive}},
		{ObjectMeta: metav1.ObjectMeta{Name: "gpu-operator", Annotations: map[string]string{"a": "b"}}},
	}}
	for _, proto := range []bool{true, false} {
		t.Run(fmt.Sprint("protobuf=", proto), func(t *testing.T) {
			var got []string
			_, err := decodeList(bytes.NewReader(encodeList(t, &list, proto)), "NamespaceList",
				func(b []byte) error { got = append(got, decodeNamespace(b)); return nil },
				func(d *json.Decoder) error {
					name, err := decodeJSONNamespace(d)
					got = append(got, name)
					return err
				})
			require.NoError(t, err)
			assert.Equal(t, []string{"kube-system", "gpu-operator"}, got)
		})
	}
}

// TestDecodeRefuses: what is not the list asked for, or is cut short, is
// an error, never a partial count.
func TestDecodeRefuses(t *testing.T) {
	pods := &corev1.PodList{Items: []corev1.Pod{{Spec: corev1.PodSpec{NodeName: "n"}}}}
	for _, proto := range []bool{true, false} {
		body := bytes.TrimSpace(encodeList(t, pods, proto))
		_, _, err := readNodes(body)
		assert.ErrorContains(t, err, `"PodList" where a NodeList was expected`, "protobuf=%v", proto)
		for _, cut := range []int{5, len(body) / 2, len(body) - 1} {
			_, _, _, _, err := readPods(body[:cut])
			assert.Error(t, err, "protobuf=%v, %d of %d bytes", proto, cut, len(body))
		}
	}
	_, _, _, _, err := readPods(nil)
	assert.Error(t, err)
}

// TestDecodeLargeList: the watch cache answers with the whole list, as
// long as the cluster is large (50,000 real pods are several hundred MB):
// it streams through item by item, whatever its length.
func TestDecodeLargeList(t *testing.T) {
	const pods = 100_000
	pod := randomPod(rand.New(rand.NewPCG(5, 6)), 0)
	pod.Spec.NodeName, pod.Spec.InitContainers = "n", nil
	pod.Spec.Containers = []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{
		Limits: corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("1")}}}}
	pod.Annotations = map[string]string{"filler": strings.Repeat("x", 1000)}
	item, err := pod.Marshal()
	require.NoError(t, err)
	field := protowire.AppendBytes(protowire.AppendTag(nil, listItems, protowire.BytesType), item)
	typeMeta := protowire.AppendString(protowire.AppendTag(nil, typeMetaKind, protowire.BytesType), "PodList")
	header := slices.Concat(protoMagic,
		protowire.AppendBytes(protowire.AppendTag(nil, unknownTypeMeta, protowire.BytesType), typeMeta),
		protowire.AppendVarint(protowire.AppendTag(nil, unknownRaw, protowire.BytesType), uint64(pods*len(field))))
	require.Greater(t, pods*len(field), maxItem, "longer than any one object may be")
	body := io.MultiReader(bytes.NewReader(header), &repeat{b: field, n: pods})
	var p podUse
	count, held := 0, 0
	_, err = decodeList(body, "PodList", func(b []byte) error {
		if err := decodePod(b, &p); err != nil {
			return err
		}
		count++
		held += p.accelerators()
		return nil
	}, nil)
	require.NoError(t, err)
	assert.Equal(t, pods, count)
	assert.Equal(t, pods, held)
}

// repeat reads b n times.
type repeat struct {
	b   []byte
	n   int
	off int
}

func (r *repeat) Read(p []byte) (int, error) {
	total := 0
	for len(p) > 0 && r.n > 0 {
		c := copy(p, r.b[r.off:])
		p, total, r.off = p[c:], total+c, r.off+c
		if r.off == len(r.b) {
			r.off, r.n = 0, r.n-1
		}
	}
	if total == 0 {
		return 0, io.EOF
	}
	return total, nil
}

// FuzzDecodeList: no body panics the decoders or makes them allocate
// without bound.
func FuzzDecodeList(f *testing.F) {
	r := rand.New(rand.NewPCG(3, 4))
	pods := &corev1.PodList{}
	for i := range 3 {
		pods.Items = append(pods.Items, randomPod(r, i))
	}
	nodes := &corev1.NodeList{Items: []corev1.Node{{ObjectMeta: metav1.ObjectMeta{Name: "n", Labels: map[string]string{"a": "b"}},
		Spec:   corev1.NodeSpec{Taints: []corev1.Taint{{Key: "k", Effect: corev1.TaintEffectNoSchedule}}},
		Status: corev1.NodeStatus{Capacity: corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("8")}}}}}
	resourceSlices := &resourcev1.ResourceSliceList{Items: draSlices(f)}
	for _, proto := range []bool{true, false} {
		f.Add(encodeList(f, pods, proto))
		f.Add(encodeList(f, nodes, proto))
		f.Add(encodeSlices(f, resourceSlices, proto))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		_, _, _, _, _ = readPods(body)
		_, _, _ = readNodes(body)
		_, _, _ = readSlices(body)
	})
}

// podAcceleratorsReference is the former PodAccelerators, over corev1.
func podAcceleratorsReference(spec *corev1.PodSpec) int {
	sum := func(cs []corev1.Container, sidecarsOnly bool) (total, peak int) {
		for i := range cs {
			c := &cs[i]
			sidecar := c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways
			if sidecarsOnly && !sidecar {
				peak = max(peak, total+containerAcceleratorsReference(c))
				continue
			}
			total += containerAcceleratorsReference(c)
		}
		return total, peak
	}
	app, _ := sum(spec.Containers, false)
	sidecars, initPeak := sum(spec.InitContainers, true)
	return max(app+sidecars, initPeak)
}

func containerAcceleratorsReference(c *corev1.Container) int {
	n := 0
	for name, q := range c.Resources.Limits {
		if inventory.VendorOfResource(string(name)) == "" {
			continue
		}
		if r, ok := c.Resources.Requests[name]; ok {
			q = r
		}
		n += quantityValue(q)
	}
	for name, q := range c.Resources.Requests {
		if _, counted := c.Resources.Limits[name]; !counted && inventory.VendorOfResource(string(name)) != "" {
			n += quantityValue(q)
		}
	}
	return n
}

// rawFromNodeReference is the former rawFromNode, over corev1.
func rawFromNodeReference(n *corev1.Node) inventory.RawNode {
	var r inventory.RawNode
	r.Kind = "Node"
	r.Metadata.Name = n.Name
	r.Metadata.Labels = n.Labels
	r.Spec.Unschedulable = n.Spec.Unschedulable
	for _, t := range n.Spec.Taints {
		r.Spec.Taints = append(r.Spec.Taints, inventory.Taint{Key: t.Key, Value: t.Value, Effect: string(t.Effect)})
	}
	quantities := func(l corev1.ResourceList) map[string]string {
		if l == nil {
			return nil
		}
		out := make(map[string]string, len(l))
		for k, q := range l {
			out[string(k)] = q.String()
		}
		return out
	}
	r.Status.Capacity = quantities(n.Status.Capacity)
	r.Status.Allocatable = quantities(n.Status.Allocatable)
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			r.Status.Conditions = append(r.Status.Conditions, inventory.Condition{Type: string(c.Type), Status: string(c.Status)})
		}
	}
	return r
}
