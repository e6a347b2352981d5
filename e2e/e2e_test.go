//go:build e2e

package e2e

import (
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/accelc/accelc/internal/controlplane"
	"github.com/accelc/accelc/pkg/inventory"
	"github.com/accelc/accelc/pkg/render"
)

// TestEndToEnd runs the steps of the package comment in order; a step
// that fails stops the ones after it.
func TestEndToEnd(t *testing.T) {
	s := newSuite(t)
	begin := time.Now()
	s.cp = controlplane.Start(t, controlplane.WithScheduler())
	s.gk = s.cp.StartGatekeeper(t)
	t.Logf("control plane and Gatekeeper up in %s", time.Since(begin).Round(time.Millisecond))
	s.connect(t)
	s.ensureNamespaces(t, systemNamespaces...)
	ver := s.mustKubectl(t, "version", "-o", "json")
	// kubectl is 1.36's; the server is the version asked for.
	if !strings.Contains(ver, `"clientVersion": {`) || !strings.Contains(ver, `"gitVersion": "`+controlplane.K8sVersion+`"`) || !strings.Contains(ver, `"gitVersion": "`+s.k8sVersion+`"`) {
		t.Fatalf("kubectl version does not name %s for the client and %s for the server:\n%s", controlplane.K8sVersion, s.k8sVersion, ver)
	}
	if s.older() {
		t.Logf("Kubernetes %s: no MutatingAdmissionPolicy; the examples are rendered with cluster.kubernetesVersion 1.%d", s.k8sVersion, controlplane.Minor(s.k8sVersion))
		// accelc's webhook's certificate is cert-manager's: its kinds
		// must be served for the tree to apply (no cert-manager runs;
		// startWebhook serves with a test certificate).
		s.certManagerCRDs(t)
	}

	exs := examples(t, s.root)
	step := func(name string, f func(t *testing.T)) {
		if !t.Run(name, f) {
			t.FailNow()
		}
	}
	step("1-crds", s.stepCRDs)
	// nfd-master watches NodeFeatures and NodeFeatureRules: their CRDs
	// come first.
	s.nfd = s.cp.StartNFDMaster(t)
	// Kueue gates the pods that join a LocalQueue, as it does where
	// accelc's queued profiles run; the admission constraint refuses a
	// queued pod that reaches it ungated (Kueue's webhook skipped it).
	// One manager serves every example: it manages the team namespaces
	// of them all.
	var namespaces []string
	for _, ex := range exs {
		// An example whose queues are not Kueue's has no fragment.
		fragment := ""
		for _, r := range readTree(t, s.render(t, ex, "kueue-namespaces")) {
			if r.obj.GetKind() == "ConfigMap" && r.obj.GetName() == render.KueueConfigMapName {
				fragment, _, _ = unstructured.NestedString(r.obj.Object, "data", "configuration.yaml")
			}
		}
		var cfg struct {
			Selector metav1.LabelSelector `json:"managedJobsNamespaceSelector"`
		}
		if err := yaml.Unmarshal([]byte(fragment), &cfg); err != nil {
			t.Fatalf("%s's Kueue fragment: %v", ex, err)
		}
		for _, e := range cfg.Selector.MatchExpressions {
			for _, ns := range e.Values {
				if e.Key == corev1.LabelMetadataName && e.Operator == metav1.LabelSelectorOpIn && !slices.Contains(namespaces, ns) {
					namespaces = append(namespaces, ns)
				}
			}
		}
	}
	kq := s.cp.StartKueue(t, controlplane.KueueOptions{Namespaces: namespaces})
	t.Logf("Kueue %s manages %v; its log: %s", controlplane.KueueVersion, namespaces, kq.LogPath())
	for _, ex := range exs {
		step("2-dry-run/"+ex, func(t *testing.T) { s.stepDryRun(t, ex) })
	}
	// Each example on its own: a failure in one still lets the others run.
	for _, ex := range exs {
		var nodes []string
		var c *clusterUnderTest
		if t.Run("3-live/"+ex, func(t *testing.T) { nodes = s.stepLive(t, ex) }) {
			t.Run("4-admission/"+ex, func(t *testing.T) { s.stepAdmission(t, ex, &c) })
			if c != nil && c.ready {
				t.Run("5-entitlement/"+ex, func(t *testing.T) { s.stepEntitlement(t, c) })
			}
		}
		step("teardown/"+ex, func(t *testing.T) { s.teardown(t, c, nodes) })
	}
}

// stepCRDs installs, for real, the CRDs of the API groups the rendered
// trees use beside Gatekeeper's (which StartGatekeeper installed): Kueue,
// Node Feature Discovery, Flux, the Prometheus operator, from their
// modules (hack/e2e-tools.sh), and Open Data Hub's HardwareProfile
// (tools/e2e/crds).
func (s *suite) stepCRDs(t *testing.T) { s.installCRDs(t) }

