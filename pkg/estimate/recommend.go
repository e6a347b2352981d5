package estimate

// Recommending a profile: each profile's fit for the needs, and the
// choice.

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/accelc/accelc/pkg/catalog"
	"github.com/accelc/accelc/pkg/catalogdoc"
	"github.com/accelc/accelc/pkg/compile"
)

// Needs are a model's requirements and the user's objectives.
type Needs struct {
	// MinMemory is the memory each device must have (0 bytes: any). A
	// type's memory is its catalog figure in GB (10^9 bytes).
	MinMemory Size
	// PreferArch ranks types of this architecture first ("Hopper").
	PreferArch string
	// GPUs is the devices per replica (0 means 1); profiles whose maximum
	// is lower do not qualify.
	GPUs int
	// Model names the model, for measured throughput.
	Model string
	// MinTokensPerSecond is a throughput objective for one replica (0:
	// none); it needs a measurement of Model on the type.
	MinTokensPerSecond float64
	// MaxCostPerHour bounds what the replica's devices cost an hour (0:
	// no bound); it needs the type's cost.
	MaxCostPerHour float64
	// Team, when set, leaves out what the team may not use.
	Team *Entitlement
}

// Entitlement is what one team may use: the profiles and the accelerator
// types its entitlements in CUE give it.
type Entitlement struct {
	Team     string
	Profiles map[string]bool
	Types    map[string]bool
}

// ForTeam reads a team's entitlement from the compiled cluster.
func ForTeam(m *compile.Model, team string) (*Entitlement, error) {
	names := make([]string, 0, len(m.Teams))
	for i := range m.Teams {
		t := &m.Teams[i]
		names = append(names, t.Name)
		if t.Name != team {
			continue
		}
		e := &Entitlement{Team: t.Name, Profiles: map[string]bool{}, Types: map[string]bool{}}
		for j := range m.Profiles {
			if t.MayUse(&m.Profiles[j]) {
				e.Profiles[m.Profiles[j].Name] = true
			}
		}
		for _, id := range t.AcceleratorTypes {
			e.Types[id] = true
		}
		return e, nil
	}
	slices.Sort(names)
	msg := fmt.Sprintf("no team %q in cluster %s", team, m.Cluster.Name)
	if near := catalog.Closest(team, names, 1); len(near) > 0 {
		msg += fmt.Sprintf("; did you mean %s?", near[0])
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("%s: it defines no teams", msg)
	}
	return nil, fmt.Errorf("%s (teams: %s)", msg, strings.Join(names, ", "))
}

func (n Needs) gpus() int { return max(n.GPUs, 1) }

// Choice is one profile and type judged against the needs.
type Choice struct {
	Profile      string   `json:"profile"`
	DisplayName  string   `json:"displayName"`
	Type         string   `json:"acceleratorType"`
	TypeName     string   `json:"typeDisplayName"`
	Architecture string   `json:"architecture"`
	MemoryGB     int      `json:"memoryGB"`
	Available    int      `json:"available"`
	Qualifies    bool     `json:"qualifies"`
	Preferred    bool     `json:"preferredArchitecture"`
	TokensPerSec float64  `json:"tokensPerSecond,omitempty"`
	CostPerHour  *float64 `json:"costPerHour,omitempty"`
	// Why lists what qualified or ruled the choice out.
	Why []string `json:"why"`

	typeIndex, types int  // the type's place in its profile, of how many
	generic          bool // the profile names no type
}

// specificity orders the profiles that offer the same type: one that
// names types before a generic one, then the one that prefers it, then
// the one with fewest alternatives.
func specificity(a, b Choice) int {
	return cmp.Or(cmpBool(a.generic, b.generic), cmp.Compare(a.typeIndex, b.typeIndex), cmp.Compare(a.types, b.types))
}

