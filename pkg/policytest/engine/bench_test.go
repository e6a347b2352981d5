package engine_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/open-policy-agent/frameworks/constraint/pkg/client/reviews"
	"github.com/open-policy-agent/gatekeeper/v3/apis"
	"github.com/open-policy-agent/gatekeeper/v3/pkg/gator"
	"github.com/open-policy-agent/gatekeeper/v3/pkg/gator/reader"
	"github.com/open-policy-agent/gatekeeper/v3/pkg/target"
	"github.com/open-policy-agent/gatekeeper/v3/pkg/util"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/accelc/accelc/pkg/catalog"
	"github.com/accelc/accelc/pkg/compile"
	"github.com/accelc/accelc/pkg/inventory"
	"github.com/accelc/accelc/pkg/render"
	"github.com/accelc/accelc/policies"
)

// requiredLabels is gatekeeper-library's k8srequiredlabels, the simplest
// library policy, as the baseline.
const requiredLabels = `
apiVersion: templates.gatekeeper.sh/v1
kind: ConstraintTemplate
metadata: {name: k8srequiredlabels}
spec:
  crd:
    spec:
      names: {kind: K8sRequiredLabels}
      validation:
        openAPIV3Schema:
          type: object
          properties:
            labels:
              type: array
              items: {type: object, properties: {key: {type: string}, allowedRegex: {type: string}}}
  targets:
  - target: admission.k8s.gatekeeper.sh
    code:
    - engine: Rego
      source:
        version: v1
        rego: |
          package k8srequiredlabels

          violation contains {"msg": msg, "details": {"missing_labels": missing}} if {
            provided := {label | input.review.object.metadata.labels[label]}
            required := {label | some l in input.parameters.labels; label := l.key}
            missing := required - provided
            count(missing) > 0
            msg := sprintf("you must provide labels: %v", [missing])
          }

          violation contains {"msg": msg} if {
            value := input.review.object.metadata.labels[key]
            some expected in input.parameters.labels
            expected.key == key
            expected.allowedRegex != ""
            not regex.match(expected.allowedRegex, value)
            msg := sprintf("Label <%v: %v> does not satisfy allowed regex: %v", [key, value, expected.allowedRegex])
          }
`

const requiredLabelsConstraint = `
apiVersion: constraints.gatekeeper.sh/v1beta1
kind: K8sRequiredLabels
metadata: {name: must-have-team}
spec:
  match: {kinds: [{apiGroups: [""], kinds: [Pod]}]}
  parameters: {labels: [{key: team, allowedRegex: "^[a-z0-9-]+$"}]}
`

// bigModel is a cluster with teams of two namespaces each and profiles.
func bigModel(tb testing.TB, teams, profiles int) *compile.Model {
	cat, err := catalog.Builtin()
	if err != nil {
		tb.Fatal(err)
	}
	ids := cat.IDs()
	m := &compile.Model{
		Cluster: compile.Cluster{Name: "big", LabelPrefix: "accelerator.opendatahub.io", ProfileNamespace: "opendatahub",
			Enforcement: "deny", ExcludedNamespaces: []string{"kube-*"}, GenericGPUNamespaces: []string{"legacy"}},
		Catalog: cat,
	}
	for i := range profiles {
		c, _ := cat.Get(ids[i%len(ids)])
		max := 8
		m.Profiles = append(m.Profiles, compile.Profile{
			Name: fmt.Sprintf("profile-%03d", i), DisplayName: "P", Enabled: true,
			AcceleratorTypes: []string{c.ID}, Classes: []*catalog.Class{c}, ResourceName: c.ResourceName,
			GPU:         compile.GPURange{Min: 1, Default: 1, Max: &max},
			Tolerations: []compile.Toleration{{Key: "nvidia.com/gpu", Operator: "Exists", Effect: "NoSchedule"}, {Key: "pool", Value: fmt.Sprint(i % 10), Operator: "Equal", Effect: "NoSchedule"}},
		})
	}
	for i := range teams {
		m.Teams = append(m.Teams, compile.Team{
			Name: fmt.Sprintf("team-%03d", i), Namespaces: []string{fmt.Sprintf("ns-%03d-a", i), fmt.Sprintf("ns-%03d-b", i)},
			AcceleratorTypes: ids[i%7 : i%7+10],
		})
	}
	return m
}

