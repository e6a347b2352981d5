package workloads

// Decoding workloads from a file: the documents and lists in it, with
// errors that name the document.

import (
	"bytes"
	"errors"
	"fmt"
	"github.com/accelc/accelc/pkg/inventory"
	"io"
	"os"
	"strings"
	"unicode"

	"github.com/go-json-experiment/json/jsontext"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// Error is a snapshot that cannot be read, or one item of it.
type Error struct {
	// Path is the file; "" for Decode.
	Path string
	// Line is where the item (or the fault) is: 0 where unknown, as in
	// YAML once it is read.
	Line int
	// Item is the item's index in the list's items; -1 for the document.
	Item int
	// Object names the item where it has a kind and name: "Pod team-a/web".
	Object string
	Err    error
}

func (e *Error) Error() string {
	var b strings.Builder
	switch {
	case e.Path != "" && e.Line > 0:
		fmt.Fprintf(&b, "%s:%d: ", e.Path, e.Line)
	case e.Path != "":
		b.WriteString(e.Path + ": ")
	case e.Line > 0:
		fmt.Fprintf(&b, "line %d: ", e.Line)
	}
	if e.Item >= 0 {
		fmt.Fprintf(&b, "items[%d]", e.Item)
		if e.Object != "" {
			b.WriteString(" (" + e.Object + ")")
		}
		b.WriteString(": ")
	}
	b.WriteString(e.Err.Error())
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// ReadFile reads the workload items of a snapshot file (see Decode).
// Every error names the file, and the item and its line where it can.
func ReadFile(path string) (*Set, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, &Error{Path: path, Item: -1, Err: err}
	}
	return decode(path, data)
}

// Decode reads the workload items of a snapshot: a List (JSON or YAML,
// as `kubectl get pods,deployments,… -A -o json` prints it, or as
// `accelc inventory snapshot --workloads` writes it), or one object of
// a kind a Set holds. Items of those kinds (Kinds, in any version of
// their group) are trimmed (Trim) and sorted; every other item, such as
// a snapshot's Nodes and ResourceSlices, is left to the inventory. A
// document without workload items is an empty Set. An item of a Set's
// kinds without a name or namespace, with labels, annotations or owner
// references that are not what Kubernetes writes, or listed twice, is an
// error naming it; every such item is reported (errors.Join).
func Decode(data []byte) (*Set, error) {
	return decode("", data)
}

func decode(path string, data []byte) (*Set, error) {
	docErr := func(line int, err error) error {
		return &Error{Path: path, Line: line, Item: -1, Err: err}
	}
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return nil, docErr(0, errors.New("empty file: expected a List, as `kubectl get pods -A -o json` prints"))
	}
	jsonData, isJSON := trimmed, true
	if trimmed[0] != '{' && trimmed[0] != '[' {
		j, err := yaml.YAMLToJSON(data)
		if err != nil {
			return nil, docErr(inventory.YAMLLine(err), fmt.Errorf("not JSON or YAML: %v", err))
		}
		jsonData, isJSON = j, false
	}
	// line is the line of an offset in jsonData, where it is data's.
	line := func(off int64) int {
		if !isJSON || off < 0 || off > int64(len(trimmed)) {
			return 0
		}
		lead := len(data) - len(bytes.TrimLeftFunc(data, unicode.IsSpace))
		return 1 + bytes.Count(data[:lead+int(off)], []byte("\n"))
	}

	top, items, err := readDocument(jsonData)
	if err != nil {
		var se *jsontext.SyntacticError
		if errors.As(err, &se) {
			return nil, docErr(line(se.ByteOffset), fmt.Errorf("not valid JSON: %v", se.Err))
		}
		return nil, docErr(0, err)
	}
	single := items == nil
	if single {
		// One object, or a document that is not a list.
		if top == nil {
			return nil, docErr(0, errors.New("not an object: expected a List, as `kubectl get pods -A -o json` prints"))
		}
		items = []docItem{{obj: top}}
	}

	var objs []*unstructured.Unstructured
	var errs []error
	seen := map[objectKey]int{}
	for i, it := range items {
		if it.obj == nil {
			continue
		}
		u := &unstructured.Unstructured{Object: it.obj}
		ok, err := check(u)
		if !ok {
			continue
		}
		item, where := i, line(it.offset)
		if single {
			item, where = -1, 0
		}
		object := describe(it.obj)
		if err != nil {
			errs = append(errs, &Error{Path: path, Line: where, Item: item, Object: object, Err: err})
			continue
		}
		key := objectKey{groupOf(u.GetAPIVersion()), u.GetKind(), u.GetNamespace(), u.GetName()}
		if first, dup := seen[key]; dup {
			errs = append(errs, &Error{Path: path, Line: where, Item: item, Object: object, Err: fmt.Errorf("listed twice (also items[%d])", first)})
			continue
		}
		seen[key] = i
		Trim(u)
		objs = append(objs, u)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return newSet(objs, nil), nil
}

// docItem is an item of a list, and where it starts in the JSON.
type docItem struct {
	obj    map[string]any // nil for an item that is not an object
	offset int64
}

// readDocument reads a JSON document: its top-level object but for its
// items, and the items (nil when it has none).
func readDocument(data []byte) (top map[string]any, items []docItem, err error) {
	r := newReader(bytes.NewBuffer(data))
	d := r.d
	if d.PeekKind() != '{' {
		if err := d.SkipValue(); err != nil {
			return nil, nil, err
		}
		return nil, nil, nil
	}
	top, err = r.object(func(r *reader, name string) (any, bool, error) {
		if name != "items" || r.d.PeekKind() != '[' {
			return itemField(r, name)
		}
		if _, err := r.d.ReadToken(); err != nil {
			return nil, false, err
		}
		items = []docItem{}
		for r.d.PeekKind() != ']' {
			off := r.d.InputOffset()
			off += int64(len(data[off:]) - len(bytes.TrimLeft(data[off:], " \t\r\n,")))
			if r.d.PeekKind() != '{' {
				if err := r.d.SkipValue(); err != nil {
					return nil, false, err
				}
				items = append(items, docItem{offset: off})
				continue
			}
			obj, err := r.item()
			if err != nil {
				return nil, false, err
			}
			items = append(items, docItem{obj: obj, offset: off})
		}
		_, err := r.d.ReadToken()
		return nil, false, err
	})
	if err != nil {
		return nil, nil, err
	}
	if _, err := d.ReadToken(); !errors.Is(err, io.EOF) {
		if err == nil {
			err = errors.New("more than one document: expected one List")
		}
		return nil, nil, err
	}
	return top, items, nil
}

// check says whether u is of a kind a Set holds and, if it is, what is
// wrong with it.
func check(u *unstructured.Unstructured) (bool, error) {
	obj := u.Object
	kind, _ := obj["kind"].(string)
	apiVersion, _ := obj["apiVersion"].(string)
	hasVersion := apiVersion != ""
	known := false
	for _, k := range kinds {
		if k.Kind != kind {
			continue
		}
		known = true
		if hasVersion && groupOf(apiVersion) == k.Group {
			return true, checkObject(obj)
		}
	}
	if known && !hasVersion {
		return true, errors.New("no apiVersion: write the object as kubectl prints it")
	}
	return false, nil
}

// checkObject checks what Workload and the policies read of an object.
func checkObject(obj map[string]any) error {
	md, ok := obj["metadata"].(map[string]any)
	if !ok {
		return errors.New("no metadata")
	}
	var errs []string
	for _, f := range []string{"name", "namespace"} {
		switch v := md[f].(type) {
		case string:
			if v == "" {
				errs = append(errs, fmt.Sprintf("no metadata.%s", f))
			}
		case nil:
			errs = append(errs, fmt.Sprintf("no metadata.%s", f))
		default:
			errs = append(errs, fmt.Sprintf("metadata.%s: %s where a string belongs", f, jsonKind(v)))
		}
	}
	for _, f := range []string{"labels", "annotations"} {
		v, ok := md[f]
		if !ok || v == nil {
			continue
		}
		m, ok := v.(map[string]any)
		if !ok {
			errs = append(errs, fmt.Sprintf("metadata.%s: %s where an object of strings belongs", f, jsonKind(v)))
			continue
		}
		for k, s := range m {
			if _, ok := s.(string); !ok {
				errs = append(errs, fmt.Sprintf("metadata.%s[%q]: %s where a string belongs", f, k, jsonKind(s)))
			}
		}
	}
	if v, ok := md["ownerReferences"]; ok && v != nil {
		refs, ok := v.([]any)
		if !ok {
			errs = append(errs, fmt.Sprintf("metadata.ownerReferences: %s where a list of objects belongs", jsonKind(v)))
		}
		for i, r := range refs {
			m, ok := r.(map[string]any)
			if !ok {
				errs = append(errs, fmt.Sprintf("metadata.ownerReferences[%d]: %s where an object belongs", i, jsonKind(r)))
				continue
			}
			for _, f := range []string{"apiVersion", "kind", "name"} {
				if s, _ := m[f].(string); s == "" {
					errs = append(errs, fmt.Sprintf("metadata.ownerReferences[%d]: no %s", i, f))
				}
			}
		}
	}
	if v, ok := obj["spec"]; ok && v != nil {
		if _, ok := v.(map[string]any); !ok {
			errs = append(errs, fmt.Sprintf("spec: %s where an object belongs", jsonKind(v)))
		}
	}
	if len(errs) > 0 {
		return errors.New(strings.Join(errs, "; "))
	}
	return nil
}

// describe names an object for a message: "Pod team-a/web", as far as it
// has a kind and name.
func describe(obj map[string]any) string {
	kind, _ := obj["kind"].(string)
	md, _ := obj["metadata"].(map[string]any)
	name, _ := md["name"].(string)
	ns, _ := md["namespace"].(string)
	if kind == "" || name == "" {
		return ""
	}
	return Ref{Kind: kind, Namespace: ns, Name: name}.String()
}

// jsonKind names a decoded JSON value's kind, with its article.
func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case int64, float64:
		return "a number"
	case []any:
		return "a list"
	default:
		return "an object"
	}
}
