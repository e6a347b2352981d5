package policytest

// Admission cases: a cluster's cases file read, and the suite that runs
// them against the rendered policies.

import (
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/accelc/accelc/pkg/compile"
	"github.com/accelc/accelc/pkg/render"
	"github.com/accelc/accelc/policies"
)

// CasesFile is where a cluster keeps its admission fixtures, relative to
// the cluster directory.
const CasesFile = "admission/cases.yaml"

// Cases is a cluster's admission fixtures: objects and the policies that
// must deny each.
type Cases struct {
	Cases []Case `json:"cases"`
}

// Case is one admission fixture.
type Case struct {
	Name string `json:"name"`
	// Object is the manifest's path relative to the cases file: a Pod, or a
	// workload Gatekeeper expands into one.
	Object string `json:"object"`
	// Deny lists the policies (policies/<name>: profilerequired,
	// profilescheduling, annotations, entitlement) that must report a
	// violation; every other policy must report none. Empty: admitted.
	Deny []string `json:"deny"`
	// Message, if set, is a regular expression at least one violation's
	// message must match (checked when Deny is not empty).
	Message string `json:"message,omitempty"`
	// Mutate runs the object through the rendered mutators first, as the
	// webhook does before validating; the suite holds the object as
	// stored (a workload's templates as the pods they make).
	Mutate bool `json:"mutate,omitempty"`
	// Operation is CREATE (the default) or UPDATE. An UPDATE of a pod is
	// judged with OldObject (a path like Object's), through SubResource
	// when set (ephemeralcontainers: the only pod subresource that
	// changes what runs).
	Operation   string `json:"operation,omitempty"`
	OldObject   string `json:"oldObject,omitempty"`
	SubResource string `json:"subResource,omitempty"`
	// User is who makes the request (its userInfo.username): a
	// controller's service account, Kueue's; empty, an ordinary user.
	User string `json:"user,omitempty"`
}

// ReadCases reads a cluster's cases file; a cluster without one has none.
func ReadCases(clusterDir string) (*Cases, error) {
	p := filepath.Join(clusterDir, filepath.FromSlash(CasesFile))
	b, err := os.ReadFile(p)
	if os.IsNotExist(err) {
		return &Cases{}, nil
	}
	if err != nil {
		return nil, err
	}
	lines, err := checkCasesShape(p, b)
	if err != nil {
		return nil, err
	}
	var c Cases
	if err := yaml.UnmarshalStrict(b, &c); err != nil {
		return nil, fmt.Errorf("%s: %w (see %s)", p, err, CasesDoc)
	}
	// at is the file and line of case i, for the errors below.
	at := func(i int) string {
		if i < len(lines) {
			return fmt.Sprintf("%s:%d", p, lines[i])
		}
		return p
	}
	known := map[string]bool{}
	for _, n := range policyNames() {
		known[n] = true
	}
	for i, tc := range c.Cases {
		if tc.Name == "" || tc.Object == "" {
			return nil, fmt.Errorf("%s: cases[%d]: give name and object (see %s)", at(i), i, CasesDoc)
		}
		for _, k := range tc.Deny {
			if !known[k] {
				return nil, fmt.Errorf("%s: case %s: deny names %s, not an accelc policy (%s)", at(i), tc.Name, k, strings.Join(policyNames(), ", "))
			}
		}
		switch {
		case tc.Operation != "" && tc.Operation != "CREATE" && tc.Operation != "UPDATE":
			return nil, fmt.Errorf("%s: case %s: operation %s: use CREATE or UPDATE", at(i), tc.Name, tc.Operation)
		case tc.Operation != "UPDATE" && (tc.OldObject != "" || tc.SubResource != "" || tc.User != ""):
			return nil, fmt.Errorf("%s: case %s: oldObject, subResource and user are an UPDATE's: add operation: UPDATE", at(i), tc.Name)
		case tc.Operation == "UPDATE" && tc.Mutate:
			return nil, fmt.Errorf("%s: case %s: an UPDATE always goes through the mutations, as a live API server sends it (the object written as stored, changed): drop mutate", at(i), tc.Name)
		case tc.SubResource != "" && tc.SubResource != "ephemeralcontainers":
			return nil, fmt.Errorf("%s: case %s: subResource %s: accelc's policies judge pods/ephemeralcontainers only", at(i), tc.Name, tc.SubResource)
		}
		if tc.Message != "" {
			if _, err := regexp.Compile(tc.Message); err != nil {
				return nil, fmt.Errorf("%s: case %s: message: %w", at(i), tc.Name, err)
			}
		}
	}
	return &c, nil
}

func policyNames() []string {
	var out []string
	for _, p := range policies.All {
		out = append(out, p.Dir)
	}
	return out
}