type loaded struct {
	kind        string
	template    *unstructured.Unstructured
	constraints []*unstructured.Unstructured
}

// accelcPolicies renders bigModel and returns its templates with their
// constraints (per-team ones included), and the HardwareProfiles
// Gatekeeper would sync.
func accelcPolicies(tb testing.TB, m *compile.Model) ([]loaded, []*unstructured.Unstructured) {
	objs, err := render.Render(m, &inventory.Inventory{})
	if err != nil {
		tb.Fatal(err)
	}
	byKind := map[string]*loaded{}
	var order []string
	var data []*unstructured.Unstructured
	for _, o := range objs {
		b, err := yaml.Marshal(o.Body)
		if err != nil {
			tb.Fatal(err)
		}
		u, err := reader.ReadUnstructured(b)
		if err != nil {
			tb.Fatal(err)
		}
		switch {
		case o.Kind() == "ConstraintTemplate":
			kind := u.Object["spec"].(map[string]any)["crd"].(map[string]any)["spec"].(map[string]any)["names"].(map[string]any)["kind"].(string)
			byKind[kind] = &loaded{kind: kind, template: u}
			order = append(order, kind)
		case o.APIVersion() == "constraints.gatekeeper.sh/v1beta1":
			byKind[o.Kind()].constraints = append(byKind[o.Kind()].constraints, u)
		case o.Kind() == "HardwareProfile", o.Kind() == "NamespaceEntitlement":
			data = append(data, u)
		}
	}
	var out []loaded
	for _, k := range order {
		out = append(out, *byKind[k])
	}
	return out, data
}

func newClient(tb testing.TB, data []*unstructured.Unstructured, sets ...loaded) gator.Client {
	s := runtime.NewScheme()
	if err := apis.AddToScheme(s); err != nil {
		tb.Fatal(err)
	}
	c, err := gator.NewOPAClient(false)
	if err != nil {
		tb.Fatal(err)
	}
	ctx := context.Background()
	for _, l := range sets {
		t, err := reader.ToTemplate(s, l.template)
		if err != nil {
			tb.Fatal(err)
		}
		if _, err := c.AddTemplate(ctx, t); err != nil {
			tb.Fatal(err)
		}
		for _, con := range l.constraints {
			if _, err := c.AddConstraint(ctx, con); err != nil {
				tb.Fatal(err)
			}
		}
	}
	for _, d := range data {
		if _, err := c.AddData(ctx, d); err != nil {
			tb.Fatal(err)
		}
	}
	return c
}

// pod is a well-formed pod of team 25 on profile-005: every constraint
// evaluates all of its rules and admits it.
func pod(tb testing.TB) target.AugmentedUnstructured {
	u, err := reader.ReadUnstructured([]byte(`
apiVersion: v1
kind: Pod
metadata:
  name: trainer
  namespace: ns-025-a
  labels: {team: team-025}
  annotations: {opendatahub.io/hardware-profile-name: profile-005}
spec:
  nodeSelector: {accelerator.opendatahub.io/type: TYPE}
  tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
  initContainers: [{name: fetch, image: busybox}]
  containers:
  - name: main
    image: quay.io/example/trainer:1
    resources: {limits: {nvidia.com/gpu: 2, cpu: "8", memory: 64Gi}}
  - name: sidecar
    image: quay.io/example/logger:1
`))
	if err != nil {
		tb.Fatal(err)
	}
	return target.AugmentedUnstructured{Object: *u}
}

