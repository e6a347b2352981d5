// Command accelc-core is accelc with every command: accelc (cmd/accelc)
// runs version and push itself and hands every other command to the
// accelc-core beside it. It is also the binary in accelc's image, whose
// catalog service runs `serve`. Run on its own, it behaves as accelc.
package main

import "os"

func main() {
	os.Exit(Main(os.Args[1:], os.Stdout, os.Stderr))
}
