package accelc

// accelc inventory snapshot: a cluster's nodes, ResourceSlices and
// workloads read into a snapshot file.

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/accelc/accelc/pkg/compile"
	"github.com/accelc/accelc/pkg/inventory"
	"github.com/accelc/accelc/pkg/workloads"
)

// SnapshotOptions say what `accelc inventory snapshot` reads.
type SnapshotOptions struct {
	// Source is the cluster (Live) or the file to rewrite (File).
	Source Source
	// SkipPods leaves out, with Live, the accelerators pods use.
	SkipPods bool
	// Workloads also keeps what the cluster runs (pods, workloads,
	// ResourceClaims, trimmed), for `accelc audit`; with File, the file's
	// own.
	Workloads bool
	// Merge are files (NVML reports, node lists) laid over the nodes of
	// the same name, in order.
	Merge []string
}

// SnapshotResult is a snapshot to commit.
type SnapshotResult struct {
	Snapshot *inventory.Snapshot
	// Diagnostics are the readers' warnings and the nodes left out.
	Diagnostics []compile.Diagnostic
	// Notes say what each merge did.
	Notes []string
}

// Data is the snapshot as the file to commit: a kind List that kubectl
// and accelc read (inventory.Snapshot.Write).
func (r *SnapshotResult) Data() ([]byte, error) {
	var buf bytes.Buffer
	err := r.Snapshot.Write(&buf)
	return buf.Bytes(), err
}

// Summary says what the snapshot holds: "12 nodes, 3 ResourceSlices".
func (r *SnapshotResult) Summary(withWorkloads bool) string {
	s := r.Snapshot
	what := fmt.Sprintf("%d nodes", len(s.Nodes))
	if len(s.Slices) > 0 {
		what += fmt.Sprintf(", %d ResourceSlices", len(s.Slices))
	}
	if withWorkloads {
		what += fmt.Sprintf(", %d workload objects", len(s.Workloads))
	}
	return what
}

// TakeSnapshot reads the nodes of a live cluster, or rewrites a snapshot
// file, keeping only what classification needs, lays the merge files
// over it and, with Workloads, adds what the cluster runs. The result
// comes back with the warnings found before an error.
func TakeSnapshot(ctx context.Context, opts SnapshotOptions) (*SnapshotResult, error) {
	src := opts.Source
	if !src.Live && src.File == "" {
		return &SnapshotResult{}, usage(errors.New("give --live to read the cluster, or --inventory FILE to rewrite a snapshot"))
	}
	src.LiveOptions.SkipPods = opts.SkipPods
	read, err := src.Snapshot(ctx, ".")
	res := &SnapshotResult{Snapshot: read.Snapshot, Diagnostics: read.Diagnostics}
	if err != nil {
		return res, err
	}
	res.problems(read.From, read.Snapshot)
	for _, path := range opts.Merge {
		other, err := (&Source{File: path}).Snapshot(ctx, ".")
		if err != nil {
			return res, err
		}
		res.problems(path, other.Snapshot)
		merged, added := res.Snapshot.Merge(other.Snapshot)
		res.Notes = append(res.Notes, fmt.Sprintf("merged %s: %d nodes updated, %d added", path, len(merged), len(added)))
	}
	if !opts.Workloads {
		return res, nil
	}
	var set *workloads.Set
	if src.Live {
		if set, err = workloads.ReadLive(ctx, src.LiveOptions); err != nil {
			return res, &OutsideError{Err: err}
		}
	} else if set, err = workloads.ReadFile(src.File); err != nil {
		return res, err
	}
	for _, w := range set.Warnings {
		res.Diagnostics = append(res.Diagnostics, warning("--live", w))
	}
	for _, o := range set.Objects {
		res.Snapshot.Workloads = append(res.Snapshot.Workloads, o.Object)
	}
	return res, nil
}

// problems adds the nodes snap had to leave out, as warnings from where.
func (r *SnapshotResult) problems(where string, snap *inventory.Snapshot) {
	for _, p := range snap.Problems {
		r.Diagnostics = append(r.Diagnostics, warning(where, p.String()+"; "+p.Effect()))
	}
}
