// Package nvml owns accelc's NVML node report: what one GPU node says
// about its own GPUs through the NVIDIA Management Library, read on the
// node itself (`accelc inventory nvml`, run as a Job or DaemonSet).
//
// A Report lists, per GPU, the product name, memory, PCI device id,
// architecture, MIG mode and MIG devices by profile, and the NVLink
// topology as local GPU indexes; and the driver and CUDA versions. It
// leaves out, by construction, everything that identifies a machine
// rather than a type of hardware: serial numbers, UUIDs, PCI bus ids and
// addresses are never read into it (PCI bus ids are compared in memory to
// match NVLink peers, and dropped). Report.NodeObject turns a report into
// the v1 Node that GPU Feature Discovery and the device plugin would make
// of the node, which pkg/inventory classifies like any other snapshot.
//
// Reading NVML needs cgo, so Collect and the files that import go-nvml
// build only with cgo; without it, Local reports ErrNoCgo and the rest of
// the package (the report, its labels and its Node) still builds, which
// keeps a CGO_ENABLED=0 accelc static. A binary that links go-nvml must be
// linked with lazy binding (`-ldflags=-extldflags=-Wl,-z,lazy`, which
// `make build-nvml` passes; cgo does not accept the flag in a #cgo
// directive): go-nvml leaves NVML's symbols undefined until it opens
// libnvidia-ml.so.1, and a toolchain that binds symbols at start-up (-z
// now) makes such a binary die before main on a machine without the
// driver.
package nvml
