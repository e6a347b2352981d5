package policytest

// Running admission cases: each case's assertions, its input objects and
// nodes, and the results.

import (
	"context"
	"fmt"
	"maps"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"os"

	"sigs.k8s.io/yaml"

	"github.com/accelc/accelc/pkg/render"
)

// CaseTest is one of a tree's constraints as a test of the admission
// cases: a case expects, from a constraint that matches its namespace,
// violations from the policies it lists and none from the others.
type CaseTest struct {
	// Name is the constraint's Kind/name, as gator names a test.
	Name       string
	Kind       string
	Constraint string // its path in the tree
	Template   string // its template's path in the tree
	Namespaces []string
	Excluded   []string
}

// Assertion is one expectation of a case against one constraint, in
// gator's form: Violations "yes" or "no" among the violations whose
// message matches Message.
type Assertion struct {
	Violations string `json:"violations"`
	Message    string `json:"message,omitempty"`
}

// CaseTests are the tree's constraints (constraints.gatekeeper.sh/v1beta1
// under constraints/), in the tree's order.
func CaseTests(tree render.Tree) ([]CaseTest, error) {
	var out []CaseTest
	for _, p := range tree.Paths() {
		if !strings.HasPrefix(p, render.DirConstraints+"/") {
			continue
		}
		var c struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
			Metadata   struct {
				Name string `json:"name"`
			} `json:"metadata"`
			Spec struct {
				Match struct {
					Namespaces         []string `json:"namespaces"`
					ExcludedNamespaces []string `json:"excludedNamespaces"`
				} `json:"match"`
			} `json:"spec"`
		}
		if err := yaml.Unmarshal(tree[p], &c); err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		if c.APIVersion != "constraints.gatekeeper.sh/v1beta1" {
			continue
		}
		out = append(out, CaseTest{
			Name: c.Kind + "/" + c.Metadata.Name, Kind: c.Kind, Constraint: p,
			Template:   "policies/constrainttemplate-" + strings.ToLower(c.Kind) + ".yaml",
			Namespaces: c.Spec.Match.Namespaces, Excluded: c.Spec.Match.ExcludedNamespaces,
		})
	}
	return out, nil
}

// Assertions are what case tc, whose object is in namespace ns, expects
// of the constraint: one assertion per policy, by the prefix of its
// messages (after the "[Implied by …] " of an expanded workload), and the
// case's message when it expects a denial here.
func (t CaseTest) Assertions(tc Case, ns string) []Assertion {
	matches := (len(t.Namespaces) == 0 || nsMatch(t.Namespaces, ns)) && !nsMatch(t.Excluded, ns)
	var as []Assertion
	for _, name := range policyNames() {
		a := Assertion{Violations: "no", Message: `(^|\] )` + name + ": "}
		if matches && slices.Contains(tc.Deny, name) {
			a.Violations = "yes"
		}
		as = append(as, a)
	}
	if tc.Message != "" && matches && len(tc.Deny) > 0 {
		as = append(as, Assertion{Violations: "yes", Message: tc.Message})
	}
	return as
}

// CaseInput is one case as the engine judges it: the case with the
// manifests its object and old object name.
type CaseInput struct {
	Case
	ObjectData    []byte `json:"objectData"`
	OldObjectData []byte `json:"oldObjectData,omitempty"`
}

// ReadCaseInputs reads each case's manifests (relative to the cases file
// in clusterDir). Every object must name its namespace: constraints,
// mutators and the MutatingAdmissionPolicies' bindings match by it.
func ReadCaseInputs(clusterDir string, cases *Cases) ([]CaseInput, error) {
	dir := filepath.Join(clusterDir, filepath.FromSlash(path.Dir(CasesFile)))
	var out []CaseInput
	for _, tc := range cases.Cases {
		in := CaseInput{Case: tc}
		f, err := readCaseObject(clusterDir, tc)
		if err != nil {
			return nil, err
		}
		in.ObjectData = f.data
		if tc.OldObject != "" {
			if in.OldObjectData, err = os.ReadFile(filepath.Join(dir, filepath.FromSlash(tc.OldObject))); err != nil {
				return nil, fmt.Errorf("case %s: %w", tc.Name, err)
			}
		}
		out = append(out, in)
	}
	return out, nil
}

// Nodes are the Nodes Gatekeeper syncs from a cluster of the inventory:
// each node with its type label (typeLabel: type).
func Nodes(typeLabel string, nodeTypes map[string]string) ([][]byte, error) {
	var out [][]byte
	for _, name := range slices.Sorted(maps.Keys(nodeTypes)) {
		b, err := yaml.Marshal(map[string]any{"apiVersion": "v1", "kind": "Node",
			"metadata": map[string]any{"name": name, "labels": map[string]string{typeLabel: nodeTypes[name]}}})
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, nil
}

// RunCases judges the cases in EngineCommand as a live cluster of the tree
// would — the API server's MutatingAdmissionPolicies, Gatekeeper's
// mutating webhook, then its validating webhook with the workload's
// expansions mutated (engine.JudgeCases) — with nodes (Nodes) synced,
// and checks each against each constraint as a gator suite's case would.
func RunCases(ctx context.Context, tree render.Tree, nodes [][]byte, cases []CaseInput) ([]CaseResult, error) {
	resp, err := callEngine(ctx, EngineRequest{Op: OpCases, Tree: tree, Data: nodes, Cases: cases})
	if err != nil {
		return nil, err
	}
	return resp.Cases, nil
}

// caseObject is a case's object file as read: where it is, its bytes,
// and the namespace and node it names.
type caseObject struct {
	src, ns, nodeName string
	data              []byte
}

// readCaseObject reads a case's object, which must name its namespace:
// constraints, mutators and the MutatingAdmissionPolicies' bindings match
// by it.
func readCaseObject(clusterDir string, tc Case) (caseObject, error) {
	src := filepath.Join(clusterDir, filepath.FromSlash(path.Dir(CasesFile)), filepath.FromSlash(tc.Object))
	b, err := os.ReadFile(src)
	if err != nil {
		return caseObject{}, fmt.Errorf("case %s: %w", tc.Name, err)
	}
	var obj struct {
		Metadata struct {
			Namespace string `json:"namespace"`
		} `json:"metadata"`
		Spec struct {
			NodeName string `json:"nodeName"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(b, &obj); err != nil {
		return caseObject{}, fmt.Errorf("%s: %w", src, err)
	}
	if obj.Metadata.Namespace == "" {
		return caseObject{}, fmt.Errorf("%s: give metadata.namespace: constraints match by namespace", src)
	}
	return caseObject{src: src, ns: obj.Metadata.Namespace, nodeName: obj.Spec.NodeName, data: b}, nil
}