// Recommendation is Recommend's answer.
type Recommendation struct {
	// Choices are qualifying choices best first, then the others.
	Choices []Choice `json:"choices"`
	// Best is the first qualifying choice with a device available, else
	// the first qualifying one; nil when none qualifies.
	Best *Choice `json:"best,omitempty"`
	// Advice says what to do: the fallback taken, or what to provision.
	Advice string `json:"advice"`
}

// Recommend judges every type of every enabled profile against the needs.
// Qualifying choices are ranked: the preferred architecture first, then
// those with devices available now, then higher measured throughput,
// lower cost, and less memory (leave the big cards for big models).
//
// A generic profile names no type: it runs on whatever type of its
// resource the scheduler picks, confined in a team's namespaces to the
// team's types. It is judged on each of those types (for a team, its
// entitled ones; else every whole-GPU type of its resource the catalog
// lists), as the typed profiles describe them.
func Recommend(doc *catalogdoc.Document, n Needs) Recommendation {
	var all []Choice
	for _, p := range doc.Profiles {
		if !p.Enabled {
			continue
		}
		types := p.Types
		if len(types) == 0 {
			types = genericTypes(doc, &p, n.Team)
		}
		choices := make([]Choice, 0, len(types))
		for i := range types {
			c := judge(&p, &types[i], n)
			c.typeIndex, c.types, c.generic = i, len(types), len(p.Types) == 0
			choices = append(choices, c)
		}
		if len(p.Types) == 0 {
			smallestDecides(&p, choices, n)
		}
		all = append(all, choices...)
	}
	slices.SortStableFunc(all, func(a, b Choice) int {
		return cmp.Or(
			-cmpBool(a.Qualifies, b.Qualifies),
			-cmpBool(a.Preferred, b.Preferred),
			-cmpBool(a.Available > 0, b.Available > 0),
			-cmp.Compare(a.TokensPerSec, b.TokensPerSec),
			cmp.Compare(costOf(a), costOf(b)),
			cmp.Compare(a.MemoryGB, b.MemoryGB),
			specificity(a, b),
			strings.Compare(a.Profile, b.Profile),
		)
	})
	r := Recommendation{Choices: all}
	var first *Choice
	for i := range all {
		c := &all[i]
		if !c.Qualifies {
			break
		}
		if first == nil {
			first = c
		}
		if c.Available > 0 {
			r.Best = c
			break
		}
	}
	switch {
	case first == nil:
		r.Advice = noneQualifies(all, n)
	case r.Best == nil:
		r.Best = first
		r.Advice = fmt.Sprintf("%s qualifies but has 0 available now: its pods wait until a device frees up", label(first))
	case r.Best != first:
		r.Advice = fmt.Sprintf("%s has 0 available: falling back to %s", label(first), label(r.Best))
		if first.TokensPerSec > 0 && r.Best.TokensPerSec > 0 {
			r.Advice += fmt.Sprintf(" - performance may be lower (%s vs %s tokens/s)", thousands(r.Best.TokensPerSec), thousands(first.TokensPerSec))
		}
	default:
		r.Advice = "use " + label(r.Best)
	}
	return r
}

// smallestDecides judges a generic profile by the least of its types: a
// pod of it cannot choose, the scheduler (or the team's queue, in its
// flavors' order) picks the type, so the profile meets a memory need only
// where every type it may land on does. Recommending it "on an A100"
// while its queue tries the V100 16GB first sends a 40GB model to a 16GB
// card.
func smallestDecides(p *catalogdoc.Profile, choices []Choice, n Needs) {
	if n.MinMemory.Bytes <= 0 {
		return
	}
	var short *Choice
	for i := range choices {
		c := &choices[i]
		if float64(c.MemoryGB)*1e9 < n.MinMemory.Bytes && (short == nil || c.MemoryGB < short.MemoryGB) {
			short = c
		}
	}
	if short == nil {
		return
	}
	why := fmt.Sprintf("a generic profile: its pods may get %s (%dGB < %s needed)", short.TypeName, short.MemoryGB, n.MinMemory)
	if first := firstFlavor(p, n.Team); first != "" {
		why += fmt.Sprintf(", and its queue tries %s first", first)
	}
	why += "; a profile that names the types that fit gets them"
	for i := range choices {
		if c := &choices[i]; c != short && c.Qualifies {
			c.Qualifies = false
			c.Why = append(c.Why, why)
		}
	}
}

