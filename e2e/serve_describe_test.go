//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/accelc/accelc/internal/controlplane"
	"github.com/accelc/accelc/internal/testutil"
	"github.com/accelc/accelc/pkg/catalogdoc"
	"github.com/accelc/accelc/pkg/render"
	"github.com/accelc/accelc/pkg/serve"
)

const (
	pickerCluster = "picker-lab"
	pickerProfile = "a100"
	// pickerStatic is a100's description in e2e/testdata/picker.
	pickerStatic = "An A100 80GB for notebooks and fine-tuning"
	// describeInterval is --describe-interval: the least time between two
	// writes of the profile's description.
	describeInterval = 5 * time.Second
	catalogSA        = "system:serviceaccount:accelc-system:accelc-catalog"
)

// TestServeDescriptions runs `accelc serve --live --live-descriptions` as
// the catalog service's service account (the RBAC Flux applied from the
// rendered tree) against a control plane where Flux's own controllers
// deliver e2e/testdata/picker from a registry (`accelc push`, signed),
// Kueue's manager admits the pods of its A100 profile under team lab's
// quota of 8 and kube-scheduler binds them, while:
//
//   - pods come and go: two of 4 GPUs fill the node, a third waits in
//     Kueue's queue, the first succeeds (Kueue marks its Workload Finished
//     and admits the third), then all go;
//   - for 40 s a pod of one GPU comes and goes every 400 ms: the
//     description is written at most once per --describe-interval;
//   - Flux reconciles the tree again and again (requestedAt), and a new
//     version that renames the profile is applied to the same
//     HardwareProfile;
//   - then two replicas with --leader-elect: only the leader writes, and
//     when it stops the other takes over and writes.
//
// At each step the HardwareProfile's opendatahub.io/description, the API's
// /api/v1/profiles/a100 and the page's wait line agree (the description
// is serve.Description of the API's figures). A watch on the
// HardwareProfile records every version: once written, the description
// is never absent or reverted, its only owner in managedFields is
// accelc-serve (kustomize-controller owns the rest), and two writes are
// never closer than the interval.
func TestServeDescriptions(t *testing.T) {
	s := newSuite(t)
	registry := testutil.Registry(t)
	begin := time.Now()
	ctx := t.Context()
	s.cp = controlplane.Start(t, controlplane.WithScheduler())
	s.gk = s.cp.StartGatekeeper(t)
	s.connect(t)
	if !t.Run("crds", s.stepCRDs) {
		t.FailNow()
	}
	f := &fluxRun{s: s, repo: "oci://" + registry + "/accelc/" + pickerCluster, name: pickerCluster}
	dir := f.pickerCluster(t)
	out := s.render(t, dir, "v1")
	tree := readTree(t, out)
	fragment, namespaces := kueueConfig(t, tree)
	kq := s.cp.StartKueue(t, controlplane.KueueOptions{Namespaces: namespaces, Fragment: []byte(fragment)})
	f.fx = s.cp.StartFlux(t)
	f.signingKey(t)
	t.Logf("control plane, Gatekeeper, Kueue (log %s) and Flux up in %s", kq.LogPath(), time.Since(begin).Round(time.Millisecond))

	s.ensureNamespaces(t, foreignNamespaces(t, out)...)
	d1 := f.push(t, out, "1.0.0")
	s.mustKubectl(t, "apply", "--server-side", "--field-manager=accelc-e2e", "-k", filepath.Join(out, "flux"))
	f.rollout(t, "1.0.0", d1)
	for _, r := range tree {
		if k := r.obj.GetKind(); k == "ClusterQueue" || k == "LocalQueue" {
			if err := s.waitActive(ctx, r.obj); err != nil {
				t.Fatalf("the %s %s Flux applied never became Active: %v", k, r.obj.GetName(), err)
			}
		}
	}
	view, err := s.inventoryView(t, dir)
	if err != nil {
		t.Fatal(err)
	}
	extra := map[string]map[string]string{}
	for _, r := range tree {
		if r.obj.GetKind() != "ResourceFlavor" {
			continue
		}
		labels, _, _ := unstructured.NestedStringMap(r.obj.Object, "spec", "nodeLabels")
		for _, n := range view.Nodes {
			if n.AcceleratorType == r.obj.GetName() {
				extra[n.Name] = labels
			}
		}
	}
	s.createNodes(t, filepath.Join(dir, "inventory.json"), extra)

	rec := s.recordProfile(t)
	base, stopFirst := s.serveProc(t, dir, "--live", "--kubeconfig", s.cp.UserKubeconfig(t, catalogSA), "--auth=false",
		"--live-descriptions", "--describe-interval", describeInterval.String(), "--refresh", "300ms")
	churn := time.Now()

	agree := func(step string, want func(text string) bool) string {
		t.Helper()
		var text string
		err := poll(ctx, time.Minute, func(ctx context.Context) (bool, string, error) {
			p, w, err := apiProfile(ctx, base)
			if err != nil {
				return false, err.Error(), nil
			}
			text = serve.Description(pickerStatic, p, w)
			shown := s.profileDescription(t)
			line, err := pageWaitLine(ctx, base)
			if err != nil {
				return false, err.Error(), nil
			}
			if shown != text || line != pageLine(p.Available, w) || !want(text) {
				return false, fmt.Sprintf("API says %q, the HardwareProfile %q, the page %q (want %q)", text, shown, line, pageLine(p.Available, w)), nil
			}
			return true, "", nil
		})
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		t.Logf("%s: %s: the HardwareProfile, the API and the page agree: %q", time.Since(begin).Round(time.Millisecond), step, text)
		return text
	}
	has := func(subs ...string) func(string) bool {
		return func(text string) bool {
			for _, sub := range subs {
				if !strings.Contains(text, sub) {
					return false
				}
			}
			return true
		}
	}

	agree("nothing running", has("8 available · 0 pending · no wait"))
	f.reconcileTree(t)
	p1, p2 := s.pickerPod(t, "run-1", 4), s.pickerPod(t, "run-2", 4)
	for _, p := range []*corev1.Pod{p1, p2} {
		if _, err := s.waitBound(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	agree("two runs of 4 GPUs admitted and bound", has("0 available · 0 pending · wait unknown"))
	f.reconcileTree(t)
	p3 := s.pickerPod(t, "run-3", 4)
	agree("a third waits in Kueue's queue", has("0 available · 1 pending · wait unknown"))

	// A new version renames the profile: Flux applies the same
	// HardwareProfile, and its description stays serve's.
	f.edit(t, filepath.Join(dir, "cluster.cue"), `displayName: "One A100"`, `displayName: "One A100, v2"`)
	out2 := s.render(t, dir, "v2")
	d2 := f.push(t, out2, "1.1.0")
	f.reconcile(t)
	f.rollout(t, "1.1.0", d2)
	if got := f.displayName(t, pickerProfile); got != "One A100, v2" {
		t.Errorf("HardwareProfile %s's display name is %q after 1.1.0, want %q", pickerProfile, got, "One A100, v2")
	}
	agree("after Flux applied 1.1.0 to the profile", has("0 available · 1 pending"))

	// run-1 ends: Kueue marks its Workload Finished and admits run-3.
	time.Sleep(time.Second) // a run of a whole second or more on Kueue's clock
	s.succeedPod(t, p1)
	if _, err := s.waitBound(ctx, p3); err != nil {
		t.Fatal(err)
	}
	agree("run-1 finished, run-3 admitted", has("0 available · 0 pending"))
	f.reconcileTree(t)
	for _, p := range []*corev1.Pod{p2, p3} {
		if err := s.client.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: new(int64)}); err != nil {
			t.Fatal(err)
		}
	}
	agree("every pod gone", has("8 available · 0 pending · no wait"))

	// Churn: a pod of one GPU bound to the A100 node comes and goes every
	// 400 ms for 40 s (a namespace Kueue does not manage), while Flux
	// reconciles: availability goes from 8 to 7 and back a hundred times,
	// and the description is written at most once per interval.
	a100Node := ""
	for _, n := range view.Nodes {
		if n.AcceleratorType == "nvidia-a100-80gb" {
			a100Node = n.Name
		}
	}
	s.ensureNamespaces(t, "churn")
	churnFrom := time.Now()
	churnErr := make(chan error, 1)
	go func() { churnErr <- s.churnPods(ctx, a100Node, 40*time.Second, 400*time.Millisecond) }()
	for range 3 {
		time.Sleep(8 * time.Second)
		f.reconcileTree(t)
	}
	if err := <-churnErr; err != nil {
		t.Fatal(err)
	}
	churnTo := time.Now()
	agree("after the churn", has("8 available · 0 pending · no wait"))
	f.reconcileTree(t)
	agree("after Flux's last reconcile", has("8 available · 0 pending · no wait"))
	elapsed := time.Since(churn)
	firstWrites := metricValue(t, base, "accelc_profile_description_writes_total")

	// Two replicas that elect a leader (--leader-elect, on a Lease in
	// accelc-system; as the admin: the Lease's RBAC is the replicas'
	// rendering's): only the leader writes; when it stops, it gives the
	// Lease up and the other takes over and writes.
	stopFirst()
	firstStopped := time.Now()
	replica := func() (string, func()) {
		return s.serveProc(t, dir, "--live", "--kubeconfig", s.cp.Kubeconfig(), "--auth=false", "--live-descriptions",
			"--describe-interval", describeInterval.String(), "--leader-elect", "--leader-elect-namespace", "accelc-system")
	}
	baseA, stopA := replica()
	baseB, stopB := replica()
	leader := func() (lead, other string, stopLead func()) {
		t.Helper()
		err := poll(ctx, time.Minute, func(ctx context.Context) (bool, string, error) {
			a, b := metricValue(t, baseA, "accelc_serve_leader"), metricValue(t, baseB, "accelc_serve_leader")
			switch {
			case a == 1 && b == 0:
				lead, other, stopLead = baseA, baseB, stopA
			case b == 1 && a == 0:
				lead, other, stopLead = baseB, baseA, stopB
			default:
				return false, fmt.Sprintf("accelc_serve_leader %v and %v", a, b), nil
			}
			return true, "", nil
		})
		if err != nil {
			t.Fatalf("no one leader of two replicas: %v", err)
		}
		return lead, other, stopLead
	}
	lead, other, stopLead := leader()
	held := s.churnPod(t, a100Node, "held")
	base = other
	agree("two replicas, a pod of one GPU held", has("7 available · 0 pending · no wait"))
	if w := metricValue(t, other, "accelc_profile_description_writes_total"); w != 0 {
		t.Errorf("the replica that does not lead wrote %v descriptions", w)
	}
	if w := metricValue(t, lead, "accelc_profile_description_writes_total"); w < 1 {
		t.Errorf("the leader wrote %v descriptions, want the new text", w)
	}
	stopLead()
	if err := s.client.CoreV1().Pods("churn").Delete(ctx, held.Name, metav1.DeleteOptions{GracePeriodSeconds: new(int64)}); err != nil {
		t.Fatal(err)
	}
	agree("the leader stopped, the pod gone", has("8 available · 0 pending · no wait"))
	if v := metricValue(t, other, "accelc_serve_leader"); v != 1 {
		t.Errorf("the remaining replica's accelc_serve_leader is %v, want 1", v)
	}
	if w := metricValue(t, other, "accelc_profile_description_writes_total"); w < 1 {
		t.Errorf("the replica that took over wrote %v descriptions, want the new text", w)
	}
	t.Logf("two replicas: the leader wrote, the other none until the leader stopped, then it wrote")

	// What the watch saw, version by version.
	versions := rec.stop()
	if len(rec.notes) > 0 {
		t.Logf("the HardwareProfile's watch: %s", strings.Join(rec.notes, "; "))
	}
	var texts []string
	var writes []time.Time
	written := false
	for i, v := range versions {
		if v.description != "" && (len(texts) == 0 || texts[len(texts)-1] != v.description) && v.owners == "accelc-serve" {
			texts = append(texts, v.description)
			writes = append(writes, v.at)
			written = true
		}
		if !written {
			continue
		}
		if v.description == "" || v.description == pickerStatic {
			t.Errorf("version %d (resourceVersion %s, %s): the description was taken away or reverted: %q", i, v.rv, v.at.Format(time.TimeOnly), v.description)
		}
		if v.owners != "accelc-serve" {
			t.Errorf("version %d (resourceVersion %s): the description's owners in managedFields are %q, want accelc-serve alone", i, v.rv, v.owners)
		}
		if !v.fluxOwnsRest {
			t.Errorf("version %d (resourceVersion %s): kustomize-controller owns no display name: Flux's apply was displaced", i, v.rv)
		}
	}
	first := 0 // the first server's writes, before the replicas'
	for first < len(writes) && writes[first].Before(firstStopped) {
		first++
	}
	for i := 1; i < first; i++ {
		// The watch's clock, not the writer's: allow it a second.
		if gap := writes[i].Sub(writes[i-1]); gap < describeInterval-time.Second {
			t.Errorf("writes %d and %d of the description %s apart, under --describe-interval %s", i, i+1, gap.Round(time.Millisecond), describeInterval)
		}
	}
	fluxVersions := 0
	for i := 1; i < len(versions); i++ {
		if versions[i].description == versions[i-1].description {
			fluxVersions++
		}
	}
	if len(texts) < 4 {
		t.Errorf("the description took %d texts as pods came and went, want at least 4: %q", len(texts), texts)
	}
	t.Logf("over %s with one server: %d of the description's writes (%.1f a minute); in all %d versions of the HardwareProfile, %d of them not the description's (Flux's applies); the texts, in order:\n  %s",
		elapsed.Round(time.Second), first, float64(first)/elapsed.Minutes(), len(versions), fluxVersions, strings.Join(texts, "\n  "))
	churnWrites := 0
	for _, at := range writes {
		if !at.Before(churnFrom) && !at.After(churnTo.Add(describeInterval)) {
			churnWrites++
		}
	}
	window := churnTo.Add(describeInterval).Sub(churnFrom)
	if most := int(window/describeInterval) + 1; churnWrites > most {
		t.Errorf("%d writes of the description in the %s of churn and its last interval, want at most %d (one per %s)", churnWrites, window.Round(time.Second), most, describeInterval)
	}
	t.Logf("churn: a pod of one GPU came and went 100 times in %s: %d writes of the description in %s (%.1f a minute; at most one per %s)",
		churnTo.Sub(churnFrom).Round(time.Second), churnWrites, window.Round(time.Second), float64(churnWrites)/window.Minutes(), describeInterval)
	if firstWrites != float64(first) {
		t.Errorf("accelc serve counted %v writes (accelc_profile_description_writes_total), the watch saw %d", firstWrites, first)
	}
}

