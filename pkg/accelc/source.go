package accelc

// Where an inventory comes from (a file, a live cluster, the directory's
// default) and reading it.

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

// Read is what a Source read.
type Read struct {
	// Snapshot is the nodes as they are, unclassified, with the problems
	// of the nodes the reader had to leave out; nil when the source
	// names no file and the directory has no inventory.json.
	Snapshot *inventory.Snapshot
	// Inventory is the nodes classified (Load); nil where Snapshot is.
	Inventory *inventory.Inventory
	// From names the source for messages: the file, or "cluster NAME".
	From string
	// Diagnostics are the reader's warnings (a stale snapshot, pods a
	// live read may not list, nodes left out), each once.
	Diagnostics []compile.Diagnostic
}

// Snapshot reads the nodes as they are, unclassified. The Read comes back
// even with an error, with the warnings found before it; Read.Snapshot is
// nil, and the error too, when the source names no file and dir has no
// inventory.json.
func (s *Source) Snapshot(ctx context.Context, dir string) (*Read, error) {
	r := &Read{}
	if err := s.Check(); err != nil {
		return r, usage(err)
	}
	if s.Live {
		snap, err := live.Read(ctx, s.LiveOptions)
		if err != nil {
			return r, &OutsideError{Err: err}
		}
		for _, w := range snap.Warnings {
			r.Diagnostics = append(r.Diagnostics, warning("--live", w))
		}
		r.Snapshot, r.From = snap, "cluster "+snap.Source.Cluster
		return r, nil
	}
	file := s.File
	if file == "" {
		if file = compile.DefaultInventory(dir); file == "" {
			return r, nil
		}
	}
	snap, err := inventory.ReadSnapshot(file)
	if err != nil {
		return r, err
	}
	now := time.Now
	if s.Now != nil {
		now = s.Now
	}
	if age, ok := snap.Source.Age(now()); ok && s.MaxAge > 0 && age > s.MaxAge {
		r.Diagnostics = append(r.Diagnostics, warning("", fmt.Sprintf("%s was taken %s ago from cluster %s (more than --max-snapshot-age %s): refresh it with `accelc inventory snapshot --live --out-file %s`",
			file, RoundAge(age), snap.Source.Cluster, RoundAge(s.MaxAge), file)))
	}
	r.Snapshot, r.From = snap, file
	return r, nil
}

// Load reads the nodes and classifies them with cat and opts into
// Read.Inventory. Every node left out (or kept without its accelerators)
// is a warning naming the node; it never fails the load.
func (s *Source) Load(ctx context.Context, dir string, cat *catalog.Catalog, opts inventory.Options) (*Read, error) {
	r, err := s.Snapshot(ctx, dir)
	if err != nil || r.Snapshot == nil {
		return r, err
	}
	r.Inventory = r.Snapshot.Classify(cat, opts)
	for _, p := range r.Inventory.Problems {
		r.Diagnostics = append(r.Diagnostics, warning(r.From, p.String()+"; "+p.Effect()))
	}
	return r, nil
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
