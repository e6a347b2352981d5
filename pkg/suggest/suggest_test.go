package suggest_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/accelc/accelc/internal/testutil"
	"github.com/accelc/accelc/pkg/accelc"
	"github.com/accelc/accelc/pkg/catalog"
	"github.com/accelc/accelc/pkg/compile"
	"github.com/accelc/accelc/pkg/inventory"
	"github.com/accelc/accelc/pkg/suggest"
)

// copyDir copies the example clusters' CUE module, so a test can add a file.
func copyDir(t *testing.T, from, to string) {
	t.Helper()
	require.NoError(t, os.CopyFS(to, os.DirFS(from)))
}

// TestSuggestVets proposes profiles for every example cluster and for the
// real node sample, adds the file to the cluster and compiles it: accelc
// vet must accept the proposal unchanged, and its output is golden.
func TestSuggestVets(t *testing.T) {
	for _, cluster := range []string{"hetero-prod", "small-lab", "gpu-pools"} {
		t.Run(cluster, func(t *testing.T) {
			root := t.TempDir()
			copyDir(t, "../../examples/clusters", root)
			dir := filepath.Join(root, cluster)
			loaded, err := accelc.Cluster(context.Background(), dir, accelc.Options{Stages: accelc.ReadNodes})
			require.NoError(t, err)
			m, inv := loaded.Model, loaded.Inventory
			opts := suggest.Options{Package: "cluster", Taken: map[string]bool{}, Source: "inventory.json", Pools: map[string]suggest.Pool{}}
			for i := range inv.Nodes {
				if pool := m.PoolOf(inv.Nodes[i].Name, inv.Nodes[i].AcceleratorType); pool != nil {
					opts.Pools[inv.Nodes[i].Name] = suggest.Pool{Name: pool.Name, MIG: pool.Sharing == compile.ShareMIG}
				}
			}
			for _, p := range m.Profiles {
				opts.Taken[p.Name] = true
			}
			res, err := suggest.Suggest(inv, m.Catalog, opts)
			require.NoError(t, err)
			require.NotEmpty(t, res.Profiles)
			// The document (-o json) holds quantities; only the CUE quotes
			// memory.
			for _, p := range res.Profiles {
				if p.Memory != nil {
					assert.Regexp(t, `^[0-9]+Gi$`, p.Memory.Default, "profile %s", p.Name)
				}
			}
			data, err := res.CUE(opts)
			require.NoError(t, err)
			testutil.Golden(t, filepath.Join("testdata", cluster+".cue"), data)

			require.NoError(t, os.WriteFile(filepath.Join(dir, "suggested.cue"), data, 0o644))
			m2, err := compile.Load(dir)
			require.NoError(t, err, "the proposal must vet:\n%s", data)
			assert.Len(t, m2.Profiles, len(m.Profiles)+len(res.Profiles))
		})
	}
}

// TestSuggestSelection: a selection across types gives one multi-type
// profile, largest memory first, with a GPU count every node fits.
func TestSuggestSelection(t *testing.T) {
	cat, err := catalog.Builtin()
	require.NoError(t, err)
	inv, err := inventory.Load("../../examples/clusters/hetero-prod/inventory.json", cat, inventory.Options{})
	require.NoError(t, err)
	res, err := suggest.Suggest(inv, cat, suggest.Options{Types: []string{"nvidia-a100-80gb", "nvidia-h200-141gb"}})
	require.NoError(t, err)
	require.Len(t, res.Profiles, 1)
	p := res.Profiles[0]
	assert.Equal(t, []string{"nvidia-h200-141gb", "nvidia-a100-80gb"}, p.AcceleratorTypes)
	assert.Equal(t, "h200-or-a100", p.Name)
	assert.Equal(t, 8, p.GPUMax)

	_, err = suggest.Suggest(inv, cat, suggest.Options{Nodes: []string{"no-such-node"}})
	assert.ErrorContains(t, err, "no-such-node is not an accelerator node")
	_, err = suggest.Suggest(inv, cat, suggest.Options{Types: []string{"nvidia-b200-180gb"}})
	assert.ErrorContains(t, err, "no node of type nvidia-b200-180gb")

	real, err := inventory.Load("../../testdata/nodes/real-nodes-sample.json", cat, inventory.Options{})
	require.NoError(t, err)
	res, err = suggest.Suggest(real, cat, suggest.Options{})
	require.NoError(t, err)
	data, err := res.CUE(suggest.Options{})
	require.NoError(t, err)
	assert.Contains(t, string(data), "// Left out: node-17: its MIG layout is invalid")
	assert.Contains(t, string(data), `resourceName: "nvidia.com/mig-1g.10gb"`)
	assert.True(t, strings.Contains(string(data), `nodeSelector: "nvidia.com/mig.strategy": "mixed"`))
}

