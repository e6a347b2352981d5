package serve

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/accelc/accelc/internal/controlplane"
	"github.com/accelc/accelc/pkg/catalogdoc"
	"github.com/accelc/accelc/pkg/compile"
	"github.com/accelc/accelc/pkg/inventory"
	"github.com/accelc/accelc/pkg/inventory/live"
	"github.com/accelc/accelc/pkg/render"
)

func TestDescription(t *testing.T) {
	h100 := catalogdoc.Profile{Available: 32, Types: []catalogdoc.Type{{DisplayName: "NVIDIA H100 80GB"}}}
	for _, tc := range []struct {
		name, static string
		p            catalogdoc.Profile
		w            *Waiting
		want         string
	}{
		{"no queue", "", h100, nil, "NVIDIA H100 80GB · 32 available"},
		{"no wait", "", h100, &Waiting{Pending: new(0), Estimate: WaitEstimate{Minutes: new(0)}}, "NVIDIA H100 80GB · 32 available · 0 pending · no wait"},
		{"a wait", "", h100, &Waiting{Pending: new(2), Estimate: WaitEstimate{Minutes: new(15)}}, "NVIDIA H100 80GB · 32 available · 2 pending · about 15 min wait"},
		{"unknown", "", h100, &Waiting{Pending: new(2), Estimate: WaitEstimate{Unknown: "no finished run"}}, "NVIDIA H100 80GB · 32 available · 2 pending · wait unknown"},
		{"workloads unreadable", "", h100, &Waiting{Estimate: WaitEstimate{Unknown: "may not list"}}, "NVIDIA H100 80GB · 32 available · wait unknown"},
		{"static after", "For pretraining", h100, nil, "NVIDIA H100 80GB · 32 available — For pretraining"},
		{"static trimmed", " Big GPUs.\n", h100, nil, "NVIDIA H100 80GB · 32 available — Big GPUs."},
		{"two types", "", catalogdoc.Profile{Available: 3, Types: []catalogdoc.Type{{DisplayName: "NVIDIA H200 141GB"}, {DisplayName: "NVIDIA A100 80GB"}}}, nil, "NVIDIA H200 141GB or NVIDIA A100 80GB · 3 available"},
		{"shared", "", catalogdoc.Profile{Available: 14, Sharing: &catalogdoc.Sharing{Mode: "mig"}, Types: []catalogdoc.Type{{DisplayName: "NVIDIA A100 80GB", Device: &catalogdoc.Device{Name: "3g.40gb slice"}}}}, nil, "NVIDIA A100 80GB, 3g.40gb slice · 14 available"},
		{"generic", "", catalogdoc.Profile{Available: 5}, nil, "5 available"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, Description(tc.static, tc.p, tc.w))
		})
	}
}

// describerSA is the catalog service's service account, as the API
// server names its requests.
const describerSA = "system:serviceaccount:accelc-system:accelc-catalog"

