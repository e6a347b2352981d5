package accelc

// accelc inventory show: the classified nodes filtered and sorted.

import (
	"cmp"
	"context"
	"errors"

	"github.com/accelc/accelc/pkg/catalogdoc"
	"github.com/accelc/accelc/pkg/compile"
	"github.com/accelc/accelc/pkg/inventory"
)

// ViewOptions say which nodes `accelc inventory show` shows and how
// they are judged.
type ViewOptions struct {
	// Config is the cluster directory whose catalog and pins apply;
	// empty, the built-in catalog.
	Config string
	// Inventory is where the nodes come from (else ./inventory.json, or
	// Config's).
	Inventory Source
	// Limits bound the CUE evaluation of Config.
	Limits compile.Limits
	// Filter selects nodes; SortBy orders them (inventory.SortKeys).
	Filter inventory.Filter
	SortBy string
}

// NodeView is the classified nodes, selected and sorted, with what the
// cluster's configuration makes of them when there is one.
type NodeView struct {
	Nodes *inventory.Inventory
	// Pools are the cluster's sharing pools and MIG configs, with
	// Config.
	Pools []compile.PoolSummary
	// Queues is the catalog document of a cluster whose profiles queue
	// through Kueue (each profile's queue and its teams' quota, used and
	// left), with Config; nil otherwise.
	Queues *catalogdoc.Document
	// Diagnostics are the warnings found reading the nodes.
	Diagnostics []compile.Diagnostic
}

// ShowNodes reads and classifies the nodes, with the catalog and pins of
// opts.Config when given. No inventory, or an unknown sort key, is a
// UsageError. The view comes back with its warnings even with an error.
func ShowNodes(ctx context.Context, opts ViewOptions) (*NodeView, error) {
	v := &NodeView{}
	if opts.Config == "" {
		read, err := Nodes(ctx, ".", opts.Inventory)
		v.Diagnostics, v.Nodes = read.Diagnostics, read.Inventory
		if err != nil {
			return v, err
		}
	} else {
		res, err := Cluster(ctx, opts.Config, Options{Limits: opts.Limits, Inventory: opts.Inventory, Stages: ReadNodes})
		if res != nil {
			v.Diagnostics = res.Diagnostics
		}
		if err != nil {
			return v, err
		}
		if res.HasInventory() {
			v.Nodes, v.Pools = res.Inventory, res.Model.PoolSummaries(res.Inventory)
			if res.Model.UsesKueue() {
				doc := res.Catalog()
				v.Queues = &doc
			}
		}
	}
	if v.Nodes == nil {
		return v, usage(errors.New("no inventory: give --inventory FILE (the output of `kubectl get nodes -o json`) or --live"))
	}
	v.Nodes = v.Nodes.Select(opts.Filter)
	if err := v.Nodes.Sort(cmp.Or(opts.SortBy, "name")); err != nil {
		return v, usage(err)
	}
	return v, nil
}
