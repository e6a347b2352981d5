package accelc

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/rest"

	"github.com/accelc/accelc/pkg/compile"
)

// TestStatusReadsPodAdmission: the bindings as the API server lists them
// become, by profile, why none refuses ("" where one does); a profile
// with one binding that refuses and one that does not is judged.
func TestStatusReadsPodAdmission(t *testing.T) {
	const bindings = `{"items": [
	  {"spec": {"policyName": "accelc-pod-admission", "validationActions": ["Deny"], "paramRef": {"name": "a100", "parameterNotFoundAction": "Deny"},
	    "matchResources": {"objectSelector": {"matchLabels": {"accelerator.opendatahub.io/profile": "a100"}}}}},
	  {"spec": {"policyName": "accelc-pod-admission", "validationActions": ["Audit"], "paramRef": {"name": "h200", "parameterNotFoundAction": "Deny"},
	    "matchResources": {"objectSelector": {"matchLabels": {"accelerator.opendatahub.io/profile": "h200"}}}}},
	  {"spec": {"policyName": "accelc-pod-admission", "validationActions": ["Deny"], "paramRef": {"name": "l4", "parameterNotFoundAction": "Allow"},
	    "matchResources": {"objectSelector": {"matchLabels": {"accelerator.opendatahub.io/profile": "l4"}}}}},
	  {"spec": {"policyName": "accelc-pod-admission", "validationActions": ["Warn"], "paramRef": {"name": "a100", "parameterNotFoundAction": "Deny"},
	    "matchResources": {"objectSelector": {"matchLabels": {"accelerator.opendatahub.io/profile": "a100"}}}}},
	  {"spec": {"policyName": "accelc-pod-admission-unknown-profile", "validationActions": ["Deny"],
	    "matchResources": {"objectSelector": {"matchExpressions": [{"key": "accelerator.opendatahub.io/profile", "operator": "NotIn", "values": ["a100", "h200", "l4"]}]}}}},
	  {"spec": {"policyName": "someone-elses", "validationActions": ["Audit"]}}
	]}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch {
		case strings.HasSuffix(r.URL.Path, "/validatingadmissionpolicybindings"):
			_, _ = w.Write([]byte(bindings))
		case strings.Contains(r.URL.Path, "/validatingadmissionpolicies/"):
			_, _ = w.Write([]byte(`{}`))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	c, err := jsonClient(&rest.Config{Host: srv.URL})
	require.NoError(t, err)
	pa := (&kube{c: c}).podAdmission(t.Context())
	require.True(t, pa.read)
	assert.True(t, pa.policy)
	assert.True(t, pa.unknownPolicy)
	assert.True(t, pa.unknownBinding)
	assert.Equal(t, 4, pa.bindings)
	assert.Equal(t, 2, pa.denying, "Deny with a missing HardwareProfile allowed still denies what it judges")
	assert.Equal(t, map[string]string{"a100": "", "h200": "validationActions [Audit]", "l4": "parameterNotFoundAction Allow"}, pa.bound)
	assert.Equal(t, []string{"a100", "h200", "l4"}, pa.unknownLeaves)
}

// TestStatusReadsIgnoredNamespaces: the namespaces labelled
// admission.gatekeeper.sh/ignore are listed by that label, page by page,
// sorted; a reader who may not list namespaces learns nothing of them,
// and status is not refused for it.
func TestStatusReadsIgnoredNamespaces(t *testing.T) {
	forbidden := false
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch {
		case forbidden:
			w.WriteHeader(http.StatusForbidden)
			_, _ = w.Write([]byte(`{"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "Forbidden", "code": 403}`))
		case r.URL.Path != "/api/v1/namespaces" || r.URL.Query().Get("labelSelector") != "admission.gatekeeper.sh/ignore":
			http.NotFound(w, r)
		case r.URL.Query().Get("continue") == "":
			_, _ = w.Write([]byte(`{"metadata": {"continue": "next"}, "items": [{"metadata": {"name": "scratch"}}, {"metadata": {"name": "gatekeeper-system"}}]}`))
		default:
			_, _ = w.Write([]byte(`{"metadata": {}, "items": [{"metadata": {"name": "asr"}}]}`))
		}
	}))
	defer srv.Close()
	c, err := jsonClient(&rest.Config{Host: srv.URL})
	require.NoError(t, err)
	k := &kube{c: c}
	names, read := k.ignoredNamespaces(t.Context())
	assert.True(t, read)
	assert.Equal(t, []string{"asr", "gatekeeper-system", "scratch"}, names)
	forbidden = true
	names, read = k.ignoredNamespaces(t.Context())
	assert.False(t, read)
	assert.Empty(t, names)
	assert.Empty(t, k.denied, "not a denial status reports")
}

// TestStatusReadsIdentities: Kueue's namespace from its webhooks'
// Service; a trusted service account the API server says it does not
// have is missing, one it will not say about (forbidden) is not.
func TestStatusReadsIdentities(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/kueue-mutating-webhook-configuration":
			_, _ = w.Write([]byte(`{"webhooks": [{"name": "mpod.kb.io", "clientConfig": {"service": {"name": "kueue-webhook-service", "namespace": "kueue-system"}}}]}`))
		case "/api/v1/namespaces/kueue-system/serviceaccounts/kueue-controller-manager":
			_, _ = w.Write([]byte(`{"metadata": {"name": "kueue-controller-manager"}}`))
		case "/api/v1/namespaces/secret-ns/serviceaccounts/job-controller":
			w.WriteHeader(http.StatusForbidden)
			_, _ = w.Write([]byte(`{"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "Forbidden", "code": 403}`))
		default:
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "NotFound", "code": 404}`))
		}
	}))
	defer srv.Close()
	c, err := jsonClient(&rest.Config{Host: srv.URL})
	require.NoError(t, err)
	ids := (&kube{c: c}).readIdentities(t.Context(), compile.KueueIdentities{
		Manager: []string{"system:serviceaccount:kueue-system:kueue-controller-manager", "system:kube-controller-manager"},
		PodControllers: map[string][]string{
			"batch/Job":         {"system:serviceaccount:kube-system:job-controller", "system:serviceaccount:secret-ns:job-controller"},
			"ray.io/RayCluster": {"system:serviceaccount:ray-system:kuberay-operator"},
		},
	})
	assert.Equal(t, "kueue-system", ids.kueueNamespace)
	assert.Equal(t, map[string]bool{"system:serviceaccount:kube-system:job-controller": true}, ids.missing)
}
