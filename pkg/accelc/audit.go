package accelc

// accelc audit: a cluster's rendered tree judged against the workloads it
// runs now.

import (
	"cmp"
	"context"
	"fmt"

	"github.com/accelc/accelc/pkg/audit"
	"github.com/accelc/accelc/pkg/compile"
	"github.com/accelc/accelc/pkg/workloads"
)

// Audit says what res's rendered tree would do to what the cluster runs:
// the workloads of src (a live cluster, read-only, or the snapshot file
// the nodes came from, written by `accelc inventory snapshot --live
// --workloads`), or of file, a snapshot of the workloads alone, when
// given. res must be rendered (Stages RenderTree).
func Audit(ctx context.Context, res *Result, src Source, file string) (*audit.Report, error) {
	if res.Tree == nil {
		return nil, fmt.Errorf("audit: %s was not rendered", res.Dir)
	}
	var (
		set      *workloads.Set
		from     string
		err      error
		unjudged []workloads.UnjudgedKind
		warnings []string
	)
	if src.Live && file == "" {
		if set, err = workloads.ReadLive(ctx, src.LiveOptions); err != nil {
			return nil, &OutsideError{Err: err}
		}
		// The kinds the cluster serves whose pod templates accelc would
		// judge only at their pods: an operator installed since.
		if unjudged, warnings, err = workloads.ReadUnjudgedKinds(ctx, src.LiveOptions); err != nil {
			return nil, &OutsideError{Err: err}
		}
		from = "live"
	} else {
		from = cmp.Or(file, src.File)
		if from == "" {
			from = compile.DefaultInventory(res.Dir)
		}
		if from == "" {
			return nil, fmt.Errorf("%s has no inventory.json and no --inventory was given: audit reads the workloads from a snapshot taken with `accelc inventory snapshot --live --workloads`, or from the cluster with --live", res.Dir)
		}
		if set, err = workloads.ReadFile(from); err != nil {
			return nil, err
		}
		if len(set.Objects) == 0 {
			return nil, fmt.Errorf("%s holds no workloads: take the snapshot with `accelc inventory snapshot --live --workloads --out-file %s`, or audit the cluster with --live", from, from)
		}
	}
	r, err := audit.Run(ctx, audit.Input{Model: res.Model, Inventory: res.Inventory, Tree: res.Tree, Workloads: set, Source: from})
	if err != nil {
		return nil, err
	}
	r.UnjudgedKinds = unjudged
	r.Warnings = append(r.Warnings, warnings...)
	return r, nil
}
