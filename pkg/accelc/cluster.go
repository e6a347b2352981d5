package accelc

// Reading a cluster: its configuration compiled, its inventory read, and
// the stages (check, render) run as asked.

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

// Stages are what Cluster does after compiling the CUE, as a set: what
// a caller wants of the cluster, not which steps it skips. Zero compiles
// the configuration alone (what accelc serve needs, which watches the
// nodes itself).
type Stages uint8

const (
	// ReadNodes reads the inventory (Options.Inventory, else the
	// directory's inventory.json) and classifies it with the cluster's
	// catalog and pins.
	ReadNodes Stages = 1 << iota
	// CheckConfig checks the configuration, with ReadNodes, against the
	// nodes read; without, what it can of the configuration alone.
	CheckConfig
	// RenderTree renders and validates the cluster's tree into
	// Result.Tree (from an empty inventory without ReadNodes).
	RenderTree
	// CheckSelectors checks cluster.dra.classes' CEL selectors in
	// Kubernetes' DRA environment, which takes accelc-policytest beside
	// accelc (status, which reports drift, leaves it to vet).
	CheckSelectors

	// Checked is a configuration checked against its nodes: what catalog,
	// cost, recommend and estimate read.
	Checked = ReadNodes | CheckConfig | CheckSelectors
	// Rendered is a checked configuration and its tree: what vet, render,
	// test, diff and audit need.
	Rendered = Checked | RenderTree
)

// Has says whether every stage of t is in s.
func (s Stages) Has(t Stages) bool { return s&t == t }

// Options say how to load a cluster.
type Options struct {
	// Limits bound the CUE evaluation; zero fields take compile's defaults.
	Limits compile.Limits
	// Inventory says where the nodes come from, with ReadNodes.
	Inventory Source
	// Stages say what to do beyond compiling; zero compiles only.
	Stages Stages
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
	// Tree is the rendered tree, with Stages RenderTree.
	Tree render.Tree
	// ContentDigest is Tree's content digest (artifact.ContentDigest),
	// computed as it was rendered: what render records beside the tree
	// for push (render.WriteOptions.ContentDigest) and status compares
	// with the cluster's.
	ContentDigest string
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
// checks the two against each other and, with RenderTree, renders the
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
	if opts.Stages.Has(CheckSelectors) {
		if err := checkSelectors(ctx, m); err != nil {
			return nil, err
		}
	}
	res := &Result{Dir: dir, Model: m, Inventory: &inventory.Inventory{}}
	if opts.Stages.Has(ReadNodes) {
		read, err := opts.Inventory.Load(ctx, dir, m.Catalog, inventory.Options{Pins: m.Pins, TypeLabel: m.Cluster.TypeLabel(), NonAccelerator: m.Cluster.NonAccelerator})
		res.Diagnostics = read.Diagnostics
		if err != nil {
			return res, err
		}
		if read.Inventory != nil {
			res.Inventory, res.InventoryFrom = read.Inventory, read.From
		}
		res.Diagnostics = append(res.Diagnostics, ReadWorkerNodes(ctx, dir, m, opts.Limits)...)
	}
	if opts.Stages.Has(CheckConfig) {
		if err := res.check(); err != nil {
			return res, err
		}
	}
	if !opts.Stages.Has(RenderTree) {
		return res, nil
	}
	var prov render.Provenance
	if opts.Provenance != nil {
		prov = *opts.Provenance
		if prov.Revision == "" {
			prov.Revision = Checkout(dir).Revision
		}
	}
	res.Tree, res.ContentDigest, err = render.ClusterContent(m, res.Inventory, prov)
	return res, err
}

// checkSelectors checks the admins' DRA attribute classes in Kubernetes'
// own DRA CEL environment (in accelc-policytest).
func checkSelectors(ctx context.Context, m *compile.Model) error {
	sel := m.AttributeSelectors()
	if len(sel) == 0 {
		return nil
	}
	outcomes, err := policytest.CheckSelectors(ctx, sel, compile.SampleDevices(m.Catalog))
	if ee := (*policytest.EngineError)(nil); errors.As(err, &ee) {
		return &OutsideError{Err: fmt.Errorf("checking cluster.dra.classes' selectors in Kubernetes' DRA CEL environment: %w", err)}
	}
	if err != nil {
		return err
	}
	if diags := m.SelectorDiagnostics(outcomes); len(diags) > 0 {
		return compile.Errors(diags)
	}
	return nil
}

// check checks the configuration against the nodes read, or on its own
// where none were (compile.Model.CheckConfiguration): errors fail it,
// warnings join the diagnostics.
func (r *Result) check() error {
	var diags []compile.Diagnostic
	if r.HasInventory() {
		diags = r.Model.Check(r.Inventory)
	} else {
		diags = r.Model.CheckConfiguration()
	}
	var errs compile.Errors
	for _, d := range diags {
		if d.Severity == compile.Error {
			errs = append(errs, d)
			continue
		}
		r.Diagnostics = append(r.Diagnostics, d)
	}
	if len(errs) > 0 {
		return errs
	}
	return nil
}

// Catalog is the hardware catalog document of a loaded cluster: what the
// rendered accelc-hardware-catalog ConfigMap holds.
func (r *Result) Catalog() catalogdoc.Document {
	return render.Catalog(r.Model, r.Inventory)
}

// Nodes reads and classifies an inventory without a cluster directory,
// with the built-in catalog: what `accelc inventory show` does without
// --config. dir is where to look for inventory.json when src names no
// file. Read.Inventory is nil when there is none.
func Nodes(ctx context.Context, dir string, src Source) (*Read, error) {
	cat, err := catalog.Builtin()
	if err != nil {
		return &Read{}, err
	}
	return src.Load(ctx, dir, cat, inventory.Options{})
}

// EnforcedTree is the cluster's tree with the cluster and every team at
// deny (compile.Model.Enforced): what its admission fixtures are judged
// against, so that they hold at every stage of the rollout.
func (r *Result) EnforcedTree() (render.Tree, error) {
	return render.Cluster(r.Model.Enforced(), r.Inventory, render.Provenance{})
}
