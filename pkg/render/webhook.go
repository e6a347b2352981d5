package render

// accelc's mutating webhook, where the API server serves no
// MutatingAdmissionPolicy (before Kubernetes 1.36): its configuration,
// its serving certificate and what it is told to do.

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/accelc/accelc/pkg/compile"
)

// ProfileWebhookName names accelc's MutatingWebhookConfiguration, the
// ConfigMap of its mutations and its certificate. It sorts before
// Gatekeeper's and Kueue's webhook configurations, which the API server
// calls after it: Gatekeeper's mutators key on the profile label it
// writes, Kueue's webhook reads the queue label.
const ProfileWebhookName = "accelc-profile-label"

// AdmissionMutationsFile is the rendered ConfigMap that tells accelc's
// webhook what to do (AdmissionMutations, as JSON under
// AdmissionMutationsKey); the offline admission engine reads it too.
const (
	AdmissionMutationsFile = DirCatalogService + "/configmap-" + CatalogServiceName + "-admission.yaml"
	AdmissionMutationsKey  = "mutations.json"
)

// webhookPort is where accelc serve's webhook listens in its pod, and
// the Service's port for it.
const webhookPort = 9443

// webhookCertSecret is the Secret of the webhook's serving certificate
// that cert-manager writes.
const webhookCertSecret = CatalogServiceName + "-webhook-tls"

// profileWebhook adds accelc's mutating webhook to the catalog service
// on a cluster before 1.36 (compile.Cluster.ProfileWebhook): the
// Deployment's accelc serve also listens with --webhook-listen on
// webhookPort, over TLS, and is told what to do by a ConfigMap of
// AdmissionMutationsOf(m), mounted; the Service gets the port; the
// NetworkPolicy lets anyone reach that port (the API server is no pod a
// selector could name); a MutatingWebhookConfiguration sends it what
// 1.36's MutatingAdmissionPolicies match, and nothing else.
//
// The serving certificate: where catalogService.tls has OpenShift's
// service CA write the catalog's certificate (as on OpenShift, where Open
// Data Hub runs as Red Hat OpenShift AI), the webhook serves the same
// Secret, and the service CA injects its bundle into the configuration
// (service.beta.openshift.io/inject-cabundle). Elsewhere cert-manager
// (which Open Data Hub's operator itself needs off OpenShift) issues it:
// a self-signed Issuer and a Certificate for the Service's names, whose
// CA cert-manager's cainjector writes into the configuration
// (cert-manager.io/inject-ca-from).
func profileWebhook(m *compile.Model, ns string, labels map[string]string, deploy *appsv1.Deployment, service *corev1.Service, policy *networkingv1.NetworkPolicy) ([]Body, error) {
	a := AdmissionMutationsOf(m)
	if a.ProfileLabel == "" {
		return nil, nil
	}
	data, err := json.MarshalIndent(a, "", "  ")
	if err != nil {
		return nil, err
	}
	meta := func(n string) metav1.ObjectMeta { return metav1.ObjectMeta{Name: n, Namespace: ns, Labels: labels} }
	configMap := &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: meta(CatalogServiceName + "-admission"),
		Data:       map[string]string{AdmissionMutationsKey: string(data) + "\n"},
	}
	var bodies []Body
	secret := webhookCertSecret
	annotations := map[string]string{}
	if t := m.Cluster.CatalogService.TLS; t != nil && t.OpenShiftServiceCA {
		secret = t.SecretName
		annotations["service.beta.openshift.io/inject-cabundle"] = "true"
	} else {
		issuer := &certManagerObject{
			TypeMeta:   metav1.TypeMeta{APIVersion: "cert-manager.io/v1", Kind: "Issuer"},
			ObjectMeta: meta(CatalogServiceName + "-webhook"),
			Spec:       map[string]any{"selfSigned": map[string]any{}},
		}
		svc := CatalogServiceName + "." + ns + ".svc"
		cert := &certManagerObject{
			TypeMeta:   metav1.TypeMeta{APIVersion: "cert-manager.io/v1", Kind: "Certificate"},
			ObjectMeta: meta(CatalogServiceName + "-webhook"),
			Spec: map[string]any{
				"secretName": webhookCertSecret,
				"dnsNames":   []string{svc, svc + ".cluster.local"},
				"issuerRef":  map[string]any{"kind": "Issuer", "name": issuer.Name},
				"privateKey": map[string]any{"algorithm": "ECDSA", "size": 256, "rotationPolicy": "Always"},
			},
		}
		bodies = append(bodies, issuer, cert)
		annotations["cert-manager.io/inject-ca-from"] = ns + "/" + cert.Name
	}

	const mutationsDir, certDir = "/etc/accelc/admission", "/etc/accelc/webhook-tls"
	spec := &deploy.Spec.Template.Spec
	c := &spec.Containers[0]
	c.Args = append(c.Args, "--webhook-listen", fmt.Sprintf("0.0.0.0:%d", webhookPort),
		"--webhook-tls-cert-file", certDir+"/tls.crt", "--webhook-tls-key-file", certDir+"/tls.key",
		"--webhook-mutations", mutationsDir+"/"+AdmissionMutationsKey)
	c.Ports = append(c.Ports, corev1.ContainerPort{Name: "webhook", ContainerPort: webhookPort, Protocol: corev1.ProtocolTCP})
	c.VolumeMounts = append(c.VolumeMounts,
		corev1.VolumeMount{Name: "admission", MountPath: mutationsDir, ReadOnly: true},
		corev1.VolumeMount{Name: "webhook-tls", MountPath: certDir, ReadOnly: true})
	spec.Volumes = append(spec.Volumes,
		corev1.Volume{Name: "admission", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: configMap.Name}}}},
		corev1.Volume{Name: "webhook-tls", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: secret}}})
	service.Spec.Ports = append(service.Spec.Ports, corev1.ServicePort{Name: "webhook", Port: webhookPort, TargetPort: intstr.FromString("webhook"), Protocol: corev1.ProtocolTCP})
	policy.Spec.Ingress = append(policy.Spec.Ingress, networkingv1.NetworkPolicyIngressRule{
		Ports: []networkingv1.NetworkPolicyPort{{Protocol: ref(corev1.ProtocolTCP), Port: ref(intstr.FromInt32(webhookPort))}},
	})

	config := ProfileWebhookConfiguration(m, &a, admissionregistrationv1.WebhookClientConfig{
		Service: &admissionregistrationv1.ServiceReference{Namespace: ns, Name: CatalogServiceName, Path: ref("/mutate"), Port: ref(int32(webhookPort))},
	})
	config.Annotations = annotations
	config.Labels = labels
	return append([]Body{configMap, config}, bodies...), nil
}

