package accelc_test

import (
	"context"
	"fmt"

	"github.com/accelc/accelc/pkg/accelc"
)

// Load a cluster folder with the inventory.json beside its CUE, render it,
// and report what a CI job would.
func ExampleCluster() {
	res, err := accelc.Cluster(context.Background(), "../../examples/clusters/small-lab", accelc.Options{Stages: accelc.Rendered})
	if err != nil {
		fmt.Println(err) // compile.Errors: every problem, each with file:line:col
		return
	}
	for _, d := range res.Diagnostics {
		fmt.Println(d)
	}
	fmt.Printf("cluster %s: %d nodes, %d profiles\n", res.Model.Cluster.Name, len(res.Inventory.Nodes), len(res.Model.Profiles))
	fmt.Println(res.Tree.Paths()[0])
	// Output:
	// cluster small-lab: 4 nodes, 5 profiles
	// catalog-service/clusterrole-accelc-catalog.yaml
}
