package accelc_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/accelc/accelc/pkg/accelc"
)

// TestClusterNames: a fleet's cluster folders are those whose CUE declares
// a cluster at the top, read from any file system.
func TestClusterNames(t *testing.T) {
	fleet := fstest.MapFS{
		"prod/cluster.cue":    {Data: []byte("package prod\n\ncluster: name: \"prod\"\n")},
		"lab/a.cue":           {Data: []byte("package lab\n\nprofiles: {}\n")},
		"lab/b.cue":           {Data: []byte("package lab\n\ncluster: name: \"lab\"\n")},
		"shared/types.cue":    {Data: []byte("package shared\n\nprofiles: {}\n")},
		"broken/x.cue":        {Data: []byte("package broken\n\ncluster: {\n")},
		".git/cluster.cue":    {Data: []byte("cluster: name: \"no\"\n")},
		"notes/cluster.cue.x": {Data: []byte("cluster: name: \"no\"\n")},
	}
	got, err := accelc.ClusterNames(fleet)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"lab", "prod"}; !slices.Equal(got, want) {
		t.Errorf("cluster folders %v, want %v", got, want)
	}
}

// TestCUEPackage: suggest's file takes the package of the cluster
// directory's CUE; a directory without CUE, or CUE without a package, is
// said so.
func TestCUEPackage(t *testing.T) {
	for _, c := range []struct {
		name string
		fsys fstest.MapFS
		want string
		err  string
	}{
		{"package", fstest.MapFS{"cluster.cue": {Data: []byte("// the lab\npackage lab\n\ncluster: name: \"lab\"\n")}}, "lab", ""},
		{"no CUE", fstest.MapFS{"inventory.json": {Data: []byte("{}")}}, "", "no .cue files"},
		{"no package", fstest.MapFS{"cluster.cue": {Data: []byte("cluster: name: \"lab\"\n")}}, "", "cluster.cue: no package clause"},
	} {
		got, err := accelc.CUEPackage(c.fsys)
		if got != c.want || (err == nil) != (c.err == "") || (err != nil && err.Error() != c.err) {
			t.Errorf("%s: got %q, %v; want %q, %q", c.name, got, err, c.want, c.err)
		}
	}
}

// TestStages: a caller gets what it asks for. Compiling alone reads no
// nodes; reading them without CheckConfig does not refuse a configuration
// the nodes contradict, which Checked does.
func TestStages(t *testing.T) {
	dir := filepath.Join(examples, "small-lab")
	res, err := accelc.Cluster(context.Background(), dir, accelc.Options{})
	if err != nil || res.HasInventory() || res.Tree != nil {
		t.Fatalf("compile only: inventory %v, tree %d files, %v", res.HasInventory(), len(res.Tree), err)
	}
	res, err = accelc.Cluster(context.Background(), dir, accelc.Options{Stages: accelc.ReadNodes})
	if err != nil || !res.HasInventory() || res.Tree != nil {
		t.Fatalf("nodes: inventory %v, tree %d files, %v", res.HasInventory(), len(res.Tree), err)
	}
	// No node of small-lab's is an H100: the check says so, reading does not.
	other := filepath.Join(t.TempDir(), "h100.json")
	writeFile(t, other, `{"kind":"List","items":[{"kind":"Node","metadata":{"name":"h","labels":{"nvidia.com/gpu.product":"NVIDIA-H100-80GB-HBM3","nvidia.com/gpu.count":"8"}},"status":{"capacity":{"nvidia.com/gpu":"8"},"allocatable":{"nvidia.com/gpu":"8"}}}]}`)
	src := accelc.Source{File: other}
	if _, err := accelc.Cluster(context.Background(), dir, accelc.Options{Stages: accelc.ReadNodes, Inventory: src}); err != nil {
		t.Errorf("reading nodes alone: %v", err)
	}
	res, err = accelc.Cluster(context.Background(), dir, accelc.Options{Stages: accelc.Checked, Inventory: src})
	if err == nil && len(res.Diagnostics) == 0 {
		t.Errorf("checked against nodes of none of its types: no error and no warning")
	}
}

// TestPushRefusesOptionsFirst: a destination, tag, annotation, source or
// creation time that cannot be used is a UsageError before the tree is
// even looked at.
func TestPushRefusesOptionsFirst(t *testing.T) {
	for _, c := range []struct {
		opts accelc.PushOptions
		want string
	}{
		{accelc.PushOptions{Dest: "ghcr.io/acme/x:v1"}, "write the destination as oci://"},
		{accelc.PushOptions{Dest: "oci://ghcr.io/acme/x:v1", Tags: []string{"no/slash"}}, "--tag"},
		{accelc.PushOptions{Dest: "oci://ghcr.io/acme/x:v1", Annotations: []string{"novalue"}}, `--annotation "novalue": write key=value`},
		{accelc.PushOptions{Dest: "oci://ghcr.io/acme/x:v1", Source: "ftp://example.com/x"}, "--source: not a URL accelc can publish"},
		{accelc.PushOptions{Dest: "oci://ghcr.io/acme/x:v1", Created: "yesterday"}, "--created yesterday: give an RFC 3339 time"},
	} {
		c.opts.Dir = "/nonexistent"
		_, err := accelc.Push(context.Background(), c.opts)
		if !accelc.IsUsage(err) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want a usage error with %q", c.opts, err, c.want)
		}
	}
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}
