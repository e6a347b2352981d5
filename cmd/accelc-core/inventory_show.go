package main

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/accelc/accelc/internal/cli"
	"github.com/accelc/accelc/pkg/accelc"
	"github.com/accelc/accelc/pkg/compile"
	"github.com/accelc/accelc/pkg/inventory"
)

func newInventoryShowCmd(stdout, stderr io.Writer) *cobra.Command {
	var (
		inv     inventoryFlags
		output  = cli.OutputFormats(cli.FormatText, cli.FormatJSON, cli.FormatYAML, cli.FormatCSV)
		groupBy = cli.OneOf("", "type")
		sortBy  = cli.OneOf("name", inventory.SortKeys...)
		opts    accelc.ViewOptions
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
		Args: cli.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			src, err := inv.source()
			if err != nil {
				return err
			}
			opts.Inventory, opts.Limits, opts.SortBy = src, limitsOf(cmd.Context()), sortBy.Value()
			v, err := accelc.ShowNodes(cmd.Context(), opts)
			if err := printed(stderr, v.Diagnostics, err); err != nil {
				return err
			}
			if output.Value() == cli.FormatJSON || output.Value() == cli.FormatYAML {
				return cli.WriteReport(stdout, output.Value(), v.Nodes.View())
			}
			return writeNodeView(stdout, v, inventory.ViewOptions{Format: inventory.Format(output.Value()), GroupByType: groupBy.Value() == "type"})
		},
	}
	inv.bind(cmd, true)
	output.Register(cmd)
	groupBy.Register(cmd, "group-by", "", "group nodes")
	sortBy.Register(cmd, "sort-by", "", "order nodes by")
	f := cmd.Flags()
	f.StringVar(&opts.Config, "config", "", "cluster directory whose catalog and pins to apply")
	_ = cmd.MarkFlagDirname("config")
	f.StringSliceVar(&opts.Filter.Types, "type", nil, "only nodes of these types (class ids, unknown, mixed)")
	f.StringSliceVar(&opts.Filter.Sharing, "sharing", nil, "only nodes shared this way: exclusive, time-sliced, mps, mig-single, mig-mixed, vgpu, partitioned")
	f.StringSliceVar(&opts.Filter.Status, "status", nil, "only nodes in this status: Ready, NotReady, Unschedulable, Unknown")
	_ = cmd.RegisterFlagCompletionFunc("type", completeTypes)
	return cmd
}

// writeNodeView prints the node view as text (then, with --config, the
// sharing pools and the Kueue queues) or csv.
func writeNodeView(w io.Writer, v *accelc.NodeView, opts inventory.ViewOptions) error {
	if err := v.Nodes.WriteView(w, opts); err != nil {
		return err
	}
	if opts.Format != cli.FormatText {
		return nil
	}
	if len(v.Pools) > 0 {
		if err := writePools(w, v.Pools); err != nil {
			return err
		}
	}
	// Where profiles schedule through Kueue: each profile's queue and
	// its teams' quota, used and left.
	if v.Queues != nil {
		return writeQueues(w, v.Queues)
	}
	return nil
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
