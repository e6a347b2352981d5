//go:build unix

package main

import (
	"fmt"
	"os"
	"syscall"

	"github.com/accelc/accelc/internal/cli"
)

// runCore replaces this process with accelc-core: same process ID,
// standard streams and signals; its exit code is accelc's.
func runCore(core string, args []string) int {
	err := syscall.Exec(core, append([]string{"accelc"}, args...), cli.CoreEnv())
	fmt.Fprintf(os.Stderr, "running %s: %v\n", core, err)
	return cli.ExitOutside
}
