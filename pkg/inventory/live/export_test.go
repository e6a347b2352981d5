package live

import (
	"context"

	"github.com/accelc/accelc/pkg/inventory"
)

// Method is how a read asks the API server: the tests read the same
// server every way and want the same snapshot; the benchmark compares.
type Method = method

// Methods name Read's default and each lever turned back from it.
var Methods = []struct {
	Name string
	M    Method
}{
	{"default", fastest},
	{"quorum", method{quorum: true}},
	{"json", method{json: true}},
	{"no-gzip", method{noGzip: true}},
}

// ReadWith is Read asking the server as m says.
func ReadWith(ctx context.Context, opts Options, m Method) (*inventory.Snapshot, error) {
	return read(ctx, opts, m)
}

// The former decoding through corev1 types, for the benchmark's
// comparison (proto_test.go).
var (
	PodAcceleratorsReference = podAcceleratorsReference
	RawFromNodeReference     = rawFromNodeReference
)
