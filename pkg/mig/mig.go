// Package mig knows the MIG geometry of each MIG-capable accelerator type
// (schemas/mig.cue) and checks a layout against it: that every profile
// exists on the model, and that the instances can be placed on one GPU
// without overlapping, as NVML would place them. A layout that passes here
// is one mig-parted can apply.
package mig

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/cuecontext"

	"github.com/accelc/accelc/schemas"
)

// Profile is a GPU instance profile: its compute and memory slices and
// the memory slices it may start at.
type Profile struct {
	Compute    int   `json:"compute"`
	Memory     int   `json:"memory"`
	Starts     []int `json:"starts"`
	OncePerGPU bool  `json:"oncePerGPU"`
}

// Geometry is one model's MIG shape.
type Geometry struct {
	ComputeSlices int                `json:"computeSlices"`
	MemorySlices  int                `json:"memorySlices"`
	Profiles      map[string]Profile `json:"profiles"`
}

var builtin struct {
	once sync.Once
	geo  map[string]Geometry
	err  error
}

// Builtin returns the embedded MIG geometry by accelerator class id.
func Builtin() (map[string]Geometry, error) {
	builtin.once.Do(func() {
		v, err := schemas.Build(cuecontext.New())
		if err != nil {
			builtin.err = err
			return
		}
		mv := v.LookupPath(cue.ParsePath("mig"))
		if err := mv.Validate(cue.Concrete(true)); err != nil {
			builtin.err = fmt.Errorf("built-in MIG geometry: %w", err)
			return
		}
		builtin.err = mv.Decode(&builtin.geo)
	})
	return builtin.geo, builtin.err
}

// Placement is one GPU instance placed on a GPU.
type Placement struct {
	Profile string `json:"profile"`
	Start   int    `json:"start"`
}

// Place finds where each instance of layout (profile → count) goes on one
// GPU. The error says what does not exist or does not fit, and what does.
func (g Geometry) Place(layout map[string]int) ([]Placement, error) {
	var instances []string
	compute, media := 0, 0
	for _, name := range slices.Sorted(maps.Keys(layout)) {
		n := layout[name]
		if n < 0 {
			return nil, fmt.Errorf("%s: a count cannot be negative", name)
		}
		p, err := g.Lookup(name)
		if err != nil {
			return nil, err
		}
		compute += n * p.Compute
		if p.OncePerGPU {
			media += n
		}
		for range n {
			instances = append(instances, name)
		}
	}
	if len(instances) == 0 {
		return nil, fmt.Errorf("the layout has no instance: give at least one profile a count")
	}
	if media > 1 {
		return nil, fmt.Errorf("%d instances with media extensions (+me): a GPU has one", media)
	}
	if compute > g.ComputeSlices {
		return nil, fmt.Errorf("the instances need %d compute slices; the GPU has %d", compute, g.ComputeSlices)
	}
	// Largest first: they have the fewest places to go.
	slices.SortStableFunc(instances, func(a, b string) int {
		pa, pb := g.Profiles[a], g.Profiles[b]
		return cmp.Or(cmp.Compare(pb.Memory, pa.Memory), cmp.Compare(len(pa.Starts), len(pb.Starts)), strings.Compare(a, b))
	})
	used := make([]bool, g.MemorySlices)
	placed := make([]Placement, 0, len(instances))
	var place func(i int) bool
	place = func(i int) bool {
		if i == len(instances) {
			return true
		}
		p := g.Profiles[instances[i]]
		for _, s := range p.Starts {
			if s+p.Memory > g.MemorySlices || !free(used, s, p.Memory) {
				continue
			}
			// Instances of one profile take starts in increasing order:
			// the same placement in another order is no new solution.
			if i > 0 && instances[i-1] == instances[i] && s < placed[len(placed)-1].Start {
				continue
			}
			mark(used, s, p.Memory, true)
			placed = append(placed, Placement{Profile: instances[i], Start: s})
			if place(i + 1) {
				return true
			}
			placed = placed[:len(placed)-1]
			mark(used, s, p.Memory, false)
		}
		return false
	}
	if !place(0) {
		return nil, fmt.Errorf("%s cannot be placed on one GPU: the instances need %d of %d memory slices at the offsets NVML allows (for example a 3g instance starts only at slice 0 or 4, a 1g never at 7)",
			Describe(layout), g.memoryNeeded(layout), g.MemorySlices)
	}
	slices.SortFunc(placed, func(a, b Placement) int { return cmp.Compare(a.Start, b.Start) })
	return placed, nil
}

// Lookup returns one of the model's profiles, or an error that names the
// model's own profile of the same compute slices and lists them all.
func (g Geometry) Lookup(name string) (Profile, error) {
	p, ok := g.Profiles[name]
	if !ok {
		return Profile{}, fmt.Errorf("no MIG profile %s on this GPU%s; it has %s", name, didYouMean(name, g), strings.Join(g.names(), ", "))
	}
	return p, nil
}

// MemoryGB is the memory a profile's name gives it: 40 for "3g.40gb" and
// "3g.40gb+me"; 0 for a name not of that form.
func MemoryGB(profile string) int {
	_, mem, ok := strings.Cut(profile, ".")
	if !ok {
		return 0
	}
	mem, _, _ = strings.Cut(mem, "+")
	gb, ok := strings.CutSuffix(mem, "gb")
	if !ok {
		return 0
	}
	n, err := strconv.Atoi(gb)
	if err != nil || n <= 0 {
		return 0
	}
	return n
}

// ResourceName is the extended resource the NVIDIA device plugin
// advertises for a profile under the mixed strategy.
func ResourceName(profile string) string { return "nvidia.com/mig-" + profile }

func free(used []bool, start, n int) bool {
	for i := start; i < start+n; i++ {
		if used[i] {
			return false
		}
	}
	return true
}

func mark(used []bool, start, n int, v bool) {
	for i := start; i < start+n; i++ {
		used[i] = v
	}
}

func (g Geometry) memoryNeeded(layout map[string]int) int {
	n := 0
	for name, c := range layout {
		n += c * g.Profiles[name].Memory
	}
	return n
}

func (g Geometry) names() []string {
	names := make([]string, 0, len(g.Profiles))
	for n := range g.Profiles {
		names = append(names, n)
	}
	slices.SortFunc(names, func(a, b string) int {
		pa, pb := g.Profiles[a], g.Profiles[b]
		return cmp.Or(cmp.Compare(pa.Compute, pb.Compute), cmp.Compare(pa.Memory, pb.Memory), strings.Compare(a, b))
	})
	return names
}

// didYouMean suggests the profile of the same compute slices on this GPU:
// "7g.80gb" on an A100 40GB is its "7g.40gb".
func didYouMean(name string, g Geometry) string {
	compute, _, _ := strings.Cut(name, ".")
	var same []string
	for _, n := range g.names() {
		if c, _, _ := strings.Cut(n, "."); c == compute && !strings.Contains(n, "+") {
			same = append(same, n)
		}
	}
	if len(same) == 0 {
		return ""
	}
	return " (did you mean " + strings.Join(same, " or ") + "?)"
}

// Describe writes a layout as "2×2g.20gb + 1×3g.40gb", profiles in
// order, those with no instance left out.
func Describe(layout map[string]int) string {
	var parts []string
	for _, name := range slices.Sorted(maps.Keys(layout)) {
		if layout[name] > 0 {
			parts = append(parts, fmt.Sprintf("%d×%s", layout[name], name))
		}
	}
	return strings.Join(parts, " + ")
}
