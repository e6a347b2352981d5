package render

// Kueue's queues and quotas per team: a Cohort per team with its quota by
// flavor, a ClusterQueue and LocalQueue per profile it may use, and the
// declared cohorts and topologies they nest in.

import (
	"cmp"
	"maps"
	"slices"
	"sort"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/accelc/accelc/pkg/compile"
)

// Kueue's API, v1beta2 (the storage version since Kueue 0.16).
const kueueAPIVersion = "kueue.x-k8s.io/v1beta2"

// LocalQueueName is the LocalQueue of a profile: the one its
// HardwareProfile names (spec.scheduling.kueue.localQueueName), which
// Open Data Hub and accelc's mutation put in the workload's
// kueue.x-k8s.io/queue-name label. Every namespace of every team that may
// use the profile has one, on the team's ClusterQueue for the profile.
func LocalQueueName(p *compile.Profile) string { return p.Name }

// ClusterQueueName is a team's ClusterQueue for a profile: <team>.<profile>
// (a dot, which neither name holds, keeps every pair apart).
func ClusterQueueName(t *compile.Team, p *compile.Profile) string { return t.Name + "." + p.Name }

// TeamCohortName is the Cohort that holds a team's quota: the team's name.
func TeamCohortName(t *compile.Team) string { return t.Name }

// quotaObjects renders team quotas. With Kueue: one ResourceFlavor per
// accelerator type a team has quota for, selecting the normalized type
// label, and per pool or MIG config, selecting and tainted as its nodes; one ClusterQueue per team covering exactly the types it is
// entitled to, with its nominal quota per type, cohort and borrowing
// limits, and an explicit namespace selector; a LocalQueue in each team
// namespace. Without Kueue: a ResourceQuota per team namespace capping the
// accelerator resources in total. PriorityClasses come either way.
func quotaObjects(pl *compile.Placed) ([]Object, error) {
	m := pl.Model
	out := priorityClasses(m)
	if !KueueQuotas(m) {
		for i := range m.Teams {
			if len(m.Teams[i].Quota) > 0 {
				out = append(out, resourceQuotas(m, &m.Teams[i])...)
			}
		}
		return out, nil
	}
	var teams []*compile.Team
	for i := range m.Teams {
		if len(m.Teams[i].Quota) > 0 {
			teams = append(teams, &m.Teams[i])
		}
	}
	out = append(out, workloadPriorityClasses(m)...)
	cfg, err := kueueConfiguration(m)
	if err != nil {
		return nil, err
	}
	out = append(out, cfg)
	out = append(out, declaredCohorts(m)...)
	out = append(out, topologies(m)...)
	out = append(out, provisioningObjects(m)...)
	out = append(out, multiKueueObjects(m)...)
	flavors := map[string]bool{}
	fleet := pl.Fleet() // a manager's workers' nodes too, placed once
	for _, t := range teams {
		for id := range t.Quota {
			flavors[id] = true
		}
		out = append(out, teamCohort(fleet, t))
	}
	// What every pod admitted to a flavor tolerates: the tolerations all
	// the profiles whose queues list it share. Kueue adds a flavor's
	// tolerations to the pods it admits there, so a pod made as ODH alone
	// makes it (no tolerations: type Queue holds none) reaches the flavor's
	// tainted nodes. Only what every such profile has: a pod is never given
	// a toleration its own profile lacks (another profile's pool taint),
	// which the scheduling policy would refuse and which would let it onto
	// nodes its profile keeps it off; accelc's mutation adds the rest.
	flavorTolerations := map[string][]compile.Toleration{}
	for i := range m.Profiles {
		p := &m.Profiles[i]
		for _, t := range m.QueueTeams(p) {
			for _, id := range m.QueueFlavors(t, p) {
				tols, seen := flavorTolerations[id]
				if !seen {
					flavorTolerations[id] = slices.Clone(p.Tolerations)
					continue
				}
				flavorTolerations[id] = slices.DeleteFunc(tols, func(tol compile.Toleration) bool {
					return !slices.ContainsFunc(p.Tolerations, func(o compile.Toleration) bool { return sameToleration(o, tol) })
				})
			}
		}
	}
	for i := range m.Profiles {
		p := &m.Profiles[i]
		for _, t := range m.QueueTeams(p) {
			out = append(out, profileClusterQueue(m, t, p))
			for _, ns := range t.Namespaces {
				out = append(out, Object{
					Dir: "queues", PerNamespace: true,
					Source: []string{"teams", t.Name, "namespaces"},
					Body: &localQueue{
						TypeMeta:   metav1.TypeMeta{APIVersion: kueueAPIVersion, Kind: "LocalQueue"},
						ObjectMeta: objectMeta(m.Cluster.Name, ns, LocalQueueName(p)),
						Spec:       localQueueSpec{ClusterQueue: ClusterQueueName(t, p), FairSharing: fairSharing(t.AdmissionFairSharing.Weight(ns))},
					},
				})
			}
		}
	}
	out = append(out, Object{
		Dir: "queues",
		Body: &resourceFlavor{
			TypeMeta:   metav1.TypeMeta{APIVersion: kueueAPIVersion, Kind: "ResourceFlavor"},
			ObjectMeta: objectMeta(m.Cluster.Name, "", DefaultFlavor),
		},
	})
	for _, id := range sortedSet(flavors) {
		spec := resourceFlavorSpec{NodeLabels: map[string]string{m.Cluster.TypeLabel(): id}}
		// A pool's flavor selects the pool's nodes and carries its taint:
		// Kueue assigns a flavor with nodeTaints only to workloads that
		// tolerate them, so whole-GPU workloads never count against, or
		// land in, a pool's quota.
		if pool, ok := m.Pool(id); ok {
			spec.NodeLabels = map[string]string{m.Cluster.TypeLabel(): pool.AcceleratorType, m.Cluster.PoolLabel(): pool.Name}
			if pool.Taint != nil {
				spec.NodeTaints = []compile.Taint{*pool.Taint}
			}
		}
		spec.Tolerations = sortedTolerations(flavorTolerations[id])
		// A type with a topology: Kueue places the flavor's pods by its
		// levels (topology-aware scheduling).
		if typ, topo := m.KeyTopology(id); topo != nil {
			spec.TopologyName = typ
		}
		out = append(out, Object{
			Dir: "queues", Source: []string{"accelerators", id},
			Body: &resourceFlavor{
				TypeMeta:   metav1.TypeMeta{APIVersion: kueueAPIVersion, Kind: "ResourceFlavor"},
				ObjectMeta: objectMeta(m.Cluster.Name, "", id),
				Spec:       spec,
			},
		})
	}
	return out, nil
}

