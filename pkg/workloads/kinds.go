package workloads

// The workload kinds accelc reads, and their order.

import (
	"slices"
	"strings"

	"github.com/accelc/accelc/pkg/render"
)

// Kind is a kind a Set holds.
type Kind struct {
	Group string
	// Versions are the versions accelc reads, in its order of preference:
	// ReadLive lists the first the server serves.
	Versions []string
	Kind     string
	Resource string
}

// kinds are the kinds a Set holds, in its order: pods, every kind
// accelc checks as the pods it makes (render.WorkloadKinds, which
// Gatekeeper's audit reviews through expansion, or itself as a
// Notebook), and Dynamic Resource Allocation's claims and claim
// templates, which the claims policy judges and pods name. Claims are
// read in DRA's beta versions too, on clusters from before v1 (1.34).
var kinds = func() []Kind {
	out := []Kind{{Group: "", Versions: []string{"v1"}, Kind: "Pod", Resource: "pods"}}
	for _, w := range render.WorkloadKinds {
		out = append(out, Kind{Group: w.Group, Versions: slices.Clone(w.Versions), Kind: w.Kind, Resource: w.Resource})
	}
	dra := []string{"v1", "v1beta2", "v1beta1"}
	return append(out,
		Kind{Group: "resource.k8s.io", Versions: dra, Kind: "ResourceClaim", Resource: "resourceclaims"},
		Kind{Group: "resource.k8s.io", Versions: dra, Kind: "ResourceClaimTemplate", Resource: "resourceclaimtemplates"},
	)
}()

// kueueKind is Kueue's Workload, which ReadLive reads beside kinds into
// a Set's KueueWorkloads (not its Objects: no policy judges it), in the
// version render writes Kueue's objects in, else v1beta1.
var kueueKind = Kind{Group: "kueue.x-k8s.io", Versions: []string{"v1beta2", "v1beta1"}, Kind: "Workload", Resource: "workloads"}

// liveKinds are what ReadLive lists: kinds, then kueueKind.
var liveKinds = append(slices.Clip(kinds), kueueKind)

func (k Kind) isKueue() bool { return k.Group == kueueKind.Group && k.Kind == kueueKind.Kind }

// objectKind is a kind by group and name.
type objectKind struct{ group, kind string }

// Kinds returns the kinds a Set holds, in its order.
func Kinds() []Kind {
	out := make([]Kind, len(kinds))
	for i, k := range kinds {
		out[i] = k
		out[i].Versions = slices.Clone(k.Versions)
	}
	return out
}

// rank is the place of a group and kind in kinds; len(kinds) for a kind
// a Set does not hold.
func rank(group, kind string) int {
	for i, k := range kinds {
		if k.Kind == kind && k.Group == group {
			return i
		}
	}
	return len(kinds)
}

// groupOf is the group of an apiVersion: "" for "v1", "apps" for "apps/v1".
func groupOf(apiVersion string) string {
	group, _, ok := strings.Cut(apiVersion, "/")
	if !ok {
		return ""
	}
	return group
}

// String names the kind as kubectl does: "pods", "replicasets.apps".
func (k Kind) String() string {
	if k.Group == "" {
		return k.Resource
	}
	return k.Resource + "." + k.Group
}
