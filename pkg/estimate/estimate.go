// Package estimate answers the questions a user asks before a job starts:
// how long training takes and what it costs on each hardware profile
// (Estimate), and which profiles meet a model's needs (Recommend). It
// reads the catalog document accelc renders (catalogdoc.Document), the
// same data a model catalog or estimation service queries.
//
// # Training time
//
// A dense transformer's training costs about 6 × P × T floating-point
// operations for P parameters and T tokens (2 for the forward pass, 4 for
// the backward pass; Kaplan et al. 2020, "Scaling Laws for Neural Language
// Models"). Time on G devices is
//
//	hours = 6 × P × T / (G × peak × MFU) / 3600
//
// where peak is the device's dense tensor throughput at the training
// precision (BF16, else FP16 for mixed precision) and MFU the share of it a
// real run achieves (0.4 unless told: well-tuned large runs reach 0.4–0.5).
// When an admin recorded measured training throughput for the model on a
// type (tokens per second per device), that wins:
//
//	hours = T / (G × measured) / 3600
//
// A type with neither figure gets no estimate, never a guess.
//
// # Slices and replicas
//
// A profile over shared GPUs hands a pod a MIG slice or a time-sliced or
// MPS replica, not a GPU: its memory is the slice's (or the GPU's over the
// replicas) and its peak the GPU's times the device's compute share (a
// 3g.40gb of an A100: 3/7; a replica of three: 1/3, what it gets when the
// others are busy). Measurements were taken on whole GPUs and say nothing
// of a slice. A device whose share the catalog does not give gets no
// estimate.
//
// # Memory
//
// Mixed-precision training with Adam holds 16 bytes per parameter: 2 for
// the weights, 2 for the gradients, 12 for FP32 master weights and the two
// moments. Sharded across G devices (ZeRO-3 / FSDP), each device needs
// 16 × P / G bytes. Activations are not counted: the figure is a floor.
//
// # Cost
//
// cost = hours × G × the type's costPerHour.
package estimate

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/accelc/accelc/pkg/catalogdoc"
)

// DefaultMFU is the model FLOPs utilization assumed when none is given.
const DefaultMFU = 0.4

// BytesPerParam is what mixed-precision Adam training holds per parameter.
const BytesPerParam = 16

// ParseCount reads a count written as people write parameter and token
// counts: "1.5B", "70B", "2T", "350M", "100k", or a plain number.
func ParseCount(s string) (float64, error) {
	v := strings.TrimSpace(s)
	mult := 1.0
	if v != "" {
		switch v[len(v)-1] {
		case 'k', 'K':
			mult = 1e3
		case 'm', 'M':
			mult = 1e6
		case 'b', 'B', 'g', 'G':
			mult = 1e9
		case 't', 'T':
			mult = 1e12
		}
		if mult != 1 {
			v = v[:len(v)-1]
		}
	}
	n, err := strconv.ParseFloat(v, 64)
	if err != nil || n <= 0 || math.IsInf(n, 0) || math.IsNaN(n) {
		return 0, fmt.Errorf("%q is not a count: write it as 1.5B, 70B, 2T, 350M or 100k", s)
	}
	return n * mult, nil
}

// Training is a training run to estimate.
type Training struct {
	Params float64
	Tokens float64
	// Precision is bf16, fp16 or fp32.
	Precision string
	// MFU is the share of peak throughput achieved (0 means DefaultMFU).
	MFU float64
	// GPUs is the number of devices (0 means 1).
	GPUs int
	// Model names the model, to find measured throughput in the catalog.
	Model string
}

func (t Training) gpus() int { return max(t.GPUs, 1) }

// MFUUsed is the MFU the estimate uses: MFU, or DefaultMFU when unset.
func (t Training) MFUUsed() float64 {
	if t.MFU <= 0 {
		return DefaultMFU
	}
	return t.MFU
}

// FLOPs is the run's total compute: 6 × parameters × tokens.
func (t Training) FLOPs() float64 { return 6 * t.Params * t.Tokens }

// MemoryPerGPUGB is the memory each device needs for weights, gradients
// and optimizer state, in GB (10^9 bytes).
func (t Training) MemoryPerGPUGB() float64 {
	return BytesPerParam * t.Params / float64(t.gpus()) / 1e9
}

// Report is one training run's estimates as `accelc estimate -o json`
// and serve's /api/v1/estimate write them: the run's figures as used
// (the defaults filled in), then an estimate per profile and type.
type Report struct {
	Params         float64    `json:"params"`
	Tokens         float64    `json:"tokens"`
	Precision      string     `json:"precision"`
	GPUs           int        `json:"gpus"`
	MFU            float64    `json:"mfu"`
	MemoryPerGPUGB float64    `json:"memoryPerGPUGB"`
	Estimates      []Estimate `json:"estimates"`
}

