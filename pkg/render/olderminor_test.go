package render_test

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/google/cel-go/cel"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/accelc/accelc/pkg/compile"
	"github.com/accelc/accelc/pkg/inventory"
	"github.com/accelc/accelc/pkg/render"
)

// TestOlderMinorLabelsFromQueue: hetero-prod without its catalog service
// (so without accelc's webhook) rendered for Kubernetes 1.34 has no
// MutatingAdmissionPolicy (the API server serves none) and, per profile
// that schedules through Kueue, a mutator labelling the pods and the
// single pod templates that join the profile's LocalQueue in its teams'
// namespaces; rendered for 1.36 (the default) it is the other way round.
func TestOlderMinorLabelsFromQueue(t *testing.T) {
	m, err := compile.Load(examplesDir + "/hetero-prod")
	require.NoError(t, err)
	m.Cluster.CatalogService = nil
	newer := renderModel(t, m)
	m.Cluster.KubernetesVersion = "1.34"
	older := renderModel(t, m)

	count := func(tree render.Tree, prefix string) int {
		n := 0
		for _, p := range tree.Paths() {
			if strings.HasPrefix(p, prefix) {
				n++
			}
		}
		return n
	}
	assert.Positive(t, count(newer, "mutations/mutatingadmissionpolicy-"))
	assert.Zero(t, count(newer, "mutations/assignmetadata-accelc-standard-gpu-profile-from-queue"))
	assert.Zero(t, count(older, "mutations/mutatingadmissionpolicy"), "no MutatingAdmissionPolicy or binding before 1.36")

	// The constraint is told which kinds' templates are labelled from
	// their queue, and only before 1.36.
	params := func(tree render.Tree) map[string]any {
		var c struct {
			Spec struct {
				Parameters map[string]any `json:"parameters"`
			} `json:"spec"`
		}
		require.NoError(t, yaml.Unmarshal(tree[render.DirConstraints+"/accelcadmission-"+render.ConstraintName+".yaml"], &c))
		return c.Spec.Parameters
	}
	assert.NotContains(t, params(newer), "labelledFromQueue")
	assert.Equal(t, map[string]any{"apps/Deployment": true, "apps/StatefulSet": true, "apps/ReplicaSet": true, "apps/DaemonSet": true, "batch/Job": true}, params(older)["labelledFromQueue"])

	var queued int
	for i := range m.Profiles {
		p := &m.Profiles[i]
		teams := m.QueueTeams(p)
		pod, hasPod := older["mutations/assignmetadata-accelc-"+p.Name+"-profile-from-queue.yaml"]
		tmpl, hasTmpl := older["mutations/assign-accelc-"+p.Name+"-template-profile-from-queue.yaml"]
		if len(teams) == 0 || !p.Offered() {
			assert.False(t, hasPod || hasTmpl, "profile %s does not schedule through Kueue: nothing labels from a queue", p.Name)
			continue
		}
		queued++
		require.True(t, hasPod && hasTmpl, "profile %s", p.Name)
		var namespaces []string
		for _, team := range teams {
			namespaces = append(namespaces, team.Namespaces...)
		}
		for _, data := range [][]byte{pod, tmpl} {
			var mu struct {
				Spec struct {
					Location string `json:"location"`
					Match    struct {
						Namespaces    []string `json:"namespaces"`
						LabelSelector struct {
							MatchLabels map[string]string `json:"matchLabels"`
						} `json:"labelSelector"`
					} `json:"match"`
					Parameters struct {
						Assign struct {
							Value string `json:"value"`
						} `json:"assign"`
					} `json:"parameters"`
				} `json:"spec"`
			}
			require.NoError(t, yaml.Unmarshal(data, &mu))
			assert.Equal(t, map[string]string{render.QueueNameLabel: render.LocalQueueName(p)}, mu.Spec.Match.LabelSelector.MatchLabels, p.Name)
			assert.ElementsMatch(t, namespaces, mu.Spec.Match.Namespaces, "profile %s: its teams' namespaces only", p.Name)
			assert.Equal(t, p.Name, mu.Spec.Parameters.Assign.Value)
			assert.True(t, strings.HasSuffix(mu.Spec.Location, `labels."`+m.Cluster.LabelPrefix+`/profile"`), mu.Spec.Location)
		}
	}
	assert.Positive(t, queued)
	// What does not depend on the minor is the same.
	for p, data := range newer {
		if strings.HasPrefix(p, "mutations/") || strings.HasPrefix(p, render.DirConstraints+"/accelcadmission-") || judgedPods(p) {
			continue
		}
		assert.Equal(t, string(data), string(older[p]), "%s differs between 1.36 and 1.34", p)
	}
}

