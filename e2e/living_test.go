//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/accelc/accelc/internal/controlplane"
	"github.com/accelc/accelc/pkg/audit"
	"github.com/accelc/accelc/pkg/render"
)

// The living cluster's steps of the story: work started before accelc
// that finishes under deny, and a profile retired while its pods run.
// Each is an UPDATE the policies must judge by what it changes, not as if
// the object were made now.

const (
	// finishingJob is the GPU Job started before accelc that runs across
	// the move to deny and completes after it.
	finishingJob = "legacy-finish"
	// retiringProfile is the profile the story adds, runs a pod of, and
	// retires; its pods move to retiringReplacement.
	retiringProfile      = "a100-batch"
	retiringReplacement  = "large-gpu"
	jobTrackingFinalizer = "batch.kubernetes.io/job-tracking"
)

// startFinishing starts, before accelc, a one-GPU Job with no profile
// whose pod KWOK keeps running until finishAcrossDeny lets it end.
func (st *story) startFinishing(t *testing.T) {
	t.Helper()
	spec := corev1.PodSpec{
		RestartPolicy: corev1.RestartPolicyNever,
		Tolerations:   []corev1.Toleration{{Key: "nvidia.com/gpu", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}},
		Containers: []corev1.Container{{
			Name: "main", Image: "registry.example/legacy:1",
			Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("1")}},
		}},
	}
	if _, err := st.s.client.BatchV1().Jobs("ml-research").Create(t.Context(), &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: finishingJob},
		Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": finishingJob}, Annotations: controlplane.PodCompleteAfter(legacyDelay)},
			Spec:       spec,
		}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	st.waitRunning(t, "ml-research", "app="+finishingJob, 1)
}

