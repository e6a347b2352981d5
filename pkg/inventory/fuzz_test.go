package inventory_test

import (
	"os"
	"strings"
	"testing"

	"github.com/accelc/accelc/pkg/catalog"
	"github.com/accelc/accelc/pkg/inventory"
)

// FuzzDecode feeds arbitrary bytes to the snapshot decoder and classifier:
// no input may panic, and a decoded node always classifies.
func FuzzDecode(f *testing.F) {
	real, err := os.ReadFile("../../testdata/nodes/real-nodes-sample.json")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(real)
	f.Add([]byte(`{"kind":"NodeList","items":[{"metadata":{"name":"a","labels":{"nvidia.com/gpu.product":"Tesla-T4-SHARED"}}}]}`))
	f.Add([]byte("kind: List\nitems:\n- metadata: {name: x}\n  status: {capacity: {nvidia.com/gpu: 8}}\n"))
	f.Add([]byte(`{"kind":"Node","metadata":{"name":"n"}}`))
	f.Add([]byte(`{"kind":"List","items":[null, 3, {"metadata":{"name":7}}]}`))
	cat, err := catalog.Builtin()
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		raw, problems, err := inventory.Decode(data)
		if err != nil {
			if len(raw) > 0 || len(problems) > 0 {
				t.Fatal("an unreadable document returns no nodes")
			}
			return
		}
		inv := inventory.Classify(raw, cat, inventory.Options{})
		for _, n := range inv.Nodes {
			if n.AcceleratorType == "" || n.Status == "" || n.Sharing == "" {
				t.Fatalf("incomplete node %+v", n)
			}
		}
		_ = inv.Summary()
	})
}

// FuzzGFDProduct checks the product parser: it never panics, and a
// catalog product keeps its class whatever sharing or MIG suffix GFD
// appends.
func FuzzGFDProduct(f *testing.F) {
	cat, err := catalog.Builtin()
	if err != nil {
		f.Fatal(err)
	}
	for _, c := range cat.Classes() {
		for _, v := range c.IdentifiedBy[catalog.LabelGFDProduct] {
			f.Add(v, "")
			f.Add(v, "-SHARED")
			f.Add(v, "-MIG-1g.10gb")
			f.Add(v, "-MIG-1g.5gb-SHARED")
			f.Add(v, "-MIG-INVALID")
		}
	}
	f.Fuzz(func(t *testing.T, product, suffix string) {
		p := inventory.ParseGFDProduct(product + suffix)
		if len(p.Base) > len(product+suffix) {
			t.Fatalf("base %q longer than %q", p.Base, product+suffix)
		}
		base, ok := cat.ByLabel(catalog.LabelGFDProduct, product)
		if !ok || strings.Contains(strings.ToUpper(product), "-MIG-") || strings.HasSuffix(strings.ToUpper(product), "-SHARED") {
			return
		}
		switch suffix {
		case "-SHARED", "-MIG-1g.10gb", "-MIG-1g.5gb-SHARED", "-MIG-INVALID":
			got, ok := cat.ByLabel(catalog.LabelGFDProduct, p.Base)
			if !ok || got.ID != base.ID {
				t.Fatalf("%q%s: class changed from %s", product, suffix, base.ID)
			}
		}
	})
}
