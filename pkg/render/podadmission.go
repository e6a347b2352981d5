package render

// The ValidatingAdmissionPolicy that judges, on Kubernetes 1.36, the
// plain GPU pods accelc's own mutations made, in place of Gatekeeper's
// validating webhook: the same rules as the Rego, for the pods whose
// shape needs none of the Rego's synced data but the HardwareProfile
// (which the policy reads live, as its parameter), so that the common
// pod costs no call to Gatekeeper.

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/accelc/accelc/pkg/compile"
	"github.com/accelc/accelc/policies"
)

// PodAdmissionPolicyName names the ValidatingAdmissionPolicy that judges
// the pods Gatekeeper's validating webhook is not sent (one binding per
// profile, named PodAdmissionPolicyName-<profile>);
// UnknownProfilePolicyName the one that refuses such a pod naming a
// profile the tree no longer has.
const (
	PodAdmissionPolicyName   = "accelc-pod-admission"
	UnknownProfilePolicyName = "accelc-pod-admission-unknown-profile"
)

// PodRulesCondition names the match condition of PodAdmissionPolicyName
// that holds where a pod breaks one of its rules (ruleCondition): the
// policy's one validation is then "false", and its message says which.
// A pod that breaks none is not matched, and the API server evaluates
// nothing more of the policy for it.
const PodRulesCondition = "breaks-a-rule"

// PodJudgedCondition names the match condition of PodAdmissionPolicyName
// that holds where the policy judges a pod (judgedInAPIServer), the one
// Gatekeeper's values skip the pod by.
const PodJudgedCondition = "judged-here-not-by-gatekeeper"

// kueueGate is the scheduling gate Kueue's pod webhook puts on a pod it
// queues.
const kueueGate = "kueue.x-k8s.io/admission"

// judgedInAPIServer is the CEL condition (over an admission request:
// request, object) a pod's creation meets when the API server judges it
// (podAdmissionPolicy) and Gatekeeper's validating webhook is not sent
// it. It reads only the pod, and the names of the cluster's profiles
// and priority classes, so that Gatekeeper's installation values (which
// a platform team applies rarely, not with every tree) can hold it:
//
//   - a CREATE of a pod that names one of the profiles by accelc's label
//     (and by ODH's annotation, if at all, the same one), and carries
//     the team annotation accelc's mutations write in the namespaces
//     that deny: everywhere else (a namespace at warn or dryrun, which
//     gets no mutation) a pod meets it only if written so by hand, and
//     the policy judges it as the Rego would, or refuses it;
//   - that asks for an accelerator by a resource name of a known vendor,
//     every extended resource a whole number;
//   - its Kueue priority label, if any, one of the cluster's classes (the
//     Rego reads any synced class; the policy knows accelc's);
//   - a resolved spec.priority (the Priority plugin sets it on every
//     creation), no nodeName (which the Rego checks against the synced
//     Node), no ephemeral containers, no Dynamic Resource Allocation
//     claim, and none of what could reach a device outside the device
//     plugin: a host path, a host namespace, a privileged container, an
//     added capability, a procMount, a device visibility variable, a
//     CDI annotation.
//
// What is stale in a condition installed from an older tree is safe: a
// profile or class it does not list sends the pod to Gatekeeper; one the
// tree no longer has is refused by UnknownProfilePolicyName (a profile)
// or the policy (a class), as the Rego refuses what is not synced.
func judgedInAPIServer(m *compile.Model) string {
	label := m.Cluster.LabelPrefix + "/profile"
	var profiles []string
	for i := range m.Profiles {
		profiles = append(profiles, m.Profiles[i].Name)
	}
	slices.Sort(profiles)
	classes := slices.Sorted(maps.Keys(m.Cluster.PriorityClasses))
	labels, annotations := "object.metadata.labels", "object.metadata.annotations"
	all := "(object.spec.containers + (has(object.spec.initContainers) ? object.spec.initContainers : []))"
	whole := func(section string) string {
		return fmt.Sprintf(`(!has(c.resources.%[1]s) || c.resources.%[1]s.all(k, !k.contains("/") || string(c.resources.%[1]s[k]).matches("^[0-9]+$")))`, section)
	}
	asks := func(section string) string {
		return fmt.Sprintf(`(has(c.resources.%[1]s) && c.resources.%[1]s.exists(k, %[2]s.exists(p, k.startsWith(p))))`, section, celStrings(policies.BaseResourcePrefixes))
	}
	parts := []string{
		fmt.Sprintf(`request.operation == "CREATE" && %s == "" && request.resource.resource == "pods" && %s == ""`, requestGroup, requestSubResource),
		fmt.Sprintf(`has(%s) && has(%s)`, labels, annotations),
		fmt.Sprintf(`%[2]q in %[1]s && %[1]s[%[2]q] in %[3]s`, labels, label, celStrings(profiles)),
		fmt.Sprintf(`%q in %s`, m.Cluster.LabelPrefix+"/team", annotations),
		fmt.Sprintf(`(!(%[2]q in %[1]s) || %[1]s[%[2]q] == %[3]s[%[4]q])`, annotations, ProfileAnnotation, labels, label),
		fmt.Sprintf(`(!(%[2]q in %[1]s) || %[1]s[%[2]q] in %[3]s)`, labels, WorkloadPriorityLabel, celStrings(classes)),
		fmt.Sprintf(`!%s.exists(k, k.contains("cdi.k8s.io/") || k.startsWith("io.kubernetes.cri-o.Devices"))`, annotations),
		`has(object.spec.priority) && !has(object.spec.nodeName) && !has(object.spec.ephemeralContainers)`,
		`(!has(object.spec.resourceClaims) || size(object.spec.resourceClaims) == 0)`,
		`!(has(object.spec.hostPID) && object.spec.hostPID) && !(has(object.spec.hostIPC) && object.spec.hostIPC) && !(has(object.spec.hostNetwork) && object.spec.hostNetwork)`,
		`(!has(object.spec.volumes) || object.spec.volumes.all(v, !has(v.hostPath)))`,
		fmt.Sprintf(`%s.all(c, (!has(c.env) || c.env.all(e, !(e.name in %s))) && `+
			`(!has(c.securityContext) || (!(has(c.securityContext.privileged) && c.securityContext.privileged) && !(has(c.securityContext.capabilities) && has(c.securityContext.capabilities.add) && size(c.securityContext.capabilities.add) > 0) && (!has(c.securityContext.procMount) || c.securityContext.procMount == "Default"))) && `+
			`(!has(c.resources) || ((!has(c.resources.claims) || size(c.resources.claims) == 0) && %s && %s)))`,
			all, celStrings(policies.VisibilityEnv), whole("limits"), whole("requests")),
		fmt.Sprintf(`%s.exists(c, has(c.resources) && (%s || %s))`, all, asks("limits"), asks("requests")),
	}
	return strings.Join(parts, " &&\n")
}

