// Package policytest runs accelc's policies the ways users rely on: the
// Rego unit tests in-process with OPA's own tester, parsed as Gatekeeper
// parses a template's `code` source with version v1.
package policytest
