package render

// Karpenter NodePools for the types that scale (compile.ScalePools).

import (
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/accelc/accelc/pkg/compile"
)

// DirAutoscaling holds the Karpenter NodePools.
const DirAutoscaling = "autoscaling"

// Karpenter's well-known keys.
const (
	LabelCapacityType = "karpenter.sh/capacity-type"
	labelOS           = "kubernetes.io/os"
)

// nodePool is a karpenter.sh/v1 NodePool: go.mod has no Karpenter types.
type nodePool struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              nodePoolSpec `json:"spec"`
}

type nodePoolSpec struct {
	Template   nodeClaimTemplate `json:"template"`
	Disruption disruption        `json:"disruption"`
	Limits     map[string]string `json:"limits,omitempty"`
	Weight     *int32            `json:"weight,omitempty"`
}

type nodeClaimTemplate struct {
	Metadata struct {
		Labels map[string]string `json:"labels,omitempty"`
	} `json:"metadata"`
	Spec nodeClaimSpec `json:"spec"`
}

type nodeClaimSpec struct {
	NodeClassRef compile.NodeClassRef `json:"nodeClassRef"`
	Requirements []requirement        `json:"requirements"`
	Taints       []compile.Taint      `json:"taints,omitempty"`
	ExpireAfter  string               `json:"expireAfter"`
}

type requirement struct {
	Key      string   `json:"key"`
	Operator string   `json:"operator"`
	Values   []string `json:"values"`
}

type disruption struct {
	ConsolidationPolicy string `json:"consolidationPolicy"`
	ConsolidateAfter    string `json:"consolidateAfter"`
}

// nodePools renders one NodePool per Karpenter pool: instances of the
// pool's class only (its instance types on the node class's cloud), of
// the capacity types the CUE allows, born with accelc's type label (and
// the pool label of the sharing pool or MIG config that takes the class),
// tainted as the class's profiles tolerate, and limited to the pool's
// devices.
func nodePools(m *compile.Model) []Object {
	var out []Object
	for _, p := range m.ScalePools() {
		np := &nodePool{
			TypeMeta:   metav1.TypeMeta{APIVersion: "karpenter.sh/v1", Kind: "NodePool"},
			ObjectMeta: metav1.ObjectMeta{Name: p.NodePoolName(), Labels: managedLabels(m.Cluster.Name)},
		}
		labels := map[string]string{m.Cluster.TypeLabel(): p.AcceleratorType}
		if p.Pool != nil {
			labels[m.Cluster.LabelPrefix+"/pool"] = p.Pool.Name
		}
		np.Spec.Template.Metadata.Labels = labels
		np.Spec.Template.Spec = nodeClaimSpec{
			NodeClassRef: p.NodeClass,
			Requirements: []requirement{
				{Key: compile.LabelInstanceType, Operator: "In", Values: p.InstanceTypes},
				{Key: LabelCapacityType, Operator: "In", Values: p.CapacityTypes},
				{Key: labelOS, Operator: "In", Values: []string{"linux"}},
			},
			Taints:      p.Taints,
			ExpireAfter: p.ExpireAfter,
		}
		np.Spec.Disruption = disruption{ConsolidationPolicy: p.Consolidation.Policy, ConsolidateAfter: p.Consolidation.After}
		if p.Limit != nil {
			np.Spec.Limits = map[string]string{p.Resource: strconv.Itoa(*p.Limit)}
		}
		np.Spec.Weight = p.Weight
		out = append(out, Object{Dir: DirAutoscaling, Body: np, Source: []string{"cluster", "autoscaling", "karpenter", "pools", p.Name}})
	}
	return out
}
