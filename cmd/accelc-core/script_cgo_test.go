//go:build cgo

package main

// withCgo is the scripts' [cgo] condition: inventory nvml reads NVML only
// in a cgo build.
const withCgo = true
