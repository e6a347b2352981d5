// Package errkind holds the two kinds of error the library returns besides
// wrong input, which accelc maps to its exit codes (2 and 3). It is its
// own package so that the commands that run without the compiler (push,
// version) share them with the library without importing it; pkg/accelc
// re-exports them.
package errkind

import "errors"

// UsageError is a call whose options are wrong in themselves (a
// destination that is not oci://…, a tag Docker refuses, a time that is
// not RFC 3339), found before anything is read or sent: accelc exits 2
// for it. Its message names the option as the command line spells it.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

// IsUsage says whether err is a wrong option rather than wrong input or
// a failure outside.
func IsUsage(err error) bool {
	var u *UsageError
	return errors.As(err, &u)
}

// OutsideError is a failure of a system outside the configuration: a live
// cluster that is unreachable or refuses the read, a registry that fails,
// or accelc-policytest missing or of another build. accelc exits 3 for it.
type OutsideError struct{ Err error }

func (e *OutsideError) Error() string { return e.Err.Error() }
func (e *OutsideError) Unwrap() error { return e.Err }

// IsOutside says whether err is a failure outside the configuration
// rather than a mistake in it.
func IsOutside(err error) bool {
	var o *OutsideError
	return errors.As(err, &o)
}
