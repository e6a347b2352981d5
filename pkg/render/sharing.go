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
	return gpuOperatorConfigMap(m, MIGConfigMapName, map[string]string{"accelc.io/mig-strategy": m.Cluster.MIG.Strategy},
		map[string]string{"config.yaml": string(data)}), true, nil
}

// gpuOperatorConfigMap is a ConfigMap in the GPU Operator's namespace, in
// the sharing/ folder.
func gpuOperatorConfigMap(m *compile.Model, name string, annotations, data map[string]string) Object {
	ns := m.Cluster.GPUOperatorNamespace
	return Object{
		Dir: "sharing", APIVersion: "v1", Kind: "ConfigMap", Namespace: ns, Name: name,
		Body: map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": meta{Name: name, Namespace: ns, Labels: managedLabels(m.Cluster.Name), Annotations: annotations},
			"data":     data,
		},
	}
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

// poolRules label each sharing pool's and MIG config's nodes: the GPU
// Operator's selector (nvidia.com/device-plugin.config or
// nvidia.com/mig.config = the pool's name), accelc's pool label, which
// the pool's profiles select, and the pool's taint, which they tolerate
// (NFD puts taints only with nfd-master -enable-taints).
//
// A pool that lists nodes matches them by name. One that does not takes
// every node whose GPUs are of its type (by PCI id), less the nodes that
// other pools and configs of the type list.
func poolRules(m *compile.Model) []nfrRule {
	listed := map[string][]string{} // type → nodes some pool lists
	for _, pool := range m.NodePools {
		listed[pool.AcceleratorType] = append(listed[pool.AcceleratorType], pool.Nodes...)
	}
	var rules []nfrRule
	for _, pool := range m.NodePools {
		prefix, selector := "accelc sharing ", DevicePluginConfigLabel
		if pool.Sharing == compile.ShareMIG {
			prefix, selector = "accelc mig ", MIGConfigLabel
		}
		r := nfrRule{Name: prefix + pool.Name, Labels: map[string]string{selector: pool.Name, m.Cluster.PoolLabel(): pool.Name}}
		if pool.Taint != nil {
			r.Taints = []compile.Taint{*pool.Taint}
		}
		if len(pool.Nodes) > 0 {
			nodes := append([]string(nil), pool.Nodes...)
			sort.Strings(nodes)
			r.MatchFeatures = []featureMatcher{{
				Feature: "system.name", MatchExpressions: map[string]matchExpression{"nodename": {Op: "In", Value: nodes}},
			}}
			rules = append(rules, r)
			continue
		}
		class, _ := m.Catalog.Get(pool.AcceleratorType)
		devices := append([]string(nil), class.PCIDeviceIDs...)
		sort.Strings(devices)
		r.MatchFeatures = []featureMatcher{{
			Feature: "pci.device",
			MatchExpressions: map[string]matchExpression{
				"vendor": {Op: "In", Value: []string{catalog.PCIVendorIDs[class.Vendor]}},
				"device": {Op: "In", Value: devices},
			},
		}}
		if others := listed[pool.AcceleratorType]; len(others) > 0 {
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

// DevicePluginConfigMapName is the NVIDIA device plugin's config, one key
// per pool; point ClusterPolicy spec.devicePlugin.config.name at it.
const DevicePluginConfigMapName = "accelc-device-plugin-config"

// DevicePluginConfigLabel selects a node's device-plugin config key.
const DevicePluginConfigLabel = "nvidia.com/device-plugin.config"

// devicePluginConfig renders the device plugin's sharing configs: a
// "default" key with no sharing (for every node not in a pool), and one key
// per pool with its time-slicing or MPS replicas.
func devicePluginConfig(m *compile.Model) (Object, bool, error) {
	if len(m.Cluster.Sharing) == 0 {
		return Object{}, false, nil
	}
	migStrategy := m.Cluster.MIGStrategy()
	data := map[string]string{}
	def, err := yaml.Marshal(map[string]any{"version": "v1", "flags": map[string]any{"migStrategy": migStrategy}})
	if err != nil {
		return Object{}, false, err
	}
	data["default"] = string(def)
	for name, p := range m.Cluster.Sharing {
		class, _ := m.Catalog.Get(p.AcceleratorType)
		sharing := map[string]any{
			"renameByDefault": p.RenameByDefault,
			"resources":       []any{map[string]any{"name": class.ResourceName, "replicas": p.Replicas}},
		}
		if p.FailRequestsGreaterThanOne != nil {
			sharing["failRequestsGreaterThanOne"] = *p.FailRequestsGreaterThanOne
		}
		key := "timeSlicing"
		if p.Strategy == "mps" {
			key = "mps"
		}
		b, err := yaml.Marshal(map[string]any{
			"version": "v1",
			"flags":   map[string]any{"migStrategy": migStrategy},
			"sharing": map[string]any{key: sharing},
		})
		if err != nil {
			return Object{}, false, err
		}
		data[name] = string(b)
	}
	return gpuOperatorConfigMap(m, DevicePluginConfigMapName, nil, data), true, nil
}
