package main

import (
	"bytes"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/accelc/accelc/pkg/accelc"
)

func newInventorySnapshotCmd(stdout, stderr io.Writer) *cobra.Command {
	var (
		inv    inventoryFlags
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
that pods use on each node (unless --pods=false). Where the cluster serves
Dynamic Resource Allocation, it keeps the ResourceSlices of NVIDIA's and
AMD's DRA drivers (gpu.nvidia.com, gpu.amd.com), which classify each
device, without what identifies one: no uuid, parentUUID, PCI bus id,
PCIe root or other address or serial number.

With --inventory FILE instead of --live, it rewrites an existing snapshot
(` + "`kubectl get nodes -o json`" + ` or ` + "`kubectl get nodes,resourceslices -o json`" + `
output) the same way, dropping what should not be committed.

--merge REPORT,… lays NVML reports (` + "`accelc inventory nvml`" + ` run on nodes
the GPU Operator does not label) over the nodes of the same name, so those
nodes are classified by what NVML saw.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if !inv.src.Live && inv.src.File == "" {
				return usageErr("give --live to read the cluster, or --inventory FILE to rewrite a snapshot")
			}
			src, err := inv.source()
			if err != nil {
				return err
			}
			src.LiveOptions.SkipPods = !pods
			snap, where, diags, err := src.Snapshot(cmd.Context(), ".")
			printDiagnostics(stderr, diags)
			if err != nil {
				return libraryErr(err)
			}
			for _, p := range snap.Problems {
				fmt.Fprintf(stderr, "warning: %s: %s; %s\n", where, p, p.Effect())
			}
			for _, path := range merges {
				other, _, _, err := (&accelc.Source{File: path}).Snapshot(cmd.Context(), ".")
				if err != nil {
					return libraryErr(err)
				}
				for _, p := range other.Problems {
					fmt.Fprintf(stderr, "warning: %s: %s; %s\n", path, p, p.Effect())
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
			if len(snap.Slices) > 0 {
				fmt.Fprintf(stderr, "wrote %s: %d nodes, %d ResourceSlices\n", out, len(snap.Nodes), len(snap.Slices))
			} else {
				fmt.Fprintf(stderr, "wrote %s: %d nodes\n", out, len(snap.Nodes))
			}
			return nil
		},
	}
	inv.bind(cmd, false)
	cmd.Flags().StringVarP(&out, "output", "o", "", "file to write (default: standard output)")
	cmd.Flags().BoolVar(&pods, "pods", true, "with --live, count the accelerators pods use on each node")
	cmd.Flags().StringSliceVar(&merges, "merge", nil, "lay these files' nodes over the snapshot (NVML reports from `accelc inventory nvml`, or node lists): their labels win, and capacity is filled in")
	return cmd
}
