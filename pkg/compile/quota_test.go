package compile_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/accelc/accelc/pkg/compile"
	"github.com/accelc/accelc/pkg/inventory"
)

// TestTeamQuotaErrors: each mistake names its file and line and says
// what to do.
func TestTeamQuotaErrors(t *testing.T) {
	src := `package c

cluster: {
	name: "lab"
	priorityClasses: training: value: 500
}
teams: a: {
	namespaces: ["a"]
	acceleratorTypes: ["nvidia-l4-24gb", "nvidia-t4-16gb"]
	quota: {"nvidia-l4-24gb": 4, "nvidia-h100-80gb": 2, "nvidia-h100-8gb": 1}
	borrowingLimit: "nvidia-l4-24gb": 2
	lendingLimit: "nvidia-l4-24gb": 1
	priority: "urgent"
}
`
	dir := cluster(t, map[string]string{"c.cue": src})
	_, err := compile.Load(dir)
	var errs compile.Errors
	require.ErrorAs(t, err, &errs)
	at := filepath.ToSlash(filepath.Clean(dir)) + "/c.cue:"
	for _, want := range []string{
		at + "10:31: teams.a.quota: a quota for nvidia-h100-80gb, which the team is not entitled to: add it to acceleratorTypes or drop the quota",
		at + `10:54: teams.a.quota: unknown accelerator type "nvidia-h100-8gb"; did you mean`,
		at + `9:39: teams.a: entitled to nvidia-t4-16gb but it has no quota: give it one (quota: "nvidia-t4-16gb": N; 0 to only borrow)`,
		at + "11:18: teams.a.borrowingLimit: borrowing needs a cohort: set teams.a.cohort",
		at + "12:16: teams.a.lendingLimit: lending needs a cohort: set teams.a.cohort",
		at + "13:2: teams.a.priority: urgent is not one of cluster.priorityClasses (training): declare it there",
	} {
		assert.Contains(t, err.Error(), want)
	}
}

