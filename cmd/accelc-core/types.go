package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/accelc/accelc/internal/cli"
	"github.com/accelc/accelc/pkg/accelc"
)

func newTypesCmd(stdout io.Writer) *cobra.Command {
	var (
		output  = cli.OutputFormats(cli.FormatText, cli.FormatJSON, cli.FormatYAML)
		vendors []string
	)
	cmd := &cobra.Command{
		Use:   "types",
		Short: "List the built-in accelerator types: vendor, memory, family and how a node is recognised",
		Long: `types lists the accelerator classes built into accelc, the ids a profile's
acceleratorTypes and a team's name: each with its vendor, memory per
device, family (architecture), the resource its device plugin offers, the
node labels whose values name it and the PCI ids (vendor:device) that Node
Feature Discovery reports for it. A cluster may add types of its own under
accelerators (docs/configuration.md); docs/classification.md says in which
order the labels are trusted.`,
		Args: cli.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			types, err := accelc.Types(vendors...)
			if err != nil {
				return libraryErr(err)
			}
			if output.Value() != cli.FormatText {
				if types == nil {
					types = []accelc.TypeInfo{}
				}
				return cli.WriteReport(stdout, output.Value(), types)
			}
			return writeTypes(stdout, types)
		},
	}
	// Registered by hand, not through the helper other commands use, so
	// the flag reads the same whichever way -o is bound there.
	cmd.Flags().VarP(output, "output", "o", "output format: text|json|yaml")
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions([]string{cli.FormatText, cli.FormatJSON, cli.FormatYAML}, cobra.ShellCompDirectiveNoFileComp))
	cmd.Flags().StringSliceVar(&vendors, "vendor", nil, "only these vendors' types (as the vendor column names them: nvidia, amd, …)")
	return cmd
}

// writeTypes prints the types as a table, and how many there are.
func writeTypes(w io.Writer, types []accelc.TypeInfo) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TYPE\tVENDOR\tMEMORY\tFAMILY\tRESOURCE\tRECOGNISED BY")
	for _, t := range types {
		var by []string
		for _, l := range t.Labels {
			by = append(by, l.Key+"="+strings.Join(l.Values, "|"))
		}
		if len(t.PCI) > 0 {
			by = append(by, "pci "+strings.Join(t.PCI, ","))
		}
		fmt.Fprintf(tw, "%s\t%s\t%dGB\t%s\t%s\t%s\n", t.ID, t.Vendor, t.MemoryGB, t.Family, t.Resource, strings.Join(by, "; "))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\n%d types. A profile names them in acceleratorTypes; a cluster adds its own under accelerators.\n", len(types))
	return nil
}
