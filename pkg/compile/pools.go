package compile

// Node pools: their settings, taints and tolerations, which pool takes a
// node, their capacity, and the checks of pools against the inventory.

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/accelc/accelc/pkg/inventory"
	"github.com/accelc/accelc/pkg/mig"
)

// How a pool shares its GPUs.
const (
	ShareTimeSlicing = "time-slicing"
	ShareMPS         = "mps"
	ShareMIG         = "mig"
)

// NodePool is a set of nodes whose GPUs are shared one way: a time-slicing
// or MPS pool of cluster.sharing, or a MIG config of cluster.mig. accelc's
// node rules label its nodes <labelPrefix>/pool=<name> (and taint them), so
// the profiles that target the pool select, and tolerate, exactly them.
type NodePool struct {
	Name string
	// Sharing is ShareTimeSlicing, ShareMPS or ShareMIG.
	Sharing         string
	AcceleratorType string
	// Nodes lists the pool's nodes; empty, it is every node of the type
	// that no other pool or config lists.
	Nodes []string
	// Taint is put on the pool's nodes; nil for none.
	Taint *Taint
	// Replicas is the devices each GPU is advertised as (time-slicing, MPS).
	Replicas int
	// Renamed reports renameByDefault: pods request <resource>.shared.
	Renamed bool
	// OneReplicaPerPod reports failRequestsGreaterThanOne (MPS's default).
	OneReplicaPerPod bool
	// Layout is the MIG profile → instances on each GPU (MIG).
	Layout map[string]int
	// Stage is the pool's node stage: its own enforcement, else
	// cluster.nodeEnforcement, else cluster.enforcement. Only at deny
	// does the rendered tree reconfigure its nodes (Reconfigured).
	Stage string
	// StageFrom is the setting Stage comes from, as the CUE writes it
	// (cluster.mig.configs.a100-3g.enforcement, cluster.nodeEnforcement,
	// cluster.enforcement).
	StageFrom string

	// path is cluster.sharing.<name> or cluster.mig.configs.<name>.
	path Path
}

// Reconfigured says whether the rendered tree reconfigures the pool's
// nodes: labels them for the GPU Operator's MIG manager or device plugin,
// taints them and carries their config. Under dryrun and warn the pool's
// node layer is withheld, and accelc audit lists what it would do.
func (p *NodePool) Reconfigured() bool { return p.Stage == Deny }

// Setting is where the CUE declares the pool: cluster.sharing.<name> or
// cluster.mig.configs.<name>.
func (p *NodePool) Setting() string { return p.path.String() }

// nodeStage resolves a pool's node stage: its own, else the cluster's
// node stage, else the cluster's stage.
func nodeStage(c Cluster, own string, at Path) (stage, from string) {
	switch {
	case own != "":
		return own, at.Key("enforcement").String()
	case c.NodeEnforcement != "":
		return c.NodeEnforcement, "cluster.nodeEnforcement"
	}
	return c.Enforcement, "cluster.enforcement"
}

// Taint is a node taint.
type Taint struct {
	Key    string `json:"key"`
	Value  string `json:"value,omitempty"`
	Effect string `json:"effect"`
}

// Toleration is the toleration of exactly this taint.
func (t Taint) Toleration() Toleration {
	tol := Toleration{Key: t.Key, Operator: "Equal", Value: t.Value, Effect: t.Effect}
	if t.Value == "" {
		tol.Operator = "Exists"
	}
	return tol
}

// Tolerates reports whether one of the profile's tolerations tolerates
// taint.
func (p *Profile) Tolerates(taint Taint) bool {
	return slices.ContainsFunc(p.Tolerations, func(t Toleration) bool { return t.Tolerates(taint) })
}

// Tolerates is Kubernetes' ToleratesTaint.
func (t Toleration) Tolerates(taint Taint) bool {
	if t.Effect != "" && t.Effect != taint.Effect {
		return false
	}
	if t.Key != "" && t.Key != taint.Key {
		return false
	}
	switch t.Operator {
	case "Exists":
		return true
	case "", "Equal":
		return t.Value == taint.Value
	}
	return false
}

func (t Taint) String() string { return t.Key + "=" + t.Value + ":" + t.Effect }

// TaintField is CUE's `taint?: #Taint | "none"`: Set when written, None
// for "none".
type TaintField struct {
	Set, None bool
	Taint     Taint
}