// firstFlavor is the flavor the profile's queue tries first for the
// team (any team's, without one); empty when it schedules without Kueue.
func firstFlavor(p *catalogdoc.Profile, team *Entitlement) string {
	if p.Queue == nil {
		return ""
	}
	for _, q := range p.Queue.Teams {
		if (team == nil || q.Team == team.Team) && len(q.Flavors) > 0 {
			return q.Flavors[0].Flavor
		}
	}
	return ""
}

// genericTypes are the types a generic profile reaches: the whole-GPU
// types of its resource that the catalog's typed profiles list, the
// team's entitled ones only when a team is given, in id order.
func genericTypes(doc *catalogdoc.Document, p *catalogdoc.Profile, team *Entitlement) []catalogdoc.Type {
	byID := map[string]catalogdoc.Type{}
	for _, q := range doc.Profiles {
		if q.ResourceName != p.ResourceName {
			continue
		}
		for _, ct := range q.Types {
			if ct.Device != nil || (team != nil && !team.Types[ct.ID]) {
				continue
			}
			byID[ct.ID] = ct
		}
	}
	out := make([]catalogdoc.Type, 0, len(byID))
	for _, id := range slices.Sorted(maps.Keys(byID)) {
		out = append(out, byID[id])
	}
	return out
}

func judge(p *catalogdoc.Profile, ct *catalogdoc.Type, n Needs) Choice {
	c := Choice{
		Profile: p.Name, DisplayName: p.DisplayName, Type: ct.ID, TypeName: ct.DisplayName,
		Architecture: ct.Architecture, MemoryGB: ct.MemoryGB, Available: ct.Available, Qualifies: true,
		Preferred: n.PreferArch != "" && strings.EqualFold(ct.Architecture, n.PreferArch),
	}
	fail := func(format string, args ...any) {
		c.Qualifies = false
		c.Why = append(c.Why, fmt.Sprintf(format, args...))
	}
	pass := func(format string, args ...any) { c.Why = append(c.Why, fmt.Sprintf(format, args...)) }

	if e := n.Team; e != nil {
		switch {
		case !e.Profiles[p.Name]:
			fail("team %s may not use this profile", e.Team)
		case !e.Types[ct.ID]:
			fail("team %s is not entitled to %s", e.Team, ct.DisplayName)
		}
	}

	cost, shared := ct.CostPerHour, ct.Device != nil
	switch {
	case shared:
		// A profile over shared GPUs hands out a slice or a replica: its
		// memory and its share of the cost, not the GPU's.
		c.MemoryGB, cost = ct.Device.MemoryGB, ct.Device.CostPerHour
		if p.Sharing != nil && p.Sharing.Mode != "mig" {
			pass("%s: ~%dGB, memory not isolated", ct.Device.Name, c.MemoryGB)
		} else {
			pass("a %s", ct.Device.Name)
		}
	default:
		if slice, gb, ok := migSlice(p.ResourceName); ok {
			c.MemoryGB = gb
			pass("a %s MIG slice", slice)
		}
	}
	if n.MinMemory.Bytes > 0 {
		// The catalog's memory is in GB, 10^9 bytes: an 80GB type does
		// not have 80GiB (85.9GB).
		if float64(c.MemoryGB)*1e9 >= n.MinMemory.Bytes {
			pass("%dGB ≥ %s", c.MemoryGB, n.MinMemory)
		} else {
			fail("%dGB < %s needed", c.MemoryGB, n.MinMemory)
		}
	}
	if p.GPU.Max != nil && n.gpus() > *p.GPU.Max {
		fail("the profile allows at most %d GPUs, %d needed", *p.GPU.Max, n.gpus())
	}
	if n.PreferArch != "" && c.Preferred {
		pass("%s, as preferred", ct.Architecture)
	}
	// Throughput was measured on whole GPUs: it says nothing of a slice.
	if perf, ok := ct.Performance[n.Model]; ok && !shared && n.Model != "" && perf.TokensPerSecond > 0 {
		c.TokensPerSec = perf.TokensPerSecond
		pass("%s tokens/s measured for %s on %d GPUs", thousands(perf.TokensPerSecond), n.Model, perf.GPUs)
	}
	if n.MinTokensPerSecond > 0 {
		switch {
		case c.TokensPerSec == 0:
			fail("no measured throughput for %s on %s", modelName(n.Model), ct.DisplayName)
		case c.TokensPerSec < n.MinTokensPerSecond:
			fail("%s tokens/s < %s needed", thousands(c.TokensPerSec), thousands(n.MinTokensPerSecond))
		}
	}
	if cost != nil {
		perHour := *cost * float64(n.gpus())
		c.CostPerHour = &perHour
		if n.MaxCostPerHour > 0 && perHour > n.MaxCostPerHour {
			fail("%s/hour > %s/hour allowed", money(perHour), money(n.MaxCostPerHour))
		}
	} else if n.MaxCostPerHour > 0 {
		fail("no cost recorded for %s (set costPerHour in CUE)", ct.DisplayName)
	}
	if c.Available == 0 {
		pass("0 available now")
	}
	return c
}