// finishAcrossDeny: under deny, the pod of the Job started before accelc
// (no profile: the policies would refuse it if it were made now) is let
// end — an annotation, which the policies do not judge, changed on the
// running pod — and the Job controller takes its tracking finalizer off
// it and completes the Job: neither UPDATE adds anything the policies
// refuse. Before, both were refused ("names no hardware profile") and the
// Job never completed.
func (st *story) finishAcrossDeny(t *testing.T) {
	s, ctx := st.s, t.Context()
	pods := st.waitRunning(t, "ml-research", "app="+finishingJob, 1)
	pod := pods[0]
	if !slices.Contains(pod.Finalizers, jobTrackingFinalizer) {
		t.Fatalf("pod %s has no %s finalizer: %v", pod.Name, jobTrackingFinalizer, pod.Finalizers)
	}
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": controlplane.PodCompleteAfter(0)}})
	if _, err := s.client.CoreV1().Pods("ml-research").Patch(ctx, pod.Name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatalf("annotating the running pod %s of Job %s, made before deny: %v", pod.Name, finishingJob, err)
	}
	t.Logf("under deny, the running pod %s of Job %s (no profile, made before accelc) takes an annotation: admitted", pod.Name, finishingJob)
	err := poll(ctx, runTimeout, func(ctx context.Context) (bool, string, error) {
		job, err := s.client.BatchV1().Jobs("ml-research").Get(ctx, finishingJob, metav1.GetOptions{})
		if err != nil {
			return false, err.Error(), nil
		}
		for _, c := range job.Status.Conditions {
			if c.Type == batchv1.JobComplete && c.Status == corev1.ConditionTrue {
				return true, "", nil
			}
		}
		return false, fmt.Sprintf("Job %s: succeeded %d, conditions %v", finishingJob, job.Status.Succeeded, job.Status.Conditions), nil
	})
	if err != nil {
		t.Fatalf("the Job started before accelc does not complete under deny: %v", err)
	}
	done, err := s.client.CoreV1().Pods("ml-research").Get(ctx, pod.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(done.Finalizers, jobTrackingFinalizer) {
		t.Fatalf("the Job completed but its pod %s keeps %s", pod.Name, jobTrackingFinalizer)
	}
	t.Logf("Job %s completed under deny: its pod %s %s, the Job controller's finalizer removed", finishingJob, done.Name, done.Status.Phase)
}

// retireProfile: a commit adds profile a100-batch; a user's pod of it
// (ODH's annotation only) is queued by Kueue and runs; a commit retires
// the profile for large-gpu. The running pod keeps running; a new pod of
// it is refused, naming large-gpu; the running pod, deleted, terminates
// (Kueue takes its finalizer off a pod of a retired profile) and is gone.
func (st *story) retireProfile(t *testing.T) {
	s, ctx := st.s, t.Context()
	profile := fmt.Sprintf(`

profiles: %q: {
	displayName: "A100 batch"
	description: "A100 80GB for batch jobs, before large-gpu took them."
	acceleratorTypes: ["nvidia-a100-80gb"]
	tolerations: [{key: "nvidia.com/gpu", operator: "Exists", effect: "NoSchedule"}]
}
`, retiringProfile)
	cue := st.read(t, "cluster.cue")
	st.write(t, "cluster.cue", cue+profile)
	st.commit(t, "commit (profile "+retiringProfile+")")

	running := retiringPod("batch-running")
	if err := s.createForReal(ctx, st.c, running); err != nil {
		t.Fatalf("a pod of %s: %v", retiringProfile, err)
	}
	pods := st.waitRunning(t, "ml-research", "app=batch-running", 1)
	was := pods[0]
	if !slices.ContainsFunc(was.Finalizers, func(f string) bool { return strings.HasPrefix(f, "kueue.x-k8s.io/") }) {
		t.Fatalf("the pod of %s is not Kueue's (finalizers %v, labels %v)", retiringProfile, was.Finalizers, was.Labels)
	}
	t.Logf("pod %s of %s queued by Kueue, Running on %s (%s)", was.Name, retiringProfile, was.Spec.NodeName, st.c.nodeTypes[was.Spec.NodeName])

	st.write(t, "cluster.cue", strings.Replace(cue+profile, `acceleratorTypes: ["nvidia-a100-80gb"]
	tolerations`, fmt.Sprintf(`acceleratorTypes: ["nvidia-a100-80gb"]
	retired: replacement: %q
	tolerations`, retiringReplacement), 1))
	st.commit(t, "commit (retire "+retiringProfile+" for "+retiringReplacement+")")

	refused := regexp.MustCompile(regexp.QuoteMeta(fmt.Sprintf(`hardware profile %q is retired: use %s`, retiringProfile, retiringReplacement)))
	msg, err := s.denied(ctx, st.c, retiringPod("batch-new"), nil, refused)
	if err != nil {
		t.Fatalf("a new pod of the retired profile: %v", err)
	}
	t.Logf("a new pod of %s is refused: %s", retiringProfile, firstLine(msg))
	now, err := s.client.CoreV1().Pods("ml-research").Get(ctx, was.Name, metav1.GetOptions{})
	if err != nil || now.UID != was.UID || now.Status.Phase != corev1.PodRunning || now.Spec.NodeName != was.Spec.NodeName {
		t.Fatalf("the running pod of the retired profile changed: %v %v", now, err)
	}
	if err := s.client.CoreV1().Pods("ml-research").Delete(ctx, was.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
		t.Fatal(err)
	}
	err = poll(ctx, runTimeout, func(ctx context.Context) (bool, string, error) {
		p, err := s.client.CoreV1().Pods("ml-research").Get(ctx, was.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, "", nil
		}
		if err != nil {
			return false, err.Error(), nil
		}
		return false, fmt.Sprintf("still there, finalizers %v", p.Finalizers), nil
	})
	if err != nil {
		t.Fatalf("the pod of the retired profile does not terminate: %v", err)
	}
	t.Logf("the running pod of the retired %s kept running, then terminated and is gone (Kueue's finalizer removed)", retiringProfile)
}

// retiringPod is a pod of the retiring profile as a user writes it: ODH's
// annotation and the GPU, nothing else.
func retiringPod(name string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{
			"name": name, "namespace": "ml-research",
			"labels":      map[string]any{"app": name},
			"annotations": map[string]any{hardwareProfileAnnotation: retiringProfile},
		},
		"spec": map[string]any{"containers": []any{map[string]any{
			"name": "main", "image": "registry.example/batch:1",
			"resources": map[string]any{"limits": map[string]any{"nvidia.com/gpu": "1"}},
		}}},
	}}
}

// handOver makes the admin's checkout what the walk-through starts from:
// a Git repository whose cluster says dryrun (the example says deny, at
// which its admission fixtures are judged; a cluster starts at dryrun).
func (st *story) handOver(t *testing.T) {
	t.Helper()
	st.setEnforcement(t, "dryrun")
	st.git(t, "init", "-q", "-b", "main")
	st.git(t, "add", "-A")
	st.git(t, "commit", "-q", "-m", "hetero-prod, at dryrun")
}

// git runs git in the admin's checkout, as the admin.
func (st *story) git(t *testing.T, args ...string) {
	t.Helper()
	args = append([]string{"-c", "user.name=Platform Admin", "-c", "user.email=admin@example.com"}, args...)
	if stdout, stderr, err := run(t.Context(), st.repo, "git", args...); err != nil {
		t.Fatalf("git %s: %v\n%s%s", strings.Join(args, " "), err, stdout, stderr)
	}
}

