package accelc

// A MultiKueue fleet: the workers' nodes read for their manager, and the
// manager's settings checked against each worker's.

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/accelc/accelc/pkg/catalog"
	"github.com/accelc/accelc/pkg/compile"
	"github.com/accelc/accelc/pkg/inventory"
)

// ReadWorkerNodes reads, for a MultiKueue manager in dir, each worker's
// nodes from the inventory snapshot in the worker's folder beside dir (a
// worker is named by its folder in the fleet), classified as the worker
// classifies them (workerReading), into m.Cluster.MultiKueue.WorkerNodes:
// the capacity the manager's queues dispatch to. What it cannot read it
// reports as warnings at the worker's entry; the fleet check
// (checkFleetMultiKueue) makes a missing worker an error.
func ReadWorkerNodes(ctx context.Context, dir string, m *compile.Model, limits compile.Limits) []compile.Diagnostic {
	if !m.IsMultiKueueManager() {
		return nil
	}
	mk := m.Cluster.MultiKueue
	mk.WorkerNodes = map[string]*inventory.Inventory{}
	var out []compile.Diagnostic
	for _, name := range slices.Sorted(maps.Keys(mk.Workers)) {
		wdir := filepath.Join(filepath.Dir(filepath.Clean(dir)), name)
		file := compile.DefaultInventory(wdir)
		if file == "" {
			out = append(out, compile.Diagnostic{Severity: compile.Warning, Path: m.WorkerPath(name), Msg: fmt.Sprintf(
				"no inventory snapshot in %s, the worker's folder beside the manager's: its nodes are not counted in the CPU and memory the manager's queues hold, nor checked against the profiles dispatched to it; put the worker's cluster folder, with its inventory.json, there", wdir)})
			continue
		}
		cat, opts, diag := workerReading(ctx, m, name, wdir, limits)
		if diag != nil {
			out = append(out, *diag)
		}
		inv, err := inventory.Load(file, cat, opts)
		if err != nil {
			out = append(out, compile.Diagnostic{Severity: compile.Warning, Path: m.WorkerPath(name), Msg: fmt.Sprintf("worker %s's inventory: %v", name, err)})
			continue
		}
		mk.WorkerNodes[name] = inv
	}
	return out
}

// workerReading is how the worker in wdir classifies its nodes: with its
// own catalog, its cluster.nodes pins and its type label, from its CUE.
// Where that does not compile (the fleet check reports why), the
// manager's catalog and type label stand in, without pins, with a
// warning.
func workerReading(ctx context.Context, m *compile.Model, name, wdir string, limits compile.Limits) (*catalog.Catalog, inventory.Options, *compile.Diagnostic) {
	w, err := compile.LoadContext(ctx, wdir, limits)
	if err != nil {
		return m.Catalog, inventory.Options{TypeLabel: m.Cluster.TypeLabel()}, &compile.Diagnostic{Severity: compile.Warning, Path: m.WorkerPath(name), Msg: fmt.Sprintf(
			"worker %s's configuration in %s does not compile, so its nodes are typed with the manager's catalog and without its pins: %v", name, wdir, firstLine(err))}
	}
	return w.Catalog, inventory.Options{Pins: w.Pins, TypeLabel: w.Cluster.TypeLabel()}, nil
}

// firstLine is an error's first line.
func firstLine(err error) string {
	line, _, _ := strings.Cut(err.Error(), "\n")
	return line
}

// checkFleetMultiKueue checks each MultiKueue manager of a loaded fleet
// against its workers' own configurations: every worker a cluster folder
// of the fleet that declares itself the manager's worker, with, for each
// team and profile dispatched to it, the team's namespaces and the
// profile's LocalQueue in each of them (MultiKueue creates a Job on the
// worker in the namespace and queue it has on the manager). Problems are
// errors at the manager's worker entry, set as the manager's Err.
func checkFleetMultiKueue(clusters []FleetCluster) {
	byDir := map[string]*FleetCluster{}
	for i := range clusters {
		byDir[filepath.Base(clusters[i].Dir)] = &clusters[i]
	}
	for i := range clusters {
		c := &clusters[i]
		if c.Err != nil || c.Result == nil || !c.Result.Model.IsMultiKueueManager() {
			continue
		}
		var errs compile.Errors
		m := c.Result.Model
		for _, name := range slices.Sorted(maps.Keys(m.Cluster.MultiKueue.Workers)) {
			errs = append(errs, checkWorker(m, c.Dir, name, byDir[name])...)
		}
		if len(errs) > 0 {
			c.Err = errs
		}
	}
}

func checkWorker(m *compile.Model, managerDir, name string, w *FleetCluster) []compile.Diagnostic {
	at := m.WorkerPath(name)
	fail := func(format string, args ...any) []compile.Diagnostic {
		return []compile.Diagnostic{{Path: at, Msg: fmt.Sprintf(format, args...)}}
	}
	if w == nil {
		return fail("no cluster folder %s in the fleet: a worker is named by its cluster folder, beside %s", name, filepath.Base(managerDir))
	}
	if w.Err != nil || w.Result == nil {
		return nil // its own error is reported with its folder
	}
	wm := w.Result.Model
	switch mk := wm.Cluster.MultiKueue; {
	case mk == nil || mk.Role != compile.MultiKueueWorker:
		return fail("cluster %s (%s) is not a MultiKueue worker: set its cluster.multikueue: {role: \"worker\", manager: %q}", wm.Cluster.Name, w.Dir, m.Cluster.Name)
	case mk.Manager != m.Cluster.Name:
		return fail("cluster %s (%s) is the worker of manager %s, not of %s: one manager dispatches to a worker", wm.Cluster.Name, w.Dir, mk.Manager, m.Cluster.Name)
	case wm.Cluster.Name != name:
		return fail("the cluster in folder %s is named %s: name the worker's folder and its cluster.name alike, as the MultiKueueCluster %s names both", w.Dir, wm.Cluster.Name, name)
	}
	var out []compile.Diagnostic
	for i := range m.Profiles {
		p := &m.Profiles[i]
		for _, t := range m.QueueTeams(p) {
			if !slices.Contains(m.DispatchWorkers(t, p), name) {
				continue
			}
			wp := wm.Profile(p.Name)
			var wt *compile.Team
			for j := range wm.Teams {
				if wm.Teams[j].Name == t.Name {
					wt = &wm.Teams[j]
				}
			}
			var missing []string
			if wp != nil && wt != nil && slices.Contains(wm.QueueTeams(wp), wt) {
				for _, ns := range t.Namespaces {
					if !slices.Contains(wt.Namespaces, ns) {
						missing = append(missing, ns)
					}
				}
			} else {
				missing = t.Namespaces
			}
			if len(missing) > 0 {
				out = append(out, compile.Diagnostic{Path: at, Msg: fmt.Sprintf(
					"worker %s has no LocalQueue %s in %s, where team %s's %s jobs are dispatched: MultiKueue creates each Job on the worker in its namespace and queue; give the worker team %s with those namespaces, a quota and the right to profile %s (share the teams and profiles between the fleet's clusters)",
					name, p.Name, strings.Join(missing, ", "), t.Name, p.Name, t.Name, p.Name)})
			}
		}
	}
	return out
}
