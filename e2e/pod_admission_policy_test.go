//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"github.com/accelc/accelc/internal/controlplane"
	"github.com/accelc/accelc/pkg/accelc"
	"github.com/accelc/accelc/pkg/compile"
	"github.com/accelc/accelc/pkg/inventory"
	"github.com/accelc/accelc/pkg/policytest/engine"
	"github.com/accelc/accelc/pkg/render"
)

// TestPodAdmissionPolicy: on Kubernetes 1.36 the API server judges the
// common GPU pod itself (the rendered accelc-pod-admission
// ValidatingAdmissionPolicy, its parameter the live HardwareProfile), and
// Gatekeeper's validating webhook is not sent it. That is safe only if
// the policy refuses exactly what the admission constraint's Rego
// refuses, for every pod it judges. For every example, and for
// hetero-prod with profiles changed live (disabled in the dashboard,
// retired, their counts and tolerations edited), the escape check's
// generated pods (half a team's legitimate pod with a quarter of each
// hostile feature's odds, half drawn freely, and its legitimate pods and
// workloads' controller pods) are made — server-side dry run, as the
// user or controller that makes each — through a real API server with
// the tree's pod policies, the admission policy's bindings set to warn
// so that each pod comes back with its verdict; each pod the policy
// judges (a probe policy of the same match conditions says which) is
// then judged as stored by the Rego (Gatekeeper's own engine), and the
// two verdicts must agree.
func TestPodAdmissionPolicy(t *testing.T) {
	s := newSuite(t)
	if s.older() {
		t.Skipf("Kubernetes %s: Gatekeeper judges every pod there", s.k8sVersion)
	}
	s.cp = controlplane.Start(t)
	s.connect(t)
	if _, err := controlplane.ApplyCRDs(t.Context(), s.dyn, filepath.Join(s.root, "tools", "e2e", "crds", "infrastructure.opendatahub.io_hardwareprofiles.yaml")); err != nil {
		t.Fatal(err)
	}
	// $ACCELC_POD_ADMISSION_PODS draws more (each example's first fifth
	// of admitted pods, at most 20, get the variants).
	pods := 300
	if n, err := strconv.Atoi(os.Getenv("ACCELC_POD_ADMISSION_PODS")); err == nil && n > 0 {
		pods = n
	}
	for _, example := range []string{"hetero-prod", "gpu-pools", "small-lab", "tpu-trainium"} {
		t.Run(example, func(t *testing.T) {
			res, err := accelc.Cluster(t.Context(), s.clusterPath(example), accelc.Options{Stages: accelc.Rendered})
			if err != nil {
				t.Fatal(err)
			}
			checkPodAdmission(t, s, example, res.Model, res.Inventory, res.Tree, pods, 1)
		})
	}
	// A fleet of 500 teams (1,000 namespaces) and 100 profiles: the
	// teams' entitlements are more than one CEL expression takes.
	t.Run("fleet", func(t *testing.T) {
		m := fleetModel(t, 500, 100)
		inv := &inventory.Inventory{}
		tree, err := render.Cluster(m, inv)
		if err != nil {
			t.Fatal(err)
		}
		checkPodAdmission(t, s, "fleet", m, inv, tree, pods/3, 3)
	})
	// A profile retired in the CUE, as a commit retires it: its
	// HardwareProfile rendered disabled and naming its replacement, its
	// mutators gone.
	t.Run("hetero-prod-retired-in-tree", func(t *testing.T) {
		root := t.TempDir()
		src := filepath.Join(s.root, "examples", "clusters")
		for _, d := range []string{"cue.mod", "fleet", "hetero-prod"} {
			if err := os.CopyFS(filepath.Join(root, d), os.DirFS(filepath.Join(src, d))); err != nil {
				t.Fatal(err)
			}
		}
		dir := filepath.Join(root, "hetero-prod")
		retire := `package cluster

profiles: "large-gpu": retired: replacement: "large-memory"

profiles: "a100-batch": {
	displayName: "A100 batch"
	acceleratorTypes: ["nvidia-a100-80gb"]
	tolerations: [{key: "nvidia.com/gpu", operator: "Exists", effect: "NoSchedule"}]
	retired: replacement: "premium-gpu"
}
`
		if err := os.WriteFile(filepath.Join(dir, "retire.cue"), []byte(retire), 0o644); err != nil {
			t.Fatal(err)
		}
		res, err := accelc.Cluster(t.Context(), dir, accelc.Options{Stages: accelc.Rendered})
		if err != nil {
			t.Fatal(err)
		}
		// As a user writes a pod of it: ODH's annotation alone.
		checkPodAdmission(t, s, "hetero-prod-retired-in-tree", res.Model, res.Inventory, res.Tree, pods, 4, retiringPodOf("ml-research", "large-gpu"), retiringPodOf("serving-prod", "large-gpu"), retiringPodOf("ml-research", "a100-batch"))
	})
	// Profiles changed in the cluster, not in the tree (the dashboard, an
	// admin's kubectl): the policy reads the live profile, and the Rego
	// the synced one.
	res, err := accelc.Cluster(t.Context(), s.clusterPath("hetero-prod"), accelc.Options{Stages: accelc.Rendered})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name    string
		profile string
		edit    func(p *unstructured.Unstructured)
	}{
		{"disabled", "large-gpu", func(p *unstructured.Unstructured) { setAnnotation(p, "opendatahub.io/disabled", "true") }},
		{"retired", "premium-gpu", func(p *unstructured.Unstructured) {
			setAnnotation(p, res.Model.Cluster.LabelPrefix+"/"+render.AnnotationRetired, "large-memory")
		}},
		{"retired-no-replacement", "standard-gpu", func(p *unstructured.Unstructured) {
			setAnnotation(p, res.Model.Cluster.LabelPrefix+"/"+render.AnnotationRetired, "")
		}},
		{"fewer-devices", "gpu", func(p *unstructured.Unstructured) {
			ids, _, _ := unstructured.NestedSlice(p.Object, "spec", "identifiers")
			for _, id := range ids {
				if m := id.(map[string]any); m["resourceType"] == "Accelerator" {
					m["maxCount"], m["minCount"] = int64(2), "2"
				}
			}
			_ = unstructured.SetNestedSlice(p.Object, ids, "spec", "identifiers")
		}},
		{"tolerations-edited", "large-memory", func(p *unstructured.Unstructured) {
			setAnnotation(p, res.Model.Cluster.LabelPrefix+"/"+render.AnnotationTolerations, `[{"key":"nvidia.com/gpu","operator":"Exists","effect":"NoSchedule"}]`)
		}},
		{"types-reordered", "large-memory", func(p *unstructured.Unstructured) {
			setAnnotation(p, res.Model.Cluster.LabelPrefix+"/"+render.AnnotationTypes, "nvidia-a100-80gb,nvidia-h200-141gb")
		}},
	} {
		t.Run("hetero-prod-"+c.name, func(t *testing.T) {
			tree := render.Tree{}
			for p, b := range res.Tree {
				tree[p] = b
			}
			path := "profiles/hardwareprofile-" + c.profile + ".yaml"
			var p unstructured.Unstructured
			if err := yaml.Unmarshal(tree[path], &p.Object); err != nil {
				t.Fatal(err)
			}
			c.edit(&p)
			b, err := yaml.Marshal(p.Object)
			if err != nil {
				t.Fatal(err)
			}
			tree[path] = b
			checkPodAdmission(t, s, "hetero-prod", res.Model, res.Inventory, tree, pods/3, 2)
		})
	}
}

