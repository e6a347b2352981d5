package compile

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/build"
	"cuelang.org/go/cue/cuecontext"
	cueerrors "cuelang.org/go/cue/errors"
	"cuelang.org/go/cue/load"
	"cuelang.org/go/cue/parser"
	"cuelang.org/go/cue/token"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/accelc/accelc/pkg/catalog"
	"github.com/accelc/accelc/pkg/mig"
	"github.com/accelc/accelc/schemas"
)

// loadUnbounded compiles the cluster directory dir, unbounded (see LoadContext).
func loadUnbounded(dir string) (*Model, error) {
	cwd, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if fi, err := os.Stat(abs); err != nil {
		return nil, fmt.Errorf("cluster directory %s: %w", dir, err)
	} else if !fi.IsDir() {
		return nil, fmt.Errorf("%s is not a directory: give the cluster directory that holds its .cue files", dir)
	}
	src := &source{cwd: cwd}
	insts := load.Instances([]string{"."}, &load.Config{Dir: abs})
	if len(insts) != 1 {
		return nil, Errors{{Msg: fmt.Sprintf("%s: expected one CUE package, found %d", dir, len(insts))}}
	}
	if err := insts[0].Err; err != nil {
		if msg := err.Error(); strings.Contains(msg, "no CUE files") || strings.Contains(msg, "matched no packages") {
			return nil, Errors{{Msg: fmt.Sprintf("%s: no .cue files: a cluster directory holds the cluster's CUE configuration (see examples/clusters)", dir)}}
		}
		if len(insts[0].Files) == 0 && len(insts[0].IgnoredFiles) > 0 {
			return nil, Errors(excludedFiles(insts[0].IgnoredFiles, src))
		}
		var mp *load.MultiplePackageError
		if errors.As(err, &mp) && len(mp.Files) == 2 && len(mp.Packages) == 2 {
			at := Path{src: src, pos: packageClause(filepath.Join(abs, mp.Files[1]))}
			return nil, Errors{{Path: at, Msg: fmt.Sprintf("package %s, but %s is package %s: the .cue files of a cluster directory are one package; give them one name",
				mp.Packages[1], mp.Files[0], mp.Packages[0])}}
		}
		return nil, Errors(cueDiagnostics(err, src, insts[0].Files))
	}

	ctx := cuecontext.New()
	schema, err := schemas.Build(ctx)
	if err != nil {
		return nil, err
	}
	user := ctx.BuildInstance(insts[0])
	if err := user.Err(); err != nil {
		return nil, Errors(cueDiagnostics(err, src, insts[0].Files))
	}
	cfg := schema.LookupPath(cue.ParsePath("#Config")).Unify(user)
	src.user, src.cfg, src.built, src.pkg = user, cfg, true, insts[0].PkgName
	if err := cfg.Validate(cue.Concrete(true)); err != nil {
		return nil, Errors(cueDiagnostics(err, src, insts[0].Files))
	}

	var raw struct {
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
	if err := cfg.Decode(&raw); err != nil {
		return nil, Errors(cueDiagnostics(err, src, insts[0].Files))
	}

	m := &Model{Cluster: raw.Cluster.Cluster, Pins: map[string]string{}, pins: map[string]Path{}, src: src}
	root := src.root()
	var diags []Diagnostic
	diags = append(diags, checkKubernetesNames(&raw.Cluster.Cluster, slices.Sorted(maps.Keys(raw.Accelerators)), root)...)
	diags = append(diags, checkExcludedNamespaces(&raw.Cluster.Cluster, root.Key("cluster"))...)

	builtinCat, err := catalog.Builtin()
	if err != nil {
		return nil, err
	}
	cat, catDiags := mergeCatalog(builtinCat, raw.Accelerators, root.Key("accelerators"))
	diags = append(diags, catDiags...)
	if cat == nil {
		return nil, Errors(diags)
	}
	m.Catalog = cat

	for _, node := range slices.Sorted(maps.Keys(raw.Cluster.Nodes)) {
		id := raw.Cluster.Nodes[node].AcceleratorType
		pin := root.Key("cluster").Key("nodes").Key(node)
		if _, ok := cat.Get(id); !ok {
			diags = append(diags, unknownType(cat, pin.At(pin.Key("acceleratorType")), id))
			continue
		}
		m.Pins[node] = id
		m.pins[node] = pin
	}

	diags = append(diags, buildNodePools(m)...)

	for _, name := range slices.Sorted(maps.Keys(raw.Profiles)) {
		p := raw.Profiles[name]
		p.path = root.Key("profiles").Key(name)
		// A pool profile that names no type takes its pools' types.
		derived := p.Pool != "" && len(p.AcceleratorTypes) == 0
		if derived {
			p.AcceleratorTypes = poolTypes(m.Cluster, &p)
		}
		resourceSet := p.ResourceName != ""
		seen := map[string]bool{}
		for i, id := range p.AcceleratorTypes {
			tp := p.path.Key("acceleratorTypes").Index(i)
			if derived {
				tp = tp.At(p.path.Key("pool"))
			}
			p.types = append(p.types, tp)
			c, ok := cat.Get(id)
			switch {
			case !ok:
				diags = append(diags, unknownType(cat, tp, id))
			case seen[id]:
				diags = append(diags, Diagnostic{Path: tp, Msg: fmt.Sprintf("%s is listed twice: list each type once, in order of preference", id)})
			default:
				p.Classes = append(p.Classes, c)
			}
			seen[id] = true
		}
		if len(p.Classes) > 0 {
			resources := map[string]bool{}
			for _, c := range p.Classes {
				resources[c.ResourceName] = true
			}
			if len(resources) > 1 {
				diags = append(diags, Diagnostic{Path: p.path, Msg: fmt.Sprintf(
					"its types are requested through different resources (%s); a pod asks for one: split the profile per vendor",
					strings.Join(slices.Sorted(maps.Keys(resources)), ", "))})
			}
			// A typed profile may name another resource of its vendor: a
			// MIG slice (nvidia.com/mig-1g.10gb) or a renamed shared GPU
			// (nvidia.com/gpu.shared).
			base := p.Classes[0].ResourceName
			if p.ResourceName != "" && !resources[p.ResourceName] && !sameDomain(p.ResourceName, base) {
				diags = append(diags, Diagnostic{Path: p.path.Key("resourceName"), Msg: fmt.Sprintf(
					"%s is not a resource of its types' vendor (%s): name one under %s, or drop it",
					p.ResourceName, base, base[:strings.Index(base, "/")+1])})
			}
			if p.ResourceName == "" {
				p.ResourceName = base
			}
		} else if p.ResourceName == "" {
			p.ResourceName = "nvidia.com/gpu"
		}
		diags = append(diags, checkProfileSharing(m, &p, resourceSet)...)
		if pc := p.PriorityClassName; pc != "" {
			if _, ok := m.Cluster.PriorityClasses[pc]; !ok {
				diags = append(diags, Diagnostic{Path: p.path.Key("priorityClassName"), Msg: fmt.Sprintf(
					"%s is not one of cluster.priorityClasses (%s): declare it there; the mutation sets the class's value with its name, as the Priority admission plugin requires",
					pc, orNone(slices.Sorted(maps.Keys(m.Cluster.PriorityClasses))))})
			}
		}
		diags = append(diags, checkRanges(&p)...)
		m.Profiles = append(m.Profiles, p)
	}

	diags = append(diags, checkMIG(m)...)
	diags = append(diags, checkSharing(m)...)

	nsTeam := map[string]string{}
	for _, name := range slices.Sorted(maps.Keys(raw.Teams)) {
		t := raw.Teams[name].team()
		t.path = root.Key("teams").Key(name)
		if t.Enforcement == "" {
			t.Enforcement = m.Cluster.Enforcement
		}
		for _, ns := range slices.Sorted(maps.Keys(t.NamespaceEnforcement)) {
			if !slices.Contains(t.Namespaces, ns) {
				diags = append(diags, Diagnostic{Path: t.path.Key("namespaceEnforcement").Key(ns), Msg: fmt.Sprintf(
					"team %s has no namespace %s: namespaceEnforcement sets the stage of one of the team's namespaces (%s)", t.Name, ns, strings.Join(t.Namespaces, ", "))})
			}
		}
		for i, id := range t.AcceleratorTypes {
			if _, ok := cat.Get(id); !ok {
				diags = append(diags, unknownType(cat, t.path.Key("acceleratorTypes").Index(i), id))
			}
		}
		diags = append(diags, checkTeamProfiles(&t, m)...)
		diags = append(diags, checkTeamQuota(&t, m)...)
		for i, ns := range t.Namespaces {
			at := t.path.Key("namespaces").Index(i)
			if pattern, ok := MatchNamespace(m.Cluster.ExcludedNamespaces, ns); ok {
				diags = append(diags, Diagnostic{Path: at, Msg: fmt.Sprintf(
					"namespace %s is excluded from accelc's policies by cluster.excludedNamespaces %q, so its pods would reach any accelerator: rename the namespace or narrow the pattern", ns, pattern)})
			}
			if other, ok := nsTeam[ns]; ok {
				diags = append(diags, Diagnostic{Path: at, Msg: fmt.Sprintf(
					"namespace %s already belongs to team %s: a namespace has one team", ns, other)})
				continue
			}
			nsTeam[ns] = name
		}
		m.Teams = append(m.Teams, t)
	}
	diags = append(diags, checkQueueCoverage(m)...)
	diags = append(diags, checkDeviceClassMappings(m)...)
	diags = append(diags, checkDRA(m)...)
	diags = append(diags, checkCohorts(m)...)
	diags = append(diags, checkTopology(m)...)
	diags = append(diags, checkAutoscaling(m)...)
	diags = append(diags, checkProvisioning(m)...)

	if len(diags) > 0 {
		return nil, Errors(diags)
	}
	return m, nil
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

// checkTeamProfiles resolves a team's profile entitlement: each profile
// must exist; the team's types, left out, are its profiles' types, and
// given, must hold them; a profile's priority class may not outrank the
// team's tier.
func checkTeamProfiles(t *Team, m *Model) []Diagnostic {
	if t.Profiles == nil {
		return nil
	}
	var out []Diagnostic
	derive := len(t.AcceleratorTypes) == 0
	has := map[string]bool{}
	for _, id := range t.AcceleratorTypes {
		has[id] = true
	}
	generic := ""
	for i, name := range t.Profiles {
		where := t.path.Key("profiles").Index(i)
		p := m.Profile(name)
		if p == nil {
			msg := fmt.Sprintf("no hardware profile %q", name)
			if close := catalog.Closest(name, profileNames(m), 3); len(close) > 0 {
				msg += "; did you mean " + strings.Join(close, ", ") + "?"
			}
			out = append(out, Diagnostic{Path: where, Msg: msg + " (profiles: " + orNone(profileNames(m)) + ")"})
			continue
		}
		if p.Generic() {
			generic = name
		}
		for _, id := range p.AcceleratorTypes {
			switch {
			case derive && !has[id]:
				t.AcceleratorTypes = append(t.AcceleratorTypes, id)
				has[id] = true
			case !has[id]:
				out = append(out, Diagnostic{Path: where, Msg: fmt.Sprintf(
					"profile %s runs on %s, which is not among the team's acceleratorTypes (%s): add the type or drop the profile",
					name, id, strings.Join(t.AcceleratorTypes, ", "))})
			}
		}
		if tier, ok := m.Cluster.PriorityClasses[t.Priority]; ok && p.PriorityClassName != "" {
			if pc := m.Cluster.PriorityClasses[p.PriorityClassName]; pc.Value > tier.Value {
				out = append(out, Diagnostic{Path: where, Msg: fmt.Sprintf(
					"profile %s runs at priority class %s (%d), above the team's tier %s (%d): raise the team's priority or pick a profile of its tier",
					name, p.PriorityClassName, pc.Value, t.Priority, tier.Value)})
			}
		}
	}
	if generic != "" && len(t.AcceleratorTypes) == 0 {
		out = append(out, Diagnostic{Path: t.path.Key("profiles"), Msg: fmt.Sprintf(
			"generic profile %s runs on the team's types, and the team has none: give it acceleratorTypes", generic)})
	}
	return out
}

func profileNames(m *Model) []string {
	names := make([]string, len(m.Profiles))
	for i := range m.Profiles {
		names[i] = m.Profiles[i].Name
	}
	return names
}

// MatchNamespace reports the pattern that matches namespace ns, as
// Gatekeeper matches a constraint's or mutator's namespaces and
// excludedNamespaces: exact, a prefix (kube-*) or suffix (*-system) glob,
// or both (*gpu*: the name holds gpu).
func MatchNamespace(patterns []string, ns string) (string, bool) {
	for _, p := range patterns {
		lead, trail := strings.HasPrefix(p, "*"), strings.HasSuffix(p, "*")
		core := strings.TrimSuffix(strings.TrimPrefix(p, "*"), "*")
		switch {
		case lead && trail && strings.Contains(ns, core),
			lead && !trail && strings.HasSuffix(ns, core),
			trail && !lead && strings.HasPrefix(ns, core),
			p == ns:
			return p, true
		}
	}
	return "", false
}

// checkExcludedNamespaces refuses the excludedNamespaces patterns that
// would leave namespaces ungoverned. Gatekeeper exempts every namespace a
// glob matches, the ones created later too: where users may create
// namespaces, kube-* hands any of them a kube-x whose pods reach every
// accelerator. A glob is accepted only on the admins' word
// (namespaceCreation "admins-only") that users cannot create such names;
// one that matches every namespace never is.
func checkExcludedNamespaces(c *Cluster, cluster Path) []Diagnostic {
	var out []Diagnostic
	for i, p := range c.ExcludedNamespaces {
		if !strings.Contains(p, "*") {
			continue
		}
		at := cluster.Key("excludedNamespaces").Index(i)
		core := strings.TrimSuffix(strings.TrimPrefix(p, "*"), "*")
		switch {
		case core == "" || strings.Trim(core, "*") == "":
			out = append(out, Diagnostic{Path: at, Msg: fmt.Sprintf(
				"%q matches every namespace, so accelc's policies would check none: list the exact names of the system namespaces to exclude", p)})
		case strings.Contains(core, "*"):
			out = append(out, Diagnostic{Path: at, Msg: fmt.Sprintf(
				"%q has a * inside: Gatekeeper matches * only at the start or end of a name (kube-*, *-system) and refuses the constraint: list the exact names", p)})
		case c.NamespaceCreation != "admins-only":
			// The example is what a user would create: the glob's * as x.
			example := strings.ReplaceAll(p, "*", "x")
			out = append(out, Diagnostic{Path: at, Msg: fmt.Sprintf(
				"%q exempts from accelc's policies every namespace it matches, those created later too: a user who may create namespaces creates %s, whose pods reach any accelerator. List the exact names instead (kube-system, not kube-*), or, if only cluster admins can create namespaces, say so with cluster.namespaceCreation: \"admins-only\" (on OpenShift it holds for kube-* and openshift-* when users only get projects: ProjectRequests refuse those prefixes)",
				p, example)})
		}
	}
	return out
}

// checkMIG checks each MIG config against its type's geometry, the
// strategy, and the other configs' nodes.
func checkMIG(m *Model) []Diagnostic {
	if m.Cluster.MIG == nil {
		return nil
	}
	geo, err := mig.Builtin()
	if err != nil {
		return []Diagnostic{{Msg: err.Error()}}
	}
	var out []Diagnostic
	wholeType := map[string]string{} // type → config without a node list
	nodeConfig := map[string]string{}
	for _, name := range slices.Sorted(maps.Keys(m.Cluster.MIG.Configs)) {
		c := m.Cluster.MIG.Configs[name]
		config := m.root().Key("cluster").Key("mig").Key("configs").Key(name)
		if _, ok := m.Catalog.Get(c.AcceleratorType); !ok {
			out = append(out, unknownType(m.Catalog, config.Key("acceleratorType"), c.AcceleratorType))
			continue
		}
		g, ok := geo[c.AcceleratorType]
		if !ok {
			out = append(out, Diagnostic{Path: config.At(config.Key("acceleratorType")), Msg: fmt.Sprintf(
				"%s has no MIG (MIG-capable types: %s): share it with time-slicing instead", c.AcceleratorType, strings.Join(slices.Sorted(maps.Keys(geo)), ", "))})
			continue
		}
		if _, err := g.Place(c.Layout); err != nil {
			out = append(out, Diagnostic{Path: config.Key("layout"), Msg: err.Error()})
		}
		if m.Cluster.MIG.Strategy == "single" {
			used := 0
			for _, n := range c.Layout {
				if n > 0 {
					used++
				}
			}
			if used > 1 {
				out = append(out, Diagnostic{Path: config.Key("layout"), Msg: fmt.Sprintf(
					"%d profiles, but the MIG strategy is single (one profile per GPU): set cluster.mig.strategy: \"mixed\"", used)})
			}
		}
		if len(c.Nodes) == 0 {
			if other, dup := wholeType[c.AcceleratorType]; dup {
				out = append(out, Diagnostic{Path: config, Msg: fmt.Sprintf(
					"config %s already takes every %s node: list nodes in one of them", other, c.AcceleratorType)})
			}
			wholeType[c.AcceleratorType] = name
		}
		for _, node := range c.Nodes {
			if other, dup := nodeConfig[node]; dup {
				out = append(out, Diagnostic{Path: config.Key("nodes"), Msg: fmt.Sprintf(
					"node %s is already in config %s: a node takes one MIG config", node, other)})
			}
			nodeConfig[node] = name
		}
	}
	return out
}

// checkSharing checks the pools' types and that no node is in two pools,
// or in a pool and a MIG config (the device plugin's MPS does not take
// MIG devices, and one sharing config applies per node).
func checkSharing(m *Model) []Diagnostic {
	var out []Diagnostic
	wholeType := map[string]string{}
	nodePool := map[string]string{}
	migTypes := map[string]string{}
	if m.Cluster.MIG != nil {
		for name, c := range m.Cluster.MIG.Configs {
			if len(c.Nodes) == 0 {
				migTypes[c.AcceleratorType] = name
			}
			for _, n := range c.Nodes {
				nodePool[n] = "MIG config " + name
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(m.Cluster.Sharing)) {
		p := m.Cluster.Sharing[name]
		pool := m.root().Key("cluster").Key("sharing").Key(name)
		if _, ok := m.Catalog.Get(p.AcceleratorType); !ok {
			out = append(out, unknownType(m.Catalog, pool.Key("acceleratorType"), p.AcceleratorType))
			continue
		}
		if len(p.Nodes) == 0 {
			if other, dup := wholeType[p.AcceleratorType]; dup {
				out = append(out, Diagnostic{Path: pool, Msg: fmt.Sprintf("pool %s already takes every %s node: list nodes in one of them", other, p.AcceleratorType)})
			}
			if cfg, dup := migTypes[p.AcceleratorType]; dup {
				out = append(out, Diagnostic{Path: pool, Msg: fmt.Sprintf("MIG config %s already takes every %s node: a node is either MIG-partitioned or shared; list nodes", cfg, p.AcceleratorType)})
			}
			wholeType[p.AcceleratorType] = name
		}
		if p.Strategy == "mps" && m.Cluster.MIGStrategy() == "mixed" {
			out = append(out, Diagnostic{Path: pool.At(pool.Key("strategy")), Msg: "MPS under MIG strategy mixed (the default once cluster.mig has configs): the NVIDIA device plugin refuses to start (\"using --mig-strategy=mixed is not supported with MPS\"); share the pool with time-slicing, or set cluster.mig.strategy: \"single\""})
		}
		for _, n := range p.Nodes {
			if other, dup := nodePool[n]; dup {
				out = append(out, Diagnostic{Path: pool.Key("nodes").At(pool), Msg: fmt.Sprintf("node %s is already in %s: a node has one sharing setup", n, other)})
			}
			nodePool[n] = "pool " + name
		}
	}
	return out
}

// unknownType is the error for an id the catalog lacks, with the closest
// ids it has.
func unknownType(cat *catalog.Catalog, at Path, id string) Diagnostic {
	msg := fmt.Sprintf("unknown accelerator type %q", id)
	if close := cat.Closest(id, 3); len(close) > 0 {
		msg += "; did you mean " + strings.Join(close, ", ") + "?"
	}
	msg += " (a type accelc does not know yet: define it under accelerators)"
	return Diagnostic{Path: at, Msg: msg}
}

// checkTeamQuota checks a team's quotas, cohort and tier against its
// entitlements and the cluster.
func checkTeamQuota(t *Team, m *Model) []Diagnostic {
	var out []Diagnostic
	quota := t.path.Key("quota")
	for _, id := range slices.Sorted(maps.Keys(t.Quota)) {
		at := quota.At(quota.Key(id))
		// A pool's or MIG config's name: a quota of its slices or
		// replicas, which Kueue keeps apart from whole GPUs by the pool's
		// taint (a flavor's nodeTaints admit only workloads that tolerate
		// them).
		perProfile, sliced := t.SliceQuota[id]
		if pool, ok := m.Pool(id); ok {
			several := pool.Sharing == ShareMIG && poolResource(m, pool) == "" && m.Cluster.MIGStrategy() == "mixed"
			switch {
			case !slices.Contains(t.AcceleratorTypes, pool.AcceleratorType):
				out = append(out, Diagnostic{Path: at, Msg: fmt.Sprintf(
					"a quota in %s, a pool of %s, which the team is not entitled to: add the type to acceleratorTypes or drop the quota", id, pool.AcceleratorType)})
			case several && !sliced:
				out = append(out, Diagnostic{Path: at, Msg: fmt.Sprintf(
					"%s cuts each GPU into several MIG profiles (%s), each its own resource under the mixed strategy: give its quota per profile, as %q: %s", id, mig.Describe(pool.Layout), id, quotaExample(pool.Layout))})
			case sliced && !several:
				out = append(out, Diagnostic{Path: at, Msg: fmt.Sprintf(
					"a quota per MIG profile is for a MIG config that cuts each GPU into several profiles under the mixed strategy; %s's pods request one resource (%s): give a number", id, cmp.Or(poolResource(m, pool), wholeResource(m, pool)))})
			case sliced:
				for _, prof := range slices.Sorted(maps.Keys(perProfile)) {
					if pool.Layout[prof] == 0 {
						out = append(out, Diagnostic{Path: quota.At(quota.Key(id).Key(prof)), Msg: fmt.Sprintf(
							"%s is not a MIG profile of %s's layout (%s): use %s", prof, id, mig.Describe(pool.Layout), strings.Join(layoutProfiles(pool.Layout), ", "))})
					}
				}
			case pool.Taint == nil && poolResource(m, pool) == wholeResource(m, pool):
				out = append(out, Diagnostic{Path: at, Msg: fmt.Sprintf(
					"%s has no taint and its pods request %s like whole GPUs, so Kueue cannot keep whole-GPU workloads out of its quota: give the pool a taint (or renameByDefault)", id, wholeResource(m, pool))})
			}
			continue
		}
		if _, ok := m.Catalog.Get(id); !ok {
			out = append(out, unknownType(m.Catalog, at, id))
			continue
		}
		if sliced {
			out = append(out, Diagnostic{Path: at, Msg: fmt.Sprintf(
				"a quota per MIG profile is for a MIG config of cluster.mig that cuts each GPU into several profiles; %s is an accelerator type: give a number of devices", id)})
		}
		if !slices.Contains(t.AcceleratorTypes, id) {
			out = append(out, Diagnostic{Path: at, Msg: fmt.Sprintf(
				"a quota for %s, which the team is not entitled to: add it to acceleratorTypes or drop the quota", id)})
		}
	}
	if hasTypeQuota(t, m) {
		for i, id := range t.AcceleratorTypes {
			if _, ok := t.Quota[id]; !ok {
				out = append(out, Diagnostic{Path: t.path.At(t.path.Key("acceleratorTypes").Index(i)), Msg: fmt.Sprintf(
					"entitled to %s but it has no quota: give it one (quota: %q: N; 0 to only borrow), or the team's queue cannot admit its pods", id, id)})
			}
		}
	}
	// A quota is for the team's pods. Without namespaces the team has none:
	// under Kueue a quota in a cohort still lends to the cohort's other
	// teams (a shared reserve), but alone it holds devices for nobody.
	if len(t.Quota) > 0 && len(t.Namespaces) == 0 && (t.Cohort == "" || m.Cluster.Quotas != "kueue") {
		why := "Kueue's Cohort " + t.Name + " would hold it for no queue"
		if m.Cluster.Quotas != "kueue" {
			why = "a ResourceQuota lives in a namespace"
		}
		out = append(out, Diagnostic{Path: t.path.Key("quota"), Msg: fmt.Sprintf(
			"team %s has a quota but no namespaces, so no pod can use it (%s): list the team's namespaces, drop the quota, or (with Kueue) put the team in a cohort to lend it", t.Name, why)})
	}
	out = append(out, checkLimits(t, "borrowingLimit", t.BorrowingLimit)...)
	out = append(out, checkLimits(t, "lendingLimit", t.LendingLimit)...)
	if pre := t.Preemption; pre.ReclaimWithinCohort == "Never" && pre.BorrowWithinCohort != "" && pre.BorrowWithinCohort != "Never" {
		out = append(out, Diagnostic{Path: t.path.Key("preemption").Key("borrowWithinCohort"), Msg: fmt.Sprintf(
			"borrowWithinCohort %s with reclaimWithinCohort Never: Kueue rejects the ClusterQueue; set borrowWithinCohort: \"Never\" too, or let the team reclaim", pre.BorrowWithinCohort)})
	}
	if t.Priority != "" {
		if _, ok := m.Cluster.PriorityClasses[t.Priority]; !ok {
			out = append(out, Diagnostic{Path: t.path.Key("priority"), Msg: fmt.Sprintf(
				"%s is not one of cluster.priorityClasses (%s): declare it there", t.Priority, strings.Join(slices.Sorted(maps.Keys(m.Cluster.PriorityClasses)), ", "))})
		}
	}
	return out
}

// checkLimits checks a team's borrowing or lending limits: they need a
// cohort and name the team's types.
func checkLimits(t *Team, name string, limits map[string]int) []Diagnostic {
	var out []Diagnostic
	field := t.path.Key(name)
	verb := strings.TrimSuffix(name, "Limit")
	for _, id := range slices.Sorted(maps.Keys(limits)) {
		at := field.At(field.Key(id))
		switch {
		case t.Cohort == "":
			out = append(out, Diagnostic{Path: at, Msg: fmt.Sprintf("%s needs a cohort: set %s", verb, t.path.Key("cohort"))})
		case !slices.Contains(t.AcceleratorTypes, id):
			out = append(out, Diagnostic{Path: at, Msg: fmt.Sprintf("%s is not one of the team's acceleratorTypes", id)})
		}
	}
	return out
}

// quotaExample is a per-profile quota for the layout, for messages.
func quotaExample(layout map[string]int) string {
	var parts []string
	for _, prof := range layoutProfiles(layout) {
		parts = append(parts, fmt.Sprintf("%q: N", prof))
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// layoutProfiles are the MIG profiles a layout cuts, by name.
func layoutProfiles(layout map[string]int) []string {
	var out []string
	for _, prof := range slices.Sorted(maps.Keys(layout)) {
		if layout[prof] > 0 {
			out = append(out, prof)
		}
	}
	return out
}

// hasTypeQuota reports whether a team has a quota for any accelerator
// type (not only pools): then each of its types needs one.
func hasTypeQuota(t *Team, m *Model) bool {
	for id := range t.Quota {
		if _, pool := m.Pool(id); !pool {
			return true
		}
	}
	return false
}

// PoolResource is the extended resource a pool's devices are requested
// by: nvidia.com/mig-<profile> under the mixed strategy (one layout
// profile), <resource>.shared for a renamed shared pool, else the type's.
func PoolResource(m *Model, pool *NodePool) string { return poolResource(m, pool) }

func poolResource(m *Model, pool *NodePool) string {
	if pool.Sharing == ShareMIG && m.Cluster.MIGStrategy() == "mixed" {
		used := 0
		for _, n := range pool.Layout {
			if n > 0 {
				used++
			}
		}
		if used != 1 {
			return ""
		}
		return mig.ResourceName(firstProfile(pool.Layout))
	}
	r := wholeResource(m, pool)
	if pool.Renamed {
		r += ".shared"
	}
	return r
}

func wholeResource(m *Model, pool *NodePool) string {
	if c, ok := m.Catalog.Get(pool.AcceleratorType); ok {
		return c.ResourceName
	}
	return ""
}

// checkRanges checks that each min <= default <= max of a profile.
func checkRanges(p *Profile) []Diagnostic {
	var out []Diagnostic
	check := func(field string, min, def resource.Quantity, max *resource.Quantity) {
		at := p.path.Key(field)
		if def.Cmp(min) < 0 {
			out = append(out, Diagnostic{Path: at.Key("default"), Msg: fmt.Sprintf("%s is below min %s: raise default or lower min", def.String(), min.String())})
		}
		if max != nil && max.Cmp(def) < 0 {
			out = append(out, Diagnostic{Path: at.Key("max"), Msg: fmt.Sprintf("%s is below default %s: raise max or lower default", max.String(), def.String())})
		}
	}
	q := func(n int) resource.Quantity { return *resource.NewQuantity(int64(n), resource.DecimalSI) }
	var gmax *resource.Quantity
	if p.GPU.Max != nil {
		v := q(*p.GPU.Max)
		gmax = &v
	}
	check("gpu", q(p.GPU.Min), q(p.GPU.Default), gmax)
	for _, r := range []struct {
		field string
		rng   Range
	}{{"cpu", p.CPU}, {"memory", p.Memory}} {
		min, err1 := r.rng.Min.Parse()
		def, err2 := r.rng.Default.Parse()
		var max *resource.Quantity
		var err3 error
		if r.rng.Max != nil {
			var v resource.Quantity
			v, err3 = r.rng.Max.Parse()
			max = &v
		}
		if err := errors.Join(err1, err2, err3); err != nil {
			out = append(out, Diagnostic{Path: p.path.Key(r.field), Msg: err.Error()})
			continue
		}
		check(r.field, min, def, max)
	}
	return out
}

// mergeCatalog applies a cluster's `accelerators` patches to the built-in
// catalog: an id the catalog has gets the given fields replaced; a new id
// must give every required field.
func mergeCatalog(base *catalog.Catalog, patches map[string]map[string]any, at Path) (*catalog.Catalog, []Diagnostic) {
	if len(patches) == 0 {
		return base, nil
	}
	var diags []Diagnostic
	classes := map[string]catalog.Class{}
	for _, c := range base.Classes() {
		classes[c.ID] = *c
	}
	for _, id := range slices.Sorted(maps.Keys(patches)) {
		fields := map[string]any{}
		if c, ok := classes[id]; ok {
			b, _ := json.Marshal(c)
			_ = json.Unmarshal(b, &fields)
		} else {
			var missing []string
			for _, f := range []string{"vendor", "displayName", "model", "architecture", "memoryGB"} {
				if _, ok := patches[id][f]; !ok {
					missing = append(missing, f)
				}
			}
			if len(missing) > 0 {
				diags = append(diags, Diagnostic{Path: at.Key(id), Msg: fmt.Sprintf(
					"not a built-in type, so it needs %s (or fix the id if you meant to override a built-in type)",
					strings.Join(missing, ", "))})
				continue
			}
			fields["resourceName"] = catalog.DefaultResourceName(patches[id]["vendor"].(string))
			fields["pciDeviceIDs"] = []string{}
			fields["identifiedBy"] = map[string][]string{}
		}
		for k, v := range patches[id] {
			fields[k] = v
		}
		fields["id"] = id
		b, err := json.Marshal(fields)
		if err != nil {
			diags = append(diags, Diagnostic{Path: at.Key(id), Msg: err.Error()})
			continue
		}
		var c catalog.Class
		if err := json.Unmarshal(b, &c); err != nil {
			diags = append(diags, Diagnostic{Path: at.Key(id), Msg: err.Error()})
			continue
		}
		classes[id] = c
	}
	if len(diags) > 0 {
		return nil, diags
	}
	list := make([]catalog.Class, 0, len(classes))
	for _, id := range slices.Sorted(maps.Keys(classes)) {
		list = append(list, classes[id])
	}
	cat, err := catalog.New(list)
	if err != nil {
		return nil, []Diagnostic{{Path: at, Msg: err.Error()}}
	}
	return cat, nil
}

// cueDiagnostics turns CUE errors into diagnostics positioned at the
// user's file (not the embedded schema) wherever CUE knows one, or where
// the error's path leads in the user's files when it knows none, with the
// cause CUE wraps (an import's or an @embed's).
func cueDiagnostics(err error, src *source, files []*ast.File) []Diagnostic {
	var out []Diagnostic
	seen := map[string]bool{}
	for _, e := range cueerrors.Errors(err) {
		var user, schema token.Pos
		var also []string
		for _, p := range cueerrors.Positions(e) {
			switch {
			case !filepath.IsAbs(p.Filename()):
				if !schema.IsValid() {
					schema = p
				}
			case !user.IsValid():
				user = p
			default:
				also = append(also, relPos(p, src.cwd))
			}
		}
		path := e.Path()
		if len(path) > 0 && path[0] == "#Config" {
			path = path[1:]
		}
		if !user.IsValid() {
			user = fieldPos(files, path)
		}
		at := Path{src: src, cuePath: strings.Join(path, "."), pos: user}
		msg := cueMsg(e)
		full := msg
		if at.cuePath != "" {
			full = at.cuePath + ": " + msg
		}
		if !user.IsValid() && strings.Contains(full, "embed") {
			at.pos = attrPos(files, "embed")
		}
		msg += hint(full)
		if len(also) > 0 {
			msg += " (also " + strings.Join(also, ", ") + ")"
		}
		if schema.IsValid() {
			msg += " (schema: " + relPos(schema, "") + ")"
			if !at.pos.IsValid() {
				at.pos = schema
			}
		}
		d := Diagnostic{Path: at, Msg: msg}
		if !seen[d.String()] {
			seen[d.String()] = true
			out = append(out, d)
		}
	}
	if len(out) == 0 {
		out = append(out, Diagnostic{Msg: err.Error()})
	}
	// CUE heads the errors of each branch of a disjunction with a summary
	// line that has no position; the branch errors say it all.
	kept := out[:0]
	for _, d := range out {
		if !d.Path.Position().IsValid() && strings.Contains(d.Msg, "errors in empty disjunction") && len(out) > 1 {
			continue
		}
		kept = append(kept, d)
	}
	return kept
}

// packageClause is where file declares its package, else its first
// line.
func packageClause(file string) token.Pos {
	if f, err := parser.ParseFile(file, nil, parser.PackageClauseOnly); err == nil {
		for _, d := range f.Decls {
			if p, ok := d.(*ast.Package); ok {
				return p.Pos()
			}
		}
	}
	return token.NewFile(file, -1, 1).Pos(0, token.NoRelPos)
}

// excludedFiles are the diagnostics for a directory whose .cue files CUE
// leaves all out of its package (a file without a package clause, or
// whose @if attribute is false), each at the file's first line.
func excludedFiles(files []*build.File, src *source) []Diagnostic {
	var out []Diagnostic
	for _, f := range files {
		at := Path{src: src, pos: token.NewFile(f.Filename, -1, 1).Pos(0, token.NoRelPos)}
		msg := "excluded from the cluster's package"
		if f.ExcludeReason != nil {
			msg += ": " + f.ExcludeReason.Error()
		}
		if f.ExcludeReason != nil && strings.Contains(f.ExcludeReason.Error(), "no package name") {
			msg = "no package clause: start the file with `package <name>`, the same name in every .cue file of the cluster directory"
		}
		out = append(out, Diagnostic{Path: at, Msg: msg})
	}
	return out
}

// cueMsg is an error's message followed by the causes it wraps: CUE's
// Msg alone says "import failed" or "@embed" and drops why.
func cueMsg(e cueerrors.Error) string {
	format, args := e.Msg()
	msg := fmt.Sprintf(format, args...)
	for u := errors.Unwrap(e); u != nil; u = errors.Unwrap(u) {
		var m string
		if ce, ok := u.(cueerrors.Error); ok {
			format, args := ce.Msg()
			m = fmt.Sprintf(format, args...)
		} else {
			m = u.Error()
		}
		switch {
		case msg == "":
			msg = m
		case m != "" && !strings.Contains(msg, m):
			msg += ": " + m
		}
	}
	return msg
}

// fieldPos finds where the user's files declare path, or the longest
// prefix of it they declare (a profile's name comes from its key, so an
// error in profiles.x.name belongs at profiles.x). It looks through
// struct literals and the operands of &.
func fieldPos(files []*ast.File, path []string) token.Pos {
	var best token.Pos
	bestDepth := 0
	var walk func(decls []ast.Decl, depth int)
	walk = func(decls []ast.Decl, depth int) {
		if depth >= len(path) {
			return
		}
		for _, d := range decls {
			f, ok := d.(*ast.Field)
			if !ok {
				if em, ok := d.(*ast.EmbedDecl); ok {
					walk(declsOf(em.Expr), depth)
				}
				continue
			}
			name, _, err := ast.LabelName(f.Label)
			if err != nil || name != unquote(path[depth]) {
				continue
			}
			if depth+1 > bestDepth {
				best, bestDepth = f.Label.Pos(), depth+1
			}
			walk(declsOf(f.Value), depth+1)
		}
	}
	for _, f := range files {
		walk(f.Decls, 0)
	}
	return best
}

func declsOf(x ast.Expr) []ast.Decl {
	switch x := x.(type) {
	case *ast.StructLit:
		return x.Elts
	case *ast.BinaryExpr:
		if x.Op == token.AND {
			return append(declsOf(x.X), declsOf(x.Y)...)
		}
	case *ast.ParenExpr:
		return declsOf(x.X)
	}
	return nil
}

func unquote(s string) string {
	if u, err := strconv.Unquote(s); err == nil {
		return u
	}
	return s
}

// attrPos is the position of the first @name(...) attribute in files
// (also @extern(name)), for errors CUE reports without one.
func attrPos(files []*ast.File, name string) token.Pos {
	var pos token.Pos
	for _, f := range files {
		ast.Walk(f, func(n ast.Node) bool {
			if a, ok := n.(*ast.Attribute); ok && !pos.IsValid() {
				k, body := a.Split()
				if k == name || (k == "extern" && strings.TrimSpace(body) == name) {
					pos = a.Pos()
				}
			}
			return !pos.IsValid()
		}, nil)
	}
	return pos
}

// sameDomain reports whether two extended resources share a vendor
// domain (the part before the slash).
func sameDomain(a, b string) bool {
	i, j := strings.Index(a, "/"), strings.Index(b, "/")
	return i > 0 && j > 0 && a[:i] == b[:j]
}

// hint says what to do about a CUE error, by its kind.
func hint(msg string) string {
	switch {
	case strings.Contains(msg, "field not allowed"):
		return ": not in accelc's schema; check the spelling"
	case strings.Contains(msg, "incomplete value"), strings.Contains(msg, "non-concrete"):
		return ": give it a concrete value"
	case strings.Contains(msg, "mismatched types"):
		return ": write a value of the type the schema expects"
	case strings.Contains(msg, "conflicting values"):
		return ": it is set to two different values; keep one, or mark the shared one a default (*4 | int)"
	case strings.Contains(msg, ".name: invalid value") && strings.Contains(msg, "[-a-z0-9]"):
		return ": a name (a profile's or team's is its key) must be a DNS-1123 label: lower-case letters, digits and '-', starting and ending with a letter or digit"
	case strings.Contains(msg, "out of bound"), strings.Contains(msg, "invalid value"):
		return ": outside what the schema allows"
	case strings.Contains(msg, "structural cycle"):
		return ": the value contains itself; a field may not refer to a struct that encloses it: break the cycle"
	case strings.Contains(msg, "import failed") && strings.Contains(msg, "cue.mod"):
		return ": imports need a CUE module: add cue.mod/module.cue in the cluster folder or a parent (cue mod init, as examples/clusters does), or inline the imported values"
	case strings.Contains(msg, "import failed"):
		return ": check the import path against the module's packages (cue.mod/module.cue and its folders)"
	case strings.Contains(msg, "embed") && strings.Contains(msg, "not in a module"):
		return ": @embed needs a CUE module: add cue.mod/module.cue in the cluster folder or a parent (cue mod init)"
	case strings.Contains(msg, "@embed"):
		return ": @embed reads files relative to the .cue file's folder, inside the module: add the file or fix its path"
	}
	return ""
}

// DefaultInventory returns the inventory snapshot that sits in a cluster
// directory by convention (inventory.json, .yaml or .yml), or "".
func DefaultInventory(dir string) string {
	for _, name := range []string{"inventory.json", "inventory.yaml", "inventory.yml"} {
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			return p
		}
	}
	return ""
}
