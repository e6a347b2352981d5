package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"cuelang.org/go/cue/parser"
	"github.com/spf13/cobra"

	"github.com/accelc/accelc/pkg/accelc"
	"github.com/accelc/accelc/pkg/catalog"
	"github.com/accelc/accelc/pkg/compile"
	"github.com/accelc/accelc/pkg/inventory"
	"github.com/accelc/accelc/pkg/suggest"
)

func newInventorySuggestCmd(stdout, stderr io.Writer) *cobra.Command {
	var (
		inv    inventoryFlags
		config string
		out    string
		opts   suggest.Options
	)
	cmd := &cobra.Command{
		Use:   "suggest",
		Short: "Propose CUE hardware profiles from groups of nodes",
		Long: `suggest groups the accelerator nodes by type and sharing mode (MIG
profile, time-slicing) and proposes one hardware profile per group, as CUE
to review and commit beside the cluster's configuration: display name,
accelerator type, resource, GPU count limits from the nodes' capacity, the
tolerations every node of the group needs, and a node selector where the
same type is shared in more than one way.

--nodes or --type choose a selection; a selection that spans types gives
one multi-type profile, largest memory first. With --config CLUSTER_DIR
the file uses that cluster's CUE package and catalog and avoids its
profile names, so that ` + "`accelc vet`" + ` accepts it unchanged.`,
		Example: `  accelc inventory suggest --config clusters/prod -o clusters/prod/suggested.cue
  accelc inventory suggest --live --type nvidia-h200-141gb,nvidia-a100-80gb`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			var (
				nodes *inventory.Inventory
				cat   *catalog.Catalog
				where string
			)
			if config != "" {
				res, err := loadCluster(cmd.Context(), config, &inv, accelc.Options{SkipCheck: true}, stderr)
				if err != nil {
					return err
				}
				cat, where = res.Model.Catalog, res.InventoryFrom
				if res.HasInventory() {
					nodes = res.Inventory
				}
				opts.Taken = map[string]bool{}
				for _, p := range res.Model.Profiles {
					opts.Taken[p.Name] = true
				}
				if opts.Package, err = cuePackage(config); err != nil {
					return &exitError{exitInput, err}
				}
			} else {
				src, err := inv.source()
				if err != nil {
					return err
				}
				var diags []compile.Diagnostic
				nodes, where, diags, err = accelc.Nodes(cmd.Context(), ".", src)
				printDiagnostics(stderr, diags)
				if err != nil {
					return libraryErr(err)
				}
				if cat, err = catalog.Builtin(); err != nil {
					return err
				}
			}
			if nodes == nil {
				return usageErr("no inventory: give --inventory FILE, --live, or --config CLUSTER_DIR with an inventory.json")
			}
			opts.Source = filepath.ToSlash(where)
			res, err := suggest.Suggest(nodes, cat, opts)
			if err != nil {
				return usageErr("%v", err)
			}
			if len(res.Profiles) == 0 {
				return &exitError{exitInput, fmt.Errorf("no node of a known type to propose a profile for (%d left out: see `accelc inventory show`)", len(res.Skipped))}
			}
			data, err := res.CUE(opts)
			if err != nil {
				return err
			}
			if out == "" || out == "-" {
				_, err = stdout.Write(data)
				return err
			}
			if err := writeFileAtomic(out, data); err != nil {
				return err
			}
			fmt.Fprintf(stderr, "wrote %s: %d profiles\n", out, len(res.Profiles))
			return nil
		},
	}
	inv.bind(cmd, true)
	f := cmd.Flags()
	f.StringVar(&config, "config", "", "cluster directory: its package, catalog, pins and profile names")
	f.StringVarP(&out, "output", "o", "", "CUE file to write (default: standard output)")
	f.StringSliceVar(&opts.Nodes, "nodes", nil, "select these nodes (comma-separated names)")
	f.StringSliceVar(&opts.Types, "type", nil, "select the nodes of these types (class ids)")
	_ = cmd.MarkFlagDirname("config")
	_ = cmd.MarkFlagFilename("output", "cue")
	_ = cmd.RegisterFlagCompletionFunc("type", completeTypes)
	_ = cmd.RegisterFlagCompletionFunc("nodes", completeNodes)
	return cmd
}

// cuePackage reads the package name of a cluster directory's CUE files.
func cuePackage(dir string) (string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.cue"))
	if err != nil || len(files) == 0 {
		return "", fmt.Errorf("%s: no .cue files", dir)
	}
	data, err := os.ReadFile(files[0])
	if err != nil {
		return "", err
	}
	f, err := parser.ParseFile(files[0], data, parser.PackageClauseOnly)
	if err != nil {
		return "", err
	}
	if name := f.PackageName(); name != "" {
		return name, nil
	}
	return "", fmt.Errorf("%s: no package clause", files[0])
}
