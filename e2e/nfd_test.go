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

// pciOf is the PCI device NFD would report for a node of the type: the
// first vendor and device id of the rule that stamps the type, which the
// renderer takes from the accelerator catalog.
func pciOf(rules []*unstructured.Unstructured, typeLabel, typ string) (map[string]string, error) {
	for _, obj := range rules {
		list, _, _ := unstructured.NestedSlice(obj.Object, "spec", "rules")
		for _, item := range list {
			rule, _ := item.(map[string]any)
			labels, _, _ := unstructured.NestedStringMap(rule, "labels")
			if labels[typeLabel] != typ {
				continue
			}
			terms, _ := rule["matchFeatures"].([]any)
			for _, t := range terms {
				term, _ := t.(map[string]any)
				if term["feature"] != "pci.device" {
					continue
				}
				vendor, _, _ := unstructured.NestedStringSlice(term, "matchExpressions", "vendor", "value")
				device, _, _ := unstructured.NestedStringSlice(term, "matchExpressions", "device", "value")
				if len(vendor) > 0 && len(device) > 0 {
					return map[string]string{"vendor": strings.ToLower(vendor[0]), "device": strings.ToLower(device[0])}, nil
				}
			}
		}
	}
	return nil, fmt.Errorf("no NodeFeatureRule rule stamps %s=%s from a PCI id", typeLabel, typ)
}
