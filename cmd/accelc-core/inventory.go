package main

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/accelc/accelc/internal/cli"
)

func newInventoryCmd(stdout, stderr io.Writer) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "inventory",
		Short: "Inspect a cluster's accelerator nodes",
		Args:  cobra.ArbitraryArgs,
		RunE:  cli.RunGroup,
	}
	cmd.AddCommand(newInventoryShowCmd(stdout, stderr))
	cmd.AddCommand(newInventoryNVMLCmd(stdout, stderr))
	cmd.AddCommand(newInventorySnapshotCmd(stdout, stderr))
	cmd.AddCommand(newInventorySuggestCmd(stdout, stderr))
	return cmd
}
