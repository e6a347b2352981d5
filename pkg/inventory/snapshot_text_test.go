package inventory_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/accelc/accelc/pkg/inventory"
)

// TestTextIsNotANodeList: kubectl's table (or any text) saved where the
// node list's JSON belongs is a TextError that names the file in the
// command that writes the JSON, not "a string where an object belongs".
func TestTextIsNotANodeList(t *testing.T) {
	dir := t.TempDir()
	for name, tc := range map[string]struct {
		content string
		table   bool
	}{
		"table.json":      {"NAME        STATUS   ROLES    AGE   VERSION\ngpu-1   Ready    <none>   2d    v1.31.2\n", true},
		"wide.yaml":       {"NAME    STATUS   ROLES    AGE   VERSION   INTERNAL-IP\ngpu-1   Ready    <none>   2d    v1.31.2   10.0.0.1\n", true},
		"notes.json":      {"the GPU nodes are gpu-1 and gpu-2\n", false},
		"number.yaml":     {"42\n", false},
		"tabs-table.json": {"NAME\tSTATUS\tROLES\ngpu-1\tReady\t<none>\n", true},
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(dir, name)
			require.NoError(t, os.WriteFile(path, []byte(tc.content), 0o644))
			_, err := inventory.ReadSnapshot(path)
			var te *inventory.TextError
			require.True(t, errors.As(err, &te), "%v", err)
			assert.Equal(t, tc.table, te.Table)
			assert.Contains(t, err.Error(), path+": ")
			assert.Contains(t, err.Error(), "kubectl get nodes -o json > "+path)
		})
	}
}

// TestNodeArrays: a JSON or YAML array of nodes reads as the list it was
// cut from.
func TestNodeArrays(t *testing.T) {
	const node = `{"kind": "Node", "metadata": {"name": "%s", "labels": {"nvidia.com/gpu.product": "NVIDIA-L4"}}, "status": {"capacity": {"nvidia.com/gpu": "1"}}}`
	for name, data := range map[string]string{
		"json": "[" + fmt.Sprintf(node, "a") + ",\n" + fmt.Sprintf(node, "b") + "]",
		"yaml": "- kind: Node\n  metadata: {name: a}\n- kind: Node\n  metadata: {name: b}\n",
	} {
		t.Run(name, func(t *testing.T) {
			nodes, problems, err := inventory.Decode([]byte(data))
			require.NoError(t, err)
			assert.Empty(t, problems)
			require.Len(t, nodes, 2)
			assert.Equal(t, "a", nodes[0].Metadata.Name)
			assert.Equal(t, "b", nodes[1].Metadata.Name)
		})
	}
}
