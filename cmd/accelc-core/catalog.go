package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/accelc/accelc/internal/cli"
	"github.com/accelc/accelc/pkg/accelc"
	"github.com/accelc/accelc/pkg/catalogdoc"
)

// catalogOf loads a cluster and its inventory into the catalog document
// every consumer reads.
func catalogOf(cmd *cobra.Command, dir string, inv *inventoryFlags, stderr io.Writer) (*catalogdoc.Document, error) {
	res, err := loadCluster(cmd.Context(), dir, inv, accelc.Options{Stages: accelc.Checked}, stderr)
	if err != nil {
		return nil, err
	}
	warnNoInventory(stderr, res, "every type shows 0 available")
	doc := res.Catalog()
	return &doc, nil
}

func newCatalogCmd(stdout, stderr io.Writer) *cobra.Command {
	var (
		inv    inventoryFlags
		output = cli.OutputFormats(cli.FormatText, cli.FormatJSON, cli.FormatYAML)
	)
	cmd := &cobra.Command{
		Use:   "catalog [CLUSTER_DIR]",
		Short: "Print the hardware catalog: profiles with accelerator metadata, cost and availability",
		Long: `catalog prints what the rendered accelc-hardware-catalog ConfigMap holds
(schema ` + catalogdoc.SchemaVersion + `): every profile with its accelerator
types, their memory, architecture, compute capability, dense FP16/BF16
TFLOPS, memory bandwidth, hourly cost, measured model performance, and
devices available now. -o json (or yaml) is the document model catalogs and
estimation services read.`,
		Args:              cli.MaxArgs(1),
		ValidArgsFunction: completeClusterDir,
		RunE: func(cmd *cobra.Command, args []string) error {
			doc, err := catalogOf(cmd, dirArg(args), &inv, stderr)
			if err != nil {
				return err
			}
			if output.Value() != cli.FormatText {
				return cli.WriteReport(stdout, output.Value(), doc)
			}
			return writeCatalog(stdout, doc)
		},
	}
	inv.bind(cmd, true)
	output.Register(cmd)
	return cmd
}

// writeCatalog prints the catalog's profiles and types, then what
// Karpenter may grow and the Kueue queues.
func writeCatalog(w io.Writer, doc *catalogdoc.Document) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	// A profile over shared GPUs hands out slices or replicas: its rows
	// say so, with the device's memory and share of the cost.
	fmt.Fprintln(tw, "PROFILE\tTYPE\tDEVICE\tMEMORY\tARCHITECTURE\tBF16 TFLOPS\tCOST/HOUR\tAVAILABLE")
	for _, p := range doc.Profiles {
		name := p.Name
		if !p.Enabled {
			// The dashboard does not offer it; estimate and recommend
			// leave it out.
			name += " (disabled)"
		}
		if len(p.Types) == 0 {
			fmt.Fprintf(tw, "%s\t(any)\tGPU\t-\t-\t-\t-\t%d\n", name, p.Available)
		}
		for _, t := range p.Types {
			device, memory, cost := "GPU", t.Memory, t.CostPerHour
			if d := t.Device; d != nil {
				device, memory, cost = d.Name, fmt.Sprintf("%dGB", d.MemoryGB), d.CostPerHour
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\n", name, t.DisplayName, device, memory, t.Architecture,
				orDash(t.BF16TFLOPS), costCell(cost), t.Available)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	writeUnlabelled(w, doc)
	if err := writeGrowth(w, doc); err != nil {
		return err
	}
	return writeQueues(w, doc)
}

// writeUnlabelled prints, once per type, why devices of its nodes are
// not counted available: no rule gives the nodes the type label its
// profiles select.
func writeUnlabelled(w io.Writer, doc *catalogdoc.Document) {
	seen := map[string]bool{}
	for _, p := range doc.Profiles {
		for _, t := range p.Types {
			if t.Labelling == "" || seen[t.ID] {
				continue
			}
			seen[t.ID] = true
			fmt.Fprintf(w, "\n%s: %d devices not counted available: %s\n", t.DisplayName, t.Unlabelled, t.Labelling)
		}
	}
}

// writeGrowth prints, for the types Karpenter NodePools launch, which
// pools, on which capacity, and how many devices they may add.
func writeGrowth(w io.Writer, doc *catalogdoc.Document) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	seen := map[string]bool{}
	for _, p := range doc.Profiles {
		for _, t := range p.Types {
			g := t.Autoscaling
			if g == nil || seen[t.ID] {
				continue
			}
			if len(seen) == 0 {
				fmt.Fprintln(tw, "\nTYPE\tGROWS BY\tCAPACITY\tUP TO")
			}
			seen[t.ID] = true
			limit := "no limit"
			if g.Limit != nil {
				limit = fmt.Sprintf("+%d", *g.Limit)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", t.DisplayName, strings.Join(g.NodePools, ", "), strings.Join(g.CapacityTypes, ", "), limit)
		}
	}
	return tw.Flush()
}

// writeQueues prints, when profiles schedule through Kueue, each one's
// LocalQueue, its teams' ClusterQueues and the team quota of each flavor
// in the order Kueue tries them, with what is used and left when the
// inventory counted pods.
func writeQueues(w io.Writer, doc *catalogdoc.Document) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	header := false
	for _, p := range doc.Profiles {
		if p.Queue == nil {
			continue
		}
		if !header {
			fmt.Fprintln(tw, "\nPROFILE\tLOCALQUEUE\tTEAM\tCLUSTERQUEUE\tFLAVOR\tQUOTA\tUSED\tLEFT")
			header = true
		}
		for _, t := range p.Queue.Teams {
			for _, f := range t.Flavors {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\n", p.Name, p.Queue.LocalQueue, t.Team, t.ClusterQueue, f.Flavor, f.Quota, intOrDash(f.Used), intOrDash(f.Left))
			}
		}
	}
	return tw.Flush()
}

func intOrDash(n *int) string {
	if n == nil {
		return "-"
	}
	return strconv.Itoa(*n)
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
