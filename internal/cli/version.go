package cli

import (
	"fmt"
	"io"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// version is set at link time (-ldflags "-X
// github.com/accelc/accelc/internal/cli.version=…"); otherwise the module
// version from the build info is used.
var version = ""

// NewVersionCmd is `accelc version`.
func NewVersionCmd(stdout io.Writer) *cobra.Command {
	output := OutputFormats(FormatText, FormatJSON, FormatYAML)
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print accelc's version",
		Args:  NoArgs,
		RunE: func(*cobra.Command, []string) error {
			if output.Value() != FormatText {
				return WriteReport(stdout, output.Value(), struct {
					Version string `json:"version"`
				}{Version()})
			}
			_, err := fmt.Fprintf(stdout, "accelc %s\n", Version())
			return err
		},
	}
	output.Register(cmd)
	return cmd
}

// Version is accelc's version: set at link time, else the module's,
// else "(devel)".
func Version() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "(devel)"
}
