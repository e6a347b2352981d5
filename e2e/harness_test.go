//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/util/retry"

	"github.com/accelc/accelc/internal/controlplane"
	"github.com/accelc/accelc/pkg/compile"
	"github.com/accelc/accelc/pkg/inventory"
)

// revision is the source revision every render here is stamped with, so
// that renders of the same example compare byte for byte.
const revision = "e2e@sha1:0000000000000000000000000000000000000000"

// suite is one control plane with Gatekeeper, and the programs the steps
// run against it.
type suite struct {
	root    string // the repository
	work    string // renders, snapshots, kubeconfigs
	cp      *controlplane.ControlPlane
	gk      *controlplane.Gatekeeper
	kq      *controlplane.Kueue // where a benchmark profiles it
	nfd     *controlplane.NFDMaster
	kwok    *controlplane.KWOK // the kubelets, where the suite runs them
	client  kubernetes.Interface
	dyn     dynamic.Interface
	mapper  *restmapper.DeferredDiscoveryRESTMapper
	kubectl string
	accelc  string
	// k8sVersion is the control plane's Kubernetes version
	// (controlplane.ServerVersion): $ACCELC_K8S_VERSION picks the older
	// minor (make e2e-older), on which the examples are rendered for that
	// minor (olderExample).
	k8sVersion string
}

// newSuite is a suite over the repository's built accelc and kubectl,
// with a fresh work directory; connect gives it clients once a control
// plane runs.
func newSuite(t testing.TB) *suite {
	t.Helper()
	root := repoRoot(t)
	version, err := controlplane.ServerVersion()
	if err != nil {
		t.Fatal(err)
	}
	return &suite{
		root:       root,
		work:       t.TempDir(),
		kubectl:    program(t, root, filepath.Join("bin", "k8s-"+controlplane.K8sVersion, "kubectl"), "e2e-tools"),
		accelc:     program(t, root, filepath.Join("bin", "accelc"), "build"),
		k8sVersion: version,
	}
}

// older reports whether the control plane runs a minor before 1.36,
// which serves no MutatingAdmissionPolicy.
func (s *suite) older() bool {
	// A suite made by hand (not newSuite) runs the harness's default,
	// 1.36.
	return s.k8sVersion != "" && controlplane.Minor(s.k8sVersion) < compile.AdmissionPolicyMinor
}

// kubernetesVersionCUE is the file olderExample adds to a copy of a
// cluster: its cluster.kubernetesVersion, the control plane's minor.
func (s *suite) kubernetesVersionCUE() []byte {
	return fmt.Appendf(nil, "package cluster\n\ncluster: kubernetesVersion: \"1.%d\"\n", controlplane.Minor(s.k8sVersion))
}

// olderExample is, on an older minor, a copy of the example (with the
// examples' CUE module and fleet package) under the work directory whose
// cluster.kubernetesVersion is the control plane's, so that it renders
// what such a cluster takes; made once. On 1.36 and for a test's own
// cluster (a name with a slash) it is the example itself.
func (s *suite) olderExample(t testing.TB, example string) string {
	t.Helper()
	if !s.older() || strings.Contains(example, "/") {
		return example
	}
	base := filepath.Join(s.work, "k8s-"+s.k8sVersion)
	dir := filepath.Join(base, example)
	if _, err := os.Stat(dir); err == nil {
		return dir
	}
	src := filepath.Join(s.root, "examples", "clusters")
	for _, d := range []string{"cue.mod", "fleet"} {
		if _, err := os.Stat(filepath.Join(base, d)); err == nil {
			continue
		}
		if err := os.CopyFS(filepath.Join(base, d), os.DirFS(filepath.Join(src, d))); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.CopyFS(dir, os.DirFS(filepath.Join(src, example))); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "kubernetes.cue"), s.kubernetesVersionCUE(), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// connect makes the suite's admin clients for its control plane.
func (s *suite) connect(t testing.TB) {
	t.Helper()
	var err error
	if s.client, err = kubernetes.NewForConfig(s.cp.RESTConfig()); err != nil {
		t.Fatal(err)
	}
	if s.dyn, err = dynamic.NewForConfig(s.cp.RESTConfig()); err != nil {
		t.Fatal(err)
	}
	s.mapper = restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(s.client.Discovery()))
}

