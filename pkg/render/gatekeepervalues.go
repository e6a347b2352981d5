package render

// Gatekeeper's install values: the webhook rules and match conditions
// accelc's policies need.

import (
	"fmt"
	"slices"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/accelc/accelc/pkg/compile"
	"github.com/accelc/accelc/policies"
)

// GatekeeperHelmValues are the values of Gatekeeper's Helm chart
// (charts/gatekeeper, v3.23) accelc sets; Helm merges them over the
// chart's own. Each key is the chart's.
type GatekeeperHelmValues struct {
	// AuditInterval is the seconds between audits (--audit-interval).
	AuditInterval int `json:"auditInterval"`
	// AuditMatchKindOnly: the audit lists only the kinds a constraint
	// matches (--audit-match-kind-only), not every object of the cluster.
	AuditMatchKindOnly bool `json:"auditMatchKindOnly"`
	// ValidatingWebhookCustomRules replace the validating webhook's rules
	// (every resource, by default) with these.
	ValidatingWebhookCustomRules []admissionregistrationv1.RuleWithOperations `json:"validatingWebhookCustomRules"`
	// ValidatingWebhookFailurePolicy is what the API server does when
	// Gatekeeper does not answer: the chart's Ignore admits the request
	// unjudged, so a Gatekeeper restarting, overloaded or unreachable
	// would let every pod through. accelc installs Fail: the webhook
	// receives only the kinds accelc judges in the namespaces it
	// governs, so what waits for Gatekeeper to come back is the work
	// it must judge, never the cluster's own components.
	ValidatingWebhookFailurePolicy admissionregistrationv1.FailurePolicyType `json:"validatingWebhookFailurePolicy"`
	// ValidatingWebhookCheckIgnoreFailurePolicy is the failure policy of
	// the chart's second validating webhook, check-ignore-label: it
	// refuses the label admission.gatekeeper.sh/ignore on a namespace
	// Gatekeeper does not exempt (--exempt-namespace). Every accelc
	// policy, like Gatekeeper's webhooks, skips a namespace so labelled,
	// so that webhook is what keeps a team from exempting its own
	// namespace; with Ignore, a team that labels its namespace while
	// Gatekeeper does not answer is governed no more. Fail is the
	// chart's default; accelc writes it so that its values say what its
	// policies rely on (accelc status says where the cluster differs).
	ValidatingWebhookCheckIgnoreFailurePolicy admissionregistrationv1.FailurePolicyType `json:"validatingWebhookCheckIgnoreFailurePolicy"`
	// ValidatingWebhookMatchConditions: a request matched by the rules is
	// sent only where every condition holds.
	ValidatingWebhookMatchConditions []admissionregistrationv1.MatchCondition `json:"validatingWebhookMatchConditions,omitempty"`
	// ValidatingWebhookExemptNamespacesLabels are, by label, the values
	// whose namespaces the webhook skips (NotIn), beside Gatekeeper's own.
	ValidatingWebhookExemptNamespacesLabels map[string][]string `json:"validatingWebhookExemptNamespacesLabels,omitempty"`
	// MutatingWebhookCustomRules and MutatingWebhookExemptNamespacesLabels
	// are the mutating webhook's.
	MutatingWebhookCustomRules            []admissionregistrationv1.RuleWithOperations `json:"mutatingWebhookCustomRules,omitempty"`
	MutatingWebhookExemptNamespacesLabels map[string][]string                          `json:"mutatingWebhookExemptNamespacesLabels,omitempty"`
	// MutatingWebhookMatchConditions: a request the mutating webhook's
	// rules match is sent only where every condition holds.
	MutatingWebhookMatchConditions []admissionregistrationv1.MatchCondition `json:"mutatingWebhookMatchConditions,omitempty"`
	// MutatingWebhookObjectSelector: a request the mutating webhook's
	// rules match is sent only where the object's labels meet it.
	MutatingWebhookObjectSelector *metav1.LabelSelector `json:"mutatingWebhookObjectSelector,omitempty"`
	// DisableMutation: no mutator, so no mutating webhook at all.
	DisableMutation bool `json:"disableMutation,omitempty"`
}

// GatekeeperAuditInterval is the fewest seconds between Gatekeeper's
// audits accelc installs, the chart's default; gatekeeperAuditInterval
// lengthens it for a large cluster, to at most GatekeeperAuditIntervalMax.
const (
	GatekeeperAuditInterval    = 60
	GatekeeperAuditIntervalMax = 600
)