// pickerCluster is a copy of e2e/testdata/picker with the delivery to the
// test's registry.
func (f *fluxRun) pickerCluster(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(f.s.work, "clusters", "picker")
	if err := os.CopyFS(dir, os.DirFS(filepath.Join(f.s.root, "e2e", "testdata", "picker"))); err != nil {
		t.Fatal(err)
	}
	f.writeDelivery(t, dir)
	return dir
}

// reconcileTree asks kustomize-controller to apply the tree again now, as
// `flux reconcile kustomization` does, and waits until it has.
func (f *fluxRun) reconcileTree(t *testing.T) {
	t.Helper()
	at := time.Now().Format(time.RFC3339Nano)
	patch := fmt.Sprintf(`{"metadata":{"annotations":{"reconcile.fluxcd.io/requestedAt":%q}}}`, at)
	name := "accelc-" + f.name
	if _, err := f.s.dyn.Resource(fluxKustomizations).Namespace(controlplane.FluxNamespace).Patch(t.Context(), name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatalf("requesting a reconcile of Kustomization %s: %v", name, err)
	}
	err := poll(t.Context(), fluxTimeout, func(ctx context.Context) (bool, string, error) {
		k, err := f.object(ctx, fluxKustomizations, name)
		if err != nil {
			return false, err.Error(), nil
		}
		handled, _, _ := unstructured.NestedString(k.Object, "status", "lastHandledReconcileAt")
		status, _, _, _ := fluxReady(k)
		return handled == at && status == "True", fmt.Sprintf("lastHandledReconcileAt %q, want %q; %s", handled, at, conditions(k)), nil
	})
	if err != nil {
		f.logs(t)
		t.Fatalf("Kustomization %s did not reconcile: %v", name, err)
	}
	t.Logf("Kustomization %s reconciled again (requestedAt %s)", name, at)
}

