package compile_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/accelc/accelc/pkg/compile"
	"github.com/accelc/accelc/pkg/inventory"
)

// FuzzLoad compiles arbitrary CUE as a cluster directory. No input may
// panic; a failure is a list of diagnostics, never a plain error or a
// half-built model; and every diagnostic, of Load or of the model's Check
// against an inventory, names a file and line: the user's file, or the
// embedded schema's line that requires a field the user left out.
//
// Two kinds name no line, and the test knows them by their text:
//   - an evaluation that overran its time, memory or stack bound names the
//     cluster's file only: CUE cannot say which expression grew;
//   - Check's count of inventory nodes of unknown type is about the
//     inventory, not a place in the configuration.
func FuzzLoad(f *testing.F) {
	for _, p := range []string{"../../examples/clusters/small-lab/cluster.cue", "../../examples/clusters/fleet/fleet.cue", "../../examples/clusters/gpu-pools/cluster.cue"} {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(minimal))
	// Pools, MIG configs and the profiles and quotas over them.
	f.Add([]byte(poolsCluster + `profiles: {
	s: {displayName: "s", acceleratorTypes: ["nvidia-a100-80gb"], mig: "3g.40gb"}
	r: {displayName: "r", pool: "a100-ts", fallbackPools: ["h100-ts"], gpu: max: 1}
}
teams: t: {namespaces: ["t"], acceleratorTypes: ["nvidia-a100-80gb"], quota: "a100-ts": 3}
`))
	f.Add([]byte("package c\ncluster: name: \"x\"\naccelerators: \"a-b-1gb\": {vendor: \"amd\", displayName: \"A\", model: \"B\", architecture: \"C\", memoryGB: 1}\n"))
	// Mistakes of every kind: CUE's, the catalog's, the references'.
	f.Add([]byte(`package c
cluster: {name: "lab", nodes: "n1": acceleratorType: "nvidia-zz", sharing: s: {acceleratorType: "nvidia-zz-9gb", replicas: 2}}
profiles: p: {displayName: "p", pool: "s"}
profiles: "a-b": {displayName: "x", acceleratorTypes: ["nvidia-l4-24gb", "nvidia-l4-24gb"], gpu: {default: 4, max: 2}}
teams: a: {namespaces: ["a", "kube-a"], profiles: ["p", "q"], quota: {"nvidia-t4-16gb": 2}, borrowingLimit: x: 1, priority: "nope"}
teams: b: namespaces: ["a"]
`))
	f.Add([]byte(`package c
cluster: name: 3
profiles: "Bad Profile": {displayName: "x", gpu: max: "x", acceleratorTypes: [3]}
a: b: a
`))
	f.Add([]byte(`package c
cluster: {name: "lab", labelPrefix: "Bad_Prefix", nodes: "ghost": acceleratorType: "nvidia-t4-16gb"}
accelerators: "acme-x1-32gb": displayName: "Acme X1"
`))
	invs := fuzzInventories(f)
	f.Fuzz(func(t *testing.T, src []byte) { loadPositioned(t, src, invs) })
}

