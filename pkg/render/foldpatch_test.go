package render

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFoldPatchesPacksWhatFits(t *testing.T) {
	small := []string{"a ? [x] : []", "b ? [y] : []"}
	got := foldPatches(small)
	require.Len(t, got, 1)
	assert.Equal(t, "(a ? [x] : [])"+PatchPartSeparator+"(b ? [y] : [])", got[0].JSONPatch.Expression)

	// Parts of 40,000 code points: two fit one expression, the third
	// starts another; none is dropped or cut.
	big := strings.Repeat("é", 40_000)
	parts := []string{big + "1", big + "2", big + "3", big + "4", big + "5"}
	got = foldPatches(parts)
	require.Len(t, got, 3)
	var back []string
	for _, mu := range got {
		assert.LessOrEqual(t, utf8.RuneCountInString(mu.JSONPatch.Expression), CELExpressionLimit)
		ps, ok := foldedParts(mu.JSONPatch.Expression)
		require.True(t, ok)
		back = append(back, ps...)
	}
	assert.Equal(t, parts, back)

	// One part too long alone is a mutation of its own, for Validate to
	// name.
	huge := strings.Repeat("x", CELExpressionLimit+1)
	got = foldPatches([]string{"a", huge, "b"})
	require.Len(t, got, 3)
	assert.Equal(t, "("+huge+")", got[1].JSONPatch.Expression)
	assert.Empty(t, foldPatches(nil))
}

func TestChainPatches(t *testing.T) {
	got := chainPatches([]guardedPatch{{"a", "[x]"}, {"b", "[y]"}})
	require.Len(t, got, 1)
	assert.Equal(t, "a ? [x] : b ? [y] : []", got[0].JSONPatch.Expression)

	big := strings.Repeat("g", 60_000)
	got = chainPatches([]guardedPatch{{big, "[x]"}, {big, "[y]"}})
	require.Len(t, got, 2)
	assert.Equal(t, big+" ? [y] : []", got[1].JSONPatch.Expression)
}

func TestAnyHolds(t *testing.T) {
	assert.Equal(t, "a", anyHolds([]string{"a"}))
	assert.Equal(t, "(a) || (b && c)", anyHolds([]string{"a", "b && c"}))
}

// The offline engine reads the job queue policy's folded mutation back,
// part by part, and refuses one with a part it does not know.
func TestReadGangLabelPatches(t *testing.T) {
	gs := []GangLabels{
		{Profile: "gpu", Namespaces: []string{"ds-notebooks"}, Labels: map[string]string{QueueNameLabel: "gpu"}},
		{Profile: "large", Namespaces: []string{"a", "b"}, Labels: map[string]string{QueueNameLabel: "large", WorkloadPriorityLabel: "training"}},
	}
	var parts []string
	for _, g := range gs {
		parts = append(parts, gangLabelPatch(g.Profile, g.Namespaces, g.Labels))
	}
	mus := foldPatches(parts)
	require.Len(t, mus, 1)
	got, ok := ReadGangLabelPatches(mus[0].JSONPatch.Expression)
	require.True(t, ok)
	assert.Equal(t, gs, got)
	_, ok = ReadGangLabelPatches("(" + parts[0] + ")" + PatchPartSeparator + "(object.metadata.labels)")
	assert.False(t, ok)
	_, ok = ReadGangLabelPatches(parts[0])
	assert.False(t, ok, "a part not in parentheses")
}
