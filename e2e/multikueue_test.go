//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/accelc/accelc/internal/controlplane"
)

// multiKueueFleet is the example MultiKueue fleet: a manager without GPUs
// dispatching H200 training to gpu-east (every team) and gpu-west (ML
// Research, which also gets gpu-west's A100s).
const multiKueueFleet = "examples/clusters/fleet-multikueue"

// multiKueueKinds are the kinds of a rendered tree's queues/ and
// priorities/ folders the test creates, in order: what an object names
// exists before it.
var multiKueueKinds = []string{"WorkloadPriorityClass", "ResourceFlavor", "Cohort", "MultiKueueCluster", "MultiKueueConfig", "AdmissionCheck", "ClusterQueue", "LocalQueue"}

// TestMultiKueue renders the example fleet with `accelc render --fleet`
// and applies the manager's tree and gpu-east's to two control planes,
// each with Kueue's manager on the Configuration fragment its tree holds;
// gpu-east also runs kube-controller-manager (the Job controller),
// kube-scheduler and KWOK's kubelets on its inventory's nodes. The test
// writes gpu-east's kubeconfig into the Secret the manager's
// MultiKueueCluster names (gpu-west gets none: its MultiKueueCluster
// stays inactive). A batch/v1 Job of model-serving submitted on the
// manager to the h200-train LocalQueue is dispatched to gpu-east, runs
// there on an H200 node, and its success comes back to the manager's Job.
func TestMultiKueue(t *testing.T) {
	begin := time.Now()
	root := repoRoot(t)
	accelc := program(t, root, filepath.Join("bin", "accelc"), "build")
	out := filepath.Join(t.TempDir(), "fleet")
	args := []string{"render", "--fleet", filepath.FromSlash(multiKueueFleet), "--output-dir", out, "--revision", revision}
	if _, errOut, err := run(t.Context(), root, accelc, args...); err != nil {
		t.Fatalf("accelc %s: %v\n%s", strings.Join(args, " "), err, errOut)
	}

	manager := startMultiKueueCluster(t, root, accelc, filepath.Join(out, "manager"), false)
	worker := startMultiKueueCluster(t, root, accelc, filepath.Join(out, "gpu-east"), true)
	nodes := worker.createNodes(t, filepath.Join(root, filepath.FromSlash(multiKueueFleet), "gpu-east", "inventory.json"), nil)
	waitKWOKNodes(t, worker, nodes)
	t.Logf("manager and gpu-east up in %s; gpu-east's nodes %v Ready under KWOK", time.Since(begin).Round(time.Millisecond), nodes)

	// What the test writes and accelc never renders: the worker's
	// kubeconfig, in the Secret the MultiKueueCluster names.
	kubeconfig, err := os.ReadFile(worker.cp.UserKubeconfig(t, "multikueue-manager", "system:masters"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "gpu-east-kubeconfig", Namespace: controlplane.KueueNamespace},
		Data:       map[string][]byte{"kubeconfig": kubeconfig},
	}
	if _, err := manager.client.CoreV1().Secrets(controlplane.KueueNamespace).Create(ctx, secret, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	mkCluster := gvrObject("kueue.x-k8s.io", "v1beta2", "MultiKueueCluster", "", "gpu-east")
	if err := manager.waitActive(ctx, mkCluster); err != nil {
		t.Fatalf("the manager's MultiKueueCluster gpu-east never became Active: %v", err)
	}
	for _, name := range []string{"multikueue-gpu-east", "multikueue-gpu-east-gpu-west"} {
		if err := manager.waitActive(ctx, gvrObject("kueue.x-k8s.io", "v1beta2", "AdmissionCheck", "", name)); err != nil {
			t.Fatalf("the manager's AdmissionCheck %s never became Active: %v", name, err)
		}
	}
	for _, cq := range []string{"model-serving.h200-train", "ml-research.h200-train"} {
		if err := manager.waitActive(ctx, gvrObject("kueue.x-k8s.io", "v1beta2", "ClusterQueue", "", cq)); err != nil {
			t.Fatalf("the manager's ClusterQueue %s never became Active: %v", cq, err)
		}
	}
	if err := manager.waitActive(ctx, gvrObject("kueue.x-k8s.io", "v1beta2", "LocalQueue", "serving-prod", "h200-train")); err != nil {
		t.Fatalf("the manager's LocalQueue serving-prod/h200-train never became Active: %v", err)
	}
	// gpu-west has no Secret: its check, and the queue only it serves,
	// are inactive and say why.
	for _, obj := range []*unstructured.Unstructured{
		gvrObject("kueue.x-k8s.io", "v1beta2", "MultiKueueCluster", "", "gpu-west"),
		gvrObject("kueue.x-k8s.io", "v1beta2", "AdmissionCheck", "", "multikueue-gpu-west"),
		gvrObject("kueue.x-k8s.io", "v1beta2", "ClusterQueue", "", "ml-research.a100-train"),
	} {
		got, err := manager.get(ctx, obj)
		if err != nil {
			t.Fatal(err)
		}
		cond := condition(got, "Active")
		if cond == nil || cond["status"] != "False" {
			t.Fatalf("manager: %s %s is Active without gpu-west's Secret: %s", obj.GetKind(), obj.GetName(), jsonString(cond))
		}
		t.Logf("manager: %s %s inactive: %v: %v", obj.GetKind(), obj.GetName(), cond["reason"], cond["message"])
	}
	t.Logf("after %s: every queue Active, the Secret written", time.Since(begin).Round(time.Millisecond))

	// A Job as a user submits it on the manager: the profile's
	// LocalQueue, a GPU, CPU and memory; KWOK ends its pod 2 s after it runs.
	const ns, name = "serving-prod", "train-east"
	job := trainJob(ns, name)
	// MultiKueue deletes the worker's Job once the manager's has its
	// status: what gpu-east held is recorded as it goes.
	seen := watchWorker(t, worker, ns, name)
	submitted := time.Now()
	created, err := manager.client.BatchV1().Jobs(ns).Create(ctx, job, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("submitting the Job on the manager: %v", err)
	}
	if got := ptrString(created.Spec.ManagedBy); got != "kueue.x-k8s.io/multikueue" {
		t.Fatalf("the manager's Kueue did not hand the Job to MultiKueue: spec.managedBy %q", got)
	}
	t.Logf("manager: Job %s/%s created, spec.managedBy %s, suspended %v", ns, name, *created.Spec.ManagedBy, ptrBool(created.Spec.Suspend))

	// The manager's Job completes from the worker's status.
	done := waitJobComplete(t, manager, worker, ns, name)
	t.Logf("manager: Job %s/%s succeeded %d, Complete, %s after it was submitted", ns, name, done.Status.Succeeded, time.Since(submitted).Round(time.Millisecond))

	// The manager's Workload: admitted in its ClusterQueue, its
	// MultiKueue check Ready, naming gpu-east.
	wl := workloadOf(t, manager, ns, "Job", name)
	admission, _, _ := unstructured.NestedString(wl.Object, "status", "admission", "clusterQueue")
	checks, _, _ := unstructured.NestedSlice(wl.Object, "status", "admissionChecks")
	cluster, _, _ := unstructured.NestedString(wl.Object, "status", "clusterName")
	if admission != "model-serving.h200-train" || cluster != "gpu-east" {
		t.Fatalf("the manager's Workload: clusterQueue %q, clusterName %q (checks %s)", admission, cluster, jsonString(checks))
	}
	t.Logf("manager: Workload %s admitted in %s, status.clusterName %s, checks %s", wl.GetName(), admission, cluster, jsonString(checks))

	// On gpu-east: the Job, made by MultiKueue, ran its pod on an H200
	// node, admitted by gpu-east's own queue in the H200 flavor.
	remote, rwl, pod := seen.last()
	if remote == nil || rwl == nil || pod == nil {
		t.Fatalf("gpu-east: Job %v, Workload %v, pod %v seen", remote != nil, rwl != nil, pod != nil)
	}
	if remote.Labels["kueue.x-k8s.io/multikueue-origin"] != "manager" || remote.Status.Succeeded != 1 || ptrString(remote.Spec.ManagedBy) != "" {
		t.Fatalf("gpu-east's Job: labels %v, managedBy %q, succeeded %d", remote.Labels, ptrString(remote.Spec.ManagedBy), remote.Status.Succeeded)
	}
	flavors, _, _ := unstructured.NestedSlice(rwl.Object, "status", "admission", "podSetAssignments")
	rcq, _, _ := unstructured.NestedString(rwl.Object, "status", "admission", "clusterQueue")
	node, err := worker.client.CoreV1().Nodes().Get(ctx, pod.Spec.NodeName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	typ := node.Labels["accelerator.opendatahub.io/type"]
	if rcq != "model-serving.h200-train" || typ != "nvidia-h200-141gb" || pod.Status.Phase != corev1.PodSucceeded {
		t.Fatalf("gpu-east: Workload in %q; pod %s on node %s of type %q, phase %s", rcq, pod.Name, node.Name, typ, pod.Status.Phase)
	}
	t.Logf("gpu-east: Job %s/%s (origin label %s, no managedBy) succeeded %d; its Workload admitted in %s, %s; pod %s %s on node %s (%s), node selector %v",
		ns, name, remote.Labels["kueue.x-k8s.io/multikueue-origin"], remote.Status.Succeeded, rcq, jsonString(flavors), pod.Name, pod.Status.Phase, node.Name, typ, pod.Spec.NodeSelector)
	err = poll(ctx, 30*time.Second, func(ctx context.Context) (bool, string, error) {
		_, err := worker.client.BatchV1().Jobs(ns).Get(ctx, name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), fmt.Sprintf("get: %v", err), nil
	})
	if err != nil {
		t.Fatalf("gpu-east's Job is still there after the manager's finished: %v", err)
	}
	t.Logf("gpu-east: the Job deleted by MultiKueue once the manager's had its status")
	// ML Research's H200 jobs may go to gpu-east or gpu-west: with
	// gpu-west's MultiKueueCluster inactive, its check is still Active
	// and the job goes to gpu-east.
	if _, err := manager.client.BatchV1().Jobs("ml-research-dev").Create(ctx, trainJob("ml-research-dev", "train-any"), metav1.CreateOptions{}); err != nil {
		t.Fatalf("submitting ML Research's Job on the manager: %v", err)
	}
	waitJobComplete(t, manager, worker, "ml-research-dev", "train-any")
	wl = workloadOf(t, manager, "ml-research-dev", "Job", "train-any")
	admission, _, _ = unstructured.NestedString(wl.Object, "status", "admission", "clusterQueue")
	cluster, _, _ = unstructured.NestedString(wl.Object, "status", "clusterName")
	checks, _, _ = unstructured.NestedSlice(wl.Object, "status", "admissionChecks")
	if admission != "ml-research.h200-train" || cluster != "gpu-east" {
		t.Fatalf("ML Research's Workload: clusterQueue %q, clusterName %q (checks %s)", admission, cluster, jsonString(checks))
	}
	both, err := manager.get(ctx, gvrObject("kueue.x-k8s.io", "v1beta2", "AdmissionCheck", "", "multikueue-gpu-east-gpu-west"))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("manager: ML Research's Job ml-research-dev/train-any Complete, admitted in %s, run on %s (check multikueue-gpu-east-gpu-west: %v)", admission, cluster, condition(both, "Active")["reason"])
	t.Logf("TestMultiKueue: %s in all", time.Since(begin).Round(time.Millisecond))
}

// trainJob is a Job as a user submits it on the manager: the h200-train
// LocalQueue, a GPU, CPU and memory; KWOK ends its pod 2 s after it runs.
func trainJob(ns, name string) *batchv1.Job {
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{"kueue.x-k8s.io/queue-name": "h200-train"}},
		Spec: batchv1.JobSpec{
			BackoffLimit: new(int32),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Annotations: controlplane.PodCompleteAfter(2 * time.Second)},
				Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyNever,
					Containers: []corev1.Container{{
						Name: "train", Image: "registry.example.com/train:1",
						Resources: corev1.ResourceRequirements{
							Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("16Gi"), "nvidia.com/gpu": resource.MustParse("1")},
							Limits:   corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("1")},
						},
					}},
				},
			},
		},
	}
}

