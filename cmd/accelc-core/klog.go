package main

import (
	"fmt"
	"io"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"k8s.io/klog/v2"
)

// quietClientGo keeps client-go's own log lines (klog) off accelc's
// stderr, which carries accelc's messages only: scripts compare it, and a
// line such as "Unexpected error when reading response body" from a
// request accelc cancelled itself says nothing a user can act on. What
// client-go returns as an error still reaches the user, through accelc's
// message.
func quietClientGo() { klog.SetLogger(logr.Discard()) }

// clientGoTo sends client-go's log lines to w, each marked as client-go's:
// for serve, a long-running service whose log an operator reads, where a
// watch that keeps failing is worth a line.
func clientGoTo(w io.Writer) {
	klog.SetLogger(funcr.New(func(prefix, args string) {
		if prefix != "" {
			args = prefix + ": " + args
		}
		fmt.Fprintln(w, "client-go:", args)
	}, funcr.Options{}))
}
