package compile_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/accelc/accelc/pkg/compile"
)

// FuzzLoad compiles arbitrary CUE as a cluster directory: no input may
// panic, and a failure is always a positioned diagnostic list or a plain
// error, never a half-built model.
func FuzzLoad(f *testing.F) {
	for _, p := range []string{"../../examples/clusters/small-lab/cluster.cue", "../../examples/clusters/fleet/fleet.cue"} {
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
	f.Fuzz(func(t *testing.T, src []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "c.cue"), src, 0o644); err != nil {
			t.Fatal(err)
		}
		m, err := compile.Load(dir)
		if (m == nil) == (err == nil) {
			t.Fatalf("Load returned model %v and error %v", m != nil, err)
		}
		if m != nil && m.Cluster.Name == "" {
			t.Fatal("a model without a cluster name")
		}
	})
}
