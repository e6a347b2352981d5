package engine

// Kueue as the escape check sees it: the kinds it manages, their owners,
// and its identities.

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/accelc/accelc/pkg/compile"
	"github.com/accelc/accelc/pkg/render"
)

// Kueue accounts for a pod's devices when it admits the pod's Workload:
// the pod's own (its pod integration gates the pod), or, for a pod whose
// controller owner is of a kind one of its job integrations manages, the
// owner's. Its pod integration skips such a pod, trusting the owner's
// controller to have made it from an admitted owner; a pod anyone else
// makes with that owner is never accounted for. The check's own list of
// those kinds, by group and kind (Kueue matches the owner's apiVersion
// too; any version is held to the same account here, as the policy
// does).
var kueueManagedKinds = map[string]bool{
	"batch/Job":                                true,
	"kubeflow.org/PyTorchJob":                  true,
	"kubeflow.org/TFJob":                       true,
	"kubeflow.org/MPIJob":                      true,
	"kubeflow.org/XGBoostJob":                  true,
	"kubeflow.org/PaddleJob":                   true,
	"kubeflow.org/JAXJob":                      true,
	"ray.io/RayCluster":                        true,
	"ray.io/RayJob":                            true,
	"jobset.x-k8s.io/JobSet":                   true,
	"leaderworkerset.x-k8s.io/LeaderWorkerSet": true,
	"workload.codeflare.dev/AppWrapper":        true,
	"trainer.kubeflow.org/TrainJob":            true,
}

// ownerAPIVersions are the apiVersions generated owner references name for
// a group: the served one and others.
var ownerAPIVersions = map[string][]string{
	"batch":                    {"batch/v1", "batch/v2"},
	"kubeflow.org":             {"kubeflow.org/v1", "kubeflow.org/v2beta1"},
	"ray.io":                   {"ray.io/v1", "ray.io/v1alpha1"},
	"jobset.x-k8s.io":          {"jobset.x-k8s.io/v1alpha2"},
	"leaderworkerset.x-k8s.io": {"leaderworkerset.x-k8s.io/v1"},
	"workload.codeflare.dev":   {"workload.codeflare.dev/v1beta2"},
	"trainer.kubeflow.org":     {"trainer.kubeflow.org/v1alpha1"},
}

// unmanagedOwners are owners whose pods Kueue's pod integration handles
// as pods of their own (or that no controller runs): an owner reference
// to one moves no pod out of Kueue's view.
var unmanagedOwners = [][2]string{{"apps/v1", "ReplicaSet"}, {"apps/v1", "StatefulSet"}, {"v1", "ReplicationController"}, {"example.com/v1", "Widget"}}

// KueueGate is the scheduling gate Kueue's pod integration puts on the
// pods it manages and removes when it admits their Workload;
// kueueManagedLabel and kueueFinalizer are its bookkeeping on them.
const (
	KueueGate         = "kueue.x-k8s.io/admission"
	kueueManagedLabel = "kueue.x-k8s.io/managed"
	kueueFinalizer    = "kueue.x-k8s.io/managed"
	podGroupLabel     = "kueue.x-k8s.io/pod-group-name"
	podGroupCount     = "kueue.x-k8s.io/pod-group-total-count"
)

// kueueIdentities are who may make the pods of a Kueue-managed owner (by
// "<group>/<Kind>") and who may admit a gated pod: the rendered admission
// constraint's podControllers and kueueManagers parameters, else Kueue's
// and kube-controller-manager's defaults.
type kueueIdentities struct {
	controllers map[string][]string
	users       []string
}

func defaultKueueIdentities() kueueIdentities {
	return kueueIdentities{
		controllers: map[string][]string{"batch/Job": {"system:serviceaccount:kube-system:job-controller"}},
		users:       []string{"system:serviceaccount:kueue-system:kueue-controller-manager"},
	}
}

