package render

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/accelc/accelc/pkg/catalog"
	"github.com/accelc/accelc/pkg/catalogdoc"
	"github.com/accelc/accelc/pkg/compile"
	"github.com/accelc/accelc/pkg/inventory"
)

// Open Data Hub's HardwareProfile, infrastructure.opendatahub.io/v1 (its
// Go types are not in go.mod).
type hardwareProfile struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              hwpSpec `json:"spec"`
}

type hwpSpec struct {
	Identifiers []identifier `json:"identifiers"`
	Scheduling  *scheduling  `json:"scheduling,omitempty"`
	DRA         *draSpec     `json:"dra,omitempty"`
}

// draSpec is the HardwareProfile's Dynamic Resource Allocation reference
// (Open Data Hub's DRASpec, spec.dra, since opendatahub-operator's v1 and
// v1alpha1 gained it): the ResourceClaimTemplate, in the workload's own
// namespace, that its pods claim their devices with. ODH creates no such
// template; accelc renders one of this name in every namespace of every
// team that may use the profile.
type draSpec struct {
	ResourceClaimTemplateName string `json:"resourceClaimTemplateName"`
}

type identifier struct {
	DisplayName  string            `json:"displayName"`
	Identifier   string            `json:"identifier"`
	MinCount     compile.Quantity  `json:"minCount"`
	MaxCount     *compile.Quantity `json:"maxCount,omitempty"`
	DefaultCount compile.Quantity  `json:"defaultCount"`
	ResourceType string            `json:"resourceType"`
}

type scheduling struct {
	Type  string           `json:"type"`
	Kueue *kueueScheduling `json:"kueue,omitempty"`
	Node  *nodeScheduling  `json:"node,omitempty"`
}

// kueueScheduling is scheduling type Queue: Open Data Hub labels the
// workload with the LocalQueue (and the WorkloadPriorityClass), and Kueue
// picks the flavor, whose node labels it injects.
type kueueScheduling struct {
	LocalQueueName string `json:"localQueueName"`
	PriorityClass  string `json:"priorityClass,omitempty"`
}

type nodeScheduling struct {
	NodeSelector map[string]string    `json:"nodeSelector,omitempty"`
	Tolerations  []compile.Toleration `json:"tolerations,omitempty"`
}

// Annotations accelc puts on HardwareProfiles, under the cluster's label
// prefix. Policies and mutations key on them.
const (
	// AnnotationTypes lists the profile's types in preference order,
	// comma-separated; absent on a generic profile.
	AnnotationTypes = "types"
	// AnnotationPools lists the node pools (values of the pool label) a
	// profile over shared GPUs runs in, in preference order.
	AnnotationPools = "pools"
	// AnnotationPriorityClass is the priority class the profile's pods
	// run at (the mutation sets it; the policy checks it).
	AnnotationPriorityClass = "priority-class"
	// AnnotationRetired is, on a retired profile, the profile that
	// replaces it ("" for none): the policy refuses new pods of it,
	// naming the replacement, and lets the running ones finish.
	AnnotationRetired = "retired-for"
	// AnnotationTolerations is, on a profile that schedules through
	// Kueue, its tolerations as a JSON list (the mutation adds them; the
	// policy allows them).
	AnnotationTolerations = "tolerations"
	// AnnotationResourceClaimTemplate is, on a profile that hands out
	// devices through Dynamic Resource Allocation, the
	// ResourceClaimTemplate its pods claim them with (in each namespace
	// of the teams that may use it).
	AnnotationResourceClaimTemplate = "resource-claim-template"
)

func intQ(n int) compile.Quantity { return compile.Quantity{Int: int64(n)} }

func textQ(s string) compile.Quantity { return compile.Quantity{Str: s, IsText: true} }

