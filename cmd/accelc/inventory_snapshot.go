package main

import (
	"bytes"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/accelc/accelc/pkg/accelc"
	"github.com/accelc/accelc/pkg/workloads"
)

func newInventorySnapshotCmd(stdout, stderr io.Writer) *cobra.Command {
	var (
		inv    inventoryFlags
		out    string
		pods   bool
		wls    bool
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

--workloads adds what the cluster runs, for ` + "`accelc audit`" + ` in CI without cluster
access: its pods, every workload kind accelc judges (Deployments,
ReplicaSets, Jobs, Notebooks, …) and ResourceClaims, read-only, without
environment values, commands, arguments or image pull secrets. With
--inventory FILE it keeps the file's own.

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
			if wls {
				var set *workloads.Set
				if src.Live {
					set, err = workloads.ReadLive(cmd.Context(), src.LiveOptions)
				} else {
					set, err = workloads.ReadFile(src.File)
				}
				if err != nil {
					return libraryErr(outside(src.Live, err))
				}
				for _, w := range set.Warnings {
					fmt.Fprintf(stderr, "warning: --live: %s\n", w)
				}
				for _, o := range set.Objects {
					snap.Workloads = append(snap.Workloads, o.Object)
				}
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
			what := fmt.Sprintf("%d nodes", len(snap.Nodes))
			if len(snap.Slices) > 0 {
				what += fmt.Sprintf(", %d ResourceSlices", len(snap.Slices))
			}
			if wls {
				what += fmt.Sprintf(", %d workload objects", len(snap.Workloads))
			}
			fmt.Fprintf(stderr, "wrote %s: %s\n", out, what)
			return nil
		},
	}
	inv.bind(cmd, false)
	cmd.Flags().StringVarP(&out, "output", "o", "", "file to write (default: standard output)")
	cmd.Flags().BoolVar(&pods, "pods", true, "with --live, count the accelerators pods use on each node")
	cmd.Flags().BoolVar(&wls, "workloads", false, "also write what the cluster runs (pods, workloads, ResourceClaims, trimmed), for `accelc audit`")
	cmd.Flags().StringSliceVar(&merges, "merge", nil, "lay these files' nodes over the snapshot (NVML reports from `accelc inventory nvml`, or node lists): their labels win, and capacity is filled in")
	return cmd
}

// outside marks a live read's failure as an outside system's (exit 3).
func outside(live bool, err error) error {
	if live {
		return &accelc.OutsideError{Err: err}
	}
	return err
}