// ReportOf is the report of t's estimates es.
func ReportOf(t Training, es []Estimate) Report {
	return Report{
		Params: t.Params, Tokens: t.Tokens, Precision: t.Precision, GPUs: t.GPUs, MFU: t.MFUUsed(),
		MemoryPerGPUGB: t.MemoryPerGPUGB(), Estimates: es,
	}
}

// Estimate is the answer for one profile and type.
type Estimate struct {
	Profile     string `json:"profile"`
	DisplayName string `json:"displayName"`
	Type        string `json:"acceleratorType"`
	TypeName    string `json:"typeDisplayName"`
	// Device is what one device of a profile over shared GPUs is ("1g.10gb
	// slice"); empty for whole GPUs, which GPUs then counts.
	Device    string `json:"device,omitempty"`
	GPUs      int    `json:"gpus"`
	Available int    `json:"available"`
	// Hours is nil when there is no estimate; Why says why.
	Hours *float64 `json:"hours,omitempty"`
	// Basis says which figures the time came from.
	Basis string `json:"basis,omitempty"`
	// MemoryGB is what each device needs; Fits whether the type has it.
	MemoryGB float64 `json:"memoryPerGPUGB"`
	Fits     bool    `json:"fits"`
	// CostPerHour is for all GPUs; TotalCost for the run. Nil when the
	// type has no cost recorded.
	CostPerHour *float64 `json:"costPerHour,omitempty"`
	TotalCost   *float64 `json:"totalCost,omitempty"`
	Why         string   `json:"why,omitempty"`

	typeIndex, types int // the type's place in its profile, of how many
}

// Train estimates a training run on every type of every enabled profile
// of the catalog, fastest first; those without an estimate come last.
func Train(doc *catalogdoc.Document, t Training) []Estimate {
	var out []Estimate
	for _, p := range doc.Profiles {
		if !p.Enabled {
			continue
		}
		for i := range p.Types {
			e := estimateOne(&p, &p.Types[i], t)
			e.typeIndex, e.types = i, len(p.Types)
			out = append(out, e)
		}
	}
	sortEstimates(out)
	return out
}

func estimateOne(p *catalogdoc.Profile, ct *catalogdoc.Type, t Training) Estimate {
	e := Estimate{
		Profile: p.Name, DisplayName: p.DisplayName, Type: ct.ID, TypeName: ct.DisplayName,
		GPUs: t.gpus(), Available: ct.Available, MemoryGB: t.MemoryPerGPUGB(),
	}
	memGB, memName, cost, share := ct.MemoryGB, ct.DisplayName, ct.CostPerHour, 1.0
	switch d := ct.Device; {
	case d != nil:
		// A slice or a replica: its memory, its share of the compute,
		// its share of the cost.
		e.Device = d.Name
		memGB, memName, cost, share = d.MemoryGB, d.Name, d.CostPerHour, d.ComputeShare
		if p.Sharing != nil && p.Sharing.Mode == "mig" {
			memName = "a " + d.Name
		}
		e.Fits = e.MemoryGB <= float64(memGB)
		if share <= 0 || share > 1 {
			e.Why = fmt.Sprintf("no estimate: the catalog does not say what share of %s's compute a %s has", ct.DisplayName, d.Name)
			return e
		}
	default:
		if slice, gb, ok := migSlice(p.ResourceName); ok {
			e.Device = slice + " slice"
			e.Fits = e.MemoryGB <= float64(gb)
			e.Why = fmt.Sprintf("no estimate: a %s MIG slice has a share of %s's throughput that the catalog does not record", slice, ct.DisplayName)
			return e
		}
	}
	e.Fits = e.MemoryGB <= float64(memGB)
	if cost != nil {
		perHour := *cost * float64(e.GPUs)
		e.CostPerHour = &perHour
	}
	hours, basis, why := trainingHours(ct, t, share, deviceShare(p, e.Device))
	if why != "" {
		e.Why = why
		return e
	}
	e.Hours, e.Basis = &hours, basis
	if e.CostPerHour != nil {
		total := hours * *e.CostPerHour
		e.TotalCost = &total
	}
	if !e.Fits {
		unit, more := "GPU", "use more GPUs (--gpus) or a larger type"
		if e.Device != "" {
			unit, more = "device", "use more devices (--gpus) or a profile with larger ones"
		}
		e.Why = fmt.Sprintf("needs %.0fGB per %s for weights, gradients and optimizer state; %s has %dGB: %s",
			math.Ceil(e.MemoryGB), unit, memName, memGB, more)
	}
	return e
}

// deviceShare says whose compute share an estimate over a device takes:
// "" for a whole GPU.
func deviceShare(p *catalogdoc.Profile, device string) string {
	switch {
	case device == "":
		return ""
	case p.Sharing != nil && p.Sharing.Mode != "mig":
		return p.Sharing.Mode + ": a replica's share when every replica is busy"
	}
	return "the compute of its " + device
}