func renderModel(t *testing.T, m *compile.Model) render.Tree {
	t.Helper()
	tree, err := render.Cluster(m, &inventory.Inventory{})
	require.NoError(t, err)
	return tree
}

// TestOlderMinorWebhook: hetero-prod (which runs the catalog service)
// rendered for Kubernetes 1.34 has, in place of the
// MutatingAdmissionPolicies, accelc's webhook: a
// MutatingWebhookConfiguration calling the catalog Service, the
// mutations it is told (those of 1.36's policies), its certificate, and
// the Deployment serving it over TLS; no mutator labels from a queue,
// and the constraint is not told of one. Gatekeeper's mutating webhook
// is sent pods there (on 1.36 the API server mutates them itself, and a
// match condition keeps them from the webhook). Everything else is
// 1.36's.
func TestOlderMinorWebhook(t *testing.T) {
	m, err := compile.Load(examplesDir + "/hetero-prod")
	require.NoError(t, err)
	newer := renderModel(t, m)
	m.Cluster.KubernetesVersion = "1.34"
	older := renderModel(t, m)

	for p := range older {
		assert.False(t, strings.HasPrefix(p, "mutations/mutatingadmissionpolicy"), p)
		assert.False(t, strings.HasPrefix(p, "policies/validatingadmissionpolicy"), p)
		assert.NotContains(t, p, "profile-from-queue", p)
	}
	var hooks struct {
		Metadata struct {
			Annotations map[string]string `json:"annotations"`
		} `json:"metadata"`
		Webhooks []struct {
			Name          string `json:"name"`
			FailurePolicy string `json:"failurePolicy"`
			SideEffects   string `json:"sideEffects"`
			ClientConfig  struct {
				Service struct {
					Name, Namespace, Path string
					Port                  int
				} `json:"service"`
			} `json:"clientConfig"`
			MatchConditions []struct{ Expression string } `json:"matchConditions"`
		} `json:"webhooks"`
	}
	require.NoError(t, yaml.Unmarshal(older["catalog-service/mutatingwebhookconfiguration-"+render.ProfileWebhookName+".yaml"], &hooks))
	assert.Equal(t, "accelc-system/accelc-catalog-webhook", hooks.Metadata.Annotations["cert-manager.io/inject-ca-from"])
	var names []string
	for _, h := range hooks.Webhooks {
		names = append(names, h.Name)
		assert.Equal(t, "Fail", h.FailurePolicy, h.Name)
		assert.Equal(t, "None", h.SideEffects, h.Name)
		assert.Equal(t, "/mutate", h.ClientConfig.Service.Path)
		assert.Equal(t, 9443, h.ClientConfig.Service.Port)
		require.Len(t, h.MatchConditions, 1, h.Name)
	}
	assert.Contains(t, names, "pods.profile-label.accelc.io")
	assert.Contains(t, names, "workloads.profile-label.accelc.io")
	assert.Contains(t, names, "jobs.job-queue.accelc.io")
	for _, f := range []string{render.AdmissionMutationsFile, "catalog-service/certificate-accelc-catalog-webhook.yaml", "catalog-service/issuer-accelc-catalog-webhook.yaml"} {
		assert.Contains(t, older, f)
		assert.NotContains(t, newer, f)
	}
	deploy := string(older["catalog-service/deployment-accelc-catalog.yaml"])
	for _, arg := range []string{"--webhook-listen", "--webhook-tls-cert-file", "--webhook-mutations"} {
		assert.Contains(t, deploy, arg)
	}
	// The same mutations as 1.36's job queue policy.
	assert.Equal(t, render.AdmissionMutationsOf(m), readMutations(t, older))
	values := "mutations/configmap-" + render.GatekeeperValuesName + ".yaml"
	assert.Contains(t, string(newer[values]), "mutatingWebhookObjectSelector:")
	assert.NotContains(t, string(older[values]), "mutatingWebhookObjectSelector")
	assert.NotContains(t, string(older[values]), "mutatingWebhookMatchConditions")
	assert.Contains(t, string(newer[values]), "pods-judged-by-"+render.PodAdmissionPolicyName)
	assert.NotContains(t, string(older[values]), "pods-judged-by-")
	for p, data := range newer {
		if strings.HasPrefix(p, "mutations/mutatingadmissionpolicy") || p == "mutations/kustomization.yaml" || strings.HasPrefix(p, "catalog-service/") || p == values || judgedPods(p) {
			continue
		}
		assert.Equal(t, string(data), string(older[p]), "%s differs between 1.36 and 1.34", p)
	}
}

