package inventory

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"

	"sigs.k8s.io/yaml"

	"github.com/accelc/accelc/pkg/catalog"
)

// RawNode is the part of a Kubernetes Node that classification reads. It
// is also what a snapshot written by accelc holds of each node: nothing
// else (no addresses, machine ids or images) is kept.
type RawNode struct {
	APIVersion string `json:"apiVersion,omitempty"`
	Kind       string `json:"kind,omitempty"`
	Metadata   struct {
		Name        string            `json:"name"`
		Labels      map[string]string `json:"labels,omitempty"`
		Annotations map[string]string `json:"annotations,omitempty"`
	} `json:"metadata"`
	Spec struct {
		Unschedulable bool    `json:"unschedulable,omitempty"`
		Taints        []Taint `json:"taints,omitempty"`
	} `json:"spec"`
	Status struct {
		Capacity    map[string]string `json:"capacity,omitempty"`
		Allocatable map[string]string `json:"allocatable,omitempty"`
		Conditions  []Condition       `json:"conditions,omitempty"`
	} `json:"status"`
}

// Taint is a node taint: pods need a matching toleration to land.
type Taint struct {
	Key    string `json:"key"`
	Value  string `json:"value,omitempty"`
	Effect string `json:"effect"`
}

// Condition is a node condition; only Ready is read.
type Condition struct {
	Type   string `json:"type"`
	Status string `json:"status"`
}

// workloadKinds are the kinds of what a cluster runs that a snapshot may
// hold beside its nodes (written by `accelc inventory snapshot
// --workloads`, read by pkg/workloads, whose kinds a test keeps here).
var workloadKinds = map[string]bool{
	"Pod": true, "Deployment": true, "StatefulSet": true, "ReplicaSet": true, "DaemonSet": true,
	"Job": true, "CronJob": true, "Notebook": true, "PyTorchJob": true, "RayCluster": true, "JobSet": true,
	"RayJob": true, "LeaderWorkerSet": true, "MPIJob": true, "AppWrapper": true, "TrainJob": true, "InferenceService": true,
	"ResourceClaim": true, "ResourceClaimTemplate": true,
}

// WorkloadKind says whether a snapshot item of the kind is a workload,
// which node classification passes over.
func WorkloadKind(kind string) bool { return workloadKinds[kind] }

// Snapshot is a set of raw nodes with where and when they were read.
type Snapshot struct {
	Source *Source
	Nodes  []RawNode
	// Slices are the ResourceSlices of the nodes' accelerators (Dynamic
	// Resource Allocation), of the drivers accelc reads, without what
	// identifies a device (see ResourceSlice.Redact).
	Slices   []ResourceSlice
	Problems []Problem
	// Warnings are what the reader could not do but worked around
	// (pods it may not list).
	Warnings []string
	// Workloads are written after the nodes and slices, as they are:
	// what the cluster runs, trimmed by pkg/workloads, for accelc audit.
	Workloads []any
}

// Source records where a snapshot came from. It never holds the server's
// address or credentials: snapshots are committed to Git.
type Source struct {
	// Cluster is the kubeconfig cluster name the nodes were read from.
	Cluster string `json:"cluster,omitempty"`
	// TakenAt is when the nodes were read.
	TakenAt time.Time `json:"takenAt"`
	// PodsCounted says the nodes carry the accelerators pods use
	// (AnnotationInUse); without it, use is unknown.
	PodsCounted bool `json:"podsCounted"`
	// Namespaces are the names of the cluster's namespaces, sorted, when
	// the reader could list them; nil when it could not (or the snapshot
	// is older), and then nothing is checked against them.
	Namespaces []string `json:"namespaces,omitempty"`
}

// KnownNamespaces are the cluster's namespaces and whether they are known
// at all: a snapshot without them (plain kubectl output, an older
// accelc's, a reader that may not list namespaces) says nothing of what
// the cluster lacks.
func (s *Source) KnownNamespaces() ([]string, bool) {
	if s == nil || s.Namespaces == nil {
		return nil, false
	}
	return s.Namespaces, true
}

// AnnotationInUse holds, on a node of a snapshot, the accelerator devices
// that running and pending pods bound to it request; AnnotationInUseBy,
// the same per namespace, as JSON ({"ml-research": 4}).
const (
	AnnotationInUse   = "accelc.io/accelerators-in-use"
	AnnotationInUseBy = "accelc.io/accelerators-in-use-by-namespace"
)

// SetInUse records on a raw node what pods use of it, per namespace.
func SetInUse(n *RawNode, byNamespace map[string]int) {
	total := 0
	for _, v := range byNamespace {
		total += v
	}
	if n.Metadata.Annotations == nil {
		n.Metadata.Annotations = map[string]string{}
	}
	n.Metadata.Annotations[AnnotationInUse] = strconv.Itoa(total)
	data, _ := json.Marshal(byNamespace) // a map of ints: cannot fail; keys sorted
	n.Metadata.Annotations[AnnotationInUseBy] = string(data)
}

// Problem is a node that could not be read or classified. It never stops
// a run: the node is left out, or (Kept) kept with its accelerators
// counted as 0 available, and the problem is reported.
type Problem struct {
	// Kind is the object's kind when it is not a Node: a ResourceSlice,
	// whose name Node then holds.
	Kind string `json:"kind,omitempty"`
	Node string `json:"node,omitempty"`
	// Item is the node's index in the snapshot's items; -1 when the
	// problem was found after reading.
	Item   int    `json:"item"`
	Reason string `json:"reason"`
	Kept   bool   `json:"kept,omitempty"`
}

