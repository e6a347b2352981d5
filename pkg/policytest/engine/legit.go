package engine

import (
	"fmt"
	"math/rand/v2"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/accelc/accelc/pkg/render"
)

// legitimateObject builds the i-th random legitimate pod or workload, written
// the ways Open Data Hub and users write them: a namespace of a team, a
// profile the team may use named by ODH's annotation, by accelc's label or
// by both; the profile's resource at a count it allows (a claim from its
// ResourceClaimTemplate for a DRA profile); sometimes what ODH's webhook
// injects from the HardwareProfile (its node selector and tolerations),
// sometimes a required node affinity of the user's own; or, in a namespace
// allowed generic GPU use, no profile or the generic one. It comes as a
// Pod or as any workload kind accelc judges. Every one must be admitted,
// at the workload and as the pod its controller makes.
func (e *EscapeCheck) legitimateObject(rng *rand.Rand, i int) (map[string]any, bool) {
	m := e.model
	chance := func(p float64) bool { return rng.Float64() < p }
	md := map[string]any{"name": fmt.Sprintf("legit%d", i)}
	labels, annotations := map[string]any{}, map[string]any{}
	container := map[string]any{"name": "main", "image": "quay.io/example/app:1"}
	spec := map[string]any{"containers": []any{container}}
	generic := m.Cluster.GenericGPUNamespaces
	if len(generic) > 0 && chance(0.15) {
		ns := generic[rng.IntN(len(generic))]
		if _, ok := e.teamOf[ns]; ok {
			return nil, false
		}
		md["namespace"] = ns
		container["resources"] = map[string]any{"limits": map[string]any{"nvidia.com/gpu": int64(1)}}
		if chance(0.5) {
			for _, p := range m.Profiles {
				if p.Enabled && p.Generic() && p.DRA == nil {
					annotations[render.ProfileAnnotation] = p.Name
					container["resources"] = map[string]any{"limits": map[string]any{p.ResourceName: int64(p.GPU.Min)}}
					break
				}
			}
		}
	} else {
		ns, usable := e.teamProfiles(rng)
		if len(usable) == 0 {
			return nil, false
		}
		p := usable[rng.IntN(len(usable))]
		md["namespace"] = ns
		switch rng.IntN(3) {
		case 0:
			annotations[render.ProfileAnnotation] = p.Name
		case 1:
			labels[m.Cluster.LabelPrefix+"/profile"] = p.Name
		default:
			annotations[render.ProfileAnnotation] = p.Name
			labels[m.Cluster.LabelPrefix+"/profile"] = p.Name
		}
		if p.DRA != nil {
			spec["resourceClaims"] = []any{map[string]any{"name": "gpu", "resourceClaimTemplateName": render.ResourceClaimTemplateName(p)}}
			container["resources"] = map[string]any{"claims": []any{map[string]any{"name": "gpu"}}}
		} else {
			n := int64(max(p.GPU.Min, 1))
			if p.GPU.Max != nil && *p.GPU.Max > p.GPU.Min && chance(0.3) {
				n = int64(*p.GPU.Max)
			}
			container["resources"] = map[string]any{"limits": map[string]any{p.ResourceName: n}}
			if chance(0.3) && len(p.AcceleratorTypes) == 1 && len(p.Pools) == 0 {
				// What ODH's webhook injects from a HardwareProfile of
				// scheduling type Node.
				sel := map[string]any{}
				for k, v := range p.NodeSelector {
					sel[k] = v
				}
				if len(sel) == 0 {
					sel[m.Cluster.TypeLabel()] = p.AcceleratorTypes[0]
				}
				spec["nodeSelector"] = sel
				var tols []any
				for _, t := range p.Tolerations {
					tols = append(tols, map[string]any{"key": t.Key, "operator": t.Operator, "value": t.Value, "effect": t.Effect})
				}
				if len(tols) > 0 {
					spec["tolerations"] = tols
				}
			}
		}
		if chance(0.25) {
			// The user's own required affinity, as charts write it.
			spec["affinity"] = map[string]any{"nodeAffinity": map[string]any{"requiredDuringSchedulingIgnoredDuringExecution": map[string]any{
				"nodeSelectorTerms": []any{map[string]any{"matchExpressions": []any{
					map[string]any{"key": "kubernetes.io/arch", "operator": "In", "values": []any{"amd64"}},
				}}},
			}}}
		}
	}
	if len(labels) > 0 {
		md["labels"] = labels
	}
	if len(annotations) > 0 {
		md["annotations"] = annotations
	}
	return e.wrap(rng, md, spec), true
}

