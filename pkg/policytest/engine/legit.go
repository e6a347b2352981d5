package engine

// Legitimate traffic for the escape check: what must be admitted
// (controller updates, bookkeeping, entitled workloads) and false
// denials.

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/accelc/accelc/pkg/render"
)

// legitimate generates the i-th legitimate object and, for an admitted
// pod, sometimes a controller's UPDATE of it; each must be admitted.
// Some pods are made by the controller of a Kueue-managed owner, with
// the owner reference and the controller's identity.
func (e *EscapeCheck) legitimate(ctx context.Context, rng *rand.Rand, i int, rep *EscapeReport) error {
	obj, ok := e.legitimateObject(rng, i)
	if !ok {
		return nil
	}
	req := Request{Object: &unstructured.Unstructured{Object: obj}}
	if obj["kind"] == "Pod" && rng.IntN(5) == 0 {
		req.User = e.ownedByController(rng, mapOf(obj["metadata"]))
	}
	rep.Legitimate++
	if why, err := e.refused(obj); err != nil {
		return err
	} else if why != "" {
		raw, _ := yaml.Marshal(obj)
		rep.InvalidLegitimate = append(rep.InvalidLegitimate, Escape{Why: why, Pod: string(raw)})
		return nil
	}
	v, err := e.verdict(ctx, req)
	if err != nil {
		return fmt.Errorf("legitimate object %d: %w", i, err)
	}
	if e.falseDenial(v, rep) || obj["kind"] != "Pod" || rng.IntN(2) == 0 {
		return nil
	}
	upd, ok := e.controllerUpdate(rng, v.d.Stored)
	if !ok {
		return nil
	}
	rep.Legitimate++
	rep.ControllerUpdates++
	if v, err = e.verdict(ctx, upd); err != nil {
		return fmt.Errorf("legitimate update %d: %w", i, err)
	}
	e.falseDenial(v, rep)
	return nil
}

// beforeEnforcement generates the i-th pod that ran before enforcement
// reached its namespace: a generated pod the policies refuse now, stored
// as written (no mutator ran) and bound to a node it could run on. Its
// controllers' bookkeeping (a finalizer removed, Kueue's labels, an
// adoption, another owner; not Kueue's gate lifted, which starts a pod
// that has not run) adds nothing the policies judge: each must be
// admitted, so that such work finishes.
func (e *EscapeCheck) beforeEnforcement(ctx context.Context, rng *rand.Rand, i int, rep *EscapeReport) error {
	obj := e.generate(rng, i)
	u := &unstructured.Unstructured{Object: obj}
	if u.GetKind() != "Pod" {
		return nil
	}
	if retired := e.retiredProfiles(); len(retired) > 0 && rng.IntN(2) == 0 {
		// Made before its profile was retired.
		p := retired[rng.IntN(len(retired))]
		u.SetAnnotations(mergeString(u.GetAnnotations(), render.ProfileAnnotation, p))
		u.SetLabels(mergeString(u.GetLabels(), e.model.Cluster.LabelPrefix+"/profile", p))
	}
	if why, err := e.refused(obj); err != nil || why != "" {
		return err
	}
	v, err := e.verdict(ctx, Request{Object: u, User: e.requester(rng, obj)})
	if err != nil {
		return fmt.Errorf("pod before enforcement %d: %w", i, err)
	}
	if len(v.d.Messages) == 0 {
		return nil // admitted now: nothing before enforcement about it
	}
	upd, ok := e.bookkeeping(rng, u, 1+rng.IntN(4))
	if !ok {
		return nil
	}
	rep.Legitimate++
	rep.ControllerUpdates++
	rep.BeforeEnforcement++
	if p := e.model.Profile(profileName(e.model, mapOf(obj["metadata"]))); p != nil && p.Retired != nil {
		rep.OfRetiredProfiles++
	}
	if v, err = e.verdict(ctx, upd); err != nil {
		return fmt.Errorf("update of pod before enforcement %d: %w", i, err)
	}
	e.falseDenial(v, rep)
	return nil
}

// falseDenial records a legitimate request denied (at the workload or as
// a pod its controllers make) and reports whether it was.
func (e *EscapeCheck) falseDenial(v verdict, rep *EscapeReport) bool {
	msgs := slices.Clone(v.d.Messages)
	var out []byte
	for _, p := range v.pods {
		msgs = append(msgs, p.d.Messages...)
		if len(p.d.Messages) > 0 && out == nil {
			out, _ = yaml.Marshal(p.d.Stored.Object)
		}
	}
	if len(msgs) == 0 {
		return false
	}
	raw, _ := yaml.Marshal(v.written)
	if out == nil {
		out, _ = yaml.Marshal(v.d.Stored.Object)
	}
	rep.FalseDenials = append(rep.FalseDenials, Escape{Why: strings.Join(msgs, "; "), Pod: string(raw), Admitted: string(out)})
	return true
}

