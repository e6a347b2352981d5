package inventory

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"unicode"

	"sigs.k8s.io/yaml"

	"github.com/accelc/accelc/pkg/catalog"
)

// RawNode is the part of a Kubernetes Node that classification reads.
type RawNode struct {
	Kind     string `json:"kind"`
	Metadata struct {
		Name   string            `json:"name"`
		Labels map[string]string `json:"labels"`
	} `json:"metadata"`
	Spec struct {
		Unschedulable bool `json:"unschedulable"`
	} `json:"spec"`
	Status struct {
		Capacity    map[string]string `json:"capacity"`
		Allocatable map[string]string `json:"allocatable"`
		Conditions  []struct {
			Type   string `json:"type"`
			Status string `json:"status"`
		} `json:"conditions"`
	} `json:"status"`
}

// Problem is a node that could not be read or classified. It never stops
// a run: the node is left out and the problem is reported.
type Problem struct {
	Node   string `json:"node,omitempty"`
	Item   int    `json:"item"`
	Reason string `json:"reason"`
}

func (p Problem) String() string {
	if p.Node != "" {
		return fmt.Sprintf("node %s (items[%d]): %s", p.Node, p.Item, p.Reason)
	}
	return fmt.Sprintf("items[%d]: %s", p.Item, p.Reason)
}

// FileError is an inventory file that cannot be read at all.
type FileError struct {
	Path string
	Line int // 0 when unknown
	Err  error
}

func (e *FileError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %v", e.Path, e.Line, e.Err)
	}
	return fmt.Sprintf("%s: %v", e.Path, e.Err)
}

func (e *FileError) Unwrap() error { return e.Err }

// ReadFile reads a node snapshot: what `kubectl get nodes -o json` or
// `-o yaml` prints (kind List or NodeList), or a single Node.
func ReadFile(path string) ([]RawNode, []Problem, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, &FileError{Path: path, Err: err}
	}
	nodes, problems, err := Decode(data)
	if err != nil {
		var fe *FileError
		if errors.As(err, &fe) {
			fe.Path = path
			return nil, nil, fe
		}
		return nil, nil, &FileError{Path: path, Err: err}
	}
	return nodes, problems, nil
}

type list struct {
	Kind  string            `json:"kind"`
	Items []json.RawMessage `json:"items"`
}

// Decode parses a snapshot held in memory. The error is a *FileError
// (without a path) when the document itself is unreadable; broken items
// come back as Problems.
func Decode(data []byte) ([]RawNode, []Problem, error) {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return nil, nil, &FileError{Err: errors.New("empty file: expected the output of `kubectl get nodes -o json`")}
	}
	jsonData := trimmed
	if trimmed[0] != '{' && trimmed[0] != '[' {
		j, err := yaml.YAMLToJSON(data)
		if err != nil {
			return nil, nil, &FileError{Line: yamlLine(err), Err: fmt.Errorf("not JSON or YAML: %v", err)}
		}
		jsonData = j
	}
	// Fast path: the whole list decodes at once. Only when some item does
	// not is the list decoded again item by item, to report that item.
	var fast struct {
		Kind  string    `json:"kind"`
		Items []RawNode `json:"items"`
	}
	if json.Unmarshal(jsonData, &fast) == nil && (fast.Kind == "List" || fast.Kind == "NodeList") {
		return checkNodes(fast.Items, nil)
	}
	var top list
	if err := json.Unmarshal(jsonData, &top); err != nil {
		line := 0
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		var off int64 = -1
		if errors.As(err, &se) {
			off = se.Offset
		} else if errors.As(err, &te) {
			off = te.Offset
		}
		if off >= 0 && &jsonData[0] == &trimmed[0] {
			lead := len(data) - len(bytes.TrimLeftFunc(data, unicode.IsSpace))
			line = 1 + bytes.Count(data[:lead+int(off)], []byte("\n"))
		}
		return nil, nil, &FileError{Line: line, Err: fmt.Errorf("not a node list: %v", err)}
	}
	switch top.Kind {
	case "List", "NodeList":
	case "Node":
		top.Items = []json.RawMessage{jsonData}
	case "":
		return nil, nil, &FileError{Err: errors.New("no `kind`: expected a NodeList, as `kubectl get nodes -o json` prints")}
	default:
		return nil, nil, &FileError{Err: fmt.Errorf("kind is %s, expected List or NodeList of nodes: take the snapshot with `kubectl get nodes -o json`", top.Kind)}
	}
	nodes := make([]RawNode, len(top.Items))
	bad := make([]*Problem, len(top.Items))
	for i, item := range top.Items {
		if err := json.Unmarshal(item, &nodes[i]); err != nil {
			bad[i] = &Problem{Node: nameOf(item), Item: i, Reason: "unreadable: " + err.Error()}
		}
	}
	return checkNodes(nodes, bad)
}

// checkNodes drops items that are not usable nodes (bad[i] set, another
// kind, no name, a name listed twice) and reports each as a Problem.
func checkNodes(items []RawNode, bad []*Problem) ([]RawNode, []Problem, error) {
	nodes := make([]RawNode, 0, len(items))
	var problems []Problem
	seen := make(map[string]int, len(items))
	for i := range items {
		n := &items[i]
		switch {
		case bad != nil && bad[i] != nil:
			problems = append(problems, *bad[i])
			continue
		case n.Kind != "" && n.Kind != "Node":
			problems = append(problems, Problem{Node: n.Metadata.Name, Item: i, Reason: fmt.Sprintf("kind is %s, not Node", n.Kind)})
			continue
		case n.Metadata.Name == "":
			problems = append(problems, Problem{Item: i, Reason: "no metadata.name"})
			continue
		}
		if first, dup := seen[n.Metadata.Name]; dup {
			problems = append(problems, Problem{Node: n.Metadata.Name, Item: i, Reason: fmt.Sprintf("listed twice (also items[%d]); the first is kept", first)})
			continue
		}
		seen[n.Metadata.Name] = i
		nodes = append(nodes, *n)
	}
	return nodes, problems, nil
}

// nameOf digs the node name out of an item that does not decode as a Node.
func nameOf(item json.RawMessage) string {
	var probe struct {
		Metadata struct {
			Name any `json:"name"`
		} `json:"metadata"`
	}
	if json.Unmarshal(item, &probe) == nil {
		if s, ok := probe.Metadata.Name.(string); ok {
			return s
		}
	}
	return ""
}

// yamlLine pulls the line number out of a YAML parser message
// ("yaml: line 7: ...").
func yamlLine(err error) int {
	msg := err.Error()
	i := strings.Index(msg, "line ")
	if i < 0 {
		return 0
	}
	n := 0
	for _, r := range msg[i+5:] {
		if r < '0' || r > '9' {
			break
		}
		n = n*10 + int(r-'0')
	}
	return n
}

// Load reads a snapshot file and classifies its nodes; the nodes it could
// not read are the inventory's Problems.
func Load(path string, cat *catalog.Catalog, opts Options) (*Inventory, error) {
	raw, problems, err := ReadFile(path)
	if err != nil {
		return nil, err
	}
	inv := Classify(raw, cat, opts)
	inv.Problems = problems
	return inv, nil
}
