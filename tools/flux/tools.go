//go:build tools

// Package tools records the commands this module builds: Flux's
// source-controller and kustomize-controller, whose main packages are their
// modules' roots.
package tools

import (
	_ "github.com/fluxcd/kustomize-controller"
	_ "github.com/fluxcd/source-controller"
)