// ownedByController gives a legitimate pod the controller owner
// reference of a Kueue-managed kind whose controller's identity is known,
// and returns that identity, as the controller makes the pod ("" for
// none known).
func (e *EscapeCheck) ownedByController(rng *rand.Rand, md map[string]any) string {
	kinds := slices.Sorted(maps.Keys(e.kueue.controllers))
	kinds = slices.DeleteFunc(kinds, func(k string) bool { return len(e.kueue.controllers[k]) == 0 })
	if len(kinds) == 0 {
		return ""
	}
	gk := kinds[rng.IntN(len(kinds))]
	group, kind, _ := strings.Cut(gk, "/")
	apiVersion := group + "/v1"
	if vs := ownerAPIVersions[group]; len(vs) > 0 {
		apiVersion = vs[0]
	}
	md["ownerReferences"] = []any{map[string]any{"apiVersion": apiVersion, "kind": kind, "name": "owner", "uid": "00000000-0000-0000-0000-000000000001", "controller": true, "blockOwnerDeletion": true}}
	ids := e.kueue.controllers[gk]
	return ids[rng.IntN(len(ids))]
}

// Controllers' identities that change pods they did not make.
const (
	jobController        = "system:serviceaccount:kube-system:job-controller"
	replicaSetController = "system:serviceaccount:kube-system:replicaset-controller"
	garbageCollector     = "system:serviceaccount:kube-system:generic-garbage-collector"
)

// controllerUpdate is what a controller does to an admitted pod: Kueue
// removes its gate from a queued pod (with its bookkeeping) or labels and
// annotates one; the Job controller or Kueue removes its finalizer; a
// controller adopts an orphan (a controller owner reference added) or the
// garbage collector's owner is added. The pod is bound to a node it
// could run on, as the scheduler would have bound it, except for the gate
// removal (a gated pod is not bound).
func (e *EscapeCheck) controllerUpdate(rng *rand.Rand, stored *unstructured.Unstructured) (Request, bool) {
	return e.bookkeeping(rng, stored, rng.IntN(5))
}

