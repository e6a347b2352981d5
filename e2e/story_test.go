//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/accelc/accelc/internal/controlplane"
	"github.com/accelc/accelc/internal/testutil"
	"github.com/accelc/accelc/pkg/accelc"
	"github.com/accelc/accelc/pkg/compile"
	"github.com/accelc/accelc/pkg/policytest"
	"github.com/accelc/accelc/pkg/render"
)

const (
	// storyExample is the bundled example the story runs: the README's
	// production cluster, its 29 nodes, teams, quotas and fixtures.
	storyExample = "hetero-prod"
	// runTimeout bounds the wait for a workload's pods to run: Kueue
	// admits, kube-scheduler binds, KWOK starts them.
	runTimeout = 2 * time.Minute
	// legacyDelay keeps the Job that ran before accelc running for the
	// whole story.
	legacyDelay = 2 * time.Hour
)

var (
	kueueWorkloads = schema.GroupVersionResource{Group: "kueue.x-k8s.io", Version: "v1beta2", Resource: "workloads"}
	notebooks      = schema.GroupVersionResource{Group: "kubeflow.org", Version: "v1", Resource: "notebooks"}
)

// TestStory is the user's story in one cluster, first commit to last:
// etcd, kube-apiserver, kube-controller-manager and kube-scheduler, KWOK's
// kubelets on the example's nodes, nfd-master, Gatekeeper, Kueue, and
// Flux's controllers following the registry `accelc push` writes to. An
// admin's Git repository (a copy of the example's CUE module) goes through
// CI (accelc vet, render, test, push, signed) commit by commit; Flux
// applies each artifact; Gatekeeper, Kueue and the controllers act on
// what follows. Each step asserts what the cluster did: objects,
// conditions, the nodes' types.
func TestStory(t *testing.T) {
	st := startWholeCluster(t)
	step := func(name string, f func(t *testing.T)) {
		if !t.Run(name, f) {
			t.FailNow()
		}
	}
	step("1-before-accelc", st.beforeAccelc)
	step("2-commit-dryrun", st.commitDryrun)
	step("2-mig-dry-run", st.migDryrun)
	step("3-commit-warn", st.commitWarn)
	step("3-stages-per-team", st.stagesPerTeam)
	step("3-commit-deny", st.commitDeny)
	step("3-finish-across-deny", st.finishAcrossDeny)
	step("4-odh-workloads", st.odhWorkloads)
	step("4-quota-and-gang", st.quotaAndGang)
	step("4-dra-claim", st.draClaim)
	step("4-retire-profile", st.retireProfile)
	step("5-hostile-workloads", st.hostile)
	step("6-bad-commits", st.badCommits)
	step("7-new-type", st.newType)
	step("after", st.legacyUntouched)
}

// startWholeCluster starts every part of the story's cluster: etcd,
// kube-apiserver, kube-controller-manager, kube-scheduler, Gatekeeper,
// the CRDs the tree uses, nfd-master, KWOK, Flux and a registry, the
// admin's copy of the example, and Kueue configured from it.
func startWholeCluster(t *testing.T) *story {
	t.Helper()
	s := newSuite(t)
	registry := testutil.Registry(t)
	begin := time.Now()
	s.cp = controlplane.Start(t, controlplane.WithScheduler(), controlplane.WithControllerManager())
	s.gk = s.cp.StartGatekeeper(t, controlplane.WithGatekeeperValues(storyGatekeeperValues(t, s)))
	s.connect(t)
	s.ensureNamespaces(t, systemNamespaces...)
	if !t.Run("crds", s.stepCRDs) {
		t.FailNow()
	}
	s.nfd = s.cp.StartNFDMaster(t)
	s.kwok = s.cp.StartKWOK(t)
	fx := s.cp.StartFlux(t)
	st := newStory(t, s, registry)
	st.f.fx = fx
	st.startKueue(t)
	st.registry = registry
	t.Logf("the whole cluster up in %s: etcd, kube-apiserver, kube-controller-manager, kube-scheduler, Gatekeeper, nfd-master, KWOK, Flux, Kueue; registry at %s; the admin's repository at %s",
		time.Since(begin).Round(time.Millisecond), registry, st.repo)
	return st
}

