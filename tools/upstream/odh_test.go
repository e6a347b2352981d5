package upstream

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	odh "github.com/opendatahub-io/opendatahub-operator/v2/api/infrastructure/v1alpha1"
	"sigs.k8s.io/yaml"
)

// odhCRD is Open Data Hub's own HardwareProfile CRD, from the operator's
// module (v2.35.0, the one version the module proxy serves; it has
// v1alpha1 only).
const odhCRD = "config/crd/bases/infrastructure.opendatahub.io_hardwareprofiles.yaml"

// TestHardwareProfilesAreODHs decodes every example's rendered
// HardwareProfiles strictly into the Open Data Hub operator's own Go
// types. accelc renders infrastructure.opendatahub.io/v1; the module the
// proxy serves (v2.35.0) predates v1 and has v1alpha1, whose fields v1
// keeps unchanged, so a field ODH does not know, or a value of the wrong
// type, fails here.
func TestHardwareProfilesAreODHs(t *testing.T) {
	files, err := filepath.Glob("../../testdata/golden/*/profiles/hardwareprofile-*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no rendered HardwareProfile under testdata/golden (run from tools/upstream)")
	}
	kinds := map[odh.SchedulingType]int{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		// spec.dra came to ODH's types after the version the proxy
		// serves: it is checked against its definition (draSpec) and
		// taken out before the strict decode.
		data, err = withoutDRA(data)
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		var hp odh.HardwareProfile
		if err := yaml.UnmarshalStrict(data, &hp); err != nil {
			t.Errorf("%s: not Open Data Hub's HardwareProfile: %v", f, err)
			continue
		}
		if hp.APIVersion != "infrastructure.opendatahub.io/v1" || hp.Kind != "HardwareProfile" {
			t.Errorf("%s: %s %s, want infrastructure.opendatahub.io/v1 HardwareProfile", f, hp.APIVersion, hp.Kind)
		}
		s := hp.Spec.SchedulingSpec
		switch {
		case s == nil:
			kinds["none"]++
		case s.SchedulingType == odh.NodeScheduling && s.Kueue == nil:
			kinds[s.SchedulingType]++
		case s.SchedulingType == odh.QueueScheduling && s.Node == nil && s.Kueue != nil && s.Kueue.LocalQueueName != "":
			kinds[s.SchedulingType]++
		default:
			t.Errorf("%s: scheduling type %q with node %v and kueue %v: ODH's CRD wants node only for Node, a kueue queue only for Queue", f, s.SchedulingType, s.Node != nil, s.Kueue)
		}
	}
	t.Logf("%d HardwareProfiles decode strictly into ODH's types, by scheduling: %v", len(files), kinds)
}

// TestHardwareProfileCRDIsODHs compares the HardwareProfile CRD the
// end-to-end tests install (tools/e2e/crds, written by hand from ODH's
// documented v1 types, since the proxy serves no module with them) with
// ODH's own: its v1alpha1 schema must be ODH's v1alpha1 schema, field for
// field, with every type, enum, format, required list and CEL rule, only
// descriptions aside.
func TestHardwareProfileCRDIsODHs(t *testing.T) {
	dir := moduleDir(t, "github.com/opendatahub-io/opendatahub-operator/v2")
	theirs := crdSchemas(t, filepath.Join(dir, odhCRD))
	ours := crdSchemas(t, "../e2e/crds/infrastructure.opendatahub.io_hardwareprofiles.yaml")
	if _, ok := theirs["v1alpha1"]; !ok {
		t.Fatalf("ODH's CRD has no v1alpha1: versions %v", keys(theirs))
	}
	if _, ok := ours["v1alpha1"]; !ok {
		t.Fatalf("the e2e CRD has no v1alpha1: versions %v", keys(ours))
	}
	// spec.dra is the one field ours has beyond v2.35.0's: ODH's DRASpec.
	for _, v := range []string{"v1alpha1", "v1"} {
		props, _, _ := unstructuredMap(ours[v], "properties", "spec", "properties")
		dra, ok := props["dra"]
		if !ok {
			t.Errorf("the e2e CRD's %s has no spec.dra", v)
			continue
		}
		if got := strip(dra); !reflect.DeepEqual(got, strip(draSchema)) {
			t.Errorf("the e2e CRD's %s spec.dra is %v, ODH's DRASpec is %v", v, got, strip(draSchema))
		}
		delete(props, "dra")
	}
	var diffs []string
	compare("v1alpha1", strip(theirs["v1alpha1"]), strip(ours["v1alpha1"]), &diffs)
	for _, d := range diffs {
		t.Error(d)
	}
	// accelc's v1 is v1alpha1's schema (ODH's v1 types are v1alpha1's).
	var v1diffs []string
	compare("v1 against v1alpha1", strip(ours["v1alpha1"]), strip(ours["v1"]), &v1diffs)
	for _, d := range v1diffs {
		t.Error(d)
	}
	if len(diffs)+len(v1diffs) == 0 {
		t.Logf("the e2e CRD's v1alpha1 and v1 schemas are ODH v2.35.0's v1alpha1 schema")
	}
}

