//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/yaml"

	"github.com/accelc/accelc/internal/controlplane"
	"github.com/accelc/accelc/internal/odh"
	"github.com/accelc/accelc/pkg/compile"
	"github.com/accelc/accelc/pkg/policytest"
	"github.com/accelc/accelc/pkg/policytest/engine"
	"github.com/accelc/accelc/pkg/render"
	"github.com/accelc/accelc/policies"
)

const (
	// gatekeeperTimeout bounds the wait for Gatekeeper to take a change
	// (a template, a constraint, synced data, an audit run).
	gatekeeperTimeout = 90 * time.Second
	// scheduleTimeout bounds the wait for kube-scheduler to decide on a pod.
	scheduleTimeout = 60 * time.Second
	// deniedBy starts every denial by Gatekeeper's validating webhook.
	deniedBy = `admission webhook "validation.gatekeeper.sh" denied the request`
	// devUser creates the workloads, as a team's member would.
	devUser = "dev"
)

// clusterUnderTest is an example's tree applied to the control plane.
type clusterUnderTest struct {
	example      string
	out          string
	objs         []rendered
	typeLabel    string
	labelPrefix  string            // the constraint's parameters.labelPrefix
	nodeTypes    map[string]string // node → type label NFD would stamp
	profiles     []profile
	entitlements map[string]entitlement // namespace → team and types
	namespaces   []string               // where the test made pods
	applied      []string               // the folders the cluster applies
	dev          kubernetes.Interface
	devDyn       dynamic.Interface
	ready        bool // applied, taken by Gatekeeper
	// webhook: before 1.36, accelc's webhook does what the
	// MutatingAdmissionPolicies do on 1.36 (startWebhook).
	webhook bool
}

type profile struct {
	name        string
	types       []string // empty: any type
	nodeSel     map[string]string
	tolerations []corev1.Toleration
	resource    corev1.ResourceName
	count       resource.Quantity
	labelKey    string // the label a user sets to name the profile
	queue       string // the LocalQueue of a profile that schedules through Kueue, or ""
	// claimTemplate is the ResourceClaimTemplate of a profile that hands
	// out devices by claim (Dynamic Resource Allocation), or "".
	claimTemplate string
}

type entitlement struct {
	team     string
	types    []string
	profiles []string // empty: every profile of its types
	queue    string   // the LocalQueue its accelerator pods join, or ""
}

// mayUse reports whether the team may use the profile: it lists it, or
// lists none and may use each of its types (one, for an any-type profile).
func (e entitlement) mayUse(p string, types []string) bool {
	if len(e.profiles) > 0 && !slices.Contains(e.profiles, p) {
		return false
	}
	ok := len(e.types) > 0
	for _, typ := range types {
		ok = ok && slices.Contains(e.types, typ)
	}
	return ok
}

// labelsFromQueue: before 1.36 without accelc's webhook (a tree without
// the catalog service), a workload that names its profile by annotation
// only is labelled from the queue label ODH's webhook writes, or refused.
func (s *suite) labelsFromQueue(c *clusterUnderTest) bool {
	return s.older() && !c.webhook
}

// stepAdmission applies the example's tree as Flux would, waits until
// Gatekeeper has taken every template, constraint and mutator, and puts
// pods through admission and scheduling.
func (s *suite) stepAdmission(t *testing.T, example string, cp **clusterUnderTest) {
	c := &clusterUnderTest{example: example, out: s.render(t, example, "file")}
	*cp = c
	c.objs = readTree(t, c.out)
	c.applied = appliedFolders(t, c.out)
	c.read(t)
	if s.older() {
		c.webhook = s.startWebhook(t, c)
	}
	s.apply(t, c)
	s.stampNFD(t, c)
	s.podSecurity(t, c)
	s.waitGatekeeper(t, c)
	c.dev, c.devDyn = s.devClient(t)
	c.ready = true

	s.profilePods(t, c)
	s.fixtures(t, c)
}

// read takes what the test needs from the rendered objects.
func (c *clusterUnderTest) read(t testing.TB) {
	t.Helper()
	c.entitlements = map[string]entitlement{}
	var mutators []*unstructured.Unstructured
	prefix := ""
	for _, r := range c.objs {
		switch {
		case r.group() == "constraints.gatekeeper.sh":
			c.typeLabel, _, _ = unstructuredString(r.obj.Object, "spec", "parameters", "typeLabel")
			prefix, _, _ = unstructuredString(r.obj.Object, "spec", "parameters", "labelPrefix")
			c.labelPrefix = prefix
		case r.obj.GetKind() == "NamespaceEntitlement":
			team, _, _ := unstructuredString(r.obj.Object, "spec", "team")
			typesList, _, _ := unstructured.NestedStringSlice(r.obj.Object, "spec", "acceleratorTypes")
			profiles, _, _ := unstructured.NestedStringSlice(r.obj.Object, "spec", "profiles")
			queue, _, _ := unstructuredString(r.obj.Object, "spec", "queue")
			c.entitlements[r.obj.GetName()] = entitlement{team: team, types: typesList, profiles: profiles, queue: queue}
		case r.group() == "mutations.gatekeeper.sh":
			mutators = append(mutators, r.obj)
		}
	}
	if c.typeLabel == "" {
		t.Fatal("the tree has no constraint with parameters.typeLabel")
	}
	for _, r := range c.objs {
		if r.obj.GetKind() != "HardwareProfile" {
			continue
		}
		if r.obj.GetAnnotations()["opendatahub.io/disabled"] == "true" {
			continue
		}
		p := profile{name: r.obj.GetName()}
		if ts := r.obj.GetAnnotations()["accelerator.opendatahub.io/types"]; ts != "" {
			p.types = strings.Split(ts, ",")
		}
		p.nodeSel, _, _ = unstructured.NestedStringMap(r.obj.Object, "spec", "scheduling", "node", "nodeSelector")
		tols, _, _ := unstructured.NestedSlice(r.obj.Object, "spec", "scheduling", "node", "tolerations")
		if err := convert(tols, &p.tolerations); err != nil {
			t.Fatalf("HardwareProfile %s: tolerations: %v", p.name, err)
		}
		// A profile that schedules through Kueue holds no node scheduling:
		// its queue names the LocalQueue, and its tolerations travel in an
		// annotation for the policies.
		p.queue, _, _ = unstructured.NestedString(r.obj.Object, "spec", "scheduling", "kueue", "localQueueName")
		if a := r.obj.GetAnnotations()["accelerator.opendatahub.io/tolerations"]; a != "" && len(tols) == 0 {
			if err := json.Unmarshal([]byte(a), &p.tolerations); err != nil {
				t.Fatalf("HardwareProfile %s: annotation accelerator.opendatahub.io/tolerations: %v", p.name, err)
			}
		}
		ids, _, _ := unstructured.NestedSlice(r.obj.Object, "spec", "identifiers")
		for _, id := range ids {
			m, _ := id.(map[string]any)
			if m["resourceType"] == "Accelerator" {
				p.resource = corev1.ResourceName(fmt.Sprint(m["identifier"]))
				p.count = resource.MustParse(fmt.Sprint(m["defaultCount"]))
			}
		}
		// The label whose value names the profile, from the mutators
		// that match it; the constraint's labelPrefix where no
		// namespace denies and no mutator is rendered.
		if len(mutators) == 0 && prefix != "" {
			p.labelKey = prefix + "/profile"
		}
		for _, m := range mutators {
			sel, _, _ := unstructured.NestedStringMap(m.Object, "spec", "match", "labelSelector", "matchLabels")
			for k, v := range sel {
				if v == p.name {
					p.labelKey = k
				}
			}
		}
		p.claimTemplate = r.obj.GetAnnotations()["accelerator.opendatahub.io/resource-claim-template"]
		if (p.resource == "" && p.claimTemplate == "") || p.labelKey == "" {
			t.Fatalf("HardwareProfile %s: no accelerator identifier (%q) or claim template, or no mutator matching a profile label (%q)", p.name, p.resource, p.labelKey)
		}
		c.profiles = append(c.profiles, p)
	}
}

