package workloads

// Kueue's Workloads: their pod sets, what they request and what they
// admit.

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/accelc/accelc/pkg/render"
)

// KueueWorkload is one of Kueue's Workloads, as Unaccounted reads it:
// whom it is for, whether Kueue admitted it, and what its pods ask for.
// Kueue makes one per object it queues, owned by that object: a Job's
// Workload has an owner reference to the Job, a JobSet's to the JobSet, a
// plain pod's to the pod, a pod group's to every pod of the group.
type KueueWorkload struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Owners are its owner references.
	Owners []OwnerRef `json:"owners,omitempty"`
	// Admitted says Kueue admitted it: its status.admission is set, or
	// its Admitted condition is True.
	Admitted bool     `json:"admitted"`
	PodSets  []PodSet `json:"podSets"`
}

// OwnerRef is an owner reference: the object it names and its uid.
type OwnerRef struct {
	Ref
	UID string `json:"uid"`
}

// PodSet is one of a Workload's pod sets.
type PodSet struct {
	Name string `json:"name"`
	// Count is how many pods Kueue admitted of it (the admission's count
	// where it has one, else the spec's).
	Count int64 `json:"count"`
	// PerPod is what one of its pods asks for, by resource, as Pod
	// counts it (Requests).
	PerPod map[string]int64 `json:"perPod,omitempty"`
}

// String names the Workload as messages do: "Workload team-a/job-train-1a2b3".
func (w *KueueWorkload) String() string { return "Workload " + w.Namespace + "/" + w.Name }

// admits is how many pods the Workload admits, over its pod sets.
func (w *KueueWorkload) admits() int64 {
	var n int64
	for _, ps := range w.PodSets {
		n += ps.Count
	}
	return n
}

// kueueWorkloads reads Workloads as ReadLive lists them, sorted by
// namespace and name.
func kueueWorkloads(objs []*unstructured.Unstructured) ([]KueueWorkload, error) {
	out := make([]KueueWorkload, 0, len(objs))
	for _, u := range objs {
		w, err := KueueWorkloadOf(u)
		if err != nil {
			return nil, fmt.Errorf("Workload %s/%s: %w", u.GetNamespace(), u.GetName(), err)
		}
		out = append(out, w)
	}
	slices.SortFunc(out, func(a, b KueueWorkload) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	return out, nil
}

// KueueWorkloadOf reads a kueue.x-k8s.io Workload (v1beta1 or v1beta2:
// the fields read are the same in both).
func KueueWorkloadOf(u *unstructured.Unstructured) (KueueWorkload, error) {
	w := KueueWorkload{Namespace: u.GetNamespace(), Name: u.GetName()}
	for _, r := range u.GetOwnerReferences() {
		w.Owners = append(w.Owners, OwnerRef{Ref: Ref{APIVersion: r.APIVersion, Kind: r.Kind, Namespace: w.Namespace, Name: r.Name}, UID: string(r.UID)})
	}
	admission, hasAdmission, _ := unstructured.NestedMap(u.Object, "status", "admission")
	w.Admitted = hasAdmission && admission != nil
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		c, _ := c.(map[string]any)
		if c["type"] == "Admitted" && c["status"] == "True" {
			w.Admitted = true
		}
	}
	admitted := map[string]int64{}
	assignments, _, _ := unstructured.NestedSlice(admission, "podSetAssignments")
	for _, a := range assignments {
		a, _ := a.(map[string]any)
		name, _ := a["name"].(string)
		if n, ok := wholeUnits(a["count"]); ok {
			admitted[name] = n
		}
	}
	sets, _, err := unstructured.NestedSlice(u.Object, "spec", "podSets")
	if err != nil {
		return w, fmt.Errorf("spec.podSets: %w", err)
	}
	for _, ps := range sets {
		ps, _ := ps.(map[string]any)
		name, _ := ps["name"].(string)
		count, ok := wholeUnits(ps["count"])
		if !ok {
			count = 1
		}
		if n, ok := admitted[name]; ok {
			count = n
		}
		spec, _, _ := unstructured.NestedMap(ps, "template", "spec")
		w.PodSets = append(w.PodSets, PodSet{Name: name, Count: count, PerPod: Requests(spec)})
	}
	return w, nil
}

