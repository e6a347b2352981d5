package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/accelc/accelc/pkg/estimate"
	"github.com/accelc/accelc/pkg/inventory"
	"github.com/accelc/accelc/pkg/render"
)

// catalogOf compiles a cluster and its inventory into the catalog document
// every consumer reads.
func catalogOf(cmd *cobra.Command, dir string, src *inventorySource, stderr io.Writer) (*render.CatalogDocument, error) {
	m, inv, err := loadCluster(cmd.Context(), dir, src, stderr)
	if err != nil {
		return nil, err
	}
	if inv == nil {
		fmt.Fprintln(stderr, "warning: no inventory (give --inventory or --live, or put inventory.json in the cluster directory): every type shows 0 available")
		inv = &inventory.Inventory{}
	}
	doc := render.Catalog(m, inv)
	return &doc, nil
}

func writeJSON(w io.Writer, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(data, '\n'))
	return err
}

func checkFormat(output string) error {
	if output != "table" && output != "json" {
		return usageErr("-o %s: choose table or json", output)
	}
	return nil
}

func newCatalogCmd(stdout, stderr io.Writer) *cobra.Command {
	var (
		src    inventorySource
		output string
	)
	cmd := &cobra.Command{
		Use:   "catalog [CLUSTER_DIR]",
		Short: "Print the hardware catalog: profiles with accelerator metadata, cost and availability",
		Long: `catalog prints what the rendered accelc-hardware-catalog ConfigMap holds
(schema ` + render.CatalogSchemaVersion + `): every profile with its accelerator
types, their memory, architecture, compute capability, dense FP16/BF16
TFLOPS, memory bandwidth, hourly cost, measured model performance, and
devices available now. -o json is the document model catalogs and
estimation services read.`,
		Args: maxArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkFormat(output); err != nil {
				return err
			}
			doc, err := catalogOf(cmd, dirArg(args), &src, stderr)
			if err != nil {
				return err
			}
			if output == "json" {
				return writeJSON(stdout, doc)
			}
			tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
			// A profile over shared GPUs hands out slices or replicas: its
			// rows say so, with the device's memory and share of the cost.
			fmt.Fprintln(tw, "PROFILE\tTYPE\tDEVICE\tMEMORY\tARCHITECTURE\tBF16 TFLOPS\tCOST/HOUR\tAVAILABLE")
			for _, p := range doc.Profiles {
				if len(p.Types) == 0 {
					fmt.Fprintf(tw, "%s\t(any)\tGPU\t-\t-\t-\t-\t%d\n", p.Name, p.Available)
				}
				for _, t := range p.Types {
					device, memory, cost := "GPU", t.Memory, t.CostPerHour
					if d := t.Device; d != nil {
						device, memory, cost = d.Name, fmt.Sprintf("%dGB", d.MemoryGB), d.CostPerHour
					}
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\n", p.Name, t.DisplayName, device, memory, t.Architecture,
						orDash(t.BF16TFLOPS), costCell(cost), t.Available)
				}
			}
			return tw.Flush()
		},
	}
	src.bind(cmd, true)
	cmd.Flags().StringVarP(&output, "output", "o", "table", "output format: table|json")
	return cmd
}