// DefaultFlavor is the ResourceFlavor of the CPU and memory that come
// with a team's accelerators: it selects no node.
const DefaultFlavor = "accelc-default"

// teamCohort is the Cohort (kueue.x-k8s.io/v1beta2, hierarchical) that
// holds a team's quota: one budget that every ClusterQueue of the team,
// one per profile it may use, borrows from. Its resource groups are one
// per accelerator resource (nvidia.com/gpu, a MIG slice's, amd.com/gpu…),
// its flavors the team's quota keys of that resource, and one for the CPU
// and memory that come with them. A team in a cohort has its Cohort under
// that one (spec.parentName): the teams lend each other what they do not
// use, within the team's borrowing and lending limits.
func teamCohort(pl *compile.Placed, t *compile.Team) Object {
	m := pl.Model
	spec := cohortSpec{ParentName: t.Cohort, ResourceGroups: teamQuotaGroups(pl, t), FairSharing: fairSharing(t.FairShare)}
	return Object{
		Dir: "queues", Source: []string{"teams", t.Name},
		Body: &cohort{
			TypeMeta: metav1.TypeMeta{APIVersion: kueueAPIVersion, Kind: "Cohort"},
			ObjectMeta: metav1.ObjectMeta{Name: TeamCohortName(t), Labels: managedLabels(m.Cluster.Name),
				Annotations: map[string]string{"accelc.io/team": t.DisplayName}},
			Spec: spec,
		},
	}
}