func (f *TaintField) UnmarshalJSON(b []byte) error {
	f.Set = true
	if string(b) == `"none"` {
		f.None = true
		return nil
	}
	return json.Unmarshal(b, &f.Taint)
}

func (f TaintField) MarshalJSON() ([]byte, error) {
	switch {
	case !f.Set:
		return []byte("null"), nil
	case f.None:
		return []byte(`"none"`), nil
	}
	return json.Marshal(f.Taint)
}

// resolve is the taint a pool's nodes get: the one written, none, or
// <labelPrefix>/pool=<name>:NoSchedule.
func (f TaintField) resolve(c Cluster, pool string) *Taint {
	switch {
	case f.None:
		return nil
	case f.Set:
		t := f.Taint
		return &t
	}
	return &Taint{Key: c.PoolLabel(), Value: pool, Effect: "NoSchedule"}
}

// PoolLabel is the node label that names a node's pool or MIG config.
func (c Cluster) PoolLabel() string { return c.LabelPrefix + "/pool" }

// MIGStrategy is the cluster's MIG strategy, "none" without MIG.
func (c Cluster) MIGStrategy() string {
	if c.MIG == nil {
		return "none"
	}
	return c.MIG.Strategy
}

// Pool returns a pool or MIG config by name.
func (m *Model) Pool(name string) (*NodePool, bool) {
	for _, p := range m.NodePools {
		if p.Name == name {
			return p, true
		}
	}
	return nil, false
}

// PoolOf returns the pool a node is in: the one that lists it, else the
// one that takes every node of its type; nil for a node in none.
func (m *Model) PoolOf(node, acceleratorType string) *NodePool {
	var whole *NodePool
	for _, p := range m.NodePools {
		if slices.Contains(p.Nodes, node) {
			return p
		}
		if len(p.Nodes) == 0 && p.AcceleratorType == acceleratorType {
			whole = p
		}
	}
	return whole
}

// NodeGPUs is how many GPUs a node has: its count, but for a node under
// MIG single, whose labels and capacity count slices, its slices over the
// slices per GPU of its MIG config. ok is false for such a node no config
// of the cluster cuts. A consumer with the inventory placed asks
// Placed.GPUs, which resolves the pool once.
func (m *Model) NodeGPUs(n *inventory.Node) (gpus int, ok bool) {
	return nodeGPUs(n, m.PoolOf(n.Name, n.AcceleratorType))
}

// buildNodePools lists cluster.sharing's pools and cluster.mig's configs
// by name, with their taints resolved, and reports names used by both (the
// pool label takes one value per node).
func buildNodePools(m *Model) []Diagnostic {
	var out []Diagnostic
	c := m.Cluster
	for _, name := range slices.Sorted(maps.Keys(c.Sharing)) {
		s := c.Sharing[name]
		path := m.root().Key("cluster").Key("sharing").Key(name)
		sharing := ShareTimeSlicing
		if s.Strategy == "mps" {
			sharing = ShareMPS
		}
		one := sharing == ShareMPS
		if s.FailRequestsGreaterThanOne != nil {
			one = *s.FailRequestsGreaterThanOne
		}
		out = append(out, checkTaintKey(s.Taint, path.Key("taint"))...)
		stage, from := nodeStage(c, s.Enforcement, path)
		m.NodePools = append(m.NodePools, &NodePool{
			Name: name, Sharing: sharing, AcceleratorType: s.AcceleratorType, Nodes: s.Nodes,
			Taint: s.Taint.resolve(c, name), Replicas: s.Replicas, Renamed: s.RenameByDefault, OneReplicaPerPod: one,
			Stage: stage, StageFrom: from, path: path,
		})
	}
	if c.MIG != nil {
		for _, name := range slices.Sorted(maps.Keys(c.MIG.Configs)) {
			cfg := c.MIG.Configs[name]
			path := m.root().Key("cluster").Key("mig").Key("configs").Key(name)
			if _, dup := c.Sharing[name]; dup {
				out = append(out, Diagnostic{Path: path, Msg: fmt.Sprintf(
					"cluster.sharing has a pool of the same name; nodes carry one %s value: rename one of them", c.PoolLabel())})
				continue
			}
			out = append(out, checkTaintKey(cfg.Taint, path.Key("taint"))...)
			stage, from := nodeStage(c, cfg.Enforcement, path)
			m.NodePools = append(m.NodePools, &NodePool{
				Name: name, Sharing: ShareMIG, AcceleratorType: cfg.AcceleratorType, Nodes: cfg.Nodes,
				Taint: cfg.Taint.resolve(c, name), Layout: cfg.Layout,
				Stage: stage, StageFrom: from, path: path,
			})
		}
	}
	sort.Slice(m.NodePools, func(i, j int) bool { return m.NodePools[i].Name < m.NodePools[j].Name })
	return out
}

