// Package karpenter proves accelc's rendered NodePools with Karpenter's
// own scheduler (sigs.k8s.io/karpenter's provisioning/scheduling package,
// the simulation its provisioner runs, over its in-tree fake cloud
// provider): which NodePool, instance type and capacity type a pending pod
// of each profile gets.
package karpenter