// storyGatekeeperValues are the Gatekeeper installation values the
// story's example renders (docs/scale.md), as a platform team installs
// Gatekeeper for accelc, but for the audit's interval: the story's
// steps wait for the audit's reports, so it runs every
// controlplane.AuditInterval, as the harness's default.
func storyGatekeeperValues(t *testing.T, s *suite) []byte {
	t.Helper()
	dir := s.olderExample(t, storyExample)
	if s.older() {
		// The story's cluster on the older minor runs no catalog service
		// (newStory), so Gatekeeper's mutators label workloads from
		// their queue, and its values send it those workloads: rendered
		// from the same CUE the story commits.
		dir = filepath.Join(s.work, "story-values", storyExample)
		if _, err := os.Stat(dir); err != nil {
			base := filepath.Dir(dir)
			for _, d := range []string{"cue.mod", "fleet", storyExample} {
				if err := os.CopyFS(filepath.Join(base, d), os.DirFS(filepath.Join(filepath.Dir(s.olderExample(t, storyExample)), d))); err != nil {
					t.Fatal(err)
				}
			}
			b, err := os.ReadFile(filepath.Join(dir, "cluster.cue"))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "cluster.cue"), []byte(withoutCatalogService(t, string(b))), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	res, err := accelc.Cluster(t.Context(), s.clusterPath(dir), accelc.Options{Stages: accelc.Rendered})
	if err != nil {
		t.Fatal(err)
	}
	var cm corev1.ConfigMap
	if err := yaml.Unmarshal(res.Tree["mutations/configmap-"+render.GatekeeperValuesName+".yaml"], &cm); err != nil {
		t.Fatal(err)
	}
	var v render.GatekeeperHelmValues
	if err := yaml.UnmarshalStrict([]byte(cm.Data["values.yaml"]), &v); err != nil {
		t.Fatalf("the Gatekeeper values %s renders: %v", storyExample, err)
	}
	v.AuditInterval = int(controlplane.AuditInterval / time.Second)
	b, err := yaml.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// withoutCatalogService is a cluster.cue without its catalogService
// block: a cluster with no catalog service, so without accelc's webhook.
func withoutCatalogService(t *testing.T, cue string) string {
	t.Helper()
	block := regexp.MustCompile(`(?s)\tcatalogService: \{\n.*?\n\t\}\n`)
	if !block.MatchString(cue) {
		t.Fatalf("%s/cluster.cue has no catalogService block to take out", storyExample)
	}
	return block.ReplaceAllString(cue, "")
}

// story is the admin's repository, the CI that publishes it and the
// cluster that follows it.
type story struct {
	s        *suite
	f        *fluxRun
	registry string // host:port of the registry CI pushes to
	repo     string // the CUE module, the admin's Git checkout
	cluster  string // the cluster's folder in it
	devKube  string // devUser's kubeconfig
	c        *clusterUnderTest
	version  int               // the next minor version CI pushes
	legacy   map[string]placed // pods that ran before accelc: name → what they were
	lastGood string            // tag@digest Flux applied last
	before   string            // a plain pod as admitted before accelc (createdShape)
}

type placed struct {
	uid, node string
}

func newStory(t *testing.T, s *suite, registry string) *story {
	t.Helper()
	repo := filepath.Join(s.work, "gitops")
	src := filepath.Join(s.root, "examples", "clusters")
	for _, dir := range []string{"cue.mod", "fleet", storyExample} {
		if err := os.CopyFS(filepath.Join(repo, dir), os.DirFS(filepath.Join(src, dir))); err != nil {
			t.Fatal(err)
		}
	}
	st := &story{s: s, repo: repo, cluster: filepath.Join(repo, storyExample), legacy: map[string]placed{}}
	if s.older() {
		// The admin's cluster runs the older minor: its CUE says so. The
		// example's admission cases hold 1.36's verdicts for objects as
		// written, before ODH's webhook (TestEndToEnd plays them on the
		// older minor as ODH leaves them, internal/odh): the admin's CI
		// here runs accelc test's Rego tests without them.
		if err := os.WriteFile(filepath.Join(st.cluster, "kubernetes.cue"), s.kubernetesVersionCUE(), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Remove(filepath.Join(st.cluster, "admission", "cases.yaml")); err != nil {
			t.Fatal(err)
		}
		// Without the catalog service, so without accelc's webhook
		// (render.ProfileWebhookName): Flux would apply its configuration
		// calling the catalog Service, which no pod here serves (KWOK's
		// pods run nothing, and nothing routes a Service), and keep it so.
		// The story's cluster labels from the queue, as a cluster before
		// 1.36 without the catalog service does; TestEndToEnd plays
		// accelc's webhook on the older minor.
		st.write(t, "cluster.cue", withoutCatalogService(t, st.read(t, "cluster.cue")))
	}
	st.f = &fluxRun{s: s, repo: "oci://" + registry + "/accelc/" + storyExample, name: storyExample}
	st.f.signingKey(t)
	// Delivery to the test's registry, verified with the cluster's key
	// instead of CI's keyless identity.
	cue := st.read(t, "cluster.cue")
	re := regexp.MustCompile(`(?s)\tdelivery: \{\n.*?\n\t\}\n`)
	if !re.MatchString(cue) {
		t.Fatalf("%s/cluster.cue has no delivery block to point at the test's registry", storyExample)
	}
	cue = re.ReplaceAllString(cue, fmt.Sprintf("\tdelivery: {\n\t\turl: %q\n\t\tinsecure: true\n\t\tref: semver: \">=1.0.0\"\n\t\tinterval: \"1m\"\n\t\tverify: secretRef: \"cosign-pub\"\n\t}\n", st.f.repo))
	st.write(t, "cluster.cue", cue)
	// A profile that hands out A100s by Dynamic Resource Allocation.
	st.write(t, "dra.cue", `package cluster

cluster: dra: {}

profiles: "a100-claim": {
	displayName: "One A100 (claimed)"
	description: "One NVIDIA A100 80GB, claimed through Dynamic Resource Allocation."
	acceleratorTypes: ["nvidia-a100-80gb"]
	gpu: {min: 1, default: 1, max: 1}
	tolerations: [{key: "nvidia.com/gpu", operator: "Exists", effect: "NoSchedule"}]
	dra: {}
}
`)
	// Bound to its rules by devClient, at the first commit.
	st.devKube = s.cp.UserKubeconfig(t, devUser)
	st.handOver(t)
	return st
}

func (st *story) read(t *testing.T, file string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(st.cluster, file))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func (st *story) write(t *testing.T, file, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(st.cluster, file), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// setEnforcement is the commit that moves the cluster to action.
func (st *story) setEnforcement(t *testing.T, action string) {
	t.Helper()
	cue := st.read(t, "cluster.cue")
	re := regexp.MustCompile(`(?m)^\tenforcement: "[a-z]+"$`)
	if !re.MatchString(cue) {
		t.Fatalf("%s/cluster.cue sets no enforcement", storyExample)
	}
	st.write(t, "cluster.cue", re.ReplaceAllString(cue, "\tenforcement: \""+action+"\""))
}

// ci is what CI runs on a commit: accelc vet, render, test, then push,
// signed, as the next version; any step failing stops it. It returns the
// rendered tree and the tag and digest pushed.
func (st *story) ci(t *testing.T) (out, tag, digest string, err error) {
	t.Helper()
	s := st.s
	st.version++
	name := fmt.Sprintf("v%d", st.version)
	if stdout, stderr, err := run(t.Context(), s.root, s.accelc, "vet", st.cluster); err != nil {
		return "", "", "", fmt.Errorf("accelc vet (exit %d): %s%s", exitCode(err), stdout, stderr)
	}
	out = s.render(t, st.cluster, name)
	if stdout, stderr, err := run(t.Context(), s.root, s.accelc, "test", st.cluster); err != nil {
		return "", "", "", fmt.Errorf("accelc test (exit %d): %s%s", exitCode(err), stdout, stderr)
	}
	tag = fmt.Sprintf("1.%d.0", st.version-1)
	digest = st.f.push(t, out, tag)
	return out, tag, digest, nil
}

// commit runs CI on the repository and waits until Flux has applied
// what it pushed and Gatekeeper has taken it.
func (st *story) commit(t *testing.T, what string) string {
	t.Helper()
	s := st.s
	st.git(t, "add", "-A")
	st.git(t, "commit", "-q", "--allow-empty", "-m", what)
	out, tag, digest, err := st.ci(t)
	if err != nil {
		t.Fatalf("CI on %q: %v", what, err)
	}
	if st.c == nil {
		// The first artifact: flux/ is applied by hand, as the admin
		// bootstraps, after the namespaces the tree writes into but
		// does not make.
		s.ensureNamespaces(t, foreignNamespaces(t, out)...)
		s.mustKubectl(t, "apply", "--server-side", "--field-manager=accelc-e2e", "-k", filepath.Join(out, "flux"))
	} else {
		st.f.reconcile(t)
	}
	st.f.rollout(t, tag, digest)
	st.lastGood = tag + "@" + digest
	c := &clusterUnderTest{example: st.cluster, out: out}
	c.objs = readTree(t, out)
	c.applied = appliedFolders(t, out)
	c.read(t)
	if st.c == nil {
		s.stampNFD(t, c)
		c.dev, c.devDyn = s.devClient(t)
	} else {
		c.nodeTypes, c.dev, c.devDyn = st.c.nodeTypes, st.c.dev, st.c.devDyn
	}
	s.waitGatekeeper(t, c)
	c.ready = true
	st.c = c
	t.Logf("%s: CI (vet, render, test, push) published %s@%s; Flux applied it; Gatekeeper took it", what, tag, digest)
	return out
}

// startKueue starts Kueue as the platform installed it: its Configuration
// with the fragment accelc renders merged in (the namespaces and kinds it
// manages) and all-or-nothing admission of a workload's pods
// (waitForPodsReady), before accelc's first commit.
func (st *story) startKueue(t *testing.T) {
	t.Helper()
	fragment, namespaces := kueueConfig(t, readTree(t, st.s.render(t, st.cluster, "kueue-config")))
	fragment += "waitForPodsReady:\n  timeout: 5m\n"
	kq := st.s.cp.StartKueue(t, controlplane.KueueOptions{Namespaces: namespaces, Fragment: []byte(fragment)})
	t.Logf("Kueue %s with accelc's fragment and waitForPodsReady; its log: %s", controlplane.KueueVersion, kq.LogPath())
}

// beforeAccelc: the nodes join, KWOK runs them, and the teams' workloads
// from before accelc run: a pod, a Deployment of two, a Job.
func (st *story) beforeAccelc(t *testing.T) {
	s := st.s
	nodes := s.createNodes(t, filepath.Join(st.cluster, "inventory.json"), nil)
	st.waitNodesReady(t, nodes)
	s.ensureNamespaces(t, "ml-research", "serving-prod", "ds-notebooks")
	ctx := t.Context()
	gpuTol := []corev1.Toleration{{Key: "nvidia.com/gpu", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}
	gpu := func(n string) corev1.PodSpec {
		return corev1.PodSpec{Tolerations: gpuTol, Containers: []corev1.Container{{
			Name: "main", Image: "registry.example/legacy:1",
			Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{"nvidia.com/gpu": resource.MustParse(n)}},
		}}}
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "legacy-pod", Labels: map[string]string{"app": "legacy"}}, Spec: gpu("1")}
	if _, err := s.client.CoreV1().Pods("ml-research").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	labels := map[string]string{"app": "legacy-serve"}
	if _, err := s.client.AppsV1().Deployments("serving-prod").Create(ctx, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "legacy-serve"},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](2), Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: gpu("1")}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	jobSpec := gpu("2")
	jobSpec.RestartPolicy = corev1.RestartPolicyNever
	if _, err := s.client.BatchV1().Jobs("ml-research").Create(ctx, &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "legacy-train"},
		Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "legacy-train"}, Annotations: controlplane.PodCompleteAfter(legacyDelay)},
			Spec:       jobSpec,
		}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	st.startFinishing(t)
	for _, w := range []struct{ ns, selector string }{{"ml-research", "app=legacy"}, {"serving-prod", "app=legacy-serve"}, {"ml-research", "app=legacy-train"}} {
		for _, p := range st.waitRunning(t, w.ns, w.selector, -1) {
			st.legacy[p.Namespace+"/"+p.Name] = placed{uid: string(p.UID), node: p.Spec.NodeName}
		}
	}
	if len(st.legacy) != 4 {
		t.Fatalf("want 4 pods from before accelc running, have %d: %v", len(st.legacy), st.legacy)
	}
	// A pod as a user writes it before accelc, as the API server stores
	// it: what a pod under dryrun must still be.
	st.before = st.createdShape(t, s.cp.Kubeconfig(), "shape", "ml-research")
	st.deletePod(t, "ml-research", "shape")
	t.Logf("before accelc: %d nodes Ready under KWOK; a pod, a Deployment's 2 pods and a Job's pod Running: %v", len(nodes), st.legacy)
}

