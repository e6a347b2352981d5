package render

import (
	"fmt"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"
)

// Object is one rendered Kubernetes object and the folder it goes in.
type Object struct {
	// Dir is the concern folder: "nodes", "profiles", …
	Dir        string
	APIVersion string
	Kind       string
	Namespace  string
	Name       string
	// Body is the whole object, marshalled with sorted keys.
	Body any
}

// File is the object's path in the tree.
func (o *Object) File() string {
	return o.Dir + "/" + strings.ToLower(o.Kind) + "-" + o.Name + ".yaml"
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
}

func rank(kind string) int {
	if r, ok := kindRank[kind]; ok {
		return r
	}
	return 100
}

// sortObjects puts objects in accelc's one frozen order: kind rank, then
// apiVersion, kind, namespace, name.
func sortObjects(objs []Object) {
	sort.SliceStable(objs, func(i, j int) bool {
		a, b := &objs[i], &objs[j]
		if ra, rb := rank(a.Kind), rank(b.Kind); ra != rb {
			return ra < rb
		}
		for _, p := range [][2]string{{a.APIVersion, b.APIVersion}, {a.Kind, b.Kind}, {a.Namespace, b.Namespace}, {a.Name, b.Name}} {
			if p[0] != p[1] {
				return p[0] < p[1]
			}
		}
		return false
	})
}

// Marshal renders an object as YAML with a header saying where it came
// from.
func (o *Object) Marshal(cluster string) ([]byte, error) {
	b, err := yaml.Marshal(o.Body)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", o.Kind, o.Name, err)
	}
	return append([]byte(header(cluster)), b...), nil
}

func header(cluster string) string {
	return "# Rendered by accelc for cluster " + cluster + ". Do not edit: change the CUE and run `accelc render`.\n"
}

// meta is ObjectMeta as accelc writes it.
type meta struct {
	Name        string            `json:"name"`
	Namespace   string            `json:"namespace,omitempty"`
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

func managedLabels(cluster string) map[string]string {
	return map[string]string{
		"app.kubernetes.io/managed-by": "accelc",
		"accelc.io/cluster":            cluster,
	}
}
