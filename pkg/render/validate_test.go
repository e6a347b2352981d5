package render_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/accelc/accelc/pkg/catalogdoc"
	"github.com/accelc/accelc/pkg/compile"
	"github.com/accelc/accelc/pkg/inventory"
	"github.com/accelc/accelc/pkg/render"
)

// loadCUE compiles src as a cluster directory under the working directory
// (so positions are relative, as a user sees them).
func loadCUE(t testing.TB, src string) *compile.Model {
	t.Helper()
	dir, err := os.MkdirTemp(".", "testcluster-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	require.NoError(t, os.WriteFile(filepath.Join(dir, "c.cue"), []byte(src), 0o644))
	m, err := compile.Load(dir)
	require.NoError(t, err)
	return m
}

// TestValidateRejects: what the API server would reject is an error at
// vet and render time, with Kubernetes' own messages, the object's file
// and, where known, the CUE position that produced it.
func TestValidateRejects(t *testing.T) {
	m := loadCUE(t, "package c\n\ncluster: name: \"lab\"\nprofiles: l4: {\n\tdisplayName: \"L4\"\n\tacceleratorTypes: [\"nvidia-l4-24gb\"]\n}\n")
	long := strings.Repeat("x", 64)
	u := func(obj map[string]any) *unstructured.Unstructured { return &unstructured.Unstructured{Object: obj} }
	objs := []render.Object{
		{Dir: "profiles", Source: []string{"profiles", "l4"}, Body: u(map[string]any{
			"apiVersion": "infrastructure.opendatahub.io/v1", "kind": "HardwareProfile",
			"metadata": map[string]any{"name": "l4", "namespace": "opendatahub"},
			"spec":     map[string]any{"scheduling": map[string]any{"node": map[string]any{"nodeSelector": map[string]any{"accelerator.opendatahub.io/type": long}}}},
		})},
		{Dir: "queues", Body: u(map[string]any{
			"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "ResourceFlavor",
			"metadata": map[string]any{"name": "Bad_Name"},
			"spec":     map[string]any{"affinity": []any{map[string]any{"key": "a/b/c", "operator": "In", "values": []any{"ok", "not ok"}}}},
		})},
		{Dir: "profiles", Body: &corev1.ConfigMap{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: metav1.ObjectMeta{Name: "big", Namespace: "opendatahub"},
			Data:       map[string]string{"a.json": strings.Repeat("x", render.MaxConfigMapBytes+1)},
		}},
		{Dir: "x", Body: u(map[string]any{
			"apiVersion": "example.com/v1", "kind": "Thing",
			"metadata": map[string]any{"name": "huge", "annotations": map[string]any{"a": strings.Repeat("x", 300<<10)}},
			"spec":     strings.Repeat("y", render.MaxObjectBytes),
		})},
	}
	err := render.Validate(m, objs)
	require.Error(t, err)
	var diags compile.Errors
	require.ErrorAs(t, err, &diags)
	var lines []string
	for _, d := range diags {
		lines = append(lines, d.String())
	}
	pos := m.Where("profiles", "l4")
	require.NotEmpty(t, pos)
	const todo = ": the API server would reject it; rename or shorten what produced it"
	const smaller = ": the API server would reject it; make what produced it smaller"
	assert.Equal(t, []string{
		pos + `: profiles/hardwareprofile-l4.yaml (HardwareProfile l4): spec.scheduling.node.nodeSelector[accelerator.opendatahub.io/type]: Invalid value: "` + long + `": must be no more than 63 bytes` + todo,
		`queues/resourceflavor-Bad_Name.yaml (ResourceFlavor Bad_Name): metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')` + todo,
		`queues/resourceflavor-Bad_Name.yaml (ResourceFlavor Bad_Name): spec.affinity[0].key: Invalid value: "a/b/c": a valid label key must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')` + todo,
		`queues/resourceflavor-Bad_Name.yaml (ResourceFlavor Bad_Name): spec.affinity[0].values[1]: Invalid value: "not ok": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')` + todo,
		`profiles/configmap-big.yaml (ConfigMap big): data: Too long: may not be more than 1048576 bytes` + smaller,
		`x/thing-huge.yaml (Thing huge): metadata.annotations: Too long: may not be more than 262144 bytes` + smaller,
		`x/thing-huge.yaml (Thing huge): <object of 1880170 bytes>: Too long: may not be more than 1572864 bytes` + smaller,
	}, lines)
}

// TestExamplesValid: the examples' objects pass.
func TestExamplesValid(t *testing.T) {
	for _, name := range exampleClusters(t) {
		dir := filepath.Join(examplesDir, name)
		m, err := compile.Load(dir)
		require.NoError(t, err)
		inv, err := inventory.Load(compile.DefaultInventory(dir), m.Catalog, inventory.Options{Pins: m.Pins})
		require.NoError(t, err)
		objs, err := render.Render(m, inv)
		require.NoError(t, err)
		assert.NoError(t, render.Validate(m, objs), name)
	}
}

// TestCatalogSplits: a catalog past one ConfigMap's 1 MiB (1,100 profiles
// render 9.9 MB) becomes several ConfigMaps, each valid, that together
// hold every profile once, in order, found by name and by label.
func TestCatalogSplits(t *testing.T) {
	var b strings.Builder
	b.WriteString("package c\n\ncluster: name: \"big\"\nprofiles: {\n")
	for i := range 1100 {
		fmt.Fprintf(&b, "\t\"p%04d\": {displayName: \"Profile %d\", description: %q, acceleratorTypes: [\"nvidia-l4-24gb\", \"nvidia-a100-80gb\", \"nvidia-h100-80gb\"]}\n", i, i, strings.Repeat("d", 300))
	}
	b.WriteString("}\n")
	m := loadCUE(t, b.String())
	inv := &inventory.Inventory{}
	tree, err := render.Cluster(m, inv)
	require.NoError(t, err, "every part passes Validate")
	whole := render.Catalog(m, inv)
	var got []catalogdoc.Profile
	parts := 0
	for i := 1; ; i++ {
		name := "profiles/configmap-" + render.CatalogConfigMapName + ".yaml"
		if i > 1 {
			name = fmt.Sprintf("profiles/configmap-%s-%d.yaml", render.CatalogConfigMapName, i)
		}
		data, ok := tree[name]
		if !ok {
			break
		}
		var cm struct {
			Metadata struct{ Labels map[string]string }
			Data     map[string]string
		}
		require.NoError(t, yaml.Unmarshal(data, &cm))
		assert.Equal(t, fmt.Sprint(i), cm.Metadata.Labels[render.CatalogPartLabel])
		assert.Less(t, len(cm.Data["catalog.json"]), render.MaxConfigMapBytes)
		var doc catalogdoc.Document
		require.NoError(t, json.Unmarshal([]byte(cm.Data["catalog.json"]), &doc))
		assert.Equal(t, i, doc.Part)
		assert.Equal(t, catalogdoc.SchemaVersion, doc.SchemaVersion)
		got = append(got, doc.Profiles...)
		parts = doc.Parts
	}
	assert.Greater(t, parts, 1)
	require.Len(t, got, len(whole.Profiles))
	assert.Equal(t, whole.Profiles, got)
}

// TestCostRulesSplit: with hundreds of teams the cost rules (2 MB in one
// PrometheusRule) go into several, each under RulePartBytes of rules and
// each a rule file Prometheus parses, holding every rule once.
func TestCostRulesSplit(t *testing.T) {
	var b strings.Builder
	b.WriteString("package c\n\ncluster: name: \"many\"\naccelerators: \"nvidia-l4-24gb\": costPerHour: 1.5\nprofiles: l4: {displayName: \"L4\", acceleratorTypes: [\"nvidia-l4-24gb\"]}\nteams: {\n")
	for i := range 600 {
		var ns []string
		for j := range 30 {
			ns = append(ns, fmt.Sprintf("%q", fmt.Sprintf("team%04d-namespace%02d", i, j)))
		}
		fmt.Fprintf(&b, "\t\"t%04d\": {namespaces: [%s], acceleratorTypes: [\"nvidia-l4-24gb\"], monthlyBudget: 1000}\n", i, strings.Join(ns, ", "))
	}
	b.WriteString("}\n")
	m := loadCUE(t, b.String())
	tree, err := render.Cluster(m, &inventory.Inventory{})
	require.NoError(t, err)
	rules := map[string]int{}
	files := 0
	for _, p := range tree.Paths() {
		if !strings.HasPrefix(p, "monitoring/prometheusrule-accelc-gpu-cost") {
			continue
		}
		files++
		var obj map[string]any
		require.NoError(t, yaml.Unmarshal(tree[p], &obj))
		spec, err := yaml.Marshal(obj["spec"])
		require.NoError(t, err)
		assert.Less(t, len(spec), 2*render.RulePartBytes, p)
		groups, errs := rulefmt.Parse(spec, false, model.UTF8Validation)
		require.Empty(t, errs, p)
		for _, g := range groups.Groups {
			for _, r := range g.Rules {
				rules[r.Record+r.Alert+fmt.Sprint(r.Labels)]++
			}
		}
	}
	assert.Greater(t, files, 1)
	assert.Len(t, rules, 1+600+1+3+2*600, "pods, teams, equivalents, cost, budgets")
	for k, n := range rules {
		assert.Equal(t, 1, n, k)
	}
}
