package estimate

// What a user asks for (model size, rate, precision) parsed into the
// needs an estimate reads.

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/accelc/accelc/pkg/compile"
)

// Asked is a recommendation request as people write it, on the command
// line (accelc recommend's flags) or in a query (accelc serve's
// /api/v1/recommend, whose parameters have the flags' names).
type Asked struct {
	MinMemory     string // "80GiB", "80GB"
	PreferArch    string
	GPUs          int
	Model         string
	MinThroughput string // "100tok/s"
	MaxCost       string // "5/h", "$5/h"
	Team          string
}

// NeedError is a request that cannot be read: Field is the flag's (and
// query parameter's) name.
type NeedError struct {
	Field string
	Err   error
}

func (e *NeedError) Error() string { return e.Field + ": " + e.Err.Error() }
func (e *NeedError) Unwrap() error { return e.Err }

// ParseNeeds reads a request into Needs, the team's entitlement from m.
func ParseNeeds(a Asked, m *compile.Model) (Needs, error) {
	n, err := a.Needs()
	if err != nil || a.Team == "" {
		return n, err
	}
	if n.Team, err = ForTeam(m, a.Team); err != nil {
		return n, &NeedError{"team", err}
	}
	return n, nil
}

// Needs reads what the request asks of a type, all but the team (which
// needs the cluster's model: ParseNeeds).
func (a Asked) Needs() (Needs, error) {
	n := Needs{PreferArch: a.PreferArch, GPUs: a.GPUs, Model: a.Model}
	var err error
	if a.MinMemory != "" {
		if n.MinMemory, err = ParseSize(a.MinMemory); err != nil {
			return n, &NeedError{"min-memory", err}
		}
	}
	if a.GPUs < 0 {
		return n, &NeedError{"gpus", fmt.Errorf("%d: write a positive number of GPUs per replica", a.GPUs)}
	}
	if n.MinTokensPerSecond, err = parseRate(a.MinThroughput, "tok/s"); err != nil {
		return n, &NeedError{"min-throughput", err}
	}
	if n.MaxCostPerHour, err = parseRate(strings.TrimPrefix(a.MaxCost, "$"), "/h"); err != nil {
		return n, &NeedError{"max-cost", err}
	}
	if n.MinTokensPerSecond > 0 && n.Model == "" {
		return n, &NeedError{"min-throughput", fmt.Errorf("needs a model: throughput is what a model measured on a type")}
	}
	return n, nil
}

// parseRate reads "100tok/s" or "5/h" (the unit may be left out).
func parseRate(s, unit string) (float64, error) {
	if s == "" {
		return 0, nil
	}
	v := strings.TrimSuffix(strings.TrimSpace(s), unit)
	n, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("%q: write a positive number, such as 100%s", s, unit)
	}
	return n, nil
}
