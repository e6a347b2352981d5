//go:build !cgo

package nvml

// Local returns ErrNoCgo: NVML is reachable only from a binary built with
// cgo (`make build-nvml`).
func Local(node string) (*Report, error) {
	return nil, ErrNoCgo
}