// stampNFD has nfd-master label and taint the nodes from the rendered
// NodeFeatureRules (applied with the tree): each node's features are
// published as nfd-worker would (its name, and for a node of a known type
// the PCI id of its GPUs: the type accelc gives it, by its GFD labels or
// pinned in CUE, and that type's PCI ids from the catalog), and the
// test waits until nfd-master has stamped every node and stopped changing
// them. The type label nfd-master gives must be the type accelc gave.
func (s *suite) stampNFD(t *testing.T, c *clusterUnderTest) {
	t.Helper()
	var rules []*unstructured.Unstructured
	for _, r := range c.objs {
		if r.obj.GetKind() == "NodeFeatureRule" {
			rules = append(rules, r.obj)
		}
	}
	labelKeys, taintKeys := ruleKeys(rules)
	begin := time.Now()
	view, err := s.publishAll(t, c.example)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{} // node → the type label nfd-master must give
	for _, n := range view.Nodes {
		if n.pci != nil {
			want[n.Name] = n.AcceleratorType
		}
	}
	// Done when every typed node has its type and two looks a second
	// apart see the same labels and taints on every node.
	var last, seen string
	err = poll(t.Context(), gatekeeperTimeout, func(ctx context.Context) (bool, string, error) {
		var b strings.Builder
		for _, n := range view.Nodes {
			live, err := s.client.CoreV1().Nodes().Get(ctx, n.Name, metav1.GetOptions{})
			if err != nil {
				return false, err.Error(), nil
			}
			if typ := want[n.Name]; typ != "" && live.Labels[c.typeLabel] != typ {
				return false, fmt.Sprintf("node %s: %s=%q, want %q", n.Name, c.typeLabel, live.Labels[c.typeLabel], typ), nil
			}
			labels, taints := nfdStamped(live, labelKeys, taintKeys)
			fmt.Fprintf(&b, "%s %v %v\n", n.Name, labels, taints)
		}
		seen, last = last, b.String()
		if seen != last {
			time.Sleep(time.Second)
			return false, "nfd-master still changing the nodes", nil
		}
		return true, "", nil
	})
	if err != nil {
		t.Fatalf("nfd-master did not stamp the nodes: %v\nnfd-master's log:\n%s", err, s.nfd.Tail())
	}
	c.nodeTypes = map[string]string{}
	stamped := map[string]int{} // label or taint → nodes
	for _, n := range view.Nodes {
		live, err := s.client.CoreV1().Nodes().Get(t.Context(), n.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		labels, taints := nfdStamped(live, labelKeys, taintKeys)
		for k, v := range labels {
			stamped[k+"="+v]++
		}
		for _, tn := range taints {
			stamped["taint "+tn.ToString()]++
		}
		if v := labels[c.typeLabel]; v != "" {
			c.nodeTypes[n.Name] = v
		}
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(stamped)) {
		parts = append(parts, fmt.Sprintf("%s on %d", k, stamped[k]))
	}
	t.Logf("nfd-master stamped %d nodes from their NodeFeatures in %s: %s", len(view.Nodes), time.Since(begin).Round(time.Millisecond), strings.Join(parts, "; "))
}

// nodeView is `accelc inventory show -o json`'s nodes, with the PCI ids
// published for each.
type nodeView struct {
	Nodes []struct {
		Name            string `json:"name"`
		AcceleratorType string `json:"acceleratorType"`
		pci             map[string]string
	} `json:"nodes"`
}

// inventoryView is `accelc inventory show -o json` of the example: each
// node and the type accelc gives it.
func (s *suite) inventoryView(t testing.TB, example string) (nodeView, error) {
	var view nodeView
	stdout, errOut, err := run(t.Context(), s.root, s.accelc, "inventory", "show", "--config", clusterDir(example), "-o", "json")
	if err != nil {
		return view, fmt.Errorf("accelc inventory show --config %s: %v\n%s", clusterDir(example), err, errOut)
	}
	if err := json.Unmarshal([]byte(stdout), &view); err != nil {
		return view, fmt.Errorf("accelc inventory show --config %s -o json: %w", clusterDir(example), err)
	}
	return view, nil
}

// known reports whether the type names one accelerator type.
func known(typ string) bool {
	return typ != "" && typ != "unknown" && typ != "mixed"
}

// publishAll publishes each node's NodeFeature as nfd-worker would: its
// name, and for a node of a known type the PCI id of its GPUs (the type
// accelc gives it, by its GFD labels or pinned in CUE, and that type's
// PCI ids from the catalog).
func (s *suite) publishAll(t testing.TB, example string) (nodeView, error) {
	t.Helper()
	view, err := s.inventoryView(t, example)
	if err != nil {
		return view, err
	}
	m, err := compile.Load(s.clusterPath(example))
	if err != nil {
		return view, fmt.Errorf("compiling %s: %w", example, err)
	}
	nth := map[string]int{} // type → its nodes so far
	for i, n := range view.Nodes {
		var pci map[string]string
		if class, ok := m.Catalog.Get(n.AcceleratorType); ok && len(class.PCIDeviceIDs) == 0 && class.NoPCIDeviceIDs != "" {
			// No NFD rule types it (a TPU, a Neuron device: their
			// vendors' PCI ids are every VM's network card too): its
			// node pool sets the type label, which the inventory has.
			t.Logf("node %s (%s): typed by its node pool's label, not by NFD: %s", n.Name, n.AcceleratorType, class.NoPCIDeviceIDs)
		} else if known(n.AcceleratorType) {
			pci, err = pciOf(m.Catalog, n.AcceleratorType, nth[n.AcceleratorType])
			nth[n.AcceleratorType]++
			if err != nil {
				t.Errorf("node %s (%s): %v", n.Name, n.AcceleratorType, err)
				continue
			}
			view.Nodes[i].pci = pci
		}
		if err := s.publishNodeFeatures(t.Context(), n.Name, pci); err != nil {
			return view, fmt.Errorf("NodeFeature %s: %w", n.Name, err)
		}
	}
	return view, nil
}

// apply applies the tree as Flux would (the root kustomization), the
// ConstraintTemplates first so that their constraint CRDs exist.
func (s *suite) apply(t testing.TB, c *clusterUnderTest) {
	t.Helper()
	var templates []string
	for _, r := range c.objs {
		if r.obj.GetKind() == "ConstraintTemplate" {
			templates = append(templates, filepath.Join(c.out, r.file))
		}
	}
	s.applyTemplates(t, templates)
	out := s.mustKubectl(t, "apply", "--server-side", "--field-manager=accelc-e2e", "--force-conflicts", "-k", c.out)
	n := strings.Count(out, "serverside-applied")
	if !slices.Contains(c.applied, "constraints") {
		t.Fatalf("%s has no constraints/ folder", c.example)
	}
	// Flux's second Kustomization: the constraints, once their CRDs exist.
	out = s.mustKubectl(t, "apply", "--server-side", "--field-manager=accelc-e2e", "--force-conflicts", "-k", filepath.Join(c.out, "constraints"))
	t.Logf("applied the root kustomization (%d objects), then constraints/ (%d), as Flux's two Kustomizations do", n, strings.Count(out, "serverside-applied"))
}

// podSecurity creates, as a dry run, a pod of each Deployment the tree
// holds (the catalog service's) in its namespace, whose Pod Security
// labels the API server's admission enforces: it must pass, and the same
// pod made privileged must not.
func (s *suite) podSecurity(t *testing.T, c *clusterUnderTest) {
	t.Helper()
	for _, r := range c.objs {
		if r.obj.GetKind() != "Deployment" {
			continue
		}
		var d appsv1.Deployment
		if err := convert(r.obj.Object, &d); err != nil {
			t.Fatalf("%s: %v", r, err)
		}
		ns, err := s.client.CoreV1().Namespaces().Get(t.Context(), d.Namespace, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("%s: its namespace: %v", r, err)
		}
		level := ns.Labels["pod-security.kubernetes.io/enforce"]
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{GenerateName: d.Name + "-", Namespace: d.Namespace, Labels: d.Spec.Template.Labels}, Spec: d.Spec.Template.Spec}
		dry := metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}
		if _, err := s.client.CoreV1().Pods(d.Namespace).Create(t.Context(), pod, dry); err != nil {
			t.Errorf("%s: its pod is refused in namespace %s (Pod Security %q): %v", r, d.Namespace, level, err)
			continue
		}
		bad := pod.DeepCopy()
		bad.Spec.Containers[0].SecurityContext.Privileged = ref(true)
		bad.Spec.Containers[0].SecurityContext.AllowPrivilegeEscalation = ref(true)
		if _, err := s.client.CoreV1().Pods(d.Namespace).Create(t.Context(), bad, dry); err == nil || !strings.Contains(err.Error(), "violates PodSecurity") {
			t.Errorf("%s: the same pod made privileged is not refused by Pod Security %q in %s: %v", r, level, d.Namespace, err)
			continue
		}
		t.Logf("%s: its pod passes Pod Security %q in %s, and made privileged it is refused", r, level, d.Namespace)
	}
}

// waitGatekeeper waits until Gatekeeper reports, in each object's status,
// that it has taken the current generation of every template, constraint,
// mutator and expansion template of the tree, without errors.
func (s *suite) waitGatekeeper(t testing.TB, c *clusterUnderTest) {
	t.Helper()
	begin := time.Now()
	kinds := map[string]int{}
	for _, r := range c.objs {
		if !strings.HasSuffix(r.group(), "gatekeeper.sh") || r.obj.GetKind() == "SyncSet" {
			continue
		}
		if r.root(c) == "" {
			continue // not in the root kustomization
		}
		if err := s.waitTaken(t.Context(), r.obj); err != nil {
			status := "(not found)"
			if live, gerr := s.get(t.Context(), r.obj); gerr == nil {
				status = jsonString(live.Object["status"])
			}
			t.Fatalf("Gatekeeper did not take %s: %v; its status: %s", r, err, status)
		}
		kinds[r.obj.GetKind()]++
	}
	if err := poll(t.Context(), gatekeeperTimeout, func(ctx context.Context) (bool, string, error) {
		err := s.gk.Ready(ctx)
		return err == nil, fmt.Sprint(err), nil
	}); err != nil {
		t.Fatalf("Gatekeeper not ready: %v", err)
	}
	t.Logf("Gatekeeper took %s in %s", jsonString(kinds), time.Since(begin).Round(time.Millisecond))
}

// root is the object's folder when the cluster applies it: a folder of
// the root kustomization, or constraints/, which Flux applies as a second
// Kustomization once the templates' CRDs exist (flux/).
func (r rendered) root(c *clusterUnderTest) string {
	dir, _, _ := strings.Cut(r.file, string(filepath.Separator))
	if slices.Contains(c.applied, dir) {
		return dir
	}
	return ""
}

// appliedFolders are the folders the cluster applies; see root.
func appliedFolders(t testing.TB, out string) []string {
	t.Helper()
	objs, err := controlplane.ReadObjects(filepath.Join(out, "kustomization.yaml"))
	if err != nil || len(objs) != 1 {
		t.Fatalf("the root kustomization of %s: %v", out, err)
	}
	dirs, _, _ := unstructured.NestedStringSlice(objs[0].Object, "resources")
	if !slices.Contains(dirs, "constraints") {
		if _, err := os.Stat(filepath.Join(out, "constraints", "kustomization.yaml")); err == nil {
			dirs = append(dirs, "constraints")
		}
	}
	return dirs
}

// waitTaken waits until the object's status.byPod says Gatekeeper took its
// generation: observedGeneration current, enforced where reported, no
// errors; for a template, status.created too.
func (s *suite) waitTaken(ctx context.Context, obj *unstructured.Unstructured) error {
	return poll(ctx, gatekeeperTimeout, func(ctx context.Context) (bool, string, error) {
		live, err := s.get(ctx, obj)
		if err != nil {
			return false, err.Error(), nil
		}
		byPod, _, _ := unstructured.NestedSlice(live.Object, "status", "byPod")
		if len(byPod) == 0 {
			return false, "no status.byPod yet", nil
		}
		for _, bp := range byPod {
			m, _ := bp.(map[string]any)
			if errs, _ := m["errors"].([]any); len(errs) > 0 {
				return false, "", fmt.Errorf("Gatekeeper reports errors: %s", jsonString(errs))
			}
			if og, _ := m["observedGeneration"].(int64); og != live.GetGeneration() {
				return false, fmt.Sprintf("observedGeneration %v, generation %d", m["observedGeneration"], live.GetGeneration()), nil
			}
			if e, ok := m["enforced"]; ok && e != true {
				return false, "not enforced yet", nil
			}
		}
		if live.GetKind() == "ConstraintTemplate" {
			if created, _, _ := unstructured.NestedBool(live.Object, "status", "created"); !created {
				return false, "status.created is not true", nil
			}
		}
		return true, "", nil
	})
}

// devClient is a client for devUser, who may create pods (and put
// ephemeral containers in them), workloads, and ResourceClaims and
// ResourceClaimTemplates in every namespace, and update them, as a team's
// members may in theirs.
func (s *suite) devClient(t *testing.T) (kubernetes.Interface, dynamic.Interface) {
	t.Helper()
	return s.userClient(t, devUser)
}

// userClient is a client for user (an admission case's user: a
// controller's service account, Kueue's) with devUser's rights.
func (s *suite) userClient(t *testing.T, user string) (kubernetes.Interface, dynamic.Interface) {
	t.Helper()
	write := []string{"create", "get", "list", "update", "patch"}
	s.bindUser(t, user, []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"create", "get", "list", "watch", "update", "patch", "delete"}},
		{APIGroups: []string{""}, Resources: []string{"pods/ephemeralcontainers"}, Verbs: []string{"update", "patch"}},
		{APIGroups: []string{"apps", "batch"}, Resources: []string{"*"}, Verbs: write},
		// Kubernetes' edit role lets namespace members claim devices.
		{APIGroups: []string{"resource.k8s.io"}, Resources: []string{"resourceclaims", "resourceclaimtemplates"}, Verbs: write},
		// ODH's workbenches and Kubeflow's jobs, as their users make them.
		{APIGroups: []string{"kubeflow.org", "ray.io", "jobset.x-k8s.io", "leaderworkerset.x-k8s.io", "workload.codeflare.dev", "trainer.kubeflow.org"}, Resources: []string{"*"}, Verbs: write},
	})
	cfg := s.cp.UserRESTConfig(t, user)
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cs, dyn
}

