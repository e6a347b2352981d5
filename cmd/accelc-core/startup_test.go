package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/accelc/accelc/internal/cli"
	"github.com/accelc/accelc/internal/testutil"
)

// TestDeps fences the policy engine out of accelc: Gatekeeper, OPA and
// what they bring (the API server's admission and CEL libraries,
// client-go's fake clientset, controller-runtime, oras) cost every
// command some 50 ms of package initialisation and 80 MB. accelc test
// runs them in accelc-policytest (package policytest/engine).
func TestDeps(t *testing.T) {
	// Flux's API types register through controller-runtime's scheme
	// builder, a few types over apimachinery's runtime: let through.
	testutil.ForbidDeps(t, ".", []string{
		"github.com/accelc/accelc/pkg/policytest/engine",
		"github.com/accelc/accelc/pkg/dra",
		"k8s.io/dynamic-resource-allocation/",
		"github.com/open-policy-agent/",
		"github.com/google/cel-go/",
		"k8s.io/apiserver/",
		"k8s.io/apiextensions-apiserver/pkg/apiserver",
		"k8s.io/client-go/kubernetes/fake",
		"k8s.io/component-base/metrics",
		"sigs.k8s.io/controller-runtime/",
		"oras.land/",
	}, "sigs.k8s.io/controller-runtime/pkg/scheme")
}

// TestTestWithoutEngine: accelc test without accelc-policytest beside it
// or on PATH says how to get it and exits 3.
func TestTestWithoutEngine(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	code, stdout, stderr := runMain("test", "../../examples/clusters/small-lab")
	assert.Equal(t, cli.ExitOutside, code)
	assert.Empty(t, stdout)
	assert.Contains(t, stderr, "accelc-policytest, which runs the policies with OPA and Gatekeeper, is neither beside ")
}

// TestVetDRAClassesWithoutEngine: a cluster whose DRA attribute classes
// need the engine's CEL environment, vetted without accelc-policytest,
// says what it could not check and how to get it, and exits 3 (the
// installation, not the CUE).
func TestVetDRAClassesWithoutEngine(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "c.cue"), []byte(`package c
cluster: {name: "lab", dra: classes: big: selector: "device.driver == 'gpu.nvidia.com'"}
`), 0o644))
	t.Setenv("PATH", t.TempDir())
	code, _, stderr := runMain("vet", dir)
	assert.Equal(t, cli.ExitOutside, code)
	assert.Contains(t, stderr, "checking cluster.dra.classes' selectors in Kubernetes' DRA CEL environment: ")
	assert.Contains(t, stderr, "`make build` builds it beside accelc into bin/")
}
