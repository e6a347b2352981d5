package publish_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/accelc/accelc/internal/errkind"
	"github.com/accelc/accelc/pkg/publish"
)

// TestCheckoutOnlyWhenNeeded: git runs only where the options leave out
// something it gives (source, revision or creation time).
func TestCheckoutOnlyWhenNeeded(t *testing.T) {
	for _, c := range []struct {
		name    string
		opts    publish.Options
		readGit bool
	}{
		{"all given", publish.Options{Source: "https://example.com/fleet", Revision: "main@sha1:0123", Created: "2026-11-20T09:30:00Z"}, false},
		{"no source", publish.Options{Revision: "main@sha1:0123", Created: "2026-11-20T09:30:00Z"}, true},
		{"no revision", publish.Options{Source: "https://example.com/fleet", Created: "2026-11-20T09:30:00Z"}, true},
		{"no creation time", publish.Options{Source: "https://example.com/fleet", Revision: "main@sha1:0123"}, true},
	} {
		var calls atomic.Int32
		c.opts.Dir, c.opts.Dest = t.TempDir(), "oci://127.0.0.1:1/x:v1"
		c.opts.Checkout = func(string) publish.GitCheckout {
			calls.Add(1)
			return publish.GitCheckout{}
		}
		// An empty folder is no rendered tree: Push stops before sending
		// anything, once git (where it runs) is done.
		// The registry (nothing listens on port 1) is dialled meanwhile:
		// the tree's error, the input's, is the one said.
		_, err := publish.Push(context.Background(), c.opts)
		if err == nil {
			t.Fatalf("%s: an empty folder pushed", c.name)
		}
		if errkind.IsOutside(err) || errkind.IsUsage(err) {
			t.Errorf("%s: %v: the registry's or the options' error, not the tree's", c.name, err)
		}
		if got := calls.Load() > 0; got != c.readGit {
			t.Errorf("%s: git ran: %v, want %v", c.name, got, c.readGit)
		}
	}
}