// bookkeeping is controllerUpdate's choice'th kind of update (0: Kueue
// lifts its gate, where the pod is queued; else a finalizer, Kueue's
// labels, an adoption, an owner that is not the controller).
func (e *EscapeCheck) bookkeeping(rng *rand.Rand, stored *unstructured.Unstructured, choice int) (Request, bool) {
	kueueUser := DefaultUser
	if len(e.kueue.users) > 0 {
		kueueUser = e.kueue.users[rng.IntN(len(e.kueue.users))]
	}
	if choice == 0 {
		if _, queued := stored.GetLabels()[render.QueueNameLabel]; queued {
			return e.ungate(rng, stored, kueueUser), true
		}
		choice = 1 + rng.IntN(4)
	}
	old := stored.DeepCopy()
	spec := mapOf(old.Object["spec"])
	bound := e.feasibleNodes(spec)
	if len(bound) == 0 {
		return Request{}, false
	}
	spec["nodeName"] = bound[rng.IntN(len(bound))]
	obj := old.DeepCopy()
	req := Request{Object: obj, OldObject: old, Operation: "UPDATE"}
	switch choice {
	case 1:
		// A finalizer removed by who put it there.
		fin, user := "batch.kubernetes.io/job-tracking", jobController
		if rng.IntN(2) == 0 {
			fin, user = kueueFinalizer, kueueUser
		}
		old.SetFinalizers(append(old.GetFinalizers(), fin))
		req.User = user
	case 2:
		// Kueue's bookkeeping.
		obj.SetLabels(mergeString(obj.GetLabels(), kueueManagedLabel, "true"))
		obj.SetAnnotations(mergeString(obj.GetAnnotations(), "kueue.x-k8s.io/workload", "pod-"+obj.GetName()))
		req.User = kueueUser
	case 3:
		// An orphan adopted by the controller whose selector matches.
		ref := map[string]any{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": "00000000-0000-0000-0000-000000000002", "controller": true, "blockOwnerDeletion": true}
		req.User = replicaSetController
		if rng.IntN(2) == 0 {
			ref["apiVersion"], ref["kind"] = "batch/v1", "Job"
			req.User = jobController
		}
		refs, _ := mapOf(obj.Object["metadata"])["ownerReferences"].([]any)
		if len(refs) > 0 {
			return Request{}, false // it has an owner already
		}
		mapOf(obj.Object["metadata"])["ownerReferences"] = []any{ref}
	default:
		// Another owner, not the controller.
		refs, _ := mapOf(obj.Object["metadata"])["ownerReferences"].([]any)
		mapOf(obj.Object["metadata"])["ownerReferences"] = append(slices.Clone(refs), map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "name": "keeper", "uid": "00000000-0000-0000-0000-000000000003"})
		req.User = garbageCollector
	}
	return req, true
}

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
		if chance(0.2) {
			// Workloads from before accelc read the node's disks and its
			// own files, read-only.
			path := []string{"/mnt/datasets", "/etc/localtime", "/usr/share/zoneinfo", "/etc/nvidia-container-runtime", "/opt/models"}[rng.IntN(5)]
			spec["volumes"] = []any{map[string]any{"name": "host", "hostPath": map[string]any{"path": path}}}
			container["volumeMounts"] = []any{map[string]any{"name": "host", "mountPath": "/host", "readOnly": true}}
		}
		if chance(0.5) {
			for _, p := range m.Profiles {
				if p.Offered() && p.Generic() && p.DRA == nil {
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
	return e.wrap(rng, md, spec, nil), true
}

// wrap returns the pod, or a workload of a random kind whose controller
// makes it: the pod's metadata and spec in the template (a Notebook: its
// labels and annotations on the Notebook, its spec in the template, as ODH
// writes one; the kinds of several templates put it in one of them, and a
// plain CPU pod in the others). own are labels for the workload itself
// (Kueue's, which it reads from the workload).
func (e *EscapeCheck) wrap(rng *rand.Rand, md, spec, own map[string]any) map[string]any {
	meta := func() map[string]any {
		out := map[string]any{"name": md["name"], "namespace": md["namespace"]}
		if len(own) > 0 {
			out["labels"] = own
		}
		return out
	}
	tmpl := func(md map[string]any) map[string]any { return map[string]any{"metadata": md, "spec": spec} }
	plain := map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"name": "main", "image": "busybox"}}}}
	// Of a kind with several templates, which holds the pod.
	first := rng.IntN(2) == 0
	either := func(a, b map[string]any) (map[string]any, map[string]any) {
		if first {
			return a, plain
		}
		return plain, a
	}
	replicated := func(md map[string]any) map[string]any {
		return map[string]any{"selector": map[string]any{"matchLabels": map[string]any{"app": "x"}}, "template": tmpl(withLabel(md, "app", "x"))}
	}
	kind := rng.IntN(20)
	if kind <= 11 {
		delete(spec, "ephemeralContainers")
	}
	switch kind {
	case 0:
		return map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta(), "spec": replicated(md)}
	case 1:
		spec["restartPolicy"] = "Never"
		return map[string]any{"apiVersion": "batch/v1", "kind": "Job", "metadata": meta(),
			"spec": map[string]any{"template": tmpl(md)}}
	case 2:
		s := replicated(md)
		s["serviceName"] = "x"
		return map[string]any{"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": meta(), "spec": s}
	case 3:
		spec["restartPolicy"] = "OnFailure"
		jobTemplate := map[string]any{"spec": map[string]any{"template": tmpl(md)}}
		if len(own) > 0 {
			// Kueue reads a CronJob's Jobs' labels.
			jobTemplate["metadata"] = map[string]any{"labels": own}
		}
		m := meta()
		delete(m, "labels")
		return map[string]any{"apiVersion": "batch/v1", "kind": "CronJob", "metadata": m,
			"spec": map[string]any{"schedule": "0 * * * *", "jobTemplate": jobTemplate}}
	case 4:
		nb := meta()
		for _, k := range []string{"labels", "annotations"} {
			if v, ok := md[k]; ok {
				nb[k] = v
			}
		}
		return map[string]any{"apiVersion": "kubeflow.org/v1", "kind": "Notebook", "metadata": nb,
			"spec": map[string]any{"template": map[string]any{"spec": spec}}}
	case 5:
		return map[string]any{"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": meta(), "spec": replicated(md)}
	case 6:
		return map[string]any{"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": meta(), "spec": replicated(md)}
	case 7:
		master, worker := either(tmpl(md), plain)
		return map[string]any{"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "metadata": meta(),
			"spec": map[string]any{"pytorchReplicaSpecs": map[string]any{
				"Master": map[string]any{"replicas": int64(1), "restartPolicy": "OnFailure", "template": master},
				"Worker": map[string]any{"replicas": int64(2), "restartPolicy": "OnFailure", "template": worker},
			}}}
	case 8:
		head, worker := either(tmpl(md), plain)
		return map[string]any{"apiVersion": "ray.io/v1", "kind": "RayCluster", "metadata": meta(),
			"spec": map[string]any{
				"headGroupSpec":    map[string]any{"rayStartParams": map[string]any{}, "template": head},
				"workerGroupSpecs": []any{map[string]any{"groupName": "gpu", "replicas": int64(1), "minReplicas": int64(0), "maxReplicas": int64(2), "rayStartParams": map[string]any{}, "template": worker}},
			}}
	case 9:
		spec["restartPolicy"] = "Never"
		driver, workers := either(tmpl(md), plain)
		job := func(name string, t map[string]any) map[string]any {
			if ts, ok := t["spec"].(map[string]any); ok && ts["restartPolicy"] == nil {
				t = map[string]any{"spec": map[string]any{"containers": ts["containers"], "restartPolicy": "Never"}}
			}
			return map[string]any{"name": name, "replicas": int64(1), "template": map[string]any{"spec": map[string]any{"template": t}}}
		}
		return map[string]any{"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet", "metadata": meta(),
			"spec": map[string]any{"replicatedJobs": []any{job("driver", driver), job("workers", workers)}}}
	case 10:
		head, worker := either(tmpl(md), plain)
		return map[string]any{"apiVersion": "ray.io/v1", "kind": "RayJob", "metadata": meta(),
			"spec": map[string]any{"entrypoint": "python train.py", "shutdownAfterJobFinishes": true, "rayClusterSpec": map[string]any{
				"headGroupSpec":    map[string]any{"rayStartParams": map[string]any{}, "template": head},
				"workerGroupSpecs": []any{map[string]any{"groupName": "gpu", "replicas": int64(1), "minReplicas": int64(0), "maxReplicas": int64(2), "rayStartParams": map[string]any{}, "template": worker}},
			}}}
	case 11:
		leader, worker := either(tmpl(md), plain)
		return map[string]any{"apiVersion": "leaderworkerset.x-k8s.io/v1", "kind": "LeaderWorkerSet", "metadata": meta(),
			"spec": map[string]any{"replicas": int64(1), "leaderWorkerTemplate": map[string]any{"size": int64(2), "leaderTemplate": leader, "workerTemplate": worker}}}
	}
	return map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": md, "spec": spec}
}

