package compile

// MultiKueue: a manager's workers, which queues dispatch to which, and
// the checks of the workers' settings and nodes.

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/accelc/accelc/pkg/inventory"
)

// MultiKueue roles.
const (
	MultiKueueManager = "manager"
	MultiKueueWorker  = "worker"
)

// Kueue's limits on a MultiKueueConfig (its CRD): at most this many
// clusters.
const MaxMultiKueueClusters = 20

// MultiKueue is a cluster's part in a MultiKueue fleet: the manager, whose
// queues hand workloads to workers, or a worker.
type MultiKueue struct {
	Role string `json:"role"`
	// Workers are the manager's workers by name: their cluster folder in
	// the fleet, and their cluster.name.
	Workers map[string]MultiKueueWorkerSpec `json:"workers,omitempty"`
	// Manager is, on a worker, the cluster that dispatches to it.
	Manager string `json:"manager,omitempty"`

	// WorkerNodes are, on a manager, each worker's nodes as its own
	// folder's inventory.json has them (pkg/accelc reads them): the
	// capacity the manager's queues dispatch to. Nil where they were not
	// read.
	WorkerNodes map[string]*inventory.Inventory `json:"-"`
}

// MultiKueueWorkerSpec is a worker as the manager's CUE declares it.
type MultiKueueWorkerSpec struct {
	// KubeconfigSecret is the Secret in Kueue's namespace on the manager
	// whose kubeconfig key holds the worker's kubeconfig: referenced by
	// the worker's MultiKueueCluster, never rendered.
	KubeconfigSecret string `json:"kubeconfigSecret"`
	// Profiles are the profiles whose workloads go to the worker; empty:
	// every profile the manager queues.
	Profiles []string `json:"profiles,omitempty"`
	// Teams, when set, are the only teams whose workloads go there.
	Teams []string `json:"teams,omitempty"`
}

// IsMultiKueueManager reports whether the cluster is a MultiKueue manager.
func (m *Model) IsMultiKueueManager() bool {
	return m.Cluster.MultiKueue != nil && m.Cluster.MultiKueue.Role == MultiKueueManager
}

// DispatchWorkers are, on a manager, the workers a team's workloads of a
// profile are dispatched to, sorted: those whose profiles (all when left
// out) hold the profile and whose teams (all when left out) hold the
// team. Nil when the queue is not dispatched (not a manager, a profile no
// worker takes, a profile Kueue does not queue for the team): its
// workloads run on the manager.
func (m *Model) DispatchWorkers(t *Team, p *Profile) []string {
	if !m.IsMultiKueueManager() || !slices.Contains(m.QueueTeams(p), t) {
		return nil
	}
	var out []string
	for _, name := range slices.Sorted(maps.Keys(m.Cluster.MultiKueue.Workers)) {
		w := m.Cluster.MultiKueue.Workers[name]
		if (len(w.Profiles) == 0 || slices.Contains(w.Profiles, p.Name)) && (len(w.Teams) == 0 || slices.Contains(w.Teams, t.Name)) {
			out = append(out, name)
		}
	}
	return out
}

// DispatchGroupName names the MultiKueueConfig and the AdmissionCheck of
// one set of workers (sorted): multikueue-<worker>[-<worker>…], a DNS
// label as Kueue requires of the check's parameters; past 63 characters,
// multikueue- and a hash of the set. vet refuses two sets of one name.
func DispatchGroupName(workers []string) string {
	name := "multikueue-" + strings.Join(workers, "-")
	if len(name) > validation.DNS1123LabelMaxLength {
		sum := sha256.Sum256([]byte(strings.Join(workers, ",")))
		name = "multikueue-" + hex.EncodeToString(sum[:8])
	}
	return name
}

// DispatchGroups are, on a manager, the distinct sets of workers its
// queues dispatch to, sorted by name: a MultiKueueConfig and an
// AdmissionCheck each.
func (m *Model) DispatchGroups() [][]string {
	groups := map[string][]string{}
	for i := range m.Profiles {
		p := &m.Profiles[i]
		for _, t := range m.QueueTeams(p) {
			if w := m.DispatchWorkers(t, p); len(w) > 0 {
				groups[strings.Join(w, ",")] = w
			}
		}
	}
	out := slices.Collect(maps.Values(groups))
	slices.SortFunc(out, func(a, b []string) int {
		return cmp.Or(cmp.Compare(DispatchGroupName(a), DispatchGroupName(b)), slices.Compare(a, b))
	})
	return out
}

