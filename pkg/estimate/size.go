package estimate

// Model sizes as users write them (7B, 70GB), parsed.

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Size is an amount of memory as a user wrote it: 80GiB is 80 × 2^30
// bytes, 80GB 80 × 10^9. The two are kept apart everywhere: accelerator
// memory in the catalog is in GB (10^9 bytes), as vendors market it, so
// an "80GB" type has 80GB and not 80GiB.
type Size struct {
	// Bytes is the amount.
	Bytes float64
	// Text is what was written, normalized: "80GiB", "24GB".
	Text string
}

// sizeUnits are the units ParseSize takes, binary and decimal, in the
// order they are tried (longest first).
var sizeUnits = []struct {
	suffix string
	bytes  float64
	name   string
}{
	{"TIB", 1 << 40, "TiB"}, {"GIB", 1 << 30, "GiB"}, {"MIB", 1 << 20, "MiB"},
	{"TI", 1 << 40, "TiB"}, {"GI", 1 << 30, "GiB"}, {"MI", 1 << 20, "MiB"},
	{"TB", 1e12, "TB"}, {"GB", 1e9, "GB"}, {"MB", 1e6, "MB"},
	{"T", 1e12, "TB"}, {"G", 1e9, "GB"}, {"M", 1e6, "MB"},
}

// ParseSize reads a memory size with its unit: 80GiB or 80Gi (binary),
// 80GB or 80G (decimal, as Kubernetes quantities read G), likewise for M
// and T. A number without a unit is refused: which one was meant is not
// known.
func ParseSize(s string) (Size, error) {
	v := strings.TrimSpace(s)
	up := strings.ToUpper(v)
	for _, u := range sizeUnits {
		num, ok := strings.CutSuffix(up, u.suffix)
		if !ok {
			continue
		}
		n, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
		if err != nil || n <= 0 || math.IsInf(n, 0) || math.IsNaN(n) {
			break
		}
		return Size{Bytes: n * u.bytes, Text: strconv.FormatFloat(n, 'f', -1, 64) + u.name}, nil
	}
	if _, err := strconv.ParseFloat(v, 64); err == nil {
		return Size{}, fmt.Errorf("%q has no unit: write 80GiB (binary, 2^30 bytes) or 80GB (decimal, 10^9 bytes)", s)
	}
	return Size{}, fmt.Errorf("%q is not a memory size: write 80GiB (binary, 2^30 bytes) or 80GB (decimal, 10^9 bytes)", s)
}

// GB is the size in GB (10^9 bytes).
func (s Size) GB() float64 { return s.Bytes / 1e9 }

// String is the size as written, with its decimal GB beside a binary one:
// "80GiB (85.9GB)", "24GB".
func (s Size) String() string {
	if strings.HasSuffix(s.Text, "iB") {
		return fmt.Sprintf("%s (%sGB)", s.Text, strconv.FormatFloat(math.Round(s.GB()*10)/10, 'f', -1, 64))
	}
	return s.Text
}