// waitNodesReady waits until KWOK has made each Ready node of the
// snapshot Ready: a minute, and a second more for every ten nodes (a
// thousand nodes' kubelets start on two cores).
func (st *story) waitNodesReady(t testing.TB, names []string) {
	t.Helper()
	s := st.s
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute+time.Duration(len(names)/10)*time.Second)
	defer cancel()
	var err error
	for {
		// A list every two seconds: at a thousand nodes each is megabytes.
		var list *corev1.NodeList
		list, err = s.client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err == nil {
			var notReady []string
			for i := range list.Items {
				node := &list.Items[i]
				if want[node.Name] && node.Annotations[controlplane.KWOKNodeAnnotation] == "fake" && !controlplane.NodeReady(node) {
					notReady = append(notReady, node.Name)
				}
			}
			if len(notReady) == 0 {
				return
			}
			err = fmt.Errorf("%d not Ready yet: %v", len(notReady), notReady[:min(len(notReady), 10)])
		}
		select {
		case <-ctx.Done():
		case <-time.After(2 * time.Second):
			continue
		}
		break
	}
	if err != nil {
		t.Fatalf("KWOK did not make the nodes Ready: %v\n%s", err, s.kwok.Tail())
	}
}

// waitRunning waits until want pods (any number, at least one, for -1)
// match the selector in ns and all are Running, and returns them.
func (st *story) waitRunning(t *testing.T, ns, selector string, want int) []corev1.Pod {
	t.Helper()
	var pods []corev1.Pod
	err := poll(t.Context(), runTimeout, func(ctx context.Context) (bool, string, error) {
		list, err := st.s.client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: selector})
		if err != nil {
			return false, err.Error(), nil
		}
		pods = list.Items
		if len(pods) == 0 || want >= 0 && len(pods) != want {
			return false, fmt.Sprintf("%d pods, want %d", len(pods), want), nil
		}
		for _, p := range pods {
			if p.Status.Phase != corev1.PodRunning {
				return false, fmt.Sprintf("pod %s: %s, node %q, gates %v, %s", p.Name, p.Status.Phase, p.Spec.NodeName, p.Spec.SchedulingGates, scheduledCondition(&p)), nil
			}
		}
		return true, "", nil
	})
	if err != nil {
		t.Fatalf("pods %s in %s not Running: %v", selector, ns, err)
	}
	return pods
}

// legacyUntouched: the pods from before accelc still run, the same pods on
// the same nodes.
func (st *story) legacyUntouched(t *testing.T) {
	ctx := t.Context()
	for key, was := range st.legacy {
		ns, name, _ := strings.Cut(key, "/")
		p, err := st.s.client.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Errorf("pod %s from before accelc: %v", key, err)
			continue
		}
		if string(p.UID) != was.uid || p.Spec.NodeName != was.node || p.Status.Phase != corev1.PodRunning {
			t.Errorf("pod %s from before accelc changed: uid %s node %s phase %s, was uid %s node %s Running", key, p.UID, p.Spec.NodeName, p.Status.Phase, was.uid, was.node)
		}
	}
	if !t.Failed() {
		t.Logf("the %d pods from before accelc still Running, the same pods on the same nodes", len(st.legacy))
	}
}

