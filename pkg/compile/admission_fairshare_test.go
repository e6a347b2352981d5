package compile_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/accelc/accelc/pkg/compile"
)

// fairInTeam: team lab's two namespaces under admission fair sharing,
// team studio's train and notebook profiles weighed 3 and 1.
const fairInTeam = `package c

cluster: name: "lab"
profiles: {
	h200: {displayName: "H200", acceleratorTypes: ["nvidia-h200-141gb"]}
	train: {displayName: "Train", acceleratorTypes: ["nvidia-h200-141gb"], fairShare: weight: 3}
	notebook: {displayName: "Notebook", acceleratorTypes: ["nvidia-h200-141gb"]}
}
teams: {
	lab: {
		namespaces: ["lab-a", "lab-b"]
		acceleratorTypes: ["nvidia-h200-141gb"]
		profiles: ["h200"]
		quota: "nvidia-h200-141gb": 4
		admissionFairSharing: namespaces: "lab-b": 2
	}
	studio: {
		namespaces: ["studio"]
		acceleratorTypes: ["nvidia-h200-141gb"]
		profiles: ["train", "notebook"]
		quota: "nvidia-h200-141gb": 4
	}
}
`

// TestAdmissionFairSharing: the settings default to a week's half-life
// sampled every five minutes, a namespace's weight is its own or none,
// a profile's weight turns fair sharing on, and the notes say what each
// does.
func TestAdmissionFairSharing(t *testing.T) {
	m, err := compile.Load(cluster(t, map[string]string{"c.cue": fairInTeam}))
	require.NoError(t, err)
	assert.Equal(t, &compile.AdmissionFairSharingSettings{UsageHalfLife: "168h", UsageSamplingInterval: "5m"}, m.AdmissionFairSharingConfig())
	lab := m.Teams[0]
	assert.Equal(t, &compile.FairShare{Weight: 2}, lab.AdmissionFairSharing.Weight("lab-b"))
	assert.Nil(t, lab.AdmissionFairSharing.Weight("lab-a"), "weight 1 is Kueue's default: nothing to write")
	assert.True(t, m.FairSharing(), "a profile's weight turns fair sharing on")

	notes := m.AdmissionFairSharingNotes()
	require.Len(t, notes, 1)
	assert.Contains(t, notes[0].String(), "teams.lab.admissionFairSharing: lab's queues admit next the waiting workload of the namespace that used the least per weight (lab-a 1, lab-b 2), its use halving every 168h and sampled every 5m")
	var profileNotes []string
	for _, n := range m.FairShareNotes() {
		profileNotes = append(profileNotes, n.String())
	}
	require.Len(t, profileNotes, 1)
	assert.Contains(t, profileNotes[0], "profiles.train.fairShare: profile train's queues weigh 3 (studio's against its notebook 1)")

	m, err = compile.Load(cluster(t, map[string]string{"c.cue": fairInTeam + `
cluster: admissionFairSharing: {usageHalfLife: "1h", usageSamplingInterval: "1s"}
`}))
	require.NoError(t, err)
	assert.Equal(t, &compile.AdmissionFairSharingSettings{UsageHalfLife: "1h", UsageSamplingInterval: "1s"}, m.AdmissionFairSharingConfig())
}

// TestAdmissionFairSharingRefused: a weight for a namespace the team does
// not have, and a team without a Kueue queue, are errors at the setting.
func TestAdmissionFairSharingRefused(t *testing.T) {
	errs := loadErrors(t, fairInTeam+`
teams: lab: admissionFairSharing: namespaces: "lab-c": 1
teams: idle: {namespaces: ["idle"], acceleratorTypes: ["nvidia-h200-141gb"], profiles: ["h200"], admissionFairSharing: {}}
`)
	all := strings.Join(errs, "\n")
	assert.Contains(t, all, "teams.idle.admissionFairSharing: team idle has no Kueue queue for admission fair sharing to order: give it a quota")
	assert.Contains(t, all, "teams.lab.admissionFairSharing.namespaces.lab-c: namespace lab-c is not team lab's (lab-a, lab-b)")
}
