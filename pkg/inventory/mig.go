package inventory

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// MIG shows on a node in more ways than GPU Feature Discovery's
// per-profile counts: a snapshot may carry only some of GFD's per-profile
// labels, only the device plugin's nvidia.com/mig-<profile> capacity (with
// nvidia.com/gpu at 0), only the single strategy's per-device labels
// (nvidia.com/gpu.slices.gi, …), or only the MIG manager's
// nvidia.com/mig.config. Any of them means the node hands out MIG slices,
// never whole GPUs alone.

// MIG manager and GFD labels.
const (
	lblMIGConfig      = "nvidia.com/mig.config"
	lblMIGConfigState = "nvidia.com/mig.config.state"
	lblMIGStrategy    = "nvidia.com/mig.strategy"
)

// migProfileLabel is a GFD per-profile label of the mixed strategy:
// nvidia.com/mig-<profile>.<attribute> (count, memory, multiprocessors,
// engines.copy, slices.gi, product, replicas…).
var migProfileLabel = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^nvidia\.com/mig-([0-9]+g\.[0-9]+gb[a-z0-9.+-]*?)\.(count|memory|multiprocessors|product|replicas|sharing-strategy|engines\.[a-z]+|slices\.[a-z]+)$`)
})

// migSingleDeviceLabels are the labels GFD writes for the MIG device a
// single-strategy node advertises as nvidia.com/gpu; a whole GPU has none.
var migSingleDeviceLabels = []string{"nvidia.com/gpu.slices.gi", "nvidia.com/gpu.slices.ci", "nvidia.com/gpu.multiprocessors"}

// migProfileName is a MIG profile as MIG config names carry it ("all-1g.10gb").
var migProfileName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9]+g\.[0-9]+gb$`) })

// migSignals is what a node's labels and capacity say of MIG.
type migSignals struct {
	// counts are the per-profile .count labels.
	counts map[string]int
	// profiles are the profiles any per-profile label names, sorted.
	profiles []string
	// capacity is the nvidia.com/mig-<profile> capacity above 0.
	capacity map[string]int
	// singleLabel is a single-strategy device label on the node, or "".
	singleLabel string
	// config, state and strategy are the MIG manager's and GFD's labels.
	config, state, strategy string
}

func readMIG(labels map[string]string, res resources) migSignals {
	m := migSignals{counts: migMixedCounts(labels), capacity: res.migCapacity}
	seen := map[string]bool{}
	for k := range labels {
		if !strings.HasPrefix(k, "nvidia.com/") {
			continue
		}
		if sm := migProfileLabel().FindStringSubmatch(k); sm != nil {
			seen[sm[1]] = true
		}
		// The first in order, whatever the map's.
		if strings.HasPrefix(k, "nvidia.com/gpu.engines.") && (m.singleLabel == "" || k < m.singleLabel) {
			m.singleLabel = k
		}
	}
	m.profiles = slices.Sorted(maps.Keys(seen))
	for _, k := range migSingleDeviceLabels {
		if _, ok := labels[k]; ok {
			m.singleLabel = k
			break
		}
	}
	m.config = strings.TrimSpace(labels[lblMIGConfig])
	m.state = strings.TrimSpace(labels[lblMIGConfigState])
	m.strategy = strings.TrimSpace(labels[lblMIGStrategy])
	return m
}

// configEnabled reports whether the MIG manager's config turns MIG on:
// any config but all-disabled, unless applying it failed.
func (m migSignals) configEnabled() bool {
	return m.config != "" && m.config != "all-disabled" && m.state != "failed"
}

// configProfile is the one profile a config of the form all-<profile>
// cuts every GPU into, or "".
func (m migSignals) configProfile() string {
	p, ok := strings.CutPrefix(m.config, "all-")
	if !ok || !migProfileName().MatchString(p) {
		return ""
	}
	return p
}

// mode says how MIG shows on a node whose product label is p: MIG single
// or mixed, or "" for none, and which signal says so. The product's
// -MIG- suffix is read by the caller.
func (m migSignals) mode() (Sharing, string) {
	switch {
	case len(m.counts) > 0:
		return MIGMixed, "per-profile nvidia.com/mig-<profile>.count labels"
	case len(m.profiles) > 0:
		return MIGMixed, fmt.Sprintf("per-profile labels of %s", strings.Join(m.profiles, ", "))
	case len(m.capacity) > 0:
		return MIGMixed, fmt.Sprintf("capacity %s", migList(m.capacity))
	case m.singleLabel != "":
		return MIGSingle, "the MIG device label " + m.singleLabel
	case m.configEnabled():
		why := fmt.Sprintf("%s=%s", lblMIGConfig, m.config)
		if m.state != "" {
			why += fmt.Sprintf(" (%s)", m.state)
		}
		if m.strategy == "single" {
			return MIGSingle, why
		}
		return MIGMixed, why
	}
	return "", ""
}

// devices are the MIG devices the signals count: the .count labels, else
// the capacity; nil when neither says.
func (m migSignals) devices() map[string]int {
	if len(m.counts) > 0 {
		return m.counts
	}
	return m.capacity
}

// note says what the node's MIG is and what is not known of it.
func migNote(mode Sharing, why string, devices map[string]int, m migSignals) string {
	s := fmt.Sprintf("MIG %s from %s", strings.TrimPrefix(string(mode), "mig-"), why)
	if len(devices) == 0 {
		s += "; slice counts not reported"
		if p := m.configProfile(); p != "" {
			s += fmt.Sprintf(" (the config cuts each GPU into %s slices)", p)
		}
	}
	return s
}