// pickerPod makes a pod of the A100 profile in team lab's namespace as
// Open Data Hub makes it from a Queue HardwareProfile: the profile's name
// in its annotation, its LocalQueue in Kueue's label, the devices asked.
func (s *suite) pickerPod(t *testing.T, name string, gpus int64) *corev1.Pod {
	t.Helper()
	q := resource.NewQuantity(gpus, resource.DecimalSI)
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: "lab",
			Labels:      map[string]string{"kueue.x-k8s.io/queue-name": pickerProfile},
			Annotations: map[string]string{hardwareProfileAnnotation: pickerProfile, hardwareProfileNSAnnotation: "opendatahub"},
		},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "train", Image: "registry.example/train:1",
			Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{gpu: *q},
				Limits:   corev1.ResourceList{gpu: *q},
			},
		}}},
	}
	created, err := s.client.CoreV1().Pods("lab").Create(t.Context(), pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating pod lab/%s: %v", name, err)
	}
	return created
}

// churnPods makes a pod of one GPU bound to node, waits half of every,
// deletes it, waits the other half, and again, for d.
func (s *suite) churnPods(ctx context.Context, node string, d, every time.Duration) error {
	one := resource.MustParse("1")
	end := time.Now().Add(d)
	for i := 0; time.Now().Before(end); i++ {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("churn-%d", i), Namespace: "churn"},
			Spec: corev1.PodSpec{
				NodeName:    node,
				Tolerations: []corev1.Toleration{{Key: "nvidia.com/gpu", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}},
				Containers: []corev1.Container{{Name: "c", Image: "registry.example/train:1", Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{gpu: one}, Limits: corev1.ResourceList{gpu: one},
				}}},
			},
		}
		if _, err := s.client.CoreV1().Pods("churn").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("churn: creating pod %s: %w", pod.Name, err)
		}
		time.Sleep(every / 2)
		if err := s.client.CoreV1().Pods("churn").Delete(ctx, pod.Name, metav1.DeleteOptions{GracePeriodSeconds: new(int64)}); err != nil {
			return fmt.Errorf("churn: deleting pod %s: %w", pod.Name, err)
		}
		time.Sleep(every / 2)
	}
	return nil
}