// profilePods creates, for every enabled profile, the pod a user writes:
// the profile's label and a request for its accelerator, nothing else, in
// a namespace whose team is entitled to all of the profile's types. The
// mutation must give it the profile's affinity, tolerations and
// annotations; the validation must admit it; kube-scheduler must bind it
// to a node of one of the profile's types that matches its node selector.
func (s *suite) profilePods(t *testing.T, c *clusterUnderTest) {
	t.Helper()
	for _, p := range c.profiles {
		ns, ent, ok := c.entitledNamespace(p.name, p.types)
		if !ok {
			t.Logf("profile %s: no namespace's team is entitled to all of %v; not scheduled", p.name, p.types)
			continue
		}
		s.ensureNamespaces(t, ns)
		c.addNamespace(ns)
		if p.claimTemplate != "" {
			s.claimPod(t, c, p, ns, ent)
			continue
		}
		pod := userPod("profile-"+p.name, ns, map[string]string{p.labelKey: p.name}, p.resource, p.count)
		created, err := c.dev.CoreV1().Pods(ns).Create(t.Context(), pod, metav1.CreateOptions{})
		if err != nil {
			t.Errorf("profile %s: a pod naming only its profile was not admitted: %v", p.name, err)
			continue
		}
		if err := c.checkMutated(created, p, ent); err != nil {
			t.Errorf("profile %s: %v", p.name, err)
			continue
		}
		node, err := s.waitBound(t.Context(), created)
		if err != nil {
			t.Errorf("profile %s: %v", p.name, err)
			continue
		}
		typ := node.Labels[c.typeLabel]
		if len(p.types) > 0 && !slices.Contains(p.types, typ) {
			t.Errorf("profile %s: kube-scheduler bound %s/%s to %s, a %q node; the profile allows %v", p.name, ns, pod.Name, node.Name, typ, p.types)
			continue
		}
		if len(p.types) == 0 && !slices.Contains(ent.types, typ) {
			t.Errorf("profile %s: kube-scheduler bound %s/%s to %s, a %q node; team %s may use %v", p.name, ns, pod.Name, node.Name, typ, ent.team, ent.types)
			continue
		}
		for k, v := range p.nodeSel {
			if node.Labels[k] != v {
				t.Errorf("profile %s: node %s has %s=%q, the profile selects %q", p.name, node.Name, k, node.Labels[k], v)
			}
		}
		allowed := p.types
		if len(allowed) == 0 {
			allowed = ent.types
		}
		s.annotationOnly(t, c, p, ns, ent, allowed)
		kind := "single-type"
		switch {
		case len(p.types) == 0:
			kind = "any-type"
		case len(p.types) > 1:
			kind = "multi-type"
		}
		if strings.Contains(string(p.resource), "mig-") || strings.Contains(node.Labels["nvidia.com/gpu.product"], "-MIG-") {
			kind += ", MIG"
		}
		t.Logf("profile %-14s (%s): %s/%s mutated and admitted, bound to %s (%s=%s, %s %s)",
			p.name, kind, ns, pod.Name, node.Name, c.typeLabel, typ, p.count.String(), p.resource)
	}
}

// claimPod: a profile that hands out devices by claim. A pod naming the
// profile and claiming with its ResourceClaimTemplate (which the tree put
// in the namespace) is mutated and admitted by the real webhooks, with no
// type affinity (the allocation places it); the same pod claiming with
// another template is denied. kube-scheduler's allocation of the claim is
// TestDRA's: no driver publishes ResourceSlices here, and no resourceclaim
// controller makes the pod's claim.
func (s *suite) claimPod(t *testing.T, c *clusterUnderTest, p profile, ns string, ent entitlement) {
	t.Helper()
	ctx := t.Context()
	if _, err := s.client.ResourceV1().ResourceClaimTemplates(ns).Get(ctx, p.claimTemplate, metav1.GetOptions{}); err != nil {
		t.Errorf("profile %s: the rendered ResourceClaimTemplate %s/%s: %v", p.name, ns, p.claimTemplate, err)
		return
	}
	pod := func(name, template string) *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Annotations: map[string]string{profileAnnotation: p.name}},
			Spec: corev1.PodSpec{
				ResourceClaims: []corev1.PodResourceClaim{{Name: "gpu", ResourceClaimTemplateName: &template}},
				Containers: []corev1.Container{{
					Name: "main", Image: "registry.k8s.io/pause:3.10",
					Resources: corev1.ResourceRequirements{Claims: []corev1.ResourceClaim{{Name: "gpu"}}},
				}},
			},
		}
	}
	if s.labelsFromQueue(c) {
		// Before 1.36, as annotationOnly: the queue label ODH writes, or
		// a refusal where the profile has no queue.
		if !s.olderRefused(t, c, p, ns, pod("claim-"+p.name, p.claimTemplate)) {
			return
		}
		plain := pod
		pod = func(name, template string) *corev1.Pod {
			made := plain(name, template)
			made.Labels = map[string]string{render.QueueNameLabel: p.queue}
			return made
		}
	}
	var created *corev1.Pod
	err := poll(ctx, gatekeeperTimeout, func(ctx context.Context) (bool, string, error) {
		var err error
		created, err = c.dev.CoreV1().Pods(ns).Create(ctx, pod("claim-"+p.name, p.claimTemplate), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err == nil && created.Labels[p.labelKey] == p.name, fmt.Sprintf("%v; labels %v", err, jsonString(created)), nil
	})
	if err != nil {
		t.Errorf("profile %s: a pod claiming with ResourceClaimTemplate %s was not admitted: %v", p.name, p.claimTemplate, err)
		return
	}
	if err := c.checkMutated(created, p, ent); err != nil {
		t.Errorf("profile %s: %v", p.name, err)
		return
	}
	if requires(created, c.typeLabel, p.types) {
		t.Errorf("profile %s hands out devices by claim, but its pod was given a type affinity: %s", p.name, jsonString(created.Spec.Affinity))
	}
	_, err = c.dev.CoreV1().Pods(ns).Create(ctx, pod("claim-other-"+p.name, "any-gpu"), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	if err == nil || !strings.Contains(err.Error(), "name that template") {
		t.Errorf("profile %s: a pod claiming with another template: want it denied, got %v", p.name, err)
		return
	}
	t.Logf("profile %-14s (claims): %s/%s named by annotation, labelled, mutated (no type affinity) and admitted claiming with ResourceClaimTemplate %s; with another template denied", p.name, ns, created.Name, p.claimTemplate)
}

// annotationOnly creates the pod of profilePods as Open Data Hub's
// controllers create theirs: the profile named only by ODH's annotation,
// no label. accelc's MutatingAdmissionPolicy gives it the profile label
// before Gatekeeper's webhook runs, so it must get what the labelled pod
// got: the same mutations, admission, and a node of the same types.
//
// Before 1.36 (s.older) no admission policy labels it: the pod is as ODH's
// stack makes it there, with the queue label its Notebook or
// InferenceService got from ODH's webhook (internal/odh), and Gatekeeper's
// mutator labels it from its queue; a profile that does not schedule
// through Kueue gets no queue label, and its annotation-only pod must be
// refused saying what to add (docs/policies.md, "Before Kubernetes 1.36").
func (s *suite) annotationOnly(t *testing.T, c *clusterUnderTest, p profile, ns string, ent entitlement, allowed []string) {
	t.Helper()
	pod := userPod("annotated-"+p.name, ns, nil, p.resource, p.count)
	pod.Annotations = map[string]string{profileAnnotation: p.name}
	by := "the MutatingAdmissionPolicy"
	if c.webhook {
		by = "accelc's webhook"
	}
	if s.labelsFromQueue(c) {
		if !s.olderRefused(t, c, p, ns, pod) {
			return
		}
		pod.Labels = map[string]string{render.QueueNameLabel: p.queue}
		by = "Gatekeeper from its queue label " + p.queue + " (as ODH's webhook writes it)"
	}
	var created *corev1.Pod
	// The API server takes the admission policy from an informer: retry
	// until it has it (the label appears), as a client would not need to.
	err := poll(t.Context(), gatekeeperTimeout, func(ctx context.Context) (bool, string, error) {
		dry, err := c.dev.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err != nil {
			return false, err.Error(), nil
		}
		if dry.Labels[p.labelKey] != p.name {
			return false, "not labelled by " + by + " yet: labels " + jsonString(dry.Labels), nil
		}
		created, err = c.dev.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
		return err == nil, fmt.Sprint(err), nil
	})
	if err != nil {
		t.Errorf("profile %s: a pod naming its profile only by annotation %s: %v", p.name, profileAnnotation, err)
		return
	}
	if err := c.checkMutated(created, p, ent); err != nil {
		t.Errorf("profile %s, named by annotation only: %v", p.name, err)
		return
	}
	node, err := s.waitBound(t.Context(), created)
	if err != nil {
		// Kueue queues it: where the profile's quota is held by the
		// labelled pod of the step before, it waits, gated, as it should.
		if live, gerr := s.client.CoreV1().Pods(ns).Get(t.Context(), created.Name, metav1.GetOptions{}); gerr == nil && slices.ContainsFunc(live.Spec.SchedulingGates, func(g corev1.PodSchedulingGate) bool { return g.Name == "kueue.x-k8s.io/admission" }) {
			t.Logf("profile %-14s named by annotation only: labelled by %s, mutated as the labelled pod, admitted, and waiting in Kueue's queue %s (its quota is in use): not bound, so its node is not checked", p.name, by, live.Labels["kueue.x-k8s.io/queue-name"])
			return
		}
		t.Errorf("profile %s, named by annotation only: %v", p.name, err)
		return
	}
	if typ := node.Labels[c.typeLabel]; !slices.Contains(allowed, typ) {
		t.Errorf("profile %s, named by annotation only: bound to %s, a %q node; the labelled pod may use %v", p.name, node.Name, typ, allowed)
		return
	}
	t.Logf("profile %-14s named by annotation only: labelled by %s, mutated as the labelled pod, admitted, bound to %s (%s)",
		p.name, by, node.Name, node.Labels[c.typeLabel])
}

// olderRefused is, before 1.36, the fate of a pod naming a profile that
// does not schedule through Kueue by ODH's annotation only: nothing
// labels it, so it must be refused, naming the profile (the documented
// difference from 1.36). It reports whether the profile schedules
// through Kueue, whose pod the caller plays instead.
func (s *suite) olderRefused(t *testing.T, c *clusterUnderTest, p profile, ns string, pod *corev1.Pod) bool {
	t.Helper()
	if p.queue != "" {
		return true
	}
	var msg string
	err := poll(t.Context(), gatekeeperTimeout, func(ctx context.Context) (bool, string, error) {
		_, err := c.dev.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err == nil {
			return false, "admitted", nil
		}
		msg = err.Error()
		return strings.Contains(msg, fmt.Sprintf("hardware profile %q", p.name)), msg, nil
	})
	if err != nil {
		t.Errorf("profile %s does not schedule through Kueue: on Kubernetes %s its pod naming it by annotation only must be refused naming it: %v", p.name, s.k8sVersion, err)
		return false
	}
	t.Logf("profile %-14s named by annotation only, on Kubernetes %s: refused, as documented for a profile that does not schedule through Kueue: %s", p.name, s.k8sVersion, firstLine(msg))
	return false
}

// profileAnnotation is Open Data Hub's reference from a workload to its
// HardwareProfile.
const profileAnnotation = "opendatahub.io/hardware-profile-name"

// entitledNamespace is the first namespace, by name, whose team may use
// the profile and every type (any entitled namespace for an any-type
// profile; profile "" for any profile of the types).
func (c *clusterUnderTest) entitledNamespace(profile string, types []string) (string, entitlement, bool) {
	var names []string
	for ns := range c.entitlements {
		names = append(names, ns)
	}
	slices.Sort(names)
	for _, ns := range names {
		e := c.entitlements[ns]
		if profile == "" {
			e.profiles = nil
		}
		if e.mayUse(profile, types) {
			return ns, c.entitlements[ns], true
		}
	}
	return "", entitlement{}, false
}

func (c *clusterUnderTest) addNamespace(ns string) {
	if !slices.Contains(c.namespaces, ns) {
		c.namespaces = append(c.namespaces, ns)
	}
}

// userPod is a pod as a user writes it: labels, one container, one
// accelerator request.
func userPod(name, ns string, labels map[string]string, res corev1.ResourceName, count resource.Quantity) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name:      "main",
			Image:     "quay.io/example/trainer:1.0",
			Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{res: count}},
		}}},
	}
}

