package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/accelc/accelc/internal/cli"
	"github.com/accelc/accelc/pkg/accelc"
)

func newInitCmd(stdout, stderr io.Writer) *cobra.Command {
	var opts accelc.InitOptions
	cmd := &cobra.Command{
		Use:   "init DIR",
		Short: "Write a new cluster directory that vet, render and test accept",
		Long: `init writes a working cluster into DIR, a new or empty directory: cluster.cue
with one hardware profile of one accelerator type and one team entitled to
it, inventory.json with the cluster's nodes, and admission/cases.yaml with a
pod the policies admit and one they deny. Then

    accelc vet DIR && accelc render DIR && accelc test DIR

pass on what it wrote. The nodes are sample nodes of --type (default ` + accelc.DefaultInitType + `),
or with --live the nodes of the current kubeconfig context's cluster, read
as ` + "`accelc inventory snapshot --live`" + ` reads them; the type is then the most
common one among them unless --type names another. init never overwrites:
a DIR that holds anything is refused (exit 1). docs/first-cluster.md walks
through the files.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return cli.UsageErr("%s takes one argument, the directory to write, got %d", cmd.CommandPath(), len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := liveOnly(opts.Live, opts.LiveOptions); err != nil {
				return err
			}
			res, err := accelc.Init(cmd.Context(), args[0], opts)
			if err != nil {
				return libraryErr(err)
			}
			for _, f := range res.Files {
				fmt.Fprintf(stdout, "%s/%s\n", res.Dir, f)
			}
			fmt.Fprintf(stderr, "wrote cluster %s: profile %s on %s for team %s; %d of %d accelerator nodes (%s) of that type.\nNext: accelc vet %s && accelc render %s && accelc test %s\n",
				res.Name, res.Profile, res.Type, res.Team, res.Typed, res.Nodes, res.From, res.Dir, res.Dir, res.Dir)
			if res.Labelling != "" {
				fmt.Fprintf(stderr, "note: %s; init pinned %s in cluster.nodes.\n", res.Labelling, strings.Join(res.Pinned, ", "))
			}
			return nil
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&opts.Type, "type", "", "the accelerator type of the profile (`accelc types` lists them); default: the live nodes' most common, else "+accelc.DefaultInitType)
	fs.StringVar(&opts.Name, "name", "", "the cluster's name (default: DIR's name)")
	fs.StringVar(&opts.Team, "team", "", "the team, and its namespace (default: research)")
	fs.BoolVar(&opts.Live, "live", false, "write the nodes of the current kubeconfig context's cluster into inventory.json instead of sample nodes")
	bindKubeconfig(cmd, &opts.LiveOptions, " for --live")
	_ = cmd.RegisterFlagCompletionFunc("type", completeTypes)
	return cmd
}