// crdSchemas reads a CRD's openAPIV3Schema per version.
func crdSchemas(t *testing.T, file string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var crd struct {
		Spec struct {
			Versions []struct {
				Name   string `json:"name"`
				Schema struct {
					OpenAPIV3Schema map[string]any `json:"openAPIV3Schema"`
				} `json:"schema"`
			} `json:"versions"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(data, &crd); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	out := map[string]any{}
	for _, v := range crd.Spec.Versions {
		out[v.Name] = v.Schema.OpenAPIV3Schema
	}
	return out
}

// strip drops descriptions (prose, which the hand-written CRD leaves out)
// and sorts required lists (their order means nothing).
func strip(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, val := range x {
			switch k {
			case "description":
				continue
			case "required":
				if list, ok := val.([]any); ok {
					names := make([]string, 0, len(list))
					for _, n := range list {
						names = append(names, fmt.Sprint(n))
					}
					sort.Strings(names)
					out[k] = names
					continue
				}
			}
			out[k] = strip(val)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i := range x {
			out[i] = strip(x[i])
		}
		return out
	}
	return v
}

// compare records where b differs from a, by path.
func compare(path string, a, b any, diffs *[]string) {
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if aok && bok {
		for _, k := range keys(am) {
			if _, ok := bm[k]; !ok {
				*diffs = append(*diffs, fmt.Sprintf("%s.%s: ODH's has it, the e2e CRD does not: %s", path, k, brief(am[k])))
				continue
			}
			compare(path+"."+k, am[k], bm[k], diffs)
		}
		for _, k := range keys(bm) {
			if _, ok := am[k]; !ok {
				*diffs = append(*diffs, fmt.Sprintf("%s.%s: the e2e CRD has it, ODH's does not: %s", path, k, brief(bm[k])))
			}
		}
		return
	}
	if !reflect.DeepEqual(a, b) {
		*diffs = append(*diffs, fmt.Sprintf("%s: ODH's %s, the e2e CRD's %s", path, brief(a), brief(b)))
	}
}

func brief(v any) string {
	b, err := yaml.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	s := strings.ReplaceAll(strings.TrimSpace(string(b)), "\n", "; ")
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// moduleDir is where the Go command keeps a module this one requires.
func moduleDir(t *testing.T, path string) string {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", path).Output()
	if err != nil {
		t.Fatalf("go list -m %s: %v", path, err)
	}
	dir := strings.TrimSpace(string(out))
	if dir == "" {
		t.Fatalf("go list -m %s: no directory (go mod download %s)", path, path)
	}
	return dir
}

// TestCRDCompareBites: a schema that lost an enum value or gained a field
// is told apart from ODH's.
func TestCRDCompareBites(t *testing.T) {
	theirs := map[string]any{"properties": map[string]any{
		"resourceType": map[string]any{"type": "string", "enum": []any{"CPU", "Memory", "Accelerator"}},
	}}
	ours := map[string]any{"properties": map[string]any{
		"resourceType": map[string]any{"type": "string", "enum": []any{"CPU", "Accelerator"}},
		"extra":        map[string]any{"type": "string"},
	}}
	var diffs []string
	compare("v1alpha1", strip(theirs), strip(ours), &diffs)
	if len(diffs) != 2 {
		t.Fatalf("want the enum and the extra field told apart, got %q", diffs)
	}
}

// draSchema is Open Data Hub's HardwareProfileSpec.DRA as its CRD
// generator writes it (opendatahub-operator pull request 4065, in v1 and
// v1alpha1): DRASpec with resourceClaimTemplateName, required, at least
// one character. What else ODH validates of the name could not be read
// from a served module.
var draSchema = map[string]any{
	"type":     "object",
	"required": []any{"resourceClaimTemplateName"},
	"properties": map[string]any{
		"resourceClaimTemplateName": map[string]any{"type": "string", "minLength": float64(1)},
	},
}

// withoutDRA checks a HardwareProfile's spec.dra against draSchema and
// returns the profile without it.
func withoutDRA(data []byte) ([]byte, error) {
	var obj map[string]any
	if err := yaml.Unmarshal(data, &obj); err != nil {
		return nil, err
	}
	spec, _ := obj["spec"].(map[string]any)
	dra, ok := spec["dra"]
	if !ok {
		return data, nil
	}
	d, _ := dra.(map[string]any)
	name, _ := d["resourceClaimTemplateName"].(string)
	if len(d) != 1 || name == "" {
		return nil, fmt.Errorf("spec.dra is %v: ODH's DRASpec holds resourceClaimTemplateName alone, a non-empty name", dra)
	}
	delete(spec, "dra")
	return yaml.Marshal(obj)
}

// unstructuredMap is the map at path in v, a decoded schema.
func unstructuredMap(v any, path ...string) (map[string]any, bool, error) {
	for _, k := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, false, nil
		}
		v = m[k]
	}
	m, ok := v.(map[string]any)
	return m, ok, nil
}