// checkMutated checks what the mutation added to a profile's pod.
func (c *clusterUnderTest) checkMutated(pod *corev1.Pod, p profile, ent entitlement) error {
	var problems []string
	if got := pod.Annotations["opendatahub.io/hardware-profile-name"]; got != p.name {
		problems = append(problems, fmt.Sprintf("annotation opendatahub.io/hardware-profile-name=%q, want %q", got, p.name))
	}
	if got := pod.Annotations["accelerator.opendatahub.io/team"]; got != ent.team {
		problems = append(problems, fmt.Sprintf("annotation accelerator.opendatahub.io/team=%q, want %q", got, ent.team))
	}
	switch got := pod.Labels["kueue.x-k8s.io/queue-name"]; {
	case p.queue != "" && got != p.queue:
		problems = append(problems, fmt.Sprintf("label kueue.x-k8s.io/queue-name=%q, want the profile's queue %q", got, p.queue))
	case p.queue == "" && ent.queue != "" && got != ent.queue:
		problems = append(problems, fmt.Sprintf("label kueue.x-k8s.io/queue-name=%q, want the team's queue %q", got, ent.queue))
	}
	for _, want := range p.tolerations {
		if !slices.ContainsFunc(pod.Spec.Tolerations, func(got corev1.Toleration) bool {
			return got.Key == want.Key && got.Operator == want.Operator && got.Value == want.Value && got.Effect == want.Effect
		}) {
			problems = append(problems, fmt.Sprintf("no toleration %s", jsonString(want)))
		}
	}
	if len(p.types) > 0 && p.nodeSel[c.typeLabel] == "" && p.claimTemplate == "" {
		if !requires(pod, c.typeLabel, p.types) {
			problems = append(problems, fmt.Sprintf("neither node selector %s nor required node affinity %s In %v: %s, %s", c.typeLabel, c.typeLabel, p.types, jsonString(pod.Spec.NodeSelector), jsonString(pod.Spec.Affinity)))
		}
	}
	if len(p.types) > 0 && p.nodeSel[c.typeLabel] != "" && pod.Spec.NodeSelector[c.typeLabel] != p.nodeSel[c.typeLabel] &&
		!requires(pod, c.typeLabel, p.types) {
		problems = append(problems, fmt.Sprintf("neither nodeSelector nor required affinity on %s=%s", c.typeLabel, p.nodeSel[c.typeLabel]))
	}
	if len(problems) > 0 {
		return fmt.Errorf("the admitted pod lacks what the mutation adds: %s", strings.Join(problems, "; "))
	}
	return nil
}

// requires reports whether the pod's node selector gives key the one
// value (a one-type profile's, as the mutation writes it), or every
// required node-affinity term of the pod confines key to exactly the
// values.
func requires(pod *corev1.Pod, key string, values []string) bool {
	if v, ok := pod.Spec.NodeSelector[key]; ok && len(values) == 1 && v == values[0] {
		return true
	}
	a := pod.Spec.Affinity
	if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return false
	}
	terms := a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	if len(terms) == 0 {
		return false
	}
	for _, term := range terms {
		if !slices.ContainsFunc(term.MatchExpressions, func(e corev1.NodeSelectorRequirement) bool {
			got, want := slices.Clone(e.Values), slices.Clone(values)
			slices.Sort(got)
			slices.Sort(want)
			return e.Key == key && e.Operator == corev1.NodeSelectorOpIn && slices.Equal(got, want)
		}) {
			return false
		}
	}
	return true
}

// waitBound waits until kube-scheduler binds the pod and returns its node.
func (s *suite) waitBound(ctx context.Context, pod *corev1.Pod) (*corev1.Node, error) {
	var nodeName string
	err := poll(ctx, scheduleTimeout, func(ctx context.Context) (bool, string, error) {
		got, err := s.client.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error(), nil
		}
		nodeName = got.Spec.NodeName
		return nodeName != "", "not bound: " + scheduledCondition(got), nil
	})
	if err != nil {
		return nil, fmt.Errorf("kube-scheduler did not bind %s/%s: %v", pod.Namespace, pod.Name, err)
	}
	return s.client.CoreV1().Nodes().Get(ctx, nodeName, metav1.GetOptions{})
}

func scheduledCondition(p *corev1.Pod) string {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled {
			return fmt.Sprintf("PodScheduled=%s %s: %s", c.Status, c.Reason, c.Message)
		}
	}
	return "no PodScheduled condition"
}

