package accelc

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

func usage(err error) error { return &UsageError{err} }