// podAdmissionPolicy is the ValidatingAdmissionPolicy that judges the pods
// judgedInAPIServer sends past Gatekeeper's validating webhook, exactly
// as the admission constraint's Rego does (TestPodAdmissionPolicy checks
// the two against each other on generated pods, through a real API
// server). Its parameter is the pod's HardwareProfile, read live: one
// binding a profile, selected by the pod's profile label, names it, and a
// profile that is missing refuses the pod, as the Rego refuses one that
// is not synced. What the Rego reads from the other synced objects it
// has compiled in from the same render: the teams' NamespaceEntitlements
// (by namespace), the priority classes, the constraint's parameters.
// The one thing of a profile it cannot read live is the tolerations a
// profile that schedules through Kueue holds as JSON (CEL parses no
// JSON): the live annotation must be the rendered one, or the pod is
// refused, naming the profile.
//
// It is bound to the namespaces the policies deny (a namespace at warn
// or dryrun keeps Gatekeeper's warnings; a pod there meets
// judgedInAPIServer only if its team annotation was written by hand,
// and is admitted, as at that stage it would be), skips the excluded
// ones and those Gatekeeper's webhooks ignore, and fails closed.
func podAdmissionPolicy(m *compile.Model, params admissionParameters, objs []Object) []Object {
	if _, _, none := m.Mutating(); none {
		return nil
	}
	scope, globs := governedNamespaces(m)
	conditions := append([]admissionregistrationv1.MatchCondition{{Name: PodJudgedCondition, Expression: judgedInAPIServer(m)}}, notExcluded(globs)...)
	match := &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
		RuleWithOperations: admissionregistrationv1.RuleWithOperations{
			Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
			Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods"}},
		},
	}}}
	label := m.Cluster.LabelPrefix + "/profile"
	var profiles []string
	var hwps []*hardwareProfile
	var entitlements []*namespaceEntitlement
	for _, o := range objs {
		switch b := o.Body.(type) {
		case *hardwareProfile:
			profiles = append(profiles, b.Name)
			hwps = append(hwps, b)
		case *namespaceEntitlement:
			entitlements = append(entitlements, b)
		}
	}
	slices.Sort(profiles)
	v := podRules{m: m, params: params, hwps: hwps, entitlements: entitlements, profiles: profiles}
	variables, validations := v.variables(), v.validations()
	judged := slices.Clone(conditions)
	if rules, ok := ruleCondition(variables, validations[0].Expression); ok {
		judged = append(judged, admissionregistrationv1.MatchCondition{Name: PodRulesCondition, Expression: rules})
		validations[0].Expression = "false"
	}
	policy := &admissionregistrationv1.ValidatingAdmissionPolicy{
		TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "ValidatingAdmissionPolicy"},
		ObjectMeta: metav1.ObjectMeta{Name: PodAdmissionPolicyName, Labels: managedLabels(m.Cluster.Name)},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			ParamKind:        &admissionregistrationv1.ParamKind{APIVersion: "infrastructure.opendatahub.io/v1", Kind: "HardwareProfile"},
			MatchConstraints: match,
			MatchConditions:  judged,
			FailurePolicy:    ptr(admissionregistrationv1.Fail),
			Variables:        variables,
			Validations:      validations,
		},
	}
	out := []Object{{Dir: "policies", Body: policy}}
	for _, p := range profiles {
		sel := scope.DeepCopy()
		out = append(out, Object{Dir: "policies", Body: &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
			TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "ValidatingAdmissionPolicyBinding"},
			ObjectMeta: metav1.ObjectMeta{Name: PodAdmissionPolicyName + "-" + p, Labels: managedLabels(m.Cluster.Name)},
			Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
				PolicyName: PodAdmissionPolicyName,
				ParamRef: &admissionregistrationv1.ParamRef{
					Name: p, Namespace: m.Cluster.ProfileNamespace,
					ParameterNotFoundAction: ptr(admissionregistrationv1.DenyAction),
				},
				MatchResources: &admissionregistrationv1.MatchResources{
					NamespaceSelector: sel,
					ObjectSelector:    &metav1.LabelSelector{MatchLabels: map[string]string{label: p}},
				},
				ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
			},
		}})
	}
	// A pod naming a profile a Gatekeeper installed from an older tree
	// still lists, which this tree no longer has: refused, as the Rego
	// refuses a profile that is not synced.
	unknown := &admissionregistrationv1.ValidatingAdmissionPolicy{
		TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "ValidatingAdmissionPolicy"},
		ObjectMeta: metav1.ObjectMeta{Name: UnknownProfilePolicyName, Labels: managedLabels(m.Cluster.Name)},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			MatchConstraints: match.DeepCopy(),
			MatchConditions:  slices.Clone(conditions),
			FailurePolicy:    ptr(admissionregistrationv1.Fail),
			Validations: []admissionregistrationv1.Validation{{
				Expression: "false",
				MessageExpression: fmt.Sprintf(`"hardware profile \"" + object.metadata.labels[%q] + "\" does not exist in namespace %s: set annotation %s to one of: %s"`,
					label, m.Cluster.ProfileNamespace, ProfileAnnotation, strings.Join(profiles, ", ")),
				Reason: ptr(metav1.StatusReasonForbidden),
			}},
		},
	}
	out = append(out, Object{Dir: "policies", Body: unknown}, Object{Dir: "policies", Body: &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "ValidatingAdmissionPolicyBinding"},
		ObjectMeta: metav1.ObjectMeta{Name: UnknownProfilePolicyName, Labels: managedLabels(m.Cluster.Name)},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName: UnknownProfilePolicyName,
			MatchResources: &admissionregistrationv1.MatchResources{
				NamespaceSelector: scope.DeepCopy(),
				ObjectSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
					{Key: label, Operator: metav1.LabelSelectorOpNotIn, Values: profiles},
				}},
			},
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
		},
	}})
	return out
}

// podRules builds podAdmissionPolicy's variables and validations.
type podRules struct {
	m            *compile.Model
	params       admissionParameters
	hwps         []*hardwareProfile
	entitlements []*namespaceEntitlement
	profiles     []string
}

// celQuote is s as a CEL string literal.
func celQuote(s string) string { return strconv.Quote(s) }

// or is CEL that reads an optional field of x, or def.
func or(x, field, def string) string {
	return fmt.Sprintf("(has(%[1]s.%[2]s) ? %[1]s.%[2]s : %[3]s)", x, field, def)
}