// ControllerPod is the pod a workload's controller makes from its first
// template, as stored; nil for a kind that is no workload.
func ControllerPod(obj *unstructured.Unstructured) *unstructured.Unstructured {
	pods := ControllerPods(obj)
	if len(pods) == 0 {
		return nil
	}
	return pods[0].Pod
}

// PodAt is a pod a workload's controller makes, and the template it comes
// from.
type PodAt struct {
	Where string
	Pod   *unstructured.Unstructured
}

// ControllerPods are the pods a workload's controllers make from it, as
// stored, one per template (those in lists too): the template's metadata
// and spec (a Notebook: its own labels and its template's spec). None for
// a kind that is no workload.
func ControllerPods(obj *unstructured.Unstructured) []PodAt {
	w, ok := render.WorkloadKindOf(obj.GroupVersionKind().Group, obj.GetKind())
	if !ok {
		return nil
	}
	var out []PodAt
	add := func(where string, tmpl map[string]any) {
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
		md["name"] = fmt.Sprintf("%s-%d", obj.GetName(), len(out))
		md["namespace"] = obj.GetNamespace()
		out = append(out, PodAt{Where: where, Pod: &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": md, "spec": spec}}})
	}
	for _, t := range w.Templates {
		if tmpl, ok, _ := unstructured.NestedMap(obj.Object, t.Path...); ok {
			add(strings.Join(t.Path, "."), tmpl)
		}
	}
	for _, l := range w.Lists {
		items, _, _ := unstructured.NestedSlice(obj.Object, l.Path...)
		for i, item := range items {
			item, _ := item.(map[string]any)
			if tmpl, ok, _ := unstructured.NestedMap(item, l.Template...); ok {
				add(fmt.Sprintf("%s[%d]", strings.Join(l.Path, "."), i), tmpl)
			}
		}
	}
	return out
}

// retiredProfiles are the names of the model's retired profiles.
func (e *EscapeCheck) retiredProfiles() []string {
	var out []string
	for i := range e.model.Profiles {
		if e.model.Profiles[i].Retired != nil {
			out = append(out, e.model.Profiles[i].Name)
		}
	}
	return out
}
