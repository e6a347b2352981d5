// Package policytest runs accelc's policies the ways users rely on: the
// Rego unit tests with OPA's own tester, parsed as Gatekeeper parses a
// template's `code` source with version v1, and a cluster's admission
// fixtures as a gator suite over the rendered tree with Gatekeeper's own
// engine.
//
// The engine itself is package engine, in its own program,
// accelc-policytest (EngineCommand): this package builds what it runs and
// reads what it answers, and links neither OPA nor Gatekeeper, so that
// accelc's other commands do not pay for their start-up.
package policytest
