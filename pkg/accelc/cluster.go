package accelc

import (
	"context"
	"errors"
	"fmt"

	"github.com/accelc/accelc/pkg/catalog"
	"github.com/accelc/accelc/pkg/catalogdoc"
	"github.com/accelc/accelc/pkg/compile"
	"github.com/accelc/accelc/pkg/inventory"
	"github.com/accelc/accelc/pkg/policytest"
	"github.com/accelc/accelc/pkg/render"
)

// Options say how to load a cluster.
type Options struct {
	// Limits bound the CUE evaluation; zero fields take compile's defaults.
	Limits compile.Limits
	// Inventory says where the nodes come from.
	Inventory Source
	// Render also renders and validates the cluster's tree into
	// Result.Tree.
	Render bool
	// SkipCheck leaves out checking the configuration against the
	// inventory, for commands that only look at the nodes through the
	// cluster's catalog and pins.
	SkipCheck bool
	// NoInventory reads no nodes at all (Inventory is ignored): for a
	// caller that watches them itself (accelc serve --live).
	NoInventory bool
	// SkipSelectorCheck leaves out checking cluster.dra.classes' CEL
	// selectors in Kubernetes' DRA environment (accelc-policytest), for a
	// caller that renders nothing from them (accelc serve, whose image
	// holds accelc alone; vet and render check them).
	SkipSelectorCheck bool
	// Provenance, when set, annotates every rendered object. An empty
	// Revision is read from the Git checkout the cluster directory is in
	// (Checkout); the Version is the caller's.
	Provenance *render.Provenance
}

// Result is a loaded cluster.
type Result struct {
	// Dir is the cluster directory as given.
	Dir   string
	Model *compile.Model
	// Inventory is the classified nodes, checked against the model. It is
	// empty, never nil, when there is no inventory (HasInventory).
	Inventory *inventory.Inventory
	// InventoryFrom names where the nodes came from, for messages: the
	// snapshot file, or "cluster NAME" for a live read; empty when there
	// was no inventory.
	InventoryFrom string
	// Tree is the rendered tree, with Options.Render.
	Tree render.Tree
	// Diagnostics are the warnings found on the way (nodes left out, a
	// stale snapshot, over-committed quotas), each once, in the order
	// found.
	Diagnostics []compile.Diagnostic
}

// HasInventory says whether nodes were read at all.
func (r *Result) HasInventory() bool { return r.InventoryFrom != "" }

// NodeTypes maps every node of a type the catalog knows to that type.
func (r *Result) NodeTypes() map[string]string {
	types := map[string]string{}
	for i := range r.Inventory.Nodes {
		n := &r.Inventory.Nodes[i]
		if _, ok := r.Model.Catalog.Get(n.AcceleratorType); ok {
			types[n.Name] = n.AcceleratorType
		}
	}
	return types
}

// Cluster loads the cluster in dir: it compiles the CUE under the limits,
// reads and classifies the inventory with the cluster's catalog and pins,
// checks the two against each other and, with Options.Render, renders the
// tree. A wrong configuration is compile.Errors listing every problem; a
// live cluster that cannot be read is an error IsOutside reports. Once the
// CUE has compiled, the Result comes back even with an error, so that the
// warnings found before it can be reported; only a nil error makes it
// whole.
func Cluster(ctx context.Context, dir string, opts Options) (*Result, error) {
	m, err := compile.LoadContext(ctx, dir, opts.Limits)
	if err != nil {
		return nil, err
	}
	// The admins' DRA attribute classes, in Kubernetes' own DRA CEL
	// environment (in accelc-policytest).
	if sel := m.AttributeSelectors(); len(sel) > 0 && !opts.SkipSelectorCheck {
		outcomes, err := policytest.CheckSelectors(ctx, sel, compile.SampleDevices(m.Catalog))
		if ee := (*policytest.EngineError)(nil); errors.As(err, &ee) {
			return nil, &OutsideError{fmt.Errorf("checking cluster.dra.classes' selectors in Kubernetes' DRA CEL environment: %w", err)}
		}
		if err != nil {
			return nil, err
		}
		if diags := m.SelectorDiagnostics(outcomes); len(diags) > 0 {
			return nil, compile.Errors(diags)
		}
	}
	res := &Result{Dir: dir, Model: m, Inventory: &inventory.Inventory{}}
	if opts.NoInventory {
		return res, nil
	}
	inv, from, diags, err := opts.Inventory.Load(ctx, dir, m.Catalog, inventory.Options{Pins: m.Pins, TypeLabel: m.Cluster.TypeLabel()})
	res.Diagnostics = diags
	if err != nil {
		return res, err
	}
	if inv != nil {
		res.Inventory, res.InventoryFrom = inv, from
	}
	res.Diagnostics = append(res.Diagnostics, readWorkerNodes(dir, m)...)
	if inv != nil && !opts.SkipCheck {
		var errs compile.Errors
		for _, d := range m.Check(inv) {
			if d.Severity == compile.Error {
				errs = append(errs, d)
				continue
			}
			res.Diagnostics = append(res.Diagnostics, d)
		}
		if len(errs) > 0 {
			return res, errs
		}
	}
	if !opts.Render {
		return res, nil
	}
	var prov render.Provenance
	if opts.Provenance != nil {
		prov = *opts.Provenance
		if prov.Revision == "" {
			prov.Revision = Checkout(dir).Revision
		}
	}
	res.Tree, err = render.Cluster(m, res.Inventory, prov)
	return res, err
}

// Catalog is the hardware catalog document of a loaded cluster: what the
// rendered accelc-hardware-catalog ConfigMap holds.
func (r *Result) Catalog() catalogdoc.Document {
	return render.Catalog(r.Model, r.Inventory)
}

// Nodes reads and classifies an inventory without a cluster directory,
// with the built-in catalog: what `accelc inventory show` does without
// --config. dir is where to look for inventory.json when src names no
// file.
func Nodes(ctx context.Context, dir string, src Source) (*inventory.Inventory, string, []compile.Diagnostic, error) {
	cat, err := catalog.Builtin()
	if err != nil {
		return nil, "", nil, err
	}
	return src.Load(ctx, dir, cat, inventory.Options{})
}

// OutsideError is a failure of a system outside the configuration: a live
// cluster that is unreachable or refuses the read, or accelc-policytest
// missing or of another build.
type OutsideError struct{ Err error }

func (e *OutsideError) Error() string { return e.Err.Error() }
func (e *OutsideError) Unwrap() error { return e.Err }

// IsOutside says whether err is a failure outside the configuration
// rather than a mistake in it.
func IsOutside(err error) bool {
	var o *OutsideError
	return errors.As(err, &o)
}

// EnforcedTree is the cluster's tree with the cluster and every team at
// deny (compile.Model.Enforced): what its admission fixtures are judged
// against, so that they hold at every stage of the rollout.
func (r *Result) EnforcedTree() (render.Tree, error) {
	return render.Cluster(r.Model.Enforced(), r.Inventory, render.Provenance{})
}