// TestOlderMinorWebhookOpenShift: where OpenShift's service CA writes the
// catalog's certificate, the webhook serves it and the service CA
// injects its bundle; no cert-manager object is rendered.
func TestOlderMinorWebhookOpenShift(t *testing.T) {
	m, err := compile.Load(examplesDir + "/hetero-prod")
	require.NoError(t, err)
	m.Cluster.KubernetesVersion = "1.34"
	m.Cluster.CatalogService.TLS = &compile.CatalogServiceTLS{SecretName: "accelc-catalog-tls", OpenShiftServiceCA: true}
	tree := renderModel(t, m)
	hooks := string(tree["catalog-service/mutatingwebhookconfiguration-"+render.ProfileWebhookName+".yaml"])
	assert.Contains(t, hooks, `service.beta.openshift.io/inject-cabundle: "true"`)
	assert.NotContains(t, hooks, "cert-manager.io")
	assert.NotContains(t, tree, "catalog-service/certificate-accelc-catalog-webhook.yaml")
	deploy := string(tree["catalog-service/deployment-accelc-catalog.yaml"])
	assert.Contains(t, deploy, "secretName: accelc-catalog-tls")
	assert.NotContains(t, deploy, "accelc-catalog-webhook-tls")
}

func readMutations(t *testing.T, tree render.Tree) render.AdmissionMutations {
	t.Helper()
	var cm struct {
		Data map[string]string `json:"data"`
	}
	require.NoError(t, yaml.Unmarshal(tree[render.AdmissionMutationsFile], &cm))
	a, err := render.ParseAdmissionMutations([]byte(cm.Data[render.AdmissionMutationsKey]))
	require.NoError(t, err)
	return a
}