// churnPod makes a pod of one GPU bound to node in namespace churn.
func (s *suite) churnPod(t *testing.T, node, name string) *corev1.Pod {
	t.Helper()
	one := resource.MustParse("1")
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "churn"},
		Spec: corev1.PodSpec{
			NodeName:    node,
			Tolerations: []corev1.Toleration{{Key: "nvidia.com/gpu", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}},
			Containers: []corev1.Container{{Name: "c", Image: "registry.example/train:1", Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{gpu: one}, Limits: corev1.ResourceList{gpu: one},
			}}},
		},
	}
	created, err := s.client.CoreV1().Pods("churn").Create(t.Context(), pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating pod churn/%s: %v", name, err)
	}
	return created
}

// serveProc is suite.serve, with a function that stops the server
// (SIGTERM to its process group) and waits for it.
func (s *suite) serveProc(t *testing.T, cluster string, args ...string) (string, func()) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	cmd := exec.Command(s.accelc, append([]string{"serve", cluster, "--listen", addr}, args...)...)
	cmd.Dir = s.root
	var logs syncLog
	cmd.Stdout, cmd.Stderr = &logs, &logs
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	stop := func() {
		once.Do(func() {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
			_ = cmd.Wait()
		})
	}
	t.Cleanup(func() {
		stop()
		if t.Failed() {
			t.Logf("accelc serve on %s:\n%s", addr, logs.String())
		}
	})
	base := "http://" + addr
	if err := poll(t.Context(), 60*time.Second, func(ctx context.Context) (bool, string, error) {
		resp, err := http.Get(base + "/readyz")
		if err != nil {
			return false, err.Error(), nil
		}
		_ = resp.Body.Close()
		return resp.StatusCode == http.StatusOK, resp.Status, nil
	}); err != nil {
		t.Fatalf("accelc serve not ready: %v\n%s", err, logs.String())
	}
	return base, stop
}

