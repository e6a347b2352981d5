package accelc

// accelc diff: the rendered tree against the one already written or
// published.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/accelc/accelc/pkg/artifact"
	"github.com/accelc/accelc/pkg/render"
)

// DiffOptions say what to compare a rendered cluster with.
type DiffOptions struct {
	// Against is a previous output directory, or oci://HOST/REPO:TAG of
	// the published artifact.
	Against string
	// Insecure allows plain HTTP to a registry that is not on loopback.
	Insecure bool
	// Limits bound a pulled artifact; zero fields take artifact's
	// defaults.
	Limits artifact.Limits
}

// DiffReport is what a render would change: diff's -o json/yaml
// document.
type DiffReport struct {
	Against string          `json:"against"`
	Changes []render.Change `json:"changes"`
}

// Diff compares res's rendered tree (Stages RenderTree) with opts.Against,
// file by file, without accelc's provenance annotations. A pulled
// artifact is read as a stream within opts.Limits: one over them is an
// OutsideError that names the flag to raise; a folder that is not there
// or holds a link is the input's error.
func Diff(ctx context.Context, res *Result, opts DiffOptions) (*DiffReport, error) {
	if err := opts.Check(); err != nil {
		return nil, err
	}
	if res.Tree == nil {
		return nil, fmt.Errorf("diff: %s was not rendered", res.Dir)
	}
	old, err := opts.previous(ctx, res.Tree)
	if err != nil {
		return nil, err
	}
	changes, err := render.Diff(res.Tree, old)
	if err != nil {
		return nil, err
	}
	if changes == nil {
		changes = []render.Change{}
	}
	return &DiffReport{Against: opts.Against, Changes: changes}, nil
}

// Check refuses options that compare with nothing, before the cluster
// is loaded.
func (o *DiffOptions) Check() error {
	if o.Against == "" {
		return usage(errors.New("--against is required: a previous output directory or oci://HOST/REPO:TAG"))
	}
	return nil
}

// previous reads the tree to compare with: only the files tree has are
// held of a pulled artifact, the others being removals listed by path.
func (o *DiffOptions) previous(ctx context.Context, tree render.Tree) (render.Tree, error) {
	if !strings.HasPrefix(o.Against, "oci://") {
		if st, err := os.Stat(o.Against); err != nil || !st.IsDir() {
			return nil, fmt.Errorf("--against %s: not a directory: give a previous `accelc render` output or oci://…", o.Against)
		}
		return render.LoadTree(o.Against)
	}
	ref, err := artifact.ParseURL(o.Against, o.Insecure)
	if err != nil {
		return nil, usage(fmt.Errorf("--against: %w", err))
	}
	files, err := artifact.Pull(ctx, ref, artifact.PushOptions{Insecure: o.Insecure}, artifact.ReadOptions{
		Limits: o.Limits,
		Keep:   func(p string) bool { _, ok := tree[p]; return ok },
	})
	var le *artifact.LimitError
	if errors.As(err, &le) {
		flag := "--max-artifact-size"
		if le.Files {
			flag = "--max-artifact-files"
		}
		return nil, &OutsideError{Err: fmt.Errorf("%w: if the artifact is what you expect, raise %s", err, flag)}
	}
	if err != nil {
		return nil, &OutsideError{Err: err}
	}
	return render.Tree(files), nil
}
