//go:build e2e

package e2e

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"

	"github.com/accelc/accelc/internal/controlplane"
	"github.com/accelc/accelc/pkg/render"
)

// gangWebhooksEnv, set to "chart", runs TestJobGang with Gatekeeper's
// webhooks as its chart installs them by default (every resource) instead
// of as accelc's rendered values narrow them: the same scenario's webhook
// calls, for comparison.
const gangWebhooksEnv = "ACCELC_GANG_WEBHOOKS"

// TestJobGang: hetero-prod's tree, as rendered, applied to a control plane
// with kube-controller-manager's Job controller, kube-scheduler, KWOK's
// nodes, Kueue configured from the tree's fragment, and Gatekeeper
// installed with the tree's Helm values. A Job of 4 pods of 4 V100s that
// names its profile only as Open Data Hub does, by annotation on its pod
// template, gets the profile's LocalQueue and priority on itself when it
// is made (the accelc-job-queue MutatingAdmissionPolicy); Kueue admits it
// as one Workload and runs its 4 pods together, none of them queued on its
// own. A second Job, more than the team's quota has left, stays wholly
// suspended: one Workload, no pod. A Job whose template names a profile
// the team may not use is refused. The API server's metrics say how many
// requests reached Gatekeeper's webhooks and how many the matchConditions
// kept from them.
func TestJobGang(t *testing.T) {
	s := newSuite(t)
	ctx := t.Context()
	s.cp = controlplane.Start(t, controlplane.WithScheduler(), controlplane.WithControllerManager())
	s.connect(t)
	out := s.render(t, storyExample, "gang")
	c := &clusterUnderTest{example: storyExample, out: out, objs: readTree(t, out), applied: appliedFolders(t, out)}
	c.read(t)
	var values string
	for _, r := range c.objs {
		if r.obj.GetKind() == "ConfigMap" && r.obj.GetName() == render.GatekeeperValuesName {
			values, _, _ = unstructuredString(r.obj.Object, "data", "values.yaml")
		}
	}
	if values == "" {
		t.Fatalf("the tree has no ConfigMap %s with values.yaml", render.GatekeeperValuesName)
	}
	var opts []controlplane.GatekeeperOption
	if os.Getenv(gangWebhooksEnv) != "chart" {
		opts = append(opts, controlplane.WithGatekeeperValues([]byte(values)))
	}
	s.gk = s.cp.StartGatekeeper(t, opts...)
	s.installCRDs(t)
	fragment, namespaces := kueueConfig(t, c.objs)
	s.cp.StartKueue(t, controlplane.KueueOptions{Namespaces: namespaces, Fragment: []byte(fragment)})
	s.kwok = s.cp.StartKWOK(t)
	view, err := s.inventoryView(t, storyExample)
	if err != nil {
		t.Fatal(err)
	}
	// The type label nfd-master would stamp, set on the nodes as they
	// are made.
	types := map[string]map[string]string{}
	c.nodeTypes = map[string]string{}
	for _, n := range view.Nodes {
		if known(n.AcceleratorType) {
			types[n.Name] = map[string]string{c.typeLabel: n.AcceleratorType}
			c.nodeTypes[n.Name] = n.AcceleratorType
		}
	}
	nodes := s.createNodes(t, filepath.Join(s.root, clusterDir(storyExample), "inventory.json"), types)
	(&story{s: s}).waitNodesReady(t, nodes)
	s.ensureNamespaces(t, foreignNamespaces(t, out)...)
	var crds []string
	for _, r := range c.objs {
		if r.obj.GetKind() == "CustomResourceDefinition" {
			crds = append(crds, filepath.Join(out, r.file))
		}
	}
	if _, err := controlplane.ApplyCRDs(ctx, s.dyn, crds...); err != nil {
		t.Fatal(err)
	}
	s.mapper.Reset()
	s.apply(t, c)
	s.waitGatekeeper(t, c)
	for _, r := range c.objs {
		if k := r.obj.GetKind(); k == "ClusterQueue" || k == "LocalQueue" {
			if err := s.waitActive(ctx, r.obj); err != nil {
				t.Fatalf("%s %s never Active: %v", k, r.obj.GetName(), err)
			}
		}
	}
	before := s.webhookCounts(t)

	const ns, profile, queue, priority = "ds-notebooks", "standard-gpu", "standard-gpu", "research"
	job := func(name, profile string, pods int32) *batchv1.Job {
		return &batchv1.Job{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			Spec: batchv1.JobSpec{
				Parallelism: ptr.To(pods), Completions: ptr.To(pods),
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{hardwareProfileAnnotation: profile}},
					Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{
						Name: "train", Image: "quay.io/example/trainer:1",
						Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("4")}},
					}}},
				},
			},
		}
	}
	// The policy is in force once the API server has loaded it: a dry
	// run is retried until the Job comes back labelled.
	var made *batchv1.Job
	err = poll(ctx, gatekeeperTimeout, func(ctx context.Context) (bool, string, error) {
		made, err = s.client.BatchV1().Jobs(ns).Create(ctx, job("probe", profile, 1), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err != nil {
			return false, err.Error(), nil
		}
		return made.Labels[render.QueueNameLabel] == queue, "labels " + jsonString(made.Labels), nil
	})
	if err != nil {
		t.Fatalf("a Job naming %s by its template's annotation never got the profile's queue: %v", profile, err)
	}

	// data-science's V100 quota is 32: 4 pods of 4 fit.
	gang, err := s.client.BatchV1().Jobs(ns).Create(ctx, job("gang", profile, 4), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("Job gang: %v", err)
	}
	if gang.Labels[render.QueueNameLabel] != queue || gang.Labels[kueuePriorityLabel] != priority || !ptr.Deref(gang.Spec.Suspend, false) {
		t.Fatalf("Job gang as stored: labels %v, suspend %v; want %s=%s and %s=%s on the Job, suspended by Kueue until admitted",
			gang.Labels, ptr.Deref(gang.Spec.Suspend, false), render.QueueNameLabel, queue, kueuePriorityLabel, priority)
	}
	st := &story{s: s, c: c}
	pods := st.waitRunning(t, ns, "job-name=gang", 4)
	st.onType(t, pods, "nvidia-v100-16gb")
	// Kueue's pod integration labels, gates and holds (a finalizer) each
	// pod it queues.
	for _, p := range pods {
		if p.Labels["kueue.x-k8s.io/managed"] != "" || slices.Contains(p.Finalizers, "kueue.x-k8s.io/managed") || len(p.Spec.SchedulingGates) > 0 {
			t.Errorf("pod %s was queued by Kueue's pod integration: labels %v, finalizers %v, gates %v", p.Name, p.Labels, p.Finalizers, p.Spec.SchedulingGates)
		}
	}
	// 16 + 20 > 32: the second Job waits whole.
	over, err := s.client.BatchV1().Jobs(ns).Create(ctx, job("gang-over", profile, 5), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("Job gang-over: %v", err)
	}
	overWL := st.workloadOf(t, ns, over.Name)
	// Kueue tries it and finds no room: it stays suspended, with no pod.
	err = poll(ctx, admitTimeout, func(ctx context.Context) (bool, string, error) {
		live, err := s.get(ctx, overWL)
		if err != nil {
			return false, err.Error(), nil
		}
		overWL = live
		cond := condition(live, "QuotaReserved")
		return cond != nil && cond["status"] == "False" && cond["reason"] == "Pending", "QuotaReserved " + jsonString(cond), nil
	})
	if err != nil {
		t.Errorf("Job gang-over's Workload %s: want it pending for quota: %v", overWL.GetName(), err)
	}
	live, err := s.client.BatchV1().Jobs(ns).Get(ctx, over.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	overPods, err := s.client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "job-name=gang-over"})
	if err != nil {
		t.Fatal(err)
	}
	if !ptr.Deref(live.Spec.Suspend, false) || len(overPods.Items) > 0 {
		t.Errorf("Job gang-over, over the quota: suspend %v, %d pods; want it suspended with none", ptr.Deref(live.Spec.Suspend, false), len(overPods.Items))
	}

	// One Workload per Job, none per pod.
	wls, err := s.dyn.Resource(kueueWorkloads).Namespace(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	byOwner := map[string][]string{}
	for _, wl := range wls.Items {
		for _, o := range wl.GetOwnerReferences() {
			byOwner[o.Kind+"/"+o.Name] = append(byOwner[o.Kind+"/"+o.Name], wl.GetName())
		}
	}
	if len(wls.Items) != 2 || len(byOwner["Job/gang"]) != 1 || len(byOwner["Job/gang-over"]) != 1 {
		t.Errorf("Workloads in %s: %d, by owner %v; want one for each Job and none for a pod", ns, len(wls.Items), byOwner)
	}
	gangWL := st.workloadOf(t, ns, "gang")
	podSets, _, _ := unstructured.NestedSlice(gangWL.Object, "spec", "podSets")
	count := int64(0)
	for _, ps := range podSets {
		n, _, _ := unstructured.NestedInt64(ps.(map[string]any), "count")
		count += n
	}
	cq, _, _ := unstructuredString(gangWL.Object, "status", "admission", "clusterQueue")
	if count != 4 || condition(gangWL, "Admitted")["status"] != "True" {
		t.Errorf("Job gang's Workload %s: %d pods in its pod sets, Admitted %v; want 4, True", gangWL.GetName(), count, condition(gangWL, "Admitted"))
	}

	// A profile data-science may not use.
	_, err = s.client.BatchV1().Jobs(ns).Create(ctx, job("not-entitled", "large-gpu", 1), metav1.CreateOptions{})
	if err == nil || !strings.Contains(err.Error(), `may not use hardware profile "large-gpu"`) {
		t.Errorf("a Job naming large-gpu in %s (team data-science may not use it): want it refused by the entitlement policy, got %v", ns, err)
	}
	if t.Failed() {
		return
	}
	t.Logf("Job gang (4 pods × 4 V100, profile by template annotation only): labelled %s=%s, %s=%s when made; one Workload %s (4 pods) admitted in %s, its 4 pods Running on V100 nodes, none gated or given a Workload of its own",
		render.QueueNameLabel, queue, kueuePriorityLabel, priority, gangWL.GetName(), cq)
	t.Logf("Job gang-over (5 × 4 V100, 16 left of 32): one Workload %s pending, the Job suspended, no pod; Workloads in %s: %d for 2 Jobs of 9 pods", overWL.GetName(), ns, len(wls.Items))
	after := s.webhookCounts(t)
	var report []string
	for _, k := range slices.Sorted(maps.Keys(after)) {
		report = append(report, fmt.Sprintf("%s %.0f", k, after[k]-before[k]))
	}
	how := "as rendered"
	if len(opts) == 0 {
		how = "as the chart installs them by default (" + gangWebhooksEnv + "=chart)"
	}
	t.Logf("from the queues Active to here, Gatekeeper's webhooks %s: %s (API server metrics)", how, strings.Join(report, ", "))
}