func repoRoot(t testing.TB) string {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("the e2e tests run from e2e/ in the repository: %v", err)
	}
	return root
}

// program is a built program under bin/, or a fatal error naming the
// make target that builds it.
func program(t testing.TB, root, rel, target string) string {
	t.Helper()
	path := filepath.Join(root, rel)
	if fi, err := os.Stat(path); err != nil || fi.Mode()&0o111 == 0 {
		t.Fatalf("no %s: run `make %s` (or `make e2e`, which builds everything the end-to-end tests need)", rel, target)
	}
	return path
}

// examplesEnv, when set, names the examples to run (comma-separated), for
// a quicker run while working on one.
const examplesEnv = "ACCELC_E2E_EXAMPLES"

// examples are the example clusters: directories with an inventory beside
// their CUE, as the Makefile's EXAMPLES, or those $ACCELC_E2E_EXAMPLES
// names.
func examples(t *testing.T, root string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(root, "examples", "clusters", "*", "inventory.json"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range files {
		out = append(out, filepath.Base(filepath.Dir(f)))
	}
	slices.Sort(out)
	if len(out) == 0 {
		t.Fatal("no examples/clusters/*/inventory.json")
	}
	if only := os.Getenv(examplesEnv); only != "" {
		var picked []string
		for _, ex := range strings.Split(only, ",") {
			if !slices.Contains(out, ex) {
				t.Fatalf("$%s names %q; the examples are %v", examplesEnv, ex, out)
			}
			picked = append(picked, ex)
		}
		t.Logf("$%s: only %v", examplesEnv, picked)
		return picked
	}
	return out
}

// run runs a program and returns its stdout and stderr; err is non-nil
// when it did not exit 0, an *exec.ExitError for an exit code.
func run(ctx context.Context, dir, path string, args ...string) (string, string, error) {
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	err := cmd.Run()
	return stdout.String(), stderr.String(), err
}

func exitCode(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

// kubectlAs runs kubectl with the kubeconfig.
func (s *suite) kubectlAs(ctx context.Context, kubeconfig string, args ...string) (string, string, error) {
	return run(ctx, s.root, s.kubectl, append([]string{"--kubeconfig", kubeconfig}, args...)...)
}

// kubectl runs kubectl as the admin and fails t unless it exits 0.
func (s *suite) mustKubectl(t testing.TB, args ...string) string {
	t.Helper()
	out, errOut, err := s.kubectlAs(t.Context(), s.cp.Kubeconfig(), args...)
	if err != nil {
		t.Fatalf("kubectl %s: %v\n%s%s", strings.Join(args, " "), err, out, errOut)
	}
	return out
}

// render runs `accelc render` on the example into a fresh directory and
// returns it; extra flags go after the cluster directory.
func (s *suite) render(t testing.TB, example, name string, extra ...string) string {
	t.Helper()
	out := filepath.Join(s.work, "render", filepath.Base(example)+"-"+name)
	args := append([]string{"render", clusterDir(s.olderExample(t, example)), "--output-dir", out, "--revision", revision}, extra...)
	_, errOut, err := run(t.Context(), s.root, s.accelc, args...)
	if err != nil {
		t.Fatalf("accelc %s: %v\n%s", strings.Join(args, " "), err, errOut)
	}
	return out
}

// clusterDir is an example's folder, relative to the repository root:
// examples/clusters/<example>, or, for a name with a slash, that path (a
// test's own cluster under e2e/testdata, or an absolute path: a copy the
// test commits to).
func clusterDir(example string) string {
	if strings.Contains(example, "/") {
		return filepath.FromSlash(example)
	}
	return filepath.Join("examples", "clusters", example)
}

// clusterPath is clusterDir as an absolute path.
func (s *suite) clusterPath(example string) string {
	if dir := clusterDir(example); filepath.IsAbs(dir) {
		return dir
	}
	return filepath.Join(s.root, clusterDir(example))
}

// rendered is one object of a rendered tree, with the file it came from.
type rendered struct {
	file string // relative to the tree
	obj  *unstructured.Unstructured
}

func (r rendered) String() string {
	return r.obj.GetKind() + "/" + r.obj.GetName()
}

// group is the object's API group, "" for the core group.
func (r rendered) group() string { return r.obj.GroupVersionKind().Group }

// createRendered creates the tree's objects of kinds, kind by kind in
// that order, as their manifests say (through the API server's
// validation), and counts them by kind. The first the API server refuses
// fails the test.
func (s *suite) createRendered(t testing.TB, tree []rendered, kinds ...string) map[string]int {
	t.Helper()
	counts := map[string]int{}
	for _, kind := range kinds {
		for _, r := range tree {
			if r.obj.GetKind() != kind {
				continue
			}
			res, err := s.resource(s.dyn, r.obj)
			if err == nil {
				_, err = res.Create(t.Context(), r.obj.DeepCopy(), metav1.CreateOptions{FieldManager: "accelc-e2e"})
			}
			if err != nil {
				t.Fatalf("creating the rendered %s: %v", r, err)
			}
			counts[kind]++
		}
	}
	return counts
}

// readTree reads every object of a rendered tree, kustomization files
// aside, in path order.
func readTree(t testing.TB, dir string) []rendered {
	t.Helper()
	var out []rendered
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".yaml") || d.Name() == "kustomization.yaml" {
			return err
		}
		objs, err := controlplane.ReadObjects(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		for _, o := range objs {
			out = append(out, rendered{file: rel, obj: o})
		}
		return nil
	})
	if err != nil {
		t.Fatalf("reading the rendered tree %s: %v", dir, err)
	}
	return out
}

