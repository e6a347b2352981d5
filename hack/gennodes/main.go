// Command gennodes writes a generated node list (`kubectl get nodes -o
// json` shape) of the size asked, for benchmarks: go run ./hack/gennodes -n 5000.
package main

import (
	"flag"
	"os"

	"github.com/accelc/accelc/internal/nodegen"
)

func main() {
	n := flag.Int("n", 5000, "number of nodes")
	flag.Parse()
	if _, err := os.Stdout.Write(nodegen.List(nodegen.Generated(*n))); err != nil {
		os.Exit(1)
	}
}
