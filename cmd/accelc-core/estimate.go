package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/accelc/accelc/internal/cli"
	"github.com/accelc/accelc/internal/words"
	"github.com/accelc/accelc/pkg/estimate"
)

func newEstimateCmd(stdout, stderr io.Writer) *cobra.Command {
	var (
		inv            inventoryFlags
		output         = cli.OutputFormats(cli.FormatText, cli.FormatJSON, cli.FormatYAML)
		params, tokens string
		t              estimate.Training
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
		Args:              cli.MaxArgs(1),
		ValidArgsFunction: completeClusterDir,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := parseTraining(&t, params, tokens); err != nil {
				return err
			}
			doc, err := catalogOf(cmd, dirArg(args), &inv, stderr)
			if err != nil {
				return err
			}
			es := estimate.Train(doc, t)
			if output.Value() != cli.FormatText {
				return cli.WriteReport(stdout, output.Value(), estimate.ReportOf(t, es))
			}
			writeEstimates(stdout, params, tokens, t, es)
			return nil
		},
	}
	inv.bind(cmd, true)
	output.Register(cmd)
	f := cmd.Flags()
	f.StringVar(&params, "params", "", "model parameters: 1.5B, 70B (required)")
	f.StringVar(&tokens, "tokens", "", "training tokens: 2B, 1T (required)")
	f.StringVar(&t.Precision, "precision", "bf16", "training precision: bf16, fp16")
	f.Float64Var(&t.MFU, "mfu", estimate.DefaultMFU, "model FLOPs utilization: the share of peak a run achieves")
	f.IntVar(&t.GPUs, "gpus", 1, "GPUs the run uses")
	f.StringVar(&t.Model, "model", "", "model name, for training throughput measured in CUE (performance)")
	_ = cmd.RegisterFlagCompletionFunc("precision", cobra.FixedCompletions([]string{"bf16", "fp16"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// parseTraining reads --params and --tokens into t and checks --mfu and
// --gpus.
func parseTraining(t *estimate.Training, params, tokens string) error {
	if params == "" || tokens == "" {
		return cli.UsageErr("--params and --tokens are required: the model's size and the tokens it trains on, such as --params 7B --tokens 20B")
	}
	var err error
	if t.Params, err = estimate.ParseCount(params); err != nil {
		return cli.UsageErr("--params: %v", err)
	}
	if t.Tokens, err = estimate.ParseCount(tokens); err != nil {
		return cli.UsageErr("--tokens: %v", err)
	}
	if t.MFU < 0 || t.MFU > 1 {
		return cli.UsageErr("--mfu %g: give a share of peak between 0 and 1, such as 0.4", t.MFU)
	}
	if t.GPUs < 1 {
		return cli.UsageErr("--gpus %d: give at least 1", t.GPUs)
	}
	return nil
}

// writeEstimates prints the estimates, fastest that fits marked, and the
// basis of each type's figure.
func writeEstimates(w io.Writer, params, tokens string, t estimate.Training, es []estimate.Estimate) {
	fmt.Fprintf(w, "Training %s parameters on %s tokens (%s, %s, MFU %.2f unless measured):\n\n",
		params, tokens, t.Precision, words.Plural(t.GPUs, "GPU"), t.MFUUsed())
	for i, e := range es {
		mark := "✓"
		if e.Hours == nil || !e.Fits {
			mark = "✗"
		}
		line := mark + " " + e.String()
		if i == 0 && e.Hours != nil && e.Fits {
			line += " [FASTEST]"
		}
		fmt.Fprintln(w, line)
	}
	fmt.Fprintf(w, "\nAssumes 6 × params × tokens FLOPs and %d bytes per parameter for weights, gradients and Adam state (activations not counted).\n", estimate.BytesPerParam)
	seen := map[string]bool{}
	for _, e := range es {
		name := e.TypeName
		if e.Device != "" {
			name += " · " + e.Device
		}
		if e.Hours != nil && !seen[name] {
			seen[name] = true
			fmt.Fprintf(w, "  %s: %s\n", name, e.Basis)
		}
	}
}
