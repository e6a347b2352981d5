package main

import (
	"bytes"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/accelc/accelc/internal/cli"
	"github.com/accelc/accelc/pkg/inventory/nvml"
)

func newInventoryNVMLCmd(stdout, stderr io.Writer) *cobra.Command {
	var nodeName, outFile string
	format := cli.OneOf(string(nvml.FormatReport), nvml.Formats...)
	output := cli.OutputFormats(cli.FormatJSON, cli.FormatYAML).OrPath("out-file")
	cmd := &cobra.Command{
		Use:   "nvml",
		Short: "Report this GPU node's GPUs through NVML",
		Long: `nvml reads this machine's GPUs through NVML, the NVIDIA driver's management
library, and writes a node report as JSON: per GPU the product, memory, PCI
device id, architecture, MIG mode and MIG devices by profile, and NVLink
peers by GPU index; the driver and CUDA versions; and the Node that GPU
Feature Discovery and the device plugin would make of the node (labels and
capacity; MIG devices under the mixed strategy). Serial numbers, UUIDs and
PCI bus ids are never written.

--format report (the default) writes kind NVMLReport, with that Node under
"nodeObject". --format node writes the Node alone: a snapshot that
"accelc inventory show --inventory FILE" and "accelc render --inventory FILE"
read. To make one snapshot of several nodes' files:
  jq -s '{kind: "List", items: map(.nodeObject)}' reports/*.json   (report)
  jq -s '{kind: "List", items: .}' nodes/*.json                    (node)

Run it on the GPU node, as a Job or DaemonSet with the NVIDIA container
runtime, and give it the node's name from the downward API (env NODE_NAME
from spec.nodeName). It needs an accelc built with cgo ("make build-nvml")
and the NVIDIA driver; without either it exits 3. It writes to --out-file,
else standard output, as JSON (-o yaml: YAML).`,
		Args: cli.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := output.MovePath(stderr, &outFile); err != nil {
				return err
			}
			node, err := resolveNodeName(nodeName)
			if err != nil {
				return err
			}
			report, err := nvml.Local(node)
			if err != nil {
				return cli.Exit(cli.ExitOutside, err)
			}
			var doc, buf bytes.Buffer
			if err := report.Write(&doc, nvml.Format(format.Value())); err != nil {
				return err
			}
			if err := cli.WriteJSONAs(&buf, output.Value(), doc.Bytes()); err != nil {
				return err
			}
			return emit(stdout, stderr, outFile, buf.Bytes(), "")
		},
	}
	cmd.Flags().StringVar(&nodeName, "node-name", "", "Kubernetes node name (default $NODE_NAME, else the host name)")
	format.Register(cmd, "format", "", "which document: the node report, or the Node alone")
	output.Register(cmd)
	cmd.Flags().StringVar(&outFile, "out-file", "", "write the report to this file instead of stdout")
	_ = cmd.MarkFlagFilename("out-file", "json", "yaml", "yml")
	return cmd
}

// resolveNodeName picks the node name: the flag, else NODE_NAME (set
// from the downward API), else the host name.
func resolveNodeName(flag string) (string, error) {
	if flag != "" {
		return flag, nil
	}
	if env := os.Getenv("NODE_NAME"); env != "" {
		return env, nil
	}
	host, err := os.Hostname()
	if err != nil {
		return "", cli.UsageErr("no node name: give --node-name or set NODE_NAME (the host name is unreadable: %v)", err)
	}
	if host == "" {
		return "", cli.UsageErr("no node name: give --node-name or set NODE_NAME")
	}
	return host, nil
}