// waitJobComplete waits until the manager's Job has succeeded and is
// Complete, and returns it.
func waitJobComplete(t *testing.T, manager, worker *suite, ns, name string) *batchv1.Job {
	t.Helper()
	var done *batchv1.Job
	err := poll(t.Context(), 2*time.Minute, func(ctx context.Context) (bool, string, error) {
		j, err := manager.client.BatchV1().Jobs(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error(), nil
		}
		done = j
		return j.Status.Succeeded == 1 && jobComplete(j), fmt.Sprintf("succeeded %d, conditions %s", j.Status.Succeeded, jsonString(j.Status.Conditions)), nil
	})
	if err != nil {
		t.Fatalf("the manager's Job %s/%s never completed: %v\n%s", ns, name, err, multiKueueState(t, manager, worker, ns))
	}
	return done
}

// startMultiKueueCluster starts a control plane (with kube-scheduler,
// kube-controller-manager and KWOK for a worker) and Kueue on the
// Configuration fragment of the rendered tree in dir, creates the tree's
// Namespaces and queue objects, and waits until a worker's ClusterQueues
// and LocalQueues are Active (a manager's wait for their checks, which
// wait for the workers' Secrets).
func startMultiKueueCluster(t *testing.T, root, accelc, dir string, worker bool) *suite {
	t.Helper()
	s := &suite{root: root, work: t.TempDir(), accelc: accelc}
	tree := readTree(t, dir)
	fragment, namespaces := kueueConfig(t, tree)
	// The manager watches the worker's Workloads and Jobs directly.
	opts := []controlplane.Option{controlplane.WithoutWatchList()}
	if worker {
		opts = append(opts, controlplane.WithScheduler(), controlplane.WithControllerManager())
	}
	s.cp = controlplane.Start(t, opts...)
	kq := s.cp.StartKueue(t, controlplane.KueueOptions{Namespaces: namespaces, Fragment: []byte(fragment)})
	s.connect(t)
	if worker {
		s.kwok = s.cp.StartKWOK(t)
	}
	t.Logf("%s: control plane and Kueue up; Kueue's log: %s", filepath.Base(dir), kq.LogPath())
	ctx := t.Context()
	counts := s.createRendered(t, tree, append([]string{"Namespace"}, multiKueueKinds...)...)
	t.Logf("%s: created %s", filepath.Base(dir), jsonString(counts))
	for _, r := range tree {
		if kind := r.obj.GetKind(); worker && (kind == "LocalQueue" || kind == "ClusterQueue") {
			if err := s.waitActive(ctx, r.obj); err != nil {
				t.Fatalf("%s: the rendered %s %s never became Active: %v", dir, kind, r.obj.GetName(), err)
			}
		}
	}
	return s
}

