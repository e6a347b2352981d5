//go:build tools

// Package tools records the command this module builds: Gatekeeper's
// manager (its main package is the module root).
package tools

import _ "github.com/open-policy-agent/gatekeeper/v3"
