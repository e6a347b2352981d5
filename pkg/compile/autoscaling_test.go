package compile_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/accelc/accelc/pkg/compile"
	"github.com/accelc/accelc/pkg/inventory"
)

const scaleBase = `package c

cluster: name: "lab"
profiles: l4: {
	displayName: "L4"
	acceleratorTypes: ["nvidia-l4-24gb"]
	tolerations: [{key: "nvidia.com/gpu", operator: "Exists", effect: "NoSchedule"}, {key: "lab/only", operator: "Equal", value: "yes", effect: "NoSchedule"}]
}
profiles: "l4-any": {
	displayName: "L4, any"
	acceleratorTypes: ["nvidia-l4-24gb"]
	tolerations: [{key: "nvidia.com/gpu", operator: "Exists", effect: "NoSchedule"}]
}
teams: a: {namespaces: ["a"], acceleratorTypes: ["nvidia-l4-24gb"], quota: "nvidia-l4-24gb": 12}
`

// TestScalePools resolves a Karpenter pool: the class's AWS instance
// types only, the taints every profile of the class tolerates, the limit
// from the teams' quotas when the CUE gives none.
func TestScalePools(t *testing.T) {
	m, err := compile.Load(cluster(t, map[string]string{"c.cue": scaleBase + `
cluster: autoscaling: karpenter: {
	nodeClass: name: "gpu"
	pools: l4: {acceleratorType: "nvidia-l4-24gb", capacityTypes: ["spot", "on-demand"]}
}
`}))
	require.NoError(t, err)
	pools := m.ScalePools()
	require.Len(t, pools, 1)
	p := pools[0]
	assert.Equal(t, []string{"g6.12xlarge", "g6.16xlarge", "g6.24xlarge", "g6.2xlarge", "g6.48xlarge", "g6.4xlarge", "g6.8xlarge", "g6.xlarge", "gr6.4xlarge", "gr6.8xlarge"}, p.InstanceTypes, "AWS's L4 instances, not GCP's g2-standard-*")
	assert.Equal(t, []compile.Taint{{Key: "nvidia.com/gpu", Effect: "NoSchedule"}}, p.Taints, "what both profiles tolerate")
	require.NotNil(t, p.Limit)
	assert.Equal(t, 12, *p.Limit)
	assert.True(t, p.LimitFromQuotas)
	assert.Equal(t, "nvidia.com/gpu", p.Resource)
}

// TestScaleVet: what vet refuses of a pool, at the pool's field.
func TestScaleVet(t *testing.T) {
	for _, tc := range []struct{ name, pools, want string }{
		{"unknown class", `x: acceleratorType: "nvidia-l5-24gb"`, "cluster.autoscaling.karpenter.pools.x.acceleratorType"},
		{"another class's instance", `x: {acceleratorType: "nvidia-l4-24gb", instanceTypes: ["g6.xlarge", "g6e.xlarge"]}`,
			"c.cue:18:77: cluster.autoscaling.karpenter.pools.x.instanceTypes[1]: g6e.xlarge is an instance type of nvidia-l40s-48gb, not nvidia-l4-24gb: the pool would launch nvidia-l40s-48gb nodes labelled nvidia-l4-24gb"},
		{"not an instance of the class", `x: {acceleratorType: "nvidia-l4-24gb", instanceTypes: ["m7i.large"]}`, "m7i.large is not an instance type of nvidia-l4-24gb in the catalog (AWS)"},
		{"no instance on the cloud", `x: {acceleratorType: "nvidia-p40-24gb"}`, "the catalog knows no AWS instance type of nvidia-p40-24gb for a EC2NodeClass"},
		{"no profile", `x: acceleratorType: "nvidia-t4-16gb"`, "no enabled profile names nvidia-t4-16gb"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := compile.Load(cluster(t, map[string]string{"c.cue": scaleBase + `
cluster: autoscaling: karpenter: {
	nodeClass: name: "gpu"
	pools: ` + tc.pools + `
}
`}))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

// TestScaleAgainstInventory: a limit that cannot hold the teams' quotas,
// and a profile that no node and no pool serves, are errors; a pool with
// no limit and no quota a warning.
func TestScaleAgainstInventory(t *testing.T) {
	raw, _, err := inventory.Decode([]byte(`{"kind":"NodeList","items":[
	  {"metadata":{"name":"l4-a","labels":{"nvidia.com/gpu.product":"NVIDIA-L4"}},"status":{"capacity":{"nvidia.com/gpu":"4"},"conditions":[{"type":"Ready","status":"True"}]}}]}`))
	require.NoError(t, err)
	check := func(extra string) string {
		t.Helper()
		m, err := compile.Load(cluster(t, map[string]string{"c.cue": scaleBase + extra}))
		require.NoError(t, err)
		var msgs []string
		for _, d := range m.Check(inventory.Classify(raw, m.Catalog, inventory.Options{})) {
			msgs = append(msgs, d.String())
		}
		return strings.Join(msgs, "\n")
	}
	got := check(`
cluster: autoscaling: karpenter: {
	nodeClass: name: "gpu"
	pools: l4: {acceleratorType: "nvidia-l4-24gb", limit: 4}
}
`)
	assert.Contains(t, got, "cluster.autoscaling.karpenter.pools.l4.limit: the teams hold 12 nvidia-l4-24gb in quota, but the cluster has 4 and its NodePools (l4) may add at most 4: raise the limit to 8 or lower the quotas")
	got = check(`
profiles: t4: {displayName: "T4", acceleratorTypes: ["nvidia-t4-16gb"]}
cluster: autoscaling: karpenter: {
	nodeClass: name: "gpu"
	pools: l4: acceleratorType: "nvidia-l4-24gb"
}
`)
	assert.Contains(t, got, "profiles.t4.acceleratorTypes: no node has nvidia-t4-16gb and no NodePool launches one")
	assert.NotContains(t, got, "limit")
	got = check(`
profiles: l40s: {displayName: "L40S", acceleratorTypes: ["nvidia-l40s-48gb"]}
cluster: autoscaling: karpenter: {
	nodeClass: name: "gpu"
	pools: l40s: acceleratorType: "nvidia-l40s-48gb"
}
`)
	assert.Contains(t, got, "cluster.autoscaling.karpenter.pools.l40s: no limit, and no team holds a quota of nvidia-l40s-48gb: the pool may launch without bound; give it a limit")
}