// Requests are what a pod spec asks for, by resource, in whole units, as
// Kueue counts a pod: its containers' together, or its largest init
// container's where that is more; each container's limit, else its
// request (an extended resource's request is its limit).
func Requests(spec map[string]any) map[string]int64 {
	sum := map[string]int64{}
	init := map[string]int64{}
	for list, into := range map[string]map[string]int64{"containers": sum, "initContainers": init} {
		cs, _ := spec[list].([]any)
		for _, c := range cs {
			c, _ := c.(map[string]any)
			for r, n := range containerRequests(c) {
				if list == "containers" {
					into[r] += n
				} else {
					into[r] = max(into[r], n)
				}
			}
		}
	}
	for r, n := range init {
		sum[r] = max(sum[r], n)
	}
	if len(sum) == 0 {
		return nil
	}
	return sum
}

// containerRequests are a container's limits, with its requests for the
// resources it sets no limit of.
func containerRequests(c map[string]any) map[string]int64 {
	out := map[string]int64{}
	for _, section := range []string{"requests", "limits"} {
		res, _, _ := unstructured.NestedMap(c, "resources", section)
		for r, q := range res {
			if n, ok := wholeUnits(q); ok {
				out[r] = n
			}
		}
	}
	return out
}

// wholeUnits is a quantity as a pod spec holds it (a number, or a
// Kubernetes quantity string), rounded up to a whole unit.
func wholeUnits(q any) (int64, bool) {
	switch v := q.(type) {
	case int64:
		return v, true
	case float64:
		return int64(v), true
	case string:
		if parsed, err := resource.ParseQuantity(v); err == nil {
			return parsed.Value(), true
		}
	}
	return 0, false
}

// Why a pod holding accelerators is not accounted for by Kueue.
const (
	// NoWorkload: no Workload is for the pod, nor for any of its owners.
	NoWorkload = "NoWorkload"
	// NotAdmitted: a Workload is for it, but Kueue has not admitted it.
	NotAdmitted = "NotAdmitted"
	// OwnerMissing: an owner the pod (or one of its owners) names does
	// not exist: no object of its kind has its uid.
	OwnerMissing = "OwnerMissing"
	// FewerDevices: its owner's admitted Workload asks, for each pod, for
	// fewer accelerators than the pod holds.
	FewerDevices = "FewerDevices"
	// MorePods: more pods hold devices for an admitted Workload than it
	// admits.
	MorePods = "MorePods"
)

// Unaccounted is a pod holding accelerators, in a namespace whose pods
// schedule through Kueue, that no admitted Kueue Workload accounts for:
// Kueue counts none of its devices against a quota.
type Unaccounted struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Node is the node it is bound to.
	Node string `json:"node,omitempty"`
	// Devices are the accelerators it holds, by extended resource.
	Devices map[string]int64 `json:"devices,omitempty"`
	// Claims are the DRA claims it names (spec.resourceClaims), each as
	// name=claim or name=template/template.
	Claims []string `json:"claims,omitempty"`
	// Owner is its controller owner as it names it (else its first
	// owner); nil for none.
	Owner *Ref `json:"owner,omitempty"`
	// Workload is the Workload found for it, namespace/name; "" for none.
	Workload string `json:"workload,omitempty"`
	// Reason is one of NoWorkload, NotAdmitted, OwnerMissing,
	// FewerDevices and MorePods; Message says it in words.
	Reason  string `json:"reason"`
	Message string `json:"message"`
}

// DevicesText is what the pod holds, in words: "4 nvidia.com/gpu, claim
// gpu=template/one-gpu".
func (u Unaccounted) DevicesText() string {
	var parts []string
	for _, r := range slices.Sorted(maps.Keys(u.Devices)) {
		parts = append(parts, fmt.Sprintf("%d %s", u.Devices[r], r))
	}
	for _, c := range u.Claims {
		parts = append(parts, "claim "+c)
	}
	return strings.Join(parts, ", ")
}

// AccountOptions say which pods Kueue must account for.
type AccountOptions struct {
	// Queued says whether a pod in namespace, naming profile (its Open
	// Data Hub annotation, else ProfileLabel; "" for none), schedules
	// through Kueue. claimsOnly says the pod holds DRA claims and no
	// extended accelerator resource (a profile that schedules by node
	// may hold those outside Kueue).
	Queued func(namespace, profile string, claimsOnly bool) bool
	// Accelerator says whether an extended resource is an accelerator.
	Accelerator func(resource string) bool
	// ProfileLabel is accelc's profile label (<prefix>/profile).
	ProfileLabel string
}

