package render

// A rendered object: its kind, name and file in the tree, and the order
// objects are written in.

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"
)

// Object is one rendered Kubernetes object and the folder it goes in.
type Object struct {
	// Dir is the concern folder: "nodes", "profiles", …
	Dir string
	// Body is the object, marshalled as it is with sorted keys. Its
	// apiVersion, kind, namespace and name are the object's.
	Body Body
	// PerNamespace names the file after the namespace too, for objects
	// of one name in many namespaces (a LocalQueue per team namespace).
	PerNamespace bool
	// Source is the CUE path the object was rendered from ("profiles",
	// "l4"), where one is: Validate's errors point there.
	Source []string
}

// Body is an API object with its type and object metadata: a pointer to
// a Kubernetes or project API type, or to one of render's small structs
// for kinds whose types go.mod does not have, each embedding
// metav1.TypeMeta and metav1.ObjectMeta.
type Body interface {
	GetObjectKind() schema.ObjectKind
	metav1.Object
}

// APIVersion is the object's apiVersion: "v1", "kueue.x-k8s.io/v1beta2".
func (o *Object) APIVersion() string {
	return o.Body.GetObjectKind().GroupVersionKind().GroupVersion().String()
}

// Kind is the object's kind.
func (o *Object) Kind() string { return o.Body.GetObjectKind().GroupVersionKind().Kind }

// Namespace is the object's namespace; "" for a cluster-scoped kind.
func (o *Object) Namespace() string { return o.Body.GetNamespace() }

// Name is the object's name.
func (o *Object) Name() string { return o.Body.GetName() }

// File is the object's path in the tree.
func (o *Object) File() string {
	name := o.Name()
	if o.PerNamespace {
		name = o.Namespace() + "-" + name
	}
	return o.Dir + "/" + strings.ToLower(o.Kind()) + "-" + name + ".yaml"
}

// kindRank orders kinds so that what others depend on comes first, as
// kustomize's legacy order does.
var kindRank = map[string]int{
	"Namespace":                0,
	"CustomResourceDefinition": 1,
	"ServiceAccount":           2,
	"PriorityClass":            3,
	"ConfigMap":                4,
	"NodeFeatureRule":          5,
	"ConstraintTemplate":       6,
	"SyncSet":                  7,
	"ExpansionTemplate":        8,
	"ResourceFlavor":           9,
	"WorkloadPriorityClass":    9,
	"Cohort":                   10,
	"ClusterQueue":             11,
	"LocalQueue":               12,
}

func rank(kind string) int {
	if r, ok := kindRank[kind]; ok {
		return r
	}
	return 100
}

// sortObjects puts objects in accelc's one frozen order: kind rank, then
// apiVersion, kind, namespace, name. Each object's key is read from its
// body once.
func sortObjects(objs []Object) {
	type keyed struct {
		rank int
		key  [4]string // apiVersion, kind, namespace, name
		obj  Object
	}
	all := make([]keyed, len(objs))
	for i := range objs {
		o := &objs[i]
		kind := o.Kind()
		all[i] = keyed{rank(kind), [4]string{o.APIVersion(), kind, o.Namespace(), o.Name()}, *o}
	}
	slices.SortStableFunc(all, func(a, b keyed) int {
		return cmp.Or(cmp.Compare(a.rank, b.rank), slices.Compare(a.key[:], b.key[:]))
	})
	for i := range all {
		objs[i] = all[i].obj
	}
}

// Provenance is what every rendered object records of where it came from,
// so an auditor can trace an object in a cluster to the commit that made
// it. Empty fields are left out.
type Provenance struct {
	// Revision is the configuration's commit: "main@sha1:<commit>".
	Revision string
	// Version is accelc's.
	Version string
}

// Provenance annotations.
const (
	AnnotationRevision = "accelc.io/source-revision"
	AnnotationVersion  = "accelc.io/version"
)

func (p Provenance) annotations() map[string]string {
	out := map[string]string{}
	if p.Revision != "" {
		out[AnnotationRevision] = p.Revision
	}
	if p.Version != "" {
		out[AnnotationVersion] = p.Version
	}
	return out
}

// Marshal renders an object as YAML with a header saying where it came
// from, and the provenance annotations.
func (o *Object) Marshal(cluster string, prov Provenance) ([]byte, error) {
	b, _, err := o.marshal(cluster, prov)
	return b, err
}

// marshal is Marshal, with the object's JSON the YAML was written from
// (sigs.k8s.io/yaml's Marshal is JSONToYAML of encoding/json's): the
// content digest is computed from it.
func (o *Object) marshal(cluster string, prov Provenance) (file, j []byte, err error) {
	var body any = o.Body
	if ann := prov.annotations(); len(ann) > 0 {
		m, err := withAnnotations(o.Body, ann)
		if err != nil {
			return nil, nil, fmt.Errorf("%s %s: %w", o.Kind(), o.Name(), err)
		}
		body = m
	}
	j, y, err := marshalYAML(body)
	if err != nil {
		return nil, nil, fmt.Errorf("%s %s: %w", o.Kind(), o.Name(), err)
	}
	return append([]byte(header(cluster)), y...), j, nil
}

// marshalYAML is sigs.k8s.io/yaml's Marshal of v, and the JSON it wrote
// the YAML from.
func marshalYAML(v any) (j, y []byte, err error) {
	if j, err = json.Marshal(v); err != nil {
		return nil, nil, fmt.Errorf("error marshaling into JSON: %w", err)
	}
	y, err = yaml.JSONToYAML(j)
	return j, y, err
}

// withAnnotations returns the object as a map with ann added to its
// metadata.annotations. The map is a copy, whatever the body's type: the
// rendered object itself is left as it is.
func withAnnotations(body Body, ann map[string]string) (map[string]any, error) {
	data, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, err
	}
	md, _ := m["metadata"].(map[string]any)
	if md == nil {
		md = map[string]any{}
		m["metadata"] = md
	}
	all, _ := md["annotations"].(map[string]any)
	if all == nil {
		all = map[string]any{}
	}
	for k, v := range ann {
		all[k] = v
	}
	md["annotations"] = all
	return m, nil
}

func header(cluster string) string {
	return "# Rendered by accelc for cluster " + cluster + ". Do not edit: change the CUE and run `accelc render`.\n"
}

// objectMeta is the metadata accelc writes: the name, the namespace
// where the kind has one (else ""), and accelc's labels.
func objectMeta(cluster, namespace, name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: managedLabels(cluster)}
}

func managedLabels(cluster string) map[string]string {
	return map[string]string{
		"app.kubernetes.io/managed-by": "accelc",
		"accelc.io/cluster":            cluster,
	}
}