// certManagerObject is a cert-manager Issuer or Certificate.
type certManagerObject struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              map[string]any `json:"spec"`
}

// ProfileWebhookConfiguration is accelc's MutatingWebhookConfiguration
// for what a does, calling client: one webhook per
// MutatingAdmissionPolicy it stands for, with its rules (kinds,
// operations) and the namespaceSelector of its binding, and
// matchConditions that send only what it would change: a pod that names
// its profile by Open Data Hub's annotation and has no profile label, a
// workload one of whose templates (or, for a Notebook, itself) does, a
// new Job whose template names a queued profile in a namespace where the
// profile is queued, a new Job or pod that names a profile with a
// topology and has none of Kueue's topology annotations (on the Job's
// template). It fails closed, as the policies do: see
// docs/policies.md, "Before Kubernetes 1.36".
func ProfileWebhookConfiguration(m *compile.Model, a *AdmissionMutations, client admissionregistrationv1.WebhookClientConfig) *admissionregistrationv1.MutatingWebhookConfiguration {
	label := a.ProfileLabel
	webhook := func(name string, rules []admissionregistrationv1.RuleWithOperations, conditions ...admissionregistrationv1.MatchCondition) admissionregistrationv1.MutatingWebhook {
		return admissionregistrationv1.MutatingWebhook{
			Name:                    name,
			ClientConfig:            client,
			Rules:                   rules,
			FailurePolicy:           ref(admissionregistrationv1.Fail),
			MatchPolicy:             ref(admissionregistrationv1.Equivalent),
			NamespaceSelector:       orEverything(a.NamespaceSelector),
			ObjectSelector:          &metav1.LabelSelector{},
			SideEffects:             ref(admissionregistrationv1.SideEffectClassNone),
			TimeoutSeconds:          ref(int32(5)),
			AdmissionReviewVersions: []string{"v1"},
			ReinvocationPolicy:      ref(admissionregistrationv1.NeverReinvocationPolicy),
			MatchConditions:         append(notExcluded(a.ExcludedGlobs), conditions...),
		}
	}
	create := []admissionregistrationv1.OperationType{admissionregistrationv1.Create}
	hooks := []admissionregistrationv1.MutatingWebhook{webhook("pods.profile-label.accelc.io",
		[]admissionregistrationv1.RuleWithOperations{{Operations: create, Rule: admissionregistrationv1.Rule{
			APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods"}, Scope: ref(admissionregistrationv1.NamespacedScope)}}},
		admissionregistrationv1.MatchCondition{Name: "names-profile-by-annotation-only", Expression: unlabelled(nil, label)})}

	// One webhook per workload policy (workloadLabelPolicies), each
	// with the kinds it matches and the templates they hold.
	var policies []string
	for _, w := range WorkloadKinds {
		if w.Policy != "" && !slices.Contains(policies, w.Policy) {
			policies = append(policies, w.Policy)
		}
	}
	for _, policy := range policies {
		var rules []admissionregistrationv1.RuleWithOperations
		var paths [][]string
		for _, w := range WorkloadKinds {
			if w.Policy != policy {
				continue
			}
			ops := slices.Clone(create)
			if !w.CreateOnly {
				ops = append(ops, admissionregistrationv1.Update)
			}
			rules = append(rules, admissionregistrationv1.RuleWithOperations{Operations: ops, Rule: admissionregistrationv1.Rule{
				APIGroups: []string{w.Group}, APIVersions: w.Versions, Resources: []string{w.Resource}, Scope: ref(admissionregistrationv1.NamespacedScope)}})
			if w.ObjectLabels {
				paths = append(paths, nil)
				continue
			}
			for _, t := range w.Templates {
				if !slices.ContainsFunc(paths, func(p []string) bool { return slices.Equal(p, t.Path) }) {
					paths = append(paths, t.Path)
				}
			}
		}
		var conds []string
		for _, p := range paths {
			conds = append(conds, unlabelled(p, label))
		}
		expr := conds[0]
		if len(conds) > 1 {
			expr = "(" + strings.Join(conds, ") || (") + ")"
		}
		hooks = append(hooks, webhook(policy+".profile-label.accelc.io", rules,
			admissionregistrationv1.MatchCondition{Name: "names-profile-by-annotation-only", Expression: expr}))
	}

	for _, f := range KueueJobFrameworks {
		muts := a.JobQueues[f.Group+"/"+f.Kind]
		if len(muts) == 0 {
			continue
		}
		w, _ := WorkloadKindOf(f.Group, f.Kind)
		var profiles, namespaces []string
		for _, g := range muts {
			profiles = append(profiles, strconv.Quote(g.Profile))
			for _, ns := range g.Namespaces {
				namespaces = append(namespaces, strconv.Quote(ns))
			}
		}
		slices.Sort(profiles)
		slices.Sort(namespaces)
		hooks = append(hooks, webhook(strings.ToLower(f.Kind)+"s.job-queue.accelc.io",
			[]admissionregistrationv1.RuleWithOperations{{Operations: create, Rule: admissionregistrationv1.Rule{
				APIGroups: []string{w.Group}, APIVersions: w.Versions, Resources: []string{w.Resource}, Scope: ref(admissionregistrationv1.NamespacedScope)}}},
			admissionregistrationv1.MatchCondition{Name: "template-names-queued-profile", Expression: fmt.Sprintf("request.namespace in [%s] && (%s) in [%s]",
				strings.Join(slices.Compact(namespaces), ", "), gangProfile(w.Templates[0].Path, label), strings.Join(slices.Compact(profiles), ", "))}))
	}
	if len(a.Topology) > 0 {
		var jobs, pods []string
		for _, t := range a.Topology {
			jobs = append(jobs, topologyUnset([]string{"spec", "template", "metadata"}, jobProfileNames(label), t))
			pods = append(pods, topologyUnset([]string{"metadata"}, podProfileNames(label), t))
		}
		hooks = append(hooks, webhook("jobs.topology.accelc.io",
			[]admissionregistrationv1.RuleWithOperations{{Operations: create, Rule: admissionregistrationv1.Rule{
				APIGroups: []string{"batch"}, APIVersions: []string{"v1"}, Resources: []string{"jobs"}, Scope: ref(admissionregistrationv1.NamespacedScope)}}},
			admissionregistrationv1.MatchCondition{Name: "names-profile-with-topology", Expression: "(" + strings.Join(jobs, ") || (") + ")"}),
			webhook("pods.topology.accelc.io",
				[]admissionregistrationv1.RuleWithOperations{{Operations: create, Rule: admissionregistrationv1.Rule{
					APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods"}, Scope: ref(admissionregistrationv1.NamespacedScope)}}},
				admissionregistrationv1.MatchCondition{Name: "names-profile-with-topology", Expression: "(" + strings.Join(pods, ") || (") + ")"}))
	}
	return &admissionregistrationv1.MutatingWebhookConfiguration{
		TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "MutatingWebhookConfiguration"},
		ObjectMeta: metav1.ObjectMeta{Name: ProfileWebhookName, Labels: managedLabels(m.Cluster.Name)},
		Webhooks:   hooks,
	}
}

// unlabelled is the CEL condition that the object (path nil) or the pod
// template at path names its profile by Open Data Hub's annotation and
// has no profile label.
func unlabelled(path []string, label string) string {
	md := append(slices.Clone(path), "metadata")
	ann := append(slices.Clone(md), "annotations")
	lbl := append(slices.Clone(md), "labels")
	return fmt.Sprintf("%s && %q in %s && !(%s && %q in %s)", has(ann), ProfileAnnotation, celPath(ann), has(lbl), label, celPath(lbl))
}

// orEverything is a selector, an empty one (every namespace) for nil.
func orEverything(s *metav1.LabelSelector) *metav1.LabelSelector {
	if s == nil {
		return &metav1.LabelSelector{}
	}
	return s
}
