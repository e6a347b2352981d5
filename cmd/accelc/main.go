// Command accelc compiles accelerator classes, hardware profiles and team
// entitlements written in CUE, with a node inventory, into Kubernetes
// manifests and Gatekeeper policies.
package main

import "os"

func main() {
	os.Exit(Main(os.Args[1:], os.Stdout, os.Stderr))
}
