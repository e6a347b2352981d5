// Package policies holds accelc's Gatekeeper ConstraintTemplates: one
// folder per policy with its Rego (src.rego), Rego unit tests
// (src_test.rego), the generated template.yaml, sample objects and a gator
// suite.yaml. lib/ is the Rego library every template carries.
//
// pkg/render builds the cluster's ConstraintTemplates from Templates() and
// its Constraints from the model; template.yaml in each folder is the same
// object, kept in sync by a test, so `gator verify policies/...` checks
// exactly what accelc renders.
package policies

import (
	"embed"
	"fmt"
	"slices"
	"strings"
)

//go:embed lib/*.rego */*.rego
var sources embed.FS

// Policy is one ConstraintTemplate.
type Policy struct {
	// Dir is the policy's folder and Rego package suffix.
	Dir string
	// Kind is the constraint kind the template defines.
	Kind string
	// Description says what the policy enforces.
	Description string
	// Params are the constraint's parameters. Every one is small and
	// fixed in size: what grows with the cluster (profiles, nodes, team
	// namespaces) is read from data.inventory, by path.
	Params []string
}

// All lists accelc's policies.
var All = []Policy{
	{Dir: "profilerequired", Kind: "AccelcProfileRequired",
		Description: "A pod that asks for an accelerator names an enabled hardware profile, unless its namespace is allowed generic GPU use.",
		Params:      []string{"labelPrefix", "profileNamespace", "genericNamespaces", "extraResourcePrefixes"}},
	{Dir: "profilescheduling", Kind: "AccelcProfileScheduling",
		Description: "A pod of a typed hardware profile is confined to the profile's accelerator types and tolerates only its profile's taints.",
		Params:      []string{"labelPrefix", "profileNamespace", "typeLabel", "taintKeys", "extraResourcePrefixes", "labelledFromQueue"}},
	{Dir: "annotations", Kind: "AccelcAnnotations",
		Description: "The accelerator-type, types and team annotations a pod carries agree with its hardware profile and namespace.",
		Params:      []string{"labelPrefix", "profileNamespace", "extraResourcePrefixes"}},
	{Dir: "entitlement", Kind: "AccelcEntitlement",
		Description: "The pod's team may use its profile and the profile's types; the pod asks for the profile's resource, within its device limits, joins its team's Kueue queue and runs at its profile's priority class or at most its team's tier; only a Kueue-managed kind's controller makes pods it owns, and only Kueue lifts its admission gate.",
		Params:      []string{"labelPrefix", "profileNamespace", "extraResourcePrefixes", "podControllers", "kueueManagers", "kueueJobKinds", "kueueNamespaces", "labelledFromQueue"}},
	{Dir: "claims", Kind: "AccelcClaims",
		Description: "A ResourceClaim or ResourceClaimTemplate asks only for DeviceClasses its namespace's team may use, never for all of a node's devices, admin access, device taints or driver configuration.",
		Params:      []string{"labelPrefix", "profileNamespace"}},
	{Dir: "deviceaccess", Kind: "AccelcDeviceAccess",
		Description: "No container reaches devices outside the device plugin (visibility variables, runtime device annotations, privileged, capabilities and host namespaces beyond Pod Security baseline, device and runtime host paths, DRA claims); a pod that does not go through a profile neither uses the GPU runtime class nor aims at accelerator nodes.",
		Params:      []string{"labelPrefix", "profileNamespace", "genericNamespaces", "taintKeys", "deviceRuntimeClasses", "extraResourcePrefixes"}},
}

// MatchKind is a group's kinds an admission constraint matches.
type MatchKind struct {
	APIGroups []string `json:"apiGroups"`
	Kinds     []string `json:"kinds"`
}

