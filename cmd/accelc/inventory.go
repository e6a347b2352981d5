package main

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/accelc/accelc/pkg/catalog"
	"github.com/accelc/accelc/pkg/compile"
	"github.com/accelc/accelc/pkg/inventory"
)

func newInventoryCmd(stdout, stderr io.Writer) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "inventory",
		Short: "Inspect a cluster's accelerator nodes",
		Args:  noArgs,
	}
	cmd.AddCommand(newInventoryShowCmd(stdout, stderr))
	cmd.AddCommand(newInventoryNVMLCmd(stdout, stderr))
	cmd.AddCommand(newInventorySnapshotCmd(stdout, stderr))
	cmd.AddCommand(newInventorySuggestCmd(stdout, stderr))
	return cmd
}

func newInventoryShowCmd(stdout, stderr io.Writer) *cobra.Command {
	var (
		src                             inventorySource
		groupBy, output, config, sortBy string
		filter                          inventory.Filter
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

--type, --sharing and --status select nodes (comma-separated values);
--sort-by orders them. Nodes of unknown or mixed type are listed at the
end with what to do about them.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if !slices.Contains(inventory.Formats, output) {
				return usageErr("-o %s: choose one of %s", output, strings.Join(inventory.Formats, ", "))
			}
			if groupBy != "" && groupBy != "type" {
				return usageErr("--group-by %s: only \"type\" is supported", groupBy)
			}
			if !slices.Contains(inventory.SortKeys, sortBy) {
				return usageErr("--sort-by %s: choose one of %s", sortBy, strings.Join(inventory.SortKeys, ", "))
			}
			var cat *catalog.Catalog
			var m *compile.Model
			opts := inventory.Options{}
			if config != "" {
				var err error
				if m, err = loadModel(cmd.Context(), config); err != nil {
					return err
				}
				cat, opts.Pins = m.Catalog, m.Pins
			} else {
				var err error
				if cat, err = catalog.Builtin(); err != nil {
					return err
				}
			}
			inv, err := src.load(cmd.Context(), firstNonEmpty(config, "."), cat, opts, stderr)
			if err != nil {
				return err
			}
			if inv == nil {
				return usageErr("no inventory: give --inventory FILE (the output of `kubectl get nodes -o json`) or --live")
			}
			inv = inv.Select(filter)
			if err := inv.Sort(sortBy); err != nil {
				return usageErr("%v", err)
			}
			if err := inv.WriteView(stdout, inventory.ViewOptions{Format: inventory.Format(output), GroupByType: groupBy == "type"}); err != nil {
				return err
			}
			if m != nil && output == "table" && len(m.NodePools) > 0 {
				return writePools(stdout, m.PoolSummaries(inv))
			}
			return nil
		},
	}
	src.bind(cmd, true)
	f := cmd.Flags()
	f.StringVar(&groupBy, "group-by", "", "group nodes: type")
	f.StringVarP(&output, "output", "o", "table", "output format: "+strings.Join(inventory.Formats, "|"))
	f.StringVar(&config, "config", "", "cluster directory whose catalog and pins to apply")
	f.StringVar(&sortBy, "sort-by", "name", "order nodes by "+strings.Join(inventory.SortKeys, "|"))
	f.StringSliceVar(&filter.Types, "type", nil, "only nodes of these types (class ids, unknown, mixed)")
	f.StringSliceVar(&filter.Sharing, "sharing", nil, "only nodes shared this way: exclusive, time-sliced, mps, mig-single, mig-mixed")
	f.StringSliceVar(&filter.Status, "status", nil, "only nodes in this status: Ready, NotReady, Unschedulable, Unknown")
	return cmd
}

func newInventorySnapshotCmd(stdout, stderr io.Writer) *cobra.Command {
	var (
		src    inventorySource
		out    string
		pods   bool
		merges []string
	)
	cmd := &cobra.Command{
		Use:   "snapshot",
		Short: "Write a node snapshot to commit beside the cluster's CUE",
		Long: `snapshot reads the nodes of a live cluster (--live; kubeconfig as kubectl
finds it, or --kubeconfig/--context) and writes them as a node list that
render, vet and inventory show read. It keeps only what classification
needs: names, labels, capacity, allocatable, the Ready condition and
whether the node is cordoned; never addresses, machine ids or images. It
records when it was taken and from which cluster, and the accelerators
that pods use on each node (unless --pods=false).

With --inventory FILE instead of --live, it rewrites an existing snapshot
(` + "`kubectl get nodes -o json`" + ` output) the same way, dropping what
should not be committed.

--merge REPORT,… lays NVML reports (` + "`accelc inventory nvml`" + ` run on nodes
the GPU Operator does not label) over the nodes of the same name, so those
nodes are classified by what NVML saw.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if !src.live && src.file == "" {
				return usageErr("give --live to read the cluster, or --inventory FILE to rewrite a snapshot")
			}
			snap, where, err := src.fetch(cmd.Context(), src.file, pods, stderr)
			if err != nil {
				return err
			}
			for _, p := range snap.Problems {
				fmt.Fprintf(stderr, "warning: %s: %s; the node is left out\n", where, p)
			}
			for _, path := range merges {
				other, err := inventory.ReadSnapshot(path)
				if err != nil {
					return &exitError{exitInput, err}
				}
				for _, p := range other.Problems {
					fmt.Fprintf(stderr, "warning: %s: %s; the node is left out\n", path, p)
				}
				merged, added := snap.Merge(other)
				fmt.Fprintf(stderr, "merged %s: %d nodes updated, %d added\n", path, len(merged), len(added))
			}
			var buf bytes.Buffer
			if err := snap.Write(&buf); err != nil {
				return err
			}
			if out == "" || out == "-" {
				_, err := stdout.Write(buf.Bytes())
				return err
			}
			if err := writeFileAtomic(out, buf.Bytes()); err != nil {
				return err
			}
			fmt.Fprintf(stderr, "wrote %s: %d nodes\n", out, len(snap.Nodes))
			return nil
		},
	}
	src.bind(cmd, false)
	cmd.Flags().StringVarP(&out, "output", "o", "", "file to write (default: standard output)")
	cmd.Flags().BoolVar(&pods, "pods", true, "with --live, count the accelerators pods use on each node")
	cmd.Flags().StringSliceVar(&merges, "merge", nil, "lay these files' nodes over the snapshot (NVML reports from `accelc inventory nvml`, or node lists): their labels win, and capacity is filled in")
	return cmd
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
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
