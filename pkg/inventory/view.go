package inventory

// Views of an inventory: the summary by type, nodes by type, filtered and
// sorted, as accelc inventory show prints them.

import (
	"encoding/csv"
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/accelc/accelc/internal/words"
)

// TypeSummary is one line of the per-type summary.
type TypeSummary struct {
	AcceleratorType string `json:"acceleratorType"`
	DisplayName     string `json:"displayName"`
	Nodes           int    `json:"nodes"`
	GPUs            int    `json:"gpus"`
	// Allocatable counts devices on nodes that are Ready (or of unknown
	// status in a snapshot without conditions); cordoned and failing nodes
	// add nothing.
	Allocatable int `json:"allocatable"`
	// InUse is what pods request on those nodes; Available is what is
	// left. Both are set only when the snapshot counted pods.
	InUse     *int `json:"inUse,omitempty"`
	Available *int `json:"available,omitempty"`
	// Replicas counts the allocatable devices that are time-sliced or MPS
	// replicas of a GPU, not GPUs: quotas and requests count them as GPUs.
	Replicas int `json:"replicas,omitempty"`
	// MIGSlices counts the allocatable devices that are MIG slices of a
	// GPU, not GPUs, likewise.
	MIGSlices int `json:"migSlices,omitempty"`
	// GPUs leaves out the nodes under MIG single, whose labels and
	// capacity count slices and not the GPUs they are cut from:
	// UncountedNodes says how many.
	UncountedNodes int `json:"uncountedNodes,omitempty"`

	// unit is what one device of the type is called: "GPU", or for a
	// TPU or Neuron type "TPU chip" or "Neuron device".
	unit string
}

// deviceUnit is what one device of a vendor is called.
func deviceUnit(vendor string) string {
	switch vendor {
	case "google":
		return "TPU chip"
	case "aws":
		return "Neuron device"
	}
	return "GPU"
}

func (s TypeSummary) String() string {
	unit := s.unit
	if unit == "" {
		unit = "GPU"
	}
	gpus := words.Plural(s.GPUs, unit)
	switch {
	case s.UncountedNodes == s.Nodes:
		gpus = "GPUs not reported (MIG single reports slices)"
	case s.UncountedNodes > 0:
		gpus += fmt.Sprintf(" (not counting %s under MIG single, which reports slices)", words.Plural(s.UncountedNodes, "node"))
	}
	line := fmt.Sprintf("%s: %s, %s, ", s.DisplayName, words.Plural(s.Nodes, "node"), gpus)
	if s.Available != nil {
		line += fmt.Sprintf("%d available", *s.Available)
	} else {
		line += fmt.Sprintf("%d allocatable", s.Allocatable)
	}
	switch {
	case s.Replicas > 0 && s.MIGSlices > 0:
		line += fmt.Sprintf(" (%d of the allocatable are shared replicas and %d are MIG slices, not whole GPUs)", s.Replicas, s.MIGSlices)
	case s.Replicas > 0:
		line += fmt.Sprintf(" (%d of the allocatable are shared replicas, not whole GPUs)", s.Replicas)
	case s.MIGSlices > 0:
		line += fmt.Sprintf(" (%d of the allocatable are MIG slices, not whole GPUs)", s.MIGSlices)
	}
	return line
}

// migSlices is how many of a node's allocatable devices are MIG slices:
// all of them under MIG single; under MIG mixed, those its MIG devices
// count (the rest are whole GPUs nvidia.com/gpu offers beside them).
func migSlices(n *Node) int {
	switch n.Sharing {
	case MIGSingle:
		return n.Allocatable
	case MIGMixed:
		slices := 0
		for _, c := range n.MIGDevices {
			slices += c
		}
		if len(n.MIGDevices) == 0 {
			// Counts not reported: what nvidia.com/gpu does not offer.
			return n.Allocatable
		}
		return min(slices, n.Allocatable)
	}
	return 0
}