// hardwareProfiles renders one HardwareProfile per profile.
//
// A single-type profile selects its nodes with the normalized type label.
// A multi-type profile cannot be a node selector (the v1 API holds no
// affinity): its types go in the types annotation, in preference order,
// for accelc's admission mutation to turn into required and preferred
// node affinity. A generic profile selects only what the admin wrote.
func hardwareProfiles(m *compile.Model) ([]Object, error) {
	var out []Object
	for i := range m.Profiles {
		p := &m.Profiles[i]
		visibility, err := json.Marshal(nonNil(p.Visibility))
		if err != nil {
			return nil, err
		}
		ann := map[string]string{
			"opendatahub.io/display-name":                 p.DisplayName,
			"opendatahub.io/disabled":                     strconv.FormatBool(!p.Offered()),
			"opendatahub.io/dashboard-feature-visibility": string(visibility),
		}
		// With live descriptions the catalog service owns the
		// annotation (server-side apply, its own field manager): were it
		// rendered too, Flux would take it back on every reconcile.
		if p.Description != "" && !m.LiveDescriptions() {
			ann[DescriptionAnnotation] = p.Description
		}
		if !p.Generic() {
			ann[m.Cluster.LabelPrefix+"/"+AnnotationTypes] = strings.Join(p.AcceleratorTypes, ",")
		}
		if len(p.Pools) > 0 {
			ann[m.Cluster.LabelPrefix+"/"+AnnotationPools] = strings.Join(p.Pools, ",")
		}
		if p.PriorityClassName != "" {
			ann[m.Cluster.LabelPrefix+"/"+AnnotationPriorityClass] = p.PriorityClassName
		}
		if p.Retired != nil {
			ann[m.Cluster.LabelPrefix+"/"+AnnotationRetired] = p.Retired.Replacement
		}

		var dra *draSpec
		ids := []identifier{
			rangeIdentifier("CPU", "cpu", "CPU", p.CPU),
			rangeIdentifier("Memory", "memory", "Memory", p.Memory),
		}
		if p.DRA != nil {
			// The devices come from the claim, not an extended resource:
			// no Accelerator identifier (ODH would inject its request),
			// and no type selector (the scheduler's allocation places the
			// pod on a node with a device of the class, of whatever other
			// models the node also holds).
			ann[m.Cluster.LabelPrefix+"/"+AnnotationResourceClaimTemplate] = ResourceClaimTemplateName(p)
			dra = &draSpec{ResourceClaimTemplateName: ResourceClaimTemplateName(p)}
		} else if p.GPU.Max == nil || *p.GPU.Max > 0 {
			acc := identifier{
				DisplayName:  acceleratorName(p),
				Identifier:   p.ResourceName,
				MinCount:     intQ(p.GPU.Min),
				DefaultCount: intQ(p.GPU.Default),
				ResourceType: "Accelerator",
			}
			if p.GPU.Max != nil {
				q := intQ(*p.GPU.Max)
				acc.MaxCount = &q
			}
			ids = append(ids, acc)
		}

		selector := map[string]string{}
		for k, v := range p.NodeSelector {
			selector[k] = v
		}
		// compile.Load refuses a nodeSelector that sets these labels to
		// something else.
		if len(p.AcceleratorTypes) == 1 && p.DRA == nil {
			selector[m.Cluster.TypeLabel()] = p.AcceleratorTypes[0]
		}
		// One pool is one more equality; several are the mutation's
		// affinity, as several types are.
		if len(p.Pools) == 1 {
			selector[m.Cluster.PoolLabel()] = p.Pools[0]
		}
		var sched *scheduling
		if len(m.QueueTeams(p)) > 0 {
			// Kueue's flavors select the nodes (type and pool labels) in
			// the profile's order; accelc's mutations add the profile's
			// tolerations and node affinity to its pods.
			sched = &scheduling{Type: "Queue", Kueue: &kueueScheduling{LocalQueueName: LocalQueueName(p), PriorityClass: p.PriorityClassName}}
			if len(p.Tolerations) > 0 {
				// For the policy, which allows a pod the profile's
				// tolerations: type Queue holds none.
				b, err := json.Marshal(p.Tolerations)
				if err != nil {
					return nil, err
				}
				ann[m.Cluster.LabelPrefix+"/"+AnnotationTolerations] = string(b)
			}
		} else if len(selector) > 0 || len(p.Tolerations) > 0 {
			ns := &nodeScheduling{Tolerations: p.Tolerations}
			if len(selector) > 0 {
				ns.NodeSelector = selector
			}
			sched = &scheduling{Type: "Node", Node: ns}
		}

		out = append(out, Object{
			Dir:    "profiles",
			Source: []string{"profiles", p.Name},
			Body: &hardwareProfile{
				TypeMeta: metav1.TypeMeta{APIVersion: "infrastructure.opendatahub.io/v1", Kind: "HardwareProfile"},
				ObjectMeta: metav1.ObjectMeta{
					Name:        p.Name,
					Namespace:   m.Cluster.ProfileNamespace,
					Labels:      managedLabels(m.Cluster.Name),
					Annotations: ann,
				},
				Spec: hwpSpec{Identifiers: ids, Scheduling: sched, DRA: dra},
			},
		})
	}
	return out, nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func rangeIdentifier(display, id, typ string, r compile.Range) identifier {
	return identifier{DisplayName: display, Identifier: id, MinCount: r.Min, MaxCount: r.Max, DefaultCount: r.Default, ResourceType: typ}
}

// acceleratorName is what the dashboard shows for the accelerator
// identifier: the type's display name, or the types joined by " or ", and
// for shared GPUs what a pod gets of one: "NVIDIA A100 80GB · 3g.40gb
// slice, 40 GB" or "NVIDIA A100 80GB · time-sliced ×3 (shared, not a
// whole GPU)".
func acceleratorName(p *compile.Profile) string {
	if p.Generic() {
		return "GPU"
	}
	names := make([]string, len(p.Classes))
	for i, c := range p.Classes {
		names[i] = c.DisplayName
	}
	name := strings.Join(names, " or ")
	switch p.Sharing {
	case compile.ShareMIG:
		name += fmt.Sprintf(" · %s slice, %d GB", p.MIG, p.SliceMemoryGB)
	case compile.ShareTimeSlicing, compile.ShareMPS:
		mode := "time-sliced"
		if p.Sharing == compile.ShareMPS {
			mode = "MPS"
		}
		if p.Replicas > 0 {
			mode += fmt.Sprintf(" ×%d", p.Replicas)
		}
		name += " · " + mode + " (shared, not a whole GPU)"
	}
	return name
}

// CatalogConfigMapName is the ConfigMap model-serving and estimation
// tools read.
const CatalogConfigMapName = "accelc-hardware-catalog"

// catalogGrowth is each class's growth from the cluster's Karpenter pools.
func catalogGrowth(m *compile.Model) map[string]*catalogdoc.Growth {
	out := map[string]*catalogdoc.Growth{}
	unbounded := map[string]bool{}
	for _, p := range m.ScalePools() {
		g := out[p.AcceleratorType]
		if g == nil {
			g = &catalogdoc.Growth{Limit: new(int)}
			out[p.AcceleratorType] = g
		}
		g.NodePools = append(g.NodePools, p.NodePoolName())
		for _, c := range p.CapacityTypes {
			if !slices.Contains(g.CapacityTypes, c) {
				g.CapacityTypes = append(g.CapacityTypes, c)
			}
		}
		if p.Limit == nil {
			unbounded[p.AcceleratorType] = true
		} else {
			*g.Limit += *p.Limit
		}
	}
	for id, g := range out {
		slices.Sort(g.CapacityTypes)
		if unbounded[id] {
			g.Limit = nil
		}
	}
	return out
}

// Catalog builds the catalog document of a cluster and its inventory:
// what the catalog ConfigMap holds and `accelc catalog` prints.
func Catalog(m *compile.Model, inv *inventory.Inventory) catalogdoc.Document {
	return CatalogOf(m.Place(inv))
}

// CatalogOf is Catalog of a placed cluster, for a caller that holds one.
func CatalogOf(cluster *compile.Placed) catalogdoc.Document {
	m := cluster.Model
	pooled := map[string]bool{}
	for _, pool := range m.NodePools {
		pooled[pool.AcceleratorType] = true
	}
	doc := catalogdoc.Document{SchemaVersion: catalogdoc.SchemaVersion, Cluster: m.Cluster.Name, TypeLabel: m.Cluster.TypeLabel(), Profiles: []catalogdoc.Profile{}}
	growth := catalogGrowth(m)
	// The nodes a profile counts, and their summary by type, are the
	// cluster's for every profile but a MultiKueue manager's dispatched
	// ones, which add their workers': one of each per set of workers.
	type counted struct {
		pl      *compile.Placed
		perType map[string]inventory.TypeSummary
	}
	bySet := map[string]counted{}
	for i := range m.Profiles {
		p := &m.Profiles[i]
		workers := profileWorkers(m, p)
		key := strings.Join(workers, ",")
		c, ok := bySet[key]
		if !ok {
			c = counted{pl: cluster, perType: map[string]inventory.TypeSummary{}}
			if len(workers) > 0 {
				c.pl = m.Place(withWorkerNodes(m, cluster.Inventory, workers))
			}
			for _, s := range c.pl.Inventory.Summary() {
				c.perType[s.AcceleratorType] = s
			}
			bySet[key] = c
		}
		pl, inv, perType := c.pl, c.pl.Inventory, c.perType
		cp := catalogdoc.Profile{
			Name:         p.Name,
			DisplayName:  p.DisplayName,
			Enabled:      p.Offered(),
			ResourceName: p.ResourceName,
			GPU:          p.GPU,
			Types:        []catalogdoc.Type{},
			Workers:      workers,
		}
		for _, c := range p.Classes {
			s := perType[c.ID]
			available := s.Allocatable
			if s.Available != nil {
				available = *s.Available
			}
			if pooled[c.ID] {
				available = 0
				for _, n := range pl.ByType(c.ID) {
					if pl.Reachable(p, n) {
						available += n.Free()
					}
				}
			}
			// Nodes the inventory types by their other labels but that
			// no rule gives the type label the profile selects: its pods
			// stay Pending there, so they are not available to it.
			unlabelled, labelling := 0, ""
			if nodes := m.Unlabelled(c, pl.ByType(c.ID)); len(nodes) > 0 {
				for _, n := range nodes {
					if !pooled[c.ID] || pl.Reachable(p, n) {
						unlabelled += n.Free()
					}
				}
				available = max(available-unlabelled, 0)
				labelling = fmt.Sprintf("%d of %d %s nodes carry no %s and are not pinned: %s",
					len(nodes), len(pl.ByType(c.ID)), c.ID, m.Cluster.TypeLabel(), c.Labelling(m.Cluster.TypeLabel()))
			}
			cp.Types = append(cp.Types, catalogdoc.Type{
				ID: c.ID, DisplayName: c.DisplayName, Vendor: c.Vendor, Architecture: c.Architecture,
				Memory: strconv.Itoa(c.MemoryGB) + "GB", MemoryGB: c.MemoryGB, ComputeCapability: c.ComputeCapability,
				FP16TFLOPS: c.FP16TFLOPS, BF16TFLOPS: c.BF16TFLOPS, MemoryBandwidthGBps: c.MemoryBandwidthGBps,
				CostPerHour: c.CostPerHour, Performance: c.Performance,
				Nodes: s.Nodes, GPUs: pl.TypeGPUs(c.ID), Available: available,
				Unlabelled: unlabelled, Labelling: labelling,
				Autoscaling: growth[c.ID],
			})
			cp.Available += available
		}
		if len(p.Classes) > 0 {
			first := p.Classes[0]
			cp.AcceleratorType = first.ID
			cp.Memory = strconv.Itoa(first.MemoryGB) + "GB"
			cp.Architecture = first.Architecture
			if s := catalogSharing(pl, p, cp.Types); s != nil {
				cp.Sharing = s
				cp.Available = s.Available
				cp.Memory = strconv.Itoa(s.MemoryGB) + "GB"
			}
		} else {
			cp.AcceleratorType = "generic"
			for j := range inv.Nodes {
				n := &inv.Nodes[j]
				if resourceOf(m.Catalog, n) == p.ResourceName && pl.Reachable(p, n) {
					cp.Available += n.Free()
				}
			}
		}
		cp.Summary = fmt.Sprintf("%s (%s) - %d available", p.DisplayName, acceleratorName(p), cp.Available)
		if p.Generic() {
			cp.Summary = fmt.Sprintf("%s - %d available", p.DisplayName, cp.Available)
		} else if cp.Sharing != nil && cp.Sharing.CostPerHour != nil {
			cp.Summary += fmt.Sprintf(" - $%.2f/hour", *cp.Sharing.CostPerHour)
		} else if cost := p.Classes[0].CostPerHour; cost != nil && cp.Sharing == nil {
			// As the seed's dashboard shows it: "… - 6 available - $1.50/hour".
			cp.Summary += fmt.Sprintf(" - $%.2f/hour", *cost)
		}
		if s := cp.Sharing; s != nil && s.Mode != compile.ShareMIG {
			cp.Summary += fmt.Sprintf(" (replicas of %d GPUs, not whole GPUs)", s.GPUs)
		}
		cp.Queue = catalogQueue(pl, p)
		doc.Profiles = append(doc.Profiles, cp)
	}
	return doc
}

// profileWorkers are, on a MultiKueue manager, the workers a profile's
// queues dispatch to, sorted; none elsewhere, or where the manager read
// no worker's nodes.
func profileWorkers(m *compile.Model, p *compile.Profile) []string {
	if !m.IsMultiKueueManager() || m.Cluster.MultiKueue.WorkerNodes == nil {
		return nil
	}
	var workers []string
	for _, t := range m.QueueTeams(p) {
		for _, w := range m.DispatchWorkers(t, p) {
			if !slices.Contains(workers, w) {
				workers = append(workers, w)
			}
		}
	}
	slices.Sort(workers)
	return workers
}

// withWorkerNodes is the cluster's nodes with the workers' (the
// snapshots the manager read beside it), where a dispatched profile's
// jobs run; inv itself without workers. The pods on them are counted
// only where every snapshot counted them.
func withWorkerNodes(m *compile.Model, inv *inventory.Inventory, workers []string) *inventory.Inventory {
	if len(workers) == 0 {
		return inv
	}
	merged := &inventory.Inventory{Nodes: slices.Clone(inv.Nodes), OtherNodes: inv.OtherNodes, Source: inv.Source}
	usage := inv.UsageKnown()
	for _, w := range workers {
		if wi := m.Cluster.MultiKueue.WorkerNodes[w]; wi != nil {
			merged.Nodes = append(merged.Nodes, wi.Nodes...)
			merged.OtherNodes += wi.OtherNodes
			usage = usage && wi.UsageKnown()
		}
	}
	if !usage {
		merged.Source = nil
	}
	return merged
}

// catalogQueue is a profile's queue, nil when it schedules by node.
func catalogQueue(pl *compile.Placed, p *compile.Profile) *catalogdoc.Queue {
	m := pl.Model
	teams := m.QueueTeams(p)
	if len(teams) == 0 {
		return nil
	}
	q := &catalogdoc.Queue{LocalQueue: LocalQueueName(p), Teams: []catalogdoc.TeamQueue{}}
	for _, t := range teams {
		tq := catalogdoc.TeamQueue{Team: t.Name, ClusterQueue: ClusterQueueName(t, p), Cohort: TeamCohortName(t), Flavors: []catalogdoc.FlavorQuota{}}
		for _, id := range m.QueueFlavors(t, p) {
			f := catalogdoc.FlavorQuota{Flavor: id, Quota: m.KeyQuotas(t, id)[p.ResourceName]}
			if pl.Inventory.UsageKnown() {
				used := 0
				for _, n := range pl.FlavorNodes(id) {
					for _, ns := range t.Namespaces {
						used += n.InUseBy[ns]
					}
				}
				f.Used, f.Left = ptr(used), ptr(f.Quota-used)
			}
			tq.Flavors = append(tq.Flavors, f)
		}
		q.Teams = append(q.Teams, tq)
	}
	return q
}

// catalogSharing describes a profile over shared GPUs and counts its
// devices; each of its types gets its device and, as Available, that
// type's devices in the profile's pools. nil for a profile of whole GPUs.
func catalogSharing(pl *compile.Placed, p *compile.Profile, types []catalogdoc.Type) *catalogdoc.Sharing {
	m := pl.Model
	capacity, perPool, ok := pl.SharedCapacity(p)
	if !ok {
		return nil
	}
	s := &catalogdoc.Sharing{Mode: p.Sharing, MIGProfile: p.MIG, Pools: p.Pools, Capacity: capacity}
	perType := map[string]int{}
	devices := map[string]*catalogdoc.Device{}
	for i, name := range p.Pools {
		pool, ok := m.Pool(name)
		if !ok {
			continue
		}
		perType[pool.AcceleratorType] += perPool[i].Available
		if devices[pool.AcceleratorType] == nil {
			class, _ := m.Catalog.Get(pool.AcceleratorType)
			devices[pool.AcceleratorType] = poolDevice(p, pool, class)
		}
	}
	for i := range types {
		types[i].Available = perType[types[i].ID]
		types[i].Device = devices[types[i].ID]
	}
	first, _ := m.Pool(p.Pools[0])
	d := devices[first.AcceleratorType]
	s.MemoryGB, s.CostPerHour = d.MemoryGB, d.CostPerHour
	if p.Sharing == compile.ShareMIG {
		s.Replicas = first.Layout[p.MIG]
	} else {
		s.Replicas = first.Replicas
	}
	return s
}

// poolDevice is one device of a pool for a profile, a MIG slice or a
// replica, which costs its share of the GPU's hourly price
// (compile.DeviceShare).
func poolDevice(p *compile.Profile, pool *compile.NodePool, class *catalog.Class) *catalogdoc.Device {
	var d *catalogdoc.Device
	switch pool.Sharing {
	case compile.ShareMIG:
		d = &catalogdoc.Device{Name: p.MIG + " slice", MemoryGB: p.SliceMemoryGB}
	default:
		mode := "time-sliced"
		if pool.Sharing == compile.ShareMPS {
			mode = "MPS"
		}
		d = &catalogdoc.Device{Name: fmt.Sprintf("1/%d of a GPU (%s)", pool.Replicas, mode), MemoryGB: class.MemoryGB / pool.Replicas}
	}
	d.ComputeShare = compile.DeviceShare(pool, p.MIG)
	if class.CostPerHour != nil {
		cost := *class.CostPerHour * d.ComputeShare
		d.CostPerHour = &cost
	}
	return d
}

// CatalogPartBytes is the most catalog.json one ConfigMap holds; a larger
// catalog is split by profile into parts.
const CatalogPartBytes = 900 << 10

// CatalogPartLabel marks every ConfigMap of the catalog, whatever its
// part, when the catalog is split: readers list them with the selector
// accelc.io/catalog-part and join their profiles in part order.
const CatalogPartLabel = "accelc.io/catalog-part"

// catalogConfigMaps renders the catalog as one ConfigMap, or as several
// (by profile, in order) when one would pass the API server's 1 MiB.
func catalogConfigMaps(pl *compile.Placed) ([]Object, error) {
	m := pl.Model
	doc := CatalogOf(pl)
	data, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, err
	}
	if len(data) < CatalogPartBytes {
		return []Object{catalogPart(m, CatalogConfigMapName, data, 0)}, nil
	}
	var parts [][]catalogdoc.Profile
	size := 0
	for _, p := range doc.Profiles {
		b, err := json.MarshalIndent(p, "    ", "  ")
		if err != nil {
			return nil, err
		}
		n := len(b) + len("    ,\n")
		if len(parts) == 0 || size+n > CatalogPartBytes-1024 {
			parts = append(parts, nil)
			size = 0
		}
		parts[len(parts)-1] = append(parts[len(parts)-1], p)
		size += n
	}
	out := make([]Object, len(parts))
	for i, profiles := range parts {
		part := doc
		part.Profiles, part.Part, part.Parts = profiles, i+1, len(parts)
		data, err := json.MarshalIndent(part, "", "  ")
		if err != nil {
			return nil, err
		}
		name := CatalogConfigMapName
		if i > 0 {
			name = fmt.Sprintf("%s-%d", CatalogConfigMapName, i+1)
		}
		out[i] = catalogPart(m, name, data, i+1)
	}
	return out, nil
}

func catalogPart(m *compile.Model, name string, data []byte, part int) Object {
	labels := managedLabels(m.Cluster.Name)
	if part > 0 {
		labels[CatalogPartLabel] = strconv.Itoa(part)
	}
	body := &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: m.Cluster.ProfileNamespace, Labels: labels},
		Data:       map[string]string{"catalog.json": string(data) + "\n"},
	}
	return Object{Dir: "profiles", Body: body, Source: []string{"profiles"}}
}

// resourceOf is the extended resource a node's accelerators are requested
// by: its class's, or its vendor's default for unknown types.
func resourceOf(cat *catalog.Catalog, n *inventory.Node) string {
	if c, ok := cat.Get(n.AcceleratorType); ok {
		return c.ResourceName
	}
	return catalog.DefaultResourceName(n.Vendor)
}
