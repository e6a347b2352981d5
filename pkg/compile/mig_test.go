package compile_test

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/accelc/accelc/pkg/compile"
)

// TestMIGErrors: MIG configs are checked against the type's geometry, the
// strategy and each other, with file and line.
func TestMIGErrors(t *testing.T) {
	dir := cluster(t, map[string]string{"c.cue": `package c

cluster: {
	name: "lab"
	mig: {
		strategy: "single"
		configs: {
			l4: {acceleratorType: "nvidia-l4-24gb", layout: "1g.6gb": 4}
			big: {acceleratorType: "nvidia-a100-40gb", layout: "7g.80gb": 1}
			mixed: {acceleratorType: "nvidia-a100-80gb", layout: {"3g.40gb": 1, "2g.20gb": 2}}
			again: {acceleratorType: "nvidia-a100-80gb", layout: "7g.80gb": 1}
			one: {acceleratorType: "nvidia-h100-80gb", nodes: ["n1"], layout: "7g.80gb": 1}
			two: {acceleratorType: "nvidia-h100-80gb", nodes: ["n1"], layout: "1g.10gb": 7}
		}
	}
}
`})
	_, err := compile.Load(dir)
	var errs compile.Errors
	require.ErrorAs(t, err, &errs)
	at := filepath.ToSlash(filepath.Clean(dir)) + "/c.cue:"
	for _, want := range []string{
		at + "8:9: cluster.mig.configs.l4: nvidia-l4-24gb has no MIG (MIG-capable types: nvidia-a100-40gb",
		at + "9:47: cluster.mig.configs.big.layout: no MIG profile 7g.80gb on this GPU (did you mean 7g.40gb?)",
		at + `10:49: cluster.mig.configs.mixed.layout: 2 profiles, but the MIG strategy is single (one profile per GPU): set cluster.mig.strategy: "mixed"`,
		"cluster.mig.configs.mixed: config again already takes every nvidia-a100-80gb node: list nodes in one of them",
		"cluster.mig.configs.two.nodes: node n1 is already in config one: a node takes one MIG config",
	} {
		assert.Contains(t, err.Error(), want)
	}
}

// TestSharingErrors: replicas below two, two pools on one type, and a node
// both MIG-partitioned and shared are errors.
func TestSharingErrors(t *testing.T) {
	dir := cluster(t, map[string]string{"c.cue": `package c

cluster: {
	name: "lab"
	mig: configs: m: {acceleratorType: "nvidia-a100-80gb", layout: "7g.80gb": 1}
	sharing: {
		one: {acceleratorType: "nvidia-t4-16gb", replicas: 1}
	}
}
`})
	_, err := compile.Load(dir)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "c.cue:7:54: cluster.sharing.one.replicas: invalid value 1 (out of bound >=2)")

	dir = cluster(t, map[string]string{"c.cue": `package c

cluster: {
	name: "lab"
	mig: configs: m: {acceleratorType: "nvidia-a100-80gb", layout: "7g.80gb": 1}
	sharing: {
		a: {acceleratorType: "nvidia-t4-16gb", replicas: 4}
		b: {acceleratorType: "nvidia-t4-16gb", replicas: 2}
		c: {acceleratorType: "nvidia-a100-80gb", replicas: 2}
	}
}
`})
	_, err = compile.Load(dir)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "cluster.sharing.b: pool a already takes every nvidia-t4-16gb node: list nodes in one of them")
	assert.Contains(t, err.Error(), "cluster.sharing.c: MIG config m already takes every nvidia-a100-80gb node: a node is either MIG-partitioned or shared")
}

// TestMIGOnA800: the A800 has MIG, as the A100 it is cut from (NVIDIA's
// A800 datasheets: up to 7 MIG instances, 10GB each on the 80GB part, 5GB
// on the 40GB): vet takes a MIG config on either.
func TestMIGOnA800(t *testing.T) {
	dir := cluster(t, map[string]string{"c.cue": `package c

cluster: {
	name: "lab"
	mig: {
		strategy: "mixed"
		configs: {
			big: {acceleratorType: "nvidia-a800-80gb", layout: {"3g.40gb": 1, "2g.20gb": 1, "1g.10gb": 2}}
			small: {acceleratorType: "nvidia-a800-40gb", layout: "1g.5gb": 7}
		}
	}
}
`})
	_, err := compile.Load(dir)
	require.NoError(t, err)
}
