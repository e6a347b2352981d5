package compile_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/accelc/accelc/pkg/compile"
)

// provisionBase: A100s from a NodePool, L40S without one; profile a100
// on the A100s only, mixed on the L40S first and then the A100s, l40s
// on the L40S only.
const provisionBase = `package c

cluster: {
	name: "lab"
	autoscaling: karpenter: {
		nodeClass: name: "gpu"
		pools: a100: {acceleratorType: "nvidia-a100-80gb", limit: 16}
	}
}
profiles: {
	a100: {displayName: "A100", acceleratorTypes: ["nvidia-a100-80gb"]}
	mixed: {displayName: "Mixed", acceleratorTypes: ["nvidia-l40s-48gb", "nvidia-a100-80gb"]}
	l40s: {displayName: "L40S", acceleratorTypes: ["nvidia-l40s-48gb"]}
}
teams: ml: {namespaces: ["ml"], acceleratorTypes: ["nvidia-l40s-48gb", "nvidia-a100-80gb"], quota: {"nvidia-l40s-48gb": 8, "nvidia-a100-80gb": 16}}
`

// TestProvisionedFlavors: a provisioned profile's queue waits on the
// flavors whose type a NodePool launches, all of them or some; an
// unprovisioned profile's on none; the notes say which, the class's
// effect, the NodePool, and that Karpenter does not answer.
func TestProvisionedFlavors(t *testing.T) {
	m, err := compile.Load(cluster(t, map[string]string{"c.cue": provisionBase + `
cluster: autoscaling: provisioning: class: "check-capacity.autoscaling.x-k8s.io"
profiles: a100: provisioning: true
profiles: mixed: provisioning: true
`}))
	require.NoError(t, err)
	team := &m.Teams[0]
	f, all := m.ProvisionedFlavors(team, m.Profile("a100"))
	assert.Equal(t, []string{"nvidia-a100-80gb"}, f)
	assert.True(t, all)
	f, all = m.ProvisionedFlavors(team, m.Profile("mixed"))
	assert.Equal(t, []string{"nvidia-a100-80gb"}, f, "the L40S has no NodePool")
	assert.False(t, all)
	f, _ = m.ProvisionedFlavors(team, m.Profile("l40s"))
	assert.Empty(t, f)
	assert.True(t, m.Provisioned())
	assert.Equal(t, []string{"accelc-a100"}, m.ScalePoolNames("nvidia-a100-80gb"))

	notes := m.ProvisioningNotes()
	require.Len(t, notes, 2)
	assert.Equal(t, compile.Note, notes[0].Severity)
	a100 := notes[0].String()
	assert.Contains(t, a100, "c.cue:")
	assert.Contains(t, a100, "profiles.a100.provisioning: ml's a100 jobs wait, before Kueue admits them on A100s, for a check-capacity ProvisioningRequest")
	assert.Contains(t, a100, "it launches no node")
	assert.Contains(t, a100, "Capacity from NodePool accelc-a100, which Karpenter grows for pending pods, not for ProvisioningRequests")
	assert.Contains(t, a100, "Kueue asks again up to 3 times")
	assert.NotContains(t, a100, "without one")
	assert.Contains(t, notes[1].String(), "ml's mixed jobs wait, before Kueue admits them on A100s")
	assert.Contains(t, notes[1].String(), "on L40Ss they are admitted without one")
}

// TestProvisioningNotesWithoutProfiles: a class no profile uses renders
// nothing and says so; without the setting there is nothing to say.
func TestProvisioningNotesWithoutProfiles(t *testing.T) {
	m, err := compile.Load(cluster(t, map[string]string{"c.cue": provisionBase + `
cluster: autoscaling: provisioning: {class: "best-effort-atomic-scale-up.autoscaling.x-k8s.io", retry: backoffLimitCount: 0}
`}))
	require.NoError(t, err)
	assert.False(t, m.Provisioned())
	notes := m.ProvisioningNotes()
	require.Len(t, notes, 1)
	assert.Contains(t, notes[0].String(), "cluster.autoscaling.provisioning: no profile sets provisioning: true")

	m, err = compile.Load(cluster(t, map[string]string{"c.cue": provisionBase}))
	require.NoError(t, err)
	assert.Empty(t, m.ProvisioningNotes())
	assert.False(t, m.Provisioned())
}