// installCRDs is stepCRDs for any test or benchmark.
func (s *suite) installCRDs(t testing.TB) { s.installCRDsBut(t) }

// installCRDsBut is installCRDs without the CRDs of the API groups skip
// names.
func (s *suite) installCRDsBut(t testing.TB, skip ...string) {
	dirs, err := filepath.Glob(filepath.Join(s.root, "bin", "e2e-crds-*"))
	if err != nil || len(dirs) != 1 {
		t.Fatalf("want one bin/e2e-crds-* folder, found %d: run `make e2e-tools`", len(dirs))
	}
	var files []string
	for _, pattern := range []string{filepath.Join(dirs[0], "*.yaml"), filepath.Join(s.root, "tools", "e2e", "crds", "*.yaml")} {
		m, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range m {
			group, _, _ := strings.Cut(filepath.Base(f), "_")
			if !slices.Contains(skip, group) {
				files = append(files, f)
			}
		}
	}
	names, err := controlplane.ApplyCRDs(t.Context(), s.dyn, files...)
	if err != nil {
		t.Fatal(err)
	}
	byGroup := map[string][]string{}
	for _, n := range names {
		plural, group, _ := strings.Cut(n, ".")
		byGroup[group] = append(byGroup[group], plural)
	}
	var groups []string
	for g := range byGroup {
		groups = append(groups, g)
	}
	slices.Sort(groups)
	for _, g := range groups {
		t.Logf("established %s: %s", g, strings.Join(byGroup[g], ", "))
	}
	t.Logf("checked: %d CRDs from %d files server-side applied and Established (Gatekeeper's own before it started)", len(names), len(files))
}

// stepDryRun renders the example and has the API server check every
// object of the tree: `kubectl apply --server-side --dry-run=server` per
// kustomization, after creating what a dry run cannot stand in for — the
// namespaces the objects live in, the tree's own CRDs and its
// ConstraintTemplates, whose constraint CRDs Gatekeeper makes.
func (s *suite) stepDryRun(t *testing.T, example string) {
	out := s.render(t, example, "file")
	objs := readTree(t, out)
	var namespaces []string
	var crdFiles, templateFiles []string
	for _, r := range objs {
		if ns := r.obj.GetNamespace(); ns != "" && !slices.Contains(namespaces, ns) {
			namespaces = append(namespaces, ns)
		}
		switch r.obj.GetKind() {
		case "CustomResourceDefinition":
			crdFiles = append(crdFiles, filepath.Join(out, r.file))
		case "ConstraintTemplate":
			templateFiles = append(templateFiles, filepath.Join(out, r.file))
		}
	}
	slices.Sort(namespaces)
	s.ensureNamespaces(t, namespaces...)
	if len(crdFiles) > 0 {
		names, err := controlplane.ApplyCRDs(t.Context(), s.dyn, crdFiles...)
		if err != nil {
			t.Fatalf("applying the tree's CRDs: %v", err)
		}
		t.Logf("applied the tree's own CRDs: %s", strings.Join(names, ", "))
	}
	s.applyTemplates(t, templateFiles)

	total := 0
	for _, dir := range kustomizations(t, out) {
		// kind/name, counted: kubectl does not print namespaces.
		want := map[string]int{}
		for _, r := range objs {
			if strings.HasPrefix(r.file, dir+string(filepath.Separator)) {
				want[strings.ToLower(r.obj.GetKind())+"/"+r.obj.GetName()]++
			}
		}
		stdout, stderr, err := s.kubectlAs(t.Context(), s.cp.Kubeconfig(), "apply", "--server-side", "--dry-run=server",
			"--field-manager=accelc-e2e", "--force-conflicts", "-k", filepath.Join(out, dir))
		if err != nil {
			t.Errorf("%s/%s: the API server rejected the tree: %v\n%s%s", example, dir, err, stdout, stderr)
			continue
		}
		got := map[string]int{}
		n := 0
		for _, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
			ref, ok := strings.CutSuffix(line, " serverside-applied (server dry run)")
			if !ok {
				t.Errorf("%s/%s: unexpected kubectl output line %q", example, dir, line)
				continue
			}
			kindGroup, name, _ := strings.Cut(ref, "/")
			kind, _, _ := strings.Cut(kindGroup, ".")
			got[kind+"/"+name]++
			n++
		}
		for k, w := range want {
			if got[k] != w {
				t.Errorf("%s/%s: kubectl applied %s %d times, the folder has %d", example, dir, k, got[k], w)
			}
		}
		for k := range got {
			if want[k] == 0 {
				t.Errorf("%s/%s: kubectl applied %s, which is in no file of the folder", example, dir, k)
			}
		}
		if stderr != "" {
			t.Logf("%s/%s: kubectl warned:\n%s", example, dir, strings.TrimSpace(stderr))
		}
		total += n
		t.Logf("%-12s %3d objects accepted", dir+"/", n)
	}
	if total != len(objs) {
		t.Errorf("the API server checked %d objects, the tree has %d", total, len(objs))
	}
	t.Logf("checked: all %d objects of %s's tree pass the API server's schema, CEL rules and Gatekeeper's validation in a server-side dry run", total, example)
}

