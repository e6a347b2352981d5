package render_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRenderDependencies keeps rendering free of cluster access, drivers
// and the registry client: pkg/render (and what it imports) must not pull
// in client-go or NVML, so `accelc render` runs anywhere CI does, nor
// go-containerregistry or oras, which only pushing and pulling need.
func TestRenderDependencies(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/accelc/accelc/pkg/render").CombinedOutput()
	require.NoError(t, err, string(out))
	for _, dep := range strings.Fields(string(out)) {
		for _, banned := range []string{"k8s.io/client-go", "github.com/NVIDIA/go-nvml", "github.com/google/go-containerregistry", "oras.land/oras-go"} {
			if strings.HasPrefix(dep, banned) {
				t.Errorf("pkg/render depends on %s", dep)
			}
		}
	}
}
