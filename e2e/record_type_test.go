//go:build e2e

package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/accelc/accelc/internal/controlplane"
)

// recordSA is the catalog service's service account as the API server
// names its requests; accelc serve runs as it here.
const recordSA = "system:serviceaccount:accelc-system:accelc-catalog"

// TestRecordType: hetero-prod with catalogService.recordTypes, applied to
// a control plane with kube-scheduler, KWOK's kubelets and Gatekeeper, and
// `accelc serve --live --record-types` running as the catalog service's
// service account under the RBAC and ValidatingAdmissionPolicy the tree
// holds. A pod of the multi-type profile large-memory is mutated and
// admitted, kube-scheduler binds it, and it carries its node's type; the
// time from the moment a watch sees it bound to the moment it sees the
// annotation is logged. A pod of that profile made with a type is denied
// by Gatekeeper; the team's user patching the bound pod to another type
// is denied; the service account changing anything else is refused by
// the ValidatingAdmissionPolicy.
func TestRecordType(t *testing.T) {
	s := newSuite(t)
	s.cp = controlplane.Start(t, controlplane.WithScheduler())
	s.gk = s.cp.StartGatekeeper(t)
	s.connect(t)
	s.installCRDs(t)
	s.kwok = s.cp.StartKWOK(t)

	// hetero-prod, the catalog service recording types.
	repo := filepath.Join(s.work, "gitops")
	src := filepath.Join(s.root, "examples", "clusters")
	for _, dir := range []string{"cue.mod", "fleet", "hetero-prod"} {
		if err := os.CopyFS(filepath.Join(repo, dir), os.DirFS(filepath.Join(src, dir))); err != nil {
			t.Fatal(err)
		}
	}
	cluster := filepath.Join(repo, "hetero-prod")
	cue, err := os.ReadFile(filepath.Join(cluster, "cluster.cue"))
	if err != nil {
		t.Fatal(err)
	}
	const allow = "\t\tallowFrom: [\"ml-research\"]\n"
	if !strings.Contains(string(cue), allow) {
		t.Fatalf("hetero-prod/cluster.cue has no catalogService.allowFrom line to put recordTypes beside")
	}
	cue = []byte(strings.Replace(string(cue), allow, allow+"\t\trecordTypes: true\n", 1))
	if err := os.WriteFile(filepath.Join(cluster, "cluster.cue"), cue, 0o644); err != nil {
		t.Fatal(err)
	}

	// The nodes, typed as Node Feature Discovery would type them.
	view, err := s.inventoryView(t, cluster)
	if err != nil {
		t.Fatal(err)
	}
	c := &clusterUnderTest{example: cluster, out: s.render(t, cluster, "record")}
	c.objs = readTree(t, c.out)
	c.applied = appliedFolders(t, c.out)
	c.read(t)
	typed := map[string]map[string]string{}
	for _, n := range view.Nodes {
		if known(n.AcceleratorType) {
			typed[n.Name] = map[string]string{c.typeLabel: n.AcceleratorType}
		}
	}
	s.createNodes(t, filepath.Join(cluster, "inventory.json"), typed)
	// The namespaces the tree writes into but does not make, and the
	// tree's own CRDs, before the objects of their kinds.
	s.ensureNamespaces(t, foreignNamespaces(t, c.out)...)
	var crds []string
	for _, r := range c.objs {
		if r.obj.GetKind() == "CustomResourceDefinition" {
			crds = append(crds, filepath.Join(c.out, r.file))
		}
	}
	if _, err := controlplane.ApplyCRDs(t.Context(), s.dyn, crds...); err != nil {
		t.Fatal(err)
	}
	s.apply(t, c)
	// Kueue, with accelc's fragment: the pods of large-memory join its
	// LocalQueue, and a queued pod that reaches admission ungated is
	// refused.
	fragment, namespaces := kueueConfig(t, c.objs)
	s.cp.StartKueue(t, controlplane.KueueOptions{Namespaces: namespaces, Fragment: []byte(fragment)})
	s.waitGatekeeper(t, c)
	c.dev, c.devDyn = s.devClient(t)

	var large profile
	for _, p := range c.profiles {
		if p.name == "large-memory" {
			large = p
		}
	}
	if len(large.types) < 2 {
		t.Fatalf("hetero-prod's large-memory is not a multi-type profile in the tree: %v", large.types)
	}
	ns, _, ok := c.entitledNamespace(large.name, large.types)
	if !ok {
		t.Fatalf("no namespace's team may use large-memory")
	}
	s.ensureNamespaces(t, ns)

	// Who may read the catalog is TestAccess's and TestServePage's: here
	// the test reads it as anyone.
	base := s.serve(t, cluster, "--live", "--record-types", "--auth=false", "--kubeconfig", s.cp.UserKubeconfig(t, recordSA))
	t.Logf("accelc serve --live --record-types as %s at %s", recordSA, base)

	// Forged at creation: denied.
	forged := userPod("record-forged", ns, map[string]string{large.labelKey: large.name}, large.resource, large.count)
	forged.Annotations = map[string]string{c.typeLabel: large.types[0]}
	if _, err := c.dev.CoreV1().Pods(ns).Create(t.Context(), forged, metav1.CreateOptions{}); err == nil || !strings.Contains(err.Error(), "is not set by accelc") {
		t.Fatalf("a pod of large-memory made with %s=%s was not denied by Gatekeeper: %v", c.typeLabel, large.types[0], err)
	} else {
		t.Logf("made with a type: denied: %s", firstLine(err.Error()))
	}

	// Watch the pod from before it is made: when it is bound, when it
	// carries its type.
	name := "record-multi"
	selector := fields.OneTermEqualSelector("metadata.name", name).String()
	list, err := s.client.CoreV1().Pods(ns).List(t.Context(), metav1.ListOptions{FieldSelector: selector})
	if err != nil {
		t.Fatal(err)
	}
	rv := list.ResourceVersion
	open := func() watch.Interface {
		t.Helper()
		w, err := s.client.CoreV1().Pods(ns).Watch(t.Context(), metav1.ListOptions{FieldSelector: selector, ResourceVersion: rv})
		if err != nil {
			t.Fatal(err)
		}
		return w
	}
	w := open()
	defer func() { w.Stop() }()
	pod := userPod(name, ns, map[string]string{large.labelKey: large.name}, large.resource, large.count)
	if _, err := c.dev.CoreV1().Pods(ns).Create(t.Context(), pod, metav1.CreateOptions{}); err != nil {
		t.Fatalf("a pod of large-memory was not admitted: %v", err)
	}
	var bound, recorded time.Time
	var last *corev1.Pod
	timeout := time.After(scheduleTimeout)
	for recorded.IsZero() {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				// The API server ends watches now and then: on from
				// where it was.
				w = open()
				continue
			}
			p, isPod := ev.Object.(*corev1.Pod)
			if !isPod || ev.Type == watch.Deleted {
				continue
			}
			last, rv = p, p.ResourceVersion
			if p.Spec.NodeName != "" && bound.IsZero() {
				bound = time.Now()
			}
			if p.Annotations[c.typeLabel] != "" {
				recorded = time.Now()
			}
		case <-timeout:
			t.Fatalf("the pod was not bound and recorded within %s: %s, annotations %v", scheduleTimeout, scheduledCondition(last), last.Annotations)
		}
	}
	node, err := s.client.CoreV1().Nodes().Get(t.Context(), last.Spec.NodeName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := node.Labels[c.typeLabel]
	if got := last.Annotations[c.typeLabel]; got != want {
		t.Fatalf("%s/%s on %s records %s=%q; its node's label is %q", ns, name, node.Name, c.typeLabel, got, want)
	}
	var scheduledAt time.Time
	for _, cond := range last.Status.Conditions {
		if cond.Type == corev1.PodScheduled {
			scheduledAt = cond.LastTransitionTime.Time
		}
	}
	t.Logf("%s/%s bound to %s (%s); %s=%s recorded %s after the watch saw it bound (PodScheduled at %s, recorded at %s)",
		ns, name, node.Name, want, c.typeLabel, want, recorded.Sub(bound).Round(time.Millisecond),
		scheduledAt.Format(time.TimeOnly), recorded.Format("15:04:05.000"))
	if d := recorded.Sub(bound); d > time.Second {
		t.Errorf("the type was recorded %s after binding: more than a second", d.Round(time.Millisecond))
	}

	// The team's user patching the bound pod to another type: denied.
	other := large.types[0]
	if other == want {
		other = large.types[1]
	}
	patch := []byte(`{"metadata":{"annotations":{"` + c.typeLabel + `":"` + other + `"}}}`)
	if _, err := c.dev.CoreV1().Pods(ns).Patch(t.Context(), name, types.MergePatchType, patch, metav1.PatchOptions{}); err == nil || !strings.Contains(err.Error(), "does not match") {
		t.Errorf("the user patching %s/%s to %s=%s was not denied by Gatekeeper: %v", ns, name, c.typeLabel, other, err)
	} else {
		t.Logf("a user patching it to %s: denied: %s", other, firstLine(err.Error()))
	}
	// The service account changing anything else: refused.
	sa := s.cp.UserKubeconfig(t, recordSA)
	_, errOut, err := s.kubectlAs(t.Context(), sa, "label", "pod", "-n", ns, name, "app=other")
	if err == nil || !strings.Contains(errOut, "accelc-catalog-record-types") {
		t.Errorf("the service account labelling the pod was not refused by the ValidatingAdmissionPolicy: %v %s", err, errOut)
	} else {
		t.Logf("the service account labelling it: refused: %s", firstLine(errOut))
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	got, err := s.client.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Annotations[c.typeLabel] != want {
		t.Errorf("after the refused patches the pod records %q, want %q", got.Annotations[c.typeLabel], want)
	}
}