// waitKWOKNodes waits until KWOK has made the nodes Ready.
func waitKWOKNodes(t *testing.T, s *suite, names []string) {
	t.Helper()
	err := poll(t.Context(), time.Minute, func(ctx context.Context) (bool, string, error) {
		var notReady []string
		for _, name := range names {
			n, err := s.client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
			if err != nil || !controlplane.NodeReady(n) {
				notReady = append(notReady, name)
			}
		}
		return len(notReady) == 0, fmt.Sprintf("not Ready: %v", notReady), nil
	})
	if err != nil {
		t.Fatalf("KWOK did not make the nodes Ready: %v\n%s", err, s.kwok.Tail())
	}
}

// workerSeen is the last state gpu-east showed of the test's Job, its
// Workload and its pod.
type workerSeen struct {
	mu  sync.Mutex
	job *batchv1.Job
	wl  *unstructured.Unstructured
	pod *corev1.Pod
}

func (w *workerSeen) last() (*batchv1.Job, *unstructured.Unstructured, *corev1.Pod) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.job, w.wl, w.pod
}

// watchWorker records, until the test ends, the last state of the Job
// name in ns on the worker, of the Workload it owns once admitted, and of
// its pod once bound.
func watchWorker(t *testing.T, s *suite, ns, name string) *workerSeen {
	t.Helper()
	ctx := t.Context()
	w := &workerSeen{}
	jobs, err := s.client.BatchV1().Jobs(ns).Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + name})
	if err != nil {
		t.Fatal(err)
	}
	pods, err := s.client.CoreV1().Pods(ns).Watch(ctx, metav1.ListOptions{LabelSelector: "batch.kubernetes.io/job-name=" + name})
	if err != nil {
		t.Fatal(err)
	}
	wls, err := s.dyn.Resource(workloadGVR).Namespace(ns).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { jobs.Stop(); pods.Stop(); wls.Stop() })
	go func() {
		for ev := range jobs.ResultChan() {
			if j, ok := ev.Object.(*batchv1.Job); ok && ev.Type != watch.Deleted {
				w.mu.Lock()
				w.job = j
				w.mu.Unlock()
			}
		}
	}()
	go func() {
		for ev := range pods.ResultChan() {
			if p, ok := ev.Object.(*corev1.Pod); ok && ev.Type != watch.Deleted && p.Spec.NodeName != "" {
				w.mu.Lock()
				w.pod = p
				w.mu.Unlock()
			}
		}
	}()
	go func() {
		for ev := range wls.ResultChan() {
			wl, ok := ev.Object.(*unstructured.Unstructured)
			if !ok || ev.Type == watch.Deleted {
				continue
			}
			owned := slices.ContainsFunc(wl.GetOwnerReferences(), func(o metav1.OwnerReference) bool { return o.Kind == "Job" && o.Name == name })
			if _, admitted, _ := unstructured.NestedMap(wl.Object, "status", "admission"); owned && admitted {
				w.mu.Lock()
				w.wl = wl
				w.mu.Unlock()
			}
		}
	}()
	return w
}