// Suite builds a gator suite over a rendered tree: one test per accelc
// constraint with its template, every fixture a case of each. A case
// expects, from a constraint that matches its namespace, violations from
// the policies it lists (told apart by the policy name that starts each
// message) and none from the others. Every case gets the rendered
// HardwareProfiles and NamespaceEntitlements, and the Nodes fixtures name
// in spec.nodeName (typed from nodeTypes), as synced inventory. Paths are
// relative to the suite's folder, so the files can be written anywhere
// and checked with `gator verify DIR/...`.
func Suite(tree render.Tree, clusterDir string, cases *Cases, typeLabel string, nodeTypes map[string]string) (map[string][]byte, error) {
	files := map[string][]byte{}
	var synced, expansions [][]byte
	for _, p := range tree.Paths() {
		switch {
		case strings.HasPrefix(p, "policies/expansiontemplate-"):
			expansions = append(expansions, tree[p])
		case strings.HasPrefix(p, "policies/"), strings.HasPrefix(p, render.DirConstraints+"/"):
			files[p] = tree[p]
		case strings.HasPrefix(p, "profiles/hardwareprofile-"), strings.HasPrefix(p, "tenancy/namespaceentitlement-"), strings.HasPrefix(p, "priorities/priorityclass-"):
			synced = append(synced, tree[p])
		}
	}
	inventory := []string{"inventory/synced.yaml"}
	files[inventory[0]] = joinDocs(synced)
	const expansionFile = "policies/expansiontemplates.yaml"
	files[expansionFile] = joinDocs(expansions)

	// Read every fixture first: the mutator needs the namespaces of the
	// objects it mutates.
	fixtures := make([]caseObject, len(cases.Cases))
	var mutateNamespaces []string
	for i, tc := range cases.Cases {
		f, err := readCaseObject(clusterDir, tc)
		if err != nil {
			return nil, err
		}
		fixtures[i] = f
		if tc.Mutate && !slices.Contains(mutateNamespaces, f.ns) {
			mutateNamespaces = append(mutateNamespaces, f.ns)
		}
	}
	// The fixtures to mutate, through the rendered mutators in the engine.
	var mutated []Mutation
	if len(mutateNamespaces) > 0 {
		req := EngineRequest{Op: OpMutate, Tree: tree, Namespaces: mutateNamespaces}
		for i, tc := range cases.Cases {
			if tc.Mutate {
				req.Objects = append(req.Objects, fixtures[i].data)
			}
		}
		resp, err := callEngine(context.Background(), req)
		if err != nil {
			return nil, err
		}
		if len(resp.Mutated) != len(req.Objects) {
			return nil, &EngineError{fmt.Errorf("%s mutated %d objects of %d", EngineCommand, len(resp.Mutated), len(req.Objects))}
		}
		mutated = resp.Mutated
	}

	namespaces := map[string]string{}
	objects := map[string]string{} // case name → its object in the suite
	nodes := map[string][]byte{}
	for i, tc := range cases.Cases {
		f := fixtures[i]
		namespaces[tc.Name] = f.ns
		if t, ok := nodeTypes[f.nodeName]; ok && nodes[f.nodeName] == nil {
			node, err := yaml.Marshal(map[string]any{"apiVersion": "v1", "kind": "Node",
				"metadata": map[string]any{"name": f.nodeName, "labels": map[string]string{typeLabel: t}}})
			if err != nil {
				return nil, err
			}
			nodes[f.nodeName] = node
		}
		key, b := "cases/"+path.Clean(tc.Object), f.data
		if tc.Operation == "UPDATE" {
			var err error
			if key, b, err = updateReview(clusterDir, tc, f.data); err != nil {
				return nil, err
			}
		}
		if tc.Mutate {
			key = "cases/mutated/" + path.Clean(tc.Object)
			m := mutated[0]
			mutated = mutated[1:]
			if m.Error != "" {
				return nil, fmt.Errorf("case %s (%s): mutating: %s", tc.Name, f.src, m.Error)
			}
			b = m.Object
		}
		objects[tc.Name] = key
		files[key] = b
	}
	if len(nodes) > 0 {
		var docs [][]byte
		for _, name := range slices.Sorted(maps.Keys(nodes)) {
			docs = append(docs, nodes[name])
		}
		inventory = append(inventory, "inventory/nodes.yaml")
		files["inventory/nodes.yaml"] = joinDocs(docs)
	}

	type tcase struct {
		Name       string      `json:"name"`
		Object     string      `json:"object"`
		Inventory  []string    `json:"inventory"`
		Assertions []Assertion `json:"assertions"`
	}
	type test struct {
		Name       string  `json:"name"`
		Template   string  `json:"template"`
		Constraint string  `json:"constraint"`
		Expansion  string  `json:"expansion,omitempty"`
		Cases      []tcase `json:"cases"`
	}
	caseTests, err := CaseTests(tree)
	if err != nil {
		return nil, err
	}
	var tests []test
	for _, ct := range caseTests {
		t := test{Name: ct.Name, Template: ct.Template, Constraint: ct.Constraint, Expansion: expansionFile}
		if _, ok := files[t.Template]; !ok {
			return nil, fmt.Errorf("the rendered tree has no %s", t.Template)
		}
		for _, tc := range cases.Cases {
			t.Cases = append(t.Cases, tcase{Name: tc.Name, Object: objects[tc.Name], Inventory: inventory, Assertions: ct.Assertions(tc, namespaces[tc.Name])})
		}
		tests = append(tests, t)
	}
	suite, err := yaml.Marshal(map[string]any{
		"kind":       "Suite",
		"apiVersion": "test.gatekeeper.sh/v1alpha1",
		"metadata":   map[string]any{"name": "accelc-admission"},
		"tests":      tests,
	})
	if err != nil {
		return nil, err
	}
	files["suite.yaml"] = suite
	return files, nil
}