// trainingHours applies the formulas of the package documentation; share
// is the device's share of the GPU's compute (1 for a whole GPU), and
// device says what the share is ("" for a whole GPU).
func trainingHours(ct *catalogdoc.Type, t Training, share float64, device string) (hours float64, basis, why string) {
	g := float64(t.gpus())
	if m, ok := ct.Performance[t.Model]; ok && t.Model != "" && m.TrainingTokensPerSecond > 0 && device == "" {
		return t.Tokens / (g * m.TrainingTokensPerSecond) / 3600,
			fmt.Sprintf("measured %s tokens/s per GPU for %s", thousands(m.TrainingTokensPerSecond), t.Model), ""
	}
	peak, name, aside := 0.0, "", ""
	switch strings.ToLower(t.Precision) {
	case "", "bf16":
		peak, name = ct.BF16TFLOPS, "BF16"
		if peak == 0 && ct.FP16TFLOPS > 0 {
			peak, name, aside = ct.FP16TFLOPS, "FP16", " ("+ct.Architecture+" has no BF16)"
		}
	case "fp16":
		peak, name = ct.FP16TFLOPS, "FP16"
	default:
		return 0, "", fmt.Sprintf("no estimate: the catalog has no %s throughput for %s", strings.ToUpper(t.Precision), ct.DisplayName)
	}
	if peak == 0 {
		return 0, "", fmt.Sprintf("no estimate: no %s throughput or measured performance for %s (record performance in CUE)", name, ct.DisplayName)
	}
	seconds := t.FLOPs() / (g * peak * share * 1e12 * t.MFUUsed())
	part := ""
	if device != "" {
		part = fmt.Sprintf(" × %s of the GPU (%s)", fraction(share), device)
	}
	return seconds / 3600, fmt.Sprintf("6 × params × tokens at %s %s TFLOPS%s%s × MFU %.2f", thousands(peak), name, aside, part, t.MFUUsed()), ""
}

// fraction prints a share as the fraction it is: 3/7, 1/3; else 0.43.
func fraction(v float64) string {
	for den := 2; den <= 16; den++ {
		num := math.Round(v * float64(den))
		if num >= 1 && math.Abs(num/float64(den)-v) < 1e-9 {
			return fmt.Sprintf("%.0f/%d", num, den)
		}
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

// sortEstimates orders by time, those that fit first; no estimate last.
func sortEstimates(es []Estimate) {
	rank := func(e *Estimate) int {
		switch {
		case e.Hours == nil:
			return 2
		case !e.Fits:
			return 1
		}
		return 0
	}
	slices.SortStableFunc(es, func(a, b Estimate) int {
		if c := cmp.Compare(rank(&a), rank(&b)); c != 0 {
			return c
		}
		if a.Hours != nil && b.Hours != nil {
			if c := cmp.Compare(*a.Hours, *b.Hours); c != 0 {
				return c
			}
		}
		return cmp.Or(cmp.Compare(a.typeIndex, b.typeIndex), cmp.Compare(a.types, b.types),
			strings.Compare(a.Profile, b.Profile), strings.Compare(a.Type, b.Type))
	})
}

// String prints an estimate as the seed shows it: "Premium GPU (NVIDIA
// H200 141GB): 2.1 hours at $5.00/hour = $10.50 total".
func (e Estimate) String() string {
	head := fmt.Sprintf("%s (%s", e.DisplayName, e.TypeName)
	if e.Device != "" {
		head += " · " + e.Device
	}
	if e.GPUs > 1 {
		head += fmt.Sprintf(" × %d", e.GPUs)
	}
	head += ")"
	if e.Hours == nil {
		return head + ": " + e.Why
	}
	s := fmt.Sprintf("%s: %s", head, duration(*e.Hours))
	if e.CostPerHour != nil {
		s += fmt.Sprintf(" at %s/hour = %s total", money(*e.CostPerHour), money(*e.TotalCost))
	} else {
		s += ", no cost recorded"
	}
	if !e.Fits {
		s += "; does not fit: " + e.Why
	}
	return s
}

func duration(hours float64) string {
	switch {
	case hours < 1:
		return fmt.Sprintf("%.0f minutes", math.Max(hours*60, 1))
	case hours < 100:
		return fmt.Sprintf("%.1f hours", hours)
	default:
		return fmt.Sprintf("%.0f hours (%.1f days)", hours, hours/24)
	}
}

func money(v float64) string { return "$" + strconv.FormatFloat(v, 'f', 2, 64) }

// thousands prints 95000 as "95,000" and 989 as "989".
func thousands(v float64) string {
	s := strconv.FormatFloat(v, 'f', -1, 64)
	intPart, frac, _ := strings.Cut(s, ".")
	var b strings.Builder
	for i, r := range intPart {
		if i > 0 && (len(intPart)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if frac != "" {
		b.WriteString("." + frac)
	}
	return b.String()
}
