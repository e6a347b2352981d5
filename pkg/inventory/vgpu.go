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
// type, which GPU Feature Discovery writes as the product: "GRID-A100-10C"
// on older drivers, "NVIDIA-A16-4Q" on newer ones. GFD also sets
// nvidia.com/vgpu.present=true and nvidia.com/vgpu.host-driver-version and
// -branch. A vGPU is a sharing mode: the guest gets the framebuffer the
// type names, time-sliced with the host's other guests or on a MIG slice,
// never the board to itself. The board is the class.
//
// A type name is the board, the framebuffer in GB and the series letter (A,
// B, C for compute, Q): A100-10C. A MIG-backed type puts the GPU
// instance's compute slices between them and may end in an attribute:
// A100-4-20C, A100D-1-10CME (NVIDIA's vgpu-device-manager, pkg/types). The
// board's name tells its variants apart where the model does not: NVIDIA's
// vGPU tables (NVIDIA AI Enterprise, "NVIDIA vGPU (C-Series)": the
// peer-to-peer, NVSwitch and MIG-backed type tables) name an A100 PCIe
// 40GB's types A100-, an A100 HGX 40GB's A100X-, the 80GB boards' A100D-
// (PCIe) and A100DX- (HGX); H100- is the H100 PCIe 80GB, H100XM- the SXM5
// 80GB, H100L- the H100 NVL; H200X- the SXM5 H200 and H200- the NVL;
// H20- the 96GB H20 and H20X- the 141GB one.

// vgpuProfile is a vGPU type in a product name.
type vgpuProfile struct {
	// board is the type's board ("A100", "A100D", "H100XM").
	board string
	// profile is the type without its board ("10C", "4-20C"); gb its
	// framebuffer; slices the compute slices of a MIG-backed type.
	profile string
	gb      int
	slices  int
}

// vgpuTimeSliced and vgpuMIGBacked are NVIDIA's forms of a type name
// (vgpu-device-manager's timeSlicedRegex and migBackedRegex), matched
// against the product without GFD's brand prefixes.
var (
	vgpuTimeSliced = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^([A-Z0-9]+(?:-[A-Z]+)*)-(0|[1-9][0-9]*)([ABCQ])$`)
	})
	vgpuMIGBacked = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^([A-Z0-9]+)-([1-9])-(0|[1-9][0-9]*)([ABCQ])(ME|NOME|MEALL|GFX)?$`)
	})
)

// GFD's vGPU labels.
const (
	lblVGPUPresent    = "nvidia.com/vgpu.present"
	lblVGPUHostDriver = "nvidia.com/vgpu.host-driver-version"
)

// vgpuGuest reports whether GFD's labels mark the node a vGPU guest.
func vgpuGuest(labels map[string]string) bool {
	return labels[lblVGPUPresent] == "true" || strings.TrimSpace(labels[lblVGPUHostDriver]) != ""
}

// parseVGPU reads a vGPU type from a product (without GFD's suffixes). A
// type name has a shape no physical GPU's NVML name has (a framebuffer
// and a series letter after the last dash), so the shape alone is a vGPU;
// GFD's vGPU labels are not needed, and a snapshot may lack them.
func parseVGPU(base string) (vgpuProfile, bool) {
	norm := catalog.NormalizeLabelValue(lblProduct, base)
	if m := vgpuMIGBacked().FindStringSubmatch(norm); m != nil {
		gb, err := strconv.Atoi(m[3])
		if err != nil || gb <= 0 {
			return vgpuProfile{}, false
		}
		slices, _ := strconv.Atoi(m[2])
		return vgpuProfile{board: m[1], profile: m[2] + "-" + m[3] + m[4] + m[5], gb: gb, slices: slices}, true
	}
	m := vgpuTimeSliced().FindStringSubmatch(norm)
	if m == nil {
		return vgpuProfile{}, false
	}
	gb, err := strconv.Atoi(m[2])
	if err != nil || gb <= 0 {
		return vgpuProfile{}, false
	}
	return vgpuProfile{board: m[1], profile: m[2] + m[3], gb: gb}, true
}

