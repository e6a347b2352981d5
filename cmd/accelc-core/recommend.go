package main

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/accelc/accelc/internal/cli"
	"github.com/accelc/accelc/pkg/accelc"
	"github.com/accelc/accelc/pkg/estimate"
)

func newRecommendCmd(stdout, stderr io.Writer) *cobra.Command {
	var (
		inv    inventoryFlags
		output = cli.OutputFormats(cli.FormatText, cli.FormatJSON, cli.FormatYAML)
		asked  estimate.Asked
	)
	cmd := &cobra.Command{
		Use:   "recommend [CLUSTER_DIR]",
		Short: "Name the hardware profiles that meet a model's needs, best first",
		Long: `recommend judges every enabled profile's accelerator types against a
model's needs: memory per GPU, GPUs per replica, and optionally a
throughput objective (from performance measured for --model and recorded
in CUE) and a cost ceiling. It lists the profiles that qualify, best first
(the preferred architecture, then those with devices available now, then
measured throughput and cost), says why each qualifies or not, and names
the fallback when the preferred type has none available. With --team, only
the profiles and types the team's entitlements in CUE allow qualify. When
none qualifies it says what is needed and what exists, and exits 1.`,
		Example: `  accelc recommend examples/clusters/hetero-prod --min-memory 80GiB --prefer-arch Hopper --model llama-3-70b --gpus 4
  accelc recommend --min-memory 24GiB --max-cost 2/h -o json
  accelc recommend examples/clusters/gpu-pools --min-memory 20GB --team data-science`,
		Args:              cli.MaxArgs(1),
		ValidArgsFunction: completeClusterDir,
		RunE: func(cmd *cobra.Command, args []string) error {
			needs, err := asked.Needs()
			if ne := (*estimate.NeedError)(nil); errors.As(err, &ne) {
				return cli.UsageErr("--%s: %v", ne.Field, ne.Err)
			}
			res, err := loadCluster(cmd.Context(), dirArg(args), &inv, accelc.Options{Stages: accelc.Checked}, stderr)
			if err != nil {
				return err
			}
			if asked.Team != "" {
				if needs.Team, err = estimate.ForTeam(res.Model, asked.Team); err != nil {
					return cli.UsageErr("--team: %v", err)
				}
			}
			warnNoInventory(stderr, res, "every type shows 0 available")
			doc := res.Catalog()
			r := estimate.Recommend(&doc, needs)
			if output.Value() != cli.FormatText {
				if err := cli.WriteReport(stdout, output.Value(), r); err != nil {
					return err
				}
			} else {
				writeRecommendation(stdout, r)
			}
			if r.Best == nil {
				return cli.Exit(cli.ExitInput, fmt.Errorf("%s", r.Advice))
			}
			return nil
		},
	}
	inv.bind(cmd, true)
	output.Register(cmd)
	f := cmd.Flags()
	f.StringVar(&asked.MinMemory, "min-memory", "", "memory each GPU must have: 80GiB (binary) or 80GB (decimal, as the catalog gives it)")
	f.StringVar(&asked.PreferArch, "prefer-arch", "", "rank this architecture first: Hopper, Ampere, Blackwell…")
	f.IntVar(&asked.GPUs, "gpus", 1, "GPUs per replica")
	f.StringVar(&asked.Model, "model", "", "model name, for throughput measured in CUE (performance)")
	f.StringVar(&asked.MinThroughput, "min-throughput", "", "tokens per second one replica must reach: 100tok/s")
	f.StringVar(&asked.MaxCost, "max-cost", "", "most a replica's GPUs may cost an hour: 5/h")
	f.StringVar(&asked.Team, "team", "", "recommend only what this team may use (its profiles and accelerator types in CUE)")
	return cmd
}

func writeRecommendation(w io.Writer, r estimate.Recommendation) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "\tPROFILE\tTYPE\tAVAILABLE\tCOST/HOUR\tWHY")
	for _, c := range r.Choices {
		mark := "✗"
		if c.Qualifies {
			mark = "✓"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\n", mark, c.DisplayName, c.TypeName, c.Available, costCell(c.CostPerHour), strings.Join(c.Why, "; "))
	}
	_ = tw.Flush()
	if r.Best != nil { // otherwise the advice is the command's error
		fmt.Fprintf(w, "\nRecommendation: %s\n", r.Advice)
	}
}