// applyTemplates applies ConstraintTemplates for real and waits until
// Gatekeeper has made each one's constraint CRD.
func (s *suite) applyTemplates(t testing.TB, files []string) {
	t.Helper()
	if len(files) == 0 {
		return
	}
	args := []string{"apply", "--server-side", "--field-manager=accelc-e2e", "--force-conflicts"}
	for _, f := range files {
		args = append(args, "-f", f)
	}
	s.mustKubectl(t, args...)
	for _, f := range files {
		objs, err := controlplane.ReadObjects(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range objs {
			kind, _, _ := unstructuredString(o.Object, "spec", "crd", "spec", "names", "kind")
			crd := strings.ToLower(kind) + ".constraints.gatekeeper.sh"
			ctx := t.Context()
			if err := waitEstablished(ctx, s, crd); err != nil {
				tmpl, _, _ := s.kubectlAs(t.Context(), s.cp.Kubeconfig(), "get", "constrainttemplate", o.GetName(), "-o", "yaml")
				crds, _, _ := s.kubectlAs(t.Context(), s.cp.Kubeconfig(), "get", "crd", "-o", "name")
				t.Fatalf("ConstraintTemplate %s: Gatekeeper did not make %s: %v\nthe template now:\n%s\nthe CRDs:\n%s", o.GetName(), crd, err, tmpl, crds)
			}
			t.Logf("ConstraintTemplate %s: Gatekeeper made CRD %s", o.GetName(), crd)
		}
	}
}

// stepLive creates the example's nodes from its inventory.json and checks
// that accelc reads the API server as it reads the file.
func (s *suite) stepLive(t *testing.T, example string) []string {
	file := filepath.Join(s.root, "examples", "clusters", example, "inventory.json")
	nodes := s.createNodes(t, file, nil)
	t.Logf("created %d nodes from %s (labels and taints on the object, capacity through the status subresource)", len(nodes), filepath.Join("examples", "clusters", example, "inventory.json"))
	want, err := inventory.ReadSnapshot(file)
	if err != nil {
		t.Fatal(err)
	}
	fileRender := s.render(t, example, "file")

	reader := s.bindUser(t, "node-reader", []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"get", "list", "watch"}}})
	for _, who := range []struct {
		name, kubeconfig string
		podsCounted      bool
	}{
		{"admin", s.cp.Kubeconfig(), true},
		{"node-reader (may list nodes, not pods)", reader, false},
	} {
		snapFile := filepath.Join(s.work, example+"-"+strings.Fields(who.name)[0]+".json")
		_, errOut, err := run(t.Context(), s.root, s.accelc, "inventory", "snapshot", "--live", "--kubeconfig", who.kubeconfig, "--out-file", snapFile)
		if err != nil {
			t.Fatalf("%s: accelc inventory snapshot --live: %v\n%s", who.name, err, errOut)
		}
		got, err := inventory.ReadSnapshot(snapFile)
		if err != nil {
			t.Fatal(err)
		}
		if got.Source == nil || got.Source.PodsCounted != who.podsCounted {
			t.Errorf("%s: snapshot source %s, want podsCounted %v", who.name, jsonString(got.Source), who.podsCounted)
		}
		if !who.podsCounted && !strings.Contains(errOut, "pods") {
			t.Errorf("%s: no warning that pods were not counted; stderr:\n%s", who.name, errOut)
		}
		compareNodes(t, who.name, want, got)

		liveRender := filepath.Join(s.work, "render", example+"-live-"+strings.Fields(who.name)[0])
		_, errOut, err = run(t.Context(), s.root, s.accelc, "render", clusterDir(s.olderExample(t, example)),
			"--live", "--kubeconfig", who.kubeconfig, "--output-dir", liveRender, "--revision", revision)
		if err != nil {
			t.Fatalf("%s: accelc render --live: %v\n%s", who.name, err, errOut)
		}
		// What pods use shows in the tree (the catalog's queue quota used
		// and left) only where it was counted: render --live is compared
		// with a render of its own snapshot, and, where no pods were
		// counted, with a render of the file.
		against, what := fileRender, "the file"
		if who.podsCounted {
			against, what = filepath.Join(s.work, "render", example+"-snapshot-"+strings.Fields(who.name)[0]), "the snapshot --live wrote"
			if _, errOut, err := run(t.Context(), s.root, s.accelc, "render", clusterDir(s.olderExample(t, example)),
				"--inventory", snapFile, "--output-dir", against, "--revision", revision); err != nil {
				t.Fatalf("%s: accelc render --inventory %s: %v\n%s", who.name, snapFile, err, errOut)
			}
		}
		n := compareTrees(t, who.name, against, liveRender)
		t.Logf("checked as %s: snapshot --live has the %d nodes of the file (labels, taints, unschedulable, capacity, allocatable, readiness; podsCounted=%v); render --live wrote the same %d files as render from %s",
			who.name, len(got.Nodes), got.Source.PodsCounted, n, what)
	}

	// Bound to nothing: exit 3, naming the verb and the resource.
	nobody := s.cp.UserKubeconfig(t, "nobody")
	_, errOut, err := run(t.Context(), s.root, s.accelc, "inventory", "snapshot", "--live", "--kubeconfig", nobody)
	if exitCode(err) != 3 || !strings.Contains(errOut, `"list" on "nodes"`) {
		t.Errorf("a user bound to nothing: exit %d, stderr:\n%s\nwant exit 3 naming list on nodes", exitCode(err), errOut)
	} else {
		t.Logf("checked: a user bound to nothing gets exit 3: %s", firstLine(errOut))
	}
	return nodes
}