// AdmissionKinds are what the admission constraint matches: pods (and,
// through expansion, the workloads that make them), the ResourceClaims
// and ResourceClaimTemplates a pod's devices may come from (Dynamic
// Resource Allocation), which the claims policy judges, Notebooks, judged
// as their pods, and the workloads Kueue admits whole, whose own queue
// and priority labels the entitlement policy judges.
var AdmissionKinds = []MatchKind{
	{APIGroups: []string{""}, Kinds: []string{"Pod"}},
	{APIGroups: []string{"resource.k8s.io"}, Kinds: []string{"ResourceClaim", "ResourceClaimTemplate"}},
	// A Notebook's pod takes the Notebook's labels and its template's
	// spec, which Gatekeeper's expansion cannot put together: the
	// library judges a Notebook as that pod itself.
	{APIGroups: []string{"kubeflow.org"}, Kinds: []string{"Notebook", "PyTorchJob", "MPIJob"}},
	// Kueue reads a workload's queue and priority from the workload's own
	// labels: the entitlement policy judges them on the workload.
	// On an UPDATE, the admission entry judges the templates of every kind
	// Gatekeeper expands itself, against the old ones (a ReplicaSet's and a
	// DaemonSet's too, whose own labels no policy reads).
	{APIGroups: []string{"apps"}, Kinds: []string{"Deployment", "StatefulSet", "ReplicaSet", "DaemonSet"}},
	{APIGroups: []string{"batch"}, Kinds: []string{"Job", "CronJob"}},
	{APIGroups: []string{"jobset.x-k8s.io"}, Kinds: []string{"JobSet"}},
	{APIGroups: []string{"ray.io"}, Kinds: []string{"RayCluster", "RayJob"}},
	{APIGroups: []string{"leaderworkerset.x-k8s.io"}, Kinds: []string{"LeaderWorkerSet"}},
	// Kinds whose pods the library composes from the object itself (an
	// AppWrapper's wrapped objects, a TrainJob's trainer, an
	// InferenceService's components): no ExpansionTemplate reaches them.
	{APIGroups: []string{"workload.codeflare.dev"}, Kinds: []string{"AppWrapper"}},
	{APIGroups: []string{"trainer.kubeflow.org"}, Kinds: []string{"TrainJob"}},
	{APIGroups: []string{"serving.kserve.io"}, Kinds: []string{"InferenceService"}},
}

// Name is the template's metadata.name: the kind, lower-cased.
func (p Policy) Name() string { return strings.ToLower(p.Kind) }

// Rego returns the policy's source.
func (p Policy) Rego() string { return mustRead(p.Dir + "/src.rego") }

// Lib returns the shared Rego library.
func Lib() string { return mustRead("lib/accelc.rego") }

func mustRead(name string) string {
	b, err := sources.ReadFile(name)
	if err != nil {
		panic(fmt.Sprintf("policies: %s is not embedded: %v", name, err))
	}
	return string(b)
}

// Tests returns the Rego unit tests of the policy, with the shared
// fixtures, by file name.
func (p Policy) Tests() map[string]string {
	return map[string]string{
		"policies/lib/fixtures_test.rego":      mustRead("lib/fixtures_test.rego"),
		"policies/" + p.Dir + "/src_test.rego": mustRead(p.Dir + "/src_test.rego"),
	}
}

// Template returns the policy's own ConstraintTemplate, as its folder's
// template.yaml holds it for the folder's gator suite.
func (p Policy) Template() map[string]any {
	return template(p.Name(), p.Kind, p.Description, p.Rego(), []string{Lib()}, p.Params)
}

// Admission is the one ConstraintTemplate a cluster gets: every policy as
// a library, its violations prefixed with the policy's name. Gatekeeper
// prepares one Rego query per template for every review, a fixed cost
// about as large as a simple policy's whole evaluation, so one template
// keeps a pod's admission cost that of a single policy.
var Admission = struct{ Name, Kind string }{Name: "accelcadmission", Kind: "AccelcAdmission"}