// variables: the pod's and the profile's facts, each evaluated once.
func (r podRules) variables() []admissionregistrationv1.Variable {
	prefix := r.m.Cluster.LabelPrefix
	key := func(name string) string { return celQuote(prefix + "/" + name) }
	ann := "variables.profileAnnotations"
	vars := []admissionregistrationv1.Variable{
		{Name: "profile", Expression: fmt.Sprintf("object.metadata.labels[%q]", prefix+"/profile")},
		{Name: "profileAnnotations", Expression: "has(params.metadata.annotations) ? params.metadata.annotations : {}"},
		{Name: "enabled", Expression: fmt.Sprintf(`!("opendatahub.io/disabled" in %[1]s && %[1]s["opendatahub.io/disabled"] == "true")`, ann)},
		{Name: "retired", Expression: fmt.Sprintf("%s in %s", key(AnnotationRetired), ann)},
		{Name: "types", Expression: fmt.Sprintf(`%[2]s in %[1]s && %[1]s[%[2]s] != "" ? %[1]s[%[2]s].split(",") : []`, ann, key(AnnotationTypes))},
		{Name: "pools", Expression: fmt.Sprintf(`%[2]s in %[1]s && %[1]s[%[2]s] != "" ? %[1]s[%[2]s].split(",") : []`, ann, key(AnnotationPools))},
		{Name: "accelerators", Expression: `has(params.spec) && has(params.spec.identifiers) ? params.spec.identifiers.filter(i, has(i.resourceType) && i.resourceType == "Accelerator") : []`},
		{Name: "dra", Expression: fmt.Sprintf(`(has(params.spec) && has(params.spec.dra) && has(params.spec.dra.resourceClaimTemplateName) && params.spec.dra.resourceClaimTemplateName != "") || %s in %s`, key(AnnotationResourceClaimTemplate), ann)},
		{Name: "draTemplate", Expression: fmt.Sprintf(`has(params.spec) && has(params.spec.dra) && has(params.spec.dra.resourceClaimTemplateName) && params.spec.dra.resourceClaimTemplateName != "" ? params.spec.dra.resourceClaimTemplateName : (%[2]s in %[1]s ? %[1]s[%[2]s] : "")`, ann, key(AnnotationResourceClaimTemplate))},
		{Name: "acceleratorProfile", Expression: "size(variables.accelerators) > 0 || variables.dra"},
		{Name: "through", Expression: "variables.enabled && variables.acceleratorProfile"},
		{Name: "resource", Expression: `size(variables.accelerators) > 0 ? variables.accelerators[0].identifier : ""`},
		{Name: "minCount", Expression: countOf("minCount")},
		{Name: "maxCount", Expression: countOf("maxCount")},
	}
	vars = append(vars, r.teamVariables()...)
	containerAmount := func(c string) string {
		return fmt.Sprintf(`(has(%[1]s.resources) && has(%[1]s.resources.limits) && variables.resource in %[1]s.resources.limits ? double(int(string(%[1]s.resources.limits[variables.resource]))) : `+
			`(has(%[1]s.resources) && has(%[1]s.resources.requests) && variables.resource in %[1]s.resources.requests ? double(int(string(%[1]s.resources.requests[variables.resource]))) : 0.0))`, c)
	}
	sidecar := `has(c.restartPolicy) && c.restartPolicy == "Always"`
	nodeAffinity := "object.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
	vars = append(vars,
		admissionregistrationv1.Variable{Name: "generic", Expression: fmt.Sprintf("request.namespace in %s", celStrings(slices.Sorted(maps.Keys(r.params.GenericNamespaces))))},
		admissionregistrationv1.Variable{Name: "genericUse", Expression: "variables.generic && variables.team == null && size(variables.types) == 0 && !variables.dra"},
		admissionregistrationv1.Variable{Name: "scopeTypes", Expression: `size(variables.types) > 0 ? dyn(variables.types) : (variables.through && variables.team != null ? dyn(variables.team.types) : null)`},
		admissionregistrationv1.Variable{Name: "confiningTypes", Expression: `variables.scopeTypes == null ? [] : (variables.dra && size(variables.scopeTypes) > 0 && !("mixed" in variables.scopeTypes) ? variables.scopeTypes + ["mixed"] : variables.scopeTypes)`},
		admissionregistrationv1.Variable{Name: "nodeSelector", Expression: "has(object.spec.nodeSelector) ? object.spec.nodeSelector : {}"},
		admissionregistrationv1.Variable{Name: "preferred", Expression: "has(object.spec.affinity) && has(object.spec.affinity.nodeAffinity) && has(object.spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution) ? object.spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution.map(p, p.preference) : []"},
		admissionregistrationv1.Variable{Name: "terms", Expression: fmt.Sprintf("has(object.spec.affinity) && has(object.spec.affinity.nodeAffinity) && has(%[1]s) && has(%[1]s.nodeSelectorTerms) ? %[1]s.nodeSelectorTerms : []", nodeAffinity)},
		admissionregistrationv1.Variable{Name: "confined", Expression: confinedBy(celQuote(r.params.TypeLabel), "variables.confiningTypes")},
		admissionregistrationv1.Variable{Name: "poolConfined", Expression: confinedBy(key("pool"), "variables.pools")},
		admissionregistrationv1.Variable{Name: "initContainers", Expression: "has(object.spec.initContainers) ? object.spec.initContainers : []"},
		admissionregistrationv1.Variable{Name: "containers", Expression: "object.spec.containers + variables.initContainers"},
		admissionregistrationv1.Variable{Name: "otherAccelerator", Expression: fmt.Sprintf(`variables.containers.exists(c, has(c.resources) && `+
			`((has(c.resources.limits) && c.resources.limits.exists(k, k != variables.resource && %[1]s.exists(p, k.startsWith(p)))) || `+
			`(has(c.resources.requests) && c.resources.requests.exists(k, k != variables.resource && %[1]s.exists(p, k.startsWith(p))))))`,
			r.resourcePrefixes())},
		// The Rego's pod_amount: the larger of the app containers' sum
		// and the largest init container's, plus the sidecars'.
		admissionregistrationv1.Variable{Name: "amount", Expression: fmt.Sprintf(`[([0.0] + object.spec.containers.map(c, %[1]s)).sum(), ([0.0] + variables.initContainers.filter(c, !(%[2]s)).map(c, %[1]s)).max()].max() + `+
			`([0.0] + variables.initContainers.filter(c, %[2]s).map(c, %[1]s)).sum()`, containerAmount("c"), sidecar)},
		admissionregistrationv1.Variable{Name: "nodeTolerations", Expression: "has(params.spec) && has(params.spec.scheduling) && has(params.spec.scheduling.node) && has(params.spec.scheduling.node.tolerations)"},
		admissionregistrationv1.Variable{Name: "renderedTolerations", Expression: r.renderedTolerations()},
		admissionregistrationv1.Variable{Name: "profileTolerations", Expression: profileTolerations(r.m.Cluster.LabelPrefix + "/" + AnnotationTolerations)},
		// The profile's tolerations as the Rego's %v writes them, for
		// the message.
		admissionregistrationv1.Variable{Name: "tolerationsText", Expression: fmt.Sprintf(`"[" + (variables.nodeTolerations ? params.spec.scheduling.node.tolerations.map(t, %s).join(", ") : (variables.profile in variables.renderedTolerations ? variables.renderedTolerations[variables.profile].text : "")) + "]"`, tolerationText("t"))},
		admissionregistrationv1.Variable{Name: "profileQueue", Expression: "has(params.spec) && has(params.spec.scheduling) && has(params.spec.scheduling.kueue) && has(params.spec.scheduling.kueue.localQueueName) ? dyn(params.spec.scheduling.kueue.localQueueName) : null"},
		admissionregistrationv1.Variable{Name: "kueueAccounts", Expression: `variables.profileQueue != null || (variables.team != null && variables.team.queue != "")`},
		admissionregistrationv1.Variable{Name: "queueLabel", Expression: fmt.Sprintf(`%q in object.metadata.labels ? dyn(object.metadata.labels[%q]) : null`, QueueNameLabel, QueueNameLabel)},
		admissionregistrationv1.Variable{Name: "controllers", Expression: `has(object.metadata.ownerReferences) ? object.metadata.ownerReferences.filter(o, has(o.controller) && o.controller).map(o, (o.apiVersion.split("/").size() == 2 ? o.apiVersion.split("/")[0] : "") + "/" + o.kind) : []`},
		admissionregistrationv1.Variable{Name: "profilePriority", Expression: fmt.Sprintf("%[2]s in %[1]s ? dyn(%[1]s[%[2]s]) : null", ann, key(AnnotationPriorityClass))},
		admissionregistrationv1.Variable{Name: "priorityJudged", Expression: "variables.through && (variables.profilePriority != null || (variables.team != null && variables.team.tier != null) || has(object.spec.priorityClassName))"},
		admissionregistrationv1.Variable{Name: "workloadPriority", Expression: fmt.Sprintf(`%q in object.metadata.labels ? dyn(object.metadata.labels[%q]) : null`, WorkloadPriorityLabel, WorkloadPriorityLabel)},
	)
	return vars
}

