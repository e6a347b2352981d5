package workloads_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestWorkloadsDependencies keeps the reader as light as the node reader
// it sits beside: client-go's REST client only, no clientset, informers,
// dynamic or discovery client, which link every API group (or their own
// decoding) into accelc and cost every command its start-up.
func TestWorkloadsDependencies(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/accelc/accelc/pkg/workloads").CombinedOutput()
	require.NoError(t, err, string(out))
	for _, dep := range strings.Fields(string(out)) {
		for _, banned := range []string{"k8s.io/client-go/kubernetes", "k8s.io/client-go/informers", "k8s.io/client-go/dynamic", "k8s.io/client-go/discovery"} {
			if strings.HasPrefix(dep, banned) {
				t.Errorf("pkg/workloads depends on %s", dep)
			}
		}
	}
}
