package cli

import (
	"bytes"
	"testing"
)

// TestOutputFlag: -o is a format wherever its value names one (even one
// the command does not take, which is refused), and a path, moved to its
// new flag with a note, only on the commands whose -o took a path before.
func TestOutputFlag(t *testing.T) {
	for _, c := range []struct {
		pathFlag, value   string
		format, path, err string
	}{
		{"", "json", "json", "", ""},
		{"", "table", "text", "", ""},
		{"", "out", "text", "", "choose one of text, json, yaml"},
		{"output-dir", "yaml", "yaml", "", ""},
		{"output-dir", "csv", "text", "", "choose one of text, json, yaml"},
		{"output-dir", "out/lab", "text", "out/lab", ""},
		{"out-file", "-", "text", "-", ""},
		{"out-file", "json.json", "text", "json.json", ""},
	} {
		o := OutputFormats(FormatText, FormatJSON, FormatYAML)
		if c.pathFlag != "" {
			o.OrPath(c.pathFlag)
		}
		err := o.Set(c.value)
		if (err == nil) != (c.err == "") || (err != nil && err.Error() != c.err) {
			t.Errorf("-o %s (path flag %q): error %v, want %q", c.value, c.pathFlag, err, c.err)
			continue
		}
		if o.value != c.format || o.path != c.path {
			t.Errorf("-o %s (path flag %q): format %q path %q, want %q %q", c.value, c.pathFlag, o.value, o.path, c.format, c.path)
		}
	}
}

// TestOutputFlagMovesPath: a deprecated -o PATH lands in its flag with a
// note, and is refused beside that flag.
func TestOutputFlagMovesPath(t *testing.T) {
	o := OutputFormats(FormatJSON, FormatYAML).OrPath("out-file")
	if err := o.Set("snap.json"); err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	var to string
	if err := o.MovePath(&stderr, &to); err != nil || to != "snap.json" {
		t.Fatalf("moved to %q, %v", to, err)
	}
	if want := "warning: -o PATH is deprecated: use --out-file snap.json (-o takes a format now: json, yaml)\n"; stderr.String() != want {
		t.Errorf("note %q, want %q", stderr.String(), want)
	}
	to = "other.json"
	if err := o.MovePath(&stderr, &to); err == nil {
		t.Error("-o PATH beside --out-file: no error")
	}
}