// DispatchedKeys are, on a manager, the quota keys (types, pools) of the
// queues it dispatches to the worker: what the worker's nodes must have.
func (m *Model) DispatchedKeys(worker string) map[string]bool {
	keys := map[string]bool{}
	for i := range m.Profiles {
		p := &m.Profiles[i]
		for _, t := range m.QueueTeams(p) {
			if slices.Contains(m.DispatchWorkers(t, p), worker) {
				for _, id := range m.QueueFlavors(t, p) {
					keys[id] = true
				}
			}
		}
	}
	return keys
}

// WorkerPath is where the manager's CUE declares a worker.
func (m *Model) WorkerPath(worker string) Path {
	return m.root().Key("cluster").Key("multikueue").Key("workers").Key(worker)
}

// checkMultiKueue checks a cluster's multikueue on its own: a manager's
// workers name profiles the manager queues and teams it has, each worker
// set fits Kueue's MultiKueueConfig, and no cluster is its own worker or
// manager. That each worker has the profiles' types, teams and queues is
// checked against the worker's own folder (pkg/accelc).
func checkMultiKueue(m *Model) []Diagnostic {
	mk := m.Cluster.MultiKueue
	if mk == nil {
		return nil
	}
	at := m.root().Key("cluster").Key("multikueue")
	var out []Diagnostic
	if mk.Role == MultiKueueWorker {
		if mk.Manager == m.Cluster.Name {
			out = append(out, Diagnostic{Path: at.Key("manager"), Msg: fmt.Sprintf(
				"%s is this cluster: a worker's manager is the cluster whose multikueue.workers names it", mk.Manager)})
		}
		return out
	}
	if len(mk.Workers) == 0 {
		out = append(out, Diagnostic{Path: at.Key("workers"), Msg: "a manager with no workers dispatches nothing: name each worker cluster (its folder in the fleet) with its kubeconfigSecret, or drop multikueue"})
	}
	if !m.UsesKueue() {
		out = append(out, Diagnostic{Path: at.Key("role"), Msg: "a MultiKueue manager dispatches what its Kueue queues admit, and this cluster queues nothing: give its teams a quota (cluster.quotas \"kueue\")"})
		return out
	}
	for _, name := range slices.Sorted(maps.Keys(mk.Workers)) {
		w := mk.Workers[name]
		wp := at.Key("workers").Key(name)
		before := len(out) // this worker's own errors say why nothing goes to it
		if name == m.Cluster.Name {
			out = append(out, Diagnostic{Path: wp, Msg: fmt.Sprintf("%s is this cluster: a manager dispatches to other clusters of the fleet", name)})
		}
		for i, pn := range w.Profiles {
			p := m.Profile(pn)
			pp := wp.Key("profiles").Index(i)
			switch {
			case p == nil:
				out = append(out, Diagnostic{Path: pp, Msg: fmt.Sprintf("no profile %s (profiles: %s)", pn, strings.Join(profileNames(m), ", "))})
			case len(m.QueueTeams(p)) == 0:
				out = append(out, Diagnostic{Path: pp, Msg: fmt.Sprintf(
					"profile %s has no Kueue queue here (no team with a quota may use it, or it is disabled): MultiKueue dispatches only what the manager's queues admit", pn)})
			}
		}
		for i, tn := range w.Teams {
			t := m.team(tn)
			tp := wp.Key("teams").Index(i)
			switch {
			case t == nil:
				out = append(out, Diagnostic{Path: tp, Msg: fmt.Sprintf("no team %s", tn)})
			case len(t.Quota) == 0:
				out = append(out, Diagnostic{Path: tp, Msg: fmt.Sprintf("team %s has no quota, so no Kueue queue to dispatch from: give it one on the manager", tn)})
			}
		}
		if len(m.DispatchedKeys(name)) == 0 && len(out) == before {
			out = append(out, Diagnostic{Path: wp, Msg: fmt.Sprintf("no team's queue goes to %s: none of its teams may use its profiles", name)})
		}
	}
	seen := map[string][]string{}
	for _, g := range m.DispatchGroups() {
		name := DispatchGroupName(g)
		if len(g) > MaxMultiKueueClusters {
			out = append(out, Diagnostic{Path: at.Key("workers"), Msg: fmt.Sprintf(
				"one queue dispatches to %d workers (%s); Kueue's MultiKueueConfig takes at most %d: split them with the workers' profiles or teams", len(g), strings.Join(g, ", "), MaxMultiKueueClusters)})
		}
		if other, ok := seen[name]; ok {
			out = append(out, Diagnostic{Path: at.Key("workers"), Msg: fmt.Sprintf(
				"workers %s and workers %s would share the MultiKueueConfig %s (worker names joined by dashes): rename a worker", strings.Join(other, ", "), strings.Join(g, ", "), name)})
		}
		seen[name] = g
	}
	return out
}

