package workloads_test

import (
	"testing"

	"github.com/accelc/accelc/internal/testutil"
)

// TestWorkloadsDependencies keeps the reader as light as the node reader
// it sits beside: client-go's REST client only, no clientset, informers,
// dynamic or discovery client, which link every API group (or their own
// decoding) into accelc and cost every command its start-up.
func TestWorkloadsDependencies(t *testing.T) {
	testutil.ForbidDeps(t, "github.com/accelc/accelc/pkg/workloads", []string{"k8s.io/client-go/kubernetes", "k8s.io/client-go/informers", "k8s.io/client-go/dynamic", "k8s.io/client-go/discovery"})
}
