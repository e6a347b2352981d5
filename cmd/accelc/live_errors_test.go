package main

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLiveErrorsHideCredentials (issue 15, finding 3): `--live` against a
// kubeconfig whose server URL holds a password (where net/url reads it,
// where it refuses it, and in the query) exits 3, names the server, and
// prints the password nowhere.
func TestLiveErrorsHideCredentials(t *testing.T) {
	const secret = "LiveS3cret"
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	for _, server := range []string{
		"https://alice:" + secret + "@" + addr,
		"https://alice:pa%zz" + secret + "@" + addr,
		"https://alice:pa ss" + secret + "@" + addr,
		"https://" + addr + "/?token=" + secret,
	} {
		kc := filepath.Join(t.TempDir(), "kubeconfig")
		require.NoError(t, os.WriteFile(kc, []byte(fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: %q, insecure-skip-tls-verify: true}}]
users: [{name: u, user: {username: alice, password: %s-basic}}]
contexts: [{name: ctx, context: {cluster: c, user: u}}]
current-context: ctx
`, server, secret)), 0o600))
		for _, args := range [][]string{
			{"inventory", "show", "--live", "--kubeconfig", kc},
			{"inventory", "snapshot", "--live", "--kubeconfig", kc, "-o", filepath.Join(t.TempDir(), "s.json")},
			{"render", "../../examples/clusters/small-lab", "--live", "--kubeconfig", kc, "-o", filepath.Join(t.TempDir(), "out")},
		} {
			code, stdout, stderr := runMain(args...)
			assert.Equal(t, exitOutside, code, "%s: %s", server, stderr)
			assert.NotContains(t, stdout+stderr, secret, server)
			assert.Contains(t, stderr, "the API server ", server)
		}
	}
}
