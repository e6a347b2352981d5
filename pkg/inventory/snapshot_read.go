package inventory

// Reading a snapshot file: kubectl's JSON or YAML list of nodes, with
// ResourceSlices and workloads, decoded item by item, and errors that name
// the file, line and item and say what to do.

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"reflect"
	"strings"
	"unicode"

	"sigs.k8s.io/yaml"
)

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

// TextError is an inventory file of plain text, not a JSON or YAML node
// list: most often the table `kubectl get nodes` prints, saved where its
// JSON belongs.
type TextError struct {
	// Table is true when the text is kubectl's table (a NAME STATUS
	// header).
	Table bool
	// Path is the file, for the command that writes it again; "" when
	// the snapshot was decoded from memory.
	Path string
}

func (e *TextError) Error() string {
	what := "plain text, not a JSON or YAML node list"
	if e.Table {
		what = "the table `kubectl get nodes` prints, not a JSON or YAML node list"
	}
	return fmt.Sprintf("%s: save the nodes as JSON: kubectl get nodes -o json > %s", what, cmp.Or(e.Path, "inventory.json"))
}

// kubectlTable reports whether data starts with the header of the table
// `kubectl get nodes` prints (NAME STATUS ROLES AGE VERSION, and -o wide's
// further columns).
func kubectlTable(data []byte) bool {
	header, _, _ := bytes.Cut(data, []byte("\n"))
	fields := strings.Fields(string(header))
	return len(fields) >= 2 && fields[0] == "NAME" && fields[1] == "STATUS"
}

// ReadFile reads a node snapshot: what `kubectl get nodes -o json` or
// `-o yaml` prints (kind List or NodeList), a single Node, or an array of
// nodes (jq '.items').
func ReadFile(path string) ([]RawNode, []Problem, error) {
	snap, err := ReadSnapshot(path)
	if err != nil {
		return nil, nil, err
	}
	return snap.Nodes, snap.Problems, nil
}

// ReadSnapshot reads a node snapshot file with its source, when accelc
// wrote it, and the ResourceSlices it holds (`kubectl get
// nodes,resourceslices -o json` writes both).
func ReadSnapshot(path string) (*Snapshot, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, &FileError{Path: path, Err: err}
	}
	snap, err := DecodeSnapshot(data)
	if err != nil {
		var fe *FileError
		if errors.As(err, &fe) {
			fe.Path = path
			var te *TextError
			if errors.As(err, &te) {
				te.Path = path
			}
			return nil, fe
		}
		return nil, &FileError{Path: path, Err: err}
	}
	return snap, nil
}

type list struct {
	Kind   string            `json:"kind"`
	Accelc *Source           `json:"accelc"`
	Items  []json.RawMessage `json:"items"`
	// NodeObject is the node of an NVML report (accelc inventory nvml).
	NodeObject json.RawMessage `json:"nodeObject"`
}

// Decode parses a snapshot held in memory. The error is a *FileError
// (without a path) when the document itself is unreadable; broken items
// come back as Problems.
func Decode(data []byte) ([]RawNode, []Problem, error) {
	snap, err := DecodeSnapshot(data)
	if err != nil {
		return nil, nil, err
	}
	return snap.Nodes, snap.Problems, nil
}

