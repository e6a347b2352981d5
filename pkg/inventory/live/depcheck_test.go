package live_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestLiveDependencies keeps the live reader light: client-go's kubeconfig
// handling and REST client, no clientset (which links every API group into
// accelc and costs every command its start-up) and no API types at all;
// proto.go and json.go read the few fields a snapshot keeps.
func TestLiveDependencies(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/accelc/accelc/pkg/inventory/live").CombinedOutput()
	require.NoError(t, err, string(out))
	for _, dep := range strings.Fields(string(out)) {
		for _, banned := range []string{"k8s.io/client-go/kubernetes", "k8s.io/client-go/informers", "k8s.io/api/"} {
			if strings.HasPrefix(dep, banned) {
				t.Errorf("pkg/inventory/live depends on %s", dep)
			}
		}
	}
}