// teamQuotaGroups are a team's quotas as Kueue resource groups: one per
// accelerator resource, its flavors the team's quota keys of it (pools
// first, then types in entitlement order), and one for CPU and memory.
// Kueue leaves a workload that requests a resource its queue does not
// cover pending ("resource cpu unavailable in ClusterQueue"), so the
// budget covers the CPU and memory that come with the team's
// accelerators: for each quota, as many devices' worth as its nodes have
// per device. Borrowing and lending limits are only for a team in a
// cohort (Kueue's webhook rejects them on a root Cohort).
func teamQuotaGroups(pl *compile.Placed, t *compile.Team) []resourceGroup {
	m := pl.Model
	var keys []string
	for _, pool := range m.NodePools {
		if _, ok := t.Quota[pool.Name]; ok {
			keys = append(keys, pool.Name)
		}
	}
	keys = append(keys, t.AcceleratorTypes...)
	// A flavor with a topology holds the CPU and memory of its own
	// devices: Kueue places a pod by topology in one flavor for all it
	// requests, so its CPU and memory cannot come from accelc-default.
	// Joining cpu and memory into the key's group puts the key, the
	// default flavor and every key of the same resource in one group.
	keyResources := func(id string) []string {
		if id == DefaultFlavor {
			return []string{"cpu", "memory"}
		}
		quotas := m.KeyQuotas(t, id)
		if len(quotas) == 0 {
			return nil
		}
		res := slices.Sorted(maps.Keys(quotas))
		if _, topo := m.KeyTopology(id); topo != nil {
			res = append(res, "cpu", "memory")
		}
		return res
	}
	keys = append(keys, DefaultFlavor)
	// Kueue covers a resource in one group of a Cohort, and each flavor
	// of a group lists every resource the group covers. Keys of one
	// resource share a group; a MIG config whose quota is per profile
	// (several resources) joins the groups of its profiles into one,
	// where a flavor holds 0 of the resources it does not provide.
	type group struct {
		resources []string
		keys      []string
	}
	var groups []*group
	groupOf := map[string]*group{}
	for _, id := range keys {
		resources := keyResources(id)
		if len(resources) == 0 {
			continue
		}
		var g *group
		for _, r := range resources {
			h := groupOf[r]
			switch {
			case h == nil || h == g:
			case g == nil:
				g = h
			default:
				g.resources = append(g.resources, h.resources...)
				g.keys = append(g.keys, h.keys...)
				for _, hr := range h.resources {
					groupOf[hr] = g
				}
				groups = slices.DeleteFunc(groups, func(x *group) bool { return x == h })
			}
		}
		if g == nil {
			g = &group{}
			groups = append(groups, g)
		}
		for _, r := range resources {
			if groupOf[r] == nil {
				g.resources = append(g.resources, r)
				groupOf[r] = g
			}
		}
		g.keys = append(g.keys, id)
	}
	var out []resourceGroup
	for _, g := range groups {
		var flavors []flavorQuotas
		for _, id := range g.keys {
			quotas := m.KeyQuotas(t, id)
			f := flavorQuotas{Name: id}
			host := map[string]compile.Quantity{}
			if slices.Contains(keyResources(id), "cpu") {
				cpuMilli, memBytes := hostShare(pl, t, id)
				host["cpu"] = textQ(resource.NewMilliQuantity(cpuMilli, resource.DecimalSI).String())
				host["memory"] = textQ(resource.NewQuantity(memBytes, resource.BinarySI).String())
			}
			for _, res := range g.resources {
				if res == "cpu" || res == "memory" {
					q, ok := host[res]
					if !ok {
						q = intQ(0)
					}
					f.Resources = append(f.Resources, resourceQuota{Name: res, NominalQuota: q})
					continue
				}
				quota := resourceQuota{Name: res, NominalQuota: intQ(quotas[res])}
				if _, ok := quotas[res]; ok && t.Cohort != "" && len(quotas) == 1 {
					if limit, ok := t.BorrowingLimit[id]; ok {
						quota.BorrowingLimit = ptr(intQ(limit))
					}
					if limit, ok := t.LendingLimit[id]; ok {
						quota.LendingLimit = ptr(intQ(limit))
					}
				}
				f.Resources = append(f.Resources, quota)
			}
			flavors = append(flavors, f)
		}
		out = append(out, resourceGroup{CoveredResources: g.resources, Flavors: flavors})
	}
	return out
}

