package accelc

// Reading what status shows from the API server: discovery, then lists
// decoded into status_objects.go's few fields, without API types.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/rest"

	"github.com/accelc/accelc/pkg/inventory/live"
	"github.com/accelc/accelc/pkg/render"
)

// The API groups status reads, and the versions accelc renders.
const (
	groupTemplates   = "templates.gatekeeper.sh"
	groupConstraints = "constraints.gatekeeper.sh"
	groupMutations   = "mutations.gatekeeper.sh"
	groupKueue       = "kueue.x-k8s.io"
	groupSource      = "source.toolkit.fluxcd.io"
	groupKustomize   = "kustomize.toolkit.fluxcd.io"

	// render writes Kueue's objects as v1beta2 and Flux's as v1; status
	// reads those versions where they are served, else the group's
	// preferred one (Kueue's v1beta1 names a ClusterQueue's cohort
	// spec.cohort, which status reads too).
	kueueVersion = "v1beta2"
	fluxVersion  = "v1"
)

// statusPageSize is how many objects one list request asks for.
const statusPageSize = 500

// kube reads the API server as status needs it: discovery, and lists as
// JSON decoded into the few fields status shows. No API types are
// linked: client-go's REST client, its kubeconfig handling (through
// live.Config) and its errors.
type kube struct {
	c      *rest.RESTClient
	redact func(error) error
	// groups are the served API groups by name.
	groups map[string]metav1.APIGroup
	// denied are the lists RBAC refused, by API group.
	denied map[string][]string
}

// connect resolves the kubeconfig as --live does. cluster is the
// kubeconfig's name for the cluster.
func connect(opts live.Options) (*kube, string, error) {
	cfg, cluster, redact, err := live.Config(opts)
	if err != nil {
		// live names the kubeconfig's problems after its --live flag,
		// which status does not have; the message is redacted already.
		msg := err.Error()
		if rest, ok := strings.CutPrefix(msg, "--live: "); ok {
			msg = rest
		} else if rest, ok := strings.CutPrefix(msg, "--live ("); ok {
			msg = "the kubeconfig (" + rest
		}
		return nil, "", errors.New(msg)
	}
	c, err := jsonClient(cfg)
	if err != nil {
		return nil, "", redact(err)
	}
	return &kube{c: c, redact: redact, denied: map[string][]string{}}, cluster, nil
}

// jsonClient is a REST client for cfg's server that reads any path as
// JSON.
func jsonClient(cfg *rest.Config) (*rest.RESTClient, error) {
	cfg = rest.CopyConfig(cfg)
	// Custom resources are served as JSON only.
	cfg.ContentType = "application/json"
	cfg.AcceptContentTypes = "application/json"
	cfg.APIPath = "/apis"
	cfg.GroupVersion = &schema.GroupVersion{}
	// Only errors are decoded by client-go: a metav1.Status.
	scheme := runtime.NewScheme()
	metav1.AddToGroupVersion(scheme, schema.GroupVersion{Version: "v1"})
	cfg.NegotiatedSerializer = serializer.NewCodecFactory(scheme).WithoutConversion()
	return rest.RESTClientFor(cfg)
}

// get reads path into v.
func (k *kube) get(ctx context.Context, path string, v any) error {
	body, err := k.c.Get().AbsPath(path).Do(ctx).Raw()
	if err != nil {
		return err
	}
	return json.Unmarshal(body, v)
}

// fail is what a failed request becomes: a denial is noted (every one is
// reported at the end, with its API group and resource) and the read goes
// on; anything else ends it, naming the server and context without
// credentials.
func (k *kube) fail(group, resource string, err error) error {
	if apierrors.IsForbidden(err) {
		if !slices.Contains(k.denied[group], resource) {
			k.denied[group] = append(k.denied[group], resource)
		}
		return nil
	}
	what := resource
	if group != "" {
		what += "." + group
	}
	return k.redact(fmt.Errorf("listing %s: %w", what, err))
}

