package render

// Gang scheduling: the Kueue job frameworks accelc knows, and the policy
// that puts a job's pods in its queue together.

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"

	"github.com/accelc/accelc/pkg/compile"
)

// KueueJobFramework is one of Kueue's job integrations that accelc's
// Kueue Configuration enables (integrations.frameworks): Kueue admits an
// object of the kind as one Workload, and its pod integration leaves the
// pods the kind's controller makes alone.
type KueueJobFramework struct {
	// Name is the framework's name in Kueue's Configuration.
	Name string
	// Group and Kind name the kind, one of WorkloadKinds.
	Group, Kind string
}

// KueueJobFrameworks are the job integrations accelc's Kueue
// Configuration turns on beside the pod integration: the kinds whose
// objects get their queue from jobQueuePolicy.
var KueueJobFrameworks = []KueueJobFramework{
	{Name: "batch/job", Group: "batch", Kind: "Job"},
}

// kueueFrameworks are the names of the integrations accelc's Kueue
// Configuration enables: the job integrations', then the pod
// integration's.
func kueueFrameworks() []string {
	var out []string
	for _, f := range KueueJobFrameworks {
		out = append(out, f.Name)
	}
	return append(out, "pod")
}

// kueueJobKinds are KueueJobFrameworks' kinds by "<group>/<Kind>", as
// the admission constraint's kueueJobKinds parameter names them.
func kueueJobKinds() map[string]bool {
	out := map[string]bool{}
	for _, f := range KueueJobFrameworks {
		out[f.Group+"/"+f.Kind] = true
	}
	return out
}

// jobQueuePolicy is the MutatingAdmissionPolicy that makes a Job (each
// kind of KueueJobFrameworks) whose pod template names a queued profile
// one gang: the Job itself gets the profile's LocalQueue label, and the
// priority class label its pods get (the profile's class, else the
// team's tier), when it is made. Kueue reads both from the Job, suspends
// it and admits it as one Workload, all its pods or none; its pod
// integration then leaves the Job's pods alone (they are owned by a Job
// it manages), where without the label each pod, queued by the pod
// mutators, would be a Workload of its own, admitted alone.
//
// The template names its profile by accelc's label, else by Open Data
// Hub's annotation (a label and an annotation that disagree are denied
// by the validation; the label is what the pods' mutators key on). The
// queue goes only where the profile's LocalQueue is: the namespaces of
// the teams that may use the profile. A label the Job has is kept, and
// judged by the entitlement policy, as a pod's. A Gatekeeper mutator
// could not do this: it selects objects by their own labels, not their
// templates'. Admission policies run before the mutating webhooks, so
// Kueue's webhook sees the queue when it suspends the Job. Nil where no
// profile is queued.
func jobQueuePolicy(m *compile.Model) []Object {
	if !m.UsesKueue() {
		return nil
	}
	var out []Object
	for _, f := range KueueJobFrameworks {
		w, _ := WorkloadKindOf(f.Group, f.Kind)
		// A namespace has one team, so a Job's profile and namespace
		// select at most one part: one expression patches as the parts
		// would one after another.
		var parts, profiles []string
		for _, g := range jobQueueLabels(m, f) {
			parts = append(parts, gangLabelPatch(g.Profile, g.Namespaces, g.Labels))
			if !slices.Contains(profiles, g.Profile) {
				profiles = append(profiles, g.Profile)
			}
		}
		if len(parts) == 0 {
			continue
		}
		profile := gangProfile(w.Templates[0].Path, m.Cluster.LabelPrefix+"/profile")
		objs := mutatingPolicy(m, JobQueuePolicyName(f), admissionregistrationv1.MutatingAdmissionPolicySpec{
			MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionregistrationv1.RuleWithOperations{
					// Kueue takes the queue from the object as it is
					// made (a Job's template cannot change after).
					Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
					Rule:       admissionregistrationv1.Rule{APIGroups: []string{w.Group}, APIVersions: w.Versions, Resources: []string{w.Resource}},
				},
			}}},
			// Most Jobs name no queued profile (a CronJob's, a
			// controller's): they pay for this condition, not for a patch.
			MatchConditions: []admissionregistrationv1.MatchCondition{{
				Name:       "names-a-queued-profile",
				Expression: fmt.Sprintf("(%s) in %s", profile, celStrings(profiles)),
			}},
			Variables: []admissionregistrationv1.Variable{{Name: "profile", Expression: profile}},
			Mutations: foldPatches(parts),
		})
		out = append(out, objs...)
	}
	return out
}

