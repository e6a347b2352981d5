package controlplane

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	_ "github.com/accelc/accelc/internal/testutil"
)

func TestFindBinariesMissing(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(BinEnv, dir)
	_, err := findBinaries(options{scheduler: true, controllerManager: true}, K8sVersion)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "no kube-apiserver in $"+BinEnv+"="+dir+", no kube-scheduler in $"+BinEnv+"="+dir+", no kube-controller-manager in $"+BinEnv+"="+dir)
	assert.Contains(t, err.Error(), "run `make control-plane`")
}

func TestFindBinariesFromEnv(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"kube-apiserver", "kube-scheduler", "kube-controller-manager", "etcd"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"), 0o755))
	}
	t.Setenv(BinEnv, dir)
	t.Setenv("PATH", dir)
	b, err := findBinaries(options{scheduler: true, controllerManager: true}, K8sVersion)
	require.NoError(t, err)
	assert.Equal(t, binaries{
		etcd:              filepath.Join(dir, "etcd"),
		apiserver:         filepath.Join(dir, "kube-apiserver"),
		scheduler:         filepath.Join(dir, "kube-scheduler"),
		controllerManager: filepath.Join(dir, "kube-controller-manager"),
	}, b)
}

func TestServerVersion(t *testing.T) {
	t.Setenv(VersionEnv, "")
	v, err := ServerVersion()
	require.NoError(t, err)
	assert.Equal(t, K8sVersion, v)
	t.Setenv(VersionEnv, OlderK8sVersion)
	v, err = ServerVersion()
	require.NoError(t, err)
	assert.Equal(t, OlderK8sVersion, v)
	t.Setenv(VersionEnv, "v1.30.0")
	_, err = ServerVersion()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "built at "+K8sVersion+" and "+OlderK8sVersion+" only")
	assert.Equal(t, 34, Minor(OlderK8sVersion))
	assert.Equal(t, 36, Minor(K8sVersion))
	assert.Equal(t, 0, Minor("latest"))
}

func TestFindBinariesOlderVersion(t *testing.T) {
	t.Setenv(BinEnv, "")
	_, err := findBinaries(options{}, OlderK8sVersion)
	if err == nil {
		t.Skip("bin/k8s-" + OlderK8sVersion + " is built")
	}
	assert.Contains(t, err.Error(), filepath.Join("bin", "k8s-"+OlderK8sVersion, ""))
	assert.Contains(t, err.Error(), "build Kubernetes "+OlderK8sVersion)
}

func TestFindGatekeeperMissing(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(GatekeeperBinEnv, dir)
	_, err := findGatekeeper()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "no Gatekeeper "+GatekeeperVersion+" in $"+GatekeeperBinEnv+"="+dir+" (missing manager, crds/)")
	assert.Contains(t, err.Error(), "run `make e2e-tools`")
}

func TestFindGatekeeperFromEnv(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "manager"), []byte("#!/bin/sh\n"), 0o755))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "crds"), 0o755))
	t.Setenv(GatekeeperBinEnv, dir)
	got, err := findGatekeeper()
	require.NoError(t, err)
	assert.Equal(t, dir, got)
}

func TestFindFluxMissing(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "source-controller"), []byte("#!/bin/sh\n"), 0o755))
	t.Setenv(FluxBinEnv, dir)
	_, err := findFlux()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "no Flux "+FluxVersion+" in $"+FluxBinEnv+"="+dir+" (missing kustomize-controller, crds/)")
	assert.Contains(t, err.Error(), "run `make e2e-tools`")
}

func TestFindFluxFromEnv(t *testing.T) {
	dir := t.TempDir()
	for _, c := range fluxControllers {
		require.NoError(t, os.WriteFile(filepath.Join(dir, c), []byte("#!/bin/sh\n"), 0o755))
	}
	require.NoError(t, os.Mkdir(filepath.Join(dir, "crds"), 0o755))
	t.Setenv(FluxBinEnv, dir)
	got, err := findFlux()
	require.NoError(t, err)
	assert.Equal(t, dir, got)
}