// readKueueIdentities reads them from the tree's admission constraint.
func readKueueIdentities(tree render.Tree) (kueueIdentities, error) {
	ids := defaultKueueIdentities()
	for _, p := range tree.Paths() {
		if !strings.HasSuffix(p, ".yaml") || !strings.Contains(string(tree[p]), "constraints.gatekeeper.sh/") {
			continue
		}
		var c struct {
			APIVersion string `json:"apiVersion"`
			Spec       struct {
				Parameters struct {
					PodControllers map[string][]string `json:"podControllers"`
					KueueManagers  map[string]bool     `json:"kueueManagers"`
				} `json:"parameters"`
			} `json:"spec"`
		}
		if err := yaml.Unmarshal(tree[p], &c); err != nil {
			return ids, fmt.Errorf("%s: %w", p, err)
		}
		if !strings.HasPrefix(c.APIVersion, "constraints.gatekeeper.sh/") {
			continue
		}
		if c.Spec.Parameters.PodControllers != nil {
			ids.controllers = c.Spec.Parameters.PodControllers
		}
		if c.Spec.Parameters.KueueManagers != nil {
			ids.users = nil
			for _, u := range slices.Sorted(maps.Keys(c.Spec.Parameters.KueueManagers)) {
				if c.Spec.Parameters.KueueManagers[u] {
					ids.users = append(ids.users, u)
				}
			}
		}
	}
	return ids, nil
}

// controllerOwner is the pod's controller owner reference as
// "<group>/<Kind>" and its name and uid, or "".
func controllerOwner(md map[string]any) (key, name, uid string) {
	for _, o := range list(md["ownerReferences"]) {
		if o["controller"] != true {
			continue
		}
		gv, err := schema.ParseGroupVersion(fmt.Sprint(o["apiVersion"]))
		if err != nil {
			return "", "", ""
		}
		return gv.Group + "/" + fmt.Sprint(o["kind"]), fmt.Sprint(o["name"]), fmt.Sprint(o["uid"])
	}
	return "", "", ""
}

// queuedTeam reports whether Kueue shares out the team's devices: it has
// a LocalQueue of a profile.
func (e *EscapeCheck) queuedTeam(t *compile.Team) bool {
	for i := range e.model.Profiles {
		if slices.Contains(e.model.QueueTeams(&e.model.Profiles[i]), t) {
			return true
		}
	}
	return false
}

// unaccounted says why Kueue never accounts for an admitted pod that
// reaches devices ("" when it does): in a queued team's namespace, a new
// pod of a queued profile that names a LocalQueue but that Kueue's pod
// webhook did not gate;
// a pod whose controller owner is (on CREATE) or becomes (on UPDATE) one
// of a kind Kueue manages, by someone other than that kind's controller;
// or Kueue's scheduling gate removed by someone other than Kueue.
func (e *EscapeCheck) unaccounted(req Request, pod map[string]any) string {
	md := mapOf(pod["metadata"])
	user := req.User
	if user == "" {
		user = DefaultUser
	}
	if req.Operation == "UPDATE" && req.OldObject != nil && hasGate(req.OldObject.Object, KueueGate) && !hasGate(pod, KueueGate) && !slices.Contains(e.kueue.users, user) {
		return fmt.Sprintf("%s removed scheduling gate %s, which only Kueue removes when it admits the pod's Workload: Kueue never accounts for its devices", user, KueueGate)
	}
	ns, _ := md["namespace"].(string)
	team := e.teamOf[ns]
	if team == nil || !e.queued[team.Name] {
		return ""
	}
	owner, name, uid := controllerOwner(md)
	if req.Operation != "UPDATE" && !e.mutator.kueueJobKinds[owner] && mapOf(md["labels"])[render.QueueNameLabel] != nil && !hasGate(pod, KueueGate) && e.queuedProfile(md, team) {
		return fmt.Sprintf("Kueue's pod webhook skipped the pod (it names LocalQueue %v but was admitted ungated): no Workload accounts for its devices in team %s's queues", mapOf(md["labels"])[render.QueueNameLabel], team.Name)
	}
	if !kueueManagedKinds[owner] || slices.Contains(e.kueue.controllers[owner], user) {
		return ""
	}
	if req.Operation == "UPDATE" && req.OldObject != nil {
		if o, n, u := controllerOwner(mapOf(req.OldObject.Object["metadata"])); o == owner && n == name && u == uid {
			return "" // its controller, kept
		}
		return fmt.Sprintf("%s made %s %s, a kind Kueue manages, the pod's controller owner: Kueue stops accounting for its devices in team %s's queues", user, owner, name, team.Name)
	}
	return fmt.Sprintf("the pod's controller owner is %s %s, a kind Kueue manages, and %s made it, not %s's controller: Kueue never accounts for its devices in team %s's queues", owner, name, user, owner, team.Name)
}

// queuedProfile reports whether Kueue shares out the devices of the
// pod's profile in the team's namespaces (the profile has the team's
// LocalQueue).
func (e *EscapeCheck) queuedProfile(md map[string]any, team *compile.Team) bool {
	p := e.profileOf(md)
	return p != nil && slices.Contains(e.model.QueueTeams(p), team)
}