// deniedError is every denial, as one error an admin can turn into a
// ClusterRole.
func (k *kube) deniedError() error {
	if len(k.denied) == 0 {
		return nil
	}
	var b strings.Builder
	b.WriteString(`forbidden: this user may not list what status reads (RBAC verb "list", cluster-wide): bind it to a ClusterRole that allows these, or use another --context:`)
	for _, g := range slices.Sorted(maps.Keys(k.denied)) {
		rs := slices.Sorted(slices.Values(k.denied[g]))
		fmt.Fprintf(&b, "\n  API group %s: %s", strconv.Quote(g), strings.Join(rs, ", "))
	}
	// A plain error: live's explanation of a single denial would name
	// one resource.
	return k.redact(errors.New(b.String()))
}

// version is the version of group to read: want where it is served,
// else the group's preferred one; "" when the group is not served.
func (k *kube) version(group, want string) string {
	g, ok := k.groups[group]
	if !ok {
		return ""
	}
	for _, v := range g.Versions {
		if v.Version == want {
			return want
		}
	}
	return g.PreferredVersion.Version
}

// resources are the kinds a group version serves, by resource name,
// without subresources.
func (k *kube) resources(ctx context.Context, group, version string) (map[string]string, error) {
	var list metav1.APIResourceList
	if err := k.get(ctx, "/apis/"+group+"/"+version, &list); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, k.fail(group, "(discovery)", err)
	}
	out := map[string]string{}
	for _, r := range list.APIResources {
		if !strings.Contains(r.Name, "/") {
			out[r.Name] = r.Kind
		}
	}
	return out, nil
}

// list lists a resource cluster-wide, page by page, passing each item to
// each. ok is false when the resource is not served or may not be
// listed (a denial is noted).
func (k *kube) list(ctx context.Context, group, version, resource, selector string, each func(json.RawMessage) error) (ok bool, err error) {
	err = k.pages(ctx, "/apis/"+group+"/"+version+"/"+resource, selector, each)
	var undecoded *pageError
	switch {
	case err == nil:
		return true, nil
	case errors.As(err, &undecoded) && undecoded.item:
		return false, k.redact(fmt.Errorf("decoding one of the %s.%s: %w", resource, group, undecoded.err))
	case errors.As(err, &undecoded):
		return false, k.redact(fmt.Errorf("decoding the %s.%s list: %w", resource, group, undecoded.err))
	case apierrors.IsNotFound(err):
		return false, nil
	default:
		return false, k.fail(group, resource, err)
	}
}

// pages GETs the list at path page by page (statusPageSize items a page,
// with the label selector), passing each item to each. The API server's
// error comes back as it is; a page or an item that cannot be decoded is
// a pageError.
func (k *kube) pages(ctx context.Context, path, selector string, each func(json.RawMessage) error) error {
	cont := ""
	for {
		req := k.c.Get().AbsPath(path).Param("limit", strconv.Itoa(statusPageSize))
		if selector != "" {
			req = req.Param("labelSelector", selector)
		}
		if cont != "" {
			req = req.Param("continue", cont)
		}
		body, err := req.Do(ctx).Raw()
		if err != nil {
			return err
		}
		var page struct {
			Metadata struct {
				Continue string `json:"continue"`
			} `json:"metadata"`
			Items []json.RawMessage `json:"items"`
		}
		if err := json.Unmarshal(body, &page); err != nil {
			return &pageError{err: err}
		}
		for _, item := range page.Items {
			if err := each(item); err != nil {
				return &pageError{item: true, err: err}
			}
		}
		if cont = page.Metadata.Continue; cont == "" {
			return nil
		}
	}
}

// pageError is a list page (or one of its items, item) that could not be
// decoded.
type pageError struct {
	item bool
	err  error
}

func (e *pageError) Error() string { return e.err.Error() }

func (e *pageError) Unwrap() error { return e.err }

// listInto lists a resource into a slice of T.
func listInto[T any](ctx context.Context, k *kube, group, version, resource, selector string, out *[]T) (bool, error) {
	return k.list(ctx, group, version, resource, selector, func(item json.RawMessage) error {
		var v T
		if err := json.Unmarshal(item, &v); err != nil {
			return err
		}
		*out = append(*out, v)
		return nil
	})
}