// checkTaintKey checks a pool's taint as Node Feature Discovery (v0.19)
// validates a NodeFeatureRule's taints before nfd-master applies them: a
// key NFD refuses is dropped, silently to the cluster, and the pool's nodes
// stay open to every pod. The key must be a qualified name with a prefix,
// outside kubernetes.io (but for NFD's own feature.node.kubernetes.io);
// the value a label value. at is the pool's taint.
func checkTaintKey(f TaintField, at Path) []Diagnostic {
	if !f.Set || f.None {
		return nil
	}
	t := f.Taint
	fail := func(why string) []Diagnostic {
		return []Diagnostic{{Path: at.At(at.Key("key")), Msg: fmt.Sprintf("%s: Node Feature Discovery would drop this taint (%s), leaving the pool's nodes open to every pod; use a prefixed key such as example.com/gpu", t, why)}}
	}
	if errs := validation.IsQualifiedName(t.Key); len(errs) > 0 {
		return fail(strings.Join(errs, "; "))
	}
	ns, _, prefixed := strings.Cut(t.Key, "/")
	if !prefixed {
		return fail("unprefixed keys are not allowed")
	}
	if (ns == "kubernetes.io" || strings.HasSuffix(ns, ".kubernetes.io")) && ns != "feature.node.kubernetes.io" && !strings.HasSuffix(ns, ".feature.node.kubernetes.io") {
		return fail("the kubernetes.io namespace is not allowed")
	}
	if errs := validation.IsValidLabelValue(t.Value); len(errs) > 0 {
		return fail(strings.Join(errs, "; "))
	}
	return nil
}

// poolTypes is the types of a profile's pool and fallback pools, in order:
// a pool profile's acceleratorTypes when it writes none.
func poolTypes(c Cluster, p *Profile) []string {
	var types []string
	for _, name := range append([]string{p.Pool}, p.FallbackPools...) {
		if s, ok := c.Sharing[name]; ok && !slices.Contains(types, s.AcceleratorType) {
			types = append(types, s.AcceleratorType)
		}
	}
	return types
}

// checkProfileSharing resolves what a profile over shared GPUs targets:
// the pools its pods must run in, its resource and the pools' tolerations.
// A MIG profile targets the configs that cut its type into its slice; a
// pool profile its pool, then its fallback pools, all shared ones (seed
// 004: MIG workloads never fall back, time-sliced ones may).
func checkProfileSharing(m *Model, p *Profile, resourceSet bool) []Diagnostic {
	if p.MIG == "" && p.Pool == "" {
		if len(p.FallbackPools) > 0 {
			return []Diagnostic{{Path: p.path.Key("fallbackPools"), Msg: "fallback pools need a pool to fall back from: set pool"}}
		}
		return nil
	}
	var out []Diagnostic
	errAt := func(at Path, format string, args ...any) {
		out = append(out, Diagnostic{Path: at, Msg: fmt.Sprintf(format, args...)})
	}
	if p.MIG != "" && p.Pool != "" {
		errAt(p.path.At(p.path.Key("pool")), "it sets both mig and pool: a profile targets a MIG slice or a shared pool, not both")
		return out
	}
	var resource string
	if p.MIG != "" {
		resource = checkMIGProfile(m, p, errAt)
	} else {
		resource = checkPoolProfile(m, p, errAt)
	}
	if len(out) > 0 {
		return out
	}
	switch {
	case resourceSet && p.ResourceName != resource:
		errAt(p.path.Key("resourceName"), "%s, but its pods get %s from %s: drop resourceName", p.ResourceName, resource, strings.Join(p.Pools, ", "))
	default:
		p.ResourceName = resource
	}
	seen := map[Toleration]bool{}
	for _, t := range p.Tolerations {
		seen[t] = true
	}
	for _, name := range p.Pools {
		if pool, _ := m.Pool(name); pool != nil && pool.Taint != nil {
			if tol := pool.Taint.Toleration(); !seen[tol] {
				seen[tol] = true
				p.Tolerations = append(p.Tolerations, tol)
			}
		}
	}
	return out
}

