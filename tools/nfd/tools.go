//go:build tools

// Package tools records the command this module builds: Node Feature
// Discovery's nfd-master.
package tools

import _ "sigs.k8s.io/node-feature-discovery/cmd/nfd-master"
