package accelc_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/accelc/accelc/pkg/accelc"
)

// mkFleet copies the example MultiKueue fleet (with the CUE module and the
// fleet package) and applies change, a function of the copy's folder.
func mkFleet(t *testing.T, change func(dir string)) string {
	t.Helper()
	dir := filepath.Join(copyExamples(t), "fleet-multikueue")
	if change != nil {
		change(dir)
	}
	return dir
}

func edit(t *testing.T, file, old, new string) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), old) {
		t.Fatalf("%s has no %q", file, old)
	}
	if err := os.WriteFile(file, []byte(strings.Replace(string(data), old, new, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
}

// editNodes rewrites the node list in file (kubectl's List) with change.
func editNodes(t *testing.T, file string, change func(items []map[string]any) []map[string]any) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var list struct {
		APIVersion string           `json:"apiVersion"`
		Kind       string           `json:"kind"`
		Items      []map[string]any `json:"items"`
	}
	if err := json.Unmarshal(data, &list); err != nil {
		t.Fatal(err)
	}
	list.Items = change(list.Items)
	if data, err = json.Marshal(list); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// managerErr loads the fleet and returns the manager's error ("" for
// none); every other cluster must load.
func managerErr(t *testing.T, fleet string) string {
	t.Helper()
	clusters, err := accelc.Fleet(context.Background(), fleet, accelc.Options{Stages: accelc.Rendered})
	if err != nil {
		t.Fatal(err)
	}
	msg := ""
	for _, c := range clusters {
		switch {
		case filepath.Base(c.Dir) == "manager" && c.Err != nil:
			msg = c.Err.Error()
		case c.Err != nil:
			t.Fatalf("%s: %v", c.Dir, c.Err)
		}
	}
	return msg
}

func TestFleetMultiKueue(t *testing.T) {
	if msg := managerErr(t, mkFleet(t, nil)); msg != "" {
		t.Fatalf("the example fleet: %s", msg)
	}
	for _, tc := range []struct {
		name   string
		change func(dir string)
		want   string
	}{
		{"not a worker", func(dir string) {
			edit(t, filepath.Join(dir, "gpu-east", "cluster.cue"), "multikueue: {\n\t\trole:    \"worker\"\n\t\tmanager: \"manager\"\n\t}", "")
		}, `manager/cluster.cue:19:4: cluster.multikueue.workers.gpu-east: cluster gpu-east (`},
		{"another manager's", func(dir string) {
			edit(t, filepath.Join(dir, "gpu-west", "cluster.cue"), `manager: "manager"`, `manager: "hub"`)
		}, `cluster.multikueue.workers.gpu-west: cluster gpu-west (`},
		{"no such folder", func(dir string) {
			if err := os.Rename(filepath.Join(dir, "gpu-west"), filepath.Join(dir, "west")); err != nil {
				t.Fatal(err)
			}
		}, `cluster.multikueue.workers.gpu-west: no cluster folder gpu-west in the fleet`},
		{"no LocalQueue", func(dir string) {
			edit(t, filepath.Join(dir, "gpu-east", "cluster.cue"), `"model-serving": quota: "nvidia-h200-141gb": 8`, `"model-serving": {quota: "nvidia-h200-141gb": 8, profiles: []}`)
		}, `cluster.multikueue.workers.gpu-east: worker gpu-east has no LocalQueue h200-train in serving-prod, where team model-serving's h200-train jobs are dispatched`},
		{"no node of the type", func(dir string) {
			editNodes(t, filepath.Join(dir, "gpu-west", "inventory.json"), func(items []map[string]any) []map[string]any {
				return items[:2] // the A100 nodes
			})
		}, `manager/cluster.cue:26:16: cluster.multikueue.workers.gpu-west.profiles[0]: worker gpu-west has no node of profile h200-train's types (nvidia-h200-141gb) in its inventory (it has nvidia-a100-80gb)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			msg := managerErr(t, mkFleet(t, tc.change))
			if !strings.Contains(msg, tc.want) {
				t.Errorf("the manager's error:\n%s\nwant it to hold %q", msg, tc.want)
			}
		})
	}
}

// TestWorkerNodesTypedAsTheWorkerTypesThem: a worker whose nodes carry no
// type labels, typed by its own cluster.nodes pins, has the types its
// pins give when the manager counts its nodes, whether the manager is
// loaded alone (vet, render) or with the fleet.
func TestWorkerNodesTypedAsTheWorkerTypesThem(t *testing.T) {
	fleet := mkFleet(t, func(dir string) {
		editNodes(t, filepath.Join(dir, "gpu-east", "inventory.json"), func(items []map[string]any) []map[string]any {
			for _, n := range items {
				labels := n["metadata"].(map[string]any)["labels"].(map[string]any)
				for k := range labels {
					if strings.HasPrefix(k, "nvidia.com/") || strings.HasPrefix(k, "accelerator.opendatahub.io/") || strings.HasPrefix(k, "feature.node.kubernetes.io/pci") {
						delete(labels, k)
					}
				}
			}
			return items
		})
		edit(t, filepath.Join(dir, "gpu-east", "cluster.cue"), "\tenforcement: \"deny\"\n", "\tenforcement: \"deny\"\n\tnodes: {\n\t\t\"east-h200-01\": acceleratorType: \"nvidia-h200-141gb\"\n\t\t\"east-h200-02\": acceleratorType: \"nvidia-h200-141gb\"\n\t}\n")
	})
	if msg := managerErr(t, fleet); msg != "" {
		t.Errorf("the fleet: %s", msg)
	}
	res, err := accelc.Cluster(context.Background(), filepath.Join(fleet, "manager"), accelc.Options{Stages: accelc.Checked})
	if err != nil {
		t.Fatalf("the manager alone: %v", err)
	}
	east := res.Model.Cluster.MultiKueue.WorkerNodes["gpu-east"]
	if east == nil || len(east.Nodes) != 2 || east.Nodes[0].AcceleratorType != "nvidia-h200-141gb" {
		t.Errorf("gpu-east's nodes as the manager counts them: %+v", east)
	}
}