func checkMIGProfile(m *Model, p *Profile, errAt func(at Path, format string, args ...any)) string {
	if len(p.FallbackPools) > 0 {
		errAt(p.path.Key("fallbackPools"), "a MIG profile never falls back to a shared pool (its workloads need MIG's isolation): drop fallbackPools, or make it a pool profile")
		return ""
	}
	if len(p.Classes) != 1 || len(p.AcceleratorTypes) != 1 {
		errAt(p.path.At(p.path.Key("acceleratorTypes")), "a MIG profile (mig: %q) names exactly one accelerator type, the GPU its slices are cut from; it names %d", p.MIG, len(p.AcceleratorTypes))
		return ""
	}
	class := p.Classes[0]
	geo, err := mig.Builtin()
	if err != nil {
		errAt(Path{}, "%v", err)
		return ""
	}
	at := p.path.Key("mig")
	g, ok := geo[class.ID]
	if !ok {
		errAt(at, "%s has no MIG (MIG-capable types: %s)", class.ID, strings.Join(slices.Sorted(maps.Keys(geo)), ", "))
		return ""
	}
	if _, err := g.Lookup(p.MIG); err != nil {
		errAt(at, "%s: %v", class.ID, err)
		return ""
	}
	var others []string
	for _, pool := range m.NodePools {
		if pool.Sharing != ShareMIG || pool.AcceleratorType != class.ID {
			continue
		}
		if pool.Layout[p.MIG] > 0 {
			p.Pools = append(p.Pools, pool.Name)
		} else {
			others = append(others, fmt.Sprintf("%s (%s)", pool.Name, mig.Describe(pool.Layout)))
		}
	}
	if len(p.Pools) == 0 {
		msg := fmt.Sprintf("no cluster.mig config cuts %s into %s slices", class.ID, p.MIG)
		if len(others) > 0 {
			msg += "; its configs: " + strings.Join(others, ", ") + ": target one of their profiles, or add a config"
		} else {
			msg += ": add one under cluster.mig.configs"
		}
		errAt(at, "%s", msg)
		return ""
	}
	p.Sharing = ShareMIG
	p.SliceMemoryGB = mig.MemoryGB(p.MIG)
	if m.Cluster.MIGStrategy() == "mixed" {
		return mig.ResourceName(p.MIG)
	}
	return class.ResourceName
}

func checkPoolProfile(m *Model, p *Profile, errAt func(at Path, format string, args ...any)) string {
	names := append([]string{p.Pool}, p.FallbackPools...)
	var pools []*NodePool
	for i, name := range names {
		at := p.path.Key("pool")
		if i > 0 {
			at = p.path.Key("fallbackPools").Index(i - 1)
		}
		pool, ok := m.Pool(name)
		switch {
		case !ok:
			errAt(at, "no shared pool %s in cluster.sharing (it has %s)", name, orNone(slices.Sorted(maps.Keys(m.Cluster.Sharing))))
			continue
		case pool.Sharing == ShareMIG && i == 0:
			errAt(at, "%s is a MIG config, not a shared pool: target its slices with mig: %q", name, firstProfile(pool.Layout))
			continue
		case pool.Sharing == ShareMIG:
			errAt(at, "%s is a MIG config: a time-sliced profile falls back only to shared pools (MIG slices keep their isolation for MIG workloads)", name)
			continue
		case slices.Contains(names[:i], name):
			errAt(at, "pool %s is listed twice: list each pool once, in order of preference", name)
			continue
		case !knownType(m, pool.AcceleratorType):
			// The pool's acceleratorType is reported unknown where the
			// pool is defined.
			continue
		case !slices.Contains(p.AcceleratorTypes, pool.AcceleratorType):
			errAt(at, "pool %s is of %s, which is not among the profile's acceleratorTypes (%s): add it, or leave acceleratorTypes empty to take the pools' types", name, pool.AcceleratorType, strings.Join(p.AcceleratorTypes, ", "))
			continue
		}
		pools = append(pools, pool)
	}
	if len(pools) != len(names) {
		return ""
	}
	for i, id := range p.AcceleratorTypes {
		if !slices.ContainsFunc(pools, func(pool *NodePool) bool { return pool.AcceleratorType == id }) {
			errAt(p.path.Key("acceleratorTypes").Index(i), "none of the profile's pools (%s) is of %s: drop the type or add a pool of it", strings.Join(names, ", "), id)
		}
	}
	resources := map[string][]string{}
	one := ""
	for _, pool := range pools {
		class, _ := m.Catalog.Get(pool.AcceleratorType)
		r := class.ResourceName
		if pool.Renamed {
			r += ".shared"
		}
		resources[r] = append(resources[r], pool.Name)
		if pool.OneReplicaPerPod && one == "" {
			one = pool.Name
		}
	}
	if len(resources) > 1 {
		var parts []string
		for _, r := range slices.Sorted(maps.Keys(resources)) {
			parts = append(parts, r+" ("+strings.Join(resources[r], ", ")+")")
		}
		errAt(p.path.At(p.path.Key("fallbackPools")), "its pools are requested through different resources: %s; a pod asks for one: set renameByDefault alike on them, or split the profile", strings.Join(parts, ", "))
		return ""
	}
	if one != "" && (p.GPU.Max == nil || *p.GPU.Max > 1) {
		errAt(p.path.Key("gpu"), "pool %s fails requests for more than one replica (failRequestsGreaterThanOne): set gpu: max: 1", one)
	}
	p.Pools = names
	p.Sharing = pools[0].Sharing
	p.Replicas = pools[0].Replicas
	for _, pool := range pools[1:] {
		if pool.Replicas != p.Replicas {
			p.Replicas = 0 // the pools share their GPUs differently
		}
	}
	return slices.Sorted(maps.Keys(resources))[0]
}

