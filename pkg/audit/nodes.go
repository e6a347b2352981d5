package audit

// What the node layer would change on nodes (a MIG config's or sharing
// pool's labels, taint and device-plugin config), and the pods it would
// evict.

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/accelc/accelc/pkg/compile"
	"github.com/accelc/accelc/pkg/inventory"
	"github.com/accelc/accelc/pkg/render"
)

// NodeChange is what the node layer (a MIG config's or sharing pool's
// labels, taint and device-plugin config) would change on one node, and
// the pods the change would evict.
type NodeChange struct {
	Node string `json:"node"`
	// Pool is the sharing pool or MIG config the node is in; Sharing is
	// "mig", "time-slicing" or "mps".
	Pool    string `json:"pool"`
	Sharing string `json:"sharing"`
	// Stage is the pool's node stage and StageFrom the setting it comes
	// from. Applied says this tree makes the change (stage deny); else it
	// is withheld until the pool moves to deny.
	Stage     string `json:"stage"`
	StageFrom string `json:"stageFrom"`
	Applied   bool   `json:"applied"`
	// Setting is where the CUE declares the pool
	// (cluster.mig.configs.<name>): its enforcement moves it alone.
	Setting string `json:"setting"`
	// Changes are the node's labels and taints, each from what the node
	// has to what the pool puts on.
	Changes []LabelChange `json:"changes"`
	// Evicted are the running pods the change would evict.
	Evicted []EvictedPod `json:"evicted,omitempty"`
	// AlreadyCut says the node's GPUs already have the MIG config's
	// layout (GPU Feature Discovery's MIG devices say so): the MIG
	// manager finds nothing to repartition and evicts no pod for it.
	AlreadyCut bool `json:"alreadyCut,omitempty"`
}

// LabelChange is one label or taint of a node, from what it is to what
// the node layer makes it ("" for none).
type LabelChange struct {
	// Kind is "label" or "taint"; a taint's Key is its key, From and To
	// key=value:effect.
	Kind string `json:"kind"`
	Key  string `json:"key"`
	From string `json:"from"`
	To   string `json:"to"`
}

// EvictedPod is a running pod a node change would evict, and why.
type EvictedPod struct {
	Namespace string         `json:"namespace"`
	Name      string         `json:"name"`
	Devices   map[string]int `json:"devices,omitempty"`
	// Claims are the pod's Dynamic Resource Allocation claims (as its
	// spec.resourceClaims names them): a pod may hold the node's devices
	// through them and ask for no device resource at all. The audit does
	// not read the claims' allocations, so a pod whose claims hold other
	// devices (a NIC) is listed too: it errs towards stopping a commit.
	Claims []string `json:"claims,omitempty"`
	// Reason says who evicts it: the MIG manager before it repartitions
	// the node's GPUs, the device plugin's restart under its new sharing,
	// or a NoExecute taint the pod does not tolerate.
	Reason string `json:"reason"`
}

// Reasons a pod is evicted.
const (
	EvictRepartition = "repartition"
	EvictSharing     = "sharing"
	EvictTaint       = "taint"
)

