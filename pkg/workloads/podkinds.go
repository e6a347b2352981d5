package workloads

// Kinds accelc does not judge: CRDs with pod templates, found from their
// schemas.

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/accelc/accelc/pkg/inventory/live"
	"github.com/accelc/accelc/pkg/render"
)

// UnjudgedKind is a kind the cluster serves whose schema embeds pod
// templates that accelc does not judge at the workload: its pods are
// judged only when its controller makes them, after the object (and,
// where Kueue manages the kind, its admission) has been accepted.
type UnjudgedKind struct {
	Group   string `json:"group"`
	Version string `json:"version"`
	Kind    string `json:"kind"`
	// Paths are where the schema holds pod templates (metadata and a spec
	// with containers) or pod specs (containers), "[]" marking a list's
	// elements and "*" a map's values.
	Paths []string `json:"paths"`
}

func (k UnjudgedKind) String() string {
	return fmt.Sprintf("%s/%s %s", k.Group, k.Version, k.Kind)
}

// madeByControllers are the kinds that embed pod templates but from
// which nothing makes pods: Kueue's Workload copies its job's pod sets
// to account for them.
var madeByControllers = map[[2]string]bool{{"kueue.x-k8s.io", "Workload"}: true}

// ReadUnjudgedKinds reads the cluster's CustomResourceDefinitions and
// returns, by group, version and kind, those whose served versions'
// schemas (openAPIV3Schema) embed a pod template or a pod spec, but for
// the kinds and versions accelc judges at the workload
// (render.WorkloadKinds): the kinds an operator brought that accelc would
// judge only at their pods.
// Built-in kinds are not read (their schemas are not CRDs'). A reader who
// may not list CRDs gets a warning and none.
func ReadUnjudgedKinds(ctx context.Context, opts live.Options) ([]UnjudgedKind, []string, error) {
	cfg, _, redact, err := live.Config(opts)
	if err != nil {
		return nil, nil, err
	}
	c, err := jsonClient(cfg)
	if err != nil {
		return nil, nil, redact(err)
	}
	raw, err := c.Get().AbsPath("/apis/apiextensions.k8s.io/v1/customresourcedefinitions").Do(ctx).Raw()
	switch {
	case apierrors.IsForbidden(err):
		return nil, []string{"may not list CustomResourceDefinitions (RBAC: verb list on customresourcedefinitions in API group \"apiextensions.k8s.io\"): the kinds whose pod templates accelc does not judge at the workload are not looked for"}, nil
	case apierrors.IsNotFound(err):
		return nil, nil, nil
	case err != nil:
		return nil, nil, redact(fmt.Errorf("listing CustomResourceDefinitions: %w", err))
	}
	return UnjudgedKindsOf(raw)
}

// crdList is what UnjudgedKindsOf reads of a CustomResourceDefinitionList.
type crdList struct {
	Items []struct {
		Spec struct {
			Group string `json:"group"`
			Names struct {
				Kind string `json:"kind"`
			} `json:"names"`
			Versions []struct {
				Name   string `json:"name"`
				Served bool   `json:"served"`
				Schema struct {
					OpenAPIV3Schema map[string]any `json:"openAPIV3Schema"`
				} `json:"schema"`
			} `json:"versions"`
		} `json:"spec"`
	} `json:"items"`
}

// UnjudgedKindsOf is ReadUnjudgedKinds of a CustomResourceDefinitionList
// as JSON, sorted by group, kind and version.
func UnjudgedKindsOf(raw []byte) ([]UnjudgedKind, []string, error) {
	var list crdList
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, nil, fmt.Errorf("reading CustomResourceDefinitions: %w", err)
	}
	var out []UnjudgedKind
	for _, crd := range list.Items {
		group, kind := crd.Spec.Group, crd.Spec.Names.Kind
		if madeByControllers[[2]string{group, kind}] {
			continue
		}
		w, known := render.WorkloadKindOf(group, kind)
		for _, v := range crd.Spec.Versions {
			if !v.Served || v.Schema.OpenAPIV3Schema == nil {
				continue
			}
			// A version accelc does not render for (its ExpansionTemplates
			// and label policies name their versions) is not judged.
			if known && slices.Contains(w.Versions, v.Name) {
				continue
			}
			var paths []string
			podTemplatePaths(v.Schema.OpenAPIV3Schema, "", 0, &paths)
			if len(paths) > 0 {
				out = append(out, UnjudgedKind{Group: group, Version: v.Name, Kind: kind, Paths: paths})
			}
		}
	}
	slices.SortFunc(out, func(a, b UnjudgedKind) int {
		return strings.Compare(a.Group+"/"+a.Kind+"/"+a.Version, b.Group+"/"+b.Kind+"/"+b.Version)
	})
	return out, nil, nil
}

// maxSchemaDepth bounds the walk of a schema: Kubernetes' own pod
// template sits a dozen levels down in the deepest operators' kinds.
const maxSchemaDepth = 32

// podTemplatePaths adds to paths where the schema s, at path, holds a
// pod template (properties metadata and spec, the spec with containers)
// or a pod spec (containers whose items have a name and an image); it
// does not look inside either.
func podTemplatePaths(s map[string]any, path string, depth int, paths *[]string) {
	if depth > maxSchemaDepth {
		return
	}
	props, _ := s["properties"].(map[string]any)
	if spec, ok := props["spec"].(map[string]any); ok && props["metadata"] != nil && isPodSpec(spec) {
		*paths = append(*paths, path)
		return
	}
	if path != "" && isPodSpec(s) {
		*paths = append(*paths, path)
		return
	}
	join := func(name string) string {
		if path == "" {
			return name
		}
		return path + "." + name
	}
	for _, name := range slices.Sorted(maps.Keys(props)) {
		if p, ok := props[name].(map[string]any); ok {
			podTemplatePaths(p, join(name), depth+1, paths)
		}
	}
	if items, ok := s["items"].(map[string]any); ok {
		podTemplatePaths(items, path+"[]", depth+1, paths)
	}
	if values, ok := s["additionalProperties"].(map[string]any); ok {
		podTemplatePaths(values, join("*"), depth+1, paths)
	}
}

// isPodSpec says whether the schema is a pod spec's: a list of
// containers, each with a name and an image.
func isPodSpec(s map[string]any) bool {
	props, _ := s["properties"].(map[string]any)
	containers, _ := props["containers"].(map[string]any)
	items, _ := containers["items"].(map[string]any)
	item, _ := items["properties"].(map[string]any)
	return item["name"] != nil && item["image"] != nil
}
