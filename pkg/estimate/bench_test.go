package estimate_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/accelc/accelc/pkg/catalogdoc"
	"github.com/accelc/accelc/pkg/estimate"
)

// bigCatalog is the seed catalog's profiles repeated to n profiles.
func bigCatalog(n int) []byte {
	seed := seedCatalog(4)
	doc := catalogdoc.Document{SchemaVersion: catalogdoc.SchemaVersion}
	for i := range n {
		p := seed.Profiles[i%3]
		p.Name = fmt.Sprintf("%s-%d", p.Name, i)
		doc.Profiles = append(doc.Profiles, p)
	}
	data, err := json.Marshal(doc)
	if err != nil {
		panic(err)
	}
	return data
}

// BenchmarkQuery is what a model catalog does per request (REQ-005: under
// 100 ms): decode the catalog document of 200 profiles, recommend for a
// model and estimate a training run on every profile.
func BenchmarkQuery(b *testing.B) {
	data := bigCatalog(200)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		var doc catalogdoc.Document
		if err := json.Unmarshal(data, &doc); err != nil {
			b.Fatal(err)
		}
		r := estimate.Recommend(&doc, estimate.Needs{MinMemory: gb(80), PreferArch: "Hopper", Model: "llama-3-70b", GPUs: 4})
		if r.Best == nil {
			b.Fatal("no recommendation")
		}
		if es := estimate.Train(&doc, estimate.Training{Params: 1.5e9, Tokens: 2e9}); len(es) != 200 {
			b.Fatalf("%d estimates", len(es))
		}
	}
}
