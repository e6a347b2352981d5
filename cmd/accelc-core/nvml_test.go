package main

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestResolveNodeName: the flag, else NODE_NAME, else the host name.
// inventory nvml reads NVML before it prints the name, so no script on a
// machine without the driver sees it.
func TestResolveNodeName(t *testing.T) {
	t.Setenv("NODE_NAME", "from-downward-api")
	got, err := resolveNodeName("from-flag")
	require.NoError(t, err)
	assert.Equal(t, "from-flag", got)
	got, err = resolveNodeName("")
	require.NoError(t, err)
	assert.Equal(t, "from-downward-api", got)

	t.Setenv("NODE_NAME", "")
	host, err := os.Hostname()
	require.NoError(t, err)
	got, err = resolveNodeName("")
	require.NoError(t, err)
	assert.Equal(t, host, got)
}