// compareNodes checks that a live snapshot holds the file's nodes with
// what a kubelet and GFD set, the in-use annotations accelc adds aside.
func compareNodes(t *testing.T, who string, want, got *inventory.Snapshot) {
	t.Helper()
	index := map[string]inventory.RawNode{}
	for _, n := range got.Nodes {
		index[n.Metadata.Name] = n
	}
	if len(got.Nodes) != len(want.Nodes) {
		t.Errorf("%s: the live snapshot has %d nodes, the file %d", who, len(got.Nodes), len(want.Nodes))
	}
	for _, w := range want.Nodes {
		g, ok := index[w.Metadata.Name]
		if !ok {
			t.Errorf("%s: node %s is missing from the live snapshot", who, w.Metadata.Name)
			continue
		}
		wantAlloc := w.Status.Allocatable
		if len(wantAlloc) == 0 {
			wantAlloc = w.Status.Capacity
		}
		for _, c := range []struct {
			what       string
			want, have any
		}{
			{"labels", w.Metadata.Labels, g.Metadata.Labels},
			{"taints", w.Spec.Taints, g.Spec.Taints},
			{"unschedulable", w.Spec.Unschedulable, g.Spec.Unschedulable},
			{"capacity", canonical(w.Status.Capacity), canonical(subset(w.Status.Capacity, g.Status.Capacity))},
			{"allocatable", canonical(wantAlloc), canonical(subset(wantAlloc, g.Status.Allocatable))},
			{"ready", ready(w), ready(g)},
		} {
			if jsonString(c.want) != jsonString(c.have) {
				t.Errorf("%s: node %s: %s: live %s, file %s", who, w.Metadata.Name, c.what, jsonString(c.have), jsonString(c.want))
			}
		}
	}
}

// subset is have's entries for want's keys (the harness adds cpu, memory
// and pods where a snapshot leaves them out).
func subset(want, have map[string]string) map[string]string {
	out := map[string]string{}
	for k := range want {
		if v, ok := have[k]; ok {
			out[k] = v
		}
	}
	return out
}

// canonical writes each quantity as the API server does.
func canonical(in map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range in {
		if q, err := resource.ParseQuantity(v); err == nil {
			v = q.String()
		}
		out[k] = v
	}
	return out
}

func ready(n inventory.RawNode) string {
	for _, c := range n.Status.Conditions {
		if c.Type == "Ready" {
			return c.Status
		}
	}
	return "True"
}

// compareTrees checks that two rendered trees hold the same files, byte
// for byte, and returns how many.
func compareTrees(t *testing.T, who, wantDir, gotDir string) int {
	t.Helper()
	list := func(dir string) []string {
		var out []string
		_ = filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
			if err == nil && !fi.IsDir() {
				rel, _ := filepath.Rel(dir, p)
				out = append(out, rel)
			}
			return err
		})
		sort.Strings(out)
		return out
	}
	want, got := list(wantDir), list(gotDir)
	if strings.Join(want, "\n") != strings.Join(got, "\n") {
		t.Errorf("%s: render --live wrote %v, render from the file %v", who, got, want)
		return len(got)
	}
	for _, f := range want {
		a, _ := os.ReadFile(filepath.Join(wantDir, f))
		b, _ := os.ReadFile(filepath.Join(gotDir, f))
		if string(a) != string(b) {
			t.Errorf("%s: %s differs between render --live and render from the file:\n--- file\n%s\n--- live\n%s", who, f, a, b)
		}
	}
	return len(want)
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return line
}
