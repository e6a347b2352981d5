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
	"os/exec"
	"path/filepath"

	"github.com/accelc/accelc/internal/cli"
)

func main() {
	args := os.Args[1:]
	if cli.Light(args) {
		os.Exit(cli.LightMain(args, os.Stdout, os.Stderr))
	}
	core, err := findCore()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(cli.ExitOutside)
	}
	os.Exit(runCore(core, args))
}

// findCore finds accelc-core beside the running executable, else on
// PATH.
func findCore() (string, error) {
	name := cli.Core
	if filepath.Ext(os.Args[0]) == ".exe" {
		name += ".exe"
	}
	exe, err := os.Executable()
	if err == nil {
		p := filepath.Join(filepath.Dir(exe), name)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			return p, nil
		}
	}
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	return "", cli.CoreNotFound(exe)
}