// TestOlderMinorTopology: before 1.36 accelc's webhook gives a new Job
// (its template) or pod of a profile kept in one topology domain Kueue's
// pod-set topology annotation, as 1.36's topology policies do, and its
// configuration sends the API server's request for exactly the objects
// it changes: each webhook's match condition, evaluated as CEL over each
// object, agrees with what Mutate does to it. A Job or pod that names one
// of Kueue's topology annotations itself keeps it and gets no second:
// Kueue's webhooks refuse a pod set with two.
func TestOlderMinorTopology(t *testing.T) {
	m := loadCUE(t, sharingSrc+`
cluster: kubernetesVersion: "1.34"
cluster: catalogService: {image: "registry.example.com/accelc:v1", allowFrom: []}
`)
	tree := renderModel(t, m)
	for path := range tree {
		assert.False(t, strings.HasPrefix(path, "mutations/") && strings.Contains(path, "topology"), "%s: with accelc's webhook no Gatekeeper mutator writes the topology", path)
	}
	a := readMutations(t, tree)
	assert.Equal(t, []render.TopologyAnnotation{{Profile: "train", Key: compile.RequiredTopologyAnnotation, Level: "nvidia.com/gpu.clique"}}, a.Topology)

	var hooks admissionregistrationv1.MutatingWebhookConfiguration
	require.NoError(t, yaml.Unmarshal(tree["catalog-service/mutatingwebhookconfiguration-"+render.ProfileWebhookName+".yaml"], &hooks))
	env, err := cel.NewEnv(cel.Variable("object", cel.DynType), cel.Variable("request", cel.DynType))
	require.NoError(t, err)
	condition := func(name, resource string) cel.Program {
		i := slices.IndexFunc(hooks.Webhooks, func(h admissionregistrationv1.MutatingWebhook) bool { return h.Name == name })
		require.GreaterOrEqual(t, i, 0, "no webhook %s", name)
		hook := hooks.Webhooks[i]
		assert.Equal(t, []admissionregistrationv1.OperationType{admissionregistrationv1.Create}, hook.Rules[0].Operations)
		assert.Equal(t, []string{resource}, hook.Rules[0].Resources)
		require.Len(t, hook.MatchConditions, 1)
		ast, iss := env.Compile(hook.MatchConditions[0].Expression)
		require.NoError(t, iss.Err())
		prog, err := env.Program(ast)
		require.NoError(t, err)
		return prog
	}
	jobs, pods := condition("jobs.topology.accelc.io", "jobs"), condition("pods.topology.accelc.io", "pods")

	const (
		required, preferred, unconstrained = compile.RequiredTopologyAnnotation, compile.PreferredTopologyAnnotation, compile.UnconstrainedTopologyAnnotation
		label                              = "accelerator.opendatahub.io/profile"
	)
	job := func(labels, tmplMeta map[string]any) map[string]any {
		spec := map[string]any{"containers": []any{map[string]any{"name": "main", "image": "x"}}, "restartPolicy": "Never"}
		tmpl := map[string]any{"spec": spec}
		if tmplMeta != nil {
			tmpl["metadata"] = tmplMeta
		}
		md := map[string]any{"name": "j", "namespace": "research"}
		if labels != nil {
			md["labels"] = labels
		}
		return map[string]any{"apiVersion": "batch/v1", "kind": "Job", "metadata": md, "spec": map[string]any{"template": tmpl}}
	}
	pod := func(md map[string]any) map[string]any {
		md["name"], md["namespace"] = "p", "research"
		return map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": md,
			"spec": map[string]any{"containers": []any{map[string]any{"name": "main", "image": "x"}}}}
	}
	odh := func(kv ...string) map[string]any {
		ann := map[string]any{render.ProfileAnnotation: "train"}
		for i := 0; i+1 < len(kv); i += 2 {
			ann[kv[i]] = kv[i+1]
		}
		return map[string]any{"annotations": ann}
	}
	for _, c := range []struct {
		name string
		obj  map[string]any
		want map[string]string // Kueue's topology annotations after
	}{
		{"a Job as ODH writes it", job(nil, odh()), map[string]string{required: "nvidia.com/gpu.clique"}},
		{"a Job by the template's label", job(nil, map[string]any{"labels": map[string]any{label: "train"}}), map[string]string{required: "nvidia.com/gpu.clique"}},
		{"a Job by its own label, no template metadata", job(map[string]any{label: "train"}, nil), map[string]string{required: "nvidia.com/gpu.clique"}},
		{"a Job of another profile", job(nil, map[string]any{"annotations": map[string]any{render.ProfileAnnotation: "serve"}}), map[string]string{}},
		{"a Job with a level of its own", job(nil, odh(required, "kubernetes.io/hostname")), map[string]string{required: "kubernetes.io/hostname"}},
		{"a Job that prefers a level", job(nil, odh(preferred, "kubernetes.io/hostname")), map[string]string{preferred: "kubernetes.io/hostname"}},
		{"a Job that asks for none", job(nil, odh(unconstrained, "true")), map[string]string{unconstrained: "true"}},
		{"a pod as ODH writes it", pod(odh()), map[string]string{required: "nvidia.com/gpu.clique"}},
		{"a pod by its label", pod(map[string]any{"labels": map[string]any{label: "train"}}), map[string]string{required: "nvidia.com/gpu.clique"}},
		{"a pod of another profile", pod(map[string]any{"labels": map[string]any{label: "serve"}}), map[string]string{}},
		{"a pod that prefers a level", pod(odh(preferred, "kubernetes.io/hostname")), map[string]string{preferred: "kubernetes.io/hostname"}},
		{"a pod that asks for none", pod(odh(unconstrained, "true")), map[string]string{unconstrained: "true"}},
	} {
		obj := &unstructured.Unstructured{Object: c.obj}
		ann := []string{"metadata", "annotations"}
		prog := pods
		if obj.GetKind() == "Job" {
			ann, prog = []string{"spec", "template", "metadata", "annotations"}, jobs
		}
		topology := func() map[string]string {
			have, _, _ := unstructured.NestedStringMap(obj.Object, ann...)
			out := map[string]string{}
			for _, k := range compile.TopologyAnnotations {
				if v, ok := have[k]; ok {
					out[k] = v
				}
			}
			return out
		}
		out, _, err := prog.Eval(map[string]any{"object": c.obj, "request": map[string]any{"operation": "CREATE"}})
		require.NoError(t, err, c.name)
		before := topology()
		a.Mutate(obj, "CREATE")
		got := topology()
		assert.Equal(t, c.want, got, c.name)
		assert.LessOrEqual(t, len(got), 1, "%s: Kueue refuses more than one topology annotation", c.name)
		assert.Equal(t, !maps.Equal(got, before), out.Value() == true, "%s: the webhook is sent the object exactly when it changes its topology", c.name)
	}
}

// judgedPods reports whether a tree's path is what judges pods in the API
// server on 1.36 (accelc-pod-admission, and the policies folder's list
// that names it), which Gatekeeper does before.
func judgedPods(p string) bool {
	return strings.HasPrefix(p, "policies/validatingadmissionpolicy") || p == "policies/kustomization.yaml"
}
