package render

// The catalog service's objects: accelc serve's Deployment, Service,
// RBAC, disruption budget and leader election, sized by the inventory.

import (
	"fmt"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/accelc/accelc/pkg/compile"
	"github.com/accelc/accelc/pkg/inventory"
)

// DirCatalogService holds accelc serve as the cluster runs it.
const DirCatalogService = "catalog-service"

// CatalogServiceName names every object of the catalog service.
const CatalogServiceName = "accelc-catalog"

// catalogServicePort is the port accelc serve listens on in its pod;
// catalogServiceTLSPort with tls.
const (
	catalogServicePort    = 8080
	catalogServiceTLSPort = 8443
)

// serviceCAAnnotation has OpenShift's service CA write a serving
// certificate for the Service into the Secret it names.
const serviceCAAnnotation = "service.beta.openshift.io/serving-cert-secret-name"

// catalogServiceObjects renders accelc serve --live in the cluster: its
// namespace (Pod Security restricted, enforced), the evaluated
// configuration it compiles (compile.Model.Configuration, in a
// ConfigMap, reloaded when it changes), a ServiceAccount whose
// ClusterRole may only get, list and watch nodes, pods and ResourceSlices,
// bound as well to system:auth-delegator (create TokenReviews and
// SubjectAccessReviews: it asks the cluster who each request is and what
// it may read, as aggregated API servers do), a Deployment that runs as
// no one with a read-only root, probes on /healthz and /readyz, with
// several replicas a PodDisruptionBudget that keeps one up, a Service
// (HTTPS from a Secret with tls), and a NetworkPolicy that lets in only
// the profile namespace's pods and those of allowFrom.
func catalogServiceObjects(m *compile.Model, inv *inventory.Inventory) ([]Object, error) {
	cs := m.Cluster.CatalogService
	if cs == nil {
		return nil, nil
	}
	config, err := m.Configuration()
	if err != nil {
		return nil, err
	}
	memory, set := cs.MemoryLimit()
	if !set {
		memory = CatalogServiceMemory(len(inv.Nodes))
	}
	name, ns := CatalogServiceName, cs.Namespace
	labels := managedLabels(m.Cluster.Name)
	selector := map[string]string{"app.kubernetes.io/name": name, "app.kubernetes.io/component": "catalog-service"}
	podLabels := merge(labels, selector)
	meta := func(n string) metav1.ObjectMeta { return metav1.ObjectMeta{Name: n, Namespace: ns, Labels: labels} }
	src := []string{"cluster", "catalogService"}

	namespace := &corev1.Namespace{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
		ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: merge(labels, map[string]string{
			"pod-security.kubernetes.io/enforce":         "restricted",
			"pod-security.kubernetes.io/enforce-version": "latest",
		})},
	}
	configMap := &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: meta(name + "-config"),
		Data:       map[string]string{"cluster.cue": string(config)},
	}
	sa := &corev1.ServiceAccount{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ServiceAccount"},
		ObjectMeta: meta(name),
		// It reads with RBAC through its own token; nothing else in the
		// pod needs one.
		AutomountServiceAccountToken: ref(true),
	}
	read := []string{"get", "list", "watch"}
	role := &rbacv1.ClusterRole{
		TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"nodes", "pods"}, Verbs: read},
			{APIGroups: []string{"resource.k8s.io"}, Resources: []string{"resourceslices"}, Verbs: read},
		},
	}
	if m.UsesKueue() {
		// What waits in each profile's queue, and how long runs take.
		role.Rules = append(role.Rules, rbacv1.PolicyRule{APIGroups: []string{"kueue.x-k8s.io"}, Resources: []string{"workloads"}, Verbs: read})
	}
	binding := &rbacv1.ClusterRoleBinding{
		TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRoleBinding"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: name},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: name, Namespace: ns}},
	}
	// The reviews of each request's token and rights, as aggregated API
	// servers are let make them: the built-in role.
	delegator := &rbacv1.ClusterRoleBinding{
		TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRoleBinding"},
		ObjectMeta: metav1.ObjectMeta{Name: name + "-auth-delegator", Labels: labels},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "system:auth-delegator"},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: name, Namespace: ns}},
	}
	port, portName, scheme, servicePort := int32(catalogServicePort), "http", corev1.URIScheme(""), int32(80)
	if cs.TLS != nil {
		port, portName, scheme, servicePort = catalogServiceTLSPort, "https", corev1.URISchemeHTTPS, 443
	}
	probe := func(path string, period int32) *corev1.Probe {
		return &corev1.Probe{
			ProbeHandler:  corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: path, Port: intstr.FromString(portName), Scheme: scheme}},
			PeriodSeconds: period, TimeoutSeconds: 2, FailureThreshold: 3,
		}
	}
	const configDir = "/etc/accelc/cluster"
	deploy := &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: meta(name),
		Spec: appsv1.DeploymentSpec{
			Replicas: ref(int32(cs.Replicas)),
			Selector: &metav1.LabelSelector{MatchLabels: selector},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: podLabels},
				Spec: corev1.PodSpec{
					ServiceAccountName: name,
					SecurityContext: &corev1.PodSecurityContext{
						RunAsNonRoot:   ref(true),
						RunAsUser:      ref(int64(65532)),
						RunAsGroup:     ref(int64(65532)),
						SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
					},
					Containers: []corev1.Container{{
						Name:  "serve",
						Image: cs.Image,
						Args: []string{"serve", configDir, "--live", "--listen", fmt.Sprintf("0.0.0.0:%d", port),
							"--reload", "10s"},
						Ports: []corev1.ContainerPort{{Name: portName, ContainerPort: port, Protocol: corev1.ProtocolTCP}},
						Resources: corev1.ResourceRequirements{
							Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: memory},
							Limits:   corev1.ResourceList{corev1.ResourceMemory: memory},
						},
						ReadinessProbe: probe("/readyz", 5),
						LivenessProbe:  probe("/healthz", 10),
						SecurityContext: &corev1.SecurityContext{
							AllowPrivilegeEscalation: ref(false),
							ReadOnlyRootFilesystem:   ref(true),
							Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
						},
						VolumeMounts: []corev1.VolumeMount{{Name: "config", MountPath: configDir, ReadOnly: true}},
					}},
					Volumes: []corev1.Volume{{Name: "config", VolumeSource: corev1.VolumeSource{
						ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: configMap.Name}},
					}}},
				},
			},
		},
	}
	service := &corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: meta(name),
		Spec: corev1.ServiceSpec{
			Selector: selector,
			Ports:    []corev1.ServicePort{{Name: portName, Port: servicePort, TargetPort: intstr.FromString(portName), Protocol: corev1.ProtocolTCP}},
		},
	}
	allowed := slices.Compact(sorted(append([]string{m.Cluster.ProfileNamespace}, cs.AllowFrom...)))
	policy := &networkingv1.NetworkPolicy{
		TypeMeta:   metav1.TypeMeta{APIVersion: "networking.k8s.io/v1", Kind: "NetworkPolicy"},
		ObjectMeta: meta(name),
		Spec: networkingv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{MatchLabels: selector},
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress},
			Ingress: []networkingv1.NetworkPolicyIngressRule{{
				From: []networkingv1.NetworkPolicyPeer{{NamespaceSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{
					Key: "kubernetes.io/metadata.name", Operator: metav1.LabelSelectorOpIn, Values: allowed,
				}}}}},
				Ports: []networkingv1.NetworkPolicyPort{{Protocol: ref(corev1.ProtocolTCP), Port: ref(intstr.FromInt32(port))}},
			}},
		},
	}
	bodies := []Body{namespace, configMap, sa, role, binding, delegator, deploy, service, policy}
	c := &deploy.Spec.Template.Spec.Containers[0]
	if t := cs.TLS; t != nil {
		const tlsDir = "/etc/accelc/tls"
		c.Args = append(c.Args, "--tls-cert-file", tlsDir+"/tls.crt", "--tls-key-file", tlsDir+"/tls.key")
		c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: "tls", MountPath: tlsDir, ReadOnly: true})
		deploy.Spec.Template.Spec.Volumes = append(deploy.Spec.Template.Spec.Volumes, corev1.Volume{Name: "tls", VolumeSource: corev1.VolumeSource{
			Secret: &corev1.SecretVolumeSource{SecretName: t.SecretName},
		}})
		if t.OpenShiftServiceCA {
			service.Annotations = map[string]string{serviceCAAnnotation: t.SecretName}
		}
	}
	if m.Cluster.ProfileWebhook() {
		hook, err := profileWebhook(m, ns, labels, deploy, service, policy)
		if err != nil {
			return nil, err
		}
		bodies = append(bodies, hook...)
	}
	if cs.Replicas > 1 {
		// A drain or a node's upgrade takes one replica at a time.
		bodies = append(bodies, &podDisruptionBudget{
			TypeMeta:   metav1.TypeMeta{APIVersion: "policy/v1", Kind: "PodDisruptionBudget"},
			ObjectMeta: meta(name),
			Spec: policyv1.PodDisruptionBudgetSpec{
				MinAvailable: ref(intstr.FromInt32(1)),
				Selector:     &metav1.LabelSelector{MatchLabels: selector},
			},
		})
	}
	if cs.RecordTypes {
		// The replicas elect the one that writes; the others serve.
		c.Args = append(c.Args, "--record-types", "--leader-elect")
		bodies = append(bodies, recordTypesObjects(m, labels)...)
		bodies = append(bodies, leaderElectionObjects(ns, labels)...)
	}
	if cs.LiveDescriptions {
		c := &deploy.Spec.Template.Spec.Containers[0]
		c.Args = append(c.Args, "--live-descriptions")
		bodies = append(bodies, liveDescriptionsObjects(m, labels)...)
	}
	var out []Object
	for _, body := range bodies {
		out = append(out, Object{Dir: DirCatalogService, Body: body, Source: src})
	}
	return out, nil
}

