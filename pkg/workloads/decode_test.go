package workloads_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	"github.com/accelc/accelc/pkg/workloads"
)

// snapshotJSON is a snapshot as `kubectl get nodes,resourceslices,pods,
// deployments -A -o json` writes one: the Node and ResourceSlice are the
// inventory's, the ConfigMap nobody's.
const snapshotJSON = `{
  "apiVersion": "v1",
  "kind": "List",
  "items": [
    {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "h200-01"}},
    {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "train", "namespace": "team-a", "uid": "d-1",
      "managedFields": [{"manager": "kubectl"}]},
     "spec": {"replicas": 2, "template": {"spec": {"containers": [{"name": "app", "image": "train:1", "args": ["--token=s3cret"]}]}}},
     "status": {"replicas": 2, "readyReplicas": 2}},
    {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web", "namespace": "team-b"},
     "spec": {"containers": [{"name": "app", "image": "web:1", "resources": {"limits": {"cpu": 0.5}}}]}, "status": {"phase": "Running", "podIP": "10.1.2.3"}},
    {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "train-5d8f9-a", "namespace": "team-a",
      "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "train-5d8f9", "uid": "rs-1", "controller": true}]},
     "spec": {"containers": [{"name": "app", "image": "train:1"}]}},
    {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "h200-01-gpu"}, "spec": {"driver": "gpu.nvidia.com"}},
    {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings", "namespace": "team-a"}},
    {"apiVersion": "example.com/v1", "kind": "Job", "metadata": {"name": "not-batch", "namespace": "team-a"}}
  ]
}
`

func names(s *workloads.Set) []string {
	var out []string
	for _, u := range s.Objects {
		out = append(out, workloads.RefOf(u).String())
	}
	return out
}

