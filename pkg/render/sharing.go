package render

import (
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
// per cluster.mig config whose nodes are reconfigured (its node stage is
// deny), filtered to its type's PCI ids. With none at deny there is no
// config at all: nothing for the MIG manager to apply.
func migParted(m *compile.Model) (Object, bool, error) {
	configs := map[string][]migDevices{}
	for _, pool := range reconfigured(m, compile.ShareMIG) {
		class, _ := m.Catalog.Get(pool.AcceleratorType)
		layout := map[string]int{}
		for p, n := range pool.Layout {
			if n > 0 {
				layout[p] = n
			}
		}
		configs[pool.Name] = []migDevices{{DeviceFilter: deviceFilter(class), Devices: "all", MIGEnabled: true, MIGDevices: layout}}
	}
	if len(configs) == 0 {
		return Object{}, false, nil
	}
	configs["all-disabled"] = []migDevices{{Devices: "all", MIGEnabled: false}}
	data, err := yaml.Marshal(migPartedConfig{Version: "v1", MIGConfigs: configs})
	if err != nil {
		return Object{}, false, err
	}
	return gpuOperatorConfigMap(m, MIGConfigMapName, map[string]string{"accelc.io/mig-strategy": m.Cluster.MIG.Strategy},
		map[string]string{"config.yaml": string(data)}), true, nil
}

// migPartedConfig is mig-parted's config file, version v1: per named
// config, the MIG layout of the GPUs it filters.
type migPartedConfig struct {
	Version    string                  `json:"version"`
	MIGConfigs map[string][]migDevices `json:"mig-configs"`
}

type migDevices struct {
	DeviceFilter []string       `json:"device-filter,omitempty"`
	Devices      string         `json:"devices"`
	MIGEnabled   bool           `json:"mig-enabled"`
	MIGDevices   map[string]int `json:"mig-devices,omitempty"`
}

// gpuOperatorConfigMap is a ConfigMap in the GPU Operator's namespace, in
// the sharing/ folder.
func gpuOperatorConfigMap(m *compile.Model, name string, annotations, data map[string]string) Object {
	ns := m.Cluster.GPUOperatorNamespace
	return Object{
		Dir: "sharing",
		Body: &corev1.ConfigMap{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: managedLabels(m.Cluster.Name), Annotations: annotations},
			Data:       data,
		},
	}
}

// deviceFilter is mig-parted's PCI filter for a class: "0x<DEVICE><VENDOR>".
func deviceFilter(c *catalog.Class) []string {
	vendor := strings.ToUpper(c.PCIVendor())
	out := make([]string, 0, len(c.PCIDeviceIDs))
	for _, d := range c.PCIDeviceIDs {
		out = append(out, "0x"+strings.ToUpper(d)+vendor)
	}
	sort.Strings(out)
	return out
}

// reconfigured are the node pools of the given sharing (all, for "")
// whose node stage is deny: the only ones whose node layer is rendered.
func reconfigured(m *compile.Model, sharing string) []*compile.NodePool {
	var out []*compile.NodePool
	for _, pool := range m.NodePools {
		if pool.Reconfigured() && (sharing == "" || pool.Sharing == sharing) {
			out = append(out, pool)
		}
	}
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
// other pools and configs of the type list (whatever their stage: those
// nodes are theirs).
//
// Only the pools whose node stage is deny have a rule: the MIG manager
// repartitions a node, evicting its GPU pods, as soon as its label
// changes, so under dryrun and warn the rule, pool label and taint
// included, is withheld. A node labelled as a pool's before it is cut
// for it would hand the pool's pods whole GPUs.
func poolRules(m *compile.Model) []nfrRule {
	listed := map[string][]string{} // type → nodes some pool lists
	for _, pool := range m.NodePools {
		listed[pool.AcceleratorType] = append(listed[pool.AcceleratorType], pool.Nodes...)
	}
	var rules []nfrRule
	for _, pool := range reconfigured(m, "") {
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
		r.MatchFeatures, r.MatchAny = pciMatch(class)
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
// per pool whose node stage is deny, with its time-slicing or MPS
// replicas. With no pool at deny there is none.
func devicePluginConfig(m *compile.Model) (Object, bool, error) {
	pools := slices.DeleteFunc(reconfigured(m, ""), func(p *compile.NodePool) bool { return p.Sharing == compile.ShareMIG })
	if len(pools) == 0 {
		return Object{}, false, nil
	}
	flags := devicePluginFlags{MIGStrategy: m.Cluster.MIGStrategy()}
	data := map[string]string{}
	def, err := yaml.Marshal(devicePluginConfigFile{Version: "v1", Flags: flags})
	if err != nil {
		return Object{}, false, err
	}
	data["default"] = string(def)
	for _, pool := range pools {
		name, p := pool.Name, m.Cluster.Sharing[pool.Name]
		class, _ := m.Catalog.Get(p.AcceleratorType)
		replicas := &replicatedResources{
			RenameByDefault:            p.RenameByDefault,
			FailRequestsGreaterThanOne: p.FailRequestsGreaterThanOne,
			Resources:                  []replicatedResource{{Name: class.ResourceName, Replicas: p.Replicas}},
		}
		sharing := &deviceSharing{TimeSlicing: replicas}
		if p.Strategy == "mps" {
			sharing = &deviceSharing{MPS: replicas}
		}
		b, err := yaml.Marshal(devicePluginConfigFile{Version: "v1", Flags: flags, Sharing: sharing})
		if err != nil {
			return Object{}, false, err
		}
		data[name] = string(b)
	}
	return gpuOperatorConfigMap(m, DevicePluginConfigMapName, nil, data), true, nil
}

// devicePluginConfigFile is the NVIDIA device plugin's config file,
// version v1: the MIG strategy and, for a pool, its sharing.
type devicePluginConfigFile struct {
	Version string            `json:"version"`
	Flags   devicePluginFlags `json:"flags"`
	Sharing *deviceSharing    `json:"sharing,omitempty"`
}

type devicePluginFlags struct {
	MIGStrategy string `json:"migStrategy"`
}

// deviceSharing is time-slicing or MPS, one of the two.
type deviceSharing struct {
	TimeSlicing *replicatedResources `json:"timeSlicing,omitempty"`
	MPS         *replicatedResources `json:"mps,omitempty"`
}

type replicatedResources struct {
	RenameByDefault            bool                 `json:"renameByDefault"`
	FailRequestsGreaterThanOne *bool                `json:"failRequestsGreaterThanOne,omitempty"`
	Resources                  []replicatedResource `json:"resources"`
}

type replicatedResource struct {
	Name     string `json:"name"`
	Replicas int    `json:"replicas"`
}