// webhookCounts reads the API server's metrics: the requests sent to each
// of Gatekeeper's webhooks ("<webhook> calls"), and those its
// matchConditions kept from it ("<webhook> skipped").
func (s *suite) webhookCounts(t *testing.T) map[string]float64 {
	t.Helper()
	raw, err := s.client.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(t.Context())
	if err != nil {
		t.Fatalf("the API server's metrics: %v", err)
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		var what string
		switch {
		case strings.HasPrefix(line, "apiserver_admission_webhook_admission_duration_seconds_count{"):
			what = "calls"
		case strings.HasPrefix(line, "apiserver_admission_match_condition_exclusions_total{"):
			what = "skipped"
		default:
			continue
		}
		for _, name := range []string{"validation.gatekeeper.sh", "mutation.gatekeeper.sh"} {
			if !strings.Contains(line, `name="`+name+`"`) {
				continue
			}
			v, err := strconv.ParseFloat(line[strings.LastIndex(line, " ")+1:], 64)
			if err != nil {
				t.Fatalf("the API server's metric %q: %v", line, err)
			}
			out[name+" "+what] += v
		}
	}
	for _, name := range []string{"validation.gatekeeper.sh", "mutation.gatekeeper.sh"} {
		for _, what := range []string{"calls", "skipped"} {
			out[name+" "+what] += 0
		}
	}
	return out
}
