package render

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// The offline engine reads the job queue policy's expressions back: what
// it reads is what gangLabelPatch was given.
func TestReadGangLabelPatch(t *testing.T) {
	for _, g := range []GangLabels{
		{Profile: "gpu", Namespaces: []string{"ds-notebooks"}, Labels: map[string]string{QueueNameLabel: "gpu"}},
		{Profile: `odd "name"`, Namespaces: []string{"a", "b-c"}, Labels: map[string]string{QueueNameLabel: "q", WorkloadPriorityLabel: "research"}},
	} {
		got, ok := ReadGangLabelPatch(gangLabelPatch(g.Profile, g.Namespaces, g.Labels))
		assert.True(t, ok)
		assert.Equal(t, g, got)
	}
	_, ok := ReadGangLabelPatch(`object.metadata.labels`)
	assert.False(t, ok)
}
