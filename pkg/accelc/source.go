package accelc

import (
	"context"
	"fmt"
	"time"

	"github.com/accelc/accelc/pkg/catalog"
	"github.com/accelc/accelc/pkg/compile"
	"github.com/accelc/accelc/pkg/inventory"
	"github.com/accelc/accelc/pkg/inventory/live"
)

// Source is where the nodes come from: a snapshot file (File, else the
// cluster directory's inventory.json when there is one), or with Live the
// cluster of a kubeconfig context.
type Source struct {
	File string
	Live bool
	// LiveOptions choose the kubeconfig and context of a live read.
	LiveOptions live.Options
	// MaxAge, when positive, warns about a snapshot file taken longer ago.
	MaxAge time.Duration
	// Now is the clock MaxAge is judged by; nil is time.Now.
	Now func() time.Time
}

// Check refuses a source that names its nodes two ways.
func (s *Source) Check() error {
	if s.Live && s.File != "" {
		return fmt.Errorf("--live and --inventory both name the nodes: give one")
	}
	return nil
}

// Snapshot reads the nodes as they are, unclassified, with the problems of
// the nodes it had to leave out still in it. It returns nil, and no
// error, when the source names no file and dir has no inventory.json.
// from names the source for messages; diags are the reader's warnings
// (a stale snapshot, pods a live read may not list).
func (s *Source) Snapshot(ctx context.Context, dir string) (snap *inventory.Snapshot, from string, diags []compile.Diagnostic, err error) {
	if err := s.Check(); err != nil {
		return nil, "", nil, err
	}
	if s.Live {
		snap, err := live.Read(ctx, s.LiveOptions)
		if err != nil {
			return nil, "", nil, &OutsideError{err}
		}
		for _, w := range snap.Warnings {
			diags = append(diags, warning("--live", w))
		}
		return snap, "cluster " + snap.Source.Cluster, diags, nil
	}
	file := s.File
	if file == "" {
		if file = compile.DefaultInventory(dir); file == "" {
			return nil, "", nil, nil
		}
	}
	snap, err = inventory.ReadSnapshot(file)
	if err != nil {
		return nil, "", nil, err
	}
	now := time.Now
	if s.Now != nil {
		now = s.Now
	}
	if age, ok := snap.Source.Age(now()); ok && s.MaxAge > 0 && age > s.MaxAge {
		diags = append(diags, warning("", fmt.Sprintf("%s was taken %s ago from cluster %s (more than --max-snapshot-age %s): refresh it with `accelc inventory snapshot --live -o %s`",
			file, RoundAge(age), snap.Source.Cluster, RoundAge(s.MaxAge), file)))
	}
	return snap, file, diags, nil
}

// Load reads the nodes and classifies them with cat and opts. Every node
// left out (or kept without its accelerators) is a warning naming the
// node; it never fails the load. The inventory is nil when there is none
// (see Snapshot).
func (s *Source) Load(ctx context.Context, dir string, cat *catalog.Catalog, opts inventory.Options) (*inventory.Inventory, string, []compile.Diagnostic, error) {
	snap, from, diags, err := s.Snapshot(ctx, dir)
	if err != nil || snap == nil {
		return nil, "", diags, err
	}
	inv := snap.Classify(cat, opts)
	for _, p := range inv.Problems {
		diags = append(diags, warning(from, p.String()+"; "+p.Effect()))
	}
	return inv, from, diags, nil
}

// RoundAge prints a duration as people say it: "9d", "5h", "12m".
func RoundAge(d time.Duration) string {
	switch {
	case d >= 48*time.Hour:
		return fmt.Sprintf("%dd", int(d.Hours()/24))
	case d >= 2*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	default:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	}
}

func warning(pos, msg string) compile.Diagnostic {
	return compile.Diagnostic{Severity: compile.Warning, Pos: pos, Msg: msg}
}
