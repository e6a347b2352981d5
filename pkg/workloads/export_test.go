package workloads

import (
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// VisibilityEnv are the variables whose values Trim keeps.
var VisibilityEnv = visibilityEnv

// Method is how a read asks the API server, for the benchmark.
type Method = method

// Methods name ReadLive's default and each lever turned.
var Methods = []struct {
	Name string
	M    Method
}{
	{"default", fastest},
	{"no-gzip", method{noGzip: true}},
	{"cache", method{cache: true}},
	{"serial", method{serial: true}},
}

// ReadLiveWith is ReadLive asking as m says.
var ReadLiveWith = readLive

// SetOf is a Set of objs as read from a live cluster that served Kueue
// at apiVersion kueue and listed the kinds named "group/Kind".
func SetOf(objs []*unstructured.Unstructured, kueue string, queued []*unstructured.Unstructured, listed ...string) (*Set, error) {
	s := newSet(objs, nil)
	s.Kueue = kueue
	var err error
	if s.KueueWorkloads, err = kueueWorkloads(queued); err != nil {
		return nil, err
	}
	s.listed = map[objectKind]bool{}
	for _, l := range listed {
		group, kind, _ := strings.Cut(l, "/")
		s.listed[objectKind{group, kind}] = true
	}
	return s, nil
}
