//go:build !unix

package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"

	"github.com/accelc/accelc/internal/cli"
)

// runCore runs accelc-core as a child with accelc's standard streams and
// returns its exit code; an interrupt reaches both, and accelc waits for
// the child to end.
func runCore(core string, args []string) int {
	signal.Ignore(os.Interrupt)
	cmd := exec.Command(core, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr, cmd.Env = os.Stdin, os.Stdout, os.Stderr, cli.CoreEnv()
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return cli.ExitOK
	case errors.As(err, &exit):
		return exit.ExitCode()
	default:
		fmt.Fprintf(os.Stderr, "running %s: %v\n", core, err)
		return cli.ExitOutside
	}
}
