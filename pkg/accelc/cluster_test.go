package accelc_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/accelc/accelc/pkg/accelc"
	"github.com/accelc/accelc/pkg/compile"
	"github.com/accelc/accelc/pkg/inventory/live"
	"github.com/accelc/accelc/pkg/render"
)

const examples = "../../examples/clusters"

// copyExamples copies the example clusters (with their CUE module) into a
// temporary folder the test may change.
func copyExamples(t *testing.T) string {
	t.Helper()
	dst := t.TempDir()
	err := os.CopyFS(dst, os.DirFS(examples))
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

func diagnostics(ds []compile.Diagnostic) string {
	lines := make([]string, len(ds))
	for i, d := range ds {
		lines[i] = d.String()
	}
	return strings.Join(lines, "\n")
}

func TestClusterRendersWithInventory(t *testing.T) {
	res, err := accelc.Cluster(context.Background(), filepath.Join(examples, "hetero-prod"), accelc.Options{
		Stages:     accelc.Rendered,
		Provenance: &render.Provenance{Revision: "main@sha1:0123456789abcdef0123456789abcdef01234567", Version: "v0.0.0-test"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if !res.HasInventory() || res.InventoryFrom != filepath.Join(examples, "hetero-prod", "inventory.json") {
		t.Errorf("InventoryFrom = %q", res.InventoryFrom)
	}
	if len(res.Tree) == 0 {
		t.Fatal("no tree")
	}
	// The example's node of unknown type, once.
	if n := strings.Count(diagnostics(res.Diagnostics), "gpu-unlabelled-02"); n != 1 {
		t.Errorf("the unknown node is reported %d times:\n%s", n, diagnostics(res.Diagnostics))
	}
	for _, d := range res.Diagnostics {
		if d.Severity != compile.Warning {
			t.Errorf("an error among the diagnostics: %s", d)
		}
	}
	found := false
	for p, data := range res.Tree {
		if strings.HasSuffix(p, ".yaml") && strings.Contains(string(data), "main@sha1:0123456789abcdef0123456789abcdef01234567") {
			found = true
			break
		}
	}
	if !found {
		t.Error("the provenance annotates no object")
	}
	types := res.NodeTypes()
	if types["worker-node-01"] == "" {
		t.Errorf("NodeTypes: %v", types)
	}
}

func TestClusterWithoutInventoryOrProvenance(t *testing.T) {
	dir := copyExamples(t)
	if err := os.Remove(filepath.Join(dir, "hetero-prod", "inventory.json")); err != nil {
		t.Fatal(err)
	}
	res, err := accelc.Cluster(context.Background(), filepath.Join(dir, "hetero-prod"), accelc.Options{Stages: accelc.Rendered})
	if err != nil {
		t.Fatal(err)
	}
	if res.HasInventory() || res.Inventory == nil || len(res.Inventory.Nodes) != 0 {
		t.Errorf("no inventory: HasInventory %v, Inventory %v", res.HasInventory(), res.Inventory)
	}
	for p, data := range res.Tree {
		if strings.Contains(string(data), render.AnnotationRevision) {
			t.Fatalf("%s carries a revision without Options.Provenance", p)
		}
	}
}

// An unreadable node is one warning, in accelc's words, and the run goes
// on with the other nodes.
func TestClusterReportsAnUnreadableNodeOnce(t *testing.T) {
	dir := copyExamples(t)
	file := filepath.Join(dir, "hetero-prod", "inventory.json")
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	items := doc["items"].([]any)
	items[0].(map[string]any)["status"].(map[string]any)["capacity"] = []any{1}
	if data, err = json.Marshal(doc); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := accelc.Cluster(context.Background(), filepath.Join(dir, "hetero-prod"), accelc.Options{Stages: accelc.Rendered})
	if err != nil {
		t.Fatal(err)
	}
	all := diagnostics(res.Diagnostics)
	if n := strings.Count(all, "worker-node-01"); n != 1 {
		t.Errorf("worker-node-01 named %d times:\n%s", n, all)
	}
	want := "warning: " + file + `: node worker-node-01 (items[0]): unreadable: status.capacity: an array where an object of quantity strings (such as {"nvidia.com/gpu": "8"}) belongs; the node is left out`
	if !strings.Contains(all, want+"\n") {
		t.Errorf("want the line\n%s\ngot\n%s", want, all)
	}
	if len(res.Inventory.Nodes) == 0 {
		t.Error("the other nodes were dropped too")
	}
}

func TestClusterErrors(t *testing.T) {
	ctx := context.Background()
	dir := copyExamples(t)
	cue := filepath.Join(dir, "small-lab", "cluster.cue")
	data, err := os.ReadFile(cue)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cue, append(data, []byte("\ncluster: name: 5\n")...), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = accelc.Cluster(ctx, filepath.Join(dir, "small-lab"), accelc.Options{Stages: accelc.Checked})
	var errs compile.Errors
	if !errors.As(err, &errs) || accelc.IsOutside(err) {
		t.Errorf("a wrong configuration: %T %v", err, err)
	}

	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: t0ps3cret}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
`), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = accelc.Cluster(ctx, filepath.Join(examples, "small-lab"), accelc.Options{
		Stages:    accelc.ReadNodes,
		Inventory: accelc.Source{Live: true, LiveOptions: live.Options{Kubeconfig: kubeconfig}},
	})
	if !accelc.IsOutside(err) {
		t.Errorf("an unreachable cluster is not an outside error: %v", err)
	}
	if err != nil && strings.Contains(err.Error(), "t0ps3cret") {
		t.Errorf("the token leaks: %v", err)
	}

	_, err = accelc.Cluster(ctx, filepath.Join(examples, "small-lab"), accelc.Options{Stages: accelc.ReadNodes, Inventory: accelc.Source{Live: true, File: "x.json"}})
	if !accelc.IsUsage(err) {
		t.Errorf("--live and --inventory together: %v", err)
	}
}

func TestSourceWarnsAboutAStaleSnapshot(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "inventory.json")
	if err := os.WriteFile(file, []byte(`{"kind":"List","accelc":{"cluster":"prod","takenAt":"2026-01-01T00:00:00Z","podsCounted":true},"items":[]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	src := accelc.Source{MaxAge: 7 * 24 * time.Hour, Now: func() time.Time { return time.Date(2026, 1, 11, 0, 0, 0, 0, time.UTC) }}
	read, err := src.Snapshot(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	want := "warning: " + file + " was taken 10d ago from cluster prod (more than --max-snapshot-age 7d): refresh it with `accelc inventory snapshot --live --out-file " + file + "`"
	if read.From != file || diagnostics(read.Diagnostics) != want {
		t.Errorf("from %q, diagnostics\n%s\nwant\n%s", read.From, diagnostics(read.Diagnostics), want)
	}
}

func TestFleet(t *testing.T) {
	dir := copyExamples(t)
	// One broken cluster folder does not stop the others.
	if err := os.WriteFile(filepath.Join(dir, "small-lab", "broken.cue"), []byte("package cluster\ncluster: teams: 5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	clusters, err := accelc.Fleet(context.Background(), dir, accelc.Options{Stages: accelc.Rendered})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range clusters {
		state := "ok"
		if c.Err != nil {
			state = "failed"
		} else if len(c.Result.Tree) == 0 {
			state = "empty"
		}
		got = append(got, filepath.Base(c.Dir)+" "+state)
	}
	if strings.Join(got, ", ") != "gpu-pools ok, hetero-prod ok, small-lab failed, tpu-trainium ok" {
		t.Errorf("fleet: %s", strings.Join(got, ", "))
	}
	if _, err := accelc.Fleet(context.Background(), t.TempDir(), accelc.Options{}); err == nil {
		t.Error("a folder with no cluster is not an error")
	}
}

func TestCheckoutOutsideGit(t *testing.T) {
	if g := accelc.Checkout(t.TempDir()); g != (accelc.GitCheckout{}) {
		t.Errorf("outside a checkout: %+v", g)
	}
}