// syncLog is a buffer a process writes to while the test reads it.
type syncLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *syncLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *syncLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// metricValue is the value of an unlabelled metric on the server's
// /metrics (-1 when it has none).
func metricValue(t *testing.T, base, name string) float64 {
	t.Helper()
	for _, line := range strings.Split(httpGet(t, base+"/metrics"), "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil {
				t.Fatalf("metric %s: %v", line, err)
			}
			return f
		}
	}
	return -1
}

// succeedPod marks the pod Succeeded through the status subresource, as
// its kubelet would.
func (s *suite) succeedPod(t *testing.T, p *corev1.Pod) {
	t.Helper()
	if _, err := s.client.CoreV1().Pods(p.Namespace).Patch(t.Context(), p.Name, types.MergePatchType, []byte(`{"status":{"phase":"Succeeded"}}`), metav1.PatchOptions{}, "status"); err != nil {
		t.Fatalf("marking pod %s/%s Succeeded: %v", p.Namespace, p.Name, err)
	}
}

func (s *suite) profileDescription(t *testing.T) string {
	t.Helper()
	hp, err := s.dyn.Resource(hardwareProfile).Namespace("opendatahub").Get(t.Context(), pickerProfile, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("HardwareProfile %s: %v", pickerProfile, err)
	}
	return hp.GetAnnotations()[render.DescriptionAnnotation]
}

