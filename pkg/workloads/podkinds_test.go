package workloads_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/dynamic"

	"github.com/accelc/accelc/internal/controlplane"
	"github.com/accelc/accelc/pkg/inventory/live"
	"github.com/accelc/accelc/pkg/workloads"
)

// TestReadUnjudgedKinds reads a real API server's CRDs: an operator's
// kind accelc does not know, whose schema holds pod templates in a list
// and a bare pod spec, is listed with where it holds them (its unserved
// version is not); Kubeflow's Notebook, which accelc judges at the
// workload, and ODH's HardwareProfile, which holds no pod template, are
// not. A user who may not list CRDs is told so.
func TestReadUnjudgedKinds(t *testing.T) {
	cp := controlplane.Start(t)
	ctx := t.Context()
	dyn, err := dynamic.NewForConfig(cp.RESTConfig())
	require.NoError(t, err)
	_, err = controlplane.ApplyCRDs(ctx, dyn,
		"testdata/crd-unjudged-kind.yaml",
		"../../tools/e2e/crds/kubeflow.org_notebooks.yaml",
		"../../tools/e2e/crds/infrastructure.opendatahub.io_hardwareprofiles.yaml")
	require.NoError(t, err)

	kinds, warnings, err := workloads.ReadUnjudgedKinds(ctx, live.Options{Kubeconfig: cp.Kubeconfig()})
	require.NoError(t, err)
	assert.Empty(t, warnings)
	assert.Equal(t, []workloads.UnjudgedKind{
		{Group: "example.com", Version: "v1", Kind: "Trainer", Paths: []string{"spec.groups[].podTemplate", "spec.launcher"}},
	}, kinds)

	kinds, warnings, err = workloads.ReadUnjudgedKinds(ctx, live.Options{Kubeconfig: cp.UserKubeconfig(t, "nobody")})
	require.NoError(t, err)
	assert.Empty(t, kinds)
	require.Len(t, warnings, 1)
	assert.Contains(t, warnings[0], "may not list CustomResourceDefinitions")
}
