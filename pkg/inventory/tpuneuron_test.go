package inventory_test

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/accelc/accelc/pkg/inventory"
)

// TestNeuronFamilies: an instance size the catalog does not list is typed
// by its family where one class holds the family's sizes; Neuron cores and
// the plugin's older device name are not counted on top of the devices.
func TestNeuronFamilies(t *testing.T) {
	inv := inventory.Classify([]inventory.RawNode{
		node(t, "trn1-new-size", m{"node.kubernetes.io/instance-type": "trn1.8xlarge"}, m{"aws.amazon.com/neuron": "4", "aws.amazon.com/neuroncore": "8"}, nil),
		node(t, "both-names", m{"node.kubernetes.io/instance-type": "inf2.48xlarge"},
			m{"aws.amazon.com/neuron": "12", "aws.amazon.com/neurondevice": "12", "aws.amazon.com/neuroncore": "24"},
			m{"aws.amazon.com/neuron": "12", "aws.amazon.com/neurondevice": "12", "aws.amazon.com/neuroncore": "24"}),
		node(t, "cores-only", nil, m{"aws.amazon.com/neuroncore": "2"}, nil),
		node(t, "not-neuron", m{"node.kubernetes.io/instance-type": "m6i.4xlarge"}, nil, nil),
	}, builtin(t), inventory.Options{})
	require.Len(t, inv.Nodes, 3)
	assert.Equal(t, 1, inv.OtherNodes)
	byName := map[string]inventory.Node{}
	for _, n := range inv.Nodes {
		byName[n.Name] = n
	}
	n := byName["trn1-new-size"]
	assert.Equal(t, "aws-trainium-32gb", n.AcceleratorType)
	assert.Equal(t, 4, n.Count)
	assert.Equal(t, "aws.amazon.com/neuron", n.Resource)
	assert.Contains(t, n.Notes[0], "type from the instance family trn1")
	n = byName["both-names"]
	assert.Equal(t, "aws-inferentia2-32gb", n.AcceleratorType)
	assert.Equal(t, 12, n.Count)
	assert.Equal(t, 12, n.Allocatable)
	n = byName["cores-only"]
	assert.Equal(t, inventory.TypeUnknown, n.AcceleratorType)
	assert.Equal(t, "Neuron device - type unknown", n.DisplayName)
	assert.Equal(t, "aws", n.Vendor)
	assert.Equal(t, 2, n.Count)
}

// TestTPUView: the node view names a TPU node's slice, and the summary
// counts chips.
func TestTPUView(t *testing.T) {
	inv := inventory.Classify([]inventory.RawNode{
		node(t, "tpu-a", m{"cloud.google.com/gke-tpu-accelerator": "tpu-v5-lite-podslice", "cloud.google.com/gke-tpu-topology": "4x4"}, m{"google.com/tpu": "8"}, nil),
		node(t, "tpu-b", m{"cloud.google.com/gke-tpu-accelerator": "tpu-v5-lite-podslice", "cloud.google.com/gke-tpu-topology": "4x4"}, m{"google.com/tpu": "8"}, nil),
		node(t, "tpu-odd", m{"cloud.google.com/gke-tpu-accelerator": "tpu-v5-lite-podslice", "cloud.google.com/gke-tpu-topology": "4xfour"}, m{"google.com/tpu": "8"}, nil),
	}, builtin(t), inventory.Options{})
	require.Len(t, inv.Nodes, 3)
	assert.Equal(t, "4x4", inv.Nodes[0].Topology)
	assert.Contains(t, inv.Nodes[0].Notes, "TPU slice 4x4: 16 chips over 2 nodes of 8; a job of the slice runs a pod on each, and GKE adds and removes them together")
	assert.Contains(t, inv.Nodes[2].Notes, "TPU slice topology cloud.google.com/gke-tpu-topology=4xfour is not a shape (AxB or AxBxC)")
	var b bytes.Buffer
	require.NoError(t, inv.WriteView(&b, inventory.ViewOptions{}))
	assert.Contains(t, b.String(), "exclusive, TPU slice 4x4")
	assert.Contains(t, b.String(), "Google Cloud TPU v5e: 3 nodes, 24 TPU chips, 24 allocatable")
}
