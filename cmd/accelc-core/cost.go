package main

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/accelc/accelc/internal/cli"
	"github.com/accelc/accelc/pkg/accelc"
	"github.com/accelc/accelc/pkg/cost"
)

// costReport is cost's -o json/yaml document.
type costReport struct {
	Hours float64     `json:"hours"`
	Lines []cost.Line `json:"lines"`
}

func newCostCmd(stdout, stderr io.Writer) *cobra.Command {
	var (
		inv    inventoryFlags
		output = cli.OutputFormats(cli.FormatText, cli.FormatJSON, cli.FormatYAML, cli.FormatCSV)
		hours  float64
	)
	cmd := &cobra.Command{
		Use:   "cost [CLUSTER_DIR]",
		Short: "Chargeback: what each team holds of each accelerator type, and what it costs",
		Long: `cost attributes the accelerators pods hold (from --live, or a snapshot
taken with ` + "`accelc inventory snapshot --live`" + `) to teams by namespace,
per accelerator type, and prices them at the catalog's costPerHour over
--hours (default 730, a month): "Data Science: 24 × NVIDIA A100 80GB,
17,520 GPU-hours ($52,560.00)". Namespaces no team claims are listed as
"(no team)". The rendered PrometheusRule records the same figures over time.`,
		Args:              cli.MaxArgs(1),
		ValidArgsFunction: completeClusterDir,
		RunE: func(cmd *cobra.Command, args []string) error {
			if hours <= 0 {
				return cli.UsageErr("--hours %g: give a positive period", hours)
			}
			res, err := loadCluster(cmd.Context(), dirArg(args), &inv, accelc.Options{Stages: accelc.Checked}, stderr)
			if err != nil {
				return err
			}
			if !res.HasInventory() {
				return cli.UsageErr("no inventory: give --live, or --inventory FILE taken with `accelc inventory snapshot --live`")
			}
			lines, err := cost.Chargeback(res.Model, res.Inventory, hours)
			if errors.Is(err, cost.ErrNoUsage) {
				return cli.Exit(cli.ExitInput, err)
			} else if err != nil {
				return err
			}
			return writeCost(stdout, output.Value(), hours, lines)
		},
	}
	inv.bind(cmd, true)
	output.Register(cmd)
	cmd.Flags().Float64Var(&hours, "hours", 730, "the period to price, in hours (730: a month)")
	return cmd
}

// writeCost prints the chargeback lines as a table with the total (text),
// a csv, or the report.
func writeCost(w io.Writer, format string, hours float64, lines []cost.Line) error {
	switch format {
	case cli.FormatJSON, cli.FormatYAML:
		return cli.WriteReport(w, format, costReport{Hours: hours, Lines: lines})
	case cli.FormatCSV:
		cw := csv.NewWriter(w)
		_ = cw.Write([]string{"team", "acceleratorType", "devices", "gpus", "gpuHours", "costPerHour", "cost"})
		for _, l := range lines {
			_ = cw.Write([]string{l.Team, l.Type, strconv.Itoa(l.Devices), strconv.FormatFloat(l.GPUs, 'f', -1, 64), strconv.FormatFloat(l.GPUHours, 'f', 2, 64), optMoney(l.CostPerHour), optMoney(l.Cost)})
		}
		cw.Flush()
		return cw.Error()
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "TEAM\tACCELERATOR\tGPUS\tGPU-HOURS (%gh)\tCOST/HOUR\tCOST\tMONTHLY BUDGET\n", hours)
	total := 0.0
	for _, l := range lines {
		budget := "-"
		if l.Budget > 0 {
			budget = "$" + strconv.FormatFloat(l.Budget, 'f', 2, 64)
		}
		// Slices and replicas are shares of GPUs: "2.67".
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", l.DisplayName, l.TypeName, strconv.FormatFloat(math.Round(l.GPUs*100)/100, 'f', -1, 64), strconv.FormatFloat(l.GPUHours, 'f', 0, 64),
			costCell(l.CostPerHour), costCell(l.Cost), budget)
		if l.Cost != nil {
			total += *l.Cost
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nTotal: $%.2f over %g hours at the GPUs held now.\n", total, hours)
	return nil
}

func optMoney(v *float64) string {
	if v == nil {
		return ""
	}
	return strconv.FormatFloat(*v, 'f', 2, 64)
}