func (p Problem) String() string {
	what := "node"
	if p.Kind != "" && p.Kind != "Node" {
		what = p.Kind
	}
	switch {
	case p.Item < 0:
		return fmt.Sprintf("%s %s: %s", what, p.Node, p.Reason)
	case p.Node != "":
		return fmt.Sprintf("%s %s (items[%d]): %s", what, p.Node, p.Item, p.Reason)
	}
	return fmt.Sprintf("items[%d]: %s", p.Item, p.Reason)
}

// Effect says what became of the node.
func (p Problem) Effect() string {
	if p.Kind == "ResourceSlice" {
		return "its devices are not counted"
	}
	if p.Kept {
		return "its accelerators are counted as 0 available"
	}
	return "the node is left out"
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

// Load reads a snapshot file and classifies its nodes; the nodes it could
// not read are the inventory's Problems.
func Load(path string, cat *catalog.Catalog, opts Options) (*Inventory, error) {
	snap, err := ReadSnapshot(path)
	if err != nil {
		return nil, err
	}
	return snap.Classify(cat, opts), nil
}

// Classify classifies the snapshot's nodes; the inventory keeps its source
// and problems.
func (s *Snapshot) Classify(cat *catalog.Catalog, opts Options) *Inventory {
	inv := classify(s.Nodes, s.Slices, cat, opts)
	inv.Problems = append(slices.Clip(s.Problems), inv.Problems...)
	inv.Source = s.Source
	return inv
}

// Write writes the snapshot as a kind List of Nodes, then its
// ResourceSlices, that kubectl and accelc both read, with its source under
// the top-level "accelc" key. Output is deterministic for the same nodes,
// slices and source.
func (s *Snapshot) Write(w io.Writer) error {
	items := make([]any, len(s.Nodes), len(s.Nodes)+len(s.Slices))
	for i, n := range s.Nodes {
		n.APIVersion, n.Kind = "v1", "Node"
		// Annotations carry addresses and tool state (CNI, cloud
		// controllers): only accelc's own use count is kept.
		n.Metadata.Annotations = nil
		for _, key := range []string{AnnotationInUse, AnnotationInUseBy} {
			if v, ok := s.Nodes[i].Metadata.Annotations[key]; ok {
				if n.Metadata.Annotations == nil {
					n.Metadata.Annotations = map[string]string{}
				}
				n.Metadata.Annotations[key] = v
			}
		}
		items[i] = n
	}
	for _, rs := range keepSlices(s.Slices, true) {
		items = append(items, rs)
	}
	items = append(items, s.Workloads...)
	doc := struct {
		APIVersion string  `json:"apiVersion"`
		Kind       string  `json:"kind"`
		Accelc     *Source `json:"accelc,omitempty"`
		Items      []any   `json:"items"`
	}{"v1", "List", s.Source, items}
	data, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(data, '\n'))
	return err
}

// Merge lays other's nodes over the snapshot's: a node of both keeps its
// status and gains other's labels (which win), and other's accelerator
// capacity when it lists none; a node only in other is added. This is how NVML reports from
// nodes the GPU Operator does not label enrich a cluster snapshot.
// other's ResourceSlices are added where the snapshot has none of that
// name. It returns the names of the nodes merged and added.
func (s *Snapshot) Merge(other *Snapshot) (merged, added []string) {
	haveSlice := map[string]bool{}
	for _, rs := range s.Slices {
		haveSlice[rs.Metadata.Name] = true
	}
	for _, rs := range other.Slices {
		if !haveSlice[rs.Metadata.Name] {
			s.Slices = append(s.Slices, rs)
		}
	}
	sortSlices(s.Slices)
	index := make(map[string]int, len(s.Nodes))
	for i := range s.Nodes {
		index[s.Nodes[i].Metadata.Name] = i
	}
	for _, o := range other.Nodes {
		i, ok := index[o.Metadata.Name]
		if !ok {
			index[o.Metadata.Name] = len(s.Nodes)
			s.Nodes = append(s.Nodes, o)
			added = append(added, o.Metadata.Name)
			continue
		}
		n := &s.Nodes[i]
		n.Metadata.Labels = overlay(n.Metadata.Labels, o.Metadata.Labels)
		// What the kubelet reports stands; the report's counts fill in
		// only where the node lists no accelerator.
		alloc := o.Status.Allocatable
		if alloc == nil {
			alloc = o.Status.Capacity
		}
		if !hasAccelerators(n.Status.Capacity) {
			n.Status.Capacity = overlay(n.Status.Capacity, accelerators(o.Status.Capacity))
		}
		if !hasAccelerators(n.Status.Allocatable) {
			n.Status.Allocatable = overlay(n.Status.Allocatable, accelerators(alloc))
		}
		merged = append(merged, o.Metadata.Name)
	}
	sort.Slice(s.Nodes, func(i, j int) bool { return s.Nodes[i].Metadata.Name < s.Nodes[j].Metadata.Name })
	return merged, added
}

func hasAccelerators(resources map[string]string) bool {
	return len(accelerators(resources)) > 0
}

// accelerators keeps the accelerator resources of a resource list.
func accelerators(resources map[string]string) map[string]string {
	var out map[string]string
	for k, v := range resources {
		if VendorOfResource(k) != "" {
			if out == nil {
				out = map[string]string{}
			}
			out[k] = v
		}
	}
	return out
}

func overlay(base, top map[string]string) map[string]string {
	out := make(map[string]string, len(base)+len(top))
	maps.Copy(out, base)
	maps.Copy(out, top)
	return out
}

// Age is how old the snapshot is at now; ok is false when the snapshot
// does not say when it was taken (plain kubectl output).
func (s *Source) Age(now time.Time) (time.Duration, bool) {
	if s == nil || s.TakenAt.IsZero() {
		return 0, false
	}
	return now.Sub(s.TakenAt), true
}
