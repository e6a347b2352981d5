package render

import (
	"fmt"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
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

// catalogServicePort is the port accelc serve listens on in its pod.
const catalogServicePort = 8080

// catalogServiceObjects renders accelc serve --live in the cluster: its
// namespace (Pod Security restricted, enforced), the evaluated
// configuration it compiles (compile.Model.Configuration, in a
// ConfigMap, reloaded when it changes), a ServiceAccount whose
// ClusterRole may only get, list and watch nodes, pods and ResourceSlices,
// a Deployment that runs as no one with a read-only root, probes on
// /healthz and /readyz, a Service, and a NetworkPolicy that lets in only
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
	probe := func(path string, period int32) *corev1.Probe {
		return &corev1.Probe{
			ProbeHandler:  corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: path, Port: intstr.FromString("http")}},
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
						Args: []string{"serve", configDir, "--live", "--listen", fmt.Sprintf("0.0.0.0:%d", catalogServicePort),
							"--reload", "10s"},
						Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: catalogServicePort, Protocol: corev1.ProtocolTCP}},
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
			Ports:    []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromString("http"), Protocol: corev1.ProtocolTCP}},
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
				Ports: []networkingv1.NetworkPolicyPort{{Protocol: ref(corev1.ProtocolTCP), Port: ref(intstr.FromInt32(catalogServicePort))}},
			}},
		},
	}
	bodies := []Body{namespace, configMap, sa, role, binding, deploy, service, policy}
	if cs.RecordTypes {
		c := &deploy.Spec.Template.Spec.Containers[0]
		c.Args = append(c.Args, "--record-types")
		bodies = append(bodies, recordTypesObjects(m, labels)...)
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
