package nvml

// Why NVML cannot be read: no driver, or no cgo.

import "errors"

// ErrNoDriver is returned when NVML's library, which the NVIDIA driver
// installs, cannot be loaded.
var ErrNoDriver = errors.New("NVML not available: the NVIDIA driver (libnvidia-ml.so.1) is not installed on this machine; run accelc inventory nvml on a GPU node, e.g. as a Job with the NVIDIA container runtime")

// ErrNoCgo is returned by Local in a binary built without cgo, which
// cannot call NVML.
var ErrNoCgo = errors.New("NVML not available: this accelc was built without cgo (CGO_ENABLED=0); build it with `make build-nvml` and run it on a node with the NVIDIA driver")