func setAnnotation(obj *unstructured.Unstructured, key, value string) {
	a := obj.GetAnnotations()
	if a == nil {
		a = map[string]string{}
	}
	a[key] = value
	obj.SetAnnotations(a)
}

// variantBases is how many admitted pods of an example's generated ones
// get the variants that each break one rule (40 each).
const variantBases = 20

// judgedHere is the probe policy's message: the pod meets the admission
// policy's match conditions that say it is judged there (all but
// render.PodRulesCondition, which says it breaks a rule).
const judgedHere = "judged by accelc-pod-admission"

// checkPodAdmission applies the tree's profiles, priority classes, pod
// policies and admission policy (its bindings, and a probe policy of the
// same match conditions, set to warn), then makes n generated pods
// (seed) and compares each verdict of the admission policy with the
// Rego's.
func checkPodAdmission(t *testing.T, s *suite, example string, m *compile.Model, inv *inventory.Inventory, tree render.Tree, n int, seed uint64, written ...*unstructured.Unstructured) {
	t.Helper()
	check, err := engine.NewEscapeCheck(t.Context(), m, inv, tree)
	if err != nil {
		t.Fatal(err)
	}
	requests := check.GeneratedPods(seed, n)
	for _, w := range written {
		requests = append(requests, engine.Request{Object: w})
	}
	n = len(requests)
	namespaces := []string{m.Cluster.ProfileNamespace, "no-team"}
	for _, team := range m.Teams {
		namespaces = append(namespaces, team.Namespaces...)
	}
	namespaces = append(namespaces, m.Cluster.GenericGPUNamespaces...)
	for _, r := range requests {
		namespaces = append(namespaces, r.Object.GetNamespace())
	}
	slices.Sort(namespaces)
	s.ensureNamespaces(t, slices.Compact(namespaces)...)
	dir := t.TempDir()
	var binding map[string]any
	var conditions []any
	for _, p := range tree.Paths() {
		var u unstructured.Unstructured
		if err := yaml.Unmarshal(tree[p], &u.Object); err != nil {
			t.Fatal(err)
		}
		switch {
		case strings.HasPrefix(p, "priorities/priorityclass-"), strings.HasPrefix(p, "profiles/hardwareprofile-"),
			strings.HasPrefix(p, "mutations/mutatingadmissionpolicy-"+render.PodProfilePolicyName+"."),
			strings.HasPrefix(p, "mutations/mutatingadmissionpolicybinding-"+render.PodProfilePolicyName+"."):
		case strings.HasPrefix(p, "policies/validatingadmissionpolicybinding-"):
			_ = unstructured.SetNestedStringSlice(u.Object, []string{"Warn"}, "spec", "validationActions")
			if u.GetName() != render.UnknownProfilePolicyName {
				binding, _, _ = unstructured.NestedMap(u.Object, "spec", "matchResources")
			}
		case strings.HasPrefix(p, "policies/validatingadmissionpolicy-"):
			if u.GetName() == render.PodAdmissionPolicyName {
				all, _, _ := unstructured.NestedSlice(u.Object, "spec", "matchConditions")
				for _, c := range all {
					if c, _ := c.(map[string]any); c["name"] != render.PodRulesCondition {
						conditions = append(conditions, c)
					}
				}
			}
		default:
			continue
		}
		b, err := yaml.Marshal(u.Object)
		if err != nil {
			t.Fatal(err)
		}
		file := filepath.Join(dir, strings.ReplaceAll(p, "/", "-"))
		if err := os.WriteFile(file, b, 0o644); err != nil {
			t.Fatal(err)
		}
		s.mustKubectl(t, "apply", "--server-side", "--force-conflicts", "-f", file)
	}
	if binding == nil || conditions == nil {
		t.Fatalf("%s: no %s and binding rendered for Kubernetes 1.36", example, render.PodAdmissionPolicyName)
	}
	delete(binding, "objectSelector")
	probe := []map[string]any{{
		"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy", "metadata": map[string]any{"name": "probe"},
		"spec": map[string]any{
			"matchConstraints": map[string]any{"resourceRules": []any{map[string]any{"apiGroups": []any{""}, "apiVersions": []any{"v1"}, "operations": []any{"CREATE"}, "resources": []any{"pods"}}}},
			"matchConditions":  conditions,
			"validations":      []any{map[string]any{"expression": "false", "message": judgedHere}},
		},
	}, {
		"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding", "metadata": map[string]any{"name": "probe"},
		"spec": map[string]any{"policyName": "probe", "validationActions": []any{"Warn"}, "matchResources": binding},
	}}
	// Kueue's pod webhook, as the escape check's engine has it: a new pod
	// with a LocalQueue label in a namespace Kueue manages, whose
	// controller is not of a kind Kueue admits whole, is gated.
	if kueued := render.KueueNamespaces(m); len(kueued) > 0 {
		probe = append(probe, map[string]any{
			"apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingAdmissionPolicy", "metadata": map[string]any{"name": "zz-kueue-pod-webhook"},
			"spec": map[string]any{
				"matchConstraints":   map[string]any{"resourceRules": []any{map[string]any{"apiGroups": []any{""}, "apiVersions": []any{"v1"}, "operations": []any{"CREATE"}, "resources": []any{"pods"}}}},
				"reinvocationPolicy": "IfNeeded",
				"failurePolicy":      "Fail",
				"matchConditions": []any{map[string]any{"name": "queued", "expression": `has(object.metadata.labels) && "kueue.x-k8s.io/queue-name" in object.metadata.labels && object.metadata.labels["kueue.x-k8s.io/queue-name"] != "" && ` +
					`!(has(object.metadata.ownerReferences) && object.metadata.ownerReferences.exists(o, has(o.controller) && o.controller && o.apiVersion.startsWith("batch/") && o.kind == "Job")) && ` +
					`!(has(object.spec.schedulingGates) && object.spec.schedulingGates.exists(g, g.name == "kueue.x-k8s.io/admission"))`}},
				"mutations": []any{map[string]any{"patchType": "JSONPatch", "jsonPatch": map[string]any{"expression": `has(object.spec.schedulingGates) ? ` +
					`[JSONPatch{op: "add", path: "/spec/schedulingGates/-", value: {"name": "kueue.x-k8s.io/admission"}}] : ` +
					`[JSONPatch{op: "add", path: "/spec/schedulingGates", value: [{"name": "kueue.x-k8s.io/admission"}]}]`}}},
			},
		}, map[string]any{
			"apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingAdmissionPolicyBinding", "metadata": map[string]any{"name": "zz-kueue-pod-webhook"},
			"spec": map[string]any{"policyName": "zz-kueue-pod-webhook", "matchResources": map[string]any{"namespaceSelector": map[string]any{
				"matchExpressions": []any{map[string]any{"key": "kubernetes.io/metadata.name", "operator": "In", "values": kueued}}}}},
		})
	}
	for i, o := range probe {
		b, err := yaml.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		file := filepath.Join(dir, fmt.Sprintf("probe-%d.yaml", i))
		if err := os.WriteFile(file, b, 0o644); err != nil {
			t.Fatal(err)
		}
		s.mustKubectl(t, "apply", "--server-side", "--force-conflicts", "-f", file)
	}

	clients := map[string]*warnedClient{}
	dryRun := func(r engine.Request) (*unstructured.Unstructured, []string, error) {
		c, ok := clients[r.User]
		if !ok {
			c = newWarnedClient(t, s.cp.RESTConfig(), r.User)
			clients[r.User] = c
		}
		return c.create(t, r.Object)
	}
	verdict := func(warnings []string) (judged bool, denials []string) {
		for _, w := range warnings {
			switch {
			case strings.Contains(w, judgedHere):
				judged = true
			case strings.Contains(w, render.PodAdmissionPolicyName):
				denials = append(denials, w)
			}
		}
		return judged, denials
	}
	// The policies, and a profile changed live, reach the API server's
	// admission a moment after they are written: wait until every pod
	// of the first 200 the Rego and the policy both judge agree, or 60s.
	settle := requests[:min(200, len(requests))]
	deadline := time.Now().Add(60 * time.Second)
	for {
		agree, judged := true, 0
		for _, r := range settle {
			live, warnings, err := dryRun(r)
			if err != nil {
				continue
			}
			here, denials := verdict(warnings)
			if !here {
				continue
			}
			judged++
			messages, err := check.JudgeStored(t.Context(), engine.Request{Object: live, User: r.User, KueueSkipped: true})
			if err != nil {
				t.Fatal(err)
			}
			if (len(messages) == 0) != (len(denials) == 0) {
				agree = false
				break
			}
		}
		if agree && judged > 0 {
			break
		}
		if time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Second)
	}
	var judged, denied, refused, gatekeeper, verbatim int
	worded := map[string]int{} // the Rego's messages the policy words otherwise, by their first words
	var bases []engine.Request
	for i := 0; i < len(requests); i++ {
		r := requests[i]
		live, warnings, err := dryRun(r)
		if err != nil {
			refused++
			continue
		}
		here, denials := verdict(warnings)
		if !here {
			gatekeeper++
			continue
		}
		judged++
		messages, err := check.JudgeStored(t.Context(), engine.Request{Object: live, User: r.User, KueueSkipped: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(messages) > 0 {
			denied++
			joined := strings.Join(denials, "; ")
			for _, m := range messages {
				if strings.Contains(joined, "] "+m) {
					verbatim++
				} else {
					worded[strings.SplitN(m, " ", 3)[0]+" "+strings.SplitN(m, " ", 3)[1]]++
				}
			}
		}
		if (len(messages) == 0) == (len(denials) == 0) {
			if rego, here := regoPolicies(messages), denyingPolicies(strings.Split(strings.Join(denials, "\n"), "\n")...); !slices.Equal(rego, here) {
				written, _ := yaml.Marshal(r.Object.Object)
				t.Errorf("%s pod %d (by %s): refused by the Rego's %v and accelc-pod-admission's %v: %s\n%s\nwritten:\n%s", example, i, r.User, rego, here, strings.Join(messages, "; "), strings.Join(denials, "; "), written)
			}
			if len(messages) == 0 && i < n && len(bases) < min(n/5, variantBases) {
				// An admitted pod of the generated ones: each of its
				// variants that breaks one rule is judged too.
				bases = append(bases, r)
				requests = append(requests, perturbed(m, r)...)
			}
			continue
		}
		written, _ := yaml.Marshal(r.Object.Object)
		stored, _ := yaml.Marshal(live.Object)
		if len(denials) == 0 {
			t.Errorf("%s pod %d (by %s): the Rego refuses it and accelc-pod-admission admits it: %s\nwritten:\n%s\nas stored:\n%s", example, i, r.User, strings.Join(messages, "; "), written, stored)
		} else {
			t.Errorf("%s pod %d (by %s): accelc-pod-admission refuses it and the Rego admits it: %s\nwritten:\n%s\nas stored:\n%s", example, i, r.User, strings.Join(denials, "; "), written, stored)
		}
	}
	t.Logf("%s: %d pods (%d of them variants of %d admitted ones): %d judged by the API server (%d refused, as by the Rego), %d left to Gatekeeper, %d refused by Kubernetes' own validation", example, len(requests), len(requests)-n, len(bases), judged, denied, gatekeeper, refused)
	t.Logf("%s: %d of the Rego's messages in the policy's denials word for word; worded otherwise: %v", example, verbatim, worded)
	// A check that judged nothing, or refused or admitted everything,
	// proves nothing.
	if judged < len(requests)/10 || denied == 0 || denied == judged {
		t.Errorf("%s: %d of %d pods judged by the policy, %d of them refused: the generated pods do not exercise it", example, judged, len(requests), denied)
	}
	for _, o := range probe {
		md := o["metadata"].(map[string]any)
		s.mustKubectl(t, "delete", strings.ToLower(o["kind"].(string)), md["name"].(string))
	}
}

// warnedClient makes dry-run pods as one user (impersonated), keeping
// the warnings of each response.
type warnedClient struct {
	client   kubernetes.Interface
	mu       sync.Mutex
	warnings []string
}

func newWarnedClient(t *testing.T, cfg *rest.Config, user string) *warnedClient {
	t.Helper()
	c := &warnedClient{}
	cfg = rest.CopyConfig(cfg)
	if user != "" {
		cfg.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: []string{"system:masters"}}
	} else {
		cfg.Impersonate = rest.ImpersonationConfig{UserName: engine.DefaultUser, Groups: []string{"system:masters"}}
	}
	cfg.WarningHandler = c
	var err error
	if c.client, err = kubernetes.NewForConfig(cfg); err != nil {
		t.Fatal(err)
	}
	return c
}

