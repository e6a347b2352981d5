package main

import (
	"fmt"
	"io"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// version is set at link time (-ldflags "-X main.version=…"); otherwise
// the module version from the build info is used.
var version = ""

func newVersionCmd(stdout io.Writer) *cobra.Command {
	output := outputFormats(formatText, formatJSON, formatYAML)
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print accelc's version",
		Args:  noArgs,
		RunE: func(*cobra.Command, []string) error {
			if output.value != formatText {
				return writeReport(stdout, output.value, struct {
					Version string `json:"version"`
				}{versionString()})
			}
			_, err := fmt.Fprintf(stdout, "accelc %s\n", versionString())
			return err
		},
	}
	output.register(cmd)
	return cmd
}

// versionString is accelc's version: set at link time, else the module's,
// else "(devel)".
func versionString() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "(devel)"
}