// Summary aggregates nodes per accelerator type, known types first by id,
// then mixed and unknown. A node whose ResourceSlices publish devices of
// several types counts under each, with the devices of that type.
func (inv *Inventory) Summary() []TypeSummary {
	byType := map[string]*TypeSummary{}
	inUse := map[string]int{}
	entry := func(id, display string) *TypeSummary {
		s := byType[id]
		if s == nil {
			s = &TypeSummary{AcceleratorType: id, DisplayName: display}
			switch id {
			case TypeUnknown:
				s.DisplayName = "GPU - type unknown"
			case TypeMixed:
				s.DisplayName = "Mixed types"
			}
			byType[id] = s
		}
		return s
	}
	for i := range inv.Nodes {
		n := &inv.Nodes[i]
		if n.split() {
			// What pods use of the node is not known per type: claims
			// are not counted, and an extended resource names no type.
			counted := map[string]bool{}
			for _, g := range n.DRA {
				s := entry(g.AcceleratorType, g.DisplayName)
				if !counted[g.AcceleratorType] {
					// Two unknown models are one unknown node.
					counted[g.AcceleratorType] = true
					s.Nodes++
				}
				s.GPUs += g.GPUs
				if n.Available() && n.Allocatable > 0 {
					s.Allocatable += g.Devices
					for _, c := range g.MIGDevices {
						s.MIGSlices += min(c, g.Devices)
					}
				}
			}
			continue
		}
		s := entry(n.AcceleratorType, n.DisplayName)
		if n.AcceleratorType != TypeUnknown && n.AcceleratorType != TypeMixed {
			s.unit = deviceUnit(n.Vendor)
		}
		s.Nodes++
		if n.Sharing == MIGSingle {
			s.UncountedNodes++
		} else {
			s.GPUs += n.Count
		}
		if n.Available() {
			s.Allocatable += n.Allocatable
			inUse[n.AcceleratorType] += min(n.InUse, n.Allocatable)
			if n.Sharing == TimeSliced || n.Sharing == MPS {
				s.Replicas += n.Allocatable
			}
			s.MIGSlices += migSlices(n)
		}
	}
	out := make([]TypeSummary, 0, len(byType))
	for id, s := range byType {
		if inv.UsageKnown() {
			used, free := inUse[id], s.Allocatable-inUse[id]
			s.InUse, s.Available = &used, &free
		}
		out = append(out, *s)
	}
	sort.Slice(out, func(i, j int) bool {
		ri, rj := typeRank(out[i].AcceleratorType), typeRank(out[j].AcceleratorType)
		if ri != rj {
			return ri < rj
		}
		return out[i].AcceleratorType < out[j].AcceleratorType
	})
	return out
}

// split reports whether the node is shown and counted per type: its
// ResourceSlices publish devices of more than one.
func (n *Node) split() bool { return n.AcceleratorType == TypeMixed && len(n.DRA) > 1 }

func typeRank(t string) int {
	switch t {
	case TypeMixed:
		return 1
	case TypeUnknown:
		return 2
	}
	return 0
}

// ByType returns the nodes of one accelerator type.
func (inv *Inventory) ByType(id string) []*Node {
	var out []*Node
	for i := range inv.Nodes {
		if inv.Nodes[i].AcceleratorType == id {
			out = append(out, &inv.Nodes[i])
		}
	}
	return out
}

// Format is a format the node view writes itself: text (a table, and
// the summary and the nodes that need attention) or csv. Its json and
// yaml are View's document, through the writer every report goes
// through.
type Format string

// Formats lists the formats WriteView writes.
var Formats = []string{"text", "csv"}

// ViewOptions shape the node view.
type ViewOptions struct {
	Format Format
	// GroupByType groups text rows under one heading per type.
	GroupByType bool
}

// View is the node view as a document: `accelc inventory show -o json`.
type View struct {
	Nodes    []Node        `json:"nodes"`
	Summary  []TypeSummary `json:"summary"`
	Problems []Problem     `json:"problems,omitempty"`
}

// View is the node view's document.
func (inv *Inventory) View() View {
	v := View{Nodes: inv.Nodes, Summary: inv.Summary(), Problems: inv.Problems}
	if v.Nodes == nil {
		v.Nodes = []Node{}
	}
	return v
}

// WriteView prints the node view as text or csv.
func (inv *Inventory) WriteView(w io.Writer, opts ViewOptions) error {
	switch opts.Format {
	case "", "text":
		return inv.writeTable(w, opts.GroupByType)
	case "csv":
		return inv.writeCSV(w)
	}
	return fmt.Errorf("unknown format %q: use one of %s", opts.Format, strings.Join(Formats, ", "))
}