// vgpuBoard is what a vGPU board name says of the board: its catalog
// model and memory.
type vgpuBoard struct {
	model    string
	memoryGB int
}

// vgpuBoards are the board names whose model alone does not name one
// class, from NVIDIA's vGPU type tables (see the top of this file).
var vgpuBoards = map[string]vgpuBoard{
	"A100": {"A100", 40}, "A100X": {"A100", 40}, "A100D": {"A100", 80}, "A100DX": {"A100", 80},
	"A800": {"A800", 40}, "A800D": {"A800", 80}, "A800DX": {"A800", 80},
	"H100": {"H100", 80}, "H100XM": {"H100", 80}, "H100L": {"H100-NVL", 94},
	"H800": {"H800", 80}, "H800XM": {"H800", 80}, "H800L": {"H800-NVL", 94},
	"H200": {"H200", 141}, "H200X": {"H200", 141},
	"H20": {"H20", 96}, "H20X": {"H20", 141},
	"V100": {"V100", 16}, "V100X": {"V100", 16}, "V100D": {"V100", 32}, "V100DX": {"V100", 32},
	"RTX6000P": {"RTX-6000", 24}, "RTX8000P": {"RTX-8000", 48},
}

// class finds the board's class: by the board's name in NVIDIA's tables,
// else as a product, else by model among the classes whose memory can
// hold the type's framebuffer and what nvidia.com/gpu.memory says the
// guest has.
func (v vgpuProfile) class(cat *catalog.Catalog, memValue string) (*catalog.Class, string) {
	if b, ok := vgpuBoards[v.board]; ok {
		cands := cat.ByModel("nvidia", b.model)
		if c, why := pickByMemory(cands, b.memoryGB, "NVIDIA's vGPU board name "+v.board); c != nil {
			return c, "model " + b.model + why
		}
	}
	if c, ok := cat.ByLabel(lblProduct, v.board); ok {
		return c, "vGPU board " + v.board
	}
	c, why := matchByModel(cat, v.board, "", lblMemory, false)
	if c != nil {
		return c, why
	}
	// Boards too small for what the guest has are not it.
	need := v.gb
	if mib, ok := memoryMiB(memValue); ok && int(mib/1024) > need {
		need = int(mib / 1024)
	}
	var fits []*catalog.Class
	for _, t := range []string{v.board, strings.Split(v.board, "-")[0]} {
		for _, cand := range cat.ByModel("nvidia", t) {
			if cand.MemoryGB*115/100 >= need {
				fits = append(fits, cand)
			}
		}
		if len(fits) > 0 {
			break
		}
	}
	if len(fits) == 1 {
		return fits[0], fmt.Sprintf("model %s, the only one with room for %dGB", fits[0].Model, need)
	}
	return nil, why
}

// note says what the guest has of the board.
func (v vgpuProfile) note(class *catalog.Class) string {
	kind := "time-sliced with the host's other guests"
	if v.slices > 0 {
		kind = fmt.Sprintf("on a MIG instance of %d compute slices", v.slices)
	}
	if class == nil {
		return fmt.Sprintf("NVIDIA vGPU %s-%s: %dGB of a %s board, %s; the board's memory is not in the name: pin the type in cluster.nodes", v.board, v.profile, v.gb, v.board, kind)
	}
	if v.gb >= class.MemoryGB {
		return fmt.Sprintf("NVIDIA vGPU %s-%s: the whole %s's %dGB, through the hypervisor", v.board, v.profile, class.DisplayName, class.MemoryGB)
	}
	return fmt.Sprintf("NVIDIA vGPU %s-%s: %dGB of the %s's %dGB, %s", v.board, v.profile, v.gb, class.DisplayName, class.MemoryGB, kind)
}