// AdmissionTemplate returns the combined ConstraintTemplate.
func AdmissionTemplate() map[string]any {
	libs := []string{Lib()}
	entry := "# Every accelc policy; a violation's message starts with its policy.\n# The pod templates a workload holds in lists, which Gatekeeper's\n# expansion cannot reach, are judged here as the pods they make, and on\n# an UPDATE only what the update changes.\npackage " + Admission.Name + "\n\nimport data.lib.accelc\n"
	for _, p := range All {
		// Gatekeeper rewrites library references through imports.
		entry += "import data.lib.accelc_" + p.Dir + "\n"
	}
	var descriptions, judged []string
	for _, p := range All {
		pkg := "lib.accelc_" + p.Dir
		libs = append(libs, strings.Replace(p.Rego(), "package accelc"+p.Dir, "package "+pkg, 1))
		descriptions = append(descriptions, p.Dir+": "+p.Description)
		judged = append(judged, strings.NewReplacer("POLICY", p.Dir).Replace(`{["POLICY", v.msg] | some v in accelc_POLICY.violation}`))
	}
	entry += strings.Replace(entryRules, "JUDGED", strings.Join(judged, " | "), 1)
	return template(Admission.Name, Admission.Kind, strings.Join(descriptions, "\n"), entry, libs, AdmissionParams())
}

// entryRules are the admission entry's rules, over every policy's
// violations as [policy, message] (JUDGED), worked out in one rule: OPA
// pays for every rule body it enters, so one rule for all the policies
// costs a review less than a rule for each. An UPDATE reports only the
// violations the object as it was, judged as made now, did not have
// (old_judged: worked out once a review, not once a violation); a
// workload's pod templates are judged as the pods they make where the
// update changed them (all of them on CREATE, lists only: Gatekeeper's
// expansion judges the rest), and where Kueue changed them (its
// flavour's node selector in a suspended Job's template) only for what
// the change adds. See update_with_old in the library.
//
// Each pod template is judged under one with, once per template: OPA
// forgets what it worked out under a with when the with ends, so a with
// per policy would work out the library's rules (the pod, its profile,
// its team) again for each policy.
const entryRules = `
judged := JUDGED

violation contains {"msg": concat(": ", [policy, msg]), "details": {"policy": policy}} if {
	not accelc.expansion_of_update
	some [policy, msg] in judged
	not kept(policy, msg)
}

kept(policy, msg) if {
	accelc.update_with_old
	[policy, msg] in old_judged
}

old_judged := old if {
	old := judged with input.review.object as input.review.oldObject with input.review.operation as "CREATE"
}

violation contains {"msg": concat(": ", [policy, sprintf("[%v] %v", [where, msg])]), "details": {"policy": policy}} if {
	some where, found in template_violations
	some [policy, msg] in found
	not template_kept(policy, where, msg)
}

template_kept(policy, where, msg) if {
	accelc.kueue_update
	old := accelc.template_pods[where] with input.review.object as input.review.oldObject
	[policy, msg] in judged with input.review.object as old with input.review.operation as "CREATE" with input.review.fromTemplate as true
}

# (A pod holds no template: its review skips template_pods' rules.)
template_violations[where] := found if {
	input.review.object.kind != "Pod"
	some where, pod in accelc.template_pods
	not accelc.template_kept(where, pod)
	found := judged with input.review.object as pod with input.review.operation as "CREATE" with input.review.fromTemplate as true
}
`

// AdmissionParams are the admission constraint's parameters: every
// policy's, each once, in policy order, then forecast (true on the
// constraints of namespaces that do not deny, where no mutator runs: the
// library judges their pods as the mutators would have changed them).
func AdmissionParams() []string {
	var params []string
	for _, p := range All {
		for _, k := range p.Params {
			if !slices.Contains(params, k) {
				params = append(params, k)
			}
		}
	}
	return append(params, "forecast")
}

