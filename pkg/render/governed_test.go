package render_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	resourcev1 "k8s.io/api/resource/v1"
	"sigs.k8s.io/yaml"

	"github.com/accelc/accelc/pkg/inventory"
	"github.com/accelc/accelc/pkg/render"
	"github.com/accelc/accelc/policies"
)

// renderNodes renders a cluster from CUE against the raw nodes.
func renderNodes(t *testing.T, src string, nodes ...inventory.RawNode) render.Tree {
	t.Helper()
	m := loadCUE(t, src)
	tree, err := render.Cluster(m, inventory.Classify(nodes, m.Catalog, inventory.Options{}), render.Provenance{})
	require.NoError(t, err)
	return tree
}

// extraPrefixes are the admission constraint's extraResourcePrefixes.
func extraPrefixes(t *testing.T, tree render.Tree) []string {
	t.Helper()
	var c struct {
		Spec struct {
			Parameters struct {
				ExtraResourcePrefixes []string `json:"extraResourcePrefixes"`
			} `json:"parameters"`
		} `json:"spec"`
	}
	file := render.DirConstraints + "/" + strings.ToLower(policies.Admission.Kind) + "-" + render.ConstraintName + ".yaml"
	require.NoError(t, yaml.Unmarshal(tree[file], &c))
	return c.Spec.Parameters.ExtraResourcePrefixes
}

func capacityNode(t *testing.T, name string, capacity map[string]string) inventory.RawNode {
	t.Helper()
	data, err := json.Marshal(map[string]any{"kind": "Node", "metadata": map[string]any{"name": name}, "status": map[string]any{"capacity": capacity}})
	require.NoError(t, err)
	raw, _, err := inventory.Decode(data)
	require.NoError(t, err)
	return raw[0]
}

// TestEveryDeviceGoverned: every extended resource a node advertises is
// an accelerator to the policies unless the CUE declares it harmless, as
// are the GPU vendors' whole domains; a name a prefix already covers is
// not listed again.
func TestEveryDeviceGoverned(t *testing.T) {
	tree := renderNodes(t, `package c

cluster: {
	name: "lab"
	nonAcceleratorResources: ["smarter-devices/fuse", "vpc.amazonaws.com/"]
}
`,
		capacityNode(t, "cc-1", map[string]string{"cpu": "96", "nvidia.com/GH100_H200_141GB": "8", "vpc.amazonaws.com/efa": "4", "hugepages-1Gi": "8"}),
		capacityNode(t, "cpu-1", map[string]string{"example.com/fpga": "2", "smarter-devices/fuse": "10", "smarter-devices/vfio": "1"}))
	got := extraPrefixes(t, tree)
	for _, want := range []string{"example.com/fpga", "smarter-devices/vfio"} {
		assert.Contains(t, got, want)
	}
	// The vendors' whole domains are the policies' own.
	for _, want := range []string{"nvidia.com/", "huawei.com/", "qualcomm.com/"} {
		assert.Contains(t, policies.BaseResourcePrefixes, want)
	}
	for _, not := range []string{"smarter-devices/fuse", "vpc.amazonaws.com/efa", "nvidia.com/GH100_H200_141GB", "hugepages-1Gi", "cpu"} {
		assert.NotContains(t, got, not)
	}
	for _, p := range got {
		for _, base := range policies.BaseResourcePrefixes {
			assert.False(t, strings.HasPrefix(p, base), "%s is covered by the base prefix %s", p, base)
		}
	}
	assert.IsNonDecreasing(t, got)
}