// updateReview is an UPDATE case's object in the suite: the
// AdmissionReview the API server sends Gatekeeper, with the old object
// and the user (gator verify judges one as the webhook would). A
// workload's own review judges its changed templates then; the pods
// Gatekeeper expands of an UPDATE, which carry no old object, say
// nothing.
func updateReview(clusterDir string, tc Case, data []byte) (string, []byte, error) {
	var obj map[string]any
	if err := yaml.Unmarshal(data, &obj); err != nil {
		return "", nil, err
	}
	kind, _ := obj["kind"].(string)
	apiVersion, _ := obj["apiVersion"].(string)
	group, version, found := strings.Cut(apiVersion, "/")
	if !found {
		group, version = "", apiVersion
	}
	if (kind != "Pod" || apiVersion != "v1") && tc.SubResource != "" {
		return "", nil, fmt.Errorf("case %s: subResource %s is a pod's", tc.Name, tc.SubResource)
	}
	resource := strings.ToLower(kind) + "s"
	if w, ok := render.WorkloadKindOf(group, kind); ok {
		resource = w.Resource
	}
	user := tc.User
	if user == "" {
		user = "accelc-test"
	}
	md, _ := obj["metadata"].(map[string]any)
	req := map[string]any{
		"uid":         "accelc-test-" + tc.Name,
		"kind":        map[string]any{"group": group, "version": version, "kind": kind},
		"resource":    map[string]any{"group": group, "version": version, "resource": resource},
		"name":        md["name"],
		"namespace":   md["namespace"],
		"operation":   "UPDATE",
		"userInfo":    map[string]any{"username": user},
		"object":      obj,
		"subResource": tc.SubResource,
	}
	if tc.SubResource == "" {
		delete(req, "subResource")
	}
	if tc.OldObject != "" {
		src := filepath.Join(clusterDir, filepath.FromSlash(path.Dir(CasesFile)), filepath.FromSlash(tc.OldObject))
		b, err := os.ReadFile(src)
		if err != nil {
			return "", nil, fmt.Errorf("case %s: %w", tc.Name, err)
		}
		var old map[string]any
		if err := yaml.Unmarshal(b, &old); err != nil {
			return "", nil, fmt.Errorf("%s: %w", src, err)
		}
		req["oldObject"] = old
	}
	out, err := yaml.Marshal(map[string]any{"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": req})
	return "cases/updates/" + tc.Name + ".yaml", out, err
}

// nsMatch is Gatekeeper's namespace matching.
func nsMatch(patterns []string, ns string) bool {
	_, ok := compile.MatchNamespace(patterns, ns)
	return ok
}

func joinDocs(docs [][]byte) []byte {
	var out []byte
	for i, d := range docs {
		if i > 0 {
			out = append(out, []byte("---\n")...)
		}
		out = append(out, d...)
	}
	return out
}

// CaseResult is one fixture checked against one constraint.
type CaseResult struct {
	Test, Case string
	Err        error
}

// RunSuite runs a suite built by Suite with Gatekeeper's own verify
// runner and constraint framework, in EngineCommand: the same engine as
// `gator verify` and the admission webhook.
func RunSuite(ctx context.Context, files map[string][]byte) ([]CaseResult, error) {
	resp, err := callEngine(ctx, EngineRequest{Op: OpSuite, Files: files})
	if err != nil {
		return nil, err
	}
	return resp.Cases, nil
}

// ReportCases prints a FAIL line per failed case and a summary line.
func ReportCases(w io.Writer, results []CaseResult) Summary {
	return report(w, "admission", results, func(r CaseResult) (string, error) { return r.Case + " - " + r.Test, r.Err })
}

// WriteFiles writes a suite's files under dir.
func WriteFiles(dir string, files map[string][]byte) error {
	for p, b := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(full, b, 0o644); err != nil {
			return err
		}
	}
	return nil
}
