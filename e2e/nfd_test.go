//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/accelc/accelc/internal/controlplane"
	"github.com/accelc/accelc/pkg/catalog"
)

// nodeFeatures are NFD's NodeFeature objects, what nfd-worker publishes
// of each node and nfd-master reads.
var nodeFeatures = schema.GroupVersionResource{Group: "nfd.k8s-sigs.io", Version: "v1alpha1", Resource: "nodefeatures"}

// pciClass3D is the PCI class nfd-worker reports for a data-centre GPU:
// a 3D controller (display controllers, consumer cards, are 0300).
const pciClass3D = "0302"

// publishNodeFeatures creates, for each node, the NodeFeature object
// nfd-worker would publish: its name (system.name, element nodename) and,
// for a node of a known type, its GPU's PCI vendor, device and class
// (pci.device); nfd-master then applies the NodeFeatureRules to it.
func (s *suite) publishNodeFeatures(ctx context.Context, node string, pci map[string]string) error {
	features := map[string]any{
		"attributes": map[string]any{"system.name": map[string]any{"elements": map[string]any{"nodename": node}}},
	}
	if pci != nil {
		attrs := map[string]any{"class": pciClass3D}
		for k, v := range pci {
			attrs[k] = v
		}
		features["instances"] = map[string]any{"pci.device": map[string]any{"elements": []any{map[string]any{"attributes": attrs}}}}
	}
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "nfd.k8s-sigs.io/v1alpha1",
		"kind":       "NodeFeature",
		"metadata": map[string]any{
			"name":      node,
			"namespace": controlplane.NFDNamespace,
			"labels":    map[string]any{"nfd.node.kubernetes.io/node-name": node},
		},
		"spec": map[string]any{"features": features},
	}}
	_, err := s.dyn.Resource(nodeFeatures).Namespace(controlplane.NFDNamespace).Create(ctx, obj, metav1.CreateOptions{})
	return err
}

// nfdStamped is what the rules stamp on a node, as nfd-master applied
// it: the node's labels and taints of the keys the rules name.
func nfdStamped(node *corev1.Node, labelKeys, taintKeys []string) (labels map[string]string, taints []corev1.Taint) {
	labels = map[string]string{}
	for _, k := range labelKeys {
		if v, ok := node.Labels[k]; ok {
			labels[k] = v
		}
	}
	for _, t := range node.Spec.Taints {
		if slices.Contains(taintKeys, t.Key) {
			taints = append(taints, t)
		}
	}
	return labels, taints
}

// ruleKeys are the label and taint keys the NodeFeatureRules stamp.
func ruleKeys(rules []*unstructured.Unstructured) (labels, taints []string) {
	for _, obj := range rules {
		list, _, _ := unstructured.NestedSlice(obj.Object, "spec", "rules")
		for _, item := range list {
			rule, _ := item.(map[string]any)
			ls, _, _ := unstructured.NestedStringMap(rule, "labels")
			for k := range ls {
				if !slices.Contains(labels, k) {
					labels = append(labels, k)
				}
			}
			ts, _, _ := unstructured.NestedSlice(rule, "taints")
			for _, tt := range ts {
				m, _ := tt.(map[string]any)
				if k := fmt.Sprint(m["key"]); !slices.Contains(taints, k) {
					taints = append(taints, k)
				}
			}
		}
	}
	slices.Sort(labels)
	slices.Sort(taints)
	return labels, taints
}

// pciOf is the PCI device nfd-worker would report for the i-th node of a
// type: the type's vendor and one of its device ids, from the accelerator
// catalog (not from the rendered rule, so a rule with a wrong id fails;
// nodes of a type take its ids in turn, so every id is tried where the
// type has as many nodes).
func pciOf(cat *catalog.Catalog, typ string, i int) (map[string]string, error) {
	class, ok := cat.Get(typ)
	if !ok {
		return nil, fmt.Errorf("%s is not in the cluster's catalog", typ)
	}
	if len(class.PCIDeviceIDs) == 0 {
		return nil, fmt.Errorf("%s has no PCI device id in the catalog (%s)", typ, class.NoPCIDeviceIDs)
	}
	return map[string]string{
		"vendor": strings.ToLower(class.PCIVendor()),
		"device": strings.ToLower(class.PCIDeviceIDs[i%len(class.PCIDeviceIDs)]),
	}, nil
}
