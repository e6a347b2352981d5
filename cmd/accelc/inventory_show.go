package main

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/accelc/accelc/pkg/accelc"
	"github.com/accelc/accelc/pkg/compile"
	"github.com/accelc/accelc/pkg/inventory"
	"github.com/accelc/accelc/pkg/render"
)

func newInventoryShowCmd(stdout, stderr io.Writer) *cobra.Command {
	var (
		inv     inventoryFlags
		output  = outputFormats(formatText, formatJSON, formatYAML, formatCSV)
		groupBy = oneOf("", "type")
		sortBy  = oneOf("name", inventory.SortKeys...)
		config  string
		filter  inventory.Filter
	)
	cmd := &cobra.Command{
		Use:   "show",
		Short: "Show every accelerator node with its detected type",
		Long: `show classifies the nodes of a snapshot (--inventory, else ./inventory.json)
or of a live cluster (--live) and prints one line per accelerator node and
a summary per type. With --config CLUSTER_DIR it uses that cluster's
catalog extensions and pins. A live read, or a snapshot taken with
` + "`accelc inventory snapshot --live`" + `, also counts the GPUs pods use, and the
summary says how many are available.

With --config, a table of the cluster's sharing pools and MIG configs
follows: per pool, what pods can request (MIG slices, or time-sliced and
MPS replicas, which are not whole GPUs) against the physical GPUs behind
them, counting nodes not yet reconfigured from the config.

Nodes whose ResourceSlices (Dynamic Resource Allocation: NVIDIA's and
AMD's DRA drivers) publish their GPUs are classified device by device, and
their slices win over their labels; a node with devices of two types is
shown and counted once per type.

--type, --sharing and --status select nodes (comma-separated values);
--sort-by orders them. Nodes of unknown or mixed type are listed at the
end with what to do about them.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			var (
				nodes *inventory.Inventory
				pools []compile.PoolSummary
				model *compile.Model
				all   *inventory.Inventory
			)
			if config != "" {
				res, err := loadCluster(cmd.Context(), config, &inv, accelc.Options{SkipCheck: true}, stderr)
				if err != nil {
					return err
				}
				if res.HasInventory() {
					nodes, pools, model, all = res.Inventory, res.Model.PoolSummaries(res.Inventory), res.Model, res.Inventory
				}
			} else {
				src, err := inv.source()
				if err != nil {
					return err
				}
				var diags []compile.Diagnostic
				nodes, _, diags, err = accelc.Nodes(cmd.Context(), ".", src)
				printDiagnostics(stderr, diags)
				if err != nil {
					return libraryErr(err)
				}
			}
			if nodes == nil {
				return usageErr("no inventory: give --inventory FILE (the output of `kubectl get nodes -o json`) or --live")
			}
			nodes = nodes.Select(filter)
			if err := nodes.Sort(sortBy.value); err != nil {
				return usageErr("%v", err)
			}
			format := inventory.Format(output.value)
			if output.value == formatText {
				format = "table"
			}
			if err := nodes.WriteView(stdout, inventory.ViewOptions{Format: format, GroupByType: groupBy.value == "type"}); err != nil {
				return err
			}
			if output.value == formatText && len(pools) > 0 {
				if err := writePools(stdout, pools); err != nil {
					return err
				}
			}
			// Where profiles schedule through Kueue: each profile's queue
			// and its teams' quota, used and left.
			if output.value == formatText && model != nil && model.UsesKueue() {
				doc := render.Catalog(model, all)
				return writeQueues(stdout, &doc)
			}
			return nil
		},
	}
	inv.bind(cmd, true)
	output.register(cmd, "output", "o", "output format")
	groupBy.register(cmd, "group-by", "", "group nodes")
	sortBy.register(cmd, "sort-by", "", "order nodes by")
	f := cmd.Flags()
	f.StringVar(&config, "config", "", "cluster directory whose catalog and pins to apply")
	_ = cmd.MarkFlagDirname("config")
	f.StringSliceVar(&filter.Types, "type", nil, "only nodes of these types (class ids, unknown, mixed)")
	f.StringSliceVar(&filter.Sharing, "sharing", nil, "only nodes shared this way: exclusive, time-sliced, mps, mig-single, mig-mixed, vgpu, partitioned")
	f.StringSliceVar(&filter.Status, "status", nil, "only nodes in this status: Ready, NotReady, Unschedulable, Unknown")
	_ = cmd.RegisterFlagCompletionFunc("type", completeTypes)
	return cmd
}

// writePools prints what each sharing pool and MIG config offers pods.
func writePools(w io.Writer, pools []compile.PoolSummary) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "\nPOOL\tSHARING\tTYPE\tNODES\tGPUS\tDEVICES\tAVAILABLE\tEACH GPU")
	var notes []string
	for _, p := range pools {
		each := fmt.Sprintf("%d replicas (not whole GPUs)", p.Replicas)
		if p.Sharing == compile.ShareMIG {
			each = p.Layout
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%d\t%d\t%s\n", p.Name, p.Sharing, p.AcceleratorType,
			p.Capacity.Nodes, p.Capacity.GPUs, p.Capacity.Devices, p.Capacity.Available, each)
		if p.Capacity.Pending > 0 {
			who := "the device plugin"
			if p.Sharing == compile.ShareMIG {
				who = "the MIG manager"
			}
			notes = append(notes, fmt.Sprintf("%s: %d of its devices are counted from the config: %s has yet to apply it on some nodes", p.Name, p.Capacity.Pending, who))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, n := range notes {
		fmt.Fprintln(w, n)
	}
	return nil
}