// read reads what status shows. With entitlements it also reads the
// NamespaceEntitlements, to map namespaces to teams.
func (k *kube) read(ctx context.Context, entitlements bool) (*clusterObjects, error) {
	var groups metav1.APIGroupList
	if err := k.get(ctx, "/apis", &groups); err != nil {
		if apierrors.IsForbidden(err) {
			// Kubernetes lets every authenticated user read it (the
			// system:discovery ClusterRole); the message is flattened so
			// that it is not read as a denial to list nodes.
			err = fmt.Errorf("forbidden: this user may not read the API groups (GET /apis, which the system:discovery ClusterRole allows): %v", err)
		}
		return nil, k.redact(fmt.Errorf("reading the API groups: %w", err))
	}
	k.groups = map[string]metav1.APIGroup{}
	for _, g := range groups.Groups {
		k.groups[g.Name] = g
	}
	objs := &clusterObjects{mutators: map[string]int{}}
	for _, step := range []func(context.Context, *clusterObjects) error{
		k.readGatekeeper,
		k.readKueue,
		k.readFlux,
	} {
		if err := step(ctx, objs); err != nil {
			return nil, err
		}
	}
	if entitlements {
		if err := k.readEntitlements(ctx, objs); err != nil {
			return nil, err
		}
	}
	return objs, k.deniedError()
}

// readGatekeeper reads accelc's constraints, of whatever kinds the
// constraints group serves (one per ConstraintTemplate), and counts its
// mutators.
func (k *kube) readGatekeeper(ctx context.Context, objs *clusterObjects) error {
	_, objs.gatekeeper = k.groups[groupTemplates]
	if v := k.version(groupConstraints, ""); v != "" {
		kinds, err := k.resources(ctx, groupConstraints, v)
		if err != nil {
			return err
		}
		for _, res := range slices.Sorted(maps.Keys(kinds)) {
			kind := kinds[res]
			_, err := k.list(ctx, groupConstraints, v, res, managedBy, func(item json.RawMessage) error {
				var c constraintObject
				if err := json.Unmarshal(item, &c); err != nil {
					return err
				}
				c.Kind = kind
				objs.constraints = append(objs.constraints, c)
				return nil
			})
			if err != nil {
				return err
			}
		}
	}
	v := k.version(groupMutations, "")
	if v == "" {
		return nil
	}
	kinds, err := k.resources(ctx, groupMutations, v)
	if err != nil {
		return err
	}
	for _, res := range slices.Sorted(maps.Keys(kinds)) {
		kind := kinds[res]
		_, err := k.list(ctx, groupMutations, v, res, managedBy, func(json.RawMessage) error {
			objs.mutators[kind]++
			return nil
		})
		if err != nil {
			return err
		}
	}
	// How Gatekeeper's mutating webhook is registered; a reader who may
	// not read webhook configurations learns nothing of it, and nothing
	// is said.
	var hook mutatingWebhookConfiguration
	if err := k.get(ctx, "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/"+gatekeeperMutatingWebhook, &hook); err == nil {
		objs.mutatingWebhook = &hook
	}
	var validating mutatingWebhookConfiguration // the same fields
	if err := k.get(ctx, "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/"+gatekeeperValidatingWebhook, &validating); err == nil {
		objs.validatingWebhook = &validating
	}
	objs.podAdmission = k.podAdmission(ctx)
	objs.ignored, _ = k.ignoredNamespaces(ctx)
	return nil
}

// ignoredNamespaces are the namespaces labelled
// admission.gatekeeper.sh/ignore, sorted; read is false where they could
// not be listed (a reader who may not list namespaces learns nothing of
// them, and status is not refused for it).
func (k *kube) ignoredNamespaces(ctx context.Context) (names []string, read bool) {
	err := k.pages(ctx, "/api/v1/namespaces", render.GatekeeperIgnoreLabel, func(item json.RawMessage) error {
		var ns struct {
			Metadata objectMeta `json:"metadata"`
		}
		if err := json.Unmarshal(item, &ns); err != nil {
			return err
		}
		names = append(names, ns.Metadata.Name)
		return nil
	})
	if err != nil {
		return nil, false
	}
	slices.Sort(names)
	return names, true
}