func knownType(m *Model, id string) bool {
	_, ok := m.Catalog.Get(id)
	return ok
}

func orNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

func firstProfile(layout map[string]int) string {
	for _, name := range slices.Sorted(maps.Keys(layout)) {
		if layout[name] > 0 {
			return name
		}
	}
	return ""
}

// checkPoolNodes compares the pools with the inventory: a pool or config
// that takes no node is an error, as is a listed node of another type; a
// listed node the inventory lacks is a warning (it may not have joined).
func (m *Model) checkPoolNodes(inv *inventory.Inventory) []Diagnostic {
	var out []Diagnostic
	byName := map[string]*inventory.Node{}
	for i := range inv.Nodes {
		byName[inv.Nodes[i].Name] = &inv.Nodes[i]
	}
	pl := m.Place(inv)
	for _, pool := range m.NodePools {
		nodes := pool.path.Key("nodes").At(pool.path)
		members := pl.Members(pool)
		var missing []string
		for _, name := range pool.Nodes {
			n, ok := byName[name]
			switch {
			case !ok:
				missing = append(missing, name)
			case n.AcceleratorType != pool.AcceleratorType:
				out = append(out, Diagnostic{Path: nodes, Msg: fmt.Sprintf(
					"node %s is a %s node, not %s: list it in a pool of its type, or fix the pool's acceleratorType", name, n.AcceleratorType, pool.AcceleratorType)})
			}
		}
		switch {
		case len(members) == 0 && len(pool.Nodes) > 0:
			out = append(out, Diagnostic{Path: pool.path, Msg: fmt.Sprintf(
				"targets no node: none of its nodes (%s) is a %s node in the inventory; fix the names (`accelc inventory show --type %s` lists them)",
				strings.Join(pool.Nodes, ", "), pool.AcceleratorType, pool.AcceleratorType)})
		case len(members) == 0:
			out = append(out, Diagnostic{Path: pool.path, Msg: fmt.Sprintf(
				"targets no node: the inventory has no %s node that another pool does not list; list its nodes, or drop it", pool.AcceleratorType)})
		case len(missing) > 0:
			out = append(out, Diagnostic{Severity: Warning, Path: nodes, Msg: fmt.Sprintf(
				"%s not in the inventory; the pool takes effect on them when they join", strings.Join(missing, ", "))})
		}
	}
	return out
}

// PoolNodes returns the inventory's nodes in a pool. It places the
// whole inventory: a consumer asking of several pools places it once
// (Model.Place) and asks Placed.Members.
func (m *Model) PoolNodes(pool *NodePool, inv *inventory.Inventory) []*inventory.Node {
	return m.Place(inv).Members(pool)
}