// Unaccounted are the set's pods that hold accelerators (an extended
// resource Accelerator says is one, or a DRA claim), are running or
// bound to a node, and are Queued, that no admitted Kueue Workload
// accounts for, sorted by namespace and name. A Workload accounts for a
// pod when it is for the pod, or for an object on the pod's owner chain
// (followed, by uid, through the set's objects: Pod → Job → JobSet; the
// last owner reference counts even where the set lacks its object, a
// RayJob of a RayCluster), Kueue admitted it, one of its pod sets asks
// for at least as many of each accelerator as the pod holds, and no more
// pods hold devices for it than it admits (the oldest are accounted
// for). Nil where the set holds no Kueue Workloads read from a cluster
// (Kueue is not served, or the set is a snapshot's).
func (s *Set) Unaccounted(opts AccountOptions) []Unaccounted {
	if s == nil || s.Kueue == "" {
		return nil
	}
	x := s.lookup()
	byOwner := map[string][]*KueueWorkload{}
	for i := range s.KueueWorkloads {
		w := &s.KueueWorkloads[i]
		for _, o := range w.Owners {
			if o.UID != "" {
				byOwner[o.UID] = append(byOwner[o.UID], w)
			}
		}
	}
	var out []Unaccounted
	admittedPods := map[*KueueWorkload][]*unstructured.Unstructured{}
	for _, pod := range s.Pods() {
		p, ok := holding(pod, opts)
		if !ok {
			continue
		}
		chain, missing := s.chain(x, pod)
		var found []*KueueWorkload
		for _, uid := range chain {
			found = append(found, byOwner[uid]...)
		}
		w, reason, msg := judge(p, found, missing)
		if reason == "" {
			admittedPods[w] = append(admittedPods[w], pod)
			continue
		}
		p.Reason, p.Message = reason, msg
		if w != nil {
			p.Workload = w.Namespace + "/" + w.Name
		}
		out = append(out, p)
	}
	for w, pods := range admittedPods {
		out = append(out, excess(w, pods, opts)...)
	}
	slices.SortFunc(out, func(a, b Unaccounted) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	return out
}

// holding is a pod that Kueue must account for, as an Unaccounted yet
// without its reason: running or bound, not finished, holding
// accelerators, and Queued.
func holding(pod *unstructured.Unstructured, opts AccountOptions) (Unaccounted, bool) {
	phase, _, _ := unstructured.NestedString(pod.Object, "status", "phase")
	node, _, _ := unstructured.NestedString(pod.Object, "spec", "nodeName")
	if phase == "Succeeded" || phase == "Failed" || (phase != "Running" && node == "") {
		return Unaccounted{}, false
	}
	spec, _, _ := unstructured.NestedMap(pod.Object, "spec")
	p := Unaccounted{Namespace: pod.GetNamespace(), Name: pod.GetName(), Node: node}
	for r, n := range Requests(spec) {
		if n > 0 && opts.Accelerator != nil && opts.Accelerator(r) {
			if p.Devices == nil {
				p.Devices = map[string]int64{}
			}
			p.Devices[r] = n
		}
	}
	claims, _, _ := unstructured.NestedSlice(pod.Object, "spec", "resourceClaims")
	for _, c := range claims {
		c, _ := c.(map[string]any)
		name, _ := c["name"].(string)
		if n, _ := c["resourceClaimName"].(string); n != "" {
			p.Claims = append(p.Claims, name+"="+n)
		} else if t, _ := c["resourceClaimTemplateName"].(string); t != "" {
			p.Claims = append(p.Claims, name+"=template/"+t)
		}
	}
	if len(p.Devices) == 0 && len(p.Claims) == 0 {
		return Unaccounted{}, false
	}
	profile := pod.GetAnnotations()[render.ProfileAnnotation]
	if profile == "" && opts.ProfileLabel != "" {
		profile = pod.GetLabels()[opts.ProfileLabel]
	}
	if opts.Queued == nil || !opts.Queued(p.Namespace, profile, len(p.Devices) == 0) {
		return Unaccounted{}, false
	}
	if ref, ok := owner(pod); ok {
		p.Owner = &Ref{APIVersion: ref.APIVersion, Kind: ref.Kind, Namespace: p.Namespace, Name: ref.Name}
	}
	return p, true
}

// chain are the uids a Workload for the pod may name: the pod's, then
// each owner's up its chain of controller references, strictly by uid.
// missing says which owner does not exist, where the set lists its kind
// and holds no object of its uid.
func (s *Set) chain(x *index, pod *unstructured.Unstructured) (uids []string, missing string) {
	u := pod
	seen := map[*unstructured.Unstructured]bool{}
	for range maxOwners {
		seen[u] = true
		if uid := string(u.GetUID()); uid != "" {
			uids = append(uids, uid)
		}
		ref, ok := owner(u)
		if !ok {
			break
		}
		next := x.byUID[ref.uid]
		if ref.uid == "" || next == nil {
			if ref.uid != "" {
				uids = append(uids, ref.uid)
			}
			if s.listed[objectKind{groupOf(ref.APIVersion), ref.Kind}] {
				missing = s.missing(x, u, ref)
			}
			break
		}
		if seen[next] {
			break
		}
		u = next
	}
	return uids, missing
}

// missing says that an owner ref of u names no object.
func (s *Set) missing(x *index, u *unstructured.Unstructured, ref ownerRef) string {
	what := fmt.Sprintf("%s %s/%s", ref.Kind, u.GetNamespace(), ref.Name)
	by := ""
	if u.GetKind() != "Pod" {
		by = fmt.Sprintf(" (the owner of %s %s)", u.GetKind(), u.GetName())
	}
	if other := x.byName[objectKey{groupOf(ref.APIVersion), ref.Kind, u.GetNamespace(), ref.Name}]; other != nil {
		return fmt.Sprintf("its owner %s%s is not that object: the reference's uid %s is not the %s's (%s)", what, by, ref.uid, ref.Kind, other.GetUID())
	}
	return fmt.Sprintf("its owner %s%s does not exist", what, by)
}

// judge says whether one of the Workloads found for a pod accounts for
// it: the Workload that does (reason ""), or why none does, with the
// Workload that came closest.
func judge(p Unaccounted, found []*KueueWorkload, missing string) (*KueueWorkload, string, string) {
	whose := "the pod"
	if p.Owner != nil {
		whose = "the pod or its owner " + p.Owner.Kind + " " + p.Owner.Namespace + "/" + p.Owner.Name
	}
	if len(found) == 0 {
		if missing != "" {
			return nil, OwnerMissing, missing + ": no Workload of Kueue's is for it, and Kueue counts none of its devices"
		}
		return nil, NoWorkload, "no Workload of Kueue's is for " + whose + ": Kueue counts none of its devices"
	}
	var admitted []*KueueWorkload
	for _, w := range found {
		if w.Admitted {
			admitted = append(admitted, w)
		}
	}
	if len(admitted) == 0 {
		return found[0], NotAdmitted, found[0].String() + " is for " + whose + ", but Kueue has not admitted it: the pod runs outside its quota"
	}
	for _, w := range admitted {
		if slices.ContainsFunc(w.PodSets, func(ps PodSet) bool { return covers(ps, p.Devices) }) {
			return w, "", ""
		}
	}
	w := admitted[0]
	var asks []string
	for _, r := range slices.Sorted(maps.Keys(p.Devices)) {
		most := int64(0)
		for _, ps := range w.PodSets {
			most = max(most, ps.PerPod[r])
		}
		asks = append(asks, fmt.Sprintf("%d %s", most, r))
	}
	return w, FewerDevices, fmt.Sprintf("%s, admitted for %s, asks for at most %s a pod; the pod holds %s",
		w.String(), whose, strings.Join(asks, ", "), p.DevicesText())
}

// covers says whether one pod of the pod set asks for at least devices.
func covers(ps PodSet, devices map[string]int64) bool {
	for r, n := range devices {
		if ps.PerPod[r] < n {
			return false
		}
	}
	return true
}

// excess are the pods beyond what an admitted Workload admits, the
// newest first to go; pods being deleted are not counted.
func excess(w *KueueWorkload, held []*unstructured.Unstructured, opts AccountOptions) []Unaccounted {
	held = slices.DeleteFunc(slices.Clone(held), func(p *unstructured.Unstructured) bool { return p.GetDeletionTimestamp() != nil })
	n := w.admits()
	if int64(len(held)) <= n {
		return nil
	}
	slices.SortFunc(held, func(a, b *unstructured.Unstructured) int {
		return cmp.Or(a.GetCreationTimestamp().Compare(b.GetCreationTimestamp().Time), cmp.Compare(a.GetName(), b.GetName()))
	})
	var out []Unaccounted
	for _, pod := range held[n:] {
		p, _ := holding(pod, opts)
		p.Workload = w.Namespace + "/" + w.Name
		p.Reason = MorePods
		p.Message = fmt.Sprintf("%s admits %s; %d hold devices for it (this one is among the newest)", w.String(), pods(n), len(held))
		out = append(out, p)
	}
	return out
}

// pods is "1 pod", "2 pods".
func pods(n int64) string {
	if n == 1 {
		return "1 pod"
	}
	return fmt.Sprintf("%d pods", n)
}
