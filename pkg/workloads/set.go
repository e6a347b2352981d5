package workloads

// A set of workloads: the objects, their pods, and an index by owner.

import (
	"cmp"
	"slices"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Set is what a cluster runs: its pods and every object of the kinds
// accelc judges.
type Set struct {
	// Objects are the Pods, then the workload kinds in the order of
	// Kinds, each trimmed (see Trim) and sorted by apiVersion, namespace
	// and name.
	Objects []*unstructured.Unstructured
	// Warnings are the kinds the reader may not list, said in words: the
	// set holds none of their objects. (A kind the server does not serve
	// has no objects to hold, and no warning.)
	Warnings []string
	// Kueue is the apiVersion Kueue's Workloads were read in
	// ("kueue.x-k8s.io/v1beta2"); "" where they were not read (Kueue is
	// not served, they may not be listed, or the set is a snapshot's).
	Kueue string
	// KueueWorkloads are Kueue's Workloads, sorted by namespace and name.
	KueueWorkloads []KueueWorkload

	// listed are the kinds read from a live cluster (served, and allowed
	// to be listed): an owner of such a kind that the set lacks does not
	// exist. Nil for a snapshot.
	listed map[objectKind]bool

	once  sync.Once
	index *index
}

// Ref names an object.
type Ref struct {
	APIVersion string `json:"apiVersion,omitempty"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace,omitempty"`
	Name       string `json:"name"`
}

// String is "Deployment team-a/train", as messages name an object.
func (r Ref) String() string {
	if r.Namespace == "" {
		return r.Kind + " " + r.Name
	}
	return r.Kind + " " + r.Namespace + "/" + r.Name
}

// RefOf names u.
func RefOf(u *unstructured.Unstructured) Ref {
	return Ref{APIVersion: u.GetAPIVersion(), Kind: u.GetKind(), Namespace: u.GetNamespace(), Name: u.GetName()}
}

// newSet sorts objs into a Set.
func newSet(objs []*unstructured.Unstructured, warnings []string) *Set {
	sortObjects(objs)
	return &Set{Objects: objs, Warnings: warnings}
}

// sortObjects sorts objects in the order of kinds, then by apiVersion,
// namespace and name.
func sortObjects(objs []*unstructured.Unstructured) {
	type key struct {
		rank                 int
		apiVersion, ns, name string
		obj                  *unstructured.Unstructured
	}
	keys := make([]key, len(objs))
	for i, u := range objs {
		r := RefOf(u)
		keys[i] = key{rank(groupOf(r.APIVersion), r.Kind), r.APIVersion, r.Namespace, r.Name, u}
	}
	slices.SortStableFunc(keys, func(a, b key) int {
		return cmp.Or(cmp.Compare(a.rank, b.rank), cmp.Compare(a.apiVersion, b.apiVersion), cmp.Compare(a.ns, b.ns), cmp.Compare(a.name, b.name))
	})
	for i := range keys {
		objs[i] = keys[i].obj
	}
}

// Pods are the set's pods.
func (s *Set) Pods() []*unstructured.Unstructured {
	if s == nil {
		return nil
	}
	var out []*unstructured.Unstructured
	for _, u := range s.Objects {
		if u.GetKind() == "Pod" && u.GetAPIVersion() == "v1" {
			out = append(out, u)
		}
	}
	return out
}

// index finds the set's objects by uid, and by group, kind, namespace
// and name.
type index struct {
	byUID  map[string]*unstructured.Unstructured
	byName map[objectKey]*unstructured.Unstructured
}

type objectKey struct{ group, kind, namespace, name string }

func (s *Set) lookup() *index {
	s.once.Do(func() {
		x := &index{
			byUID:  make(map[string]*unstructured.Unstructured, len(s.Objects)),
			byName: make(map[objectKey]*unstructured.Unstructured, len(s.Objects)),
		}
		for _, u := range s.Objects {
			if uid := string(u.GetUID()); uid != "" {
				x.byUID[uid] = u
			}
			x.byName[objectKey{groupOf(u.GetAPIVersion()), u.GetKind(), u.GetNamespace(), u.GetName()}] = u
		}
		s.index = x
	})
	return s.index
}

// maxOwners bounds an owner chain: Kubernetes' own are two long (Pod,
// ReplicaSet, Deployment; Pod, Job, CronJob), the ML operators' three.
const maxOwners = 16

// Workload returns the top-level owner of an object by following its
// controller's owner reference (else its first) through the set's
// objects: Pod → ReplicaSet → Deployment, Pod → Job → CronJob, Pod →
// StatefulSet → Notebook. An owner the set does not hold (of a kind it
// does not list, or gone) ends the chain with the reference's
// apiVersion, kind and name; an object with no owner is its own
// workload. The set is indexed on the first call: add no objects after.
func (s *Set) Workload(u *unstructured.Unstructured) Ref {
	var x *index
	if s != nil {
		x = s.lookup()
	}
	seen := map[*unstructured.Unstructured]bool{}
	for range maxOwners {
		seen[u] = true
		ref, ok := owner(u)
		if !ok {
			break
		}
		var next *unstructured.Unstructured
		if x != nil {
			if next = x.byUID[ref.uid]; next == nil || ref.uid == "" {
				next = x.byName[objectKey{groupOf(ref.APIVersion), ref.Kind, u.GetNamespace(), ref.Name}]
			}
		}
		if next == nil {
			return Ref{APIVersion: ref.APIVersion, Kind: ref.Kind, Namespace: u.GetNamespace(), Name: ref.Name}
		}
		if seen[next] {
			break
		}
		u = next
	}
	return RefOf(u)
}

type ownerRef struct {
	Ref
	uid string
}

// owner is u's controller reference, else its first owner reference,
// read as it is: a reference without a kind or name is none.
func owner(u *unstructured.Unstructured) (ownerRef, bool) {
	md, _ := u.Object["metadata"].(map[string]any)
	refs, _ := md["ownerReferences"].([]any)
	var first *ownerRef
	for _, r := range refs {
		m, _ := r.(map[string]any)
		var o ownerRef
		o.APIVersion, _ = m["apiVersion"].(string)
		o.Kind, _ = m["kind"].(string)
		o.Name, _ = m["name"].(string)
		o.uid, _ = m["uid"].(string)
		if o.Kind == "" || o.Name == "" {
			continue
		}
		if controller, _ := m["controller"].(bool); controller {
			return o, true
		}
		if first == nil {
			first = &o
		}
	}
	if first == nil {
		return ownerRef{}, false
	}
	return *first, true
}