// checkIgnoreLabelWebhook is the webhook Gatekeeper's chart registers
// beside its validating one: it refuses admission.gatekeeper.sh/ignore
// on a namespace Gatekeeper does not exempt (--exempt-namespace).
const checkIgnoreLabelWebhook = "check-ignore-label.gatekeeper.sh"

// ignoreLabelUnguarded says why nothing keeps a team from labelling its
// own namespace admission.gatekeeper.sh/ignore ("" where Gatekeeper's
// check-ignore-label webhook fails closed and its rules send namespaces'
// CREATE and UPDATE; its namespace selector, which the chart narrows to
// every namespace but Gatekeeper's own, is not read).
func (h mutatingWebhookConfiguration) ignoreLabelUnguarded() string {
	for _, w := range h.Webhooks {
		if w.Name != checkIgnoreLabelWebhook {
			continue
		}
		if w.FailurePolicy != nil && *w.FailurePolicy == string(admissionregistrationv1.Ignore) {
			return "registers " + checkIgnoreLabelWebhook + " with failurePolicy Ignore: while Gatekeeper does not answer, the label is not checked"
		}
		for _, op := range []string{"CREATE", "UPDATE"} {
			sent := false
			for _, r := range w.Rules {
				if (slices.Contains(r.Operations, op) || slices.Contains(r.Operations, "*")) &&
					(slices.Contains(r.APIGroups, "") || slices.Contains(r.APIGroups, "*")) &&
					(slices.Contains(r.Resources, "namespaces") || slices.Contains(r.Resources, "*")) {
					sent = true
				}
			}
			if !sent {
				return "registers " + checkIgnoreLabelWebhook + " without namespaces' " + op + " in its rules"
			}
		}
		return ""
	}
	return "has no " + checkIgnoreLabelWebhook + " webhook"
}

// namespace is Gatekeeper's namespace, as its webhooks' Service names it
// ("" where they call a URL).
func (h mutatingWebhookConfiguration) namespace() string {
	for _, w := range h.Webhooks {
		if svc := w.ClientConfig.Service; svc != nil && svc.Namespace != "" {
			return svc.Namespace
		}
	}
	return ""
}

// skipsJudgedPods says whether a webhook's match condition is the one
// accelc's values give it on Kubernetes 1.36, which sends the common GPU
// pod to accelc-pod-admission instead (render.GatekeeperInstallValues).
func (h mutatingWebhookConfiguration) skipsJudgedPods() bool {
	for _, w := range h.Webhooks {
		if slices.Contains(w.MatchConditions, webhookMatchCondition{Name: "pods-judged-by-" + render.PodAdmissionPolicyName}) {
			return true
		}
	}
	return false
}

// podAdmission reads what the API server holds of accelc-pod-admission:
// the policy and its bindings, with their actions; nothing (read false)
// where the reader may not read them.
func (k *kube) podAdmission(ctx context.Context) podAdmissionObjects {
	const base = "/apis/admissionregistration.k8s.io/v1/"
	var pa podAdmissionObjects
	for name, there := range map[string]*bool{render.PodAdmissionPolicyName: &pa.policy, render.UnknownProfilePolicyName: &pa.unknownPolicy} {
		var policy struct{}
		switch err := k.get(ctx, base+"validatingadmissionpolicies/"+name, &policy); {
		case err == nil:
			*there = true
		case !apierrors.IsNotFound(err):
			return podAdmissionObjects{}
		}
	}
	var bindings struct {
		Items []struct {
			Spec struct {
				PolicyName        string   `json:"policyName"`
				ValidationActions []string `json:"validationActions"`
				ParamRef          *struct {
					ParameterNotFoundAction string `json:"parameterNotFoundAction"`
				} `json:"paramRef"`
				MatchResources struct {
					ObjectSelector metav1.LabelSelector `json:"objectSelector"`
				} `json:"matchResources"`
			} `json:"spec"`
		} `json:"items"`
	}
	if err := k.get(ctx, base+"validatingadmissionpolicybindings", &bindings); err != nil {
		return podAdmissionObjects{}
	}
	pa.read = true
	pa.bound = map[string]string{}
	for _, b := range bindings.Items {
		switch b.Spec.PolicyName {
		case render.PodAdmissionPolicyName:
			pa.bindings++
			var lax string
			switch {
			case !slices.Contains(b.Spec.ValidationActions, "Deny"):
				lax = "validationActions [" + strings.Join(b.Spec.ValidationActions, ", ") + "]"
			case b.Spec.ParamRef != nil && b.Spec.ParamRef.ParameterNotFoundAction == "Allow":
				lax = "parameterNotFoundAction Allow"
				pa.denying++
			default:
				pa.denying++
			}
			for key, profile := range b.Spec.MatchResources.ObjectSelector.MatchLabels {
				if why, seen := pa.bound[profile]; strings.HasSuffix(key, "/profile") && (!seen || why != "") {
					pa.bound[profile] = lax
				}
			}
		case render.UnknownProfilePolicyName:
			pa.unknownBinding = true
			for _, r := range b.Spec.MatchResources.ObjectSelector.MatchExpressions {
				if r.Operator == metav1.LabelSelectorOpNotIn && strings.HasSuffix(r.Key, "/profile") {
					pa.unknownLeaves = append(pa.unknownLeaves, r.Values...)
				}
			}
		}
	}
	return pa
}

