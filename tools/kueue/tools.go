//go:build tools

// Package tools records the command this module builds: Kueue's manager,
// sigs.k8s.io/kueue/cmd/kueue.
package tools

import _ "sigs.k8s.io/kueue/cmd/kueue"