func hasGate(pod map[string]any, gate string) bool {
	return slices.ContainsFunc(list(mapOf(pod["spec"])["schedulingGates"]), func(g map[string]any) bool { return g["name"] == gate })
}

// spoofOwner gives a generated pod's metadata an owner reference: mostly
// the controller one of a kind Kueue manages, sometimes of another kind,
// or not the controller; and sometimes Kueue's pod-group label, which
// keeps a pod in Kueue's view.
func (e *EscapeCheck) spoofOwner(rng *rand.Rand, md map[string]any) {
	pick := func(s []string) string { return s[rng.IntN(len(s))] }
	ref := map[string]any{"name": fmt.Sprintf("owner-%d", rng.IntN(4)), "uid": "00000000-0000-0000-0000-00000000000" + fmt.Sprint(rng.IntN(10)), "controller": true}
	if rng.IntN(5) == 0 {
		o := unmanagedOwners[rng.IntN(len(unmanagedOwners))]
		ref["apiVersion"], ref["kind"] = o[0], o[1]
	} else {
		kinds := slices.Sorted(maps.Keys(kueueManagedKinds))
		gk := pick(kinds)
		group, kind, _ := strings.Cut(gk, "/")
		ref["apiVersion"], ref["kind"] = pick(ownerAPIVersions[group]), kind
	}
	if rng.IntN(8) == 0 {
		ref["controller"] = false
	}
	md["ownerReferences"] = []any{ref}
	if rng.IntN(6) == 0 {
		labels, _ := md["labels"].(map[string]any)
		if labels == nil {
			labels = map[string]any{}
		}
		labels[podGroupLabel] = "group"
		md["labels"] = labels
		ann, _ := md["annotations"].(map[string]any)
		if ann == nil {
			ann = map[string]any{}
		}
		ann[podGroupCount] = "2"
		md["annotations"] = ann
	}
}

// requester picks who makes a generated object: for a pod with a
// controller owner, often that kind's controller, sometimes another
// kind's or Kueue; otherwise an ordinary user.
func (e *EscapeCheck) requester(rng *rand.Rand, obj map[string]any) string {
	owner, _, _ := controllerOwner(mapOf(obj["metadata"]))
	if owner == "" || obj["kind"] != "Pod" {
		return DefaultUser
	}
	var others []string
	for _, k := range slices.Sorted(maps.Keys(e.kueue.controllers)) {
		others = append(others, e.kueue.controllers[k]...)
	}
	others = append(others, e.kueue.users...)
	switch r := rng.IntN(10); {
	case r < 4 && len(e.kueue.controllers[owner]) > 0:
		ids := e.kueue.controllers[owner]
		return ids[rng.IntN(len(ids))]
	case r < 6 && len(others) > 0:
		return others[rng.IntN(len(others))]
	case r < 7:
		return "system:serviceaccount:" + fmt.Sprint(mapOf(obj["metadata"])["namespace"]) + ":default"
	}
	return DefaultUser
}

// ungate is an UPDATE of an admitted pod as Kueue's pod integration
// made it (its gate, label and finalizer) that removes the gate, by Kueue
// or another user; the pod as stored is first given the gate.
func (e *EscapeCheck) ungate(rng *rand.Rand, stored *unstructured.Unstructured, user string) Request {
	old := stored.DeepCopy()
	gateAsKueue(old)
	delete(mapOf(old.Object["spec"]), "nodeName") // a gated pod is not bound
	obj := old.DeepCopy()
	spec := mapOf(obj.Object["spec"])
	gates := slices.DeleteFunc(slices.Clone(spec["schedulingGates"].([]any)), func(g any) bool { return mapOf(g)["name"] == KueueGate })
	if len(gates) == 0 {
		delete(spec, "schedulingGates")
	} else {
		spec["schedulingGates"] = gates
	}
	if rng.IntN(2) == 0 {
		// Kueue's flavor's node labels, as it ungates.
		obj.SetAnnotations(mergeString(obj.GetAnnotations(), "kueue.x-k8s.io/workload", "pod-"+obj.GetName()))
	}
	return Request{Object: obj, OldObject: old, Operation: "UPDATE", User: user}
}

// KueueWebhooks does to a new object what Kueue's webhooks do: a pod
// Kueue queues gets its scheduling gate, managed label and finalizer
// (gateAsKueue), a Job it queues is suspended. It reports whether it
// gated a pod.
func (m *Mutator) KueueWebhooks(obj *unstructured.Unstructured) (gated bool) {
	switch {
	case m.queuedByKueue(obj):
		gateAsKueue(obj)
		return true
	case m.jobQueuedByKueue(obj):
		_ = unstructured.SetNestedField(obj.Object, true, "spec", "suspend")
	}
	return false
}