// FuzzLoadFields is FuzzLoad over a cluster that uses every kind of
// reference, with the names, types, MIG profile, quota and taint drawn by
// the fuzzer: byte mutations of whole files seldom get past CUE's parser,
// so this reaches accelc's own checks.
func FuzzLoadFields(f *testing.F) {
	f.Add("nvidia-a100-80gb", "a100-ts", "h100-ts", "3g.40gb", "nvidia-a100-80gb", "a100-ts", 3, 1, "example.com/gpu", "t")
	f.Add("nvidia-t4-16gb", "t4", "t4", "1g.10gb", "nvidia-h100-80gb", "nvidia-h100-80gb", 0, 8, "gpu", "kube-x")
	f.Add("nvidia-zz", "m", "", "", "amd-mi300x-192gb", "m", -1, 0, "node.kubernetes.io/x", "")
	invs := fuzzInventories(f)
	f.Fuzz(func(t *testing.T, typ, pool, fallback, slice, sliceType, quotaKey string, quota, max int, taintKey, team string) {
		q := func(s string) string {
			b, err := json.Marshal(s)
			if err != nil {
				t.Fatal(err)
			}
			return string(b)
		}
		src := fmt.Sprintf(`package c

cluster: {
	name: "fuzz"
	nodes: "a100-ts-1": acceleratorType: %[1]s
	sharing: %[2]s: {acceleratorType: %[1]s, nodes: ["a100-ts-1"], replicas: 3, taint: {key: %[9]s, value: "true"}}
	sharing: "h100-ts": {acceleratorType: "nvidia-h100-80gb", replicas: 2}
	mig: configs: m: {acceleratorType: %[5]s, nodes: ["a100-mig-1"], layout: %[4]s: 1}
}
profiles: {
	whole: {displayName: "w", acceleratorTypes: [%[1]s], gpu: max: %[8]d}
	pooled: {displayName: "p", pool: %[2]s, fallbackPools: [%[3]s], gpu: max: %[8]d}
	sliced: {displayName: "s", acceleratorTypes: [%[5]s], mig: %[4]s}
}
teams: %[10]s: {
	namespaces: [%[10]s]
	acceleratorTypes: [%[1]s, "nvidia-h100-80gb"]
	profiles: ["whole", "pooled"]
	quota: %[6]s: %[7]d
	cohort: "c"
	borrowingLimit: %[1]s: 1
}
`, q(typ), q(pool), q(fallback), q(slice), q(sliceType), q(quotaKey), quota, max, q(taintKey), q(team))
		loadPositioned(t, []byte(src), invs)
	})
}

// loadPositioned loads src as a cluster's one file and checks what
// FuzzLoad promises.
func loadPositioned(t *testing.T, src []byte, invs [][]inventory.RawNode) {
	t.Helper()
	dir := t.TempDir()
	file := filepath.Join(dir, "c.cue")
	if err := os.WriteFile(file, src, 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := compile.LoadContext(context.Background(), dir, compile.Limits{Timeout: 10 * time.Second, MaxMemory: 512 << 20})
	if (m == nil) == (err == nil) {
		t.Fatalf("Load returned model %v and error %v", m != nil, err)
	}
	if err != nil {
		var errs compile.Errors
		if !errors.As(err, &errs) {
			t.Fatalf("a plain error, not diagnostics: %v", err)
		}
		for _, d := range errs {
			checkPositioned(t, file, d, false)
		}
		return
	}
	if m.Cluster.Name == "" {
		t.Fatal("a model without a cluster name")
	}
	for _, raw := range invs {
		for _, d := range m.Check(inventory.Classify(raw, m.Catalog, inventory.Options{Pins: m.Pins})) {
			checkPositioned(t, file, d, true)
		}
	}
}

// fuzzInventories are the sample of real nodes and the pools' nodes.
func fuzzInventories(f *testing.F) [][]inventory.RawNode {
	real, _, err := inventory.ReadFile("../../testdata/nodes/real-nodes-sample.json")
	if err != nil {
		f.Fatal(err)
	}
	pools, _, err := inventory.Decode([]byte(poolsInventory))
	if err != nil {
		f.Fatal(err)
	}
	return [][]inventory.RawNode{real, pools}
}

// checkPositioned fails unless d names a file and line (see FuzzLoad).
func checkPositioned(t *testing.T, file string, d compile.Diagnostic, checked bool) {
	t.Helper()
	if strings.Contains(d.Msg, "CUE evaluation failed (") {
		t.Fatalf("a panic: %s", d)
	}
	pos := d.Path.Position()
	switch {
	case pos.IsValid():
		if pos.Line() < 1 || (pos.Filename() != file && !strings.HasPrefix(pos.Filename(), "schemas/")) {
			t.Fatalf("positioned at %s, neither the user's file nor the schema: %s", pos, d)
		}
	case strings.Contains(d.Msg, "an expression grows without bound"):
		if d.Pos != filepath.ToSlash(file) {
			t.Fatalf("an overrun that does not name the file: %s", d)
		}
	case checked && d.Path.String() == "" && strings.HasPrefix(d.Msg, "inventory: "):
	default:
		t.Fatalf("no file and line: %s", d)
	}
}