// kustomizations are the folders of a rendered tree that hold a
// kustomization.yaml, the root's resources aside: applying each once
// applies every object once.
func kustomizations(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if e.IsDir() {
			if _, err := os.Stat(filepath.Join(dir, e.Name(), "kustomization.yaml")); err == nil {
				out = append(out, e.Name())
			}
		}
	}
	return out
}

// ensureNamespaces creates the namespaces that do not exist yet. With no
// controller manager, a namespace is never deleted once made.
func (s *suite) ensureNamespaces(t testing.TB, names ...string) {
	t.Helper()
	for _, ns := range names {
		_, err := s.client.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatalf("creating namespace %s: %v", ns, err)
		}
	}
}

// systemNamespaces are the namespaces the examples exclude from accelc's
// policies (cluster.excludedNamespaces' default), which a cluster where
// Gatekeeper and the GPU Operator run has: where accelc reads the
// cluster's namespaces (--live, a snapshot it took), vet and render refuse
// an excluded name the cluster lacks, which a user could create.
var systemNamespaces = []string{"gatekeeper-system", "gpu-operator", "nvidia-gpu-operator"}

// poll calls check every interval until it returns true, an error, or the
// timeout passes; the error then says what was last seen.
func poll(ctx context.Context, timeout time.Duration, check func(context.Context) (bool, string, error)) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	last := "nothing checked yet"
	for {
		done, seen, err := check(ctx)
		if err != nil {
			return err
		}
		if done {
			return nil
		}
		if ctx.Err() == nil {
			last = seen
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("after %s: %s", timeout, last)
		case <-tick.C:
		}
	}
}

