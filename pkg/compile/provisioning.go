package compile

// Provisioning: Kueue's ProvisioningRequests for types that scale, the
// flavors provisioned for a queue, and their checks and notes.

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Provisioning is cluster.autoscaling.provisioning: the ProvisioningRequest
// Kueue makes, before it admits a workload of a provisioned profile, for
// the workload's pods (Kueue's ProvisioningRequestConfig).
type Provisioning struct {
	// Class is the ProvisioningRequest's provisioningClassName.
	Class string `json:"class"`
	// Parameters are passed to the class.
	Parameters map[string]string `json:"parameters,omitempty"`
	// Retry is Kueue's retryStrategy; nil for Kueue's defaults.
	Retry *ProvisioningRetry `json:"retry,omitempty"`
	// ManagedResources: only pod sets requesting one of them go in the
	// request; empty: every pod set.
	ManagedResources []string `json:"managedResources,omitempty"`
}

// ProvisioningRetry is how Kueue retries a failed ProvisioningRequest.
type ProvisioningRetry struct {
	BackoffLimitCount  *int32 `json:"backoffLimitCount,omitempty"`
	BackoffBaseSeconds *int32 `json:"backoffBaseSeconds,omitempty"`
	BackoffMaxSeconds  *int32 `json:"backoffMaxSeconds,omitempty"`
}

// The provisioning classes cluster-autoscaler implements.
const (
	CheckCapacityClass = "check-capacity.autoscaling.x-k8s.io"
	AtomicScaleUpClass = "best-effort-atomic-scale-up.autoscaling.x-k8s.io"
)

// ScalePoolPrefix starts the name of every Karpenter NodePool accelc
// renders (accelc-<pool>).
const ScalePoolPrefix = "accelc-"

// ScalePoolNames are the NodePools (accelc-<pool>) that launch nodes of
// an accelerator type, sorted; nil for none.
func (m *Model) ScalePoolNames(class string) []string {
	a := m.Cluster.Autoscaling
	if a == nil || a.Karpenter == nil {
		return nil
	}
	var out []string
	for _, name := range slices.Sorted(maps.Keys(a.Karpenter.Pools)) {
		if a.Karpenter.Pools[name].AcceleratorType == class {
			out = append(out, ScalePoolPrefix+name)
		}
	}
	return out
}

// ProvisionedFlavors are the flavors of a team's queue for a profile
// (QueueFlavors) on which Kueue waits for a ProvisioningRequest: those
// whose type has a NodePool, in the queue's order; all says every
// flavor of the queue is one (then the check runs for every workload).
// Nil unless the profile sets provisioning and the cluster configures it,
// and on a MultiKueue manager for a queue it dispatches: the workers'
// own queues ask for capacity where the nodes are.
func (m *Model) ProvisionedFlavors(t *Team, p *Profile) (flavors []string, all bool) {
	if !p.Provisioning || m.Cluster.Autoscaling == nil || m.Cluster.Autoscaling.Provisioning == nil || len(m.DispatchWorkers(t, p)) > 0 {
		return nil, false
	}
	ids := m.QueueFlavors(t, p)
	for _, id := range ids {
		if len(m.ScalePoolNames(m.KeyType(id))) > 0 {
			flavors = append(flavors, id)
		}
	}
	return flavors, len(flavors) > 0 && len(flavors) == len(ids)
}

// Provisioned reports whether some ClusterQueue waits for a
// ProvisioningRequest: then the ProvisioningRequestConfig and its
// AdmissionCheck are rendered.
func (m *Model) Provisioned() bool {
	for i := range m.Profiles {
		p := &m.Profiles[i]
		for _, t := range m.QueueTeams(p) {
			if f, _ := m.ProvisionedFlavors(t, p); len(f) > 0 {
				return true
			}
		}
	}
	return false
}

// checkProvisioning reports a provisioned profile Kueue does not queue
// (nothing would make the request), one without
// cluster.autoscaling.provisioning, and one none of whose queues' flavors
// is of a type a NodePool launches (the request would ask for capacity
// nothing adds). A MultiKueue manager's dispatched queues make no request
// (their workers' do), so a profile only dispatched is left alone: a
// fleet's CUE may share it with the workers.
func checkProvisioning(m *Model) []Diagnostic {
	var out []Diagnostic
	var conf *Provisioning
	if a := m.Cluster.Autoscaling; a != nil {
		conf = a.Provisioning
	}
	for i := range m.Profiles {
		p := &m.Profiles[i]
		if !p.Provisioning {
			continue
		}
		at := p.path.Key("provisioning")
		if why := m.notQueued(p); why != "" {
			out = append(out, Diagnostic{Path: at, Msg: fmt.Sprintf(
				"profile %s is not queued by Kueue (%s): Kueue makes ProvisioningRequests only for the workloads of its ClusterQueues; queue the profile, or drop provisioning", p.Name, why)})
			continue
		}
		var local []*Team
		for _, t := range m.QueueTeams(p) {
			if len(m.DispatchWorkers(t, p)) == 0 {
				local = append(local, t)
			}
		}
		if len(local) == 0 {
			continue
		}
		if conf == nil {
			out = append(out, Diagnostic{Path: at, Msg: fmt.Sprintf(
				"profile %s waits for a ProvisioningRequest, but cluster.autoscaling.provisioning names no class: set cluster.autoscaling.provisioning.class (%s or %s), or drop provisioning", p.Name, CheckCapacityClass, AtomicScaleUpClass)})
			continue
		}
		types := m.QueueTypes(p, local...)
		grows := false
		for _, t := range local {
			if f, _ := m.ProvisionedFlavors(t, p); len(f) > 0 {
				grows = true
			}
		}
		if !grows {
			first := "the type"
			if len(types) > 0 {
				first = types[0]
			}
			out = append(out, Diagnostic{Path: at, Msg: fmt.Sprintf(
				"no NodePool launches %s, the types of profile %s's queues: a ProvisioningRequest would ask for capacity nothing adds; add a pool under cluster.autoscaling.karpenter.pools with acceleratorType %q, or drop provisioning",
				orNone(types), p.Name, first)})
		}
	}
	return out
}