// countOf reads an Accelerator identifier's count as the Rego's
// to_number does: a number, or a string of one; null where it is absent
// or no number (the rule that compares it does not apply).
func countOf(field string) string {
	x := "variables.accelerators[0]." + field
	return fmt.Sprintf(`size(variables.accelerators) > 0 && has(%[1]s) ? (type(%[1]s) == string ? (string(%[1]s).matches("^-?[0-9]+(\\.[0-9]+)?$") ? dyn(double(string(%[1]s))) : null) : dyn(double(%[1]s))) : null`, x)
}

// confinedBy is CEL that holds where the pod is kept to values of a node
// label: its node selector names one, or every required term has an In
// expression on the label of values all among them.
func confinedBy(label, values string) string {
	return fmt.Sprintf(`(%[1]s in variables.nodeSelector && variables.nodeSelector[%[1]s] in %[2]s) || `+
		`(size(variables.terms) > 0 && variables.terms.all(t, has(t.matchExpressions) && t.matchExpressions.exists(e, e.key == %[1]s && e.operator == "In" && has(e.values) && size(e.values) > 0 && e.values.all(v, v in %[2]s))))`, label, values)
}

// teamVariables are the namespace's entitlement, as the Rego reads it
// from the synced NamespaceEntitlement: variables.team is null where the
// namespace has none. The map is cut into variables of at most celChunk
// (a fleet's would outgrow one expression), read in turn.
func (r podRules) teamVariables() []admissionregistrationv1.Variable {
	ents := slices.Clone(r.entitlements)
	slices.SortFunc(ents, func(a, b *namespaceEntitlement) int { return strings.Compare(a.Name, b.Name) })
	var entries []string
	for _, e := range ents {
		tier := "null"
		if e.Spec.Priority != nil {
			tier = fmt.Sprintf(`{"className": dyn(%q), "value": dyn(%d)}`, e.Spec.Priority.ClassName, e.Spec.Priority.Value)
		}
		entries = append(entries, fmt.Sprintf(`%q: {"team": dyn(%q), "types": dyn(%s), "profiles": dyn(%s), "queue": dyn(%q), "tier": dyn(%s)}`,
			e.Name, e.Spec.Team, celStrings(slices.Sorted(slices.Values(e.Spec.AcceleratorTypes))), celStrings(nonNil(e.Spec.Profiles)), e.Spec.Queue, tier))
	}
	parts := chunks(entries, 2)
	if len(parts) == 0 {
		parts = [][]string{nil}
	}
	var vars []admissionregistrationv1.Variable
	for i, part := range parts {
		vars = append(vars, admissionregistrationv1.Variable{Name: fmt.Sprintf("teams%d", i), Expression: "{" + strings.Join(part, ",\n") + "}"})
	}
	team := "null"
	for i := len(vars) - 1; i >= 0; i-- {
		team = fmt.Sprintf("(request.namespace in variables.teams%[1]d ? dyn(variables.teams%[1]d[request.namespace]) : %[2]s)", i, team)
	}
	return append(vars, admissionregistrationv1.Variable{Name: "team", Expression: team})
}

// renderedTolerations are, by profile that holds its tolerations as
// JSON in its annotation (one that schedules through Kueue), that
// annotation as the tree renders it, the tolerations in it (each a map
// of key, operator, value and effect, defaults filled in) and, for
// messages, the list as the Rego's %v writes the parsed JSON.
func (r podRules) renderedTolerations() string {
	key := r.m.Cluster.LabelPrefix + "/" + AnnotationTolerations
	var entries []string
	for _, h := range r.hwps {
		j, ok := h.Annotations[key]
		if !ok {
			continue
		}
		var tolerations []compile.Toleration
		if err := json.Unmarshal([]byte(j), &tolerations); err != nil {
			continue // a pod of it is refused: the live annotation is not one the policy knows
		}
		var list []string
		for _, t := range tolerations {
			op := t.Operator
			if op == "" {
				op = "Equal"
			}
			list = append(list, fmt.Sprintf(`{"key": %q, "operator": %q, "value": %q, "effect": %q}`, t.Key, op, t.Value, t.Effect))
		}
		entries = append(entries, fmt.Sprintf(`%q: {"json": dyn(%q), "tolerations": dyn([%s]), "text": dyn(%q)}`, h.Name, j, strings.Join(list, ", "), regoText(j)))
	}
	slices.Sort(entries)
	return "{" + strings.Join(entries, ", ") + "}"
}