func memory(gb int) string {
	if gb == 0 {
		return "-"
	}
	return strconv.Itoa(gb) + "GB"
}

func sharingCell(n *Node) string {
	s := string(n.Sharing)
	switch {
	case n.Replicas > 1:
		s += " ×" + strconv.Itoa(n.Replicas)
	case len(n.MIGDevices) > 0:
		s += " " + migList(n.MIGDevices)
	case len(n.Partitions) > 0:
		s += " " + migList(n.Partitions)
	case n.Sharing == MIGSingle:
		s += " (invalid)"
	case len(n.DRA) == 1 && len(n.DRA[0].Partitions) > 0:
		s = draSharing(&n.DRA[0])
	case n.Topology != "":
		s += ", TPU slice " + n.Topology
	}
	return s
}

// draSharing is the sharing cell of one type's devices on a node.
func draSharing(g *DRADevices) string {
	switch {
	case len(g.MIGDevices) > 0:
		return string(MIGMixed) + " " + migList(g.MIGDevices)
	case len(g.Partitions) > 0:
		return "partitioned " + migList(g.Partitions)
	}
	return string(Exclusive)
}

func migList(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = strconv.Itoa(m[k]) + "×" + k
	}
	return strings.Join(parts, ",")
}

// viewRow is one line of the node table: a node, or one type's devices on
// a node whose ResourceSlices publish several.
type viewRow struct {
	name, display, typ, inUse, sharing, status string
	count, allocatable, memoryGB               int
}

// rows are the node's lines of the node table: one per type of a split
// node, where what pods use is not known per type.
func (n *Node) rows() []viewRow {
	if !n.split() {
		typ := n.AcceleratorType
		if n.Pinned {
			typ += " (pinned)"
		}
		return []viewRow{{name: n.Name, display: n.DisplayName, typ: typ, inUse: strconv.Itoa(n.InUse), sharing: sharingCell(n),
			status: n.Status, count: n.Count, allocatable: n.Allocatable, memoryGB: n.MemoryGB}}
	}
	out := make([]viewRow, len(n.DRA))
	for i, g := range n.DRA {
		sharing := draSharing(&g)
		alloc := g.Devices
		if n.Allocatable == 0 {
			alloc = 0
		}
		out[i] = viewRow{name: n.Name, display: g.DisplayName, typ: g.AcceleratorType, inUse: "-", sharing: sharing,
			status: n.Status, count: g.GPUs, allocatable: alloc, memoryGB: g.MemoryGB}
	}
	return out
}