// profileVersion is one version of the HardwareProfile as a watch saw it.
type profileVersion struct {
	at          time.Time
	rv          string
	description string
	// owners are the field managers that own the description, joined.
	owners string
	// fluxOwnsRest: kustomize-controller owns the display name.
	fluxOwnsRest bool
}

type profileRecorder struct {
	mu       sync.Mutex
	versions []profileVersion
	notes    []string
	cancel   context.CancelFunc
	done     chan struct{}
}

func (r *profileRecorder) stop() []profileVersion {
	r.cancel()
	<-r.done
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.versions
}

// recordProfile watches the A100 profile's HardwareProfile and keeps
// every version it sees until stopped, watching again from the last
// version it saw whenever the API server ends a watch.
func (s *suite) recordProfile(t *testing.T) *profileRecorder {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	r := &profileRecorder{cancel: cancel, done: make(chan struct{})}
	res := s.dyn.Resource(hardwareProfile).Namespace("opendatahub")
	first, err := res.Get(ctx, pickerProfile, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r.add(first)
	go func() {
		defer close(r.done)
		rv := first.GetResourceVersion()
		for ctx.Err() == nil {
			w, err := res.Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + pickerProfile, ResourceVersion: rv})
			if err != nil {
				if ctx.Err() == nil {
					r.note(fmt.Sprintf("watching from %s: %v", rv, err))
				}
				time.Sleep(200 * time.Millisecond)
				continue
			}
			for ev := range w.ResultChan() {
				switch u, ok := ev.Object.(*unstructured.Unstructured); {
				case ok && (ev.Type == watch.Added || ev.Type == watch.Modified):
					r.add(u)
					rv = u.GetResourceVersion()
				case ctx.Err() == nil:
					r.note(fmt.Sprintf("watch event %s: %v", ev.Type, ev.Object))
				}
			}
			w.Stop()
		}
	}()
	return r
}

