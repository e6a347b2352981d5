package compile

// Autoscaling: the Karpenter node pools accelc writes for types that
// scale (ScalePools), the cloud instance types of a class, and the checks
// of scaling against the inventory.

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/accelc/accelc/pkg/catalog"
	"github.com/accelc/accelc/pkg/inventory"
)

// LabelInstanceType is the well-known label every node carries with its
// cloud instance type, and a Karpenter requirement key.
const LabelInstanceType = "node.kubernetes.io/instance-type"

// ScalePool is one Karpenter NodePool as the cluster's CUE resolves it.
type ScalePool struct {
	// Name is the pool's key under cluster.autoscaling.karpenter.pools;
	// its NodePool is NodePoolName.
	Name string
	KarpenterPool
	// NodeClass is the pool's node class (its own, else the cluster's).
	NodeClass NodeClassRef
	// InstanceTypes are the class's instance types on the node class's
	// cloud, narrowed by the pool's instanceTypes; sorted.
	InstanceTypes []string
	// Resource is the device the class's nodes offer (nvidia.com/gpu).
	Resource string
	// Limit is the most devices the pool may hold: the CUE's, else the
	// quotas the teams hold of the class (LimitFromQuotas); nil: none.
	Limit           *int
	LimitFromQuotas bool
	// Taints are what every profile that targets the class tolerates, so
	// the nodes keep other pods off and let those profiles' pods on.
	Taints []Taint
	// Pool is the sharing pool or MIG config that takes every node of the
	// class, which the pool's nodes are born into; nil for none, or for
	// one whose node stage holds it back.
	Pool *NodePool
}

// NodePoolName is the name of the pool's Karpenter NodePool:
// accelc-<pool>.
func (p ScalePool) NodePoolName() string { return ScalePoolPrefix + p.Name }

// ScalePools are the cluster's Karpenter pools, sorted by name; nil
// without autoscaling.
func (m *Model) ScalePools() []ScalePool {
	a := m.Cluster.Autoscaling
	if a == nil || a.Karpenter == nil {
		return nil
	}
	var out []ScalePool
	for _, name := range slices.Sorted(maps.Keys(a.Karpenter.Pools)) {
		kp := a.Karpenter.Pools[name]
		sp := ScalePool{Name: name, KarpenterPool: kp, NodeClass: a.Karpenter.NodeClass}
		if kp.NodeClass != nil {
			sp.NodeClass = *kp.NodeClass
		}
		class, ok := m.Catalog.Get(kp.AcceleratorType)
		if !ok {
			continue // checkAutoscaling reports it
		}
		sp.Resource = class.ResourceName
		if sp.Resource == "" {
			sp.Resource = catalog.DefaultResourceName(class.Vendor)
		}
		sp.InstanceTypes = CloudInstanceTypes(class, sp.NodeClass)
		if len(kp.InstanceTypes) > 0 {
			sp.InstanceTypes = slices.DeleteFunc(slices.Clone(sp.InstanceTypes), func(t string) bool { return !slices.Contains(kp.InstanceTypes, t) })
		}
		sp.Limit = kp.Limit
		if sp.Limit == nil {
			total, quoted := 0, false
			for i := range m.Teams {
				if q, ok := m.Teams[i].Quota[kp.AcceleratorType]; ok {
					total, quoted = total+q, true
				}
			}
			if quoted {
				sp.Limit, sp.LimitFromQuotas = &total, true
			}
		}
		sp.Taints = m.tolerated(kp.AcceleratorType)
		sp.Pool = m.wholeTypePool(kp.AcceleratorType)
		if sp.Pool != nil && !sp.Pool.Reconfigured() {
			// Its pool is held back at dryrun or warn: a new node is born
			// as NFD leaves the type's others, without the pool's label
			// and taint (labelled as the pool's before it is cut for it,
			// it would hand the pool's pods whole GPUs).
			if t := sp.Pool.Taint; t != nil {
				sp.Taints = slices.DeleteFunc(sp.Taints, func(x Taint) bool { return x == *t })
			}
			sp.Pool = nil
		}
		if sp.Pool != nil && sp.Pool.Taint != nil && !slices.Contains(sp.Taints, *sp.Pool.Taint) {
			sp.Taints = append(sp.Taints, *sp.Pool.Taint)
		}
		out = append(out, sp)
	}
	return out
}