// JobQueuePolicyName names the job queue policy of one of
// KueueJobFrameworks' kinds (and its binding).
func JobQueuePolicyName(f KueueJobFramework) string {
	return "accelc-" + strings.ToLower(f.Kind) + "-queue"
}

// gangProfile is a CEL expression for the profile the pod template at
// path names: accelc's label, else Open Data Hub's annotation, else "".
func gangProfile(path []string, profileLabel string) string {
	md := append(append([]string{}, path...), "metadata")
	ann := append(append([]string{}, md...), "annotations")
	lbl := append(append([]string{}, md...), "labels")
	return fmt.Sprintf("%s && %q in %s ? %s[%q] : (%s && %q in %s ? %s[%q] : \"\")",
		has(lbl), profileLabel, celPath(lbl), celPath(lbl), profileLabel,
		has(ann), ProfileAnnotation, celPath(ann), celPath(ann), ProfileAnnotation)
}

// gangLabelPatch is a CEL expression yielding the JSON patch that gives
// an object in one of the namespaces whose pod template names the
// profile (variables.profile: gangProfile) each of the labels it does
// not have; no patch otherwise. The patch is one expression, so that
// labels added to an object that had none are one map.
func gangLabelPatch(profile string, namespaces []string, labels map[string]string) string {
	var each, whole []string
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		each = append(each, fmt.Sprintf("(%q in object.metadata.labels ? [] : [JSONPatch{op: \"add\", path: \"/metadata/labels/\" + jsonpatch.escapeKey(%q), value: %q}])", k, k, labels[k]))
		whole = append(whole, fmt.Sprintf("%q: %q", k, labels[k]))
	}
	return fmt.Sprintf("variables.profile == %q && request.namespace in %s ? (has(object.metadata.labels) ? %s : [JSONPatch{op: \"add\", path: \"/metadata/labels\", value: {%s}}]) : []",
		profile, celStrings(namespaces), strings.Join(each, " + "), strings.Join(whole, ", "))
}

// GangLabels is what one mutation of the job queue policy does: a Job
// made in one of Namespaces whose pod template names Profile gets each
// of Labels it does not have.
type GangLabels struct {
	Profile    string            `json:"profile"`
	Namespaces []string          `json:"namespaces"`
	Labels     map[string]string `json:"labels"`
}

var (
	gangPatchHead = regexp.MustCompile(`^variables\.profile == ("(?:[^"\\]|\\.)*") && request\.namespace in \[([^\]]*)\] \? `)
	gangPatchTail = regexp.MustCompile(`\[JSONPatch\{op: "add", path: "/metadata/labels", value: \{(.*)\}\}\]\) : \[\]$`)
	quotedPair    = regexp.MustCompile(`("(?:[^"\\]|\\.)*"): ("(?:[^"\\]|\\.)*")`)
)

// ReadGangLabelPatches reads back a mutation of the job queue policy,
// its parts (gangLabelPatch's) joined by PatchPartSeparator, so that the
// offline admission engine does what the rendered policy says; false
// where a part is not one.
func ReadGangLabelPatches(expr string) ([]GangLabels, bool) {
	parts, ok := foldedParts(expr)
	if !ok {
		return nil, false
	}
	var out []GangLabels
	for _, part := range parts {
		g, ok := ReadGangLabelPatch(part)
		if !ok {
			return nil, false
		}
		out = append(out, g)
	}
	return out, true
}

// ReadGangLabelPatch reads back one part of the job queue policy's
// mutation (gangLabelPatch's); false for any other expression.
func ReadGangLabelPatch(expr string) (GangLabels, bool) {
	head := gangPatchHead.FindStringSubmatch(expr)
	tail := gangPatchTail.FindStringSubmatch(expr)
	if head == nil || tail == nil {
		return GangLabels{}, false
	}
	var g GangLabels
	var err error
	if g.Profile, err = strconv.Unquote(head[1]); err != nil {
		return GangLabels{}, false
	}
	for _, q := range strings.Split(head[2], ", ") {
		ns, err := strconv.Unquote(q)
		if err != nil {
			return GangLabels{}, false
		}
		g.Namespaces = append(g.Namespaces, ns)
	}
	g.Labels = map[string]string{}
	for _, kv := range quotedPair.FindAllStringSubmatch(tail[1], -1) {
		k, err1 := strconv.Unquote(kv[1])
		v, err2 := strconv.Unquote(kv[2])
		if err1 != nil || err2 != nil {
			return GangLabels{}, false
		}
		g.Labels[k] = v
	}
	return g, len(g.Labels) > 0
}
