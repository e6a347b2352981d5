package live_test

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/accelc/accelc/pkg/inventory/live"
)

// secret is the password the kubeconfigs below hide in their server URL.
const secret = "S3cretPw"

// closedPort is a 127.0.0.1 address nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return addr
}

// kubeconfigWithServer writes a kubeconfig whose one cluster is at server
// and whose user has a password.
func kubeconfigWithServer(t *testing.T, server string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kubeconfig")
	require.NoError(t, os.WriteFile(path, []byte(fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: c
  cluster:
    server: %q
    insecure-skip-tls-verify: true
users:
- name: u
  user:
    username: alice
    password: %s-basic
contexts:
- name: ctx
  context: {cluster: c, user: u}
current-context: ctx
`, server, secret)), 0o600))
	return path
}

// serversWithSecrets are API server URLs as kubeconfigs hold them, with
// the password where net/url reads it, where it refuses it (a bad
// escape, a space), and in the query.
func serversWithSecrets(addr string) map[string]string {
	return map[string]string{
		"userinfo":     "https://alice:" + secret + "@" + addr,
		"bad escape":   "https://alice:pa%zz" + secret + "@" + addr,
		"space":        "https://alice:pa ss" + secret + "@" + addr,
		"query":        "https://" + addr + "/?token=" + secret,
		"path and '@'": "https://alice:12/" + secret + "@" + addr,
	}
}

// TestErrorsHideCredentials: whatever the kubeconfig's server URL holds,
// the error that names the server shows no password, token or query, and
// still names the host where it can.
func TestErrorsHideCredentials(t *testing.T) {
	addr := closedPort(t)
	for name, server := range serversWithSecrets(addr) {
		t.Run(name, func(t *testing.T) {
			_, err := live.Read(t.Context(), live.Options{Kubeconfig: kubeconfigWithServer(t, server)})
			var le *live.Error
			require.ErrorAs(t, err, &le)
			assert.NotContains(t, err.Error(), secret)
			assert.NotContains(t, le.Server, secret)
			if name != "path and '@'" { // there Go dials "alice", which its error names
				assert.NotContains(t, err.Error(), "alice")
			}
			if name == "userinfo" || name == "query" {
				assert.Regexp(t, `^the API server https://`+regexp.QuoteMeta(addr)+`/? \(context ctx\): cannot reach it`, err.Error())
			}
			t.Log(err)
		})
	}
	assert.False(t, strings.Contains(secret, "redacted"))
}
