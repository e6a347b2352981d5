//go:build tools

// Package tools records the commands this module builds: the control
// plane's three, which internal/controlplane starts (no kubectl or
// k8s-validate: those stay at tools/e2e's version).
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
)
