package accelc_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	"github.com/accelc/accelc/pkg/accelc"
	"github.com/accelc/accelc/pkg/catalogdoc"
	"github.com/accelc/accelc/pkg/compile"
	"github.com/accelc/accelc/pkg/policytest"
	"github.com/accelc/accelc/pkg/render"
)

// TestInitEveryType: for every built-in accelerator type, init either
// writes a cluster whose sample nodes are all of the type and which
// compiles and renders without a warning, with admission cases that read,
// or refuses the type as a usage error that says why (a type no label
// names, typed only by its PCI id).
func TestInitEveryType(t *testing.T) {
	types, err := accelc.Types()
	require.NoError(t, err)
	require.NotEmpty(t, types)
	refused := 0
	for _, ty := range types {
		t.Run(ty.ID, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "c")
			res, err := accelc.Init(context.Background(), dir, accelc.InitOptions{Type: ty.ID})
			if len(ty.Labels) == 0 && len(ty.Resources) == 0 {
				require.True(t, accelc.IsUsage(err), "%v", err)
				assert.Contains(t, err.Error(), "no label that identifies it")
				assert.NoDirExists(t, dir)
				refused++
				return
			}
			require.NoError(t, err)
			assert.Equal(t, ty.ID, res.Type)
			assert.Equal(t, 2, res.Typed)
			r, err := accelc.Cluster(context.Background(), dir, accelc.Options{Stages: accelc.Rendered})
			require.NoError(t, err)
			for _, d := range r.Diagnostics {
				assert.NotEqual(t, compile.Warning, d.Severity, "%s", d)
			}
			// The sample nodes the result counts are the ones the cluster
			// reads, each of the type.
			require.Len(t, r.Inventory.Nodes, res.Typed)
			for _, n := range r.Inventory.Nodes {
				assert.Equal(t, ty.ID, n.AcceleratorType, n.Name)
			}
			cases, err := policytest.ReadCases(dir)
			require.NoError(t, err)
			assert.Len(t, cases.Cases, 2)
		})
	}
	// Those no label or resource names (the Gaudi2 and MLU290-M5, typed
	// by PCI id or a pin; Kunlunxin's P800 and Moore Threads' S4000 and
	// S5000, whose vendors' labels name no model: a pin, or the memory of
	// the cards sGPU slices) are few.
	assert.Less(t, refused, len(types)/10, "init refuses few types")
}

// TestInitRefuses: a directory that holds anything, or a file, is never
// written to; an empty one is used.
func TestInitRefuses(t *testing.T) {
	dir := t.TempDir()
	keep := filepath.Join(dir, "notes.txt")
	require.NoError(t, os.WriteFile(keep, []byte("mine"), 0o644))
	_, err := accelc.Init(context.Background(), dir, accelc.InitOptions{})
	require.True(t, errors.Is(err, accelc.ErrNotEmpty), "%v", err)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, entries, 1)

	_, err = accelc.Init(context.Background(), keep, accelc.InitOptions{})
	require.True(t, errors.Is(err, accelc.ErrNotEmpty), "%v", err)

	empty := t.TempDir()
	res, err := accelc.Init(context.Background(), empty, accelc.InitOptions{Name: "lab", Team: "vision"})
	require.NoError(t, err)
	assert.Equal(t, "l40s", res.Profile)
	assert.FileExists(t, filepath.Join(empty, "cluster.cue"))
	// Nothing is left beside it.
	siblings, err := os.ReadDir(filepath.Dir(empty))
	require.NoError(t, err)
	for _, s := range siblings {
		assert.NotContains(t, s.Name(), ".init-")
	}

	for _, bad := range []accelc.InitOptions{{Name: "Big_Lab"}, {Team: "ML Team"}, {Type: "nvidia-h200-140gb"}} {
		_, err := accelc.Init(context.Background(), filepath.Join(t.TempDir(), "x"), bad)
		assert.True(t, accelc.IsUsage(err), "%+v: %v", bad, err)
	}
}