// fixtures puts the example's admission fixtures (the hostile pods of the
// policies, and the ones that must pass) through the real webhooks as
// server-side dry runs, then, with the constraints at enforcementAction
// dryrun, creates the hostile pods for real and finds them in Gatekeeper's
// audit.
func (s *suite) fixtures(t *testing.T, c *clusterUnderTest) {
	t.Helper()
	dir := filepath.Join(s.root, "examples", "clusters", c.example)
	cases, err := policytest.ReadCases(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(cases.Cases) == 0 {
		t.Logf("no admission fixtures in %s", filepath.Join("examples", "clusters", c.example, policytest.CasesFile))
		return
	}
	type hostile struct {
		name   string
		obj    *unstructured.Unstructured
		re     *regexp.Regexp
		denial string // the webhook's message
	}
	var audited []hostile
	// The constraints as rendered, and at deny for the denials.
	var constraints []*unstructured.Unstructured
	for _, r := range c.objs {
		if r.group() == "constraints.gatekeeper.sh" {
			constraints = append(constraints, r.obj)
		}
	}
	for _, con := range constraints {
		if action, _, _ := unstructuredString(con.Object, "spec", "enforcementAction"); action != "deny" {
			t.Logf("%s renders enforcementAction %q: deny for the denials, then dryrun for the audit, then back", c.example, action)
			s.setEnforcement(t, con, "deny")
		}
	}
	inputs, err := policytest.ReadCaseInputs(dir, cases)
	if err != nil {
		t.Fatal(err)
	}
	objects := make([]*unstructured.Unstructured, len(inputs))
	for i, tc := range inputs {
		objs, err := controlplane.ReadObjects(filepath.Join(dir, filepath.Dir(policytest.CasesFile), tc.Object))
		if err != nil || len(objs) != 1 {
			t.Fatalf("case %s: %s: %v", tc.Name, tc.Object, err)
		}
		objects[i] = objs[0]
	}
	if s.labelsFromQueue(c) {
		s.odhForm(t, c, inputs, objects)
	}
	// A Job's UPDATE cases go first, while Kueue holds the old Jobs'
	// LocalQueues (createOldObjects): they replace a Job that waits
	// suspended, which Kueue would otherwise admit, and so unsuspend,
	// within moments of its making. The holds go once they are played.
	jobUpdate := func(i int) bool { return inputs[i].Operation == "UPDATE" && objects[i].GetKind() == "Job" }
	order := make([]int, len(inputs))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		switch ja, jb := jobUpdate(a), jobUpdate(b); {
		case ja && !jb:
			return -1
		case jb && !ja:
			return 1
		}
		return 0
	})
	ordered, orderedObjects := make([]policytest.CaseInput, len(order)), make([]*unstructured.Unstructured, len(order))
	for to, from := range order {
		ordered[to], orderedObjects[to] = inputs[from], objects[from]
	}
	inputs, objects = ordered, orderedObjects
	judge := s.offlineJudge(t, c, inputs)
	olds, releaseQueues := s.createOldObjects(t, c, inputs, objects, constraints)
	defer releaseQueues()
	same, denied, admitted, skipped, asWritten, beforeAdmission := 0, 0, 0, 0, 0, 0
	for i, tc := range inputs {
		obj := objects[i]
		if !jobUpdate(i) {
			releaseQueues()
		}
		if why := s.notServed(obj); why != "" {
			t.Logf("case %-32s skipped: %s", tc.Name, why)
			skipped++
			continue
		}
		s.ensureNamespaces(t, obj.GetNamespace())
		c.addNamespace(obj.GetNamespace())
		s.ensureRuntimeClass(t, obj)
		// accelc test's verdict, and the one the live request gets.
		offline, offlineMsgs := judge(tc)
		want, mutatedAway := offline, false
		if !tc.Mutate && tc.Operation != "UPDATE" {
			// A CREATE accelc test judges as written; the API server
			// runs the mutations first. Where they change what the
			// policies say, the fixture is one for accelc test alone,
			// and the live request is judged against the offline
			// verdict of the request as the API server sends it.
			mutated := tc
			mutated.Mutate = true
			if m, msgs := judge(mutated); !slices.Equal(msgs, offlineMsgs) {
				t.Logf("case %-32s as written: accelc test judges it unmutated (%s); the API server mutates it first, and then, offline and live: %s", tc.Name, verdict(offline), verdict(m))
				want, mutatedAway = m, true
				asWritten++
			}
		}
		switch {
		case s.older():
			olderVerdict(t, c.example, tc, offline)
		case !slices.Equal(offline, slices.Sorted(slices.Values(tc.Deny))):
			t.Errorf("case %s: accelc test's engine judges it %s, the case wants %s", tc.Name, verdict(offline), verdict(tc.Deny))
		}
		var up *update
		if tc.Operation == "UPDATE" {
			if olds[i] == nil {
				continue // said by createOldObjects
			}
			if why := s.labelledFromQueue(t, c, olds[i]); why != "" {
				t.Logf("case %-32s skipped live: %s", tc.Name, why)
				skipped++
				continue
			}
			up = &update{old: olds[i], sub: tc.SubResource, cs: c.dev, dyn: c.devDyn}
			if tc.User != "" {
				up.cs, up.dyn = s.userClient(t, tc.User)
			}
		}
		live, msg, err := s.liveVerdict(t.Context(), c, obj, up, want)
		switch {
		case invalidEphemeral(obj, err):
			// Gatekeeper never sees it: the API server's own validation
			// refuses resources on an ephemeral container.
			beforeAdmission++
			t.Logf("case %-32s refused by the API server before admission (offline: %s): %s", tc.Name, verdict(want), err)
			continue
		case err != nil:
			t.Errorf("case %s: %s: live %s, offline %s: %v", tc.Name, tc.Object, verdict(live), verdict(want), err)
			continue
		}
		same++
		if len(live) == 0 {
			admitted++
			t.Logf("case %-32s admitted, live and offline", tc.Name)
			if obj.GetKind() != "Pod" && tc.Mutate {
				s.controllerPod(t, c, tc.Name, obj)
			}
			continue
		}
		denied++
		re, err := regexp.Compile(tc.Message)
		if err != nil {
			t.Fatalf("case %s: message: %v", tc.Name, err)
		}
		if !mutatedAway && !re.MatchString(msg) {
			t.Errorf("case %s: %s as offline, but with a message not matching %q: %s", tc.Name, verdict(live), tc.Message, msg)
		}
		t.Logf("case %-32s %s, live and offline: %s", tc.Name, verdict(live), msg)
		if obj.GetKind() == "Pod" && !hasEphemeral(obj) && up == nil && !mutatedAway {
			if admissionOnly(msg) {
				t.Logf("case %-32s not for the audit: refused only for arriving without Kueue's gate, which the audit does not judge (a pod Kueue admitted has none)", tc.Name)
				continue
			}
			audited = append(audited, hostile{name: tc.Name, obj: obj, re: re, denial: msg})
		}
	}
	t.Logf("checked: %d of %d fixtures judged alike by the live webhook and accelc test's engine (%d denied by the same policies, %d admitted; %d of them as-written fixtures compared mutated), %d refused by the API server before admission, %d skipped",
		same, len(inputs), denied, admitted, asWritten, beforeAdmission, skipped)

	// enforcementAction dryrun: admitted, and found by the audit.
	if len(audited) == 0 {
		t.Logf("no hostile pods among the fixtures: no audit to check")
		return
	}
	for _, con := range constraints {
		s.setEnforcement(t, con, "dryrun")
	}
	// Kueue would admit them and write its flavour's node selector,
	// which can mend what the audit is to find: they are made as pods
	// Kueue does not manage.
	restoreKueue := s.kueuePodWebhookSkips(t, &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{
		Key: corev1.LabelMetadataName, Operator: metav1.LabelSelectorOpIn, Values: []string{"accelc-e2e-no-namespace"},
	}}})
	defer restoreKueue()
	for i, h := range audited {
		obj := h.obj.DeepCopy()
		obj.SetName(fmt.Sprintf("audit-%02d", i))
		// Held back from kube-scheduler, so that the audit sees the pod
		// as it was admitted (a bound pod has spec.nodeName, which the
		// policy judges too); the policies do not read the gates.
		if node, _, _ := unstructuredString(obj.Object, "spec", "nodeName"); node == "" {
			gates, _, _ := unstructured.NestedSlice(obj.Object, "spec", "schedulingGates")
			gates = append(gates, map[string]any{"name": "accelc.io/e2e-audit"})
			if err := unstructured.SetNestedSlice(obj.Object, gates, "spec", "schedulingGates"); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.createForReal(t.Context(), c, obj); err != nil {
			t.Errorf("case %s: with enforcementAction dryrun, creating %s was refused: %v", h.name, obj.GetName(), err)
		}
	}
	err = poll(t.Context(), gatekeeperTimeout+2*controlplane.AuditInterval, func(ctx context.Context) (bool, string, error) {
		var missing []string
		for i, h := range audited {
			name := fmt.Sprintf("audit-%02d", i)
			found := false
			for _, con := range constraints {
				live, err := s.get(ctx, con)
				if err != nil {
					return false, err.Error(), nil
				}
				vs, _, _ := unstructured.NestedSlice(live.Object, "status", "violations")
				for _, v := range vs {
					m, _ := v.(map[string]any)
					if m["name"] == name && m["namespace"] == h.obj.GetNamespace() && m["enforcementAction"] == "dryrun" && auditMatch(fmt.Sprint(m["message"]), h.re, h.denial) {
						found = true
					}
				}
			}
			if !found {
				missing = append(missing, h.name+" ("+h.obj.GetNamespace()+"/"+name+")")
			}
		}
		return len(missing) == 0, "not in the audit: " + strings.Join(missing, ", "), nil
	})
	zero := int64(0)
	for i, h := range audited {
		name := fmt.Sprintf("audit-%02d", i)
		if err := s.client.CoreV1().Pods(h.obj.GetNamespace()).Delete(t.Context(), name, metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("deleting %s/%s: %v", h.obj.GetNamespace(), name, err)
		}
	}
	if err != nil {
		t.Errorf("Gatekeeper's audit: %v", err)
	} else {
		t.Logf("checked: with enforcementAction dryrun the %d hostile pods were created, and Gatekeeper's audit lists each in the constraint's status.violations with its message", len(audited))
	}
	for _, con := range constraints {
		action, _, _ := unstructuredString(con.Object, "spec", "enforcementAction")
		if action == "" {
			action = "deny"
		}
		if action != "dryrun" {
			s.setEnforcement(t, con, action)
		}
	}
}

// odhForm gives, before 1.36, the fixtures that are mutated CREATEs of
// workloads naming their profile by ODH's annotation only the queue label
// ODH's webhook writes from their HardwareProfile (internal/odh), as they
// reach the API server on an Open Data Hub cluster; the hostile fixtures
// that are not mutated are sent as written.
func (s *suite) odhForm(t *testing.T, c *clusterUnderTest, inputs []policytest.CaseInput, objects []*unstructured.Unstructured) {
	t.Helper()
	queues := map[string]string{}
	for _, p := range c.profiles {
		queues[p.name] = p.queue
	}
	n := 0
	for i := range inputs {
		if !inputs[i].Mutate || inputs[i].Operation == "UPDATE" {
			continue
		}
		if !odh.QueueLabelled(objects[i], c.profileLabel(), func(p string) string { return queues[p] }) {
			continue
		}
		data, err := yaml.Marshal(objects[i].Object)
		if err != nil {
			t.Fatal(err)
		}
		inputs[i].ObjectData = data
		n++
		t.Logf("case %-32s as ODH writes it on Kubernetes %s: queue label %s", inputs[i].Name, s.k8sVersion, objects[i].GetLabels()[render.QueueNameLabel])
	}
	t.Logf("%d fixtures given the queue label ODH's webhook writes", n)
}

// labelledFromQueue says, before 1.36, why an UPDATE case cannot be
// played live when the old object the harness made got a profile label
// from its queue that the fixture's old object lacks: the harness makes
// the object an UPDATE replaces with the tree's mutators on (at deny),
// and before 1.36 a mutator labels a workload's template from its queue,
// so the object stored is not the one made before deny that the case
// describes (and that accelc test judges). "" when it can be played.
func (s *suite) labelledFromQueue(t *testing.T, c *clusterUnderTest, old *unstructured.Unstructured) string {
	t.Helper()
	if !s.labelsFromQueue(c) {
		return ""
	}
	live, err := s.get(t.Context(), old)
	if err != nil {
		return ""
	}
	path := []string{"spec", "template", "metadata", "labels", c.profileLabel()}
	stored, _, _ := unstructured.NestedString(live.Object, path...)
	written, _, _ := unstructured.NestedString(old.Object, path...)
	if stored == "" || written != "" {
		return ""
	}
	return fmt.Sprintf("the old %s was made at deny, where its queue label %s gave its template profile label %s; the case's is one made before deny, without it (accelc test judges that one)",
		old.GetKind(), old.GetLabels()[render.QueueNameLabel], stored)
}

// olderVerdict holds a case's verdict before 1.36 to its 1.36 one (the
// case's deny list): admitted on both or refused on both, refused by at
// least the policies 1.36 refuses it by, but for the cases
// odh.OlderMinorDiffers names.
func olderVerdict(t *testing.T, example string, tc policytest.CaseInput, got []string) {
	t.Helper()
	want := slices.Sorted(slices.Values(tc.Deny))
	why, listed := odh.OlderMinorDiffers[example+"/"+tc.Name]
	switch {
	case (len(got) == 0) != (len(want) == 0) && listed:
		t.Logf("case %-32s %s here, %s on 1.36: expected (%s)", tc.Name, verdict(got), verdict(want), why)
	case (len(got) == 0) != (len(want) == 0):
		t.Errorf("case %s: %s here, but %s on 1.36", tc.Name, verdict(got), verdict(want))
	case listed:
		t.Errorf("case %s: odh.OlderMinorDiffers lists it, but it is %s here as on 1.36: take it out", tc.Name, verdict(got))
	case !isSubset(want, got):
		t.Errorf("case %s: %s here, %s on 1.36", tc.Name, verdict(got), verdict(want))
	case !slices.Equal(want, got):
		t.Logf("case %-32s %s here, %s on 1.36", tc.Name, verdict(got), verdict(want))
	}
}

func isSubset(a, b []string) bool {
	for _, x := range a {
		if !slices.Contains(b, x) {
			return false
		}
	}
	return true
}

// ensureRuntimeClass creates the RuntimeClass a pod fixture names, as the
// GPU Operator creates "nvidia" on a GPU cluster, so that the API server's
// RuntimeClass admission lets the pod through to Gatekeeper.
func (s *suite) ensureRuntimeClass(t *testing.T, obj *unstructured.Unstructured) {
	t.Helper()
	name, _, _ := unstructuredString(obj.Object, "spec", "runtimeClassName")
	if name == "" {
		return
	}
	_, err := s.client.NodeV1().RuntimeClasses().Create(t.Context(), &nodev1.RuntimeClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Handler: name}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("creating RuntimeClass %s: %v", name, err)
	}
}

// auditMatch reports whether an audit violation's message is the
// fixture's: it matches the fixture's pattern, or it is the message the
// webhook denied with, cut as the audit cuts messages over 256 bytes.
func auditMatch(msg string, re *regexp.Regexp, denial string) bool {
	if re.MatchString(msg) {
		return true
	}
	cut, ok := strings.CutSuffix(msg, "...")
	return ok && len(msg) == 256 && denial != "" && strings.Contains(denial, cut)
}