func (inv *Inventory) writeTable(w io.Writer, group bool) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	usage := inv.UsageKnown()
	header := "NODE\tACCELERATOR\tTYPE\tGPUS\tALLOCATABLE\t"
	if usage {
		header += "IN USE\t"
	}
	header += "GPU MEMORY\tSHARING\tSTATUS"
	row := func(r viewRow) {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t", r.name, r.display, r.typ, r.count, r.allocatable)
		if usage {
			fmt.Fprintf(tw, "%s\t", r.inUse)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", memory(r.memoryGB), r.sharing, r.status)
	}
	if group {
		for i, s := range inv.Summary() {
			if i > 0 {
				fmt.Fprintln(tw)
			}
			fmt.Fprintf(tw, "# %s\n", s)
			fmt.Fprintln(tw, header)
			for j := range inv.Nodes {
				for _, r := range inv.Nodes[j].rows() {
					if strings.TrimSuffix(r.typ, " (pinned)") == s.AcceleratorType {
						row(r)
					}
				}
			}
		}
	} else {
		fmt.Fprintln(tw, header)
		for i := range inv.Nodes {
			for _, r := range inv.Nodes[i].rows() {
				row(r)
			}
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if !group {
		fmt.Fprintln(w)
		for _, s := range inv.Summary() {
			fmt.Fprintln(w, s)
		}
	}
	if inv.OtherNodes > 0 {
		fmt.Fprintf(w, "%s without accelerators not shown.\n", words.Plural(inv.OtherNodes, "node"))
	}
	var attention []*Node
	for i := range inv.Nodes {
		n := &inv.Nodes[i]
		if t := n.AcceleratorType; (t == TypeUnknown || t == TypeMixed) && !n.splitKnown() {
			attention = append(attention, n)
		}
	}
	if len(attention) > 0 {
		verb := "need"
		if len(attention) == 1 {
			verb = "needs"
		}
		fmt.Fprintf(w, "\n%s %s attention:\n", words.Plural(len(attention), "node"), verb)
		for _, n := range attention {
			fmt.Fprintf(w, "  %s (%s): %s\n", n.Name, n.AcceleratorType, n.Notes[len(n.Notes)-1])
		}
	}
	return nil
}

// splitKnown reports whether the node is split and each of its devices
// is of a catalog type: it needs nothing done.
func (n *Node) splitKnown() bool {
	if !n.split() {
		return false
	}
	for _, g := range n.DRA {
		if g.AcceleratorType == TypeUnknown {
			return false
		}
	}
	return true
}

// Filter selects nodes; an empty field matches every node. Values are
// compared as the view prints them.
type Filter struct {
	Types   []string // class ids, "unknown" or "mixed"
	Sharing []string // exclusive, time-sliced, mps, mig-single, mig-mixed, vgpu, partitioned
	Status  []string // Ready, NotReady, Unschedulable, Unknown
}

// Match reports whether the node passes the filter.
func (f Filter) Match(n *Node) bool {
	in := func(list []string, v string) bool {
		if len(list) == 0 {
			return true
		}
		for _, x := range list {
			if strings.EqualFold(x, v) {
				return true
			}
		}
		return false
	}
	typ := in(f.Types, n.AcceleratorType)
	if n.split() {
		for _, g := range n.DRA {
			typ = typ || in(f.Types, g.AcceleratorType)
		}
	}
	return typ && in(f.Sharing, string(n.Sharing)) && in(f.Status, n.Status)
}

// Select returns an inventory of the nodes that pass the filter (sharing
// the nodes' storage); problems and source are kept.
func (inv *Inventory) Select(f Filter) *Inventory {
	out := *inv
	out.Nodes = nil
	for i := range inv.Nodes {
		if f.Match(&inv.Nodes[i]) {
			out.Nodes = append(out.Nodes, inv.Nodes[i])
		}
	}
	return &out
}

// SortKeys are the node view's sort orders.
var SortKeys = []string{"name", "type", "gpus", "available", "status"}

// Sort orders the nodes by key (one of SortKeys), then by name. Counts
// sort largest first.
func (inv *Inventory) Sort(key string) error {
	var less func(a, b *Node) int
	switch key {
	case "", "name":
		less = func(a, b *Node) int { return 0 }
	case "type":
		less = func(a, b *Node) int { return strings.Compare(a.AcceleratorType, b.AcceleratorType) }
	case "gpus":
		less = func(a, b *Node) int { return b.Count - a.Count }
	case "available":
		less = func(a, b *Node) int { return b.Free() - a.Free() }
	case "status":
		less = func(a, b *Node) int { return strings.Compare(a.Status, b.Status) }
	default:
		return fmt.Errorf("unknown sort key %q: use one of %s", key, strings.Join(SortKeys, ", "))
	}
	slices.SortStableFunc(inv.Nodes, func(a, b Node) int {
		if c := less(&a, &b); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	return nil
}

func (inv *Inventory) writeCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"name", "acceleratorType", "displayName", "vendor", "count", "allocatable", "memoryGB", "architecture", "sharing", "replicas", "migDevices", "status", "notes"})
	for i := range inv.Nodes {
		n := &inv.Nodes[i]
		_ = cw.Write([]string{n.Name, n.AcceleratorType, n.DisplayName, n.Vendor, strconv.Itoa(n.Count),
			strconv.Itoa(n.Allocatable), strconv.Itoa(n.MemoryGB), n.Architecture, string(n.Sharing),
			strconv.Itoa(n.Replicas), migList(n.MIGDevices), n.Status, strings.Join(n.Notes, "; ")})
	}
	cw.Flush()
	return cw.Error()
}

// SharingText is how the node view shows the node's sharing: "time-sliced
// ×4", "mig-mixed 1×3g.40gb,2×2g.20gb".
func (n *Node) SharingText() string { return sharingCell(n) }