// CheckWorkerNodes checks, on a manager whose WorkerNodes were read, that
// each worker has nodes of a type (or pool) of every queue dispatched to
// it: a worker without them would leave the workloads pending there while
// the manager holds their quota. Errors at the worker's profiles (or the
// worker, when it lists none).
func (m *Model) CheckWorkerNodes() []Diagnostic {
	if !m.IsMultiKueueManager() || m.Cluster.MultiKueue.WorkerNodes == nil {
		return nil
	}
	var out []Diagnostic
	for _, name := range slices.Sorted(maps.Keys(m.Cluster.MultiKueue.Workers)) {
		inv := m.Cluster.MultiKueue.WorkerNodes[name]
		if inv == nil {
			continue
		}
		have := map[string]int{}
		for i := range inv.Nodes {
			have[inv.Nodes[i].AcceleratorType] += inv.Nodes[i].Allocatable
		}
		w := m.Cluster.MultiKueue.Workers[name]
		for i := range m.Profiles {
			p := &m.Profiles[i]
			dispatched := slices.DeleteFunc(m.QueueTeams(p), func(t *Team) bool { return !slices.Contains(m.DispatchWorkers(t, p), name) })
			types := m.QueueTypes(p, dispatched...)
			if len(types) == 0 || slices.ContainsFunc(types, func(id string) bool { return have[id] > 0 }) {
				continue
			}
			at := m.WorkerPath(name)
			if j := slices.Index(w.Profiles, p.Name); j >= 0 {
				at = at.Key("profiles").Index(j)
			}
			out = append(out, Diagnostic{Path: at, Msg: fmt.Sprintf(
				"worker %s has no node of profile %s's types (%s) in its inventory (it has %s): the manager would hand it workloads that never run; dispatch %s to a worker that has them, or drop it from the worker's profiles",
				name, p.Name, strings.Join(types, ", "), orNone(slices.Sorted(maps.Keys(have))), p.Name)})
		}
	}
	return out
}

// MultiKueueNotes say, on a manager, where each team's workloads of each
// dispatched profile go; vet --explain prints them.
func (m *Model) MultiKueueNotes() []Diagnostic {
	if !m.IsMultiKueueManager() {
		return nil
	}
	var out []Diagnostic
	for i := range m.Teams {
		t := &m.Teams[i]
		for j := range m.Profiles {
			p := &m.Profiles[j]
			w := m.DispatchWorkers(t, p)
			if len(w) == 0 {
				continue
			}
			where := w[0]
			if len(w) > 1 {
				where = strings.Join(w[:len(w)-1], ", ") + " or " + w[len(w)-1] + ", whichever admits first"
			}
			out = append(out, Diagnostic{Severity: Note, Path: m.WorkerPath(w[0]), Msg: fmt.Sprintf(
				"%s's %s jobs are dispatched from %s to %s (ClusterQueue %s.%s, AdmissionCheck %s); they run there on %s",
				t.Name, p.Name, m.Cluster.Name, where, t.Name, p.Name, DispatchGroupName(w), strings.Join(m.QueueTypes(p, t), " or "))})
		}
	}
	return out
}

// FleetInventory is, on a manager whose workers' nodes were read, its own
// nodes and its workers': the capacity its queues hold quota of, whose
// CPU and memory per device its Cohorts hold beside the devices. inv
// itself elsewhere.
func (m *Model) FleetInventory(inv *inventory.Inventory) *inventory.Inventory {
	if !m.IsMultiKueueManager() || len(m.Cluster.MultiKueue.WorkerNodes) == 0 {
		return inv
	}
	out := &inventory.Inventory{Source: inv.Source, OtherNodes: inv.OtherNodes}
	out.Nodes = append(out.Nodes, inv.Nodes...)
	for _, name := range slices.Sorted(maps.Keys(m.Cluster.MultiKueue.WorkerNodes)) {
		w := m.Cluster.MultiKueue.WorkerNodes[name]
		out.Nodes = append(out.Nodes, w.Nodes...)
		out.OtherNodes += w.OtherNodes
	}
	return out
}