// gvrObject is an object reference for suite.get and waitActive.
func gvrObject(group, version, kind, namespace, name string) *unstructured.Unstructured {
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(schema.GroupVersionKind{Group: group, Version: version, Kind: kind})
	obj.SetNamespace(namespace)
	obj.SetName(name)
	return obj
}

// workloadOf is the Kueue Workload a job owns.
func workloadOf(t *testing.T, s *suite, ns, kind, name string) *unstructured.Unstructured {
	t.Helper()
	gvr := workloadGVR
	list, err := s.dyn.Resource(gvr).Namespace(ns).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range list.Items {
		for _, o := range list.Items[i].GetOwnerReferences() {
			if o.Kind == kind && o.Name == name {
				return &list.Items[i]
			}
		}
	}
	t.Fatalf("no Workload of %s %s/%s", kind, ns, name)
	return nil
}

// multiKueueState is what both clusters hold of the test's Job, for a
// failure message.
func multiKueueState(t *testing.T, manager, worker *suite, ns string) string {
	gvr := workloadGVR
	var b strings.Builder
	for _, c := range []struct {
		name string
		s    *suite
	}{{"manager", manager}, {"gpu-east", worker}} {
		list, err := c.s.dyn.Resource(gvr).Namespace(ns).List(context.Background(), metav1.ListOptions{})
		if err != nil {
			fmt.Fprintf(&b, "%s: workloads: %v\n", c.name, err)
			continue
		}
		for _, wl := range list.Items {
			status, _, _ := unstructured.NestedMap(wl.Object, "status")
			fmt.Fprintf(&b, "%s: workload %s: %s\n", c.name, wl.GetName(), jsonString(status))
		}
		pods, _ := c.s.client.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{})
		if pods != nil {
			for _, p := range pods.Items {
				fmt.Fprintf(&b, "%s: pod %s on %q: %s\n", c.name, p.Name, p.Spec.NodeName, p.Status.Phase)
			}
		}
	}
	return b.String()
}

func jobComplete(j *batchv1.Job) bool {
	return slices.ContainsFunc(j.Status.Conditions, func(c batchv1.JobCondition) bool {
		return c.Type == batchv1.JobComplete && c.Status == corev1.ConditionTrue
	})
}

func ptrString(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

func ptrBool(p *bool) bool { return p != nil && *p }
