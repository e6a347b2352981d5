package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/accelc/accelc/pkg/accelc"
	"github.com/accelc/accelc/pkg/estimate"
)

func newRecommendCmd(stdout, stderr io.Writer) *cobra.Command {
	var (
		inv                       inventoryFlags
		output                    = outputFormats(formatText, formatJSON, formatYAML)
		minMemory, throughput, mc string
		team                      string
		needs                     estimate.Needs
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
		Args:              maxArgs(1),
		ValidArgsFunction: completeClusterDir,
		RunE: func(cmd *cobra.Command, args []string) error {
			var err error
			if minMemory != "" {
				if needs.MinMemory, err = estimate.ParseSize(minMemory); err != nil {
					return usageErr("--min-memory: %v", err)
				}
			}
			if needs.MinTokensPerSecond, err = parseRate(throughput, "tok/s"); err != nil {
				return usageErr("--min-throughput: %v", err)
			}
			if needs.MaxCostPerHour, err = parseRate(strings.TrimPrefix(mc, "$"), "/h"); err != nil {
				return usageErr("--max-cost: %v", err)
			}
			if needs.MinTokensPerSecond > 0 && needs.Model == "" {
				return usageErr("--min-throughput needs --model: throughput is what a model measured on a type")
			}
			res, err := loadCluster(cmd.Context(), dirArg(args), &inv, accelc.Options{}, stderr)
			if err != nil {
				return err
			}
			if team != "" {
				if needs.Team, err = estimate.ForTeam(res.Model, team); err != nil {
					return usageErr("--team: %v", err)
				}
			}
			warnNoInventory(stderr, res, "every type shows 0 available")
			doc := res.Catalog()
			r := estimate.Recommend(&doc, needs)
			if output.value != formatText {
				if err := writeReport(stdout, output.value, r); err != nil {
					return err
				}
			} else {
				writeRecommendation(stdout, r)
			}
			if r.Best == nil {
				return &exitError{exitInput, fmt.Errorf("%s", r.Advice)}
			}
			return nil
		},
	}
	inv.bind(cmd, true)
	output.register(cmd, "output", "o", "output format")
	f := cmd.Flags()
	f.StringVar(&minMemory, "min-memory", "", "memory each GPU must have: 80GiB (binary) or 80GB (decimal, as the catalog gives it)")
	f.StringVar(&needs.PreferArch, "prefer-arch", "", "rank this architecture first: Hopper, Ampere, Blackwell…")
	f.IntVar(&needs.GPUs, "gpus", 1, "GPUs per replica")
	f.StringVar(&needs.Model, "model", "", "model name, for throughput measured in CUE (performance)")
	f.StringVar(&throughput, "min-throughput", "", "tokens per second one replica must reach: 100tok/s")
	f.StringVar(&mc, "max-cost", "", "most a replica's GPUs may cost an hour: 5/h")
	f.StringVar(&team, "team", "", "recommend only what this team may use (its profiles and accelerator types in CUE)")
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

// parseRate reads "100tok/s" or "5/h" (the unit may be left out).
func parseRate(s, unit string) (float64, error) {
	if s == "" {
		return 0, nil
	}
	v := strings.TrimSuffix(strings.TrimSpace(s), unit)
	n, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("%q: write a positive number, such as 100%s", s, unit)
	}
	return n, nil
}