// CloudInstanceTypes are the class's instance types (the catalog's
// node.kubernetes.io/instance-type values) on the node class's cloud:
// AWS's for an EC2NodeClass, Azure's for an AKSNodeClass, all of them for
// a node class accelc does not know.
func CloudInstanceTypes(class *catalog.Class, nc NodeClassRef) []string {
	cloud := nodeClassCloud(nc)
	var out []string
	for _, t := range class.IdentifiedBy[LabelInstanceType] {
		if cloud == "" || instanceCloud(t) == cloud {
			out = append(out, t)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func nodeClassCloud(nc NodeClassRef) string {
	switch {
	case nc.Kind == "EC2NodeClass" && nc.Group == "karpenter.k8s.aws":
		return "aws"
	case nc.Kind == "AKSNodeClass" && nc.Group == "karpenter.azure.com":
		return "azure"
	}
	return ""
}

// instanceCloud says whose an instance type name is: Azure's are
// Standard_…, OCI's shapes BM.… and VM.… (BM.GPU.H100.8), IBM Cloud's VPC
// profiles gx3d-… (gx3d-160x1792x8gaudi3), Nebius's platforms gpu-…
// (gpu-h100-sxm), AWS's family.size (p5.48xlarge), GCP's family-shape-n
// (a3-highgpu-8g).
func instanceCloud(name string) string {
	switch {
	case strings.HasPrefix(name, "Standard_"):
		return "azure"
	case strings.HasPrefix(name, "BM.") || strings.HasPrefix(name, "VM."):
		return "oci"
	case strings.HasPrefix(name, "gx3d-"):
		return "ibm"
	case strings.HasPrefix(name, "gpu-"):
		return "nebius"
	case strings.Contains(name, "."):
		return "aws"
	}
	return "gcp"
}

// tolerated are the NoSchedule and NoExecute taints every enabled profile
// that names the class tolerates, sorted: a NodePool's nodes carry them,
// so those profiles' pods land and others' do not.
func (m *Model) tolerated(class string) []Taint {
	var out []Taint
	first := true
	for i := range m.Profiles {
		p := &m.Profiles[i]
		if !p.Enabled || !slices.Contains(p.AcceleratorTypes, class) {
			continue
		}
		var mine []Taint
		for _, t := range p.Tolerations {
			if t.Key == "" || (t.Effect != "" && t.Effect != "NoSchedule" && t.Effect != "NoExecute") {
				continue
			}
			effect := t.Effect
			if effect == "" {
				effect = "NoSchedule"
			}
			taint := Taint{Key: t.Key, Effect: effect}
			if t.Operator == "Equal" {
				taint.Value = t.Value
			}
			mine = append(mine, taint)
		}
		if first {
			out, first = mine, false
			continue
		}
		out = slices.DeleteFunc(out, func(t Taint) bool { return !slices.Contains(mine, t) })
	}
	slices.SortFunc(out, func(a, b Taint) int {
		return strings.Compare(a.Key+"="+a.Value+":"+a.Effect, b.Key+"="+b.Value+":"+b.Effect)
	})
	return slices.Compact(out)
}

// wholeTypePool is the one sharing pool or MIG config that takes every
// node of the class (it lists none), if there is exactly one.
func (m *Model) wholeTypePool(class string) *NodePool {
	var found *NodePool
	for _, p := range m.NodePools {
		if p.AcceleratorType != class || len(p.Nodes) > 0 {
			continue
		}
		if found != nil {
			return nil
		}
		found = p
	}
	return found
}

// checkAutoscaling checks the Karpenter pools against the catalog: a known
// class, instance types of that class on the node class's cloud and of no
// other, and a profile to serve.
func checkAutoscaling(m *Model) []Diagnostic {
	a := m.Cluster.Autoscaling
	if a == nil || a.Karpenter == nil {
		return nil
	}
	var out []Diagnostic
	pools := m.root().Key("cluster").Key("autoscaling").Key("karpenter").Key("pools")
	for _, name := range slices.Sorted(maps.Keys(a.Karpenter.Pools)) {
		kp := a.Karpenter.Pools[name]
		at := pools.Key(name)
		class, ok := m.Catalog.Get(kp.AcceleratorType)
		if !ok {
			out = append(out, unknownType(m.Catalog, at.Key("acceleratorType"), kp.AcceleratorType))
			continue
		}
		nc := a.Karpenter.NodeClass
		if kp.NodeClass != nil {
			nc = *kp.NodeClass
		}
		own := CloudInstanceTypes(class, nc)
		if len(own) == 0 {
			out = append(out, Diagnostic{Path: at.Key("acceleratorType"), Msg: fmt.Sprintf(
				"the catalog knows no %s instance type of %s for a %s: give the class its instance types (accelerators.%s.identifiedBy[%q]) or list them in instanceTypes",
				cloudName(nc), kp.AcceleratorType, nc.Kind, kp.AcceleratorType, LabelInstanceType)})
		}
		for i, t := range kp.InstanceTypes {
			if slices.Contains(own, t) {
				continue
			}
			msg := fmt.Sprintf("%s is not an instance type of %s in the catalog (%s): the pool would launch nodes its profiles cannot tell apart; use %s", t, kp.AcceleratorType, cloudName(nc), strings.Join(own, ", "))
			if other, ok := m.Catalog.ByLabel(LabelInstanceType, t); ok && other.ID != kp.AcceleratorType {
				msg = fmt.Sprintf("%s is an instance type of %s, not %s: the pool would launch %s nodes labelled %s; use %s", t, other.ID, kp.AcceleratorType, other.ID, kp.AcceleratorType, strings.Join(own, ", "))
			}
			out = append(out, Diagnostic{Path: at.Key("instanceTypes").Index(i), Msg: msg})
		}
		served := false
		for i := range m.Profiles {
			if m.Profiles[i].Enabled && slices.Contains(m.Profiles[i].AcceleratorTypes, kp.AcceleratorType) {
				served = true
			}
		}
		if !served {
			out = append(out, Diagnostic{Path: at.Key("acceleratorType"), Msg: fmt.Sprintf(
				"no enabled profile names %s: no pod would ask for the pool's nodes (a generic profile's pods do not make Karpenter launch a class); add the type to a profile, or drop the pool", kp.AcceleratorType)})
		}
	}
	return out
}

func cloudName(nc NodeClassRef) string {
	switch nodeClassCloud(nc) {
	case "aws":
		return "AWS"
	case "azure":
		return "Azure"
	}
	return "any cloud's"
}

// checkScaling checks the Karpenter pools against the inventory: the
// teams' quotas of a class must fit in what the cluster has and its pools
// may add, and every enabled profile must have a node of one of its types
// or a pool that launches one.
func (m *Model) checkScaling(inv *inventory.Inventory) []Diagnostic {
	pools := m.ScalePools()
	if pools == nil {
		return nil
	}
	var out []Diagnostic
	have := map[string]int{}
	for i := range inv.Nodes {
		if n := &inv.Nodes[i]; n.Available() {
			have[n.AcceleratorType] += n.Allocatable
		}
	}
	limit := map[string]int{}
	unbounded := map[string]bool{}
	byClass := map[string][]string{}
	at := m.root().Key("cluster").Key("autoscaling").Key("karpenter").Key("pools")
	for _, p := range pools {
		byClass[p.AcceleratorType] = append(byClass[p.AcceleratorType], p.Name)
		if p.Limit == nil {
			unbounded[p.AcceleratorType] = true
			out = append(out, Diagnostic{Severity: Warning, Path: at.Key(p.Name), Msg: fmt.Sprintf(
				"no limit, and no team holds a quota of %s: the pool may launch without bound; give it a limit", p.AcceleratorType)})
			continue
		}
		limit[p.AcceleratorType] += *p.Limit
	}
	for _, class := range slices.Sorted(maps.Keys(byClass)) {
		if unbounded[class] {
			continue
		}
		quota := 0
		for i := range m.Teams {
			quota += m.Teams[i].Quota[class]
		}
		if quota > have[class]+limit[class] {
			names := byClass[class]
			out = append(out, Diagnostic{Path: at.Key(names[0]).Key("limit"), Msg: fmt.Sprintf(
				"the teams hold %d %s in quota, but the cluster has %d and its NodePools (%s) may add at most %d: raise the limit to %d or lower the quotas",
				quota, class, have[class], strings.Join(names, ", "), limit[class], quota-have[class])})
		}
	}
	for i := range m.Profiles {
		p := &m.Profiles[i]
		if !p.Enabled || len(p.AcceleratorTypes) == 0 {
			continue
		}
		ok := false
		for _, id := range p.AcceleratorTypes {
			ok = ok || have[id] > 0 || len(byClass[id]) > 0
		}
		if !ok {
			out = append(out, Diagnostic{Path: p.path.Key("acceleratorTypes"), Msg: fmt.Sprintf(
				"no node has %s and no NodePool launches one: the profile's pods could never run; add a pool under cluster.autoscaling.karpenter.pools", strings.Join(p.AcceleratorTypes, " or "))})
		}
	}
	return out
}
