package main

import (
	"bytes"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/accelc/accelc/internal/cli"
	"github.com/accelc/accelc/pkg/accelc"
)

func newInventorySnapshotCmd(stdout, stderr io.Writer) *cobra.Command {
	var (
		inv     inventoryFlags
		output  = cli.OutputFormats(cli.FormatJSON, cli.FormatYAML).OrPath("out-file")
		outFile string
		pods    bool
		opts    accelc.SnapshotOptions
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
nodes are classified by what NVML saw.

It writes the snapshot to --out-file, else standard output, as JSON (-o
yaml: YAML, which accelc reads as well).`,
		Example: `  accelc inventory snapshot --live --out-file clusters/prod/inventory.json
  accelc inventory snapshot --inventory nodes.json --merge reports/gpu-7.json -o yaml`,
		Args: cli.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := output.MovePath(stderr, &outFile); err != nil {
				return err
			}
			src, err := inv.source()
			if err != nil {
				return err
			}
			opts.Source, opts.SkipPods = src, !pods
			res, err := accelc.TakeSnapshot(cmd.Context(), opts)
			if err := printed(stderr, res.Diagnostics, err); err != nil {
				return err
			}
			for _, n := range res.Notes {
				fmt.Fprintln(stderr, n)
			}
			data, err := res.Data()
			if err != nil {
				return err
			}
			var buf bytes.Buffer
			if err := cli.WriteJSONAs(&buf, output.Value(), data); err != nil {
				return err
			}
			return emit(stdout, stderr, outFile, buf.Bytes(), res.Summary(opts.Workloads))
		},
	}
	inv.bind(cmd, false)
	output.Register(cmd)
	f := cmd.Flags()
	f.StringVar(&outFile, "out-file", "", "file to write (default: standard output)")
	_ = cmd.MarkFlagFilename("out-file", "json", "yaml", "yml")
	f.BoolVar(&pods, "pods", true, "with --live, count the accelerators pods use on each node")
	f.BoolVar(&opts.Workloads, "workloads", false, "also write what the cluster runs (pods, workloads, ResourceClaims, trimmed), for accelc audit")
	f.StringSliceVar(&opts.Merge, "merge", nil, "lay these files' nodes over the snapshot (NVML reports from accelc inventory nvml, or node lists): their labels win, and capacity is filled in")
	_ = cmd.MarkFlagFilename("merge", "json", "yaml", "yml")
	return cmd
}