// notQueued says why Kueue does not queue a profile's workloads; "" when
// it does.
func (m *Model) notQueued(p *Profile) string {
	switch {
	case m.Cluster.Quotas != "kueue":
		return fmt.Sprintf("cluster.quotas is %q", m.Cluster.Quotas)
	case !m.UsesKueue():
		return "no team has a quota"
	case !p.Enabled:
		return "it is disabled"
	case p.DRA != nil && !m.KueueCountsClaims(p):
		return "Kueue does not count its resource claims, so it schedules by node"
	case len(m.QueueTeams(p)) == 0:
		return "no team with namespaces may use it"
	}
	return ""
}

// ProvisioningNotes say, per team and provisioned profile, what the
// check does to the team's workloads: which of its flavors wait for the
// autoscaler's ProvisioningRequest and which NodePools the capacity
// comes from, or that none does. vet --explain prints them.
func (m *Model) ProvisioningNotes() []Diagnostic {
	a := m.Cluster.Autoscaling
	if a == nil || a.Provisioning == nil {
		return nil
	}
	class := a.Provisioning.Class
	short := strings.TrimSuffix(class, ".autoscaling.x-k8s.io")
	var out []Diagnostic
	for i := range m.Profiles {
		p := &m.Profiles[i]
		if !p.Provisioning {
			continue
		}
		for _, t := range m.QueueTeams(p) {
			if workers := m.DispatchWorkers(t, p); len(workers) > 0 {
				out = append(out, Diagnostic{Severity: Note, Path: p.path.Key("provisioning"), Msg: fmt.Sprintf(
					"%s's %s jobs are dispatched by MultiKueue to %s: the workers' queues, where the nodes are, make the ProvisioningRequest; this manager's makes none", t.Name, p.Name, strings.Join(workers, ", "))})
				continue
			}
			flavors, all := m.ProvisionedFlavors(t, p)
			if len(flavors) == 0 {
				out = append(out, Diagnostic{Severity: Note, Path: p.path.Key("provisioning"), Msg: fmt.Sprintf(
					"%s's %s jobs are admitted without a ProvisioningRequest: no NodePool launches its queue's %s", t.Name, p.Name, orNone(m.keyNames(m.QueueFlavors(t, p))))})
				continue
			}
			var pools []string
			for _, id := range flavors {
				for _, np := range m.ScalePoolNames(m.KeyType(id)) {
					if !slices.Contains(pools, np) {
						pools = append(pools, np)
					}
				}
			}
			which := strings.Join(m.keyNames(flavors), " and ")
			msg := fmt.Sprintf("%s's %s jobs wait, before Kueue admits them on %s, for a %s ProvisioningRequest for their pods: %s", t.Name, p.Name, which, short, provisioningEffect(class))
			if !all {
				var rest []string
				for _, id := range m.QueueFlavors(t, p) {
					if !slices.Contains(flavors, id) {
						rest = append(rest, id)
					}
				}
				msg += fmt.Sprintf("; on %s they are admitted without one", strings.Join(m.keyNames(rest), " and "))
			}
			msg += fmt.Sprintf(". Capacity from NodePool %s, which Karpenter grows for pending pods, not for ProvisioningRequests: cluster-autoscaler (--enable-provisioning-requests) or the provider's must answer them, else Kueue asks again up to %d times, then deactivates the job",
				strings.Join(pools, ", "), a.Provisioning.retries())
			out = append(out, Diagnostic{Severity: Note, Path: p.path.Key("provisioning"), Msg: msg})
		}
	}
	if !slices.ContainsFunc(m.Profiles, func(p Profile) bool { return p.Provisioning }) {
		out = append(out, Diagnostic{Severity: Note, Path: m.root().Key("cluster").Key("autoscaling").Key("provisioning"), Msg: fmt.Sprintf(
			"no profile sets provisioning: true, so no team's jobs wait for a %s ProvisioningRequest and nothing of it is rendered; set it on the profiles whose jobs should wait for capacity", short)})
	}
	return out
}

// provisioningEffect says what a class's request does.
func provisioningEffect(class string) string {
	switch class {
	case CheckCapacityClass:
		return "it succeeds once they fit on the nodes there are, and books them the room; it launches no node"
	case AtomicScaleUpClass:
		return "the autoscaler adds nodes for all of them or for none"
	}
	return "what it does is the class's autoscaler's"
}

// retries is how many times Kueue asks again after a failed request
// (its default, 3, unless retry says).
func (p *Provisioning) retries() int32 {
	if p.Retry != nil && p.Retry.BackoffLimitCount != nil {
		return *p.Retry.BackoffLimitCount
	}
	return 3
}

// keyNames are quota keys' devices for people (keyName), in order.
func (m *Model) keyNames(ids []string) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = m.keyName(id)
	}
	return out
}