// HandleWarningHeader keeps a response's warning.
func (c *warnedClient) HandleWarningHeader(_ int, _ string, text string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.warnings = append(c.warnings, text)
}

// create makes obj (a pod) by server-side dry run: the pod as stored,
// and the warnings.
func (c *warnedClient) create(t *testing.T, obj *unstructured.Unstructured) (*unstructured.Unstructured, []string, error) {
	c.mu.Lock()
	c.warnings = nil
	c.mu.Unlock()
	body, err := obj.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	raw, err := c.client.CoreV1().RESTClient().Post().Namespace(obj.GetNamespace()).Resource("pods").
		Param("dryRun", metav1.DryRunAll).Body(body).SetHeader("Content-Type", "application/json").Do(t.Context()).Raw()
	c.mu.Lock()
	warnings := slices.Clone(c.warnings)
	c.mu.Unlock()
	if err != nil {
		return nil, warnings, err
	}
	var live unstructured.Unstructured
	if err := live.UnmarshalJSON(raw); err != nil {
		t.Fatal(err)
	}
	return &live, warnings, nil
}

// perturbed are variants of an admitted pod's request, each changed in
// one thing a rule of the policies reads: a toleration, the devices it
// asks for (more, none, another vendor's, in an init container or a
// sidecar), its node selector and affinity, the cost annotations, the
// queue and priority, its owner, ODH's profile namespace.
func perturbed(m *compile.Model, r engine.Request) []engine.Request {
	typeLabel, poolLabel, prefix := m.Cluster.TypeLabel(), m.Cluster.PoolLabel(), m.Cluster.LabelPrefix
	var classes []string
	for c := range m.Cluster.PriorityClasses {
		classes = append(classes, c)
	}
	slices.Sort(classes)
	var types []string
	for _, e := range m.Catalog.Classes() {
		types = append(types, e.ID)
	}
	var out []engine.Request
	vary := func(change func(pod map[string]any, md, spec, c map[string]any)) {
		obj := r.Object.DeepCopy()
		obj.SetName(obj.GetName() + fmt.Sprintf("-v%d", len(out)))
		md := obj.Object["metadata"].(map[string]any)
		spec := obj.Object["spec"].(map[string]any)
		c := spec["containers"].([]any)[0].(map[string]any)
		change(obj.Object, md, spec, c)
		out = append(out, engine.Request{Object: obj, User: r.User})
	}
	set := func(md map[string]any, field, k, v string) {
		m, _ := md[field].(map[string]any)
		if m == nil {
			m = map[string]any{}
		}
		m[k] = v
		md[field] = m
	}
	resource := func(c map[string]any) (string, map[string]any) {
		res, _ := c["resources"].(map[string]any)
		if res == nil {
			res = map[string]any{}
			c["resources"] = res
		}
		limits, _ := res["limits"].(map[string]any)
		if limits == nil {
			limits = map[string]any{}
			res["limits"] = limits
		}
		for k := range limits {
			if strings.Contains(k, "/") {
				return k, limits
			}
		}
		return "nvidia.com/gpu", limits
	}
	for _, tol := range []map[string]any{
		{"key": "nvidia.com/gpu", "operator": "Exists"},
		{"key": "nvidia.com/gpu", "operator": "Equal", "value": "other", "effect": "NoSchedule"},
		{"operator": "Exists"},
		{"key": poolLabel, "operator": "Equal", "value": "premium", "effect": "NoSchedule"},
		{"key": "example.com/own", "operator": "Exists"},
	} {
		vary(func(_ map[string]any, _, spec, _ map[string]any) {
			list, _ := spec["tolerations"].([]any)
			spec["tolerations"] = append(slices.Clone(list), tol)
		})
	}
	// A toleration of the profile's key for another effect, for a while.
	vary(func(_ map[string]any, _, spec, _ map[string]any) {
		list, _ := spec["tolerations"].([]any)
		spec["tolerations"] = append(slices.Clone(list), map[string]any{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": int64(300)})
	})
	// Huge: 5,000 tolerations of its own and 500 required terms (each of
	// which the pod policy confines), past which CEL's cost budget would
	// refuse it.
	vary(func(_ map[string]any, _, spec, _ map[string]any) {
		list, _ := spec["tolerations"].([]any)
		list = slices.Clone(list)
		var terms []any
		for i := range 5000 {
			list = append(list, map[string]any{"key": fmt.Sprintf("example.com/own-%d", i), "operator": "Exists"})
			if i%10 == 0 {
				terms = append(terms, map[string]any{"matchExpressions": []any{map[string]any{"key": fmt.Sprintf("example.com/zone-%d", i), "operator": "Exists"}}})
			}
		}
		spec["tolerations"] = list
		spec["affinity"] = map[string]any{"nodeAffinity": map[string]any{"requiredDuringSchedulingIgnoredDuringExecution": map[string]any{"nodeSelectorTerms": terms}}}
	})
	// The devices split over two containers, together over the most.
	vary(func(_ map[string]any, _, spec, c map[string]any) {
		name, limits := resource(c)
		limits[name] = int64(5)
		if res := c["resources"].(map[string]any); res["requests"] != nil {
			res["requests"].(map[string]any)[name] = int64(5)
		}
		spec["containers"] = append(spec["containers"].([]any), map[string]any{"name": "second", "image": "busybox", "resources": map[string]any{"limits": map[string]any{name: int64(5)}}})
	})
	for _, n := range []int64{0, 3, 5, 9, 17} {
		vary(func(_ map[string]any, _, _, c map[string]any) {
			name, limits := resource(c)
			limits[name] = n
			if res := c["resources"].(map[string]any); res["requests"] != nil {
				res["requests"].(map[string]any)[name] = n
			}
		})
	}
	vary(func(_ map[string]any, _, spec, c map[string]any) {
		name, _ := resource(c)
		spec["containers"] = append(spec["containers"].([]any), map[string]any{"name": "other", "image": "busybox", "resources": map[string]any{"limits": map[string]any{"amd.com/gpu": int64(1)}}})
		_ = name
	})
	for _, sidecar := range []bool{false, true} {
		vary(func(_ map[string]any, _, spec, c map[string]any) {
			name, _ := resource(c)
			init := map[string]any{"name": "init", "image": "busybox", "resources": map[string]any{"limits": map[string]any{name: int64(4)}}}
			if sidecar {
				init["restartPolicy"] = "Always"
			}
			spec["initContainers"] = []any{init}
		})
	}
	for _, t := range append(types[:min(3, len(types))], "mixed") {
		vary(func(_ map[string]any, _, spec, _ map[string]any) { set(spec, "nodeSelector", typeLabel, t) })
		vary(func(_ map[string]any, _, spec, _ map[string]any) {
			spec["affinity"] = map[string]any{"nodeAffinity": map[string]any{"requiredDuringSchedulingIgnoredDuringExecution": map[string]any{"nodeSelectorTerms": []any{
				map[string]any{"matchExpressions": []any{map[string]any{"key": typeLabel, "operator": "In", "values": []any{t}}}},
			}}}}
		})
	}
	vary(func(_ map[string]any, _, spec, _ map[string]any) { set(spec, "nodeSelector", poolLabel, "other") })
	for _, a := range []struct{ k, v string }{{prefix + "/type", types[0]}, {prefix + "/types", strings.Join(types[:min(2, len(types))], ",")}, {prefix + "/team", "other-team"}, {"opendatahub.io/hardware-profile-namespace", "elsewhere"}} {
		vary(func(_ map[string]any, md, _, _ map[string]any) { set(md, "annotations", a.k, a.v) })
	}
	vary(func(_ map[string]any, md, _, _ map[string]any) {
		set(md, "labels", "kueue.x-k8s.io/queue-name", "other")
	})
	for _, c := range classes {
		vary(func(_ map[string]any, md, _, _ map[string]any) { set(md, "labels", "kueue.x-k8s.io/priority-class", c) })
		vary(func(_ map[string]any, _, spec, _ map[string]any) { spec["priorityClassName"] = c })
	}
	for _, owner := range []struct{ apiVersion, kind string }{{"batch/v1", "Job"}, {"apps/v1", "ReplicaSet"}, {"kubeflow.org/v1", "PyTorchJob"}, {"ray.io/v1", "RayCluster"}} {
		vary(func(_ map[string]any, md, _, _ map[string]any) {
			md["ownerReferences"] = []any{map[string]any{"apiVersion": owner.apiVersion, "kind": owner.kind, "name": "owner", "uid": "00000000-0000-0000-0000-0000000000bb", "controller": true}}
		})
	}
	return out
}

// regoPolicies are the policies of the Rego's violation messages (each
// "<policy>: <message>"), sorted.
func regoPolicies(messages []string) []string {
	var out []string
	for _, m := range messages {
		p, _, _ := strings.Cut(m, ": ")
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}

// retiringPodOf is a pod of a profile named only by ODH's annotation,
// asking for one GPU.
func retiringPodOf(namespace, profile string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{
			"name": "odh-" + profile, "namespace": namespace,
			"annotations": map[string]any{render.ProfileAnnotation: profile},
		},
		"spec": map[string]any{"containers": []any{map[string]any{
			"name": "main", "image": "registry.example/batch:1",
			"resources": map[string]any{"limits": map[string]any{"nvidia.com/gpu": "1"}},
		}}},
	}}
}