// wrap returns the pod, or a workload of a random kind whose controller
// makes it: the pod's metadata and spec in the template (a Notebook: its
// labels and annotations on the Notebook, its spec in the template, as ODH
// writes one).
func (e *EscapeCheck) wrap(rng *rand.Rand, md, spec map[string]any) map[string]any {
	meta := func() map[string]any { return map[string]any{"name": md["name"], "namespace": md["namespace"]} }
	switch rng.IntN(12) {
	case 0:
		delete(spec, "ephemeralContainers")
		return map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta(),
			"spec": map[string]any{"selector": map[string]any{"matchLabels": map[string]any{"app": "x"}},
				"template": map[string]any{"metadata": withLabel(md, "app", "x"), "spec": spec}}}
	case 1:
		delete(spec, "ephemeralContainers")
		spec["restartPolicy"] = "Never"
		return map[string]any{"apiVersion": "batch/v1", "kind": "Job", "metadata": meta(),
			"spec": map[string]any{"template": map[string]any{"metadata": md, "spec": spec}}}
	case 2:
		delete(spec, "ephemeralContainers")
		return map[string]any{"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": meta(),
			"spec": map[string]any{"serviceName": "x", "selector": map[string]any{"matchLabels": map[string]any{"app": "x"}},
				"template": map[string]any{"metadata": withLabel(md, "app", "x"), "spec": spec}}}
	case 3:
		delete(spec, "ephemeralContainers")
		spec["restartPolicy"] = "OnFailure"
		return map[string]any{"apiVersion": "batch/v1", "kind": "CronJob", "metadata": meta(),
			"spec": map[string]any{"schedule": "0 * * * *", "jobTemplate": map[string]any{"spec": map[string]any{
				"template": map[string]any{"metadata": md, "spec": spec}}}}}
	case 4:
		delete(spec, "ephemeralContainers")
		nb := meta()
		for _, k := range []string{"labels", "annotations"} {
			if v, ok := md[k]; ok {
				nb[k] = v
			}
		}
		return map[string]any{"apiVersion": "kubeflow.org/v1", "kind": "Notebook", "metadata": nb,
			"spec": map[string]any{"template": map[string]any{"spec": spec}}}
	}
	return map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": md, "spec": spec}
}

// ControllerPod is the pod a workload's controller makes from it, as
// stored: the first template's metadata and spec (a Notebook: its own
// labels and its template's spec). Nil for a kind that is no workload.
func ControllerPod(obj *unstructured.Unstructured) *unstructured.Unstructured {
	w, ok := render.WorkloadKindOf(obj.GroupVersionKind().Group, obj.GetKind())
	if !ok {
		return nil
	}
	tmpl, _, _ := unstructured.NestedMap(obj.Object, w.Templates[0].Path...)
	spec, _, _ := unstructured.NestedMap(tmpl, "spec")
	md := map[string]any{}
	if w.ObjectLabels {
		if l := obj.GetLabels(); len(l) > 0 {
			labels := map[string]any{}
			for k, v := range l {
				labels[k] = v
			}
			md["labels"] = labels
		}
	} else if m, ok, _ := unstructured.NestedMap(tmpl, "metadata"); ok {
		md = m
	}
	md["name"] = obj.GetName() + "-0"
	md["namespace"] = obj.GetNamespace()
	return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": md, "spec": spec}}
}