// createNodes creates the snapshot's nodes as a kubelet and GPU Feature
// Discovery leave them: labels and taints on the object, capacity,
// allocatable and a Ready condition through the status subresource. The
// TaintNodesByCondition admission plugin puts a not-ready taint on every
// new node, which a kubelet's node lifecycle would lift; here the spec is
// set back to the snapshot's. extraLabels adds labels to the named nodes
// (the ones Node Feature Discovery would stamp). Where the suite runs KWOK,
// each Ready node of the snapshot is KWOK's: its kubelet, not the test,
// makes it Ready and keeps it so, and runs its pods.
func (s *suite) createNodes(t testing.TB, snapshotFile string, extraLabels map[string]map[string]string) []string {
	t.Helper()
	ctx := t.Context()
	snap, err := inventory.ReadSnapshot(snapshotFile)
	if err != nil {
		t.Fatalf("reading %s: %v", snapshotFile, err)
	}
	var names []string
	for _, raw := range snap.Nodes {
		labels := map[string]string{}
		for k, v := range raw.Metadata.Labels {
			labels[k] = v
		}
		for k, v := range extraLabels[raw.Metadata.Name] {
			labels[k] = v
		}
		// A kubelet registers its node with this annotation (and
		// nfd-master's JSON patches add to the map, which must exist).
		annotations := map[string]string{"volumes.kubernetes.io/controller-managed-attach-detach": "true"}
		maps.Copy(annotations, raw.Metadata.Annotations)
		ready := corev1.ConditionTrue
		for _, c := range raw.Status.Conditions {
			if c.Type == string(corev1.NodeReady) {
				ready = corev1.ConditionStatus(c.Status)
			}
		}
		kwok := s.kwok != nil && ready == corev1.ConditionTrue
		if kwok {
			// KWOK's from the start: KWOK v0.8.0 starts a node's lease
			// and pods only for a node it sees added, not one annotated
			// later. It may initialise the node before its capacity is
			// set below (with placeholder capacity and no accelerators,
			// for a moment): the status update writes the snapshot's over
			// it and KWOK's heartbeats keep that.
			annotations[controlplane.KWOKNodeAnnotation] = "fake"
		}
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: raw.Metadata.Name, Labels: labels, Annotations: annotations}}
		created, err := s.client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("creating node %s: %v", raw.Metadata.Name, err)
		}
		created.Status.Capacity = resources(t, raw.Metadata.Name, raw.Status.Capacity)
		created.Status.Allocatable = resources(t, raw.Metadata.Name, raw.Status.Allocatable)
		if len(raw.Status.Allocatable) == 0 {
			created.Status.Allocatable = created.Status.Capacity
		}
		for _, res := range []corev1.ResourceName{corev1.ResourcePods, corev1.ResourceCPU, corev1.ResourceMemory} {
			// The scheduler needs room for pods even where the snapshot
			// left the standard resources out.
			if _, ok := created.Status.Allocatable[res]; !ok {
				q := map[corev1.ResourceName]string{corev1.ResourcePods: "110", corev1.ResourceCPU: "64", corev1.ResourceMemory: "512Gi"}[res]
				created.Status.Capacity[res] = resource.MustParse(q)
				created.Status.Allocatable[res] = resource.MustParse(q)
			}
		}
		if !kwok {
			now := metav1.Now()
			created.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: ready, Reason: "KubeletReady", LastHeartbeatTime: now, LastTransitionTime: now}}
		}
		status := created.Status
		// kube-controller-manager's node lifecycle and KWOK write to a
		// new node too: on a conflict, the change again on the node as it
		// now is (read only then).
		live := created
		err = s.retryNode(ctx, &live, func(n *corev1.Node) (*corev1.Node, error) {
			n.Status.Capacity, n.Status.Allocatable = status.Capacity, status.Allocatable
			if !kwok {
				n.Status.Conditions = status.Conditions
			}
			return s.client.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{})
		})
		if err != nil {
			t.Fatalf("setting the status of node %s: %v", raw.Metadata.Name, err)
		}
		err = s.retryNode(ctx, &live, func(n *corev1.Node) (*corev1.Node, error) {
			n.Spec.Taints = nil
			for _, tn := range raw.Spec.Taints {
				n.Spec.Taints = append(n.Spec.Taints, corev1.Taint{Key: tn.Key, Value: tn.Value, Effect: corev1.TaintEffect(tn.Effect)})
			}
			n.Spec.Unschedulable = raw.Spec.Unschedulable
			return s.client.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{})
		})
		if err != nil {
			t.Fatalf("setting the taints of node %s: %v", raw.Metadata.Name, err)
		}
		names = append(names, raw.Metadata.Name)
	}
	return names
}