// regoText is a JSON list of objects as the Rego's %v writes it parsed:
// each object's keys in order, without the brackets.
func regoText(j string) string {
	var list []map[string]any
	if err := json.Unmarshal([]byte(j), &list); err != nil {
		return ""
	}
	var items []string
	for _, t := range list {
		var fields []string
		for _, k := range slices.Sorted(maps.Keys(t)) {
			v, _ := json.Marshal(t[k])
			fields = append(fields, fmt.Sprintf("%q: %s", k, v))
		}
		items = append(items, "{"+strings.Join(fields, ", ")+"}")
	}
	return strings.Join(items, ", ")
}

// profileTolerations are the profile's tolerations as the Rego reads
// them: its scheduling.node.tolerations, else its tolerations
// annotation's JSON — here the rendered list, where the live annotation
// is the rendered one (a validation refuses a pod whose profile's
// annotation is not) — else none; defaults filled in.
func profileTolerations(key string) string {
	node := "params.spec.scheduling.node"
	return fmt.Sprintf(`variables.nodeTolerations ? `+
		`%[1]s.tolerations.map(p, {"key": %[2]s, "operator": %[3]s, "value": %[4]s, "effect": %[5]s}) : `+
		`(%[6]q in variables.profileAnnotations && variables.profile in variables.renderedTolerations && variables.renderedTolerations[variables.profile].json == variables.profileAnnotations[%[6]q] ? variables.renderedTolerations[variables.profile].tolerations : [])`,
		node, or("p", "key", `""`), or("p", "operator", `"Equal"`), or("p", "value", `""`), or("p", "effect", `""`), key)
}

