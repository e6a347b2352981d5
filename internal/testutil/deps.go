package testutil

import (
	"os/exec"
	"strings"
	"testing"
)

// ForbidDeps fails t for every package pkg links (go list -deps) that
// banned names, with the chain of imports that brings it in. A banned
// entry ending in "/" names every package under it; any other names the
// package and its subpackages. allowed are packages let through although
// banned names them.
func ForbidDeps(t testing.TB, pkg string, banned []string, allowed ...string) {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", "-f", `{{.ImportPath}}:{{join .Imports " "}}`, pkg).Output()
	if err != nil {
		t.Fatalf("go list -deps %s: %v", pkg, err)
	}
	imports := map[string][]string{}
	var order []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		p, deps, _ := strings.Cut(line, ":")
		imports[p] = strings.Fields(deps)
		order = append(order, p)
	}
	root := order[len(order)-1] // go list -deps lists pkg last
	for _, p := range order {
		if contains(allowed, p) {
			continue
		}
		for _, b := range banned {
			if p == b || strings.HasPrefix(p, b) && (strings.HasSuffix(b, "/") || p[len(b)] == '/') {
				t.Errorf("%s links %s: %s", root, p, chain(imports, root, p))
				break
			}
		}
	}
}

// chain is the shortest path of imports from root to pkg.
func chain(imports map[string][]string, root, pkg string) string {
	prev := map[string]string{root: ""}
	queue := []string{root}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		if p == pkg {
			links := []string{p}
			for q := prev[p]; q != ""; q = prev[q] {
				links = append([]string{q}, links...)
			}
			return strings.Join(links, " → ")
		}
		for _, d := range imports[p] {
			if _, seen := prev[d]; !seen {
				prev[d] = p
				queue = append(queue, d)
			}
		}
	}
	return pkg
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
