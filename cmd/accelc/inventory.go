package main

import (
	"io"

	"github.com/spf13/cobra"
)

func newInventoryCmd(stdout, stderr io.Writer) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "inventory",
		Short: "Inspect a cluster's accelerator nodes",
		Args:  cobra.ArbitraryArgs,
		RunE:  runGroup,
	}
	cmd.AddCommand(newInventoryShowCmd(stdout, stderr))
	cmd.AddCommand(newInventoryNVMLCmd(stdout, stderr))
	cmd.AddCommand(newInventorySnapshotCmd(stdout, stderr))
	cmd.AddCommand(newInventorySuggestCmd(stdout, stderr))
	return cmd
}
