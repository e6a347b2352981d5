// Package compile turns a cluster directory of CUE into a typed Model.
//
// It loads the directory's CUE package (with its module's imports, so a
// fleet repository can share teams, profiles and catalog extensions across
// clusters), unifies it with the embedded schema, decodes the result, merges
// catalog extensions into the built-in catalog and checks every reference
// (profiles, teams, node pins) against that catalog.
//
// Sharing pools and MIG configs become NodePools: sets of nodes whose GPUs
// are shared one way, labelled and tainted by accelc's node rules. A
// profile over shared GPUs (mig: a slice; pool: and fallbackPools:
// time-sliced or MPS replicas) resolves to the pools its pods must run
// in, the resource they request and the taints they tolerate; a team's
// quota may name a pool. Capacity counts what pods can request there:
// slices and replicas, not GPUs.
//
// Check then compares the model with a node inventory: warnings for what
// renders but will not behave as meant, and errors for a pool that takes
// no node. Every diagnostic carries the Path it is about, which prints as
// the CUE path (profiles.a100-large.acceleratorTypes[0]) and knows the
// file:line:col where the user wrote it, relative to the working
// directory; the message says what to do.
package compile