// commitDryrun: commit 1, enforcement dryrun. accelc audit, run before
// the commit, predicts the workloads Gatekeeper's audit lists after it;
// nothing running changes; a new pod written as before is admitted and
// stored exactly as it was before accelc: no mutation, no queue.
func (st *story) commitDryrun(t *testing.T) {
	st.setEnforcement(t, "dryrun")
	_, predicted := st.auditPrediction(t)
	if len(predicted) == 0 {
		t.Fatal("accelc audit predicts an empty audit, with pods from before accelc running without profiles")
	}
	st.commit(t, "commit 1 (enforcement dryrun)")
	st.constraintsAt(t, "dryrun")
	st.status(t, map[string]string{"accelc": "dryrun"})
	st.legacyUntouched(t)
	if got := st.createdShape(t, st.devKube, "shape", "ml-research"); got != st.before {
		t.Fatalf("dryrun changed the pod: as stored before accelc\n%s\nand under dryrun\n%s", st.before, got)
	}
	t.Logf("dryrun: a new pod written as before is admitted and stored byte for byte as before accelc (labels, annotations, spec)")
	st.deletePod(t, "ml-research", "shape")
	st.waitAudited(t, predicted)
}

// constraintsAt checks that every constraint in the cluster has the action.
func (st *story) constraintsAt(t *testing.T, action string) {
	t.Helper()
	n := 0
	for _, r := range st.c.objs {
		if r.group() != "constraints.gatekeeper.sh" {
			continue
		}
		live, err := st.s.get(t.Context(), r.obj)
		if err != nil {
			t.Fatalf("%s: %v", r, err)
		}
		if got, _, _ := unstructured.NestedString(live.Object, "spec", "enforcementAction"); got != action {
			t.Fatalf("%s: enforcementAction %q in the cluster, want %q", r, got, action)
		}
		n++
	}
	t.Logf("%d constraints at enforcementAction %s in the cluster", n, action)
}

