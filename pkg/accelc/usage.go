package accelc

// The errors that tell a command's caller a usage mistake from a problem
// outside accelc.

import "github.com/accelc/accelc/internal/errkind"

// UsageError is a call whose options are wrong in themselves (a
// destination that is not oci://…, a tag Docker refuses, a time that is
// not RFC 3339), found before anything is read or sent: accelc exits 2
// for it. Its message names the option as the command line spells it.
type UsageError = errkind.UsageError

// OutsideError is a failure of a system outside the configuration: a live
// cluster that is unreachable or refuses the read, a registry that fails,
// or accelc-policytest missing or of another build. accelc exits 3 for
// it.
type OutsideError = errkind.OutsideError

// IsUsage says whether err is a wrong option rather than wrong input or
// a failure outside.
func IsUsage(err error) bool { return errkind.IsUsage(err) }

// IsOutside says whether err is a failure outside the configuration
// rather than a mistake in it.
func IsOutside(err error) bool { return errkind.IsOutside(err) }

func usage(err error) error { return &UsageError{Err: err} }
