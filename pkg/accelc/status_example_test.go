package accelc_test

import (
	"context"
	"fmt"
	"os"

	"github.com/accelc/accelc/pkg/accelc"
	"github.com/accelc/accelc/pkg/inventory/live"
)

// Read the cluster of kubeconfig context prod, compare it with the
// checkout's render of clusters/prod, and say when they differ.
func ExampleReadStatus() {
	st, err := accelc.ReadStatus(context.Background(), accelc.StatusOptions{
		Live:   live.Options{Context: "prod"},
		Config: "clusters/prod",
	})
	if err != nil {
		fmt.Println(err) // accelc.IsOutside: the cluster could not be read
		return
	}
	if err := st.WriteText(os.Stdout); err != nil {
		fmt.Println(err)
	}
	if d := st.Delivery.Drift; d != nil && d.State != accelc.InSync {
		fmt.Printf("%s: the cluster runs %s, the checkout renders %s\n", d.State, d.Cluster.ContentDigest, d.Checkout.ContentDigest)
	}
}