// retryNode applies change to a copy of *node and writes it; on a
// conflict it reads the node again and retries. *node is then the node as
// written.
func (s *suite) retryNode(ctx context.Context, node **corev1.Node, change func(*corev1.Node) (*corev1.Node, error)) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		written, err := change((*node).DeepCopy())
		switch {
		case err == nil:
			*node = written
		case apierrors.IsConflict(err):
			if fresh, gerr := s.client.CoreV1().Nodes().Get(ctx, (*node).Name, metav1.GetOptions{}); gerr == nil {
				*node = fresh
			}
		}
		return err
	})
}

func resources(t testing.TB, node string, in map[string]string) corev1.ResourceList {
	t.Helper()
	out := corev1.ResourceList{}
	for k, v := range in {
		q, err := resource.ParseQuantity(v)
		if err != nil {
			t.Fatalf("node %s: resource %s: %v", node, k, err)
		}
		out[corev1.ResourceName(k)] = q
	}
	return out
}

// deleteNodes deletes the nodes.
func (s *suite) deleteNodes(t *testing.T, names []string) {
	t.Helper()
	for _, n := range names {
		if err := s.client.CoreV1().Nodes().Delete(t.Context(), n, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("deleting node %s: %v", n, err)
		}
		// Its NodeFeature, as nfd-worker's garbage collection would.
		if err := s.dyn.Resource(nodeFeatures).Namespace(controlplane.NFDNamespace).Delete(t.Context(), n, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("deleting NodeFeature %s: %v", n, err)
		}
	}
}

// deletePods deletes the pods at once: with no kubelet, a bound pod's
// graceful deletion would never finish.
func (s *suite) deletePods(t *testing.T, namespaces ...string) {
	t.Helper()
	zero := int64(0)
	for _, ns := range namespaces {
		err := s.client.CoreV1().Pods(ns).DeleteCollection(t.Context(), metav1.DeleteOptions{GracePeriodSeconds: &zero}, metav1.ListOptions{})
		if err != nil {
			t.Errorf("deleting the pods of %s: %v", ns, err)
		}
	}
}

// bindUser gives user the rules, cluster-wide, and returns a kubeconfig
// for it.
func (s *suite) bindUser(t testing.TB, user string, rules []rbacv1.PolicyRule) string {
	t.Helper()
	ctx := t.Context()
	name := "accelc-e2e-" + user
	_, err := s.client.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: rules}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("creating ClusterRole %s: %v", name, err)
	}
	_, err = s.client.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}},
	}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("creating ClusterRoleBinding %s: %v", name, err)
	}
	return s.cp.UserKubeconfig(t, user)
}

// gvr is the resource of an object's kind, as the API server's discovery
// names it (Gatekeeper's mutators have singular plurals: assign, modifyset).
func (s *suite) gvr(obj *unstructured.Unstructured) (schema.GroupVersionResource, error) {
	gvk := obj.GroupVersionKind()
	m, err := s.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		// A CRD made since the last discovery.
		s.mapper.Reset()
		m, err = s.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	}
	if err != nil {
		return schema.GroupVersionResource{}, fmt.Errorf("%s: %w", gvk, err)
	}
	return m.Resource, nil
}

// resource is the dynamic client for the object's resource and namespace.
func (s *suite) resource(dyn dynamic.Interface, obj *unstructured.Unstructured) (dynamic.ResourceInterface, error) {
	gvr, err := s.gvr(obj)
	if err != nil {
		return nil, err
	}
	if ns := obj.GetNamespace(); ns != "" {
		return dyn.Resource(gvr).Namespace(ns), nil
	}
	return dyn.Resource(gvr), nil
}

// get reads the object as it is in the cluster.
func (s *suite) get(ctx context.Context, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	r, err := s.resource(s.dyn, obj)
	if err != nil {
		return nil, err
	}
	return r.Get(ctx, obj.GetName(), metav1.GetOptions{})
}

// jsonString is v as compact JSON, for messages.
func jsonString(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
