package compile

// Decoding the evaluated CUE into the raw configuration the loader
// resolves.

import (
	"encoding/json"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/cuecontext"

	"github.com/accelc/accelc/schemas"
)

// rawConfig is the configuration as CUE holds it, before the catalog
// resolves its references: nodes pinned by type id, accelerators as the
// patches the cluster writes, teams with their quotas raw.
type rawConfig struct {
	Cluster struct {
		Cluster
		Nodes map[string]struct {
			AcceleratorType string `json:"acceleratorType"`
		} `json:"nodes"`
	} `json:"cluster"`
	Accelerators map[string]map[string]any `json:"accelerators"`
	Profiles     map[string]Profile        `json:"profiles"`
	Teams        map[string]rawTeam        `json:"teams"`
}

// decode evaluates the package unified with accelc's schema (#Config),
// requires every value concrete, and decodes it. The source learns the
// evaluated values, so that diagnostics find where the user wrote a path.
func (pkg *cuePackage) decode() (*rawConfig, error) {
	ctx := cuecontext.New()
	schema, err := schemas.Build(ctx)
	if err != nil {
		return nil, err
	}
	scope := &cueScope{files: pkg.inst.Files, module: pkg.inst.Module != "", schema: schema.LookupPath(cue.ParsePath("#Config"))}
	scope.user = ctx.BuildInstance(pkg.inst)
	if err := scope.user.Err(); err != nil {
		return nil, Errors(cueDiagnostics(err, pkg.src, scope))
	}
	scope.cfg = scope.schema.Unify(scope.user)
	pkg.src.user, pkg.src.cfg, pkg.src.built, pkg.src.pkg = scope.user, scope.cfg, true, pkg.inst.PkgName
	if err := scope.cfg.Validate(cue.Concrete(true)); err != nil {
		return nil, Errors(cueDiagnostics(err, pkg.src, scope))
	}
	var raw rawConfig
	if err := scope.cfg.Decode(&raw); err != nil {
		return nil, Errors(cueDiagnostics(err, pkg.src, scope))
	}
	return &raw, nil
}

// rawTeam is a team as its CUE holds it: each quota a count, or per MIG
// profile for a config cut into several.
type rawTeam struct {
	Team
	Quota map[string]quotaAmount `json:"quota"`
}

// quotaAmount is one quota: a count, or slices per MIG profile.
type quotaAmount struct {
	n      int
	slices map[string]int
}

func (q *quotaAmount) UnmarshalJSON(b []byte) error {
	if err := json.Unmarshal(b, &q.n); err == nil {
		return nil
	}
	return json.Unmarshal(b, &q.slices)
}

// team is the Team with its quotas: a per-profile quota counts all its
// slices in Quota and keeps them per profile in SliceQuota.
func (r rawTeam) team() Team {
	t := r.Team
	t.Quota, t.SliceQuota = nil, nil
	for id, q := range r.Quota {
		if t.Quota == nil {
			t.Quota = map[string]int{}
		}
		if q.slices == nil {
			t.Quota[id] = q.n
			continue
		}
		if t.SliceQuota == nil {
			t.SliceQuota = map[string]map[string]int{}
		}
		t.SliceQuota[id] = q.slices
		for _, n := range q.slices {
			t.Quota[id] += n
		}
	}
	return t
}