// gatekeeperValidatingWebhook is the ValidatingWebhookConfiguration
// Gatekeeper's chart installs.
const gatekeeperValidatingWebhook = "gatekeeper-validating-webhook-configuration"

// receivesEverything says whether a rule sends every resource of every
// API group to the webhook (Gatekeeper's default rules).
func (h mutatingWebhookConfiguration) receivesEverything() bool {
	for _, w := range h.Webhooks {
		for _, r := range w.Rules {
			if slices.Contains(r.APIGroups, "*") && slices.Contains(r.Resources, "*") {
				return true
			}
		}
	}
	return false
}

// gatekeeperMutatingWebhook is the MutatingWebhookConfiguration
// Gatekeeper's chart installs.
const gatekeeperMutatingWebhook = "gatekeeper-mutating-webhook-configuration"

// mutatingWebhookConfiguration is what status reads of one: its rules
// and the names of its match conditions.
type mutatingWebhookConfiguration struct {
	Webhooks []struct {
		Name string `json:"name"`
		// ClientConfig names the Service the webhook calls, in
		// Gatekeeper's namespace (none where it calls a URL).
		ClientConfig struct {
			Service *struct {
				Namespace string `json:"namespace"`
			} `json:"service"`
		} `json:"clientConfig"`
		// FailurePolicy is nil where the API server's default (Fail)
		// holds.
		FailurePolicy *string `json:"failurePolicy"`
		Rules         []struct {
			Operations []string `json:"operations"`
			APIGroups  []string `json:"apiGroups"`
			Resources  []string `json:"resources"`
		} `json:"rules"`
		MatchConditions []webhookMatchCondition `json:"matchConditions"`
		ObjectSelector  *metav1.LabelSelector   `json:"objectSelector"`
	} `json:"webhooks"`
}

// webhookMatchCondition is what status reads of a match condition.
type webhookMatchCondition struct {
	Name string `json:"name"`
}

// mutatesPods says whether a rule sends new pods to the webhook, unless
// the webhook's object selector meets no object or a match condition is
// the one accelc's values give it on Kubernetes 1.36, which keeps them to
// accelc-pod-profile (render.GatekeeperInstallValues).
func (h mutatingWebhookConfiguration) mutatesPods() bool {
	return h.sendsPods("CREATE", func(conds []webhookMatchCondition) bool {
		return slices.Contains(conds, webhookMatchCondition{Name: "pods-mutated-by-" + render.PodProfilePolicyName})
	})
}

// mutatesPodUpdates says whether a rule sends pod UPDATEs to the webhook.
func (h mutatingWebhookConfiguration) mutatesPodUpdates() bool {
	return h.sendsPods("UPDATE", func([]webhookMatchCondition) bool { return false })
}