func TestDecode(t *testing.T) {
	want := []string{"Pod team-a/train-5d8f9-a", "Pod team-b/web", "Deployment team-a/train"}
	set, err := workloads.Decode([]byte(snapshotJSON))
	require.NoError(t, err)
	assert.Equal(t, want, names(set), "pods first; nodes, slices and other kinds left out")
	assert.Empty(t, set.Warnings)
	assert.Len(t, set.Pods(), 2)
	assert.Equal(t, map[string]any{"phase": "Running"}, set.Objects[1].Object["status"])
	assert.NotContains(t, set.Objects[2].Object, "status", "a Deployment's status has no phase")
	assert.NotContains(t, mustJSON(t, set.Objects[2].Object), "s3cret")
	assert.NotContains(t, mustJSON(t, set.Objects[2].Object), "managedFields")
	replicas, _, _ := unstructuredInt(set.Objects[2].Object, "spec", "replicas")
	assert.Equal(t, int64(2), replicas, "integers are int64, as unstructured holds them")
	limits := set.Objects[1].Object["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)["resources"].(map[string]any)["limits"].(map[string]any)
	assert.Equal(t, 0.5, limits["cpu"])

	t.Run("YAML", func(t *testing.T) {
		data, err := yaml.JSONToYAML([]byte(snapshotJSON))
		require.NoError(t, err)
		fromYAML, err := workloads.Decode(data)
		require.NoError(t, err)
		assert.Equal(t, want, names(fromYAML))
		for i := range set.Objects {
			assert.Equal(t, set.Objects[i].Object, fromYAML.Objects[i].Object)
		}
	})

	t.Run("one object", func(t *testing.T) {
		one, err := workloads.Decode([]byte("apiVersion: batch/v1\nkind: Job\nmetadata: {name: j, namespace: team-a}\n"))
		require.NoError(t, err)
		assert.Equal(t, []string{"Job team-a/j"}, names(one))
	})

	t.Run("no workloads", func(t *testing.T) {
		for _, doc := range []string{
			`{"kind": "NodeList", "items": [{"metadata": {"name": "n"}}]}`,
			`{"kind": "List", "items": []}`,
			`{"kind": "Node", "metadata": {"name": "n"}}`,
			`{"kind": "NVMLReport", "nodeObject": {"kind": "Node"}}`,
		} {
			set, err := workloads.Decode([]byte(doc))
			require.NoError(t, err, doc)
			require.NotNil(t, set)
			assert.Empty(t, set.Objects)
			assert.Empty(t, set.Pods())
		}
	})
}

func unstructuredInt(obj map[string]any, fields ...string) (int64, bool, error) {
	var v any = obj
	for _, f := range fields {
		m, ok := v.(map[string]any)
		if !ok {
			return 0, false, nil
		}
		v = m[f]
	}
	i, ok := v.(int64)
	return i, ok, nil
}

// TestDecodeBadItems: every bad item of a workload kind is named, with its
// line where the document is JSON; a document that cannot be read at all
// says where.
func TestDecodeBadItems(t *testing.T) {
	bad := `{"kind": "List", "items": [
  {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "ok", "namespace": "a"}},
  {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "no-namespace"}},
  {"kind": "Pod", "metadata": {"name": "no-version", "namespace": "a"}},
  {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d", "namespace": "a", "labels": {"gpus": 8}, "ownerReferences": [{"kind": "X"}]}},
  {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "ok", "namespace": "a"}},
  {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": 7, "namespace": "a"}, "spec": []},
  3,
  {"apiVersion": "v1", "kind": "Node", "metadata": {"name": 7}}
]}`
	_, err := workloads.Decode([]byte(bad))
	require.Error(t, err)
	assert.Equal(t, `line 3: items[1] (Pod no-namespace): no metadata.namespace
line 4: items[2] (Pod a/no-version): no apiVersion: write the object as kubectl prints it
line 5: items[3] (Deployment a/d): metadata.labels["gpus"]: a number where a string belongs; metadata.ownerReferences[0]: no apiVersion; metadata.ownerReferences[0]: no name
line 6: items[4] (Pod a/ok): listed twice (also items[0])
line 7: items[5]: metadata.name: a number where a string belongs; spec: a list where an object belongs`, err.Error())

	data, err := yaml.JSONToYAML([]byte(bad))
	require.NoError(t, err)
	_, err = workloads.Decode(data)
	require.Error(t, err)
	assert.True(t, strings.HasPrefix(err.Error(), "items[1] (Pod no-namespace): no metadata.namespace\nitems[2]"), "YAML has no lines once read: %v", err)

	for _, tc := range []struct{ doc, want string }{
		{"", "empty file: expected a List, as `kubectl get pods -A -o json` prints"},
		{"{\"kind\": \"List\",\n \"items\": [\n {\"kind\": \"Pod\",}]}", "line 3: not valid JSON: invalid character ',' at start of value"},
		{"kind: List\nitems: [\n", "line 2: not JSON or YAML: yaml: line 2: did not find expected node content"},
		{`[{"kind": "Pod"}]`, "not an object: expected a List, as `kubectl get pods -A -o json` prints"},
		{`{"kind": "List"} {"kind": "List"}`, "more than one document: expected one List"},
	} {
		_, err := workloads.Decode([]byte(tc.doc))
		if assert.Error(t, err, tc.doc) {
			assert.Equal(t, tc.want, err.Error(), tc.doc)
		}
	}
}

func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "inventory.json")
	require.NoError(t, os.WriteFile(path, []byte(snapshotJSON), 0o644))
	set, err := workloads.ReadFile(path)
	require.NoError(t, err)
	assert.Len(t, set.Objects, 3)

	require.NoError(t, os.WriteFile(path, []byte("{\"kind\": \"List\", \"items\": [\n{\"apiVersion\": \"v1\", \"kind\": \"Pod\", \"metadata\": {\"name\": \"p\"}}]}"), 0o644))
	_, err = workloads.ReadFile(path)
	var we *workloads.Error
	require.ErrorAs(t, err, &we)
	assert.Equal(t, path+":2: items[0] (Pod p): no metadata.namespace", err.Error())

	_, err = workloads.ReadFile(filepath.Join(dir, "missing.json"))
	require.ErrorAs(t, err, &we)
	assert.Contains(t, err.Error(), "missing.json: open ")
}