// podDisruptionBudget is a policy/v1 PodDisruptionBudget without the
// status Kubernetes' type always writes.
type podDisruptionBudget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              policyv1.PodDisruptionBudgetSpec `json:"spec"`
}

// leaderElectionName names the Lease the catalog service's replicas elect
// the writer on (serve.DefaultLeaseName), and the Role that lets them.
const leaderElectionName = CatalogServiceName + "-writer"

// leaderElectionObjects let the catalog service's replicas elect the one
// that writes: a Role in its namespace that may create Leases and get and
// update its own (RBAC cannot name the object a create makes), and its
// binding.
func leaderElectionObjects(ns string, labels map[string]string) []Body {
	role := &rbacv1.Role{
		TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "Role"},
		ObjectMeta: metav1.ObjectMeta{Name: leaderElectionName, Namespace: ns, Labels: labels},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"create"}},
			{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, ResourceNames: []string{leaderElectionName}, Verbs: []string{"get", "update"}},
		},
	}
	binding := &rbacv1.RoleBinding{
		TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "RoleBinding"},
		ObjectMeta: metav1.ObjectMeta{Name: leaderElectionName, Namespace: ns, Labels: labels},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: leaderElectionName},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: CatalogServiceName, Namespace: ns}},
	}
	return []Body{role, binding}
}