// sendsPods says whether a rule of a webhook whose object selector can
// be met and whose match conditions do not keep pods away (kept) sends
// pods under operation op.
func (h mutatingWebhookConfiguration) sendsPods(op string, kept func([]webhookMatchCondition) bool) bool {
	return h.sends(op, "", "pods", kept)
}

// sends says whether a rule of a webhook whose object selector can be met
// and whose match conditions do not keep them away (kept) sends objects
// of the API group's resource under operation op.
func (h mutatingWebhookConfiguration) sends(op, group, resource string, kept func([]webhookMatchCondition) bool) bool {
	for _, w := range h.Webhooks {
		if kept(w.MatchConditions) || meetsNothing(w.ObjectSelector) {
			continue
		}
		for _, r := range w.Rules {
			if (slices.Contains(r.Operations, op) || slices.Contains(r.Operations, "*")) &&
				(slices.Contains(r.APIGroups, group) || slices.Contains(r.APIGroups, "*")) &&
				(slices.Contains(r.Resources, resource) || slices.Contains(r.Resources, "*")) {
				return true
			}
		}
	}
	return false
}

// meetsNothing says whether no object's labels can meet the selector:
// one of its keys both required and forbidden.
func meetsNothing(sel *metav1.LabelSelector) bool {
	if sel == nil {
		return false
	}
	exists, absent := map[string]bool{}, map[string]bool{}
	for k := range sel.MatchLabels {
		exists[k] = true
	}
	for _, r := range sel.MatchExpressions {
		switch r.Operator {
		case metav1.LabelSelectorOpExists, metav1.LabelSelectorOpIn:
			exists[r.Key] = true
		case metav1.LabelSelectorOpDoesNotExist:
			absent[r.Key] = true
		}
	}
	for k := range exists {
		if absent[k] {
			return true
		}
	}
	return false
}

// readKueue reads accelc's ClusterQueues, Cohorts and LocalQueues, and
// every Workload (Kueue makes them; accelc's LocalQueues pick them out).
func (k *kube) readKueue(ctx context.Context, objs *clusterObjects) error {
	v := k.version(groupKueue, kueueVersion)
	if v == "" {
		return nil
	}
	objs.kueue, objs.kueueVersion = true, groupKueue+"/"+v
	if _, err := listInto(ctx, k, groupKueue, v, "clusterqueues", managedBy, &objs.clusterQueues); err != nil {
		return err
	}
	if _, err := listInto(ctx, k, groupKueue, v, "cohorts", managedBy, &objs.cohorts); err != nil {
		return err
	}
	if _, err := listInto(ctx, k, groupKueue, v, "localqueues", managedBy, &objs.localQueues); err != nil {
		return err
	}
	_, err := listInto(ctx, k, groupKueue, v, "workloads", "", &objs.workloads)
	return err
}

// readFlux reads accelc's OCIRepositories and Kustomizations.
func (k *kube) readFlux(ctx context.Context, objs *clusterObjects) error {
	v := k.version(groupSource, fluxVersion)
	if v == "" {
		return nil
	}
	objs.flux = true
	if _, err := listInto(ctx, k, groupSource, v, "ocirepositories", managedBy, &objs.sources); err != nil {
		return err
	}
	if kv := k.version(groupKustomize, fluxVersion); kv != "" {
		if _, err := listInto(ctx, k, groupKustomize, kv, "kustomizations", managedBy, &objs.kustomizations); err != nil {
			return err
		}
	}
	return nil
}

// readEntitlements maps namespaces to teams through accelc's
// NamespaceEntitlements, each named after its namespace.
func (k *kube) readEntitlements(ctx context.Context, objs *clusterObjects) error {
	v := k.version(render.EntitlementGroup, render.EntitlementVersion)
	if v == "" {
		return nil
	}
	var ents []entitlementObject
	ok, err := listInto(ctx, k, render.EntitlementGroup, v, "namespaceentitlements", "", &ents)
	if err != nil || !ok {
		return err
	}
	objs.entitlements = map[string]string{}
	for _, e := range ents {
		objs.entitlements[e.Metadata.Name] = e.Spec.Team
	}
	return nil
}
