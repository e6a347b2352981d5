package policytest

// Checking the shape of an admission cases file, so that a mistake names
// its line.

import (
	"fmt"
	"slices"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// CasesDoc is the page that describes the cases file, named in its errors.
const CasesDoc = "docs/admission-cases.md"

// caseFields are a case's fields, in the order the docs give them, with
// the YAML kind each takes.
var caseFields = []struct {
	name string
	kind string // "string", "list", "bool"
}{
	{"name", "string"}, {"object", "string"}, {"deny", "list"}, {"message", "string"},
	{"mutate", "bool"}, {"operation", "string"}, {"oldObject", "string"}, {"subResource", "string"}, {"user", "string"},
}

const casesShape = `a mapping whose one key, cases, holds a list of cases:

    cases:
    - name: admitted-pod
      object: pods/admitted-pod.yaml
      deny: []
    - name: no-profile
      object: pods/no-profile.yaml
      deny: [profilerequired]`

// checkCasesShape reads a cases file as YAML and says, with the file and
// line, where it is not the shape ReadCases decodes, in words rather than
// a decoder's Go types. It returns the line of each case.
func checkCasesShape(path string, data []byte) ([]int, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		// yaml.v3 says "yaml: line N: …".
		msg, where := strings.TrimPrefix(err.Error(), "yaml: "), path
		var line int
		if n, _ := fmt.Sscanf(msg, "line %d:", &line); n == 1 {
			where = fmt.Sprintf("%s:%d", path, line)
			msg = strings.TrimSpace(msg[strings.Index(msg, ":")+1:])
		}
		return nil, fmt.Errorf("%s: not YAML: %s (see %s)", where, msg, CasesDoc)
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil, nil // empty: no cases
	}
	root := doc.Content[0]
	at := func(n *yaml.Node) string { return fmt.Sprintf("%s:%d", path, n.Line) }
	switch root.Kind {
	case yaml.MappingNode:
	case yaml.SequenceNode:
		return nil, fmt.Errorf("%s: the file is a list; it must be %s\n(indent the list under `cases:`; see %s)", at(root), casesShape, CasesDoc)
	default:
		return nil, fmt.Errorf("%s: the file is a %s; it must be %s\n(see %s)", at(root), kindName(root), casesShape, CasesDoc)
	}
	var list *yaml.Node
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		if k.Value != "cases" {
			return nil, fmt.Errorf("%s: unknown key %q: the file's one key is cases, a list of cases (see %s)", at(k), k.Value, CasesDoc)
		}
		list = v
	}
	if list == nil || list.Tag == "!!null" {
		return nil, nil
	}
	if list.Kind != yaml.SequenceNode {
		hint := ""
		if list.Kind == yaml.MappingNode {
			hint = "; to key cases by name, write each as `- name: <key>` with its fields below"
		}
		return nil, fmt.Errorf("%s: cases is a %s; it must be a list of cases, each starting with `- name:`%s (see %s)", at(list), kindName(list), hint, CasesDoc)
	}
	var names []string
	for _, f := range caseFields {
		names = append(names, f.name)
	}
	lines := make([]int, len(list.Content))
	for i, c := range list.Content {
		lines[i] = c.Line
		if c.Kind != yaml.MappingNode {
			return nil, fmt.Errorf("%s: cases[%d] is a %s; each case is a mapping with the fields %s (see %s)", at(c), i, kindName(c), strings.Join(names, ", "), CasesDoc)
		}
		for j := 0; j+1 < len(c.Content); j += 2 {
			k, v := c.Content[j], c.Content[j+1]
			fi := slices.IndexFunc(caseFields, func(f struct{ name, kind string }) bool { return f.name == k.Value })
			if fi < 0 {
				return nil, fmt.Errorf("%s: cases[%d]: unknown field %q; a case has %s (see %s)", at(k), i, k.Value, strings.Join(names, ", "), CasesDoc)
			}
			switch want := caseFields[fi].kind; {
			case v.Tag == "!!null":
			case want == "list" && v.Kind == yaml.ScalarNode:
				return nil, fmt.Errorf("%s: cases[%d]: %s is a list of policy names: write %s: [%s] (or [] for a case that is admitted; see %s)", at(v), i, k.Value, k.Value, v.Value, CasesDoc)
			case want == "list" && (v.Kind != yaml.SequenceNode || slices.ContainsFunc(v.Content, func(e *yaml.Node) bool { return e.Kind != yaml.ScalarNode })):
				return nil, fmt.Errorf("%s: cases[%d]: %s is a list of policy names, such as [entitlement] (see %s)", at(v), i, k.Value, CasesDoc)
			case want == "bool" && (v.Kind != yaml.ScalarNode || v.Tag != "!!bool"):
				return nil, fmt.Errorf("%s: cases[%d]: %s is true or false (see %s)", at(v), i, k.Value, CasesDoc)
			case want == "string" && v.Kind != yaml.ScalarNode:
				return nil, fmt.Errorf("%s: cases[%d]: %s is a %s; it must be a string (see %s)", at(v), i, k.Value, kindName(v), CasesDoc)
			}
		}
	}
	return lines, nil
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "list"
	case yaml.MappingNode:
		return "mapping"
	case yaml.AliasNode:
		return "alias"
	}
	return "single value (" + strings.TrimPrefix(n.Tag, "!!") + ")"
}