// gatekeeperAuditInterval sizes the audit for the devices the teams'
// quotas hold, D. A sweep lists and judges every object of the kinds the
// constraint matches, in a full cluster about a pod per device, at about
// 2 ms of Gatekeeper's CPU each (measured under BenchmarkCluster's storm,
// where at a sweep a minute the audit was half of Gatekeeper's CPU): D/10
// seconds between sweeps keeps the audit near 2% of a core. The admission
// webhook, not the audit, keeps objects out; the audit reports what was
// there before (a pod made before its namespace denied, an object a new
// policy refuses), so a large cluster waits longer for that report: at
// most GatekeeperAuditIntervalMax. In whole minutes, at least the chart's
// default.
func gatekeeperAuditInterval(m *compile.Model) int {
	seconds := (quotaDevices(m) + 9) / 10
	minutes := (seconds + 59) / 60
	return min(max(minutes*60, GatekeeperAuditInterval), GatekeeperAuditIntervalMax)
}

// gatekeeperGroups are the API groups of Gatekeeper's own objects that its
// validating webhook checks (a template's Rego compiles, a constraint's
// parameters fit its schema, a mutator's location parses): they keep
// passing through it.
var gatekeeperGroups = []string{"config.gatekeeper.sh", "constraints.gatekeeper.sh", "expansion.gatekeeper.sh", "externaldata.gatekeeper.sh", "mutations.gatekeeper.sh", "templates.gatekeeper.sh"}

// kindResources are the resources of the kinds accelc's constraints and
// mutators match that are not WorkloadKinds.
var kindResources = map[[2]string]string{
	{"", "Pod"}:                                  "pods",
	{"resource.k8s.io", "ResourceClaim"}:         "resourceclaims",
	{"resource.k8s.io", "ResourceClaimTemplate"}: "resourceclaimtemplates",
}

// kindResource is the resource of a kind accelc matches.
func kindResource(group, kind string) (string, error) {
	if r, ok := kindResources[[2]string{group, kind}]; ok {
		return r, nil
	}
	if w, ok := WorkloadKindOf(group, kind); ok {
		return w.Resource, nil
	}
	return "", fmt.Errorf("render: %s/%s is matched by accelc's policies, but no resource is known for it: add it to WorkloadKinds or kindResources so Gatekeeper's webhook receives it", group, kind)
}

