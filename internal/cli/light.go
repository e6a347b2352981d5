package cli

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
)

// Core is the executable that runs the commands that need the compiler
// or a Kubernetes client: cmd/accelc-core, installed beside accelc.
const Core = "accelc-core"

// frontEnv carries accelc's version to accelc-core, which warns where
// the two are of different builds.
const frontEnv = "ACCELC_FRONT_VERSION"

// lightCommands run in accelc itself: everything they import starts in a
// few milliseconds (no CUE, no Kubernetes client, no policy engine).
var lightCommands = []string{"version", "push"}

// Light says whether accelc runs args itself: the first word is a light
// command, and no word is a flag of the root's that only accelc-core
// has (--cue-timeout, --cue-max-memory).
func Light(args []string) bool {
	if len(args) == 0 || !slices.Contains(lightCommands, args[0]) {
		return false
	}
	for _, a := range args[1:] {
		if a == "--" {
			break
		}
		if strings.HasPrefix(a, "--cue-") {
			return false
		}
	}
	return true
}

// LightMain runs a light command (Light(args) is true) and returns the
// exit code.
func LightMain(args []string, stdout, stderr io.Writer) int {
	root := NewRoot(stdout, stderr)
	root.AddCommand(NewVersionCmd(stdout), NewPushCmd(stdout, stderr))
	return Execute(root, args, stderr)
}

// CoreEnv is the environment accelc hands accelc-core: its own, with
// accelc's version.
func CoreEnv() []string {
	return append(os.Environ(), frontEnv+"="+Version())
}

// CheckFront warns, in accelc-core, where the accelc that ran it is of
// another version: the two come from one release, and a light command
// would behave as the other build's.
func CheckFront(stderr io.Writer) {
	if front := os.Getenv(frontEnv); front != "" && front != Version() {
		fmt.Fprintf(stderr, "warning: accelc is %s but %s is %s: install both from one release\n", front, Core, Version())
	}
}