func noneQualifies(all []Choice, n Needs) string {
	var wants []string
	if n.MinMemory.Bytes > 0 {
		wants = append(wants, "at least "+n.MinMemory.String()+" per GPU")
	}
	if n.MinTokensPerSecond > 0 {
		wants = append(wants, thousands(n.MinTokensPerSecond)+" tokens/s")
	}
	if n.MaxCostPerHour > 0 {
		wants = append(wants, "at most "+money(n.MaxCostPerHour)+"/hour")
	}
	var have []string
	for _, c := range all {
		if n.Team != nil && (!n.Team.Profiles[c.Profile] || !n.Team.Types[c.Type]) {
			continue
		}
		have = append(have, fmt.Sprintf("%s (%s)", c.DisplayName, c.TypeName))
	}
	if n.Team != nil {
		if len(have) == 0 {
			return fmt.Sprintf("no enabled profile has a type team %s may use: entitle it in CUE (teams.%s)", n.Team.Team, n.Team.Team)
		}
		wants = append(wants, "a profile team "+n.Team.Team+" may use")
	}
	slices.Sort(have)
	have = slices.Compact(have)
	if len(have) == 0 {
		return "no enabled profile names an accelerator type"
	}
	advice := "provision suitable hardware"
	if n.Team != nil {
		advice += fmt.Sprintf(", or entitle team %s to more in CUE (teams.%s)", n.Team.Team, n.Team.Team)
	}
	return fmt.Sprintf("no profile qualifies: requires %s; available: %s - %s",
		strings.Join(wants, ", "), strings.Join(have, ", "), advice)
}

// migSlice reads a MIG resource name (nvidia.com/mig-3g.40gb): the slice
// and its memory in GB.
func migSlice(resourceName string) (slice string, gb int, ok bool) {
	slice, ok = strings.CutPrefix(resourceName, "nvidia.com/mig-")
	if !ok {
		return "", 0, false
	}
	_, mem, _ := strings.Cut(slice, ".")
	mem, _ = strings.CutSuffix(strings.SplitN(mem, "+", 2)[0], "gb")
	gb, err := strconv.Atoi(mem)
	if err != nil || gb <= 0 {
		return "", 0, false
	}
	return slice, gb, true
}

func label(c *Choice) string { return fmt.Sprintf("%s (%s)", c.DisplayName, c.TypeName) }

func modelName(m string) string {
	if m == "" {
		return "the model (give --model)"
	}
	return m
}

func costOf(c Choice) float64 {
	if c.CostPerHour == nil {
		return 1e18
	}
	return *c.CostPerHour
}

func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}