// TestEveryTypeReachesItsNodes: profiles select nodes by the type label,
// so every built-in type either has a rule in the rendered
// NodeFeatureRule that gives its nodes that label (by PCI id), or init
// and vet say how its nodes get it: init pins its sample nodes and says
// why, and vet warns about a profile naming it whose nodes carry no
// label and no pin, or, with no node yet, about what its nodes will need.
func TestEveryTypeReachesItsNodes(t *testing.T) {
	types, err := accelc.Types()
	require.NoError(t, err)
	const label = "accelerator.opendatahub.io/type"
	byRule := 0
	for _, ty := range types {
		t.Run(ty.ID, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "c")
			res, err := accelc.Init(context.Background(), dir, accelc.InitOptions{Type: ty.ID})
			refused := accelc.IsUsage(err)
			if refused {
				// No sample node can be written: a cluster whose profile
				// names the type, with nodes of another.
				_, err = accelc.Init(context.Background(), dir, accelc.InitOptions{})
				require.NoError(t, err)
				cue := readFile(t, filepath.Join(dir, "cluster.cue"))
				writeFile(t, filepath.Join(dir, "cluster.cue"), strings.ReplaceAll(cue, `"`+accelc.DefaultInitType+`"`, `"`+ty.ID+`"`))
			} else {
				require.NoError(t, err)
			}
			r, err := accelc.Cluster(context.Background(), dir, accelc.Options{Stages: accelc.Rendered})
			require.NoError(t, err)
			if typedByRule(t, r.Tree, label, ty.ID) {
				byRule++
				if !refused {
					assert.Empty(t, res.Labelling)
					assert.Empty(t, res.Pinned)
				}
				return
			}
			var warned []string
			available := 0 // the type's devices the catalog counts with init's pins
			if refused {
				for _, d := range r.Diagnostics {
					if d.Severity == compile.Warning && strings.Contains(d.Msg, "when "+ty.ID+" nodes join") {
						warned = append(warned, d.Msg)
					}
				}
			} else {
				assert.Contains(t, res.Labelling, "cluster.nodes")
				assert.Equal(t, []string{"gpu-node-01", "gpu-node-02"}, res.Pinned, "init pins the sample nodes no rule labels")
				pinned := catalogType(t, r, ty.ID)
				assert.Positive(t, pinned.Available, "pinned nodes are the profile's")
				assert.Zero(t, pinned.Unlabelled)
				available = pinned.Available
				// Without init's pins, vet says what the nodes need.
				cue := readFile(t, filepath.Join(dir, "cluster.cue"))
				i, j := strings.Index(cue, "\tnodes: {"), strings.Index(cue, "\t}\n}")
				require.True(t, i > 0 && j > i, "init's pins in cluster.cue:\n%s", cue)
				writeFile(t, filepath.Join(dir, "cluster.cue"), cue[:i]+cue[j+len("\t}\n"):])
				r, err = accelc.Cluster(context.Background(), dir, accelc.Options{Stages: accelc.Checked})
				require.NoError(t, err)
				for _, d := range r.Diagnostics {
					if d.Severity == compile.Warning && strings.Contains(d.Msg, "2 of 2 "+ty.ID+" nodes (gpu-node-01, gpu-node-02) carry no "+label) {
						warned = append(warned, d.Msg)
					}
				}
			}
			require.Len(t, warned, 1, "no rule labels %s nodes, and vet must say so: %v", ty.ID, r.Diagnostics)
			assert.Contains(t, warned[0], "pin its nodes in cluster.nodes")
			assert.Contains(t, warned[0], label+"="+ty.ID)
			if !refused {
				// Nor does the catalog count them available: the
				// profile's pods would stay Pending there.
				unpinned := catalogType(t, r, ty.ID)
				assert.Zero(t, unpinned.Available, "nodes without the type label are not the profile's")
				assert.Equal(t, available, unpinned.Unlabelled, "the devices the pins made available")
				assert.Contains(t, unpinned.Labelling, "2 of 2 "+ty.ID+" nodes carry no "+label)
				assert.Contains(t, unpinned.Labelling, "pin its nodes in cluster.nodes")
			}
		})
	}
	assert.Greater(t, byRule, len(types)/2, "most types are labelled by PCI id")
}

// catalogType is type id in the catalog document of the first profile
// naming it.
func catalogType(t *testing.T, r *accelc.Result, id string) catalogdoc.Type {
	t.Helper()
	doc := r.Catalog()
	for _, p := range doc.Profiles {
		for _, ty := range p.Types {
			if ty.ID == id {
				return ty
			}
		}
	}
	t.Fatalf("no profile of the catalog names %s", id)
	return catalogdoc.Type{}
}

// typedByRule reports whether the rendered NodeFeatureRule has a rule
// matching PCI devices that sets label to id.
func typedByRule(t *testing.T, tree render.Tree, label, id string) bool {
	t.Helper()
	for _, p := range tree.Paths() {
		if !strings.Contains(p, "nodefeaturerule") {
			continue
		}
		var nfr struct {
			Spec struct {
				Rules []struct {
					Labels        map[string]string `json:"labels"`
					MatchFeatures []struct {
						Feature string `json:"feature"`
					} `json:"matchFeatures"`
					// Boards told by their PCI subsystems.
					MatchAny []struct {
						MatchFeatures []struct {
							Feature string `json:"feature"`
						} `json:"matchFeatures"`
					} `json:"matchAny"`
				} `json:"rules"`
			} `json:"spec"`
		}
		require.NoError(t, yaml.Unmarshal(tree[p], &nfr), p)
		for _, r := range nfr.Spec.Rules {
			if r.Labels[label] != id {
				continue
			}
			for _, f := range r.MatchFeatures {
				if f.Feature == "pci.device" {
					return true
				}
			}
			for _, a := range r.MatchAny {
				for _, f := range a.MatchFeatures {
					if f.Feature == "pci.device" {
						return true
					}
				}
			}
		}
	}
	return false
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(b)
}