// TestQuotaWithoutNamespaces: a team with a quota and no namespaces holds
// devices no pod can use — an error, unless under Kueue it lends them to a
// cohort.
func TestQuotaWithoutNamespaces(t *testing.T) {
	for _, tc := range []struct {
		name, extra, want string
	}{
		{name: "kueue", want: "c.cue:6:2: teams.reserve.quota: team reserve has a quota but no namespaces, so no pod can use it (Kueue's Cohort reserve would hold it for no queue): list the team's namespaces, drop the quota, or (with Kueue) put the team in a cohort to lend it"},
		{name: "resourcequota", extra: `cluster: quotas: "resourcequota"` + "\n", want: "teams.reserve.quota: team reserve has a quota but no namespaces, so no pod can use it (a ResourceQuota lives in a namespace)"},
		{name: "kueue reserve in a cohort", extra: `teams: reserve: cohort: "pool"` + "\n" + `teams: a: cohort: "pool"` + "\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := `package c

cluster: name: "lab"
teams: reserve: {
	acceleratorTypes: ["nvidia-l4-24gb"]
	quota: "nvidia-l4-24gb": 4
}
teams: a: {namespaces: ["a"], acceleratorTypes: ["nvidia-l4-24gb"], quota: "nvidia-l4-24gb": 4}
` + tc.extra
			_, err := compile.Load(cluster(t, map[string]string{"c.cue": src}))
			if tc.want == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

// TestQuotaWarnings: quotas beyond the inventory's devices, and for a type
// no node has, are warnings with the figures.
func TestQuotaWarnings(t *testing.T) {
	dir := cluster(t, map[string]string{"c.cue": `package c

cluster: name: "lab"
teams: a: {namespaces: ["a"], acceleratorTypes: ["nvidia-l4-24gb", "nvidia-t4-16gb"], quota: {"nvidia-l4-24gb": 6, "nvidia-t4-16gb": 2}}
teams: b: {namespaces: ["b"], acceleratorTypes: ["nvidia-l4-24gb"], quota: "nvidia-l4-24gb": 4}
`})
	var msgs []string
	for _, d := range checkOnTwoL4Nodes(t, dir) {
		msgs = append(msgs, d.String())
	}
	all := strings.Join(msgs, "\n")
	assert.Regexp(t, `c\.cue:\d+:\d+: teams: quotas for nvidia-l4-24gb add up to 10 \(a 6 \+ b 4\) but the cluster has 8 allocatable`, all, "positioned at the teams")
	assert.Contains(t, all, "c.cue:4:116: teams.a.quota: 2 × nvidia-t4-16gb, but no node in the inventory has one")
}

// checkOnTwoL4Nodes compiles the cluster in dir and checks it against two
// Ready nodes of 4 L4s each.
func checkOnTwoL4Nodes(t *testing.T, dir string) []compile.Diagnostic {
	t.Helper()
	m, err := compile.Load(dir)
	require.NoError(t, err)
	raw, _, err := inventory.Decode([]byte(`{"kind":"NodeList","items":[
	  {"metadata":{"name":"l4-a","labels":{"nvidia.com/gpu.product":"NVIDIA-L4"}},"status":{"capacity":{"nvidia.com/gpu":"4"},"conditions":[{"type":"Ready","status":"True"}]}},
	  {"metadata":{"name":"l4-b","labels":{"nvidia.com/gpu.product":"NVIDIA-L4"}},"status":{"capacity":{"nvidia.com/gpu":"4"},"conditions":[{"type":"Ready","status":"True"}]}}]}`))
	require.NoError(t, err)
	return m.Check(inventory.Classify(raw, m.Catalog, inventory.Options{}))
}

// TestQueueCoverage: a MIG-slice profile whose team's quota is of whole
// GPUs (the mixed 3g.40gb + 2g.20gb fleet of issue 17) would sit in its
// LocalQueue for ever; vet says so at the profile, with what to do.
func TestQueueCoverage(t *testing.T) {
	src := `package c

cluster: {
	name: "lab"
	mig: configs: "a100-3g": {acceleratorType: "nvidia-a100-80gb", layout: "3g.40gb": 1}
}
profiles: slice: {
	displayName: "3g.40gb"
	acceleratorTypes: ["nvidia-a100-80gb"]
	mig: "3g.40gb"
}
profiles: whole: {
	displayName: "A100"
	acceleratorTypes: ["nvidia-a100-80gb"]
}
teams: a: {
	namespaces: ["a"]
	acceleratorTypes: ["nvidia-a100-80gb"]
	quota: "nvidia-a100-80gb": 8
}
teams: b: {
	namespaces: ["b"]
	acceleratorTypes: ["nvidia-a100-80gb"]
	profiles: ["slice"]
	quota: "a100-3g": 4
}
`
	dir := cluster(t, map[string]string{"c.cue": src})
	_, err := compile.Load(dir)
	var errs compile.Errors
	require.ErrorAs(t, err, &errs)
	at := filepath.ToSlash(filepath.Clean(dir)) + "/c.cue:"
	assert.Contains(t, err.Error(), at+"7:11: profiles.slice: team a may use profile slice, but its quota (nvidia-a100-80gb) has none of the profile's pools (a100-3g) for the nvidia.com/mig-3g.40gb its pods request: in LocalQueue slice Kueue would leave them pending; give the team a quota of one of them, or list the team's profiles without slice")
	assert.Len(t, errs, 1, "team b's quota covers its slice profile")
}

// TestCohortNamedAfterTeam: a team's quota is a Kueue Cohort named after
// the team, so a shared cohort may not take a team's name.
func TestCohortNamedAfterTeam(t *testing.T) {
	dir := cluster(t, map[string]string{"c.cue": `package c

cluster: name: "lab"
teams: a: {namespaces: ["a"], acceleratorTypes: ["nvidia-l4-24gb"], quota: "nvidia-l4-24gb": 4, cohort: "b"}
teams: b: {namespaces: ["b"], acceleratorTypes: ["nvidia-l4-24gb"], quota: "nvidia-l4-24gb": 4}
`})
	_, err := compile.Load(dir)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "teams.a.cohort: cohort b has the name of team b, whose quota is Kueue Cohort b: rename the cohort")
}

// TestPreemptionKueueRejects: a preemption Kueue's validation refuses
// is a vet error at the team.
func TestPreemptionKueueRejects(t *testing.T) {
	dir := cluster(t, map[string]string{"c.cue": `package c

cluster: name: "lab"
teams: a: {namespaces: ["a"], acceleratorTypes: ["nvidia-l4-24gb"], quota: "nvidia-l4-24gb": 4, preemption: reclaimWithinCohort: "Never"}
`})
	_, err := compile.Load(dir)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "teams.a.preemption.borrowWithinCohort: borrowWithinCohort LowerPriority with reclaimWithinCohort Never: Kueue rejects the ClusterQueue")
}

// TestQuotaWarningsWithNodePools: a type Karpenter launches nodes of
// needs no node yet, and its quotas are measured once, against its nodes
// plus the most its pools may hold (an error at the pool's limit), not
// also against its nodes alone.
func TestQuotaWarningsWithNodePools(t *testing.T) {
	for _, c := range []struct {
		l4Limit int
		want    string
	}{
		{1, "the teams hold 10 nvidia-l4-24gb in quota, but the cluster has 8 and its NodePools (l4) may add at most 1: raise the limit to 2 or lower the quotas"},
		{2, ""},
	} {
		dir := cluster(t, map[string]string{"c.cue": fmt.Sprintf(`package c

cluster: {
	name: "lab"
	autoscaling: karpenter: {
		nodeClass: name: "gpu"
		pools: {
			t4: {acceleratorType: "nvidia-t4-16gb", limit: 4}
			l4: {acceleratorType: "nvidia-l4-24gb", limit: %d}
		}
	}
}
profiles: l4: {displayName: "L4", acceleratorTypes: ["nvidia-l4-24gb"]}
profiles: t4: {displayName: "T4", acceleratorTypes: ["nvidia-t4-16gb"]}
teams: a: {namespaces: ["a"], acceleratorTypes: ["nvidia-l4-24gb", "nvidia-t4-16gb"], quota: {"nvidia-l4-24gb": 6, "nvidia-t4-16gb": 2}}
teams: b: {namespaces: ["b"], acceleratorTypes: ["nvidia-l4-24gb"], quota: "nvidia-l4-24gb": 4}
`, c.l4Limit)})
		var msgs []string
		for _, d := range checkOnTwoL4Nodes(t, dir) {
			if strings.Contains(d.Msg, "quota") {
				msgs = append(msgs, d.Msg)
			}
		}
		all := strings.Join(msgs, "\n")
		assert.NotContains(t, all, "no node in the inventory has one", "the T4s come from their NodePool")
		assert.NotContains(t, all, "teams will wait on each other", "limit %d: the pool's limit is the ceiling", c.l4Limit)
		if c.want == "" {
			assert.Empty(t, all, "limit %d", c.l4Limit)
		} else {
			assert.Equal(t, c.want, all, "limit %d", c.l4Limit)
		}
	}
}

// TestPriorityWithoutClasses: a team's or a profile's priority class where
// the cluster declares none says so ("none"), not "()".
func TestPriorityWithoutClasses(t *testing.T) {
	dir := cluster(t, map[string]string{"c.cue": `package c

cluster: name: "lab"
profiles: l4: {displayName: "L4", acceleratorTypes: ["nvidia-l4-24gb"], priorityClassName: "batch"}
teams: a: {namespaces: ["a"], acceleratorTypes: ["nvidia-l4-24gb"], quota: "nvidia-l4-24gb": 4, priority: "urgent"}
`})
	_, err := compile.Load(dir)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "teams.a.priority: urgent is not one of cluster.priorityClasses (none): declare it there")
	assert.Contains(t, err.Error(), "profiles.l4.priorityClassName: batch is not one of cluster.priorityClasses (none): declare it there; the mutation sets")
	assert.NotContains(t, err.Error(), "()")
}
