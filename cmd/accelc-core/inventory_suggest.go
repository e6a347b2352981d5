package main

import (
	"bytes"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/accelc/accelc/internal/cli"
	"github.com/accelc/accelc/pkg/accelc"
)

func newInventorySuggestCmd(stdout, stderr io.Writer) *cobra.Command {
	var (
		inv     inventoryFlags
		output  = cli.OutputFormats(cli.FormatText, cli.FormatJSON, cli.FormatYAML).OrPath("out-file")
		outFile string
		opts    accelc.SuggestOptions
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
profile names, so that ` + "`accelc vet`" + ` accepts it unchanged.

It writes the CUE to --out-file, else standard output; -o json or yaml
writes the proposal as a document instead.`,
		Example: `  accelc inventory suggest --config clusters/prod --out-file clusters/prod/suggested.cue
  accelc inventory suggest --live --type nvidia-h200-141gb,nvidia-a100-80gb`,
		Args: cli.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := output.MovePath(stderr, &outFile); err != nil {
				return err
			}
			src, err := inv.source()
			if err != nil {
				return err
			}
			opts.Inventory, opts.Limits = src, limitsOf(cmd.Context())
			res, err := accelc.Suggest(cmd.Context(), opts)
			if err := printed(stderr, res.Diagnostics, err); err != nil {
				return err
			}
			data := res.CUE
			if output.Value() != cli.FormatText {
				var buf bytes.Buffer
				if err := cli.WriteReport(&buf, output.Value(), res.Result); err != nil {
					return err
				}
				data = buf.Bytes()
			}
			return emit(stdout, stderr, outFile, data, fmt.Sprintf("%d profiles", len(res.Profiles)))
		},
	}
	inv.bind(cmd, true)
	output.Register(cmd)
	f := cmd.Flags()
	f.StringVar(&opts.Config, "config", "", "cluster directory: its package, catalog, pins and profile names")
	f.StringVar(&outFile, "out-file", "", "file to write (default: standard output)")
	f.StringSliceVar(&opts.Select.Nodes, "nodes", nil, "select these nodes (comma-separated names)")
	f.StringSliceVar(&opts.Select.Types, "type", nil, "select the nodes of these types (class ids)")
	_ = cmd.MarkFlagDirname("config")
	_ = cmd.MarkFlagFilename("out-file", "cue")
	_ = cmd.RegisterFlagCompletionFunc("type", completeTypes)
	_ = cmd.RegisterFlagCompletionFunc("nodes", completeNodes)
	return cmd
}