// DecodeSnapshot is Decode keeping the snapshot's source.
func DecodeSnapshot(data []byte) (*Snapshot, error) {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return nil, &FileError{Err: errors.New("empty file: expected the output of `kubectl get nodes -o json`")}
	}
	jsonData, err := documentJSON(data, trimmed)
	if err != nil {
		return nil, err
	}
	// Fast path: the whole list decodes at once. Only when some item does
	// not is the list decoded again item by item, to report that item.
	var fast struct {
		Kind   string  `json:"kind"`
		Accelc *Source `json:"accelc"`
		Items  []item  `json:"items"`
	}
	if json.Unmarshal(jsonData, &fast) == nil && (fast.Kind == "List" || fast.Kind == "NodeList") {
		return checkItems(fast.Accelc, fast.Items, nil), nil
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
		return nil, &FileError{Line: line, Err: fmt.Errorf("not a node list: %s", jsonReason(err))}
	}
	switch top.Kind {
	case "List", "NodeList":
	case "Node":
		top.Items = []json.RawMessage{jsonData}
	case "NVMLReport":
		if len(top.NodeObject) == 0 {
			return nil, &FileError{Err: errors.New("an NVMLReport without nodeObject: write it again with `accelc inventory nvml`")}
		}
		top.Items = []json.RawMessage{top.NodeObject}
	case "":
		return nil, &FileError{Err: errors.New("no `kind`: expected a NodeList, as `kubectl get nodes -o json` prints")}
	default:
		return nil, &FileError{Err: fmt.Errorf("kind is %s, expected List or NodeList of nodes (or a Node, or an NVMLReport): take the snapshot with `kubectl get nodes -o json`", top.Kind)}
	}
	items := make([]item, len(top.Items))
	bad := make([]*Problem, len(top.Items))
	for i, raw := range top.Items {
		if err := json.Unmarshal(raw, &items[i]); err != nil {
			kind, name := probe(raw)
			if kind == "Node" {
				kind = ""
			}
			bad[i] = &Problem{Kind: kind, Node: name, Item: i, Reason: "unreadable: " + jsonReason(err)}
		}
	}
	return checkItems(top.Accelc, items, bad), nil
}

// documentJSON is a snapshot file's document as JSON: JSON as it is,
// YAML converted, an array of nodes as the List it was cut from. Plain
// text (kubectl's table, most often) is a TextError.
func documentJSON(data, trimmed []byte) ([]byte, error) {
	jsonData := trimmed
	if trimmed[0] != '{' && trimmed[0] != '[' {
		j, err := yaml.YAMLToJSON(data)
		if err != nil {
			if kubectlTable(trimmed) {
				return nil, &FileError{Err: &TextError{Table: true}}
			}
			return nil, &FileError{Line: YAMLLine(err), Err: fmt.Errorf("not JSON or YAML: %v", err)}
		}
		jsonData = bytes.TrimSpace(j)
	}
	switch {
	case len(jsonData) == 0 || jsonData[0] != '{' && jsonData[0] != '[':
		// YAML reads plain text as one string (or a number): not a
		// document of objects.
		return nil, &FileError{Err: &TextError{Table: kubectlTable(trimmed)}}
	case jsonData[0] == '[':
		// A JSON or YAML array of nodes (and ResourceSlices), as jq
		// '.items' leaves it: the items of a List.
		wrapped := make([]byte, 0, len(jsonData)+len(`{"kind":"List","items":}`))
		wrapped = append(append(append(wrapped, `{"kind":"List","items":`...), jsonData...), '}')
		jsonData = wrapped
	}
	return jsonData, nil
}

// item is an item of a list: a Node or a ResourceSlice. Its spec has the
// fields of both kinds' specs.
type item struct {
	RawNode
	Spec itemSpec `json:"spec"`
}

type itemSpec struct {
	Unschedulable bool    `json:"unschedulable,omitempty"`
	Taints        []Taint `json:"taints,omitempty"`
	SliceSpec
}

// jsonReason says in accelc's words what encoding/json found: which field
// holds what, and what it should hold, rather than the Go type it could
// not be decoded into.
func jsonReason(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Type != nil {
		// An item's fields are promoted from embedded structs, which
		// encoding/json names in the path.
		field := strings.NewReplacer("RawNode.", "", "SliceSpec.", "").Replace(te.Field)
		if field == "" {
			field = "the document"
		}
		want := jsonKind(te.Type)
		if strings.HasSuffix(field, "capacity") || strings.HasSuffix(field, "allocatable") {
			switch want {
			case "a string":
				want = `a quantity string (such as "8")`
			case "an object of strings":
				want = `an object of quantity strings (such as {"nvidia.com/gpu": "8"})`
			}
		}
		return fmt.Sprintf("%s: %s where %s belongs", field, jsonValue(te.Value), want)
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return "not valid JSON: " + se.Error()
	}
	return err.Error()
}