// GatekeeperInstallValues are the Helm values Gatekeeper is installed
// with for accelc (docs/scale.md): its webhooks receive only what accelc
// judges and mutates, and its audit lists only those kinds, once a
// minute. Without them every write to the cluster (Kueue's Workloads, Events,
// node Leases, every status patch) would be a webhook call, and the audit
// would list every object of every kind.
//
// The validating webhook's rules are the kinds the admission constraint
// matches (policies.AdmissionKinds, which the constraints' match is
// rendered from), CREATE and UPDATE, with pods' ephemeralcontainers
// subresource (an UPDATE through it adds a container), and Gatekeeper's
// own objects. Two matchConditions skip UPDATEs no policy can refuse:
// Kueue's manager's to a pod (lifting its admission gate with its
// flavour's node selector and tolerations, its finalizer and labels), and
// any UPDATE that changes none of what the policies read (spec, labels,
// annotations, owner references): a finalizer removed, a field manager
// written. The mutating webhook's rules are the kinds accelc's mutators
// match once every namespace denies (so a rollout's stages do not change
// Gatekeeper's installation), on CREATE only: on an UPDATE of a running
// pod that lacks what they add — one made before its namespace moved to
// deny — they would change its spec, which a pod's UPDATE may not, and
// the API server would refuse its controllers' updates (a finalizer
// removed), so its Job would never complete; Gatekeeper mutates the pods
// it expands from workloads itself. (A cluster with no mutator at all
// gets no mutating webhook.) On Kubernetes 1.36 the mutating webhook is
// sent no pod (an object selector no object meets, where pods are all its
// rules match; a matchCondition otherwise): the API server gives a new pod
// what the mutators would (accelc-pod-profile, podProfilePolicy), and
// Gatekeeper keeps its mutators for the pods it expands from workloads;
// a pod's creation makes one webhook call, Gatekeeper's validation. Both
// webhooks skip the namespaces the cluster excludes by name (a glob is
// left to the constraint's match).
func GatekeeperInstallValues(m *compile.Model) (GatekeeperHelmValues, error) {
	v := GatekeeperHelmValues{AuditInterval: gatekeeperAuditInterval(m), AuditMatchKindOnly: true, ValidatingWebhookFailurePolicy: admissionregistrationv1.Fail, ValidatingWebhookCheckIgnoreFailurePolicy: admissionregistrationv1.Fail}
	var err error
	if v.ValidatingWebhookCustomRules, err = validatingRules(); err != nil {
		return v, err
	}
	if v.MutatingWebhookCustomRules, err = mutatingRules(m.Enforced()); err != nil {
		return v, err
	}
	// No mutator even at deny: the chart's default rules would send it
	// every write, for nothing.
	v.DisableMutation = len(v.MutatingWebhookCustomRules) == 0
	if !v.DisableMutation && m.Cluster.AdmissionPolicies() {
		if onlyPods(v.MutatingWebhookCustomRules) {
			// Pods are all the rules match, and none is to be sent: a
			// selector no object meets keeps the webhook (and with it
			// the mutation system Gatekeeper expands workloads with)
			// at the price of a label lookup. A match condition would
			// convert each new pod for CEL, twice (the chain runs again
			// after Kueue's webhook changes it); rules left empty would
			// be the chart's own, every resource.
			v.MutatingWebhookObjectSelector = NoObjectSelector()
		} else {
			v.MutatingWebhookMatchConditions = []admissionregistrationv1.MatchCondition{{
				Name:       "pods-mutated-by-" + PodProfilePolicyName,
				Expression: fmt.Sprintf(`!(request.resource.resource == "pods" && %s == "")`, requestGroup),
			}}
		}
	}
	v.ValidatingWebhookMatchConditions = validatingMatchConditions(m)
	if m.Cluster.AdmissionPolicies() {
		// The pods the API server judges itself (podAdmissionPolicy).
		v.ValidatingWebhookMatchConditions = append(v.ValidatingWebhookMatchConditions, admissionregistrationv1.MatchCondition{
			Name:       "pods-judged-by-" + PodAdmissionPolicyName,
			Expression: "!(" + judgedInAPIServer(m) + ")",
		})
	}
	if exempt, _ := SplitExcluded(m.Cluster.ExcludedNamespaces); len(exempt) > 0 {
		exempt = slices.Sorted(slices.Values(exempt))
		v.ValidatingWebhookExemptNamespacesLabels = map[string][]string{corev1.LabelMetadataName: exempt}
		v.MutatingWebhookExemptNamespacesLabels = map[string][]string{corev1.LabelMetadataName: slices.Clone(exempt)}
	}
	return v, nil
}

// validatingRules are the validating webhook's rules: one per API group
// of policies.AdmissionKinds, then Gatekeeper's own groups.
func validatingRules() ([]admissionregistrationv1.RuleWithOperations, error) {
	var groups []string
	resources := map[string][]string{}
	for _, k := range policies.AdmissionKinds {
		for _, g := range k.APIGroups {
			for _, kind := range k.Kinds {
				r, err := kindResource(g, kind)
				if err != nil {
					return nil, err
				}
				if _, ok := resources[g]; !ok {
					groups = append(groups, g)
				}
				if !slices.Contains(resources[g], r) {
					resources[g] = append(resources[g], r)
				}
				if r == "pods" {
					// An ephemeral container is added through a subresource.
					resources[g] = append(resources[g], "pods/ephemeralcontainers")
				}
			}
		}
	}
	slices.Sort(groups)
	ops := []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update}
	var out []admissionregistrationv1.RuleWithOperations
	for _, g := range groups {
		slices.Sort(resources[g])
		out = append(out, admissionregistrationv1.RuleWithOperations{Operations: ops, Rule: admissionregistrationv1.Rule{
			APIGroups: []string{g}, APIVersions: []string{"*"}, Resources: resources[g], Scope: ptr(admissionregistrationv1.NamespacedScope),
		}})
	}
	out = append(out, admissionregistrationv1.RuleWithOperations{Operations: ops, Rule: admissionregistrationv1.Rule{
		APIGroups: gatekeeperGroups, APIVersions: []string{"*"}, Resources: []string{"*"}, Scope: ptr(admissionregistrationv1.AllScopes),
	}})
	return out, nil
}

// noObjectLabel is the label key of NoObjectSelector.
const noObjectLabel = "accelc.io/no-object"