func newRecommendCmd(stdout, stderr io.Writer) *cobra.Command {
	var (
		src                               inventorySource
		output, minMemory, throughput, mc string
		needs                             estimate.Needs
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
the fallback when the preferred type has none available. When none
qualifies it says what is needed and what exists, and exits 1.`,
		Example: `  accelc recommend examples/clusters/hetero-prod --min-memory 80GiB --prefer-arch Hopper --model llama-3-70b --gpus 4
  accelc recommend --min-memory 24GiB --max-cost 2/h -o json`,
		Args: maxArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkFormat(output); err != nil {
				return err
			}
			var err error
			if needs.MinMemoryGiB, err = parseMemoryGiB(minMemory); err != nil {
				return usageErr("--min-memory: %v", err)
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
			doc, err := catalogOf(cmd, dirArg(args), &src, stderr)
			if err != nil {
				return err
			}
			r := estimate.Recommend(doc, needs)
			if output == "json" {
				if err := writeJSON(stdout, r); err != nil {
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
	src.bind(cmd, true)
	f := cmd.Flags()
	f.StringVarP(&output, "output", "o", "table", "output format: table|json")
	f.StringVar(&minMemory, "min-memory", "", "memory each GPU must have: 80GiB, 24GB")
	f.StringVar(&needs.PreferArch, "prefer-arch", "", "rank this architecture first: Hopper, Ampere, Blackwell…")
	f.IntVar(&needs.GPUs, "gpus", 1, "GPUs per replica")
	f.StringVar(&needs.Model, "model", "", "model name, for throughput measured in CUE (performance)")
	f.StringVar(&throughput, "min-throughput", "", "tokens per second one replica must reach: 100tok/s")
	f.StringVar(&mc, "max-cost", "", "most a replica's GPUs may cost an hour: 5/h")
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

func newEstimateCmd(stdout, stderr io.Writer) *cobra.Command {
	var (
		src                    inventorySource
		output, params, tokens string
		t                      estimate.Training
	)
	cmd := &cobra.Command{
		Use:   "estimate [CLUSTER_DIR]",
		Short: "Estimate training time and cost on every hardware profile",
		Long: `estimate prints, for every enabled profile's accelerator types, how long
training a dense transformer of --params parameters on --tokens tokens
takes and what it costs: 6 × params × tokens FLOPs over the type's dense
BF16 (or FP16) TFLOPS × --mfu × --gpus, or the training throughput an
admin measured for --model and recorded in CUE, which wins. It checks that
weights, gradients and Adam state (16 bytes per parameter, sharded over
--gpus) fit in each GPU, and multiplies the time by the type's hourly
cost. A type with no throughput figure gets "no estimate", never a guess.`,
		Example: `  accelc estimate examples/clusters/hetero-prod --params 1.5B --tokens 2B
  accelc estimate --params 7B --tokens 20B --gpus 8 --mfu 0.45 -o json`,
		Args: maxArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkFormat(output); err != nil {
				return err
			}
			var err error
			if t.Params, err = estimate.ParseCount(params); err != nil {
				return usageErr("--params: %v", err)
			}
			if t.Tokens, err = estimate.ParseCount(tokens); err != nil {
				return usageErr("--tokens: %v", err)
			}
			if t.MFU < 0 || t.MFU > 1 {
				return usageErr("--mfu %g: give a share of peak between 0 and 1, such as 0.4", t.MFU)
			}
			if t.GPUs < 1 {
				return usageErr("--gpus %d: give at least 1", t.GPUs)
			}
			doc, err := catalogOf(cmd, dirArg(args), &src, stderr)
			if err != nil {
				return err
			}
			es := estimate.Train(doc, t)
			if output == "json" {
				return writeJSON(stdout, map[string]any{
					"params": t.Params, "tokens": t.Tokens, "precision": t.Precision, "gpus": t.GPUs, "mfu": mfuOf(t),
					"memoryPerGPUGB": t.MemoryPerGPUGB(), "estimates": es,
				})
			}
			fmt.Fprintf(stdout, "Training %s parameters on %s tokens (%s, %s, MFU %.2f unless measured):\n\n",
				params, tokens, t.Precision, plural(t.GPUs, "GPU"), mfuOf(t))
			for i, e := range es {
				mark := "✓"
				if e.Hours == nil || !e.Fits {
					mark = "✗"
				}
				line := mark + " " + e.String()
				if i == 0 && e.Hours != nil && e.Fits {
					line += " [FASTEST]"
				}
				fmt.Fprintln(stdout, line)
			}
			fmt.Fprintf(stdout, "\nAssumes 6 × params × tokens FLOPs and %d bytes per parameter for weights, gradients and Adam state (activations not counted).\n", estimate.BytesPerParam)
			seen := map[string]bool{}
			for _, e := range es {
				if e.Hours != nil && !seen[e.Type] {
					seen[e.Type] = true
					fmt.Fprintf(stdout, "  %s: %s\n", e.TypeName, e.Basis)
				}
			}
			return nil
		},
	}
	src.bind(cmd, true)
	f := cmd.Flags()
	f.StringVarP(&output, "output", "o", "table", "output format: table|json")
	f.StringVar(&params, "params", "", "model parameters: 1.5B, 70B (required)")
	f.StringVar(&tokens, "tokens", "", "training tokens: 2B, 1T (required)")
	f.StringVar(&t.Precision, "precision", "bf16", "training precision: bf16, fp16")
	f.Float64Var(&t.MFU, "mfu", estimate.DefaultMFU, "model FLOPs utilization: the share of peak a run achieves")
	f.IntVar(&t.GPUs, "gpus", 1, "GPUs the run uses")
	f.StringVar(&t.Model, "model", "", "model name, for training throughput measured in CUE (performance)")
	_ = cmd.MarkFlagRequired("params")
	_ = cmd.MarkFlagRequired("tokens")
	return cmd
}

func mfuOf(t estimate.Training) float64 {
	if t.MFU <= 0 {
		return estimate.DefaultMFU
	}
	return t.MFU
}

// parseMemoryGiB reads "80GiB", "80Gi", "80GB" or "80G" as GiB: GPU memory
// is marketed in GB and sized in GiB, and users write either.
func parseMemoryGiB(s string) (float64, error) {
	if s == "" {
		return 0, nil
	}
	v := strings.TrimSpace(s)
	v = strings.TrimSuffix(strings.TrimSuffix(v, "B"), "i")
	if n, err := strconv.ParseFloat(strings.TrimSuffix(v, "G"), 64); err == nil && strings.HasSuffix(v, "G") && n > 0 {
		return n, nil
	}
	q, err := resource.ParseQuantity(v)
	if err != nil || q.Sign() <= 0 {
		return 0, fmt.Errorf("%q is not a memory size: write 80GiB", s)
	}
	return float64(q.Value()) / (1 << 30), nil
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

func orDash(v float64) string {
	if v == 0 {
		return "-"
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

func costCell(c *float64) string {
	if c == nil {
		return "-"
	}
	return "$" + strconv.FormatFloat(*c, 'f', 2, 64)
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return strconv.Itoa(n) + " " + word + "s"
}