// TestSuggestMIGSingleProfiles: MIG single nodes cut into different
// profiles are a group each, told apart by GPU Feature Discovery's product
// (which names the profile under the single strategy), never folded into
// one profile named after the first node's slice.
func TestSuggestMIGSingleProfiles(t *testing.T) {
	cat, err := catalog.Builtin()
	require.NoError(t, err)
	raw, _, err := inventory.Decode([]byte(`{"kind": "List", "items": [
	  {"kind": "Node", "metadata": {"name": "a", "labels": {"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB-MIG-1g.10gb", "nvidia.com/gpu.count": "56", "nvidia.com/mig.strategy": "single"}}, "status": {"capacity": {"nvidia.com/gpu": "56"}}},
	  {"kind": "Node", "metadata": {"name": "b", "labels": {"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB-MIG-2g.20gb", "nvidia.com/gpu.count": "24", "nvidia.com/mig.strategy": "single"}}, "status": {"capacity": {"nvidia.com/gpu": "24"}}},
	  {"kind": "Node", "metadata": {"name": "c", "labels": {"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB-MIG-3g.40gb", "nvidia.com/gpu.count": "16", "nvidia.com/mig.strategy": "single"}}, "status": {"capacity": {"nvidia.com/gpu": "16"}}}
	]}`))
	require.NoError(t, err)
	inv := inventory.Classify(raw, cat, inventory.Options{})
	res, err := suggest.Suggest(inv, cat, suggest.Options{})
	require.NoError(t, err)
	require.Len(t, res.Profiles, 3)
	want := map[string]string{"a": "1g.10gb", "b": "2g.20gb", "c": "3g.40gb"}
	for _, p := range res.Profiles {
		require.Len(t, p.Nodes, 1, p.Name)
		prof := want[p.Nodes[0]]
		assert.Contains(t, p.DisplayName, "MIG "+prof, p.Name)
		assert.Equal(t, "a100-80gb-mig-"+strings.ReplaceAll(prof, ".", "-"), p.Name)
		assert.Equal(t, map[string]string{"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB-MIG-" + prof}, p.NodeSelector, p.Name)
	}
}

// TestSuggestSharingPool: a node of a time-slicing pool gets a profile of
// the pool, not of whole GPUs, even before its device plugin shares it;
// the type's other nodes keep their whole-GPU profile.
func TestSuggestSharingPool(t *testing.T) {
	cat, err := catalog.Builtin()
	require.NoError(t, err)
	raw, _, err := inventory.Decode([]byte(`{"kind": "List", "items": [
	  {"kind": "Node", "metadata": {"name": "ts", "labels": {"nvidia.com/gpu.product": "NVIDIA-L4", "nvidia.com/gpu.count": "1"}}, "status": {"capacity": {"nvidia.com/gpu": "1"}}},
	  {"kind": "Node", "metadata": {"name": "whole", "labels": {"nvidia.com/gpu.product": "NVIDIA-L4", "nvidia.com/gpu.count": "1"}}, "status": {"capacity": {"nvidia.com/gpu": "1"}}}
	]}`))
	require.NoError(t, err)
	inv := inventory.Classify(raw, cat, inventory.Options{})
	res, err := suggest.Suggest(inv, cat, suggest.Options{Pools: map[string]suggest.Pool{"ts": {Name: "l4-notebooks"}}})
	require.NoError(t, err)
	require.Len(t, res.Profiles, 2)
	byNode := map[string]suggest.Profile{}
	for _, p := range res.Profiles {
		byNode[p.Nodes[0]] = p
	}
	assert.Equal(t, "l4-notebooks", byNode["ts"].Pool)
	assert.Equal(t, 1, byNode["ts"].GPUMax)
	assert.Empty(t, byNode["whole"].Pool)
	data, err := res.CUE(suggest.Options{})
	require.NoError(t, err)
	assert.Contains(t, string(data), `pool: "l4-notebooks"`)
}
