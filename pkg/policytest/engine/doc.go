// Package engine is the policy engine of `accelc test`: the policies' Rego
// unit tests with OPA's own tester, the admission fixtures through
// Gatekeeper's own verify runner, constraint framework and expander, and
// the semantic escape check over the same engine.
//
// It is linked only into accelc-policytest (Main), never into accelc:
// Gatekeeper's packages bring the API server's admission and CEL
// libraries, client-go's fake clientset, controller-runtime and oras,
// whose package initialisation alone took about 50 ms of every accelc
// command (issue 16). accelc reaches it through package policytest, which
// starts accelc-policytest with one request per operation.
package engine