// TestDeviceClassesGoverned: a DeviceClass's extended resource name, its
// own or deviceclass.resource.kubernetes.io/<class>, is an accelerator to
// the policies.
func TestDeviceClassesGoverned(t *testing.T) {
	tree := renderExample(t, "small-lab")
	extra := extraPrefixes(t, tree)
	classes := 0
	for path, data := range tree {
		if !strings.HasPrefix(path, "dra/deviceclass-") {
			continue
		}
		var dc resourcev1.DeviceClass
		require.NoError(t, yaml.Unmarshal(data, &dc))
		names := []string{"deviceclass.resource.kubernetes.io/" + dc.Name}
		if dc.Spec.ExtendedResourceName != nil {
			names = append(names, *dc.Spec.ExtendedResourceName)
		}
		for _, n := range names {
			governed := false
			for _, p := range append(append([]string{}, policies.BaseResourcePrefixes...), extra...) {
				governed = governed || strings.HasPrefix(n, p)
			}
			assert.True(t, governed, "%s: %s is not an accelerator to the policies", path, n)
		}
		classes++
	}
	assert.Positive(t, classes)
}

// TestGenericNamespacesPodSecurity: the generic GPU namespaces get the Pod
// Security labels team namespaces get, at their stage, never pruned; a
// generic namespace of a team is rendered once, as the team's; podSecurity
// "none" leaves them alone.
func TestGenericNamespacesPodSecurity(t *testing.T) {
	const src = `package c

cluster: {
	name: "lab"
	enforcement: %q
	podSecurity: %q
	genericGPUNamespaces: ["legacy", "ml"]
}
teams: ml: namespaces: ["ml"]
`
	for _, tc := range []struct {
		enforcement, podSecurity string
		want                     map[string]string // legacy's labels of pod-security.kubernetes.io/…
	}{
		{"deny", "baseline", map[string]string{"enforce": "baseline", "audit": "baseline", "warn": "baseline"}},
		{"dryrun", "baseline", map[string]string{"audit": "baseline", "warn": "baseline"}},
		{"deny", "restricted", map[string]string{"enforce": "restricted", "audit": "restricted", "warn": "restricted"}},
		{"deny", "none", nil},
	} {
		t.Run(tc.enforcement+"/"+tc.podSecurity, func(t *testing.T) {
			tree := renderNodes(t, strings.Replace(strings.Replace(src, "%q", `"`+tc.enforcement+`"`, 1), "%q", `"`+tc.podSecurity+`"`, 1))
			data, ok := tree["tenancy/namespace-legacy.yaml"]
			if tc.want == nil {
				assert.False(t, ok)
				return
			}
			require.True(t, ok, "no Namespace legacy in %v", tree.Paths())
			var ns struct {
				Metadata struct {
					Labels      map[string]string `json:"labels"`
					Annotations map[string]string `json:"annotations"`
				} `json:"metadata"`
			}
			require.NoError(t, yaml.Unmarshal(data, &ns))
			got := map[string]string{}
			for k, v := range ns.Metadata.Labels {
				if mode, ok := strings.CutPrefix(k, "pod-security.kubernetes.io/"); ok && !strings.HasSuffix(mode, "-version") {
					got[mode] = v
				}
			}
			assert.Equal(t, tc.want, got)
			assert.Equal(t, "disabled", ns.Metadata.Annotations["kustomize.toolkit.fluxcd.io/prune"])
			assert.Contains(t, string(tree["tenancy/kustomization.yaml"]), "- namespace-legacy.yaml\n")
			assert.Contains(t, tree.Paths(), "tenancy/namespace-ml.yaml", "ml once, as the team's")
		})
	}
}

// TestVendorDomainsAreThePolicies: every vendor domain vet and render
// treat as known (inventory.VendorPrefixes) the policies hold as an
// accelerator by themselves (policies.BaseResourcePrefixes), so that the
// two lists cannot drift apart.
func TestVendorDomainsAreThePolicies(t *testing.T) {
	for _, v := range inventory.VendorPrefixes {
		covered := false
		for _, base := range policies.BaseResourcePrefixes {
			covered = covered || strings.HasPrefix(v, base)
		}
		assert.True(t, covered, "vendor domain %s is not one of the policies' base prefixes", v)
	}
}