// profileClusterQueue is a team's ClusterQueue for one profile, in the
// team's Cohort. It holds no quota of its own (nominal 0: everything it
// admits is borrowed from the team's budget), so the team's profiles
// share one budget; what it adds is the order: its one accelerator group
// lists the profile's flavors (types, or pools) in the profile's order,
// and with whenCanBorrow: MayStopSearch Kueue takes the first that fits,
// moving on to the next (whenCanPreempt: TryNextFlavor) before it
// preempts for a preferred one.
func profileClusterQueue(m *compile.Model, t *compile.Team, p *compile.Profile) Object {
	var flavors []flavorQuotas
	ids := m.QueueFlavors(t, p)
	// Flavors with a topology (vet keeps a queue's all with or all
	// without) hold their pods' CPU and memory too: one group, and Kueue
	// treats every pod of the queue as placed by topology.
	tas := len(ids) > 0
	for _, id := range ids {
		if _, topo := m.KeyTopology(id); topo == nil {
			tas = false
		}
	}
	for _, id := range ids {
		f := flavorQuotas{Name: id, Resources: []resourceQuota{{Name: p.ResourceName, NominalQuota: intQ(0)}}}
		if tas {
			f.Resources = append(f.Resources, resourceQuota{Name: "cpu", NominalQuota: intQ(0)}, resourceQuota{Name: "memory", NominalQuota: intQ(0)})
		}
		flavors = append(flavors, f)
	}
	groups := []resourceGroup{
		{CoveredResources: []string{p.ResourceName}, Flavors: flavors},
		{CoveredResources: []string{"cpu", "memory"}, Flavors: []flavorQuotas{{Name: DefaultFlavor, Resources: []resourceQuota{
			{Name: "cpu", NominalQuota: intQ(0)}, {Name: "memory", NominalQuota: intQ(0)},
		}}}},
	}
	if tas {
		groups = []resourceGroup{{CoveredResources: []string{p.ResourceName, "cpu", "memory"}, Flavors: flavors}}
	}
	namespaces := append([]string(nil), t.Namespaces...)
	sort.Strings(namespaces)
	spec := clusterQueueSpec{
		CohortName: TeamCohortName(t),
		// An explicit list: a nil selector matches no namespace, an empty
		// one every namespace.
		NamespaceSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{
			Key: "kubernetes.io/metadata.name", Operator: metav1.LabelSelectorOpIn, Values: namespaces,
		}}},
		QueueingStrategy:  "BestEffortFIFO",
		FlavorFungibility: &flavorFungibility{WhenCanBorrow: "MayStopSearch", WhenCanPreempt: "TryNextFlavor"},
		Preemption: &queuePreemption{
			WithinClusterQueue:  t.Preemption.WithinClusterQueue,
			ReclaimWithinCohort: t.Preemption.ReclaimWithinCohort,
			BorrowWithinCohort:  &borrowWithinCohort{Policy: t.Preemption.BorrowWithinCohort},
		},
		ResourceGroups: groups,
	}
	spec.FairSharing = fairSharing(p.FairShare)
	if t.AdmissionFairSharing != nil {
		spec.AdmissionScope = &admissionScope{AdmissionMode: "UsageBasedAdmissionFairSharing"}
	}
	spec.AdmissionChecksStrategy = provisioningChecks(m, t, p)
	spec.AdmissionChecksStrategy = multiKueueCheck(m, t, p, spec.AdmissionChecksStrategy)
	return Object{
		Dir: "queues", Source: []string{"profiles", p.Name},
		Body: &clusterQueue{
			TypeMeta: metav1.TypeMeta{APIVersion: kueueAPIVersion, Kind: "ClusterQueue"},
			ObjectMeta: metav1.ObjectMeta{Name: ClusterQueueName(t, p), Labels: managedLabels(m.Cluster.Name),
				Annotations: map[string]string{"accelc.io/team": t.DisplayName, "accelc.io/profile": p.Name}},
			Spec: spec,
		},
	}
}

