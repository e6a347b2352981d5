// Package suggest proposes hardware profiles from groups of classified
// nodes: the seed's "Create Hardware Profile from Selection", as CUE an
// admin reviews and commits.
package suggest

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"cuelang.org/go/cue/format"

	"github.com/accelc/accelc/internal/words"
	"github.com/accelc/accelc/pkg/catalog"
	"github.com/accelc/accelc/pkg/inventory"
)

// Options choose the selection and shape the output.
type Options struct {
	// Nodes and Types select nodes by name or class id; with both empty,
	// every node of a known type is selected.
	Nodes []string
	Types []string
	// Package is the CUE package of the file (the cluster's).
	Package string
	// Taken are profile names already in use, which proposals avoid.
	Taken map[string]bool
	// Source names where the nodes came from, for the file's header.
	Source string
	// Pools are the cluster's sharing pools and MIG configs by the nodes
	// they take (compile.Model.PoolOf); nil without a cluster. A node of
	// a time-slicing or MPS pool gets a profile of the pool (pool:), one
	// of a MIG config a profile of its slice (mig:).
	Pools map[string]Pool
}

// Pool is the sharing pool or MIG config a node is in.
type Pool struct {
	Name string
	MIG  bool
}

// Profile is one proposed hardware profile.
type Profile struct {
	Name             string   `json:"name"`
	DisplayName      string   `json:"displayName"`
	Description      string   `json:"description,omitempty"`
	AcceleratorTypes []string `json:"acceleratorTypes"`
	ResourceName     string   `json:"resourceName,omitempty"` // empty: the type's own
	// Pool is the sharing pool the profile targets; MIG the MIG slice of
	// the cluster's MIG configs. Empty for neither.
	Pool   string `json:"pool,omitempty"`
	MIG    string `json:"mig,omitempty"`
	GPUMax int    `json:"gpuMax"`
	// CPU and Memory are the ranges from the nodes' allocatable: a pod
	// with the most GPUs may take the smallest node whole, and the default
	// is a GPU's share of it. Nil when the nodes list no CPU or memory.
	CPU          *Range            `json:"cpu,omitempty"`
	Memory       *Range            `json:"memory,omitempty"`
	Tolerations  []inventory.Taint `json:"tolerations,omitempty"`
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`
	// Nodes are the nodes the profile was proposed from.
	Nodes []string `json:"nodes"`
	// Comments go above the profile in the CUE.
	Comments []string `json:"comments,omitempty"`
}

// Range is a min/default/max triple of Kubernetes quantities: CPU cores
// ("4"), memory ("36Gi").
type Range struct {
	Min     string `json:"min"`
	Default string `json:"default"`
	Max     string `json:"max"`
}

// Result is what Suggest proposes, and the selected nodes it could not
// use: accelc inventory suggest's -o json/yaml document.
type Result struct {
	Profiles []Profile `json:"profiles"`
	// Skipped explains each selected node left out (unknown or mixed type).
	Skipped []string `json:"skipped,omitempty"`
}

// group is nodes of one type shared one way.
type group struct {
	typ     string
	sharing inventory.Sharing
	mig     string // MIG profile of a MIG mixed or single group
	// pool is the time-slicing or MPS pool of the group's nodes; migConfig
	// is set where the nodes are a MIG config's.
	pool      string
	migConfig bool
	nodes     []*inventory.Node
}

// Suggest groups the selected nodes by type and sharing mode and proposes
// one profile per group; when the selection was made by hand (Nodes or
// Types) and spans several types, it proposes one multi-type profile.
func Suggest(inv *inventory.Inventory, cat *catalog.Catalog, opts Options) (*Result, error) {
	sel, res, err := selectNodes(inv, opts)
	if err != nil {
		return nil, err
	}
	if len(sel) == 0 {
		return res, nil
	}
	groups := groupNodes(sel, opts.Pools)
	multi := (len(opts.Nodes) > 0 || len(opts.Types) > 0) && len(typesOf(groups)) > 1
	taken := maps.Clone(opts.Taken)
	if taken == nil {
		taken = map[string]bool{}
	}
	if multi {
		res.Profiles = append(res.Profiles, multiType(groups, cat, taken))
		return res, nil
	}
	for _, g := range groups {
		res.Profiles = append(res.Profiles, single(g, groups, cat, taken))
	}
	return res, nil
}

func selectNodes(inv *inventory.Inventory, opts Options) ([]*inventory.Node, *Result, error) {
	res := &Result{}
	byName := map[string]*inventory.Node{}
	for i := range inv.Nodes {
		byName[inv.Nodes[i].Name] = &inv.Nodes[i]
	}
	var sel []*inventory.Node
	for _, name := range opts.Nodes {
		n, ok := byName[name]
		if !ok {
			return nil, nil, fmt.Errorf("--nodes: %s is not an accelerator node of the inventory", name)
		}
		sel = append(sel, n)
	}
	for _, t := range opts.Types {
		nodes := inv.ByType(t)
		if len(nodes) == 0 {
			return nil, nil, fmt.Errorf("--type: no node of type %s in the inventory", t)
		}
		sel = append(sel, nodes...)
	}
	if len(opts.Nodes) == 0 && len(opts.Types) == 0 {
		for i := range inv.Nodes {
			sel = append(sel, &inv.Nodes[i])
		}
	}
	seen := map[string]bool{}
	out := sel[:0]
	for _, n := range sel {
		if seen[n.Name] {
			continue
		}
		seen[n.Name] = true
		switch n.AcceleratorType {
		case inventory.TypeUnknown, inventory.TypeMixed:
			res.Skipped = append(res.Skipped, fmt.Sprintf("%s: type %s; %s", n.Name, n.AcceleratorType, n.Notes[len(n.Notes)-1]))
			continue
		}
		if n.Sharing == inventory.MIGSingle && len(n.MIGDevices) == 0 {
			res.Skipped = append(res.Skipped, fmt.Sprintf("%s: its MIG layout is invalid, no device to target", n.Name))
			continue
		}
		out = append(out, n)
	}
	slices.Sort(res.Skipped)
	return out, res, nil
}

func groupNodes(nodes []*inventory.Node, pools map[string]Pool) []*group {
	byKey := map[string]*group{}
	for _, n := range nodes {
		pool := pools[n.Name]
		if pool.Name != "" && !pool.MIG {
			// A node of a time-slicing or MPS pool hands out the pool's
			// replicas, whatever the inventory read it as (a node just
			// put in the pool still offers whole GPUs).
			add(byKey, &group{typ: n.AcceleratorType, sharing: inventory.TimeSliced, pool: pool.Name}, n)
			continue
		}
		if n.Sharing == inventory.MIGMixed {
			for _, p := range slices.Sorted(maps.Keys(n.MIGDevices)) {
				add(byKey, &group{typ: n.AcceleratorType, sharing: n.Sharing, mig: p, migConfig: pool.MIG}, n)
			}
			continue
		}
		mig := ""
		if n.Sharing == inventory.MIGSingle {
			// A MIG single node offers one profile: nodes cut into
			// different profiles are different profiles' nodes.
			mig = singleProfile(n)
		}
		add(byKey, &group{typ: n.AcceleratorType, sharing: n.Sharing, mig: mig, migConfig: pool.MIG && mig != ""}, n)
	}
	return slices.SortedFunc(maps.Values(byKey), func(a, b *group) int {
		return strings.Compare(a.key(), b.key())
	})
}

func add(byKey map[string]*group, g *group, n *inventory.Node) {
	if old, ok := byKey[g.key()]; ok {
		g = old
	} else {
		byKey[g.key()] = g
	}
	g.nodes = append(g.nodes, n)
}

func (g *group) key() string {
	return g.typ + "/" + string(g.sharing) + "/" + g.mig + "/" + g.pool + "/" + strconv.FormatBool(g.migConfig)
}

func typesOf(groups []*group) []string {
	var ts []string
	for _, g := range groups {
		if !slices.Contains(ts, g.typ) {
			ts = append(ts, g.typ)
		}
	}
	return ts
}

// single proposes the profile of one group.
func single(g *group, all []*group, cat *catalog.Catalog, taken map[string]bool) Profile {
	c, _ := cat.Get(g.typ)
	p := Profile{
		AcceleratorTypes: []string{g.typ},
		DisplayName:      c.DisplayName,
		Tolerations:      commonTaints(g.nodes),
		Nodes:            names(g.nodes),
		GPUMax:           g.perPodMax(),
	}
	base := strings.TrimPrefix(g.typ, c.Vendor+"-")
	switch {
	case g.pool != "":
		// The pool settles the resource, the taint to tolerate and the
		// nodes (its label): the profile names it.
		p.Pool = g.pool
		p.DisplayName += " (shared, pool " + g.pool + ")"
		p.Description = fmt.Sprintf("A shared replica of an %s in pool %s.", c.DisplayName, g.pool)
		p.GPUMax = 1
		p.CPU, p.Memory = ranges(g.nodes)
		p.Comments = []string{fmt.Sprintf("From %s of pool %s: %s.", words.Plural(len(g.nodes), "node"), g.pool, strings.Join(abbreviate(p.Nodes, 5), ", "))}
		p.Name = freeName(g.pool, taken)
		return p
	case g.migConfig:
		// The cluster's MIG configs cut the slice: the profile names it,
		// and its nodes and resource follow.
		p.MIG = g.mig
		p.DisplayName += " MIG " + g.mig
		p.Description = fmt.Sprintf("A %s MIG slice of an %s.", g.mig, c.DisplayName)
		p.CPU, p.Memory = ranges(g.nodes)
		p.Comments = []string{fmt.Sprintf("From %s cut by the cluster's MIG configs: %s.", words.Plural(len(g.nodes), "node"), strings.Join(abbreviate(p.Nodes, 5), ", "))}
		p.Name = freeName(base+"-mig-"+strings.ReplaceAll(g.mig, ".", "-"), taken)
		return p
	}
	switch g.sharing {
	case inventory.TimeSliced, inventory.MPS:
		p.DisplayName += " (shared, " + string(g.sharing) + ")"
		p.Description = fmt.Sprintf("A %s share of an %s.", g.sharing, c.DisplayName)
		base += "-shared"
		p.ResourceName = commonResource(g.nodes)
	case inventory.MIGSingle:
		prof := g.singleMIGProfile()
		p.DisplayName += " MIG " + prof
		p.Description = fmt.Sprintf("A %s MIG slice of an %s (MIG single strategy).", prof, c.DisplayName)
		base += "-mig-" + strings.ReplaceAll(prof, ".", "-")
	case inventory.MIGMixed:
		p.DisplayName += " MIG " + g.mig
		p.Description = fmt.Sprintf("A %s MIG slice of an %s.", g.mig, c.DisplayName)
		p.ResourceName = "nvidia.com/mig-" + g.mig
		base += "-mig-" + strings.ReplaceAll(g.mig, ".", "-")
	case inventory.VGPU:
		p.DisplayName += " (vGPU)"
		p.Description = fmt.Sprintf("An NVIDIA vGPU of an %s: the guest's share of the board, through the hypervisor.", c.DisplayName)
		base += "-vgpu"
		p.ResourceName = commonResource(g.nodes)
	case inventory.Partitioned:
		p.DisplayName += " (partition)"
		p.Description = fmt.Sprintf("A compute partition of an %s.", c.DisplayName)
		base += "-partition"
		p.ResourceName = commonResource(g.nodes)
	default:
		p.Description = fmt.Sprintf("Whole %s GPUs.", c.DisplayName)
		if r := commonResource(g.nodes); r != "" && r != c.ResourceName {
			p.ResourceName = r
		}
	}
	if p.ResourceName == c.ResourceName {
		p.ResourceName = ""
	}
	p.CPU, p.Memory = ranges(g.nodes)
	p.NodeSelector, p.Comments = sharingSelector(g, all)
	p.Comments = append([]string{fmt.Sprintf("From %s: %s.", words.Plural(len(g.nodes), "node"), strings.Join(abbreviate(p.Nodes, 5), ", "))}, p.Comments...)
	p.Name = freeName(base, taken)
	return p
}

// multiType proposes one profile over every type of the selection: the
// types ordered by memory, largest first, and a GPU count every node fits.
func multiType(groups []*group, cat *catalog.Catalog, taken map[string]bool) Profile {
	types := typesOf(groups)
	slices.SortStableFunc(types, func(a, b string) int {
		ca, _ := cat.Get(a)
		cb, _ := cat.Get(b)
		if ca.MemoryGB != cb.MemoryGB {
			return cb.MemoryGB - ca.MemoryGB
		}
		return strings.Compare(a, b)
	})
	var nodes []*inventory.Node
	gpuMax := 0
	var display []string
	for _, t := range types {
		c, _ := cat.Get(t)
		display = append(display, c.DisplayName)
	}
	for i, g := range groups {
		nodes = append(nodes, g.nodes...)
		if m := g.perPodMax(); i == 0 || m < gpuMax {
			gpuMax = m
		}
	}
	p := Profile{
		AcceleratorTypes: types,
		DisplayName:      strings.Join(display, " or "),
		Description:      fmt.Sprintf("Any of %s, in this order of preference.", strings.Join(display, ", ")),
		Tolerations:      commonTaints(nodes),
		GPUMax:           gpuMax,
		Nodes:            names(nodes),
	}
	slices.Sort(p.Nodes)
	p.CPU, p.Memory = ranges(nodes)
	p.Comments = []string{fmt.Sprintf("From %s: %s. The first type is preferred; reorder acceleratorTypes to change that.",
		words.Plural(len(p.Nodes), "node"), strings.Join(abbreviate(p.Nodes, 5), ", "))}
	var bases []string
	for _, t := range types {
		c, _ := cat.Get(t)
		bases = append(bases, strings.ToLower(c.Model))
	}
	p.Name = freeName(strings.Join(bases, "-or-"), taken)
	return p
}

// ranges proposes CPU and memory from the smallest node: at most all of
// it, by default one device's share of it (what the node can allocate:
// GPUs, time-sliced replicas or MIG devices).
func ranges(nodes []*inventory.Node) (cpu, memory *Range) {
	var minCPU, minMem int64
	devices := 0
	for i, n := range nodes {
		c, m := n.Resources()
		if c == 0 || m == 0 {
			return nil, nil
		}
		if i == 0 || c < minCPU {
			minCPU = c
		}
		if i == 0 || m < minMem {
			minMem = m
		}
		devices = max(devices, n.Allocatable, n.Count)
	}
	share := int64(max(devices, 1))
	cores := max(minCPU/1000, 1)
	gi := max(minMem>>30, 2)
	cpu = &Range{Min: "1", Default: strconv.FormatInt(max(cores/share, 1), 10), Max: strconv.FormatInt(cores, 10)}
	memory = &Range{Min: "2Gi", Default: strconv.FormatInt(max(gi/share, 2), 10) + "Gi", Max: strconv.FormatInt(gi, 10) + "Gi"}
	return cpu, memory
}

// perPodMax is the most devices one pod can get on the group's nodes: the
// smallest node's allocatable (MIG devices of the group's profile), and 1
// for a time-sliced or MPS share, which the device plugin hands out one
// at a time.
func (g *group) perPodMax() int {
	if g.sharing == inventory.TimeSliced || g.sharing == inventory.MPS {
		return 1
	}
	best := 0
	for i, n := range g.nodes {
		v := n.Allocatable
		switch {
		case g.sharing == inventory.MIGMixed:
			v = n.MIGDevices[g.mig]
		case v == 0:
			v = n.Count
		}
		if i == 0 || v < best {
			best = v
		}
	}
	return max(best, 1)
}

func (g *group) singleMIGProfile() string { return g.mig }

// singleProfile is the profile a MIG single node's devices are (it has
// one: selectNodes left out those with none).
func singleProfile(n *inventory.Node) string {
	return slices.Sorted(maps.Keys(n.MIGDevices))[0]
}

// sharingSelector keeps a shared group's profile off the same type's
// exclusive nodes (and the reverse) through the labels GPU Feature
// Discovery sets, when every node of the group carries them.
func sharingSelector(g *group, all []*group) (map[string]string, []string) {
	others, otherSlices := false, false
	for _, o := range all {
		if o.typ == g.typ && o.sharing != g.sharing {
			others = true
		}
		if o.typ == g.typ && o.sharing == g.sharing && o.mig != g.mig {
			otherSlices = true
		}
	}
	if g.sharing == inventory.MIGSingle && otherSlices {
		// Under the single strategy GPU Feature Discovery names the
		// profile in the product ("…-MIG-1g.10gb"): it tells the
		// profiles' nodes apart, and the shared and whole ones too.
		if v, ok := commonLabel(g.nodes, catalog.LabelGFDProduct); ok {
			return map[string]string{catalog.LabelGFDProduct: v}, nil
		}
		return nil, []string{fmt.Sprintf("Other %s nodes are cut into other MIG profiles and these nodes carry no common %s label: add a nodeSelector that tells them apart.", g.typ, catalog.LabelGFDProduct)}
	}
	if !others {
		return nil, nil
	}
	var key string
	switch g.sharing {
	case inventory.TimeSliced, inventory.MPS:
		key = "nvidia.com/gpu.sharing-strategy"
	case inventory.MIGSingle, inventory.MIGMixed:
		key = "nvidia.com/mig.strategy"
	default:
		return nil, []string{fmt.Sprintf("Other %s nodes are shared (MIG or time-slicing): the type label alone does not keep this profile's pods off them; taint or label those nodes.", g.typ)}
	}
	if v, ok := commonLabel(g.nodes, key); ok {
		return map[string]string{key: v}, nil
	}
	return nil, []string{fmt.Sprintf("Other %s nodes are shared differently and these nodes carry no common %s label: add a nodeSelector that tells them apart.", g.typ, key)}
}

func commonLabel(nodes []*inventory.Node, key string) (string, bool) {
	var value string
	for i, n := range nodes {
		v, ok := n.Label(key)
		if !ok || (i > 0 && v != value) {
			return "", false
		}
		value = v
	}
	return value, value != ""
}

func commonResource(nodes []*inventory.Node) string {
	r := nodes[0].Resource
	for _, n := range nodes[1:] {
		if n.Resource != r {
			return ""
		}
	}
	return r
}

// commonTaints are the taints every node carries: the profile tolerates
// them, or its pods cannot land.
func commonTaints(nodes []*inventory.Node) []inventory.Taint {
	var out []inventory.Taint
	for _, t := range nodes[0].Taints {
		everywhere := true
		for _, n := range nodes[1:] {
			if !slices.Contains(n.Taints, t) {
				everywhere = false
				break
			}
		}
		if everywhere && !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	slices.SortFunc(out, func(a, b inventory.Taint) int {
		return strings.Compare(a.Key+"="+a.Value+":"+a.Effect, b.Key+"="+b.Value+":"+b.Effect)
	})
	return out
}

func names(nodes []*inventory.Node) []string {
	out := make([]string, len(nodes))
	for i, n := range nodes {
		out[i] = n.Name
	}
	return out
}

func abbreviate(list []string, n int) []string {
	if len(list) <= n {
		return list
	}
	return append(slices.Clone(list[:n]), fmt.Sprintf("and %d more", len(list)-n))
}

// freeName makes base a valid profile name (lower-case DNS label) not yet
// taken, and takes it.
func freeName(base string, taken map[string]bool) string {
	base = strings.Trim(strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-':
			return r
		case r >= 'A' && r <= 'Z':
			return r + 'a' - 'A'
		}
		return '-'
	}, base), "-")
	if len(base) > 55 {
		base = strings.TrimRight(base[:55], "-")
	}
	name := base
	for i := 2; taken[name]; i++ {
		name = base + "-" + strconv.Itoa(i)
	}
	taken[name] = true
	return name
}

// CUE writes the proposals as a CUE file of the given package, formatted
// as `cue fmt` would.
func (r *Result) CUE(opts Options) ([]byte, error) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "// Hardware profiles proposed by `accelc inventory suggest`")
	if opts.Source != "" {
		fmt.Fprintf(&b, " from %s", opts.Source)
	}
	b.WriteString(".\n// Review the names and descriptions, then commit.\n")
	for _, s := range r.Skipped {
		fmt.Fprintf(&b, "// Left out: %s\n", s)
	}
	pkg := opts.Package
	if pkg == "" {
		pkg = "cluster"
	}
	fmt.Fprintf(&b, "package %s\n\nprofiles: {\n", pkg)
	for _, p := range r.Profiles {
		for _, c := range p.Comments {
			fmt.Fprintf(&b, "// %s\n", c)
		}
		fmt.Fprintf(&b, "%q: {\n", p.Name)
		fmt.Fprintf(&b, "displayName: %q\n", p.DisplayName)
		fmt.Fprintf(&b, "description: %q\n", p.Description)
		fmt.Fprintf(&b, "acceleratorTypes: [%s]\n", quoteAll(p.AcceleratorTypes))
		if p.ResourceName != "" {
			fmt.Fprintf(&b, "resourceName: %q\n", p.ResourceName)
		}
		if p.Pool != "" {
			fmt.Fprintf(&b, "pool: %q\n", p.Pool)
		}
		if p.MIG != "" {
			fmt.Fprintf(&b, "mig: %q\n", p.MIG)
		}
		fmt.Fprintf(&b, "gpu: {min: 1, default: 1, max: %d}\n", p.GPUMax)
		if p.CPU != nil {
			fmt.Fprintf(&b, "cpu: {min: %s, default: %s, max: %s}\n", p.CPU.Min, p.CPU.Default, p.CPU.Max)
			fmt.Fprintf(&b, "memory: {min: %q, default: %q, max: %q}\n", p.Memory.Min, p.Memory.Default, p.Memory.Max)
		}
		if len(p.Tolerations) > 0 {
			b.WriteString("tolerations: [\n")
			for _, t := range p.Tolerations {
				if t.Value == "" {
					fmt.Fprintf(&b, "{key: %q, operator: \"Exists\", effect: %q},\n", t.Key, t.Effect)
				} else {
					fmt.Fprintf(&b, "{key: %q, operator: \"Equal\", value: %q, effect: %q},\n", t.Key, t.Value, t.Effect)
				}
			}
			b.WriteString("]\n")
		}
		for _, k := range slices.Sorted(maps.Keys(p.NodeSelector)) {
			fmt.Fprintf(&b, "nodeSelector: %q: %q\n", k, p.NodeSelector[k])
		}
		b.WriteString("}\n")
	}
	b.WriteString("}\n")
	out, err := format.Source(b.Bytes(), format.Simplify())
	if err != nil {
		return nil, fmt.Errorf("formatting the proposed CUE: %w", err)
	}
	return out, nil
}

func quoteAll(list []string) string {
	q := make([]string, len(list))
	for i, s := range list {
		q[i] = strconv.Quote(s)
	}
	return strings.Join(q, ", ")
}