// The catalog service's memory, as BenchmarkServeLive measured accelc
// serve --live's peak resident memory (pkg/serve; without a Go memory
// limit, so with the collector's usual headroom) at 50 nodes and 500
// pods, 1,000 and 30,000, and 5,000 and 50,000: about 48 MiB before it
// watches anything (the process and the configuration's CUE evaluation),
// 9 KiB a node and 1.4 KiB a pod. The inventory gives the nodes at render
// time; the pods are taken as catalogServicePodsPerNode a node.
const (
	catalogServiceBaseMiB     = compile.CatalogServiceBaseMiB
	catalogServicePodsPerNode = 30
	// catalogServicePerNodeKiB is a node and its pods: 9 + 30 × 1.4.
	catalogServicePerNodeKiB = 52
)

// CatalogServiceMemory is the memory limit (and request) accelc serve
// --live gets for a cluster of nodes nodes, unless
// cluster.catalogService.memory says otherwise: 64 MiB and 52 KiB a
// node, rounded up to a multiple of 64 MiB (5,000 nodes: 320Mi).
func CatalogServiceMemory(nodes int) resource.Quantity {
	mib := catalogServiceBaseMiB + (nodes*catalogServicePerNodeKiB+1023)/1024
	mib = (mib + 63) / 64 * 64
	return *resource.NewQuantity(int64(mib)<<20, resource.BinarySI)
}

func merge(a, b map[string]string) map[string]string {
	out := make(map[string]string, len(a)+len(b))
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

// ref is a pointer to a copy of v.
func ref[T any](v T) *T { return &v }