// hostShare is the CPU (millicores) and memory (bytes) that come with a
// team's accelerator quotas: per quota, its devices times what the
// inventory's nodes of that type (or pool) have per allocatable device.
// Whole-GPU quotas count the type's nodes outside pools. For key, a quota
// key, that quota's; for DefaultFlavor, those of the quotas whose flavor
// has no topology (a flavor with one holds its own).
func hostShare(pl *compile.Placed, t *compile.Team, key string) (cpuMilli, memBytes int64) {
	m := pl.Model
	for _, id := range slices.Sorted(maps.Keys(t.Quota)) {
		if _, topo := m.KeyTopology(id); (key == DefaultFlavor) != (topo == nil) || (key != DefaultFlavor && key != id) {
			continue
		}
		var devices, cpu, mem int64
		for _, n := range pl.FlavorNodes(id) {
			if !n.Available() || n.Allocatable == 0 {
				continue
			}
			c, b := n.Resources()
			devices += int64(n.Allocatable)
			cpu += c
			mem += b
		}
		if devices == 0 {
			continue
		}
		q := int64(t.Quota[id])
		cpuMilli += cpu * q / devices
		memBytes += mem * q / devices
	}
	// Whole cores and GiB, rounded down: quotas read as people write them.
	return cpuMilli / 1000 * 1000, memBytes / (1 << 30) * (1 << 30)
}

// sameToleration compares two tolerations by value.
func sameToleration(a, b compile.Toleration) bool {
	return a.Key == b.Key && a.Operator == b.Operator && a.Value == b.Value && a.Effect == b.Effect &&
		(a.TolerationSeconds == nil) == (b.TolerationSeconds == nil) && (a.TolerationSeconds == nil || *a.TolerationSeconds == *b.TolerationSeconds)
}

// sortedTolerations orders tolerations by key, value and effect, so a
// flavor renders the same whatever order its profiles come in.
func sortedTolerations(tols []compile.Toleration) []compile.Toleration {
	return slices.SortedFunc(slices.Values(tols), func(a, b compile.Toleration) int {
		return cmp.Or(cmp.Compare(a.Key, b.Key), cmp.Compare(a.Operator, b.Operator), cmp.Compare(a.Value, b.Value), cmp.Compare(a.Effect, b.Effect))
	})
}

func sortedSet(set map[string]bool) []string {
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// fairSharing is a team's or cohort's fairSharing; nil when it sets no
// weight (Kueue's default, 1).
func fairSharing(f *compile.FairShare) *fairSharingSpec {
	if f == nil {
		return nil
	}
	return &fairSharingSpec{Weight: textQ(f.WeightString())}
}

// declaredCohorts are the cohorts of cluster.cohorts: Kueue Cohorts with
// no quota of their own, under their parent, with their fair-share
// weight. They nest the teams' Cohorts as the organisation does
// (department → team).
func declaredCohorts(m *compile.Model) []Object {
	var out []Object
	for _, name := range slices.Sorted(maps.Keys(m.Cluster.Cohorts)) {
		c := m.Cluster.Cohorts[name]
		out = append(out, Object{
			Dir: "queues", Source: []string{"cluster", "cohorts", name},
			Body: &cohort{
				TypeMeta:   metav1.TypeMeta{APIVersion: kueueAPIVersion, Kind: "Cohort"},
				ObjectMeta: objectMeta(m.Cluster.Name, "", name),
				Spec:       cohortSpec{ParentName: c.Parent, FairSharing: fairSharing(c.FairShare)},
			},
		})
	}
	return out
}

// topologies are Kueue's Topologies, one per accelerator type with a
// cluster.topology, named after the type: its flavors' topologyName.
func topologies(m *compile.Model) []Object {
	var out []Object
	for _, id := range slices.Sorted(maps.Keys(m.Cluster.Topology)) {
		var levels []topologyLevel
		for _, l := range m.Cluster.Topology[id].Levels {
			levels = append(levels, topologyLevel{NodeLabel: l.NodeLabel})
		}
		out = append(out, Object{
			Dir: "queues", Source: []string{"cluster", "topology", id},
			Body: &topology{
				TypeMeta:   metav1.TypeMeta{APIVersion: kueueAPIVersion, Kind: "Topology"},
				ObjectMeta: objectMeta(m.Cluster.Name, "", id),
				Spec:       topologySpec{Levels: levels},
			},
		})
	}
	return out
}
