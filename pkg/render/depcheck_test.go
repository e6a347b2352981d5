package render_test

import (
	"testing"

	"github.com/accelc/accelc/internal/testutil"
)

// TestRenderDependencies keeps rendering free of cluster access, drivers
// and the registry client: pkg/render (and what it imports) must not pull
// in client-go or NVML, so `accelc render` runs anywhere CI does, nor
// go-containerregistry or oras, which only pushing and pulling need.
func TestRenderDependencies(t *testing.T) {
	testutil.ForbidDeps(t, "github.com/accelc/accelc/pkg/render", []string{"k8s.io/client-go", "github.com/NVIDIA/go-nvml", "github.com/google/go-containerregistry", "oras.land/oras-go"})
}
