package publish

// The Git checkout a cluster directory is in: its commit, branch, time
// and origin, for the artifact's provenance.

import (
	"os/exec"
	"strings"
	"sync"
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
// it is not in one (or git is not installed). It runs git twice, one
// after the other: the commit and branch at once, then (where there is
// a commit) its time and origin's URL side by side, each git costing a
// few milliseconds of every render and push.
func Checkout(dir string) GitCheckout {
	run := func(args ...string) string {
		out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).Output()
		if err != nil {
			return ""
		}
		return strings.TrimSpace(string(out))
	}
	var g GitCheckout
	// "<commit>\n<branch>"; the branch is HEAD when detached.
	commit, branch, _ := strings.Cut(run("rev-parse", "HEAD", "--abbrev-ref", "HEAD"), "\n")
	if commit == "" {
		return g
	}
	if branch == "" {
		branch = "HEAD"
	}
	g.Revision = branch + "@sha1:" + commit
	var committed string
	var wg sync.WaitGroup
	wg.Go(func() { committed = run("log", "-1", "--format=%cI", commit) })
	g.Remote = run("remote", "get-url", "origin")
	wg.Wait()
	if t, err := time.Parse(time.RFC3339, committed); err == nil {
		g.Committed = t
	}
	return g
}