// unreachable says why a fixture cannot be played against a live API
// server, or "".
func (c *clusterUnderTest) unreachable(s *suite, obj *unstructured.Unstructured, tc policytest.Case, predict func(engine.Request) []string) string {
	gvk := obj.GroupVersionKind()
	if gvk.Group != "" && gvk.Group != "apps" && gvk.Group != "batch" {
		list, err := s.client.Discovery().ServerResourcesForGroupVersion(gvk.GroupVersion().String())
		if err != nil || !slices.ContainsFunc(list.APIResources, func(r metav1.APIResource) bool { return r.Kind == gvk.Kind }) {
			return fmt.Sprintf("%s is not served here (no CRD for it in %s)", gvk.Kind, gvk.GroupVersion())
		}
	}
	if !tc.Mutate && len(tc.Deny) > 0 {
		// A live API server always runs the MutatingAdmissionPolicy and
		// Gatekeeper's mutators first. A fixture they turn into an
		// admissible pod, or one denied for something else, is checked
		// unmutated only by accelc test.
		req := engine.Request{Object: obj, Operation: tc.Operation, SubResource: tc.SubResource}
		if tc.OldObject != "" {
			olds, err := controlplane.ReadObjects(filepath.Join(s.root, "examples", "clusters", c.example, filepath.Dir(policytest.CasesFile), tc.OldObject))
			if err == nil && len(olds) == 1 {
				req.OldObject = olds[0]
			}
		}
		msgs := predict(req)
		if len(msgs) == 0 {
			return "the mutators turn it into a pod the policies admit (a fixture for accelc test's unmutated run)"
		}
		re := regexp.MustCompile(tc.Message)
		if !slices.ContainsFunc(msgs, re.MatchString) {
			return fmt.Sprintf("once mutated it is denied for something else (%s): a fixture for accelc test's unmutated run", strings.Join(msgs, "; "))
		}
	}
	return ""
}

// tree is the rendered tree applied here, as accelc's engine reads it:
// each file's bytes by its path, each file read once.
func (c *clusterUnderTest) tree(tb testing.TB) render.Tree {
	tb.Helper()
	tree := render.Tree{}
	for _, r := range c.objs {
		p := filepath.ToSlash(r.file)
		if _, done := tree[p]; done {
			continue
		}
		b, err := os.ReadFile(filepath.Join(c.out, r.file))
		if err != nil {
			tb.Fatal(err)
		}
		tree[p] = b
	}
	return tree
}

// predictor judges a fixture as the live API server will, offline: the
// MutatingAdmissionPolicy's effect and Gatekeeper's mutators
// (engine.Mutator), then the constraint with Gatekeeper's engine over
// the tree and the live Nodes. It returns the violations' messages.
func (s *suite) predictor(t *testing.T, c *clusterUnderTest, namespaces []string) func(engine.Request) []string {
	t.Helper()
	tree := c.tree(t)
	nodes, err := s.client.CoreV1().Nodes().List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var synced []*unstructured.Unstructured
	for i := range nodes.Items {
		n := nodes.Items[i]
		n.APIVersion, n.Kind = "v1", "Node"
		u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&n)
		if err != nil {
			t.Fatal(err)
		}
		synced = append(synced, &unstructured.Unstructured{Object: u})
	}
	reviewer, err := engine.NewReviewer(t.Context(), tree, synced...)
	if err != nil {
		t.Fatal(err)
	}
	for ns := range c.entitlements {
		if !slices.Contains(namespaces, ns) {
			namespaces = append(namespaces, ns)
		}
	}
	mutator, err := engine.NewMutator(tree, namespaces)
	if err != nil {
		t.Fatal(err)
	}
	return func(req engine.Request) []string {
		req.Object = req.Object.DeepCopy()
		d, err := mutator.Admit(t.Context(), reviewer, req)
		if err != nil {
			t.Fatalf("admitting %s offline: %v", req.Object.GetName(), err)
		}
		return d.Messages
	}
}

// notServed says why a fixture's kind cannot be made on this API server
// (no CRD serves it), or "".
func (s *suite) notServed(obj *unstructured.Unstructured) string {
	gvk := obj.GroupVersionKind()
	if gvk.Group != "" && gvk.Group != "apps" && gvk.Group != "batch" {
		list, err := s.client.Discovery().ServerResourcesForGroupVersion(gvk.GroupVersion().String())
		if err != nil || !slices.ContainsFunc(list.APIResources, func(r metav1.APIResource) bool { return r.Kind == gvk.Kind }) {
			return fmt.Sprintf("%s is not served here (no CRD for it in %s)", gvk.Kind, gvk.GroupVersion())
		}
	}
	return ""
}

// offlineJudge judges a case as accelc test does (engine.CaseJudge), over
// the tree applied here with the inventory's Nodes as accelc test syncs
// them. It returns the policies that deny the case, sorted (none:
// admitted), and the violations' messages.
func (s *suite) offlineJudge(t *testing.T, c *clusterUnderTest, inputs []policytest.CaseInput) func(policytest.CaseInput) ([]string, []string) {
	t.Helper()
	tree := c.tree(t)
	nodes, err := policytest.Nodes(c.typeLabel, c.nodeTypes)
	if err != nil {
		t.Fatal(err)
	}
	judge, err := engine.NewCaseJudge(t.Context(), tree, nodes, inputs)
	if err != nil {
		t.Fatal(err)
	}
	return func(tc policytest.CaseInput) ([]string, []string) {
		d, _, err := judge.Judge(t.Context(), tc)
		if err != nil {
			t.Fatalf("case %s: judging it offline: %v", tc.Name, err)
		}
		if d.Refused != "" {
			return []string{refusedByAPIServer}, []string{d.Refused}
		}
		return denyingPolicies(d.Messages...), d.Messages
	}
}

// denyingPolicies are the accelc policies whose violations are among the
// messages (each starts with its policy's name, after an expansion's
// "[Implied by …] " or the webhook's "[<constraint>] "), sorted.
// policyDenial starts a denial by accelc-pod-admission, the API server's
// own judgement of the common GPU pod on Kubernetes 1.36, which words
// its message as Gatekeeper does.
var policyDenial = regexp.MustCompile(`ValidatingAdmissionPolicy '` + render.PodAdmissionPolicyName + `' with binding '[^']*' denied request: `)

// accelcDenied is accelc's admission denial in an error's text — by
// Gatekeeper's validating webhook or by accelc-pod-admission — and
// whether there is one.
func isAccelcDenial(text string) bool {
	_, ok := accelcDenied(text)
	return ok
}

func accelcDenied(text string) (string, bool) {
	if _, msg, ok := strings.Cut(text, deniedBy+": "); ok {
		return msg, true
	}
	if loc := policyDenial.FindStringIndex(text); loc != nil {
		return text[loc[1]:], true
	}
	return "", false
}

func denyingPolicies(msgs ...string) []string {
	var out []string
	for _, p := range policies.All {
		re := regexp.MustCompile(`(^|\] )` + regexp.QuoteMeta(p.Dir) + ": ")
		if slices.ContainsFunc(msgs, re.MatchString) {
			out = append(out, p.Dir)
		}
	}
	slices.Sort(out)
	return out
}

// refusedByAPIServer stands, among the policies of a verdict, for the
// API server refusing the request as invalid after the mutations, before
// Gatekeeper validates it (engine.Decision's Refused).
const refusedByAPIServer = "(the API server)"

// verdict says a list of denying policies in words.
func verdict(policies []string) string {
	if slices.Equal(policies, []string{refusedByAPIServer}) {
		return "refused as invalid by the API server before Gatekeeper validates it"
	}
	if len(policies) == 0 {
		return "admitted"
	}
	return "denied by " + strings.Join(policies, ", ")
}

// createOldObjects makes, for real, the object each UPDATE case replaces,
// as it was made before the cluster enforced anything (the constraints at
// dryrun meanwhile: a fixture's old object may be one admitted before its
// namespace moved to deny), and returns them by case; nil for a CREATE.
func (s *suite) createOldObjects(t *testing.T, c *clusterUnderTest, inputs []policytest.CaseInput, objects []*unstructured.Unstructured, constraints []*unstructured.Unstructured) (olds []*unstructured.Unstructured, releaseQueues func()) {
	t.Helper()
	olds = make([]*unstructured.Unstructured, len(inputs))
	var held []*unstructured.Unstructured
	releaseQueues = func() {
		for _, lq := range held {
			s.stopLocalQueue(t, lq.GetNamespace(), lq.GetName(), "None")
		}
		held = nil
	}
	var todo []int
	for i, tc := range inputs {
		if tc.Operation != "UPDATE" || s.notServed(objects[i]) != "" {
			continue
		}
		if tc.OldObject == "" {
			t.Errorf("case %s: an UPDATE without oldObject cannot be played on a live cluster: give the object as stored before it", tc.Name)
			continue
		}
		todo = append(todo, i)
	}
	if len(todo) == 0 {
		return olds, releaseQueues
	}
	for _, con := range constraints {
		s.setEnforcement(t, con, "dryrun")
	}
	// Nor did Kueue manage their namespaces then: a bound pod from before
	// has no scheduling gate (the API server refuses a gated pod with a
	// node).
	restore := s.kueuePodWebhookSkips(t, &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{
		Key: corev1.LabelMetadataName, Operator: metav1.LabelSelectorOpIn, Values: []string{"accelc-e2e-no-namespace"},
	}}})
	defer restore()
	for _, i := range todo {
		tc := inputs[i]
		objs, err := controlplane.ReadObjects(filepath.Join(s.root, "examples", "clusters", c.example, filepath.Dir(policytest.CasesFile), tc.OldObject))
		if err != nil || len(objs) != 1 {
			t.Fatalf("case %s: %s: %v", tc.Name, tc.OldObject, err)
		}
		old := objs[0]
		s.ensureNamespaces(t, old.GetNamespace())
		c.addNamespace(old.GetNamespace())
		if q := old.GetLabels()[render.QueueNameLabel]; q != "" && old.GetKind() == "Job" && !slices.ContainsFunc(held, func(lq *unstructured.Unstructured) bool {
			return lq.GetNamespace() == old.GetNamespace() && lq.GetName() == q
		}) && s.stopLocalQueue(t, old.GetNamespace(), q, "Hold") {
			lq := &unstructured.Unstructured{}
			lq.SetNamespace(old.GetNamespace())
			lq.SetName(q)
			held = append(held, lq)
		}
		made := old.DeepCopy()
		// What the API server sets itself.
		for _, f := range []string{"uid", "resourceVersion", "generation", "creationTimestamp", "managedFields"} {
			unstructured.RemoveNestedField(made.Object, "metadata", f)
		}
		unstructured.RemoveNestedField(made.Object, "status")
		if err := s.createForReal(t.Context(), c, made); err != nil {
			t.Errorf("case %s: creating the object the UPDATE replaces: %v", tc.Name, err)
			continue
		}
		olds[i] = old
	}
	for _, con := range constraints {
		s.setEnforcement(t, con, "deny")
	}
	return olds, releaseQueues
}

