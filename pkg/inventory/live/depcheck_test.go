package live_test

import (
	"testing"

	"github.com/accelc/accelc/internal/testutil"
)

// TestLiveDependencies keeps the live reader light: client-go's kubeconfig
// handling and REST client, no clientset (which links every API group into
// accelc and costs every command its start-up) and no API types at all;
// proto.go and json.go read the few fields a snapshot keeps.
func TestLiveDependencies(t *testing.T) {
	testutil.ForbidDeps(t, "github.com/accelc/accelc/pkg/inventory/live", []string{"k8s.io/client-go/kubernetes", "k8s.io/client-go/informers", "k8s.io/api/"})
}
