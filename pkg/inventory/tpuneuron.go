package inventory

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/accelc/accelc/pkg/catalog"
)

// This file reads the accelerators that are not GPUs: Google's Cloud TPUs
// on GKE and AWS's Neuron devices (Trainium, Inferentia) on EKS.
//
// GKE gives a TPU node the TPU version of its slice
// (cloud.google.com/gke-tpu-accelerator=tpu-v5-lite-podslice), the slice's
// shape (cloud.google.com/gke-tpu-topology=2x4) and its chip count
// (cloud.google.com/gke-accelerator-count); its chips are google.com/tpu.
// A slice larger than one VM spans several nodes, which GKE creates and
// removes together: a job of that slice runs one pod on each.
//
// The Neuron device plugin offers a node's devices as aws.amazon.com/neuron
// (older releases also as aws.amazon.com/neurondevice) and their cores as
// aws.amazon.com/neuroncore. Nodes carry no Neuron label of their own: the
// EC2 instance type names the device (trn1.32xlarge: 16 Trainium), as does
// Karpenter's karpenter.k8s.aws/instance-accelerator-name.

const (
	resTPU          = "google.com/tpu"
	resNeuron       = "aws.amazon.com/neuron"
	resNeuronDevice = "aws.amazon.com/neurondevice"
	resNeuronCore   = "aws.amazon.com/neuroncore"

	lblTPUAccelerator = "cloud.google.com/gke-tpu-accelerator"
	// LabelTPUTopology is GKE's label for the shape of a node's TPU slice.
	LabelTPUTopology       = "cloud.google.com/gke-tpu-topology"
	lblGKEAcceleratorCount = "cloud.google.com/gke-accelerator-count"

	lblInstanceType        = "node.kubernetes.io/instance-type"
	lblInstanceTypeBeta    = "beta.kubernetes.io/instance-type"
	lblKarpenterAccelCount = "karpenter.k8s.aws/instance-accelerator-count"
)

// detectTPU types a node by GKE's TPU accelerator label. A version the
// catalog does not list (a newer TPU) still makes the node a TPU node, of
// unknown type, saying which version its label names.
func detectTPU(labels map[string]string, cat *catalog.Catalog) detection {
	v := strings.TrimSpace(labels[lblTPUAccelerator])
	if v == "" {
		return detection{}
	}
	count, _ := atoi(labels[lblGKEAcceleratorCount])
	if c, ok := cat.ByLabel(lblTPUAccelerator, v); ok {
		return detection{class: c, count: count, why: fmt.Sprintf("type from %s=%s", lblTPUAccelerator, v)}
	}
	return detection{vendor: "google", model: v, count: count, why: fmt.Sprintf("%s=%s is not in the catalog", lblTPUAccelerator, v)}
}

// neuronFamily matches the EC2 instance families with Neuron devices:
// trn1, trn1n, trn2, trn2u, inf1, inf2.
var neuronFamily = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(trn|inf)[0-9]+[a-z]*$`) })

// detectNeuron types a node of a Neuron instance family whose size the
// catalog does not list (the listed ones are typed by the instance type
// itself, earlier) by the family: the class whose listed sizes are of that
// family, when exactly one is. A family of no class (inf1) leaves the node
// a Neuron node of unknown type.
func detectNeuron(labels map[string]string, cat *catalog.Catalog) detection {
	key := lblInstanceType
	it := strings.TrimSpace(labels[key])
	if it == "" {
		key = lblInstanceTypeBeta
		it = strings.TrimSpace(labels[key])
	}
	family, _, ok := strings.Cut(it, ".")
	if !ok || !neuronFamily().MatchString(family) {
		return detection{}
	}
	count, _ := atoi(labels[lblKarpenterAccelCount])
	var cands []*catalog.Class
	for _, c := range cat.Classes() {
		if slices.ContainsFunc(c.IdentifiedBy[lblInstanceType], func(v string) bool { return strings.HasPrefix(v, family+".") }) {
			cands = append(cands, c)
		}
	}
	if len(cands) == 1 {
		return detection{class: cands[0], count: count, why: fmt.Sprintf(
			"type from the instance family %s (%s=%s is not in the catalog: add it to the class's identifiedBy)", family, key, it)}
	}
	why := fmt.Sprintf("%s=%s: instance family %s is an AWS Neuron family of no catalog class", key, it, family)
	if len(cands) > 1 {
		why = fmt.Sprintf("%s=%s: instance family %s could be %s", key, it, family, classIDs(cands))
	}
	return detection{vendor: "aws", model: family, count: count, why: why}
}

// tpuNote says what a node's TPU slice topology means for its pods: a
// slice of more chips than the node has spans several nodes.
func tpuNote(topology string, chips int) string {
	total := 1
	for _, d := range strings.Split(topology, "x") {
		n, err := strconv.Atoi(d)
		if err != nil || n <= 0 || n > MaxDevices {
			return fmt.Sprintf("TPU slice topology %s=%s is not a shape (AxB or AxBxC)", LabelTPUTopology, topology)
		}
		total *= n
		if total > MaxDevices {
			return fmt.Sprintf("TPU slice topology %s is larger than any slice", topology)
		}
	}
	switch {
	case chips <= 0:
		return fmt.Sprintf("TPU slice %s: %d chips", topology, total)
	case total > chips && total%chips == 0:
		return fmt.Sprintf("TPU slice %s: %d chips over %d nodes of %d; a job of the slice runs a pod on each, and GKE adds and removes them together", topology, total, total/chips, chips)
	case total == chips:
		return fmt.Sprintf("TPU slice %s: this node's %d chips", topology, chips)
	}
	return fmt.Sprintf("TPU slice %s has %d chips, which is not a multiple of the node's %d: check the node pool", topology, total, chips)
}
