package cli

import (
	"bytes"
	"strings"
	"testing"
)

// TestLight: accelc runs version and push itself, unless a flag only
// accelc-core has comes with them; everything else goes to accelc-core.
func TestLight(t *testing.T) {
	for _, c := range []struct {
		args  []string
		light bool
	}{
		{[]string{"version"}, true},
		{[]string{"version", "-o", "json"}, true},
		{[]string{"push", "out", "oci://r/x:v1", "--tag", "latest"}, true},
		{[]string{"push", "--help"}, true},
		{[]string{"push", "out", "oci://r/x:v1", "--", "--cue-timeout"}, true},
		{[]string{"push", "out", "oci://r/x:v1", "--cue-timeout", "5s"}, false},
		{[]string{"push", "out", "oci://r/x:v1", "--cue-max-memory=1Gi"}, false},
		{[]string{"--cue-timeout", "5s", "version"}, false},
		{[]string{"vet"}, false},
		{[]string{"help", "push"}, false},
		{[]string{"__complete", "push", ""}, false},
		{[]string{"--help"}, false},
		{nil, false},
	} {
		if got := Light(c.args); got != c.light {
			t.Errorf("Light(%q) = %v, want %v", c.args, got, c.light)
		}
	}
}

// TestCheckFront: accelc-core warns when the accelc that ran it is of
// another version, and says nothing when run on its own or by its own.
func TestCheckFront(t *testing.T) {
	for _, c := range []struct{ front, warn string }{
		{"", ""},
		{Version(), ""},
		{"v0.0.1", "warning: accelc is v0.0.1 but accelc-core is " + Version() + ": install both from one release\n"},
	} {
		t.Setenv(frontEnv, c.front)
		var stderr bytes.Buffer
		CheckFront(&stderr)
		if stderr.String() != c.warn {
			t.Errorf("front %q: %q, want %q", c.front, stderr.String(), c.warn)
		}
	}
}

// TestLightMain: the light root runs version and refuses what push
// refuses as accelc-core's does, with the same exit codes.
func TestLightMain(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := LightMain([]string{"version"}, &stdout, &stderr); code != ExitOK || !strings.HasPrefix(stdout.String(), "accelc ") {
		t.Errorf("version: exit %d, %q %q", code, stdout.String(), stderr.String())
	}
	stdout.Reset()
	stderr.Reset()
	if code := LightMain([]string{"push", "out"}, &stdout, &stderr); code != ExitUsage || !strings.Contains(stderr.String(), "Run 'accelc push --help' for usage.") {
		t.Errorf("push with one argument: exit %d, %q", code, stderr.String())
	}
	stderr.Reset()
	if code := LightMain([]string{"push", "out", "ghcr.io/x:v1"}, &stdout, &stderr); code != ExitUsage || !strings.Contains(stderr.String(), "write the destination as oci://") {
		t.Errorf("push to a destination without oci://: exit %d, %q", code, stderr.String())
	}
	stderr.Reset()
	if code := LightMain([]string{"push", t.TempDir(), "oci://127.0.0.1:1/x:v1"}, &stdout, &stderr); code != ExitInput || !strings.Contains(stderr.String(), "not a tree accelc rendered") {
		t.Errorf("push of an empty folder: exit %d, %q", code, stderr.String())
	}
}