// gateAsKueue gives a pod what Kueue's pod webhook gives the pods it
// manages: its scheduling gate (besides any other), managed label and
// finalizer, once.
func gateAsKueue(pod *unstructured.Unstructured) {
	if !hasGate(pod.Object, KueueGate) {
		spec := mapOf(pod.Object["spec"])
		gates, _ := spec["schedulingGates"].([]any)
		spec["schedulingGates"] = append(slices.Clone(gates), map[string]any{"name": KueueGate})
		pod.Object["spec"] = spec
	}
	pod.SetLabels(mergeString(pod.GetLabels(), kueueManagedLabel, "true"))
	if !slices.Contains(pod.GetFinalizers(), kueueFinalizer) {
		pod.SetFinalizers(append(pod.GetFinalizers(), kueueFinalizer))
	}
}

// queuedByKueue reports whether Kueue's pod webhook queues a new pod, as
// Kueue v0.19 decides: a core Pod in a namespace its
// managedJobsNamespaceSelector selects, with a LocalQueue label, whose
// controller owner is not of a kind whose job integration the
// Configuration turns on (the owner's Workload accounts for those; the
// policy holds who may make them).
func (m *Mutator) queuedByKueue(obj *unstructured.Unstructured) bool {
	if m.kueue == nil || obj.GetKind() != "Pod" || obj.GroupVersionKind().Group != "" {
		return false
	}
	if !m.kueue.Matches(labels.Set{corev1.LabelMetadataName: obj.GetNamespace()}) {
		return false
	}
	if obj.GetLabels()[render.QueueNameLabel] == "" {
		return false
	}
	owner, _, _ := controllerOwner(mapOf(obj.Object["metadata"]))
	return !m.kueueJobKinds[owner]
}

// jobQueuedByKueue reports whether Kueue's job webhook suspends a new
// batch Job: one with a LocalQueue label in a namespace Kueue manages.
// (Its pods are then the Job's Workload's.)
func (m *Mutator) jobQueuedByKueue(obj *unstructured.Unstructured) bool {
	if m.kueue == nil || obj.GetKind() != "Job" || obj.GroupVersionKind().Group != "batch" {
		return false
	}
	return m.kueue.Matches(labels.Set{corev1.LabelMetadataName: obj.GetNamespace()}) && obj.GetLabels()[render.QueueNameLabel] != ""
}

// kueueConfig reads the tree's Kueue Configuration fragment (render's
// KueueConfigMapName): the namespaces its managedJobsNamespaceSelector
// selects (nil when the tree has no fragment) and, by "<group>/<Kind>",
// the kinds of the job integrations it turns on.
func kueueConfig(tree render.Tree) (labels.Selector, map[string]bool, error) {
	for _, p := range tree.Paths() {
		if !strings.HasSuffix(p, "configmap-"+render.KueueConfigMapName+".yaml") {
			continue
		}
		var cm corev1.ConfigMap
		if err := yaml.Unmarshal(tree[p], &cm); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", p, err)
		}
		var cfg struct {
			ManagedJobsNamespaceSelector *metav1.LabelSelector `json:"managedJobsNamespaceSelector"`
			Integrations                 struct {
				Frameworks []string `json:"frameworks"`
			} `json:"integrations"`
		}
		if err := yaml.Unmarshal([]byte(cm.Data["configuration.yaml"]), &cfg); err != nil {
			return nil, nil, fmt.Errorf("%s: configuration.yaml: %w", p, err)
		}
		kinds := map[string]bool{}
		for _, f := range render.KueueJobFrameworks {
			if slices.Contains(cfg.Integrations.Frameworks, f.Name) {
				kinds[f.Group+"/"+f.Kind] = true
			}
		}
		sel := labels.Everything()
		if cfg.ManagedJobsNamespaceSelector != nil {
			var err error
			if sel, err = metav1.LabelSelectorAsSelector(cfg.ManagedJobsNamespaceSelector); err != nil {
				return nil, nil, fmt.Errorf("%s: managedJobsNamespaceSelector: %w", p, err)
			}
		}
		return sel, kinds, nil
	}
	return nil, nil, nil
}

func mergeString(m map[string]string, k, v string) map[string]string {
	if m == nil {
		m = map[string]string{}
	}
	m[k] = v
	return m
}