// TestProvisioningVet: what vet refuses, at the profile's provisioning
// field: no class to ask for, a profile Kueue does not queue, and one
// whose types no NodePool launches; and a class that is not a DNS name.
func TestProvisioningVet(t *testing.T) {
	class := "\ncluster: autoscaling: provisioning: class: \"check-capacity.autoscaling.x-k8s.io\"\n"
	for _, tc := range []struct{ name, src, want string }{
		{"no class", provisionBase + "profiles: a100: provisioning: true\n",
			"c.cue:16:17: profiles.a100.provisioning: profile a100 waits for a ProvisioningRequest, but cluster.autoscaling.provisioning names no class: set cluster.autoscaling.provisioning.class"},
		{"no NodePool", provisionBase + class + "profiles: l40s: provisioning: true\n",
			"c.cue:18:17: profiles.l40s.provisioning: no NodePool launches nvidia-l40s-48gb, the types of profile l40s's queues: a ProvisioningRequest would ask for capacity nothing adds; add a pool under cluster.autoscaling.karpenter.pools with acceleratorType \"nvidia-l40s-48gb\", or drop provisioning"},
		{"resource quotas", provisionBase + class + "cluster: quotas: \"resourcequota\"\nprofiles: a100: provisioning: true\n",
			"profiles.a100.provisioning: profile a100 is not queued by Kueue (cluster.quotas is \"resourcequota\"): Kueue makes ProvisioningRequests only for the workloads of its ClusterQueues; queue the profile, or drop provisioning"},
		{"disabled", provisionBase + class + "profiles: a100: {provisioning: true, enabled: false}\n",
			"profile a100 is not queued by Kueue (it is disabled)"},
		{"class not a name", provisionBase + "cluster: autoscaling: provisioning: class: \"Check Capacity\"\n",
			"cluster.autoscaling.provisioning.class"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := compile.Load(cluster(t, map[string]string{"c.cue": tc.src}))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			if tc.name != "class not a name" {
				assert.Len(t, strings.Split(strings.TrimSpace(err.Error()), "\n"), 1, "one error: %v", err)
			}
		})
	}
}

// TestProvisioningDispatched: a MultiKueue manager's queues that hand a
// provisioned profile to a worker make no ProvisioningRequest (the
// worker's own queue does, where the nodes are), so the manager needs no
// class or NodePool for it, and --explain says where the request is made.
func TestProvisioningDispatched(t *testing.T) {
	src := mkManager(`east: {kubeconfigSecret: "east", profiles: ["a100"]}`) + "profiles: a100: provisioning: true\n"
	m, err := compile.Load(cluster(t, map[string]string{"c.cue": src}))
	require.NoError(t, err, "a profile only dispatched needs nothing of the manager")
	f, _ := m.ProvisionedFlavors(&m.Teams[0], m.Profile("a100"))
	assert.Empty(t, f)
	assert.False(t, m.Provisioned())

	m, err = compile.Load(cluster(t, map[string]string{"c.cue": src + "cluster: autoscaling: provisioning: class: \"check-capacity.autoscaling.x-k8s.io\"\n"}))
	require.NoError(t, err)
	notes := m.ProvisioningNotes()
	require.Len(t, notes, 1)
	assert.Contains(t, notes[0].String(), "profiles.a100.provisioning: research's a100 jobs are dispatched by MultiKueue to east: the workers' queues, where the nodes are, make the ProvisioningRequest; this manager's makes none")
}