// validations are the Rego's violations a pod judgedInAPIServer admits
// can meet, each with the Rego's message (in the order of the policies:
// profilerequired, profilescheduling, annotations, entitlement).
func (r podRules) validations() []admissionregistrationv1.Validation {
	prefix := r.m.Cluster.LabelPrefix
	key := func(name string) string { return celQuote(prefix + "/" + name) }
	ann := "variables.profileAnnotations"
	known := celQuote(strings.Join(r.profiles, ", "))
	pod := "object.metadata.annotations"
	typeLabel := celQuote(r.params.TypeLabel)
	profile := `"\"" + variables.profile + "\""`
	types := `variables.confiningTypes.join(", ")`
	who := fmt.Sprintf(`(size(variables.types) > 0 ? "hardware profile " + %[1]s : "team " + variables.team.team + " (generic hardware profile " + %[1]s + ")")`, profile)
	var taintKeys []string
	for k := range r.params.TaintKeys {
		taintKeys = append(taintKeys, k)
	}
	slices.Sort(taintKeys)
	podControllers := "{" + strings.Join(func() []string {
		var out []string
		for _, k := range slices.Sorted(maps.Keys(r.params.PodControllers)) {
			out = append(out, fmt.Sprintf("%q: %s", k, celStrings(nonNil(r.params.PodControllers[k]))))
		}
		return out
	}(), ", ") + "}"
	jobKinds := celStrings(slices.Sorted(maps.Keys(r.params.KueueJobKinds)))
	classes := "{" + strings.Join(func() []string {
		var out []string
		for _, k := range slices.Sorted(maps.Keys(r.m.Cluster.PriorityClasses)) {
			out = append(out, fmt.Sprintf("%q: %d", k, r.m.Cluster.PriorityClasses[k].Value))
		}
		return out
	}(), ", ") + "}"
	// The constraint the Rego's denial would name: the cluster's, or the
	// one of the namespaces staged to deny.
	constraint := ConstraintName
	if r.m.Cluster.Enforcement != compile.Deny {
		constraint += "-" + compile.Deny
	}
	tol := func(t, field, def string) string { return or(t, field, def) }
	acceleratorLabel := func(k string) string {
		return fmt.Sprintf("(%[1]s.startsWith(%[2]q) || %[3]s.exists(p, %[1]s.startsWith(p)))", k, prefix+"/", celStrings(policies.AcceleratorLabelPrefixes))
	}
	whyNoProfile := fmt.Sprintf(`(variables.retired && %[1]s[%[2]s] != "" ? "hardware profile " + %[3]s + " is retired: use " + %[1]s[%[2]s] : (!variables.enabled ? "hardware profile " + %[3]s + " is disabled" : "hardware profile " + %[3]s + " does not hand out accelerators here"))`, ann, key(AnnotationRetired), profile)
	widens := fmt.Sprintf(`(%[1]s in %[2]s || (%[1]s == "" && %[3]s == "Exists"))`, tol("t", "key", `""`), celStrings(taintKeys), tol("t", "operator", `"Equal"`))
	allowed := fmt.Sprintf(`variables.profileTolerations.exists(p, p.key == %[1]s && (p.operator == "Exists" || (p.operator == "Equal" && %[2]s == "Equal" && %[3]s == p.value)) && (p.effect == "" || p.effect == %[4]s))`,
		tol("t", "key", `""`), tol("t", "operator", `"Equal"`), tol("t", "value", `""`), tol("t", "effect", `""`))
	type rule struct{ policy, expr, msg string }
	policy := "profilerequired"
	from := func(p string) rule { policy = p; return rule{} }
	v := func(expr, msg string) rule { return rule{policy, expr, msg} }
	rules := []rule{
		from("profilerequired"),
		v("variables.enabled || variables.retired",
			fmt.Sprintf(`"hardware profile " + %s + " is disabled: pick an enabled one (" + %s + ")"`, profile, known)),
		v(fmt.Sprintf(`!variables.retired || %[1]s[%[2]s] == ""`, ann, key(AnnotationRetired)),
			fmt.Sprintf(`"hardware profile " + %s + " is retired: use " + %s[%s] + " (its running pods finish; new ones are refused)"`, profile, ann, key(AnnotationRetired))),
		v(fmt.Sprintf(`!variables.retired || %[1]s[%[2]s] != ""`, ann, key(AnnotationRetired)),
			fmt.Sprintf(`"hardware profile " + %s + " is retired and names no replacement: pick one of: " + %s + " (its running pods finish; new ones are refused)"`, profile, known)),
		v(fmt.Sprintf(`!(%[2]q in %[1]s) || %[1]s[%[2]q] == %[3]q`, pod, profileNamespaceAnnotation, r.params.ProfileNamespace),
			fmt.Sprintf(`"annotation %[1]s=" + %[2]s[%[1]q] + ": accelc only trusts hardware profiles in %[3]s; use one of: " + %[4]s`, profileNamespaceAnnotation, pod, r.params.ProfileNamespace, known)),
		// An evaluation error of the Rego's (two Accelerator identifiers
		// that differ), which Gatekeeper answers with a refusal.
		v("variables.accelerators.all(i, i == variables.accelerators[0])",
			fmt.Sprintf(`"hardware profile " + %s + " has more than one Accelerator identifier: give it one"`, profile)),
		from("profilescheduling"),
		v("size(variables.confiningTypes) == 0 || variables.confined",
			fmt.Sprintf(`%s + " allows " + %s + ": add nodeSelector " + %s + ": " + variables.confiningTypes[0] + ", or required node affinity " + %s + " In [" + %s + "] in every term" + `+
				`[variables.nodeSelector.filter(k, k != %s && ["nvidia.com/", "amd.com/", "cloud.google.com/gke-accelerator", "karpenter.k8s.aws/"].exists(p, k.startsWith(p)))].map(ks, size(ks) > 0 ? " (" + ks[0] + " selects on a vendor label; select on " + %s + " instead)" : "")[0]`, who, types, typeLabel, typeLabel, types, typeLabel, typeLabel)),
		v(fmt.Sprintf("size(variables.confiningTypes) == 0 || !variables.confined || !(%[1]s in variables.nodeSelector) || variables.nodeSelector[%[1]s] in variables.confiningTypes", typeLabel),
			fmt.Sprintf(`%s + " allows " + %s + ", but nodeSelector " + %s + " is " + variables.nodeSelector[%s] + ": drop it (the pod's node affinity already picks the types)"`, who, types, typeLabel, typeLabel)),
		v("variables.scopeTypes == null || size(variables.confiningTypes) > 0",
			fmt.Sprintf(`%s + ": the team may use no accelerator type, so the pod has nowhere to run; give the team acceleratorTypes or profiles in the cluster's CUE"`, who)),
		v(fmt.Sprintf(`variables.nodeTolerations || !(%[2]s in %[1]s) || (variables.profile in variables.renderedTolerations && %[1]s[%[2]s] == variables.renderedTolerations[variables.profile].json)`,
			ann, key(AnnotationTolerations)),
			fmt.Sprintf(`"hardware profile " + %s + "'s annotation %s is not the one accelc rendered, so its tolerations cannot be checked here: restore the profile from the tree (Flux reconciles it)"`, profile, prefix+"/"+AnnotationTolerations)),
		v(fmt.Sprintf("!has(object.spec.tolerations) || object.spec.tolerations.all(t, !%s || %s)", widens, allowed),
			fmt.Sprintf(`object.spec.tolerations.filter(t, %[1]s && !%[2]s).map(t, "toleration " + %[3]s + " is not one of hardware profile " + %[4]s + "'s: it would let the pod onto another pool's nodes; use the profile's tolerations " + variables.tolerationsText).join("; [%[5]s] profilescheduling: ")`,
				widens, allowed, tolerationText("t"), profile, constraint)),
		v("size(variables.pools) == 0 || variables.poolConfined",
			fmt.Sprintf(`"hardware profile " + %s + " runs on shared GPUs in " + variables.pools.join(", ") + ": add nodeSelector %s: " + variables.pools[0] + ", or required node affinity %s In [" + variables.pools.join(", ") + "] in every term"`, profile, prefix+"/pool", prefix+"/pool")),
		from("annotations"),
		v(fmt.Sprintf(`!(%[2]s in %[1]s) || (size(variables.types) == 1 && %[1]s[%[2]s] == variables.types[0])`, pod, key("type")),
			annotationMessage(prefix+"/type", "size(variables.types) == 1", "variables.types[0]")),
		v(fmt.Sprintf(`!(%[2]s in %[1]s) || (size(variables.types) > 0 && %[1]s[%[2]s] == variables.types.join(","))`, pod, key(AnnotationTypes)),
			annotationMessage(prefix+"/"+AnnotationTypes, "size(variables.types) > 0", `variables.types.join(",")`)),
		v(fmt.Sprintf(`!(%[2]s in %[1]s) || (variables.team != null && %[1]s[%[2]s] == variables.team.team)`, pod, key("team")),
			annotationMessage(prefix+"/team", "variables.team != null", "variables.team.team")),
		from("deviceaccess"),
		v("!variables.dra",
			fmt.Sprintf(`"hardware profile " + %s + " hands out devices by resource claim, and the pod holds none: add spec.resourceClaims [{name: gpu, resourceClaimTemplateName: " + variables.draTemplate + "}] and resources.claims [{name: gpu}] on the container that uses it"`, profile)),
		v(fmt.Sprintf(`variables.through || variables.generic || !has(object.spec.runtimeClassName) || !(object.spec.runtimeClassName in %s)`, celStrings(slices.Sorted(maps.Keys(r.params.DeviceRuntimeClasses)))),
			fmt.Sprintf(`"runtimeClassName " + object.spec.runtimeClassName + " hands devices to containers, and " + %s + ": drop it, or name a profile with annotation %s"`, whyNoProfile, ProfileAnnotation)),
		v(fmt.Sprintf(`variables.through || variables.generic || (!variables.nodeSelector.exists(k, %[1]s) && `+
			`!(variables.terms + variables.preferred).exists(t, has(t.matchExpressions) && t.matchExpressions.exists(e, %[2]s && e.operator in ["In", "Exists", "Gt", "Lt"])) && `+
			`!(has(object.spec.tolerations) && object.spec.tolerations.exists(t, %[3]s)))`, acceleratorLabel("k"), acceleratorLabel("e.key"), widens),
			fmt.Sprintf(`(variables.nodeSelector.filter(k, %[1]s).map(k, "nodeSelector " + k) + `+
				`(variables.terms + variables.preferred).filter(t, has(t.matchExpressions) && t.matchExpressions.exists(e, %[2]s && e.operator in ["In", "Exists", "Gt", "Lt"])).map(t, t.matchExpressions.filter(e, %[2]s && e.operator in ["In", "Exists", "Gt", "Lt"]).map(e, "node affinity on " + e.key).join("\x00")) + `+
				`(has(object.spec.tolerations) ? object.spec.tolerations.filter(t, %[3]s).map(t, "toleration " + %[4]s + " (accelerator nodes carry it)") : [])).join("\x00").split("\x00").filter(w, w != "")`+
				`.map(w, w + " aims the pod at accelerator nodes, and " + %[5]s + ": drop it, or name a profile with annotation %[6]s").join("; [%[7]s] deviceaccess: ")`,
				acceleratorLabel("k"), acceleratorLabel("e.key"), widens, tolerationText("t"), whyNoProfile, ProfileAnnotation, constraint)),
		from("entitlement"),
		v("variables.acceleratorProfile",
			fmt.Sprintf(`"hardware profile " + %s + " hands out no accelerator, yet the pod asks for one: pick a profile with an accelerator"`, profile)),
		v("variables.team == null || size(variables.team.profiles) == 0 || variables.profile in variables.team.profiles",
			fmt.Sprintf(`"team " + variables.team.team + " may not use hardware profile " + %s + ": it may use " + variables.team.profiles.join(", ") + "; pick one of them or add the profile to the team's profiles in the cluster's CUE"`, profile)),
		v("variables.team != null || variables.genericUse",
			`"namespace " + request.namespace + " belongs to no team, so it may use no accelerator: add it to a team's namespaces in the cluster's CUE"`),
		v("variables.types.all(t, variables.team != null && t in variables.team.types)",
			fmt.Sprintf(`"team " + (variables.team != null ? variables.team.team : "(none)") + " may not use " + variables.types.filter(t, variables.team == null || !(t in variables.team.types))[0] + " (hardware profile " + %s + "): it may use " + (variables.team != null ? variables.team.types.join(", ") : "") + "; pick another profile or ask for the type in the team's CUE"`, profile)),
		v("size(variables.accelerators) == 0 || !variables.otherAccelerator",
			fmt.Sprintf(`variables.containers.filter(c, has(c.resources)).map(c, (has(c.resources.requests) ? c.resources.requests.filter(k, k != variables.resource && %[1]s.exists(p, k.startsWith(p))) : []) + (has(c.resources.limits) ? c.resources.limits.filter(k, k != variables.resource && %[1]s.exists(p, k.startsWith(p))) : []))`+
				`.map(ks, ks.join("\x00")).join("\x00").split("\x00").filter(r, r != "").sort().map(r, "hardware profile " + %[2]s + " is requested through " + variables.resource + ", not " + r + ": ask for " + variables.resource).join("; [%[3]s] entitlement: ")`,
				r.resourcePrefixes(), profile, constraint)),
		v("variables.minCount == null || variables.amount >= variables.minCount",
			fmt.Sprintf(`"hardware profile " + %[1]s + " needs at least " + %[2]s + " " + variables.resource + " per pod; the pod asks for " + %[3]s`, profile, number("variables.minCount"), number("variables.amount"))),
		v("variables.maxCount == null || variables.amount <= variables.maxCount",
			fmt.Sprintf(`"hardware profile " + %[1]s + " allows at most " + %[2]s + " " + variables.resource + " per pod; the pod asks for " + %[3]s`, profile, number("variables.maxCount"), number("variables.amount"))),
		v("!variables.dra",
			fmt.Sprintf(`"hardware profile " + %s + " hands out devices by resource claim, not an extended resource: drop the request, and claim the devices with the template"`, profile)),
		v(`!(variables.kueueAccounts && variables.through) || variables.profileQueue != null || variables.team == null || variables.team.queue == "" || variables.queueLabel == variables.team.queue`,
			fmt.Sprintf(`"team " + variables.team.team + "'s accelerators are shared out by Kueue: add label %s: " + variables.team.queue + " (the team's LocalQueue), or name the profile with label %s, which adds it"`, QueueNameLabel, prefix+"/profile")),
		v(`!(variables.kueueAccounts && variables.through) || variables.genericUse || variables.profileQueue == null || (variables.queueLabel == null ? "" : variables.queueLabel) == variables.profileQueue`,
			fmt.Sprintf(`"hardware profile " + %s + " schedules through Kueue: add label %s: " + variables.profileQueue + " (the profile's LocalQueue), or name the profile with label %s, which adds it"`, profile, QueueNameLabel, prefix+"/profile")),
		v(`!variables.priorityJudged || variables.profilePriority == null || (has(object.spec.priorityClassName) ? object.spec.priorityClassName : "") == variables.profilePriority`,
			fmt.Sprintf(`"hardware profile " + %s + " runs at priority class " + variables.profilePriority + ", but the pod names \"" + (has(object.spec.priorityClassName) ? object.spec.priorityClassName : "") + "\": set priorityClassName: " + variables.profilePriority + ", or name the profile with label %s, which sets it"`, profile, prefix+"/profile")),
		v(`!variables.priorityJudged || variables.profilePriority != null || variables.team == null || variables.team.tier == null || object.spec.priority <= variables.team.tier.value`,
			`"priority class " + (has(object.spec.priorityClassName) ? object.spec.priorityClassName : "(none named: the cluster's global default)") + " (" + string(object.spec.priority) + ") outranks team " + variables.team.team + "'s tier " + variables.team.tier.className + " (" + string(variables.team.tier.value) + "): drop priorityClassName or use " + variables.team.tier.className`),
		v(`!variables.priorityJudged || variables.profilePriority == null || variables.workloadPriority == null || variables.workloadPriority == variables.profilePriority`,
			fmt.Sprintf(`"hardware profile " + %s + " runs at priority class " + variables.profilePriority + ", but the pod's label %s is \"" + variables.workloadPriority + "\": drop the label (naming the profile with label %s sets it) or set it to " + variables.profilePriority`, profile, WorkloadPriorityLabel, prefix+"/profile")),
		v(fmt.Sprintf(`!variables.priorityJudged || variables.profilePriority != null || variables.team == null || variables.team.tier == null || variables.workloadPriority == null || variables.workloadPriority in %s`, classes),
			fmt.Sprintf(`"label %s=" + variables.workloadPriority + " names a priority class accelc does not know, so its rank against team " + variables.team.team + "'s tier " + variables.team.tier.className + " cannot be checked: drop the label or use " + variables.team.tier.className`, WorkloadPriorityLabel)),
		v(fmt.Sprintf(`!variables.priorityJudged || variables.profilePriority != null || variables.team == null || variables.team.tier == null || variables.workloadPriority == null || !(variables.workloadPriority in %[1]s) || %[1]s[variables.workloadPriority] <= variables.team.tier.value`, classes),
			fmt.Sprintf(`"label %s=" + variables.workloadPriority + " (" + string(%s[variables.workloadPriority]) + ") outranks team " + variables.team.team + "'s tier " + variables.team.tier.className + " (" + string(variables.team.tier.value) + ") in Kueue: drop the label or use " + variables.team.tier.className`, WorkloadPriorityLabel, classes)),
		v(when(len(r.params.PodControllers) > 0, fmt.Sprintf(`variables.controllers.all(k, !(k in %[1]s) || request.userInfo.username in %[1]s[k])`, podControllers)),
			fmt.Sprintf(`object.metadata.ownerReferences.filter(o, has(o.controller) && o.controller && (o.apiVersion.split("/").size() == 2 ? o.apiVersion.split("/")[0] : "") + "/" + o.kind in %[1]s).map(o, "the pod names " + o.kind + " " + o.name + " as its controller (ownerReferences), but " + (request.userInfo.username != "" ? request.userInfo.username : "(no user)") + " made it, not the " + o.kind + " controller (" + [%[1]s[(o.apiVersion.split("/").size() == 2 ? o.apiVersion.split("/")[0] : "") + "/" + o.kind]].map(ms, size(ms) > 0 ? ms.sort().join(", ") : "none: it makes no pod itself")[0] + "): Kueue does not queue the pods of a " + o.kind + " it manages, so these accelerators would be outside team " + (variables.team != null ? variables.team.team : "(none)") + "'s quota; create the " + o.kind + " and let its controller make the pods").join("; [%[2]s] entitlement: ")`, podControllers, constraint)),
		v(fmt.Sprintf(`variables.queueLabel == null || !variables.kueueAccounts || variables.controllers.exists(k, k in %s) || (has(object.spec.schedulingGates) && object.spec.schedulingGates.exists(g, g.name == %q))`, jobKinds, kueueGate),
			fmt.Sprintf(`"the pod joins Kueue's LocalQueue " + variables.queueLabel + " (label %s) but reached admission without Kueue's scheduling gate %s, so Kueue's pod webhook skipped it and would never count its accelerators in team " + (variables.team != null ? variables.team.team : "(none)") + "'s quota: check that Kueue's pod integration is on, that its managedJobsNamespaceSelector selects namespace " + request.namespace + " (accelc renders it in ConfigMap %s), that its webhook is reachable, and that it sees the label (it must run after Gatekeeper's mutating webhook, which adds it: the API server calls webhook configurations in the order of their names; or set its reinvocationPolicy: IfNeeded); then create the pod again"`, QueueNameLabel, kueueGate, KueueConfigMapName)),
		v(`!(variables.generic && variables.team == null && variables.queueLabel != null && variables.kueueAccounts)`,
			fmt.Sprintf(`"the pod joins Kueue's LocalQueue " + variables.queueLabel + " (label %s), but namespace " + request.namespace + " is no team's: it has no LocalQueue and Kueue does not manage it, so Kueue would never admit the pod or count its accelerators: drop the label (generic use runs outside Kueue)"`, QueueNameLabel)),
	}
	// One validation of every rule, its message each broken rule's, as
	// Gatekeeper words a denial ("[<constraint>] <policy>: <message>"):
	// the API server reports only the first validation that fails, and
	// a user fixes everything at once. Joined on one line, and cut short
	// of the API server's 5 KiB: it drops a message of several lines or
	// more, and says "failed expression" with the whole expression.
	var exprs, msgs []string
	for _, r := range rules {
		if r.expr == "" {
			continue
		}
		exprs = append(exprs, "("+r.expr+")")
		msgs = append(msgs, fmt.Sprintf(`((%s) ? "" : %q + %s)`, r.expr, "["+constraint+"] "+r.policy+": ", r.msg))
	}
	return []admissionregistrationv1.Validation{{
		Expression:        strings.Join(exprs, " &&\n"),
		MessageExpression: "[[" + strings.Join(msgs, ",\n") + `].filter(m, m != "").join("; ")].map(m, m.size() > 4000 ? m.substring(0, 4000) + " …" : m)[0]`,
		Message:           "[" + constraint + "] the pod breaks a rule of accelc's admission policies (" + PodAdmissionPolicyName + "), which the API server could not word: the API server's log names the CEL error (error while evaluating messageExpression); report it to accelc's maintainers with the pod",
		Reason:            ptr(metav1.StatusReasonForbidden),
	}}
}

