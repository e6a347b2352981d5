// Command accelc compiles accelerator classes, hardware profiles and team
// entitlements written in CUE, with a node inventory, into Kubernetes
// manifests and Gatekeeper policies.
//
// This executable runs `version` and `push` itself and every other
// command in accelc-core (cmd/accelc-core), which it finds beside itself
// or on PATH and replaces itself with: Go initialises every package a
// program links before main runs, and CUE's and Kubernetes' packages
// alone take longer to initialise than crane takes to run.
package main

import (
	"fmt"
	"os"

	"github.com/accelc/accelc/internal/cli"
	"github.com/accelc/accelc/internal/sibling"
)

func main() {
	args := os.Args[1:]
	if cli.Light(args) {
		os.Exit(cli.LightMain(args, os.Stdout, os.Stderr))
	}
	core, exe, ok := sibling.Find(cli.Core)
	if !ok {
		fmt.Fprintf(os.Stderr, "accelc runs this command in %s, which is neither beside %s nor on PATH: %s\n", cli.Core, exe, sibling.InstallHint(cli.Core))
		os.Exit(cli.ExitOutside)
	}
	os.Exit(runCore(core, args))
}