// admissionOnly reports whether every violation in the webhook's message
// is of the rule only admission judges: a new queued pod that arrived
// without Kueue's scheduling gate.
func admissionOnly(msg string) bool {
	n := 0
	for _, line := range strings.Split(msg, "\n") {
		if !strings.Contains(line, "[accelc]") {
			continue
		}
		n++
		if !strings.Contains(line, "reached admission without Kueue's scheduling gate") {
			return false
		}
	}
	return n > 0
}

// stopLocalQueue sets a LocalQueue's stopPolicy: Hold keeps Kueue from
// admitting its pending workloads (a Job stays suspended, as one waiting
// for quota does), None lets it go on. It reports whether the queue is
// there.
func (s *suite) stopLocalQueue(t *testing.T, ns, name, policy string) bool {
	t.Helper()
	patch := []byte(`{"spec":{"stopPolicy":"` + policy + `"}}`)
	_, err := s.dyn.Resource(localQueueGVR).Namespace(ns).Patch(t.Context(), name, types.MergePatchType, patch, metav1.PatchOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return false
	case err != nil:
		t.Errorf("LocalQueue %s/%s: stopPolicy %s: %v", ns, name, policy, err)
		return false
	}
	return true
}

// liveVerdict sends the case's request as a server-side dry run and
// returns the policies Gatekeeper denied it by (none: admitted) and its
// message, retrying, while Gatekeeper may still be syncing what the
// policies read, until the verdict is want.
func (s *suite) liveVerdict(ctx context.Context, c *clusterUnderTest, obj *unstructured.Unstructured, up *update, want []string) ([]string, string, error) {
	var live []string
	var msg string
	var sent error
	err := poll(ctx, gatekeeperTimeout, func(ctx context.Context) (bool, string, error) {
		sent = s.sendAs(ctx, c, obj, up, true)
		live, msg = nil, ""
		switch {
		case sent == nil:
		case invalidEphemeral(obj, sent):
			return true, "", nil
		case apierrors.IsInvalid(sent) && !isAccelcDenial(sent.Error()):
			live, msg = []string{refusedByAPIServer}, sent.Error()
		case !isAccelcDenial(sent.Error()):
			return false, "refused, but not by Gatekeeper: " + sent.Error(), nil
		default:
			msg, _ = accelcDenied(sent.Error())
			live = denyingPolicies(strings.Split(msg, "\n")...)
		}
		if !slices.Equal(live, want) {
			return false, fmt.Sprintf("live %s: %s", verdict(live), msg), nil
		}
		return true, "", nil
	})
	if invalidEphemeral(obj, sent) {
		return nil, "", sent
	}
	return live, msg, err
}

func hasEphemeral(obj *unstructured.Unstructured) bool {
	ec, _, _ := unstructured.NestedSlice(obj.Object, "spec", "ephemeralContainers")
	return len(ec) > 0
}

// invalidEphemeral reports whether err is the API server refusing the
// pod's ephemeral containers as invalid.
func invalidEphemeral(obj *unstructured.Unstructured, err error) bool {
	return err != nil && hasEphemeral(obj) && strings.Contains(err.Error(), "is invalid: spec.ephemeralContainers")
}

// denied creates the object as a server-side dry run and wants Gatekeeper
// to deny it with a message matching re; it returns that message.
func (s *suite) denied(ctx context.Context, c *clusterUnderTest, obj *unstructured.Unstructured, up *update, re *regexp.Regexp) (string, error) {
	var msg string
	err := poll(ctx, gatekeeperTimeout, func(ctx context.Context) (bool, string, error) {
		err := s.sendAs(ctx, c, obj, up, true)
		if err == nil {
			return false, "admitted", nil
		}
		msg = err.Error()
		if apierrors.IsInvalid(err) {
			return false, "", err
		}
		if !isAccelcDenial(msg) {
			return false, "refused, but not by Gatekeeper: " + msg, nil
		}
		if !re.MatchString(msg) {
			return false, "denied with another message: " + msg, nil
		}
		return true, "", nil
	})
	after, _ := accelcDenied(msg)
	return after, err
}

// createForReal creates the object, retrying while Gatekeeper may not have
// taken a change of enforcement yet.
func (s *suite) createForReal(ctx context.Context, c *clusterUnderTest, obj *unstructured.Unstructured) error {
	return poll(ctx, gatekeeperTimeout, func(ctx context.Context) (bool, string, error) {
		err := s.createAs(ctx, c, obj, false)
		if err == nil || apierrors.IsAlreadyExists(err) {
			return true, "", nil
		}
		return false, err.Error(), nil
	})
}

// update is an UPDATE fixture's request: the pod it replaces, which is
// created for real first, and the subresource it goes through.
type update struct {
	old *unstructured.Unstructured
	sub string
	// The clients of the request's user.
	cs  kubernetes.Interface
	dyn dynamic.Interface
}

// sendAs sends the fixture's request as devUser: a CREATE, or the UPDATE
// of the live old pod to obj (through the ephemeralcontainers
// subresource where up says so).
func (s *suite) sendAs(ctx context.Context, c *clusterUnderTest, obj *unstructured.Unstructured, up *update, dryRun bool) error {
	if up == nil {
		return s.createAs(ctx, c, obj, dryRun)
	}
	opts := metav1.UpdateOptions{}
	if dryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	if obj.GetKind() != "Pod" || obj.GroupVersionKind().Group != "" {
		// A workload: what the case changes from its old object to its
		// object, as a merge patch on the object as the API server keeps
		// it (the API server set fields the fixtures need not write: a
		// Job's selector, defaults). Admission sees a PATCH as an UPDATE.
		r, err := s.resource(up.dyn, obj)
		if err != nil {
			return err
		}
		patch, err := json.Marshal(mergePatch(up.old.Object, obj.Object))
		if err != nil {
			return err
		}
		_, err = r.Patch(ctx, up.old.GetName(), types.MergePatchType, patch, metav1.PatchOptions{DryRun: opts.DryRun})
		return err
	}
	pods := up.cs.CoreV1().Pods(obj.GetNamespace())
	live, err := pods.Get(ctx, up.old.GetName(), metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("reading the pod the UPDATE replaces: %w", err)
	}
	var written corev1.Pod
	if err := convert(obj.Object, &written); err != nil {
		return err
	}
	var was corev1.Pod
	if err := convert(up.old.Object, &was); err != nil {
		return err
	}
	// What an UPDATE can change, from the fixture; the rest (what the API
	// server filled in, which may not change) from the live pod. Labels
	// and annotations change as the fixture changes them: what admission
	// added to the live pod when it was made stays, as it would for the
	// controller that sends the UPDATE.
	pod := live.DeepCopy()
	pod.Labels = changed(live.Labels, was.Labels, written.Labels)
	pod.Annotations = changed(live.Annotations, was.Annotations, written.Annotations)
	pod.Finalizers, pod.OwnerReferences = written.Finalizers, written.OwnerReferences
	pod.Spec.Tolerations = append(written.Spec.Tolerations, newTolerations(written.Spec.Tolerations, live.Spec.Tolerations)...)
	pod.Spec.EphemeralContainers = written.Spec.EphemeralContainers
	for i := range pod.Spec.EphemeralContainers {
		ec := &pod.Spec.EphemeralContainers[i]
		ec.TerminationMessagePath, ec.TerminationMessagePolicy, ec.ImagePullPolicy = "/dev/termination-log", corev1.TerminationMessageReadFile, corev1.PullIfNotPresent
	}
	if up.sub == "ephemeralcontainers" {
		_, err = pods.UpdateEphemeralContainers(ctx, pod.Name, pod, opts)
		return err
	}
	_, err = pods.Update(ctx, pod, opts)
	return err
}

// mergePatch is the JSON merge patch (RFC 7386) that makes from into to.
func mergePatch(from, to map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range to {
		old, had := from[k]
		switch {
		case had && reflect.DeepEqual(old, v):
		case isMap(old) && isMap(v):
			out[k] = mergePatch(old.(map[string]any), v.(map[string]any))
		default:
			out[k] = v
		}
	}
	for k := range from {
		if _, ok := to[k]; !ok {
			out[k] = nil
		}
	}
	return out
}

func isMap(v any) bool {
	_, ok := v.(map[string]any)
	return ok
}

// changed applies to live what the fixture's UPDATE changes from was to
// now: keys it drops, adds or sets to another value.
func changed(live, was, now map[string]string) map[string]string {
	out := maps.Clone(live)
	if out == nil {
		out = map[string]string{}
	}
	for k := range was {
		if _, ok := now[k]; !ok {
			delete(out, k)
		}
	}
	for k, v := range now {
		if was[k] != v || out[k] == "" {
			out[k] = v
		}
	}
	return out
}

// newTolerations are the tolerations the API server added to the live
// pod (its defaults) that the fixture does not list.
func newTolerations(written, live []corev1.Toleration) []corev1.Toleration {
	var out []corev1.Toleration
	for _, t := range live {
		if !slices.ContainsFunc(written, func(w corev1.Toleration) bool { return w.Key == t.Key && w.Effect == t.Effect }) {
			out = append(out, t)
		}
	}
	return out
}

// createAs creates the object as devUser. A pod with ephemeral containers
// is created without them and then given them through the
// pods/ephemeralcontainers subresource, the only way they can be added.
func (s *suite) createAs(ctx context.Context, c *clusterUnderTest, obj *unstructured.Unstructured, dryRun bool) error {
	opts := metav1.CreateOptions{}
	if dryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	ns := obj.GetNamespace()
	switch obj.GetKind() {
	case "Pod":
		var pod corev1.Pod
		if err := convert(obj.Object, &pod); err != nil {
			return err
		}
		ephemeral := pod.Spec.EphemeralContainers
		pod.Spec.EphemeralContainers = nil
		if len(ephemeral) == 0 {
			_, err := c.dev.CoreV1().Pods(ns).Create(ctx, &pod, opts)
			return err
		}
		// The pod itself is created for real (it is admitted: its
		// accelerator is only in the ephemeral container); the update
		// is the request under test.
		if dryRun {
			pod.Name += "-dry"
		}
		created, err := c.dev.CoreV1().Pods(ns).Create(ctx, &pod, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			created, err = c.dev.CoreV1().Pods(ns).Get(ctx, pod.Name, metav1.GetOptions{})
		}
		if err != nil {
			return fmt.Errorf("creating the pod without its ephemeral containers: %w", err)
		}
		uopts := metav1.UpdateOptions{DryRun: opts.DryRun}
		// A kubelet and the scheduler write to the pod too: on a
		// conflict, the same request on the pod as it now is.
		return retry.RetryOnConflict(retry.DefaultRetry, func() error {
			created.Spec.EphemeralContainers = ephemeral
			_, err := c.dev.CoreV1().Pods(ns).UpdateEphemeralContainers(ctx, created.Name, created, uopts)
			if apierrors.IsConflict(err) {
				if live, gerr := c.dev.CoreV1().Pods(ns).Get(ctx, pod.Name, metav1.GetOptions{}); gerr == nil {
					created = live
				}
			}
			return err
		})
	default:
		// Workloads: through the dynamic client with the user's rights.
		r, err := s.resource(c.devDyn, obj)
		if err != nil {
			return err
		}
		_, err = r.Create(ctx, obj, opts)
		return err
	}
}

