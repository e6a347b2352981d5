package accelc

// accelc suggest: hardware profiles proposed for a cluster's nodes, as
// CUE to review.

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"

	"cuelang.org/go/cue/parser"

	"github.com/accelc/accelc/pkg/catalog"
	"github.com/accelc/accelc/pkg/compile"
	"github.com/accelc/accelc/pkg/inventory"
	"github.com/accelc/accelc/pkg/suggest"
)

// SuggestOptions say which nodes to propose hardware profiles for.
type SuggestOptions struct {
	// Config is the cluster directory whose package, catalog, pins and
	// profile names the proposal uses; empty, the built-in catalog and
	// the nodes of Inventory (else ./inventory.json).
	Config string
	// Inventory is where the nodes come from.
	Inventory Source
	// Limits bound the CUE evaluation of Config.
	Limits compile.Limits
	// Select chooses the nodes (Nodes, Types); Package, Taken and Source
	// are filled in from Config and the inventory.
	Select suggest.Options
}

// Suggestion is a proposal of hardware profiles, as CUE to review.
type Suggestion struct {
	*suggest.Result
	// CUE is the file to commit beside the cluster's configuration.
	CUE []byte
	// Diagnostics are the warnings found reading the nodes.
	Diagnostics []compile.Diagnostic
}

// Suggest groups the selected nodes by type and sharing mode and
// proposes a hardware profile for each, in the cluster's CUE package and
// avoiding its profile names when opts.Config is given. No inventory, or
// a selection that matches nothing, is a UsageError; no node of a known
// type to propose for is the input's error. The Suggestion comes back
// with its warnings even with an error.
func Suggest(ctx context.Context, opts SuggestOptions) (*Suggestion, error) {
	out := &Suggestion{}
	in, err := opts.nodes(ctx, out)
	if err != nil {
		return out, err
	}
	sel := opts.Select
	sel.Source = filepath.ToSlash(in.from)
	if out.Result, err = suggest.Suggest(in.nodes, in.catalog, sel); err != nil {
		return out, usage(err)
	}
	if len(out.Profiles) == 0 {
		return out, fmt.Errorf("no node of a known type to propose a profile for (%d left out: see `accelc inventory show`)", len(out.Skipped))
	}
	out.CUE, err = out.Result.CUE(sel)
	return out, err
}

// suggestInput is the nodes to propose for, the catalog that judges
// them, and where they came from.
type suggestInput struct {
	nodes   *inventory.Inventory
	catalog *catalog.Catalog
	from    string
}

var errNoInventory = errors.New("no inventory: give --inventory FILE, --live, or --config CLUSTER_DIR with an inventory.json")

// nodes reads the nodes and the catalog to judge them by, with the
// cluster's package and profile names in o.Select where there is one.
func (o *SuggestOptions) nodes(ctx context.Context, out *Suggestion) (suggestInput, error) {
	if o.Config == "" {
		read, err := Nodes(ctx, ".", o.Inventory)
		out.Diagnostics = read.Diagnostics
		if err == nil && read.Inventory == nil {
			err = usage(errNoInventory)
		}
		if err != nil {
			return suggestInput{}, err
		}
		cat, err := catalog.Builtin()
		return suggestInput{read.Inventory, cat, read.From}, err
	}
	res, err := Cluster(ctx, o.Config, Options{Limits: o.Limits, Inventory: o.Inventory, Stages: ReadNodes})
	if res != nil {
		out.Diagnostics = res.Diagnostics
	}
	if err != nil {
		return suggestInput{}, err
	}
	if !res.HasInventory() {
		return suggestInput{}, usage(errNoInventory)
	}
	o.Select.Taken = map[string]bool{}
	for _, p := range res.Model.Profiles {
		o.Select.Taken[p.Name] = true
	}
	o.Select.Pools = map[string]suggest.Pool{}
	pl := res.Model.Place(res.Inventory)
	for i := range res.Inventory.Nodes {
		n := &res.Inventory.Nodes[i]
		if pool := pl.NodePool(n); pool != nil {
			o.Select.Pools[n.Name] = suggest.Pool{Name: pool.Name, MIG: pool.Sharing == compile.ShareMIG}
		}
	}
	if o.Select.Package, err = CUEPackage(os.DirFS(o.Config)); err != nil {
		return suggestInput{}, fmt.Errorf("%s: %w", o.Config, err)
	}
	return suggestInput{res.Inventory, res.Model.Catalog, res.InventoryFrom}, nil
}

// CUEPackage reads the package name of the first .cue file at the top of
// fsys (a cluster directory).
func CUEPackage(fsys fs.FS) (string, error) {
	files, err := fs.Glob(fsys, "*.cue")
	if err != nil || len(files) == 0 {
		return "", errors.New("no .cue files")
	}
	data, err := fs.ReadFile(fsys, files[0])
	if err != nil {
		return "", err
	}
	f, err := parser.ParseFile(path.Base(files[0]), data, parser.PackageClauseOnly)
	if err != nil {
		return "", err
	}
	if name := f.PackageName(); name != "" {
		return name, nil
	}
	return "", fmt.Errorf("%s: no package clause", files[0])
}
