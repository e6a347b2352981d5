package compile_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/accelc/accelc/pkg/compile"
	"github.com/accelc/accelc/pkg/inventory"
)

// Before 1.36, vet says how an annotation-only workload is labelled: by
// accelc's webhook where the catalog service runs, else from the queue
// label; a cluster with a profile that does not schedule through Kueue
// and no catalog service is refused, naming the profiles; on 1.36 it
// says nothing.
func TestKubernetesVersionDiagnostic(t *testing.T) {
	m, err := compile.Load("../../examples/clusters/hetero-prod")
	require.NoError(t, err)
	say := func(want compile.Severity) string {
		for _, d := range m.Check(&inventory.Inventory{}) {
			if strings.Contains(d.Msg, "serves no MutatingAdmissionPolicy") {
				assert.Equal(t, want, d.Severity)
				return d.Msg
			}
		}
		return ""
	}
	assert.Empty(t, say(compile.Warning), "1.36")
	m.Cluster.KubernetesVersion = "1.34"
	require.True(t, m.Cluster.ProfileWebhook())
	msg := say(compile.Warning)
	assert.Contains(t, msg, "accelc's own mutating webhook")
	assert.Contains(t, msg, "fails closed")
	assert.NotContains(t, msg, "queue-name label")
	// Every offered profile queued: the queue label stands in, and vet
	// says so.
	m.Cluster.CatalogService = nil
	require.True(t, m.Cluster.LabelsFromQueue())
	msg = say(compile.Warning)
	assert.Contains(t, msg, "kueue.x-k8s.io/queue-name label Open Data Hub's webhook writes")
	assert.Contains(t, msg, "set cluster.catalogService")
	assert.NotContains(t, msg, "topology domain", "hetero-prod has no profile with a topology")

	// A queued profile kept in one topology domain: without accelc's
	// policies or webhook, what Kueue is told of it is not what 1.36
	// tells it, and vet says what differs.
	topo := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(topo, "c.cue"), []byte(`package c

cluster: {
	name: "lab"
	kubernetesVersion: "1.34"
	topology: "nvidia-h200-141gb": levels: [{name: "nvlink", nodeLabel: "nvidia.com/gpu.clique"}]
}
profiles: nvlink: {displayName: "H200", acceleratorTypes: ["nvidia-h200-141gb"], topology: required: "nvlink"}
teams: research: {namespaces: ["research"], acceleratorTypes: ["nvidia-h200-141gb"], quota: "nvidia-h200-141gb": 8}
`), 0o644))
	m, err = compile.Load(topo)
	require.NoError(t, err)
	msg = say(compile.Warning)
	assert.Contains(t, msg, "profiles nvlink keep their pods in one topology domain")
	assert.Contains(t, msg, "Kueue refuses a pod with two")

	// A profile that does not schedule through Kueue: refused when the
	// configuration loads, at kubernetesVersion.
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "c.cue"), []byte(`package c

cluster: {name: "lab", kubernetesVersion: "1.34"}
profiles: l40s: {displayName: "L40S", acceleratorTypes: ["nvidia-l40s-48gb"]}
teams: research: {namespaces: ["research"], acceleratorTypes: ["nvidia-l40s-48gb"]}
`), 0o644))
	_, err = compile.Load(dir)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "c.cue:3:")
	assert.Contains(t, err.Error(), "profiles l40s do not schedule through Kueue")
	assert.Contains(t, err.Error(), "set cluster.catalogService")
}
