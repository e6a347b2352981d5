// Package sibling finds accelc's companion programs (accelc-core,
// accelc-policytest), which make build puts beside accelc and go install
// puts in the same bin folder.
package sibling

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
)

// Find looks for the program name beside the running executable, else on
// PATH. It returns the program's path, or, where it is in neither place,
// the running executable's path (for the error) and false.
func Find(name string) (path, exe string, ok bool) {
	if runtime.GOOS == "windows" {
		name += ".exe"
	}
	exe, err := os.Executable()
	if err == nil {
		p := filepath.Join(filepath.Dir(exe), name)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			return p, exe, true
		}
	}
	if p, err := exec.LookPath(name); err == nil {
		return p, exe, true
	}
	return "", exe, false
}

// InstallHint says how to get the program name: make build, or go install
// at this build's module version ("VERSION" for a development build).
func InstallHint(name string) string {
	version := "VERSION"
	if bi, ok := debug.ReadBuildInfo(); ok && strings.HasPrefix(bi.Main.Version, "v") {
		version = bi.Main.Version
	}
	return fmt.Sprintf("`make build` builds it beside accelc into bin/; `go install github.com/accelc/accelc/cmd/%s@%s` installs it", name, version)
}