// nodeChanges compares each node in a pool or MIG config with what the
// pool's node rule puts on it, at any stage: under deny the tree makes
// the change, under dryrun and warn it is withheld and this is what
// moving the pool to deny would do. A node already as its pool wants it
// is not listed.
func (a *auditor) nodeChanges() []NodeChange {
	inv := a.pl.Inventory
	running := map[string][]*unstructured.Unstructured{} // node → its pods
	for _, o := range a.set.Objects {
		if o.GetKind() != "Pod" || o.GroupVersionKind().Group != "" || finished(o) {
			continue
		}
		if node, _, _ := unstructured.NestedString(o.Object, "spec", "nodeName"); node != "" {
			running[node] = append(running[node], o)
		}
	}
	var out []NodeChange
	for i := range inv.Nodes {
		n := &inv.Nodes[i]
		pool := a.pl.NodePool(n)
		if pool == nil {
			continue
		}
		selector := render.DevicePluginConfigLabel
		if pool.Sharing == compile.ShareMIG {
			selector = render.MIGConfigLabel
		}
		c := NodeChange{Node: n.Name, Pool: pool.Name, Sharing: pool.Sharing, Stage: pool.Stage, StageFrom: pool.StageFrom, Applied: pool.Reconfigured(), Setting: pool.Setting()}
		for _, key := range []string{selector, a.m.Cluster.PoolLabel()} {
			if v, _ := n.Label(key); v != pool.Name {
				c.Changes = append(c.Changes, LabelChange{Kind: "label", Key: key, From: v, To: pool.Name})
			}
		}
		selectorChanges := len(c.Changes) > 0 && c.Changes[0].Key == selector
		var noExecute *compile.Taint
		if t := pool.Taint; t != nil && !slices.Contains(n.Taints, inventory.Taint{Key: t.Key, Value: t.Value, Effect: t.Effect}) {
			from := ""
			for _, had := range n.Taints {
				if had.Key == t.Key && had.Effect == t.Effect {
					from = had.Key + "=" + had.Value + ":" + had.Effect
				}
			}
			c.Changes = append(c.Changes, LabelChange{Kind: "taint", Key: t.Key, From: from, To: t.String()})
			if t.Effect == "NoExecute" {
				noExecute = t
			}
		}
		if len(c.Changes) == 0 {
			continue
		}
		c.AlreadyCut = pool.Sharing == compile.ShareMIG && a.alreadyCut(n, pool)
		for _, pod := range running[n.Name] {
			held, claims := podDevices(pod, a.accelerators), podClaims(pod)
			holds := len(held) > 0 || len(claims) > 0
			reason := ""
			switch {
			case selectorChanges && holds && pool.Sharing == compile.ShareMIG && !c.AlreadyCut:
				reason = EvictRepartition
			case selectorChanges && holds:
				reason = EvictSharing
			case noExecute != nil && !toleratesTaint(pod, *noExecute):
				reason = EvictTaint
			default:
				continue
			}
			c.Evicted = append(c.Evicted, EvictedPod{Namespace: pod.GetNamespace(), Name: pod.GetName(), Devices: held, Claims: claims, Reason: reason})
		}
		slices.SortFunc(c.Evicted, func(x, y EvictedPod) int {
			return cmp.Or(cmp.Compare(x.Namespace, y.Namespace), cmp.Compare(x.Name, y.Name))
		})
		out = append(out, c)
	}
	slices.SortFunc(out, func(x, y NodeChange) int {
		return cmp.Or(cmp.Compare(x.Pool, y.Pool), cmp.Compare(x.Node, y.Node))
	})
	return out
}

// alreadyCut says whether a node's MIG devices are its MIG config's
// layout on each of its GPUs.
func (a *auditor) alreadyCut(n *inventory.Node, pool *compile.NodePool) bool {
	gpus, ok := a.pl.GPUs(n)
	if !ok || gpus == 0 || len(n.MIGDevices) == 0 {
		return false
	}
	want := map[string]int{}
	for prof, k := range pool.Layout {
		if k > 0 {
			want[prof] = k * gpus
		}
	}
	return maps.Equal(want, n.MIGDevices)
}

// podDevices are the accelerators a pod's containers hold, per resource
// (limits, else requests).
func podDevices(pod *unstructured.Unstructured, prefixes []string) map[string]int {
	out := map[string]int{}
	containers, _, _ := unstructured.NestedSlice(pod.Object, "spec", "containers")
	for _, c := range containers {
		cm, _ := c.(map[string]any)
		for _, section := range []string{"limits", "requests"} {
			res, _, _ := unstructured.NestedMap(cm, "resources", section)
			found := false
			for r, q := range res {
				if slices.ContainsFunc(prefixes, func(p string) bool { return strings.HasPrefix(r, p) }) {
					out[r] += quantity(q)
					found = true
				}
			}
			if found {
				break
			}
		}
	}
	maps.DeleteFunc(out, func(_ string, n int) bool { return n == 0 })
	if len(out) == 0 {
		return nil
	}
	return out
}

// podClaims are the names of a pod's DRA claims (spec.resourceClaims), in
// its order; nil if it has none.
func podClaims(pod *unstructured.Unstructured) []string {
	claims, _, _ := unstructured.NestedSlice(pod.Object, "spec", "resourceClaims")
	var out []string
	for _, c := range claims {
		if name, _ := c.(map[string]any)["name"].(string); name != "" {
			out = append(out, name)
		}
	}
	return out
}

// toleratesTaint is Kubernetes' ToleratesTaint over a pod's tolerations.
func toleratesTaint(pod *unstructured.Unstructured, taint compile.Taint) bool {
	tols, _, _ := unstructured.NestedSlice(pod.Object, "spec", "tolerations")
	for _, t := range tols {
		tm, _ := t.(map[string]any)
		str := func(k string) string { s, _ := tm[k].(string); return s }
		tol := compile.Toleration{Key: str("key"), Operator: str("operator"), Value: str("value"), Effect: str("effect")}
		if tol.Tolerates(taint) {
			return true
		}
	}
	return false
}

// devicesText is "2 nvidia.com/gpu, 1 nvidia.com/mig-3g.40gb".
func devicesText(devices map[string]int) string {
	var parts []string
	for _, r := range slices.Sorted(maps.Keys(devices)) {
		parts = append(parts, fmt.Sprintf("%d %s", devices[r], r))
	}
	return strings.Join(parts, ", ")
}