// TestDescriber runs the describer as the catalog service's service
// account against a real API server holding what
// catalogService.liveDescriptions renders (the Role and the
// ValidatingAdmissionPolicy) and hetero-prod's HardwareProfiles, applied
// server-side as Flux's kustomize-controller applies them. Each profile's
// description becomes the count's; the service's field manager owns that
// annotation alone; Flux's apply again leaves it and causes no write; a
// burst of changes within the interval is at most two writes a profile,
// the last the latest text (one more per interval the burst outlasts); a profile whose rendered description Flux
// owns is reported and left to Flux until the rendered profile leaves it
// out; the policy refuses the service any other change; a replica that
// does not lead writes nothing.
func TestDescriber(t *testing.T) {
	cp := controlplane.Start(t)
	ctx := t.Context()
	admin, err := kubernetes.NewForConfig(cp.RESTConfig())
	require.NoError(t, err)
	dyn, err := dynamic.NewForConfig(cp.RESTConfig())
	require.NoError(t, err)
	_, err = controlplane.ApplyCRDs(ctx, dyn, "../../tools/e2e/crds/infrastructure.opendatahub.io_hardwareprofiles.yaml")
	require.NoError(t, err)

	m, snap := example(t, "hetero-prod")
	m.Cluster.CatalogService.LiveDescriptions = true
	objs, err := render.Render(m, &inventory.Inventory{})
	require.NoError(t, err)
	_, err = admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: m.Cluster.ProfileNamespace}}, metav1.CreateOptions{})
	require.NoError(t, err)
	profiles := map[string]*unstructured.Unstructured{}
	applied := 0
	for _, o := range objs {
		if strings.HasPrefix(o.Name(), render.PodAdmissionPolicyName) {
			// The pod admission policy, which judges pods.
			continue
		}
		switch b := o.Body.(type) {
		case *rbacv1.Role:
			_, err = admin.RbacV1().Roles(b.Namespace).Create(ctx, b, metav1.CreateOptions{})
		case *rbacv1.RoleBinding:
			_, err = admin.RbacV1().RoleBindings(b.Namespace).Create(ctx, b, metav1.CreateOptions{})
		case *admissionv1.ValidatingAdmissionPolicy:
			_, err = admin.AdmissionregistrationV1().ValidatingAdmissionPolicies().Create(ctx, b, metav1.CreateOptions{})
		case *admissionv1.ValidatingAdmissionPolicyBinding:
			_, err = admin.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Create(ctx, b, metav1.CreateOptions{})
		default:
			if o.Kind() == "HardwareProfile" {
				u := toUnstructured(t, o.Body)
				assert.NotContains(t, u.GetAnnotations(), render.DescriptionAnnotation, "with liveDescriptions the rendered %s leaves its description to the service", u.GetName())
				profiles[u.GetName()] = u
			}
			continue
		}
		require.NoError(t, err, "%s %s", o.Kind(), o.Name())
		applied++
	}
	require.Equal(t, 4, applied, "the Role and its binding, the policy and its binding")
	flux := func(u *unstructured.Unstructured) {
		t.Helper()
		body, err := json.Marshal(u.Object)
		require.NoError(t, err)
		_, err = dyn.Resource(hardwareProfilesGVR).Namespace(u.GetNamespace()).Patch(ctx, u.GetName(), types.ApplyPatchType, body,
			metav1.PatchOptions{FieldManager: "kustomize-controller", Force: new(true)})
		require.NoError(t, err, "applying HardwareProfile %s as kustomize-controller", u.GetName())
	}
	for _, u := range profiles {
		flux(u)
	}
	// One of the same name's neighbours that accelc does not render.
	stranger := profiles["premium-gpu"].DeepCopy()
	stranger.SetName("hand-made")
	stranger.SetLabels(nil)
	flux(stranger)

	sa, err := dynamic.NewForConfig(cp.UserRESTConfig(t, describerSA))
	require.NoError(t, err)
	hwp := sa.Resource(hardwareProfilesGVR).Namespace(m.Cluster.ProfileNamespace)
	require.Eventually(t, func() bool {
		_, err := hwp.Patch(ctx, "premium-gpu", types.MergePatchType, []byte(`{"spec":{"identifiers":[]}}`), metav1.PatchOptions{DryRun: []string{metav1.DryRunAll}})
		return err != nil && strings.Contains(err.Error(), "accelc-catalog-descriptions")
	}, 10*time.Second, 50*time.Millisecond, "the ValidatingAdmissionPolicy is in force")
	_, err = hwp.Patch(ctx, "premium-gpu", types.MergePatchType, []byte(`{"metadata":{"annotations":{"opendatahub.io/display-name":"Mine"}}}`), metav1.PatchOptions{})
	require.ErrorContains(t, err, "may change no annotation of a HardwareProfile but opendatahub.io/description")
	_, err = hwp.Patch(ctx, "hand-made", types.MergePatchType, []byte(`{"metadata":{"annotations":{"opendatahub.io/description":"x"}}}`), metav1.PatchOptions{})
	require.ErrorContains(t, err, "forbidden", "RBAC lets the service patch the rendered profiles alone")

	src := &changing{snap: counted(snap, 0), changed: make(chan struct{}, 1)}
	srv := New(m, src, Options{Debounce: 10 * time.Millisecond})
	w, err := NewWatcher(WatchOptions{Options: live.Options{Kubeconfig: cp.UserKubeconfig(t, describerSA)}})
	require.NoError(t, err)
	var log syncBuffer
	const interval = 1500 * time.Millisecond
	dctx, stop := context.WithCancel(ctx)
	served, described := make(chan struct{}), make(chan struct{})
	go func() { srv.Run(dctx); close(served) }()

	// A replica that does not lead follows the profiles and writes
	// nothing.
	follower, err := NewDescriber(w, srv, m, DescribeOptions{Interval: interval, Tick: 20 * time.Millisecond, Leader: newLeader(false)})
	require.NoError(t, err)
	fctx, fstop := context.WithCancel(dctx)
	followed := make(chan struct{})
	go func() { follower.Run(fctx); close(followed) }()
	require.Eventually(t, func() bool { return srv.cur.Load() != nil }, 10*time.Second, 20*time.Millisecond)
	time.Sleep(time.Second)
	fstop()
	<-followed
	assert.Zero(t, testutil.ToFloat64(follower.writes), "a replica that does not lead writes nothing")

	d, err := NewDescriber(w, srv, m, DescribeOptions{Interval: interval, Tick: 20 * time.Millisecond, Log: &log})
	require.NoError(t, err)
	go func() { d.Run(dctx); close(described) }()
	t.Cleanup(func() { stop(); <-served; <-described })

	// want is each profile's description by the server's latest count.
	want := func() map[string]string {
		v := srv.cur.Load()
		out := map[string]string{}
		for _, p := range v.doc.Profiles {
			out[p.Name] = Description(staticOf(m, p.Name), p, v.waiting[p.Name])
		}
		return out
	}
	shown := func() map[string]string {
		list, err := dyn.Resource(hardwareProfilesGVR).Namespace(m.Cluster.ProfileNamespace).List(ctx, metav1.ListOptions{})
		require.NoError(t, err)
		out := map[string]string{}
		for _, u := range list.Items {
			if d, ok := u.GetAnnotations()[render.DescriptionAnnotation]; ok {
				out[u.GetName()] = d
			}
		}
		return out
	}
	agree := func(what string) {
		t.Helper()
		var last string
		if !assert.Eventually(t, func() bool {
			if srv.cur.Load() == nil {
				return false
			}
			w, s := want(), shown()
			last = fmt.Sprintf("want %q\nshown %q", w, s)
			return fmt.Sprint(w) == fmt.Sprint(s)
		}, 10*time.Second, 20*time.Millisecond, what) {
			t.Fatalf("%s:\n%s\n%s", what, last, log.String())
		}
	}
	agree("every rendered profile described by the count, nothing else")
	// The API server holds a write before the describer has counted it:
	// wait for the count, then see that no second write follows.
	assert.Eventually(t, func() bool { return testutil.ToFloat64(d.writes) >= float64(len(profiles)) }, 5*time.Second, 10*time.Millisecond)
	time.Sleep(interval / 5)
	assert.Equal(t, float64(len(profiles)), testutil.ToFloat64(d.writes), "one write a profile")
	premium := want()["premium-gpu"]
	assert.Equal(t, "NVIDIA H200 141GB · 32 available · wait unknown — NVIDIA H200 141GB for large-model training and serving.", premium)

	// The service's field manager owns the annotation and nothing else;
	// Flux's owns none of it.
	owners := func(name string) map[string]string {
		u, err := dyn.Resource(hardwareProfilesGVR).Namespace(m.Cluster.ProfileNamespace).Get(ctx, name, metav1.GetOptions{})
		require.NoError(t, err)
		out := map[string]string{}
		for _, mf := range u.GetManagedFields() {
			out[mf.Manager+"/"+string(mf.Operation)] = mf.FieldsV1.GetRawString()
		}
		return out
	}
	got := owners("premium-gpu")
	assert.JSONEq(t, `{"f:metadata":{"f:annotations":{"f:opendatahub.io/description":{}}}}`, got["accelc-serve/Apply"])
	assert.NotContains(t, got["kustomize-controller/Apply"], render.DescriptionAnnotation)

	// Flux applies again: nothing reverted, nothing written.
	writes := testutil.ToFloat64(d.writes)
	for _, u := range profiles {
		flux(u)
	}
	time.Sleep(2 * interval)
	agree("the descriptions after Flux applied the profiles again")
	assert.Equal(t, writes, testutil.ToFloat64(d.writes), "Flux's apply of the rest of the object calls for no write")

	// A burst of changes within the interval: each profile written at
	// most twice (the first change, then the latest text once the
	// interval is over).
	burstFrom := time.Now()
	for hold := 1; hold <= 6; hold++ {
		// set waits for the server to take the change: on a loaded
		// machine the burst outlasts its sleeps, and the bound below
		// counts with the burst as it was.
		src.set(counted(snap, hold))
		time.Sleep(40 * time.Millisecond)
	}
	took := time.Since(burstFrom)
	agree("the descriptions after a burst of changes")
	time.Sleep(2 * interval)
	burst := testutil.ToFloat64(d.writes) - writes
	// A profile is written at the first change, then at most once an
	// interval until its latest text is.
	most := len(profiles) * (2 + int(took/interval))
	assert.LessOrEqual(t, burst, float64(most), "six changes in %s, interval %s", took, interval)
	assert.Positive(t, burst)
	t.Logf("six changes in %s: %.0f writes over %d profiles (interval %s; at most %d)", took.Round(time.Millisecond), burst, len(profiles), interval, most)
	agree("the descriptions, settled")

	// A rendered profile that carries its description (liveDescriptions
	// off) hands the annotation to Flux: the service reports it and
	// leaves it, no fight; once the render leaves it out again, Flux
	// lets it go and the service writes it.
	withText := profiles["premium-gpu"].DeepCopy()
	ann := withText.GetAnnotations()
	ann[render.DescriptionAnnotation] = "NVIDIA H200 141GB for large-model training and serving."
	withText.SetAnnotations(ann)
	flux(withText)
	src.set(counted(snap, 0))
	require.Eventually(t, func() bool { return testutil.ToFloat64(d.errors.WithLabelValues("owned")) > 0 }, 10*time.Second, 20*time.Millisecond)
	assert.Contains(t, log.String(), "render with cluster.catalogService.liveDescriptions")
	assert.Equal(t, "NVIDIA H200 141GB for large-model training and serving.", shown()["premium-gpu"], "Flux's text stays: the service does not force")
	flux(profiles["premium-gpu"])
	agree("the descriptions once the rendered profile leaves it out again")
	assert.NotContains(t, owners("premium-gpu")["kustomize-controller/Apply"], render.DescriptionAnnotation)
}

func staticOf(m *compile.Model, name string) string {
	for i := range m.Profiles {
		if m.Profiles[i].Name == name {
			return m.Profiles[i].Description
		}
	}
	return ""
}

func toUnstructured(t *testing.T, obj any) *unstructured.Unstructured {
	t.Helper()
	b, err := json.Marshal(obj)
	require.NoError(t, err)
	u := &unstructured.Unstructured{}
	require.NoError(t, u.UnmarshalJSON(b))
	return u
}
