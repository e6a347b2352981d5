package render

// Validating the rendered objects against Kubernetes' own rules before
// they are written.

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/accelc/accelc/pkg/compile"
)

// Size limits the API server enforces on what accelc renders.
const (
	// MaxConfigMapBytes is the most a ConfigMap's data may hold
	// (corev1.MaxSecretSize, which ConfigMap validation applies).
	MaxConfigMapBytes = 1 << 20
	// MaxObjectBytes is the most one object may take: etcd's default
	// request limit (--max-request-bytes, 1.5 MiB).
	MaxObjectBytes = 3 << 19
)

// Validate checks every object as the API server would, with
// Kubernetes' own validation functions: names, namespaces, label keys and
// values (in metadata and in every node selector, label map and selector
// requirement of the body), annotations (keys and their 256 KiB total),
// ConfigMap keys and sizes, and each object's size. Each error names the
// object's file in the tree and, where the model knows it, the CUE
// file:line of what produced it.
func Validate(m *compile.Model, objs []Object) error {
	var diags compile.Errors
	for i := range objs {
		o := &objs[i]
		errs, err := validateObject(o)
		if err != nil {
			diags = append(diags, compile.Diagnostic{Msg: fmt.Sprintf("%s (%s %s): %v", o.File(), o.Kind(), o.Name(), err)})
			continue
		}
		for _, e := range errs {
			todo := "rename or shorten what produced it"
			if e.Type == field.ErrorTypeTooLong {
				todo = "make what produced it smaller"
			}
			diags = append(diags, compile.Diagnostic{
				Pos: origin(m, o, e),
				Msg: fmt.Sprintf("%s (%s %s): %s: the API server would reject it; %s", o.File(), o.Kind(), o.Name(), e.Error(), todo),
			})
		}
	}
	if len(diags) > 0 {
		return diags
	}
	return nil
}

func validateObject(o *Object) (field.ErrorList, error) {
	nameFn := apivalidation.NameIsDNSSubdomain
	if o.Kind() == "Namespace" {
		nameFn = apivalidation.ValidateNamespaceName
	}
	errs := apivalidation.ValidateObjectMetaAccessor(o.Body, o.Namespace() != "", nameFn, field.NewPath("metadata"))
	data, err := json.Marshal(o.Body)
	if err != nil {
		return nil, err
	}
	// The label maps and selectors are looked for in the body as JSON,
	// whatever its type.
	var body any
	if err := json.Unmarshal(data, &body); err != nil {
		return nil, err
	}
	if b, ok := body.(map[string]any); ok {
		for _, k := range slices.Sorted(maps.Keys(b)) {
			if k != "metadata" {
				errs = append(errs, validateLabelsIn(b[k], field.NewPath(k))...)
			}
		}
	}
	if o.Kind() == "ConfigMap" && o.APIVersion() == "v1" {
		var cm struct {
			Data       map[string]string `json:"data"`
			BinaryData map[string][]byte `json:"binaryData"`
		}
		if err := json.Unmarshal(data, &cm); err != nil {
			return nil, err
		}
		total := 0
		for _, k := range slices.Sorted(maps.Keys(cm.Data)) {
			for _, msg := range validation.IsConfigMapKey(k) {
				errs = append(errs, field.Invalid(field.NewPath("data").Key(k), k, msg))
			}
			total += len(cm.Data[k])
		}
		for _, v := range cm.BinaryData {
			total += len(v)
		}
		if total > MaxConfigMapBytes {
			errs = append(errs, field.TooLong(field.NewPath("data"), "", MaxConfigMapBytes))
		}
	}
	if len(data) > MaxObjectBytes {
		errs = append(errs, field.TooLong(field.NewPath(fmt.Sprintf("<object of %d bytes>", len(data))), "", MaxObjectBytes))
	}
	return errs, nil
}

// labelMaps are the fields that hold label key → value maps in the
// objects accelc renders (node selectors, NFD rules' labels, Kueue
// flavors' nodeLabels, selectors).
var labelMaps = map[string]bool{"labels": true, "nodeSelector": true, "matchLabels": true, "nodeLabels": true}

// validateLabelsIn walks a body for label maps and selector requirements
// ({key, operator, values}) and checks their keys and values.
func validateLabelsIn(v any, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch v := v.(type) {
	case map[string]any:
		if key, ok := v["key"].(string); ok {
			if op, ok := v["operator"].(string); ok {
				errs = append(errs, metav1validation.ValidateLabelName(key, path.Child("key"))...)
				if vals, ok := v["values"].([]any); ok && (op == "In" || op == "NotIn") {
					for i, x := range vals {
						if s, ok := x.(string); ok {
							for _, msg := range validation.IsValidLabelValue(s) {
								errs = append(errs, field.Invalid(path.Child("values").Index(i), s, msg))
							}
						}
					}
				}
			}
		}
		for _, k := range slices.Sorted(maps.Keys(v)) {
			p := path.Child(k)
			if labels, ok := stringMap(v[k]); ok && labelMaps[k] {
				for _, lk := range slices.Sorted(maps.Keys(labels)) {
					errs = append(errs, metav1validation.ValidateLabelName(lk, p)...)
					for _, msg := range validation.IsValidLabelValue(labels[lk]) {
						errs = append(errs, field.Invalid(p.Key(lk), labels[lk], msg))
					}
				}
				continue
			}
			errs = append(errs, validateLabelsIn(v[k], p)...)
		}
	case []any:
		for i, x := range v {
			errs = append(errs, validateLabelsIn(x, path.Index(i))...)
		}
	}
	return errs
}

// stringMap is v as a map of strings, when it is one.
func stringMap(v any) (map[string]string, bool) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, false
	}
	out := make(map[string]string, len(m))
	for k, x := range m {
		s, ok := x.(string)
		if !ok {
			return nil, false
		}
		out[k] = s
	}
	return out, true
}

// origin is the CUE position of what produced an invalid field, where the
// model knows it: an accelerator type the cluster defines (a label value),
// the label prefix (a label key), else the CUE path the object was
// rendered from.
func origin(m *compile.Model, o *Object, e *field.Error) string {
	if s, ok := e.BadValue.(string); ok && s != "" {
		if _, ok := m.Catalog.Get(s); ok {
			if p := m.Where("accelerators", s); p != "" {
				return p
			}
		}
		if prefix := m.Cluster.LabelPrefix; strings.HasPrefix(s, prefix+"/") || strings.HasPrefix(e.Field, "metadata.annotations["+prefix) {
			if p := m.Where("cluster", "labelPrefix"); p != "" {
				return p
			}
		}
	}
	if len(o.Source) > 0 {
		return m.Where(o.Source...)
	}
	return ""
}