// NoObjectSelector is a label selector no object meets: one label both
// present and absent.
func NoObjectSelector() *metav1.LabelSelector {
	return &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
		{Key: noObjectLabel, Operator: metav1.LabelSelectorOpExists},
		{Key: noObjectLabel, Operator: metav1.LabelSelectorOpDoesNotExist},
	}}
}

// onlyPods says whether every rule matches the core group's pods and
// nothing else.
func onlyPods(rules []admissionregistrationv1.RuleWithOperations) bool {
	return !slices.ContainsFunc(rules, func(r admissionregistrationv1.RuleWithOperations) bool {
		return !slices.Equal(r.APIGroups, []string{""}) || slices.ContainsFunc(r.Resources, func(res string) bool { return res != "pods" })
	})
}

// mutatingRules are the mutating webhook's rules: CREATE of the kinds
// the model's Gatekeeper mutators match, by API group.
func mutatingRules(m *compile.Model) ([]admissionregistrationv1.RuleWithOperations, error) {
	var groups []string
	resources := map[string][]string{}
	for _, o := range mutationObjects(m) {
		mu, ok := o.Body.(*mutator)
		if !ok {
			continue
		}
		for _, k := range mu.Spec.Match.Kinds {
			for _, g := range k.APIGroups {
				for _, kind := range k.Kinds {
					r, err := kindResource(g, kind)
					if err != nil {
						return nil, err
					}
					if _, ok := resources[g]; !ok {
						groups = append(groups, g)
					}
					if !slices.Contains(resources[g], r) {
						resources[g] = append(resources[g], r)
					}
				}
			}
		}
	}
	slices.Sort(groups)
	var out []admissionregistrationv1.RuleWithOperations
	for _, g := range groups {
		slices.Sort(resources[g])
		out = append(out, admissionregistrationv1.RuleWithOperations{
			Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
			Rule: admissionregistrationv1.Rule{
				APIGroups: []string{g}, APIVersions: []string{"*"}, Resources: resources[g], Scope: ptr(admissionregistrationv1.NamespacedScope),
			},
		})
	}
	return out, nil
}

// The request's API group and subresource, as matchConditions read them:
// the admission request leaves out an empty one (the core group, no
// subresource), and reading a field it lacks is an error, which fails the
// request.
const (
	requestGroup       = `(has(request.resource.group) ? request.resource.group : "")`
	requestSubResource = `(has(request.subResource) ? request.subResource : "")`
)

// validatingMatchConditions are the CEL conditions a request the
// validating webhook's rules match must meet to be sent to Gatekeeper
// (docs/policies.md says why each skip is safe).
func validatingMatchConditions(m *compile.Model) []admissionregistrationv1.MatchCondition {
	var out []admissionregistrationv1.MatchCondition
	if managers := slices.Sorted(slices.Values(m.Cluster.KueueIdentities.Manager)); len(managers) > 0 {
		// Kueue admitting (or stopping) a pod or a workload: it lifts a
		// pod's gate, unsuspends a Job, writes its flavor's node labels
		// and tolerations into the pod or the template. Each pod is judged
		// when it is made, whoever wrote its template. Not a claim or
		// Gatekeeper's own objects: Kueue has no business there, so its
		// identity buys nothing past the pods and workloads it manages.
		out = append(out, admissionregistrationv1.MatchCondition{
			Name: "not-kueue-admitting",
			Expression: fmt.Sprintf(`!(request.operation == "UPDATE" && %s == "" && !(%s == "resource.k8s.io" || %s.endsWith(".gatekeeper.sh")) && request.userInfo.username in %s)`,
				requestSubResource, requestGroup, requestGroup, celStrings(managers)),
		})
	}
	same := func(field, empty string) string {
		return fmt.Sprintf("(has(object.metadata.%[1]s) ? object.metadata.%[1]s : %[2]s) == (has(oldObject.metadata.%[1]s) ? oldObject.metadata.%[1]s : %[2]s)", field, empty)
	}
	out = append(out, admissionregistrationv1.MatchCondition{
		Name: "changes-what-policies-read",
		Expression: fmt.Sprintf(`!(request.operation == "UPDATE" && %s == "" && has(object.spec) && has(oldObject.spec) && object.spec == oldObject.spec && %s && %s && %s)`,
			requestSubResource, same("labels", "{}"), same("annotations", "{}"), same("ownerReferences", "[]")),
	})
	return out
}
