//go:build tools

// Package tools records the command this module builds: KWOK's kwok.
package tools

import _ "sigs.k8s.io/kwok/cmd/kwok"
