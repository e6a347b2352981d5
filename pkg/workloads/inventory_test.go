package workloads_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/accelc/accelc/pkg/inventory"
	"github.com/accelc/accelc/pkg/workloads"
)

// TestInventoryPassesOver: node classification passes over every kind a
// Set holds, so a snapshot written with --workloads still loads.
func TestInventoryPassesOver(t *testing.T) {
	for _, k := range workloads.Kinds() {
		assert.True(t, inventory.WorkloadKind(k.Kind), "%s: add it to inventory's workloadKinds", k.Kind)
	}
	assert.False(t, inventory.WorkloadKind("Node"))
}