// resourcePrefixes is the CEL list of the prefixes of accelerator
// resource names: the Rego's base prefixes and the cluster's own.
func (r podRules) resourcePrefixes() string {
	return celStrings(append(slices.Clone(policies.BaseResourcePrefixes), r.params.ExtraResourcePrefixes...))
}

// when is expr where cond holds, else "" (no rule: what it would read is
// empty, so it holds).
func when(cond bool, expr string) string {
	if !cond {
		return ""
	}
	return expr
}

// number is CEL that writes a count as the Rego's %v writes a number:
// a whole one without a fraction.
func number(x string) string {
	return fmt.Sprintf(`(%[1]s == double(int(%[1]s)) ? string(int(%[1]s)) : string(%[1]s))`, x)
}

// tolerationText is CEL that writes toleration t as the Rego's %v
// writes it: its fields in order of name.
func tolerationText(t string) string {
	field := func(name string, quoted bool) string {
		v := t + "." + name
		if quoted {
			v = `"\"" + ` + v + ` + "\""`
		} else {
			v = "string(" + v + ")"
		}
		return fmt.Sprintf(`(has(%s.%s) ? "\"%s\": " + %s : "")`, t, name, name, v)
	}
	return `"{" + [` + strings.Join([]string{field("effect", true), field("key", true), field("operator", true), field("tolerationSeconds", false), field("value", true)}, ", ") + `].filter(x, x != "").join(", ") + "}"`
}

// annotationMessage words the annotations policy's refusal of a cost
// annotation (key) the pod carries: where expected holds, one that is
// not want; otherwise one accelc does not set for the pod.
func annotationMessage(key, expected, want string) string {
	named := fmt.Sprintf(`(%[1]q in object.metadata.annotations ? object.metadata.annotations[%[1]q] : "")`, ProfileAnnotation)
	return fmt.Sprintf(`"annotation %[1]s=" + object.metadata.annotations[%[1]q] + (%[2]s ? " does not match: hardware profile \"" + %[4]s + "\" and namespace " + request.namespace + " give " + %[3]s + "; remove it or set " + %[3]s : " is not set by accelc for this pod (hardware profile \"" + %[4]s + "\", namespace " + request.namespace + "): remove it")`,
		key, expected, want, named)
}

// profileNamespaceAnnotation is Open Data Hub's annotation naming the
// namespace of a workload's HardwareProfile.
const profileNamespaceAnnotation = "opendatahub.io/hardware-profile-namespace"
