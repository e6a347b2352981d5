package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"strings"
	"testing"

	"k8s.io/klog/v2"
)

// client-go's error lines (klog) stay off the commands' stderr; serve's
// log carries them, marked.
func TestClientGoLog(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	saved := os.Stderr
	os.Stderr = w
	Main([]string{"version"}, io.Discard, io.Discard)
	klog.ErrorS(errors.New("context canceled"), "Unexpected error when reading response body")
	klog.Flush()
	os.Stderr = saved
	w.Close()
	got, _ := io.ReadAll(r)
	if len(got) != 0 {
		t.Errorf("client-go wrote to stderr: %q", got)
	}

	var log bytes.Buffer
	clientGoTo(&log)
	defer quietClientGo()
	klog.ErrorS(errors.New("connection refused"), "Failed to watch")
	if !strings.Contains(log.String(), "client-go:") || !strings.Contains(log.String(), "Failed to watch") {
		t.Errorf("serve's log = %q, want client-go's line", log.String())
	}
}
