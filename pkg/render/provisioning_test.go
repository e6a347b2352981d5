package render_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/accelc/accelc/pkg/accelc"
	"github.com/accelc/accelc/pkg/render"
)

// onDemand is the end-to-end test's capacity-on-demand cluster; its
// queues are kept as goldens under testdata/golden-e2e, which
// tools/upstream runs through Kueue's own types and webhooks.
const onDemand = "../../e2e/testdata/on-demand"

// TestProvisioningGolden renders on-demand's queues and compares each
// file byte for byte with testdata/golden-e2e/on-demand/queues; `go test
// ./pkg/render -update` refreshes them.
func TestProvisioningGolden(t *testing.T) {
	e2eQueuesGolden(t, onDemand, "on-demand")
}

// e2eQueuesGolden renders an end-to-end test's cluster and compares each
// file of its queues with testdata/golden-e2e/<name>/queues, which
// tools/upstream reads through Kueue's own code.
func e2eQueuesGolden(t *testing.T, dir, name string) {
	t.Helper()
	res, err := accelc.Cluster(context.Background(), dir, accelc.Options{Stages: accelc.Rendered})
	require.NoError(t, err)
	queues := render.Tree{}
	for p, data := range res.Tree {
		if name, ok := strings.CutPrefix(p, "queues/"); ok {
			queues[name] = data
		}
	}
	goldenTree(t, filepath.Join("../../testdata/golden-e2e", name, "queues"), queues)
}

// TestProvisioningObjects: the ProvisioningRequestConfig holds the class,
// managed resources and retry strategy; the AdmissionCheck names it with
// Kueue's provisioning controller; a profile whose every flavor is
// autoscaled waits on all of them (no onFlavors), a mixed one on its
// autoscaled flavor only, and an unprovisioned one on none.
func TestProvisioningObjects(t *testing.T) {
	res, err := accelc.Cluster(context.Background(), onDemand, accelc.Options{Stages: accelc.Rendered})
	require.NoError(t, err)
	tree := res.Tree
	prc := readObject(t, tree, "queues/provisioningrequestconfig-"+render.ProvisioningCheckName+".yaml")
	assert.Equal(t, map[string]any{
		"provisioningClassName": "check-capacity.autoscaling.x-k8s.io",
		"managedResources":      []any{"nvidia.com/gpu"},
		"retryStrategy":         map[string]any{"backoffLimitCount": float64(2), "backoffBaseSeconds": float64(30)},
	}, prc["spec"])
	ac := readObject(t, tree, "queues/admissioncheck-"+render.ProvisioningCheckName+".yaml")
	assert.Equal(t, map[string]any{
		"controllerName": render.ProvisioningControllerName,
		"parameters":     map[string]any{"apiGroup": "kueue.x-k8s.io", "kind": "ProvisioningRequestConfig", "name": render.ProvisioningCheckName},
	}, ac["spec"])

	checks := func(queue string) any {
		return readObject(t, tree, "queues/clusterqueue-ml-research."+queue+".yaml")["spec"].(map[string]any)["admissionChecksStrategy"]
	}
	assert.Equal(t, map[string]any{"admissionChecks": []any{map[string]any{"name": render.ProvisioningCheckName}}}, checks("a100"))
	assert.Equal(t, map[string]any{"admissionChecks": []any{map[string]any{"name": render.ProvisioningCheckName, "onFlavors": []any{"nvidia-a100-80gb"}}}}, checks("any-gpu"))
	assert.Nil(t, checks("l40s"))
}

// TestProvisioningNothingUnused: a class no profile opts into renders no
// AdmissionCheck or ProvisioningRequestConfig.
func TestProvisioningNothingUnused(t *testing.T) {
	tree := renderSharing(t, `package c

cluster: {
	name: "lab"
	autoscaling: {
		karpenter: {nodeClass: name: "gpu", pools: a100: {acceleratorType: "nvidia-a100-80gb", limit: 8}}
		provisioning: class: "check-capacity.autoscaling.x-k8s.io"
	}
}
profiles: a100: {displayName: "A100", acceleratorTypes: ["nvidia-a100-80gb"]}
teams: ml: {namespaces: ["ml"], acceleratorTypes: ["nvidia-a100-80gb"], quota: "nvidia-a100-80gb": 8}
`)
	for p := range tree {
		assert.NotContains(t, p, "admissioncheck")
		assert.NotContains(t, p, "provisioningrequestconfig")
	}
	assert.NotContains(t, string(tree["queues/clusterqueue-ml.a100.yaml"]), "admissionChecks")
}