// Capacity is what a pool, or a profile over shared GPUs, offers: the
// devices pods can request, which under time-slicing are replicas, not
// GPUs, and under MIG are slices.
type Capacity struct {
	Nodes int `json:"nodes"`
	// GPUs are the physical GPUs behind the devices.
	GPUs int `json:"gpus"`
	// Devices are what pods request: MIG slices of the profile, or
	// time-sliced or MPS replicas.
	Devices int `json:"devices"`
	// Available is Devices on Ready nodes, less what pods use when the
	// inventory counted them.
	Available int `json:"available"`
	// Pending counts devices of nodes whose GPUs the MIG manager or the
	// device plugin has yet to reconfigure: computed from the config.
	Pending int `json:"pending,omitempty"`
}

// ProfileCapacity is Placed.SharedCapacity on inv, placed for this one
// question: a consumer asking more places the inventory once.
func (m *Model) ProfileCapacity(p *Profile, inv *inventory.Inventory) (total Capacity, perPool []Capacity, ok bool) {
	return m.Place(inv).SharedCapacity(p)
}

// PoolCapacity is Placed.Capacity on inv, placed for this one
// question: a consumer asking more places the inventory once.
func (m *Model) PoolCapacity(pool *NodePool, profile string, inv *inventory.Inventory) Capacity {
	return m.Place(inv).Capacity(pool, profile)
}

// PoolSummary is one line of `accelc inventory show --config`'s pools.
type PoolSummary struct {
	Name            string   `json:"name"`
	Sharing         string   `json:"sharing"`
	AcceleratorType string   `json:"acceleratorType"`
	Layout          string   `json:"layout,omitempty"`
	Replicas        int      `json:"replicas,omitempty"`
	Taint           string   `json:"taint,omitempty"`
	Capacity        Capacity `json:"capacity"`
	// PerProfile counts MIG slices by profile.
	PerProfile map[string]Capacity `json:"perProfile,omitempty"`
}

// PoolSummaries counts each pool's devices on the inventory.
func (m *Model) PoolSummaries(inv *inventory.Inventory) []PoolSummary {
	pl := m.Place(inv)
	var out []PoolSummary
	for _, pool := range m.NodePools {
		s := PoolSummary{Name: pool.Name, Sharing: pool.Sharing, AcceleratorType: pool.AcceleratorType, Replicas: pool.Replicas, Capacity: pl.Capacity(pool, "")}
		if pool.Taint != nil {
			s.Taint = pool.Taint.String()
		}
		if pool.Sharing == ShareMIG {
			s.Layout = mig.Describe(pool.Layout)
			s.PerProfile = map[string]Capacity{}
			for name, k := range pool.Layout {
				if k > 0 {
					s.PerProfile[name] = pl.Capacity(pool, name)
				}
			}
		}
		out = append(out, s)
	}
	return out
}

// DeviceShare is the share of a GPU one device of a pool is: 1/replicas
// when time-sliced or MPS; for MIG, a slice of profile's compute slices
// over the GPU's (3/7 for a 3g on an A100). With profile "", a MIG
// config's devices are averaged over its layout (for usage not known per
// profile).
func DeviceShare(pool *NodePool, profile string) float64 {
	if pool.Sharing != ShareMIG {
		return 1 / float64(pool.Replicas)
	}
	geo, err := mig.Builtin()
	if err != nil {
		return 1
	}
	g, ok := geo[pool.AcceleratorType]
	if !ok || g.ComputeSlices == 0 {
		return 1
	}
	layout := pool.Layout
	if profile != "" {
		layout = map[string]int{profile: 1}
	}
	devices, compute := 0, 0
	for name, n := range layout {
		devices += n
		compute += n * g.Profiles[name].Compute
	}
	if devices == 0 {
		return 1
	}
	return float64(compute) / float64(devices*g.ComputeSlices)
}

// PoolResource is the extended resource a pool's devices are requested
// by: nvidia.com/mig-<profile> under the mixed strategy (one layout
// profile), <resource>.shared for a renamed shared pool, else the type's.
func PoolResource(m *Model, pool *NodePool) string { return poolResource(m, pool) }

func poolResource(m *Model, pool *NodePool) string {
	if pool.Sharing == ShareMIG && m.Cluster.MIGStrategy() == "mixed" {
		used := 0
		for _, n := range pool.Layout {
			if n > 0 {
				used++
			}
		}
		if used != 1 {
			return ""
		}
		return mig.ResourceName(firstProfile(pool.Layout))
	}
	r := wholeResource(m, pool)
	if pool.Renamed {
		r += ".shared"
	}
	return r
}

func wholeResource(m *Model, pool *NodePool) string {
	if c, ok := m.Catalog.Get(pool.AcceleratorType); ok {
		return c.ResourceName
	}
	return ""
}