// migNode is the A100 node the story's dry-run MIG commit would cut into
// slices.
const migNode = "worker-node-16"

// migDryrun: at dryrun, a commit that gives an A100 node a MIG config
// changes none of the node's labels (the GPU Operator's MIG manager would
// repartition the node when its nvidia.com/mig.config label changes, and
// evict its GPU pods), and accelc audit --live, run before the commit,
// names the node, the label change it holds back, and the pod the MIG
// manager would evict. The admin takes the config out again in the next
// commit.
func (st *story) migDryrun(t *testing.T) {
	s, ctx := st.s, t.Context()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "on-the-mig-node", Namespace: "ml-research", Labels: map[string]string{"app": "on-the-mig-node"}},
		Spec: corev1.PodSpec{
			NodeName:    migNode,
			Tolerations: []corev1.Toleration{{Key: "nvidia.com/gpu", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}},
			Containers: []corev1.Container{{Name: "main", Image: "registry.example/legacy:1",
				Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("2")}}}},
		},
	}
	if _, err := s.client.CoreV1().Pods(pod.Namespace).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatalf("a GPU pod on %s under dryrun: %v", migNode, err)
	}
	st.waitRunning(t, pod.Namespace, "app="+pod.Name, 1)
	before, err := s.client.CoreV1().Nodes().Get(ctx, migNode, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}

	st.write(t, "mig.cue", "package cluster\n\n// Inference slices on one A100 node.\ncluster: mig: configs: \"a100-3g\": {acceleratorType: \"nvidia-a100-80gb\", nodes: [\""+migNode+"\"], layout: \"3g.40gb\": 2}\n")
	r, _ := st.auditPrediction(t)
	var change *audit.NodeChange
	for i := range r.Nodes {
		if r.Nodes[i].Node == migNode {
			change = &r.Nodes[i]
		}
	}
	switch {
	case change == nil:
		t.Fatalf("accelc audit --live names no change to %s: %s", migNode, jsonString(r.Nodes))
	case change.Applied || change.Stage != "dryrun":
		t.Errorf("accelc audit --live: %s's MIG config applied %v at %q, want withheld at dryrun", migNode, change.Applied, change.Stage)
	case !slices.ContainsFunc(change.Changes, func(c audit.LabelChange) bool { return c.Key == render.MIGConfigLabel && c.To == "a100-3g" }):
		t.Errorf("accelc audit --live does not name the label %s → a100-3g it holds back: %s", render.MIGConfigLabel, jsonString(change.Changes))
	case !slices.ContainsFunc(change.Evicted, func(p audit.EvictedPod) bool {
		return p.Namespace == pod.Namespace && p.Name == pod.Name && p.Reason == audit.EvictRepartition
	}):
		t.Errorf("accelc audit --live does not name %s/%s as evicted by the MIG manager: %s", pod.Namespace, pod.Name, jsonString(change.Evicted))
	}
	if r.EvictsNow() != 0 {
		t.Errorf("accelc audit --live: the dry-run commit would evict %d pods when it lands", r.EvictsNow())
	}
	st.commit(t, "commit: MIG config a100-3g on "+migNode+" (the cluster is at dryrun)")

	// nfd-master applies the node rules Flux has just applied; the node
	// keeps its labels and taints while it does.
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		n, err := s.client.CoreV1().Nodes().Get(ctx, migNode, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !maps.Equal(n.Labels, before.Labels) || !slices.EqualFunc(n.Spec.Taints, before.Spec.Taints, func(a, b corev1.Taint) bool { return a.MatchTaint(&b) && a.Value == b.Value }) {
			t.Fatalf("the dry-run commit changed %s: labels %v → %v, taints %v → %v", migNode, before.Labels, n.Labels, before.Spec.Taints, n.Spec.Taints)
		}
		time.Sleep(time.Second)
	}
	if got, err := s.client.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{}); err != nil || got.Status.Phase != corev1.PodRunning {
		t.Errorf("%s/%s after the dry-run commit: %v %v", pod.Namespace, pod.Name, err, got.Status.Phase)
	}
	t.Logf("dryrun: the MIG config reached no node: %s kept its labels and taints for 20 s after Flux applied the commit, and its GPU pod runs; accelc audit named the label change (%s → a100-3g) and the pod the MIG manager would evict", migNode, render.MIGConfigLabel)

	if err := os.Remove(filepath.Join(st.cluster, "mig.cue")); err != nil {
		t.Fatal(err)
	}
	st.commit(t, "commit: the MIG config taken out again")
	st.deletePod(t, pod.Namespace, pod.Name)
}
