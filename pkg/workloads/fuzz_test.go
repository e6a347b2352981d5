package workloads_test

import (
	"encoding/json"
	"os"
	"reflect"
	"testing"

	"github.com/accelc/accelc/pkg/workloads"
)

// FuzzDecode feeds arbitrary bytes to the snapshot decoder: no input may
// panic it. What it decodes is of a Set's kinds with a name and
// namespace, holds only JSON values (unstructured's DeepCopy panics on
// any other), is trimmed already, has a workload, and written as a List
// reads back to itself.
func FuzzDecode(f *testing.F) {
	for _, path := range []string{"../../testdata/nodes/real-nodes-sample.json", "../../testdata/dra/cluster.yaml"} {
		seed, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(seed)
	}
	f.Add([]byte(snapshotJSON))
	f.Add([]byte(ownersYAML))
	f.Add([]byte(`{"kind":"List","items":[null, 3, {"kind":"Pod","apiVersion":"v1","metadata":{"name":7}}]}`))
	f.Add([]byte(`{"kind":"Pod","apiVersion":"v1","metadata":{"name":"p","namespace":"n","annotations":{}},"status":"x","spec":{"containers":[1,{"env":[2,{"name":3,"value":"v"}]}]}}`))
	f.Add([]byte("kind: List\nitems:\n- {apiVersion: v1, kind: Pod, metadata: {name: a, namespace: b, ownerReferences: [{apiVersion: v1, kind: Pod, name: a}]}}\n"))
	f.Add([]byte(`{"kind":"List","items":[{"apiVersion":"v1","kind":"Pod","metadata":{"name":"a\ud800","namespace":"n"},"spec":{"n":1e400}}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		set, err := workloads.Decode(data)
		if err != nil {
			if set != nil {
				t.Fatal("an error returns no set")
			}
			return
		}
		for _, u := range set.Objects {
			if u.GetName() == "" || u.GetNamespace() == "" || u.GetKind() == "" || u.GetAPIVersion() == "" {
				t.Fatalf("an object without its name: %v", u.Object)
			}
			c := u.DeepCopy()
			workloads.Trim(c)
			if !reflect.DeepEqual(c.Object, u.Object) {
				t.Fatalf("Trim changed a decoded object:\n%v\n%v", u.Object, c.Object)
			}
			if w := set.Workload(u); w.Kind == "" || w.Name == "" {
				t.Fatalf("no workload for %v", u.Object)
			}
		}
		var items []any
		for _, u := range set.Objects {
			items = append(items, u.Object)
		}
		out, err := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "List", "items": items})
		if err != nil {
			t.Fatal(err)
		}
		back, err := workloads.Decode(out)
		if err != nil {
			t.Fatalf("a written set does not read back: %v\n%s", err, out)
		}
		if len(back.Objects) != len(set.Objects) {
			t.Fatalf("%d objects read back from %d", len(back.Objects), len(set.Objects))
		}
		for i := range back.Objects {
			if !reflect.DeepEqual(back.Objects[i].Object, set.Objects[i].Object) {
				t.Fatalf("read back\n%v\nwhere it was\n%v", back.Objects[i].Object, set.Objects[i].Object)
			}
		}
	})
}