// add keeps a version, once.
func (r *profileRecorder) add(u *unstructured.Unstructured) {
	v := profileVersion{at: time.Now(), rv: u.GetResourceVersion(), description: u.GetAnnotations()[render.DescriptionAnnotation]}
	var owners []string
	for _, mf := range u.GetManagedFields() {
		raw := ""
		if mf.FieldsV1 != nil {
			raw = mf.FieldsV1.GetRawString()
		}
		if strings.Contains(raw, `"f:`+render.DescriptionAnnotation+`"`) {
			owners = append(owners, mf.Manager)
		}
		if mf.Manager == "kustomize-controller" && strings.Contains(raw, `"f:opendatahub.io/display-name"`) {
			v.fluxOwnsRest = true
		}
	}
	v.owners = strings.Join(owners, ",")
	r.mu.Lock()
	defer r.mu.Unlock()
	if n := len(r.versions); n > 0 && r.versions[n-1].rv == v.rv {
		return
	}
	r.versions = append(r.versions, v)
}

// note keeps what the watch said besides versions.
func (r *profileRecorder) note(msg string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.notes = append(r.notes, msg)
}

// apiProfile is the A100 profile as /api/v1/profiles/a100 serves it.
func apiProfile(ctx context.Context, base string) (catalogdoc.Profile, *serve.Waiting, error) {
	var body struct {
		Profile struct {
			catalogdoc.Profile
			Waiting *serve.Waiting `json:"waiting"`
		} `json:"profile"`
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/api/v1/profiles/"+pickerProfile, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return catalogdoc.Profile{}, nil, err
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return catalogdoc.Profile{}, nil, err
	}
	return body.Profile.Profile, body.Profile.Waiting, nil
}

var waitLineRE = regexp.MustCompile(`(?s)data-profile="` + pickerProfile + `".*?<span class="wait-line">([^<]*)</span>`)

// pageWaitLine is the A100 profile's wait line on the page's refreshed
// part, as the browser gets it.
func pageWaitLine(ctx context.Context, base string) (string, error) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/?part=main", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	m := waitLineRE.FindSubmatch(b)
	if m == nil {
		return "", fmt.Errorf("the page has no wait line for %s", pickerProfile)
	}
	return htmlUnescape(string(m[1])), nil
}

// pageLine is the page's wait line for the API's figures, as
// TestServeWait reads it in a browser.
func pageLine(available int, w *serve.Waiting) string {
	line := fmt.Sprintf("%d available", available)
	if w == nil {
		return line
	}
	if w.Pending != nil {
		line += fmt.Sprintf(" — %d pending", *w.Pending)
	}
	switch e := w.Estimate; {
	case e.Minutes == nil:
		return line + " — wait unknown: " + e.Unknown
	case *e.Minutes == 0:
		return line + " — no wait"
	default:
		return line + fmt.Sprintf(" — about %d min", *e.Minutes)
	}
}

func htmlUnescape(s string) string {
	return strings.NewReplacer("&#39;", "'", "&quot;", `"`, "&lt;", "<", "&gt;", ">", "&amp;", "&", "&#34;", `"`).Replace(s)
}

func httpGet(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
