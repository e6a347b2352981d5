// Command accelc-policytest is the policy engine of `accelc test`: OPA's
// tester and Gatekeeper's constraint framework, verify runner and
// expander. accelc starts it, found beside itself or on PATH, with one
// request on stdin (package policytest's EngineRequest) and reads the
// answer from stdout. It is a program of its own so that the engine's
// packages, and their start-up, stay out of accelc (package engine says
// more).
package main

import (
	"os"

	"github.com/accelc/accelc/pkg/policytest/engine"
)

func main() {
	os.Exit(engine.Command())
}