// jsonValue names the JSON value encoding/json reports ("string",
// "number 5", "array") with its article.
func jsonValue(v string) string {
	switch {
	case v == "array", v == "object":
		return "an " + v
	case v == "":
		return "a value"
	default:
		return "a " + v
	}
}

// jsonKind is what JSON value a Go type takes: "a string", "a list of
// objects", "an object of strings".
func jsonKind(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch n := jsonNoun(t); {
	case t == rawMessage:
		return "a value"
	case t.Kind() == reflect.Slice && t.Elem() != rawMessage, t.Kind() == reflect.Array:
		return "a list of " + jsonNoun(t.Elem()) + "s"
	case t.Kind() == reflect.Map:
		return "an object of " + jsonNoun(t.Elem()) + "s"
	case n == "object":
		return "an object"
	default:
		return "a " + n
	}
}

var rawMessage = reflect.TypeFor[json.RawMessage]()

// jsonNoun names the JSON value a Go type takes, without an article.
func jsonNoun(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		return "number"
	case reflect.Slice, reflect.Array:
		if t == rawMessage {
			return "value"
		}
		return "list"
	default:
		return "object"
	}
}

// checkItems drops items that are not usable nodes (bad[i] set, another
// kind, no name, a name listed twice) and reports each as a Problem. It
// keeps the ResourceSlices of accelerator drivers, redacted, and drops
// other drivers' without a word: their devices are not accelerators.
func checkItems(src *Source, items []item, bad []*Problem) *Snapshot {
	nodes := make([]RawNode, 0, len(items))
	var resourceSlices []ResourceSlice
	var problems []Problem
	seen := make(map[string]int, len(items))
	seenSlices := map[string]int{}
	for i := range items {
		it := &items[i]
		switch {
		case bad != nil && bad[i] != nil:
			problems = append(problems, *bad[i])
			continue
		case it.Kind == "ResourceSlice":
			if !IsAcceleratorDriver(it.Spec.Driver) {
				continue
			}
			name := it.Metadata.Name
			if first, dup := seenSlices[name]; dup {
				problems = append(problems, Problem{Kind: it.Kind, Node: name, Item: i, Reason: fmt.Sprintf("listed twice (also items[%d]); the first is kept", first)})
				continue
			}
			seenSlices[name] = i
			rs := ResourceSlice{APIVersion: it.APIVersion, Kind: it.Kind, Spec: it.Spec.SliceSpec}
			rs.Metadata.Name = name
			resourceSlices = append(resourceSlices, rs)
			continue
		case WorkloadKind(it.Kind):
			// What the cluster runs, for accelc audit (pkg/workloads).
			continue
		case it.Kind != "" && it.Kind != "Node":
			problems = append(problems, Problem{Node: it.Metadata.Name, Item: i, Reason: fmt.Sprintf("kind is %s, not Node", it.Kind)})
			continue
		case it.Metadata.Name == "":
			problems = append(problems, Problem{Item: i, Reason: "no metadata.name"})
			continue
		}
		if first, dup := seen[it.Metadata.Name]; dup {
			problems = append(problems, Problem{Node: it.Metadata.Name, Item: i, Reason: fmt.Sprintf("listed twice (also items[%d]); the first is kept", first)})
			continue
		}
		seen[it.Metadata.Name] = i
		n := it.RawNode
		n.Spec.Unschedulable, n.Spec.Taints = it.Spec.Unschedulable, it.Spec.Taints
		nodes = append(nodes, n)
	}
	return &Snapshot{Source: src, Nodes: nodes, Slices: keepSlices(resourceSlices, false), Problems: problems}
}

// probe digs the kind and name out of an item that does not decode.
func probe(item json.RawMessage) (kind, name string) {
	var p struct {
		Kind     any `json:"kind"`
		Metadata struct {
			Name any `json:"name"`
		} `json:"metadata"`
	}
	if json.Unmarshal(item, &p) == nil {
		kind, _ = p.Kind.(string)
		name, _ = p.Metadata.Name.(string)
	}
	return kind, name
}

// YAMLLine pulls the line number out of a YAML parser message
// ("yaml: line 7: ...").
func YAMLLine(err error) int {
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