// AcceleratorLabelPrefixes are the node labels that pick out accelerator
// nodes besides accelc's own (accelerator_label_prefixes in
// lib/accelc.rego; a test keeps the two equal).
var AcceleratorLabelPrefixes = []string{
	"nvidia.com/",
	"amd.com/",
	"beta.amd.com/",
	"habana.ai/",
	"gpu.intel.com/",
	"intel.feature.node.kubernetes.io/gpu",
	"feature.node.kubernetes.io/pci-",
	"cloud.google.com/gke-accelerator",
	"cloud.google.com/gke-gpu",
	"cloud.google.com/gke-tpu",
	"karpenter.k8s.aws/instance-gpu",
	"karpenter.k8s.aws/instance-accelerator",
	"k8s.amazonaws.com/accelerator",
}

// VisibilityEnv are the environment variables that make a container
// runtime hand devices to a container whatever it asked the device
// plugin for (visibility_env in lib/accelc.rego; a test keeps the two
// equal).
var VisibilityEnv = []string{
	"AMD_VISIBLE_DEVICES",
	"AWS_NEURON_VISIBLE_DEVICES",
	"HABANA_VISIBLE_DEVICES",
	"NVIDIA_MIG_CONFIG_DEVICES",
	"NVIDIA_MIG_MONITOR_DEVICES",
	"NVIDIA_VISIBLE_DEVICES",
}

// BaseResourcePrefixes are the accelerator resource prefixes the Rego
// library knows (base_prefixes in lib/accelc.rego; a test keeps the two
// equal). Resources of other catalog classes are passed to the policies
// as extraResourcePrefixes.
var BaseResourcePrefixes = []string{
	"nvidia.com/",
	"alpha.kubernetes.io/nvidia-gpu",
	"amd.com/",
	"habana.ai/",
	"gpu.intel.com/",
	"huawei.com/",
	"qualcomm.com/",
	"cambricon.com/",
	"hygon.com/",
	"metax-tech.com/",
	"iluvatar.ai/",
	"iluvatar.com/",
	"mthreads.com/",
	"enflame.com/",
	"enflame-tech.com/",
	"kunlunxin.com/",
	"baidu.com/xpu",
	"tenstorrent.com/",
	"birentech.com/",
	"vastaitech.com/",
	"xilinx.com/",
	"google.com/tpu",
	"cloud-tpus.google.com/",
	"aws.amazon.com/neuron",
	"deviceclass.resource.kubernetes.io/",
}

func template(name, kind, description, rego string, libs, params []string) map[string]any {
	props := map[string]any{}
	for _, name := range params {
		switch name {
		case "typeLabel", "labelPrefix", "profileNamespace":
			props[name] = map[string]any{"type": "string"}
		case "forecast":
			props[name] = map[string]any{"type": "boolean"}
		case "extraResourcePrefixes":
			props[name] = map[string]any{"type": "array", "items": map[string]any{"type": "string"}}
		default:
			props[name] = map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}
		}
	}
	libList := make([]any, len(libs))
	for i, l := range libs {
		libList[i] = l
	}
	return map[string]any{
		"apiVersion": "templates.gatekeeper.sh/v1",
		"kind":       "ConstraintTemplate",
		"metadata": map[string]any{
			"name":        name,
			"annotations": map[string]any{"description": description},
		},
		"spec": map[string]any{
			"crd": map[string]any{"spec": map[string]any{
				"names": map[string]any{"kind": kind},
				"validation": map[string]any{"openAPIV3Schema": map[string]any{
					"type":       "object",
					"properties": props,
				}},
			}},
			// Rego v1 syntax through `code`, the field Gatekeeper prefers
			// over the legacy `rego` (which is parsed as v0).
			"targets": []any{map[string]any{
				"target": "admission.k8s.gatekeeper.sh",
				"code": []any{map[string]any{
					"engine": "Rego",
					"source": map[string]any{
						"version": "v1",
						"rego":    rego,
						"libs":    libList,
					},
				}},
			}},
		},
	}
}
