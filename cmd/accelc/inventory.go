package main

import (
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/accelc/accelc/pkg/catalog"
	"github.com/accelc/accelc/pkg/compile"
	"github.com/accelc/accelc/pkg/inventory"
)

func newInventoryCmd(stdout, stderr io.Writer) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "inventory",
		Short: "Inspect a cluster's accelerator nodes",
		Args:  noArgs,
	}
	cmd.AddCommand(newInventoryShowCmd(stdout, stderr))
	return cmd
}

func newInventoryShowCmd(stdout, stderr io.Writer) *cobra.Command {
	var (
		file, groupBy, output, config string
	)
	cmd := &cobra.Command{
		Use:   "show",
		Short: "Show every accelerator node with its detected type",
		Long: `show classifies the nodes of a snapshot (--inventory, else ./inventory.json)
and prints one line per accelerator node and a summary per type. With
--config CLUSTER_DIR it uses that cluster's catalog extensions and pins.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if !slices.Contains(inventory.Formats, output) {
				return usageErr("-o %s: choose one of %s", output, strings.Join(inventory.Formats, ", "))
			}
			if groupBy != "" && groupBy != "type" {
				return usageErr("--group-by %s: only \"type\" is supported", groupBy)
			}
			var cat *catalog.Catalog
			opts := inventory.Options{}
			if config != "" {
				m, err := loadModel(config)
				if err != nil {
					return err
				}
				cat, opts.Pins = m.Catalog, m.Pins
			} else {
				var err error
				if cat, err = catalog.Builtin(); err != nil {
					return err
				}
			}
			path := file
			if path == "" {
				if path = compile.DefaultInventory(firstNonEmpty(config, ".")); path == "" {
					return usageErr("no inventory: give --inventory FILE (the output of `kubectl get nodes -o json`)")
				}
			}
			inv, err := inventory.Load(path, cat, opts)
			if err != nil {
				return &exitError{exitInput, err}
			}
			for _, p := range inv.Problems {
				cmd.PrintErrf("warning: %s: %s; the node is left out\n", path, p)
			}
			return inv.WriteView(stdout, inventory.ViewOptions{Format: inventory.Format(output), GroupByType: groupBy == "type"})
		},
	}
	cmd.Flags().StringVar(&file, "inventory", "", "node snapshot (`kubectl get nodes -o json` or -o yaml)")
	cmd.Flags().StringVar(&groupBy, "group-by", "", "group nodes: type")
	cmd.Flags().StringVarP(&output, "output", "o", "table", "output format: "+strings.Join(inventory.Formats, "|"))
	cmd.Flags().StringVar(&config, "config", "", "cluster directory whose catalog and pins to apply")
	return cmd
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
