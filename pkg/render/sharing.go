package render

import (
	"sort"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/accelc/accelc/pkg/catalog"
	"github.com/accelc/accelc/pkg/compile"
)

// MIGConfigMapName is the mig-parted ConfigMap accelc renders; point the
// GPU Operator's ClusterPolicy spec.migManager.config.name at it.
const MIGConfigMapName = "accelc-mig-parted-config"

// MIGConfigLabel selects a node's mig-parted config; the MIG manager
// watches it.
const MIGConfigLabel = "nvidia.com/mig.config"

// migParted renders the mig-parted config (version v1, key config.yaml) the
// GPU Operator's MIG manager applies: all-disabled, and one named config
// per cluster.mig config, filtered to its type's PCI ids.
func migParted(m *compile.Model) (Object, bool, error) {
	if m.Cluster.MIG == nil || len(m.Cluster.MIG.Configs) == 0 {
		return Object{}, false, nil
	}
	type device struct {
		DeviceFilter []string       `json:"device-filter,omitempty"`
		Devices      string         `json:"devices"`
		MIGEnabled   bool           `json:"mig-enabled"`
		MIGDevices   map[string]int `json:"mig-devices,omitempty"`
	}
	configs := map[string][]device{"all-disabled": {{Devices: "all", MIGEnabled: false}}}
	for name, c := range m.Cluster.MIG.Configs {
		class, _ := m.Catalog.Get(c.AcceleratorType)
		layout := map[string]int{}
		for p, n := range c.Layout {
			if n > 0 {
				layout[p] = n
			}
		}
		configs[name] = []device{{DeviceFilter: deviceFilter(class), Devices: "all", MIGEnabled: true, MIGDevices: layout}}
	}
	data, err := yaml.Marshal(map[string]any{"version": "v1", "mig-configs": configs})
	if err != nil {
		return Object{}, false, err
	}
	ns := m.Cluster.GPUOperatorNamespace
	return Object{
		Dir: "sharing", APIVersion: "v1", Kind: "ConfigMap", Namespace: ns, Name: MIGConfigMapName,
		Body: map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": meta{Name: MIGConfigMapName, Namespace: ns, Labels: managedLabels(m.Cluster.Name),
				Annotations: map[string]string{"accelc.io/mig-strategy": m.Cluster.MIG.Strategy}},
			"data": map[string]string{"config.yaml": string(data)},
		},
	}, true, nil
}

// deviceFilter is mig-parted's PCI filter for a class: "0x<DEVICE><VENDOR>".
func deviceFilter(c *catalog.Class) []string {
	vendor := strings.ToUpper(catalog.PCIVendorIDs[c.Vendor])
	out := make([]string, 0, len(c.PCIDeviceIDs))
	for _, d := range c.PCIDeviceIDs {
		out = append(out, "0x"+strings.ToUpper(d)+vendor)
	}
	sort.Strings(out)
	return out
}

// migRules stamp nvidia.com/mig.config on the nodes of each MIG config:
// listed nodes by name; otherwise every node whose GPUs are of the type
// (by PCI id), less the nodes other configs list.
func migRules(m *compile.Model) []nfrRule {
	if m.Cluster.MIG == nil {
		return nil
	}
	names := make([]string, 0, len(m.Cluster.MIG.Configs))
	listed := map[string][]string{} // type → nodes listed by a config
	for name, c := range m.Cluster.MIG.Configs {
		names = append(names, name)
		listed[c.AcceleratorType] = append(listed[c.AcceleratorType], c.Nodes...)
	}
	sort.Strings(names)
	var rules []nfrRule
	for _, name := range names {
		c := m.Cluster.MIG.Configs[name]
		labels := map[string]string{MIGConfigLabel: name}
		if len(c.Nodes) > 0 {
			nodes := append([]string(nil), c.Nodes...)
			sort.Strings(nodes)
			rules = append(rules, nfrRule{Name: "accelc mig " + name, Labels: labels, MatchFeatures: []featureMatcher{{
				Feature: "system.name", MatchExpressions: map[string]matchExpression{"nodename": {Op: "In", Value: nodes}},
			}}})
			continue
		}
		class, _ := m.Catalog.Get(c.AcceleratorType)
		devices := append([]string(nil), class.PCIDeviceIDs...)
		sort.Strings(devices)
		r := nfrRule{Name: "accelc mig " + name, Labels: labels, MatchFeatures: []featureMatcher{{
			Feature: "pci.device",
			MatchExpressions: map[string]matchExpression{
				"vendor": {Op: "In", Value: []string{catalog.PCIVendorIDs[class.Vendor]}},
				"device": {Op: "In", Value: devices},
			},
		}}}
		if others := listed[c.AcceleratorType]; len(others) > 0 {
			others = append([]string(nil), others...)
			sort.Strings(others)
			r.MatchFeatures = append(r.MatchFeatures, featureMatcher{
				Feature: "system.name", MatchExpressions: map[string]matchExpression{"nodename": {Op: "NotIn", Value: others}},
			})
		}
		rules = append(rules, r)
	}
	return rules
}