// setEnforcement sets the constraint's enforcementAction and waits until
// Gatekeeper enforces the new generation.
func (s *suite) setEnforcement(t *testing.T, con *unstructured.Unstructured, action string) {
	t.Helper()
	patch, _ := json.Marshal(map[string]any{"spec": map[string]any{"enforcementAction": action}})
	r, err := s.resource(s.dyn, con)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Patch(t.Context(), con.GetName(), types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatalf("setting %s/%s enforcementAction %s: %v", con.GetKind(), con.GetName(), action, err)
	}
	if err := s.waitTaken(t.Context(), con); err != nil {
		t.Fatalf("Gatekeeper did not take %s/%s with enforcementAction %s: %v", con.GetKind(), con.GetName(), action, err)
	}
	t.Logf("%s/%s: enforcementAction %s, taken by Gatekeeper", con.GetKind(), con.GetName(), action)
	// On 1.36 the API server judges the common GPU pod of the namespaces
	// that deny (accelc-pod-admission), which no constraint's action
	// reaches: the constraint that denies as rendered has its bindings'
	// validationActions follow it, as docs/policies.md tells an admin who
	// relaxes it live to do (accelc status notes the mismatch otherwise).
	if rendered, _, _ := unstructuredString(con.Object, "spec", "enforcementAction"); rendered == "" || rendered == "deny" {
		s.setPodAdmissionActions(t, action)
	}
}

// setPodAdmissionActions gives every binding of accelc-pod-admission the
// validationActions of a constraint's enforcementAction: deny Deny, warn
// Warn, dryrun Audit; nothing where the tree renders no such policy.
func (s *suite) setPodAdmissionActions(t *testing.T, action string) {
	t.Helper()
	actions := map[string]admissionregistrationv1.ValidationAction{
		"deny": admissionregistrationv1.Deny, "warn": admissionregistrationv1.Warn, "dryrun": admissionregistrationv1.Audit,
	}[action]
	api := s.client.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings()
	list, err := api.List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatalf("listing ValidatingAdmissionPolicyBindings: %v", err)
	}
	var set []string
	for _, b := range list.Items {
		if b.Spec.PolicyName != render.PodAdmissionPolicyName || slices.Equal(b.Spec.ValidationActions, []admissionregistrationv1.ValidationAction{actions}) {
			continue
		}
		patch, _ := json.Marshal(map[string]any{"spec": map[string]any{"validationActions": []admissionregistrationv1.ValidationAction{actions}}})
		if _, err := api.Patch(t.Context(), b.Name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			t.Fatalf("setting ValidatingAdmissionPolicyBinding %s's validationActions to [%s]: %v", b.Name, actions, err)
		}
		set = append(set, b.Name)
	}
	if len(set) > 0 {
		// The API server rebuilds its admission policies from its
		// informers once a second (policyRefreshInterval in
		// k8s.io/apiserver's generic policy source); no status says when
		// a binding took effect, so three of those rounds are waited.
		time.Sleep(3 * time.Second)
		t.Logf("%d binding(s) of %s: validationActions [%s]", len(set), render.PodAdmissionPolicyName, actions)
	}
}

// convert turns unstructured content into a typed object.
func convert(in any, out any) error {
	switch v := in.(type) {
	case map[string]any:
		return runtime.DefaultUnstructuredConverter.FromUnstructured(v, out)
	default:
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		return json.Unmarshal(b, out)
	}
}

// unstructuredString is a string field, "" when missing.
func unstructuredString(obj map[string]any, fields ...string) (string, bool, error) {
	return unstructured.NestedString(obj, fields...)
}

// ref is a pointer to a copy of v.
func ref[T any](v T) *T { return &v }

// controllerPod creates an admitted workload for real, and the pod its
// controller would make from it as the API server stored it (with the
// admission policies' label): the template's metadata and spec for the
// built-in kinds and Kubeflow's jobs, the Notebook's own labels and its
// template's spec for a Notebook (engine.ControllerPod). It wants the pod
// admitted after Gatekeeper's mutators, and bound by kube-scheduler to a
// node of a type its profile allows. (No kube-controller-manager runs
// here: the test makes the pod as the controller would.)
func (s *suite) controllerPod(t *testing.T, c *clusterUnderTest, name string, obj *unstructured.Unstructured) {
	t.Helper()
	live, err := s.get(t.Context(), obj)
	if apierrors.IsNotFound(err) {
		if err = s.createForReal(t.Context(), c, obj); err == nil {
			live, err = s.get(t.Context(), obj)
		}
	}
	if err != nil {
		t.Errorf("case %s: creating %s and reading it back: %v", name, obj.GetName(), err)
		return
	}
	pods := engine.ControllerPods(live)
	if len(pods) == 0 {
		t.Errorf("case %s: %s is not a workload kind accelc knows", name, obj.GetKind())
		return
	}
	made := 0
	for _, p := range pods {
		if s.controllerPodBound(t, c, name, obj, p) {
			made++
		}
	}
	if made == 0 {
		t.Errorf("case %s: none of the %s's %d templates names a profile: the workload's MutatingAdmissionPolicy did not label it", name, obj.GetKind(), len(pods))
	}
}

// controllerPodBound makes the pod of one of an admitted workload's
// templates and wants it bound to a node of a type its profile allows. A
// template that names no profile (a RayCluster's CPU head) makes none; a
// template the workload policy labels must carry the label, one in a list
// (a RayCluster's worker groups, whose pods the pod policy labels when
// they are made) ODH's annotation at least.
func (s *suite) controllerPodBound(t *testing.T, c *clusterUnderTest, name string, obj *unstructured.Unstructured, at engine.PodAt) bool {
	t.Helper()
	pod := at.Pod
	profileName, _, _ := unstructured.NestedString(pod.Object, "metadata", "labels", c.profileLabel())
	inList := strings.Contains(at.Where, "[")
	byAnnotation := false
	if profileName == "" && inList {
		profileName, _, _ = unstructured.NestedString(pod.Object, "metadata", "annotations", render.ProfileAnnotation)
		byAnnotation = profileName != ""
	}
	if profileName == "" && s.labelsFromQueue(c) {
		// Before 1.36 a Notebook's pod is labelled when it is made, from
		// the queue label it takes from the Notebook.
		queue, _, _ := unstructured.NestedString(pod.Object, "metadata", "labels", render.QueueNameLabel)
		for _, p := range c.profiles {
			if queue != "" && p.queue == queue {
				profileName = p.name
			}
		}
	}
	if profileName == "" {
		return false
	}
	var allowed []string
	for _, p := range c.profiles {
		if p.name == profileName {
			allowed = p.types
			if len(allowed) == 0 {
				allowed = c.entitlements[obj.GetNamespace()].types
			}
		}
	}
	if queue, _, _ := unstructured.NestedString(pod.Object, "metadata", "labels", render.QueueNameLabel); s.labelsFromQueue(c) && byAnnotation && queue == "" {
		// Before 1.36 nothing labels the pod of a listed template that
		// names its profile by annotation only and joins no queue (its
		// controller copies neither the workload's queue label nor
		// anything else): refused when made, saying what to add
		// (docs/policies.md, "Before Kubernetes 1.36"). The constraints
		// deny already (the workload was judged), so one request says.
		err := s.createAs(t.Context(), c, pod, false)
		if err == nil {
			t.Errorf("case %s: on Kubernetes %s the pod its %s makes from %s, naming profile %s by annotation only, was admitted; want it refused", name, s.k8sVersion, obj.GetKind(), at.Where, profileName)
			return true
		}
		t.Logf("case %-32s its %s's pod from %s (profile %s by annotation only) refused when made, as documented before 1.36: %s", name, obj.GetKind(), at.Where, profileName, firstLine(err.Error()))
		return true
	}
	if err := s.createForReal(t.Context(), c, pod); err != nil {
		t.Errorf("case %s: the pod its %s makes from %s was refused: %v", name, obj.GetKind(), at.Where, err)
		return true
	}
	var created corev1.Pod
	live, err := s.get(t.Context(), pod)
	if err == nil {
		err = convert(live.Object, &created)
	}
	if err != nil {
		t.Errorf("case %s: %v", name, err)
		return true
	}
	node, err := s.waitBound(t.Context(), &created)
	if err != nil {
		t.Errorf("case %s: the pod its %s makes from %s: %v", name, obj.GetKind(), at.Where, err)
		return true
	}
	if typ := node.Labels[c.typeLabel]; !slices.Contains(allowed, typ) {
		t.Errorf("case %s: the pod its %s makes from %s was bound to %s, a %q node; profile %s allows %v", name, obj.GetKind(), at.Where, node.Name, typ, profileName, allowed)
		return true
	}
	t.Logf("case %-32s its %s's pod from %s, made as its controller would (profile %s), admitted and bound to %s (%s)", name, obj.GetKind(), at.Where, profileName, node.Name, node.Labels[c.typeLabel])
	return true
}

// profileLabel is the label users name a profile with (accelc's
// <prefix>/profile), as the profiles were read from the tree.
func (c *clusterUnderTest) profileLabel() string {
	for _, p := range c.profiles {
		if p.labelKey != "" {
			return p.labelKey
		}
	}
	return ""
}

// kueuePodWebhookSkips gives Kueue's pod webhook (mpod.kb.io), where Kueue
// runs, the namespace selector sel until restore is called; the caller's
// creates retry while the API server's webhook cache catches up. Without
// Kueue it does nothing.
func (s *suite) kueuePodWebhookSkips(t *testing.T, sel *metav1.LabelSelector) (restore func()) {
	t.Helper()
	ctx := t.Context()
	hooks := s.client.AdmissionregistrationV1().MutatingWebhookConfigurations()
	list, err := hooks.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, cfg := range list.Items {
		for i, h := range cfg.Webhooks {
			if h.Name != "mpod.kb.io" {
				continue
			}
			name, orig := cfg.Name, h.NamespaceSelector
			set := func(ctx context.Context, sel *metav1.LabelSelector) error {
				return retry.RetryOnConflict(retry.DefaultRetry, func() error {
					cfg, err := hooks.Get(ctx, name, metav1.GetOptions{})
					if err != nil {
						return err
					}
					cfg.Webhooks[i].NamespaceSelector = sel
					_, err = hooks.Update(ctx, cfg, metav1.UpdateOptions{})
					return err
				})
			}
			if err := set(ctx, sel); err != nil {
				t.Fatalf("narrowing Kueue's pod webhook: %v", err)
			}
			return func() {
				if err := set(context.Background(), orig); err != nil {
					t.Errorf("restoring Kueue's pod webhook: %v", err)
				}
			}
		}
	}
	return func() {}
}