func review(b *testing.B, c gator.Client, obj target.AugmentedUnstructured) {
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Review(ctx, obj, reviews.EnforcementPoint(util.GatorEnforcementPoint)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAdmission reviews one pod through Gatekeeper's own constraint
// framework (parameters and synced data in OPA's store, as in the webhook):
// accelc-all is the rendered admission template (every policy in one),
// then each policy alone as its own template,
// for a fleet of 500 teams (1,000 namespaces) and 100 HardwareProfiles and
// one of 50 teams and 10 profiles, with gatekeeper-library's
// required-labels as the baseline. The
// pod is one the constraints admit, so every rule is evaluated.
func BenchmarkAdmission(b *testing.B) {
	for _, size := range []struct{ teams, profiles int }{{500, 100}, {50, 10}} {
		m := bigModel(b, size.teams, size.profiles)
		sets, data := accelcPolicies(b, m)
		obj := pod(b)
		typ := m.Profiles[5].AcceleratorTypes[0]
		spec := obj.Object.Object["spec"].(map[string]any)
		spec["nodeSelector"] = map[string]any{"accelerator.opendatahub.io/type": typ}
		// The profile's own resource (its type's vendor's).
		main := spec["containers"].([]any)[0].(map[string]any)
		main["resources"] = map[string]any{"limits": map[string]any{m.Profiles[5].ResourceName: int64(2), "cpu": "8", "memory": "64Gi"}}
		if !slices.Contains(m.Teams[25].AcceleratorTypes, typ) {
			b.Fatalf("fixture: team-025 is not entitled to %s", typ)
		}
		fleet := fmt.Sprintf("teams=%d,profiles=%d", size.teams, size.profiles)
		b.Run(fleet+"/accelc-all", func(b *testing.B) {
			c := newClient(b, data, sets...)
			res, err := c.Review(context.Background(), obj, reviews.EnforcementPoint(util.GatorEnforcementPoint))
			if err != nil {
				b.Fatal(err)
			}
			if rs := res.Results(); len(rs) != 0 {
				b.Fatalf("the fixture pod should be admitted: %v", rs[0].Msg)
			}
			review(b, c, obj)
		})
		// Each policy alone, as its folder's standalone template, with
		// the cluster's parameters.
		all := sets[0].constraints[0].Object["spec"].(map[string]any)["parameters"].(map[string]any)
		for _, p := range policies.All {
			params := map[string]any{}
			for _, k := range p.Params {
				if v, ok := all[k]; ok {
					params[k] = v
				}
			}
			l := loaded{kind: p.Kind, template: toUnstructured(b, p.Template()), constraints: []*unstructured.Unstructured{toUnstructured(b, map[string]any{
				"apiVersion": "constraints.gatekeeper.sh/v1beta1", "kind": p.Kind, "metadata": map[string]any{"name": "accelc"},
				"spec": map[string]any{"match": map[string]any{"kinds": []any{map[string]any{"apiGroups": []string{""}, "kinds": []string{"Pod"}}}}, "parameters": params},
			})}}
			b.Run(fleet+"/"+p.Dir, func(b *testing.B) { review(b, newClient(b, data, l), obj) })
		}
	}
	b.Run("K8sRequiredLabels", func(b *testing.B) {
		t, err := reader.ReadUnstructured([]byte(requiredLabels))
		if err != nil {
			b.Fatal(err)
		}
		c, err := reader.ReadUnstructured([]byte(requiredLabelsConstraint))
		if err != nil {
			b.Fatal(err)
		}
		review(b, newClient(b, nil, loaded{kind: "K8sRequiredLabels", template: t, constraints: []*unstructured.Unstructured{c}}), pod(b))
	})
}

func toUnstructured(tb testing.TB, obj any) *unstructured.Unstructured {
	b, err := yaml.Marshal(obj)
	if err != nil {
		tb.Fatal(err)
	}
	u, err := reader.ReadUnstructured(b)
	if err != nil {
		tb.Fatal(err)
	}
	return u
}
