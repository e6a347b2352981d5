package nodegen_test

import (
	"path/filepath"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/accelc/accelc/internal/nodegen"
	"github.com/accelc/accelc/internal/testutil"
)

// TestExampleInventories keeps examples/clusters/*/inventory.json equal to
// what the generator writes; `go test ./... -update` regenerates them.
func TestExampleInventories(t *testing.T) {
	ex := nodegen.Examples()
	names := make([]string, 0, len(ex))
	for name := range ex {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		testutil.Golden(t, filepath.Join("../../examples/clusters", name, "inventory.json"), nodegen.List(ex[name]))
	}
}

func TestGeneratedIsDeterministic(t *testing.T) {
	a, b := nodegen.List(nodegen.Generated(300)), nodegen.List(nodegen.Generated(300))
	assert.Equal(t, a, b)
	assert.Len(t, nodegen.Generated(5000), 5000)
}
