// Package cost attributes accelerator use to teams: from an inventory that
// counted the accelerators pods hold, per node and namespace, it prints
// what each team holds of each type and what that costs at the catalog's
// hourly prices, over a period. A device in a pool (a MIG slice, a
// time-sliced replica) costs its share of a GPU. The PrometheusRule accelc renders records
// the same figures continuously; this is the same arithmetic from one
// snapshot, for a chargeback report or a quick look.
package cost

import (
	"cmp"
	"errors"
	"slices"

	"github.com/accelc/accelc/pkg/compile"
	"github.com/accelc/accelc/pkg/inventory"
)

// Unassigned is the team of namespaces no team claims.
const Unassigned = "(no team)"

// Line is one team's use of one accelerator type.
type Line struct {
	Team        string `json:"team"`
	DisplayName string `json:"displayName"`
	Type        string `json:"acceleratorType"`
	TypeName    string `json:"typeDisplayName"`
	// Devices is what the team's pods hold now: whole GPUs, MIG slices or
	// time-sliced replicas.
	Devices int `json:"devices"`
	// GPUs is Devices in whole GPUs: a replica of a GPU time-sliced three
	// ways is a third of one, a 3g slice of an A100 three sevenths.
	GPUs float64 `json:"gpus"`
	// GPUHours is GPUs held over the period.
	GPUHours float64 `json:"gpuHours"`
	// CostPerHour and Cost are nil when the type has no price.
	CostPerHour *float64 `json:"costPerHour,omitempty"`
	Cost        *float64 `json:"cost,omitempty"`
	// Budget is the team's monthly budget, when it has one.
	Budget float64 `json:"monthlyBudget,omitempty"`
}

// ErrNoUsage is returned for an inventory without pod data.
var ErrNoUsage = errors.New("the inventory does not say what pods use: read the cluster with --live, or take the snapshot with `accelc inventory snapshot --live`")

// Chargeback attributes the accelerators pods hold to teams by namespace,
// and prices them over hours. Lines come sorted by team, then type.
func Chargeback(m *compile.Model, inv *inventory.Inventory, hours float64) ([]Line, error) {
	if !inv.UsageKnown() {
		return nil, ErrNoUsage
	}
	team := map[string]*compile.Team{}
	for i := range m.Teams {
		for _, ns := range m.Teams[i].Namespaces {
			team[ns] = &m.Teams[i]
		}
	}
	type key struct{ team, typ string }
	held := map[key]int{}
	gpus := map[key]float64{}
	pl := m.Place(inv)
	for i := range inv.Nodes {
		n := &inv.Nodes[i]
		share := 1.0
		if pool := pl.NodePool(n); pool != nil {
			share = compile.DeviceShare(pool, "")
		}
		for ns, c := range n.InUseBy {
			k := key{Unassigned, n.AcceleratorType}
			if t := team[ns]; t != nil {
				k.team = t.Name
			}
			held[k] += c
			gpus[k] += float64(c) * share
		}
	}
	lines := make([]Line, 0, len(held))
	for k, devices := range held {
		g := gpus[k]
		l := Line{Team: k.team, DisplayName: k.team, Type: k.typ, TypeName: k.typ, Devices: devices, GPUs: g, GPUHours: g * hours}
		for i := range m.Teams {
			if t := &m.Teams[i]; t.Name == k.team {
				l.DisplayName, l.Budget = t.DisplayName, t.MonthlyBudget
			}
		}
		if c, ok := m.Catalog.Get(k.typ); ok {
			l.TypeName = c.DisplayName
			if c.CostPerHour != nil {
				perHour := *c.CostPerHour * g
				total := perHour * hours
				l.CostPerHour, l.Cost = &perHour, &total
			}
		}
		lines = append(lines, l)
	}
	slices.SortFunc(lines, func(a, b Line) int {
		return cmp.Or(cmp.Compare(rank(a.Team), rank(b.Team)), cmp.Compare(a.Team, b.Team), cmp.Compare(a.Type, b.Type))
	})
	return lines, nil
}

// rank puts the unassigned namespaces last.
func rank(team string) int {
	if team == Unassigned {
		return 1
	}
	return 0
}