// kubectlPod creates, with kubectl as devUser, a pod written as before
// accelc (a GPU, no profile) in ml-research; it returns kubectl's output.
func (st *story) kubectlPod(t *testing.T, name string, wantOK bool) (string, string) {
	t.Helper()
	file := filepath.Join(st.s.work, name+".yaml")
	pod := fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: %s
  namespace: ml-research
spec:
  tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
  containers:
  - name: main
    image: registry.example/legacy:1
    resources: {limits: {nvidia.com/gpu: 1}}
`, name)
	if err := os.WriteFile(file, []byte(pod), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, err := st.s.kubectlAs(t.Context(), st.devKube, "create", "-f", file)
	if (err == nil) != wantOK {
		t.Fatalf("kubectl create of %s: %v (want admitted: %v)\n%s%s", name, err, wantOK, stdout, stderr)
	}
	return stdout, stderr
}

func (st *story) deletePod(t *testing.T, ns, name string) {
	t.Helper()
	if err := st.s.client.CoreV1().Pods(ns).Delete(t.Context(), name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil && !apierrors.IsNotFound(err) {
		t.Errorf("deleting %s/%s: %v", ns, name, err)
	}
}

// commitWarn: commit 2, enforcement warn. The same new pod is admitted,
// and kubectl prints Gatekeeper's warning.
func (st *story) commitWarn(t *testing.T) {
	st.setEnforcement(t, "warn")
	st.commit(t, "commit 2 (enforcement warn)")
	st.constraintsAt(t, "warn")
	var stderr string
	err := poll(t.Context(), gatekeeperTimeout, func(ctx context.Context) (bool, string, error) {
		st.deletePod(t, "ml-research", "legacy-new-warn")
		_, stderr = st.kubectlPod(t, "legacy-new-warn", true)
		return strings.Contains(stderr, "Warning:"), "kubectl printed no warning: " + stderr, nil
	})
	if err != nil {
		t.Fatalf("warn: %v", err)
	}
	t.Logf("warn: the pod is admitted and kubectl prints: %s", firstLine(stderr))
	st.deletePod(t, "ml-research", "legacy-new-warn")
	st.legacyUntouched(t)
}

// commitDeny: commit 3, enforcement deny. The same new pod is refused;
// the running ones are untouched.
func (st *story) commitDeny(t *testing.T) {
	st.setEnforcement(t, "deny")
	st.commit(t, "commit 3 (enforcement deny)")
	st.constraintsAt(t, "deny")
	var stderr string
	err := poll(t.Context(), gatekeeperTimeout, func(ctx context.Context) (bool, string, error) {
		_, errOut, err := st.s.kubectlAs(ctx, st.devKube, "create", "-f", filepath.Join(st.s.work, "legacy-new-warn.yaml"))
		stderr = errOut
		if err == nil {
			st.deletePod(t, "ml-research", "legacy-new-warn")
			return false, "admitted", nil
		}
		return isAccelcDenial(errOut), errOut, nil
	})
	if err != nil {
		t.Fatalf("deny: %v", err)
	}
	t.Logf("deny: kubectl is refused: %s", firstLine(stderr))
	st.legacyUntouched(t)
}

// fixture reads one of the example's admission fixtures.
func (st *story) fixture(t *testing.T, file string) *unstructured.Unstructured {
	t.Helper()
	objs, err := controlplane.ReadObjects(filepath.Join(st.cluster, "admission", file))
	if err != nil || len(objs) != 1 {
		t.Fatalf("%s: %v", file, err)
	}
	return objs[0]
}

// onType checks that each pod runs on a node of one of the types.
func (st *story) onType(t *testing.T, pods []corev1.Pod, allowed ...string) {
	t.Helper()
	for _, p := range pods {
		typ := st.c.nodeTypes[p.Spec.NodeName]
		if !slices.Contains(allowed, typ) {
			t.Errorf("pod %s/%s runs on %s, of type %q; its profile allows %v", p.Namespace, p.Name, p.Spec.NodeName, typ, allowed)
		}
	}
}

// odhWorkloads: workloads as Open Data Hub writes them, naming their
// profile only by its annotation, admitted under deny, queued by Kueue,
// bound to their profile's types and Running.
func (st *story) odhWorkloads(t *testing.T) {
	s, c, ctx := st.s, st.c, t.Context()
	// A workbench: the Notebook, then the StatefulSet the notebook
	// controller makes of it (the Notebook's labels, as stored, on its
	// pod template; the template's spec).
	nb := st.fixture(t, "pods/notebook-odh.yaml")
	if err := s.createForReal(ctx, c, nb); err != nil {
		t.Fatalf("the ODH Notebook under deny: %v", err)
	}
	stored, err := s.dyn.Resource(notebooks).Namespace(nb.GetNamespace()).Get(ctx, nb.GetName(), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var spec corev1.PodSpec
	tmpl, _, _ := unstructured.NestedMap(stored.Object, "spec", "template", "spec")
	if err := convert(tmpl, &spec); err != nil {
		t.Fatal(err)
	}
	labels := map[string]string{"statefulset": nb.GetName(), "notebook-name": nb.GetName()}
	for k, v := range stored.GetLabels() {
		labels[k] = v
	}
	sts := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: nb.GetName(), Namespace: nb.GetNamespace()},
		Spec: appsv1.StatefulSetSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"statefulset": nb.GetName()}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: spec},
		},
	}
	if _, err := s.client.AppsV1().StatefulSets(nb.GetNamespace()).Create(ctx, sts, metav1.CreateOptions{}); err != nil {
		t.Fatalf("the Notebook's StatefulSet under deny: %v", err)
	}
	pods := st.waitRunning(t, nb.GetNamespace(), "statefulset="+nb.GetName(), 1)
	st.onType(t, pods, "nvidia-v100-16gb")
	t.Logf("Notebook %s (profile by annotation only, labelled %v as stored): its StatefulSet's pod %s Running on %s (%s)", nb.GetName(), stored.GetLabels(), pods[0].Name, pods[0].Spec.NodeName, c.nodeTypes[pods[0].Spec.NodeName])

	// A KServe model server in raw deployment mode.
	dep := st.fixture(t, "pods/kserve-deployment-odh.yaml")
	if err := s.createForReal(ctx, c, dep); err != nil {
		t.Fatalf("the KServe-shaped Deployment under deny: %v", err)
	}
	pods = st.waitRunning(t, dep.GetNamespace(), "app=isvc.llama-predictor", 1)
	st.onType(t, pods, "nvidia-a100-80gb")
	t.Logf("KServe Deployment %s: pod %s Running on %s (%s), labels %v", dep.GetName(), pods[0].Name, pods[0].Spec.NodeName, c.nodeTypes[pods[0].Spec.NodeName], pods[0].Labels)
}

// quotaAndGang: a batch Job of a queued profile is admitted by Kueue in
// the team's quota as one gang (waitForPodsReady: all its pods Ready); a
// second beyond the quota waits, and is admitted when the first finishes
// and gives its quota back.
func (st *story) quotaAndGang(t *testing.T) {
	s, c, ctx := st.s, st.c, t.Context()
	// data-science's V100 quota is 32; its notebook holds 1.
	gang := st.fixture(t, "pods/job-odh.yaml")
	gang.SetName("train-gang")
	must(t, unstructured.SetNestedField(gang.Object, int64(7), "spec", "parallelism"))
	must(t, unstructured.SetNestedField(gang.Object, int64(7), "spec", "completions"))
	annotations := map[string]any{hardwareProfileAnnotation: "standard-gpu"}
	for k, v := range controlplane.PodCompleteAfter(25 * time.Second) {
		annotations[k] = v
	}
	must(t, unstructured.SetNestedField(gang.Object, annotations, "spec", "template", "metadata", "annotations"))
	setGPUs(t, gang, "4")
	if err := s.createForReal(ctx, c, gang); err != nil {
		t.Fatalf("Job %s under deny: %v", gang.GetName(), err)
	}
	pods := st.waitRunning(t, gang.GetNamespace(), "job-name=train-gang", 7)
	st.onType(t, pods, "nvidia-v100-16gb")
	wl := st.workloadOf(t, gang.GetNamespace(), "train-gang")
	err := poll(ctx, runTimeout, func(ctx context.Context) (bool, string, error) {
		live, err := s.dyn.Resource(kueueWorkloads).Namespace(wl.GetNamespace()).Get(ctx, wl.GetName(), metav1.GetOptions{})
		if err != nil {
			return false, err.Error(), nil
		}
		wl = live
		cond := condition(wl, "PodsReady")
		return cond != nil && cond["status"] == "True", "PodsReady " + jsonString(cond), nil
	})
	if err != nil {
		t.Errorf("Workload %s: want PodsReady True once all 7 pods run: %v", wl.GetName(), err)
	}
	cq, _, _ := unstructuredString(wl.Object, "status", "admission", "clusterQueue")
	t.Logf("Job train-gang (7 pods × 4 V100): admitted as one Workload %s in %s, all 7 Running on V100 nodes, PodsReady %s",
		wl.GetName(), cq, condition(wl, "PodsReady")["status"])

	// 28 + 1 of 32: a second Job of 4 GPUs is over the quota.
	over := st.fixture(t, "pods/job-odh.yaml")
	over.SetName("train-over")
	setGPUs(t, over, "4")
	if err := s.createForReal(ctx, c, over); err != nil {
		t.Fatalf("Job %s under deny: %v", over.GetName(), err)
	}
	wl2 := st.workloadOf(t, over.GetNamespace(), "train-over")
	if cond := condition(wl2, "QuotaReserved"); cond != nil && cond["status"] == "True" {
		t.Fatalf("Job train-over was admitted over the quota: %s", jsonString(wl2.Object["status"]))
	}
	job, err2 := s.client.BatchV1().Jobs(over.GetNamespace()).Get(ctx, "train-over", metav1.GetOptions{})
	if err2 != nil {
		t.Fatal(err2)
	}
	if job.Spec.Suspend == nil || !*job.Spec.Suspend {
		t.Fatalf("Job train-over is not suspended while over the quota")
	}
	t.Logf("Job train-over (4 V100) waits, suspended: %s", jsonString(condition(wl2, "QuotaReserved")))
	// The gang finishes (KWOK ends its pods), the quota comes back.
	err = poll(ctx, runTimeout, func(ctx context.Context) (bool, string, error) {
		j, err := s.client.BatchV1().Jobs(gang.GetNamespace()).Get(ctx, "train-gang", metav1.GetOptions{})
		if err != nil {
			return false, err.Error(), nil
		}
		return j.Status.Succeeded == 7, fmt.Sprintf("train-gang: %d succeeded", j.Status.Succeeded), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	pods = st.waitRunning(t, over.GetNamespace(), "job-name=train-over", 1)
	st.onType(t, pods, "nvidia-v100-16gb")
	t.Logf("train-gang succeeded; train-over admitted and Running on %s", pods[0].Spec.NodeName)
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// setGPUs sets the GPU limit of the workload's first container.
func setGPUs(t *testing.T, obj *unstructured.Unstructured, n string) {
	t.Helper()
	containers, _, _ := unstructured.NestedSlice(obj.Object, "spec", "template", "spec", "containers")
	must(t, unstructured.SetNestedField(containers[0].(map[string]any), n, "resources", "limits", "nvidia.com/gpu"))
	must(t, unstructured.SetNestedSlice(obj.Object, containers, "spec", "template", "spec", "containers"))
}

// workloadOf waits for Kueue's Workload of the Job.
func (st *story) workloadOf(t *testing.T, ns, job string) *unstructured.Unstructured {
	t.Helper()
	var wl *unstructured.Unstructured
	err := poll(t.Context(), runTimeout, func(ctx context.Context) (bool, string, error) {
		list, err := st.s.dyn.Resource(kueueWorkloads).Namespace(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err.Error(), nil
		}
		for i := range list.Items {
			for _, o := range list.Items[i].GetOwnerReferences() {
				if o.Kind == "Job" && o.Name == job {
					wl = &list.Items[i]
					return true, "", nil
				}
			}
		}
		return false, "no Workload yet", nil
	})
	if err != nil {
		t.Fatalf("Kueue made no Workload for Job %s/%s: %v", ns, job, err)
	}
	return wl
}

// draClaim: an Open Data Hub workbench on the DRA profile, written as ODH
// writes it from the HardwareProfile: the Notebook names the profile by
// annotation and joins the profile's LocalQueue (its scheduling.kueue),
// and its pod template claims a device with the ResourceClaimTemplate
// the profile's spec.dra.resourceClaimTemplateName names. The notebook
// controller's StatefulSet makes its pod; kube-controller-manager makes
// the pod's claim from the template in the pod's namespace; Kueue admits
// the pod, charging the claimed A100 to the team's quota of A100s (the
// DeviceClass mapped to nvidia.com/gpu in its Configuration); the
// scheduler allocates an A100 the driver published and binds the pod.
func (st *story) draClaim(t *testing.T) {
	s, c, ctx := st.s, st.c, t.Context()
	var node string
	for n, typ := range c.nodeTypes {
		if typ == "nvidia-a100-80gb" && (node == "" || n < node) {
			node = n
		}
	}
	slice := &resourcev1.ResourceSlice{
		ObjectMeta: metav1.ObjectMeta{Name: node + "-" + strings.ReplaceAll(draDriver, ".", "-")},
		Spec: resourcev1.ResourceSliceSpec{
			Driver: draDriver, NodeName: ptr.To(node),
			Pool:    resourcev1.ResourcePool{Name: node, Generation: 1, ResourceSliceCount: 1},
			Devices: []resourcev1.Device{a100("gpu-0"), a100("gpu-1")},
		},
	}
	if _, err := s.client.ResourceV1().ResourceSlices().Create(ctx, slice, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// What ODH reads from the rendered HardwareProfile.
	hwp := st.renderedProfile(t, "a100-claim")
	template, _, _ := unstructured.NestedString(hwp.Object, "spec", "dra", "resourceClaimTemplateName")
	queue, _, _ := unstructured.NestedString(hwp.Object, "spec", "scheduling", "kueue", "localQueueName")
	if template == "" || queue == "" {
		t.Fatalf("HardwareProfile a100-claim: want spec.dra.resourceClaimTemplateName and spec.scheduling.kueue.localQueueName, have %s", jsonString(hwp.Object["spec"]))
	}
	const ns, name = "ml-research", "claimed-workbench"
	nb := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kubeflow.org/v1", "kind": "Notebook",
		"metadata": map[string]any{"name": name, "namespace": ns,
			"labels":      map[string]any{"app": name, "opendatahub.io/dashboard": "true", render.QueueNameLabel: queue},
			"annotations": map[string]any{hardwareProfileAnnotation: "a100-claim", hardwareProfileNSAnnotation: "opendatahub"}},
		"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
			"resourceClaims": []any{map[string]any{"name": "accelerator", "resourceClaimTemplateName": template}},
			"containers": []any{map[string]any{"name": name, "image": "quay.io/example/notebook:1",
				"resources": map[string]any{"requests": map[string]any{"cpu": "1"}, "claims": []any{map[string]any{"name": "accelerator"}}}}},
		}}},
	}}
	if err := s.createForReal(ctx, c, nb); err != nil {
		t.Fatalf("the ODH Notebook of the DRA profile under deny: %v", err)
	}
	stored, err := s.dyn.Resource(notebooks).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var spec corev1.PodSpec
	tmpl, _, _ := unstructured.NestedMap(stored.Object, "spec", "template", "spec")
	if err := convert(tmpl, &spec); err != nil {
		t.Fatal(err)
	}
	labels := map[string]string{"statefulset": name, "notebook-name": name}
	maps.Copy(labels, stored.GetLabels())
	sts := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: appsv1.StatefulSetSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"statefulset": name}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: spec},
		},
	}
	if _, err := s.client.AppsV1().StatefulSets(ns).Create(ctx, sts, metav1.CreateOptions{}); err != nil {
		t.Fatalf("the Notebook's StatefulSet under deny: %v", err)
	}
	pods := st.waitRunning(t, ns, "statefulset="+name, 1)
	pod := pods[0]
	if pod.Spec.NodeName != node {
		t.Errorf("the workbench runs on %s, want %s, the only node whose driver published A100s", pod.Spec.NodeName, node)
	}
	// The pod's claim, made from the template in its namespace.
	claimName := ""
	for _, rcs := range pod.Status.ResourceClaimStatuses {
		if rcs.Name == "accelerator" && rcs.ResourceClaimName != nil {
			claimName = *rcs.ResourceClaimName
		}
	}
	if claimName == "" {
		t.Fatalf("pod %s has no claim made for its resourceClaims entry: %+v", pod.Name, pod.Status.ResourceClaimStatuses)
	}
	claim, err := s.client.ResourceV1().ResourceClaims(ns).Get(ctx, claimName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := claim.Annotations["resource.kubernetes.io/pod-claim-name"]; got != "accelerator" {
		t.Errorf("claim %s: pod-claim-name %q, want accelerator", claimName, got)
	}
	if got := claim.Labels[strings.TrimSuffix(c.typeLabel, "/type")+"/profile"]; got != "a100-claim" {
		t.Errorf("claim %s carries profile %q, want a100-claim (the template's label): it was not made from the profile's template", claimName, got)
	}
	if claim.Status.Allocation == nil || len(claim.Status.Allocation.Devices.Results) != 1 {
		t.Fatalf("claim %s is not allocated one device: %+v", claimName, claim.Status.Allocation)
	}
	res := claim.Status.Allocation.Devices.Results[0]
	if res.Pool != node || !strings.HasPrefix(res.Device, "gpu-") {
		t.Errorf("claim %s got %s/%s, want a GPU of %s's slice", claimName, res.Pool, res.Device, node)
	}
	if class := claim.Spec.Devices.Requests[0].Exactly.DeviceClassName; class != "nvidia-a100-80gb" {
		t.Errorf("claim %s asks for DeviceClass %s, want nvidia-a100-80gb", claimName, class)
	}
	// Kueue admitted the pod in the team's ClusterQueue for the profile
	// and charged the claimed device to the team's A100s.
	var wl *unstructured.Unstructured
	err = poll(ctx, runTimeout, func(ctx context.Context) (bool, string, error) {
		list, err := s.dyn.Resource(kueueWorkloads).Namespace(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err.Error(), nil
		}
		for i := range list.Items {
			for _, o := range list.Items[i].GetOwnerReferences() {
				if o.Kind == "Pod" && o.Name == pod.Name {
					wl = &list.Items[i]
				}
			}
		}
		if wl == nil {
			return false, "no Workload owned by pod " + pod.Name, nil
		}
		cond := condition(wl, "Admitted")
		return cond != nil && cond["status"] == "True", "Admitted " + jsonString(cond), nil
	})
	if err != nil {
		t.Fatalf("Kueue did not admit the workbench's pod: %v", err)
	}
	cq, _, _ := unstructuredString(wl.Object, "status", "admission", "clusterQueue")
	assignments, _, _ := unstructured.NestedSlice(wl.Object, "status", "admission", "podSetAssignments")
	if cq != "ml-research.a100-claim" || len(assignments) != 1 {
		t.Fatalf("Workload %s admitted to %q with %d pod sets, want ml-research.a100-claim with 1: %s", wl.GetName(), cq, len(assignments), jsonString(wl.Object["status"]))
	}
	flavor, _, _ := unstructuredString(assignments[0].(map[string]any), "flavors", "nvidia.com/gpu")
	usage, _, _ := unstructuredString(assignments[0].(map[string]any), "resourceUsage", "nvidia.com/gpu")
	if flavor != "nvidia-a100-80gb" || usage != "1" {
		t.Errorf("Workload %s charges nvidia.com/gpu %q in flavor %q, want 1 in nvidia-a100-80gb (the claimed A100): %s", wl.GetName(), usage, flavor, jsonString(assignments[0]))
	}
	// The namespace's ResourceQuota on claims counts it too: the cap on
	// claims Kueue does not see (a ResourceClaim a pod names directly).
	used := ""
	err = poll(ctx, runTimeout, func(ctx context.Context) (bool, string, error) {
		q, err := s.client.CoreV1().ResourceQuotas(ns).Get(ctx, "accelc-dra-devices", metav1.GetOptions{})
		if err != nil {
			return false, err.Error(), nil
		}
		used = quantities(q.Status.Used)
		n := q.Status.Used["nvidia-a100-80gb.deviceclass.resource.k8s.io/devices"]
		return n.Value() == 1, "used " + used + " of " + quantities(q.Status.Hard), nil
	})
	if err != nil {
		t.Errorf("ResourceQuota %s/accelc-dra-devices does not count the claim: %v", ns, err)
	}
	t.Logf("Notebook %s (profile a100-claim by annotation, queue %s, claim from template %s): pod %s Running on %s; claim %s allocated %s/%s; Kueue Workload %s admitted in %s, charged nvidia.com/gpu %s in flavor %s; the namespace's claim quota used: %s",
		name, queue, template, pod.Name, node, claimName, res.Pool, res.Device, wl.GetName(), cq, usage, flavor, used)
}

// renderedProfile is the HardwareProfile the last CI run rendered.
func (st *story) renderedProfile(t *testing.T, name string) *unstructured.Unstructured {
	t.Helper()
	obj, err := st.s.dyn.Resource(hardwareProfile).Namespace("opendatahub").Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("HardwareProfile opendatahub/%s as Flux applied it: %v", name, err)
	}
	return obj
}

// hostile: the example's fixtures that must be denied, created for real
// as the team's member: each is refused by Gatekeeper with its message
// (a workload at the workload, where Gatekeeper expands its kind or the
// policy reads its templates), and nothing of it exists.
func (st *story) hostile(t *testing.T) {
	s, c, ctx := st.s, st.c, t.Context()
	cases, err := policytest.ReadCases(st.cluster)
	if err != nil {
		t.Fatal(err)
	}
	predict := s.predictor(t, c, []string{"ml-research", "ml-research-dev", "serving-prod", "serving-staging", "ds-notebooks", metav1.NamespaceDefault})
	denied := 0
	kinds := map[string]int{}
	for _, tc := range cases.Cases {
		if len(tc.Deny) == 0 || tc.Operation == "UPDATE" {
			continue
		}
		obj := st.fixture(t, tc.Object)
		if why := c.unreachable(s, obj, tc, predict); why != "" {
			t.Logf("case %-32s skipped: %s", tc.Name, why)
			continue
		}
		if obj.GetNamespace() == "" {
			obj.SetNamespace(metav1.NamespaceDefault)
		}
		s.ensureNamespaces(t, obj.GetNamespace())
		s.ensureRuntimeClass(t, obj)
		re, err := regexp.Compile(tc.Message)
		if err != nil {
			t.Fatal(err)
		}
		err = s.createAs(ctx, c, obj, false)
		switch {
		case err == nil:
			t.Errorf("case %s: %s %s/%s was admitted under deny", tc.Name, obj.GetKind(), obj.GetNamespace(), obj.GetName())
			continue
		case invalidEphemeral(obj, err):
			t.Logf("case %-32s refused by the API server before admission", tc.Name)
			continue
		case strings.Contains(err.Error(), "cannot be set until all schedulingGates have been cleared"):
			// The mutation gave the pod its profile's queue, Kueue's
			// webhook gated it, and the API server's validation, which
			// runs before the validating webhooks, refuses a gated pod
			// that names its node: refused before Gatekeeper judges it.
			t.Logf("case %-32s refused by the API server: queued by the mutation, gated by Kueue, and a gated pod may not name a node", tc.Name)
			continue
		case !isAccelcDenial(err.Error()) || !re.MatchString(err.Error()):
			t.Errorf("case %s: refused, but not by Gatekeeper with a message matching %q: %v", tc.Name, tc.Message, err)
			continue
		}
		if _, gerr := s.get(ctx, obj); !apierrors.IsNotFound(gerr) {
			t.Errorf("case %s: %s %s is in the cluster after its denial (%v)", tc.Name, obj.GetKind(), obj.GetName(), gerr)
		}
		denied++
		kinds[obj.GetKind()]++
		msg, _ := accelcDenied(err.Error())
		t.Logf("case %-32s %s refused: %s", tc.Name, obj.GetKind(), firstLine(msg))
	}
	t.Logf("checked: %d hostile workloads refused at creation under deny, none in the cluster: %s", denied, jsonString(kinds))
}

// badCommits: an artifact not signed by the cluster's key is refused by
// Flux and the cluster stays at the last good one; a commit that fails
// accelc vet never reaches the registry.
func (st *story) badCommits(t *testing.T) {
	s := st.s
	out := s.render(t, st.cluster, "tampered")
	tampered := filepath.Join(out, "tenancy", "namespaceentitlement-ds-notebooks.yaml")
	b, err := os.ReadFile(tampered)
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(b), "- nvidia-v100-16gb", "- nvidia-v100-16gb\n  - nvidia-h200-141gb", 1)
	if edited == string(b) {
		t.Fatalf("%s lists no nvidia-v100-16gb to tamper with", tampered)
	}
	must(t, os.WriteFile(tampered, []byte(edited), 0o644))
	st.version++
	tag := fmt.Sprintf("1.%d.0", st.version-1)
	digest := st.f.pushWith(t, out, tag) // unsigned
	st.f.reconcile(t)
	st.f.unverified(t, tag, digest, st.lastGood)
	ent, err := s.dyn.Resource(schema.GroupVersionResource{Group: "accelc.io", Version: "v1alpha1", Resource: "namespaceentitlements"}).Get(t.Context(), "ds-notebooks", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if typesList, _, _ := unstructured.NestedStringSlice(ent.Object, "spec", "acceleratorTypes"); slices.Contains(typesList, "nvidia-h200-141gb") {
		t.Fatalf("the unsigned artifact's entitlement reached the cluster: %v", typesList)
	}

	// A commit naming an accelerator type the catalog does not know.
	st.write(t, "broken.cue", "package cluster\n\nprofiles: \"b999\": {\n\tdisplayName: \"B999\"\n\tacceleratorTypes: [\"nvidia-b999\"]\n}\n")
	before := st.version
	_, _, _, err = st.ci(t)
	if err == nil || !strings.Contains(err.Error(), "accelc vet") {
		t.Fatalf("CI on a commit naming an unknown type: %v, want accelc vet to stop it", err)
	}
	t.Logf("CI stopped the broken commit at vet: %s", firstLine(err.Error()))
	ref, err := name.ParseReference(strings.TrimPrefix(st.f.repo, "oci://")+":"+fmt.Sprintf("1.%d.0", before), name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := remote.Head(ref, remote.WithContext(t.Context())); err == nil {
		t.Fatalf("the broken commit reached the registry as %s", ref)
	}
	must(t, os.Remove(filepath.Join(st.cluster, "broken.cue")))
	st.version = before
}

// newType: a node of a type the cluster never had joins; the admin reads
// the inventory live, the next commit adds the type to a team and a
// profile of it; nfd-master labels the node by the new rule and a pod of
// the new profile runs on it.
func (st *story) newType(t *testing.T) {
	s, ctx := st.s, t.Context()
	node := "worker-node-30"
	inv := filepath.Join(s.work, "new-node.json")
	must(t, os.WriteFile(inv, []byte(h100Node(node)), 0o644))
	s.createNodes(t, inv, nil)
	st.waitNodesReady(t, []string{node})
	if stdout, stderr, err := run(ctx, s.root, s.accelc, "inventory", "snapshot", "--live", "--kubeconfig", s.cp.Kubeconfig(), "--out-file", filepath.Join(st.cluster, "inventory.json")); err != nil {
		t.Fatalf("accelc inventory snapshot --live: %v\n%s%s", err, stdout, stderr)
	}
	cue := st.read(t, "cluster.cue")
	old := `acceleratorTypes: ["nvidia-h200-141gb", "nvidia-a100-80gb"]
		quota: {"nvidia-h200-141gb": 16, "nvidia-a100-80gb": 40}`
	if !strings.Contains(cue, old) {
		t.Fatalf("cluster.cue: no ml-research entitlement to extend")
	}
	st.write(t, "cluster.cue", strings.Replace(cue, old, `acceleratorTypes: ["nvidia-h200-141gb", "nvidia-a100-80gb", "nvidia-h100-80gb"]
		quota: {"nvidia-h200-141gb": 16, "nvidia-a100-80gb": 40, "nvidia-h100-80gb": 8}`, 1))
	st.write(t, "h100.cue", `package cluster

profiles: h100: {
	displayName: "One H100"
	description: "NVIDIA H100 80GB, new in the cluster."
	acceleratorTypes: ["nvidia-h100-80gb"]
	gpu: {min: 1, default: 1, max: 8}
	tolerations: [{key: "nvidia.com/gpu", operator: "Exists", effect: "NoSchedule"}]
}
`)
	st.commit(t, "commit 4 (a new node type, a profile of it)")
	pci, err := pciOfType(st.cluster, "nvidia-h100-80gb")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.publishNodeFeatures(ctx, node, pci); err != nil {
		t.Fatal(err)
	}
	err = poll(ctx, gatekeeperTimeout, func(ctx context.Context) (bool, string, error) {
		n, err := s.client.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
		if err != nil {
			return false, err.Error(), nil
		}
		return n.Labels[st.c.typeLabel] == "nvidia-h100-80gb", fmt.Sprintf("%s=%q", st.c.typeLabel, n.Labels[st.c.typeLabel]), nil
	})
	if err != nil {
		t.Fatalf("nfd-master did not label the new node by the new rule: %v\n%s", err, s.nfd.Tail())
	}
	st.c.nodeTypes[node] = "nvidia-h100-80gb"
	pod := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"name": "on-h100", "namespace": "ml-research", "labels": map[string]any{"app": "on-h100"},
			"annotations": map[string]any{hardwareProfileAnnotation: "h100", hardwareProfileNSAnnotation: "opendatahub"}},
		"spec": map[string]any{"containers": []any{map[string]any{"name": "main", "image": "registry.example/train:1",
			"resources": map[string]any{"limits": map[string]any{"nvidia.com/gpu": "1"}}}}},
	}}
	if err := s.createForReal(ctx, st.c, pod); err != nil {
		t.Fatalf("a pod of the new profile: %v", err)
	}
	pods := st.waitRunning(t, "ml-research", "app=on-h100", 1)
	if pods[0].Spec.NodeName != node {
		t.Errorf("the pod of profile h100 runs on %s, want the new node %s", pods[0].Spec.NodeName, node)
	}
	t.Logf("new node %s (H100) joined; snapshot read live; the commit's rule labelled it %s; a pod of profile h100 queued as %q and Running on it",
		node, st.c.typeLabel+"=nvidia-h100-80gb", pods[0].Labels["kueue.x-k8s.io/queue-name"])
}

// pciOfType is the PCI ids nfd-worker would report for a GPU of the type.
func pciOfType(cluster, typ string) (map[string]string, error) {
	m, err := compile.Load(cluster)
	if err != nil {
		return nil, err
	}
	return pciOf(m.Catalog, typ, 0)
}

// h100Node is a node list of one H100 node as GPU Feature Discovery
// labels it.
func h100Node(node string) string {
	return fmt.Sprintf(`{"apiVersion": "v1", "kind": "List", "items": [{
  "apiVersion": "v1", "kind": "Node",
  "metadata": {"name": %q, "labels": {
    "kubernetes.io/hostname": %q, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
    "feature.node.kubernetes.io/pci-10de.present": "true",
    "nvidia.com/gpu.present": "true", "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3",
    "nvidia.com/gpu.memory": "81559", "nvidia.com/gpu.count": "8", "nvidia.com/gpu.family": "hopper",
    "nvidia.com/gpu.compute.major": "9", "nvidia.com/gpu.compute.minor": "0",
    "nvidia.com/gpu.replicas": "1", "nvidia.com/gpu.sharing-strategy": "none", "nvidia.com/mig.capable": "true"}},
  "spec": {"taints": [{"key": "nvidia.com/gpu", "effect": "NoSchedule"}]},
  "status": {"capacity": {"cpu": "192", "memory": "2Ti", "nvidia.com/gpu": "8", "pods": "250"},
    "conditions": [{"type": "Ready", "status": "True"}]}
}]}`, node, node)
}
