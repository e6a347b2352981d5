package accelc

import (
	"os/exec"
	"strings"
	"time"
)

// GitCheckout is what the Git checkout a cluster directory is in says
// about the configuration's version.
type GitCheckout struct {
	// Remote is origin's URL as Git gives it, credentials and all: never
	// print or publish it but through safeurl.
	Remote string
	// Revision is <branch>@sha1:<commit>, as Flux writes revisions
	// (HEAD@sha1:… for a detached checkout).
	Revision string
	// Committed is the commit's time.
	Committed time.Time
}

// Checkout reads the Git checkout dir is in; every field is empty where
// it is not in one (or git is not installed).
func Checkout(dir string) GitCheckout {
	run := func(args ...string) string {
		out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).Output()
		if err != nil {
			return ""
		}
		return strings.TrimSpace(string(out))
	}
	var g GitCheckout
	commit := run("rev-parse", "HEAD")
	if commit == "" {
		return g
	}
	branch := run("rev-parse", "--abbrev-ref", "HEAD")
	if branch == "" {
		branch = "HEAD"
	}
	g.Revision = branch + "@sha1:" + commit
	if t, err := time.Parse(time.RFC3339, run("log", "-1", "--format=%cI", "HEAD")); err == nil {
		g.Committed = t
	}
	g.Remote = run("remote", "get-url", "origin")
	return g
}
