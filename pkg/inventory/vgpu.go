package inventory

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/accelc/accelc/pkg/catalog"
)

// An NVIDIA vGPU guest sees a virtual GPU whose NVML name is the vGPU
// type: the board, then the framebuffer in GB and the series letter (A, B,
// C for compute, Q), "GRID A100-10C" on older drivers, "NVIDIA A16-4Q" on
// newer ones; GPU Feature Discovery sets nvidia.com/vgpu.present=true. The
// board is the class; the framebuffer is the guest's share of it.

// vgpuProfile is a vGPU type in a product name.
type vgpuProfile struct {
	// board is the product without the type ("GRID-A100").
	board string
	// profile is the type's suffix ("10C"); gb its framebuffer.
	profile string
	gb      int
}

var vgpuSuffix = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(.+)-([0-9]+)([ABCQ])$`) })

// parseVGPU reads a vGPU type from a product (without GFD's suffixes) on
// a node that GFD marks as a vGPU guest, or whose product carries the
// GRID brand only vGPUs have.
func parseVGPU(base string, labels map[string]string) (vgpuProfile, bool) {
	base = strings.TrimSpace(base)
	grid := len(base) > 5 && strings.EqualFold(base[:5], "GRID-")
	if !grid && labels["nvidia.com/vgpu.present"] != "true" {
		return vgpuProfile{}, false
	}
	m := vgpuSuffix().FindStringSubmatch(base)
	if m == nil {
		return vgpuProfile{}, false
	}
	gb, err := strconv.Atoi(m[2])
	if err != nil || gb <= 0 {
		return vgpuProfile{}, false
	}
	return vgpuProfile{board: m[1], profile: m[2] + m[3], gb: gb}, true
}

// note says what the guest has of the board.
func (v vgpuProfile) note(class *catalog.Class) string {
	board := catalog.NormalizeLabelValue(catalog.LabelGFDProduct, v.board)
	if class == nil {
		return fmt.Sprintf("NVIDIA vGPU %s-%s: %dGB of a %s board shared with the host's other guests; the board's memory is not in the name: pin the type in cluster.nodes", board, v.profile, v.gb, board)
	}
	if v.gb >= class.MemoryGB {
		return fmt.Sprintf("NVIDIA vGPU %s-%s: the whole %s's %dGB, through the hypervisor", board, v.profile, class.DisplayName, class.MemoryGB)
	}
	return fmt.Sprintf("NVIDIA vGPU %s-%s: %dGB of the %s's %dGB, shared with the host's other guests", board, v.profile, v.gb, class.DisplayName, class.MemoryGB)
}
