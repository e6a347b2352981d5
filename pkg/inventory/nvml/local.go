//go:build cgo

package nvml

import "github.com/NVIDIA/go-nvml/pkg/nvml"

// Local reads the report of this machine, the node named node, through
// its NVML library. Without the NVIDIA driver it returns ErrNoDriver.
func Local(node string) (*Report, error) {
	return Collect(nvml.New(), node)
}
