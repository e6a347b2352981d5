package controlplane

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"
)

func TestFindKueueMissing(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(KueueBinEnv, dir)
	_, err := findKueue()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "no Kueue "+KueueVersion+" in $"+KueueBinEnv+"="+dir+" (missing manager, crds/, webhooks.yaml, controller_manager_config.yaml)")
	assert.Contains(t, err.Error(), "run `make e2e-tools`")
}

func TestFindKueueFromEnv(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "manager"), []byte("#!/bin/sh\n"), 0o755))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "crds"), 0o755))
	for _, f := range []string{"webhooks.yaml", "controller_manager_config.yaml"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, f), nil, 0o644))
	}
	t.Setenv(KueueBinEnv, dir)
	got, err := findKueue()
	require.NoError(t, err)
	assert.Equal(t, dir, got)
}

// The Configuration keeps Kueue's defaults but for what running beside a
// test control plane needs.
func TestKueueConfiguration(t *testing.T) {
	defaults := filepath.Join(t.TempDir(), "controller_manager_config.yaml")
	require.NoError(t, os.WriteFile(defaults, []byte(`apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
health:
  healthProbeBindAddress: :8081
metrics:
  bindAddress: :8443
webhook:
  port: 9443
leaderElection:
  leaderElect: true
clientConnection:
  qps: 300
integrations:
  frameworks:
  - "batch/job"
  - "ray.io/rayjob"
  - "pod"
`), 0o644))
	data, err := kueueConfiguration(defaults, KueueOptions{Namespaces: []string{"team-a"}}, "/certs", 1, 2, 3, 0)
	require.NoError(t, err)
	var got map[string]any
	require.NoError(t, yaml.Unmarshal(data, &got))
	assert.Equal(t, map[string]any{
		"apiVersion":                 "config.kueue.x-k8s.io/v1beta2",
		"kind":                       "Configuration",
		"namespace":                  KueueNamespace,
		"health":                     map[string]any{"healthProbeBindAddress": "127.0.0.1:2"},
		"metrics":                    map[string]any{"bindAddress": "127.0.0.1:3"},
		"webhook":                    map[string]any{"host": "127.0.0.1", "port": float64(1), "certDir": "/certs"},
		"leaderElection":             map[string]any{"leaderElect": false},
		"clientConnection":           map[string]any{"qps": float64(300)},
		"internalCertManagement":     map[string]any{"enable": false},
		"manageJobsWithoutQueueName": false,
		"managedJobsNamespaceSelector": map[string]any{"matchExpressions": []any{map[string]any{
			"key": "kubernetes.io/metadata.name", "operator": "In", "values": []any{"team-a"},
		}}},
		"integrations": map[string]any{"frameworks": []any{"batch/job", "pod"}},
		"featureGates": map[string]any{"VisibilityOnDemand": false},
	}, got)
}

// A rendered Configuration fragment replaces the defaults' top-level
// fields it has, and nothing else; one of another API is refused.
func TestKueueConfigurationFragment(t *testing.T) {
	defaults := filepath.Join(t.TempDir(), "controller_manager_config.yaml")
	require.NoError(t, os.WriteFile(defaults, []byte("apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\nclientConnection:\n  qps: 300\n"), 0o644))
	fragment := []byte(`apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
integrations:
  frameworks: [batch/job, pod, kubeflow.org/pytorchjob]
managedJobsNamespaceSelector:
  matchExpressions: [{key: kubernetes.io/metadata.name, operator: In, values: [ml, serving]}]
`)
	data, err := kueueConfiguration(defaults, KueueOptions{Fragment: fragment}, "/certs", 1, 2, 3, 0)
	require.NoError(t, err)
	var got map[string]any
	require.NoError(t, yaml.Unmarshal(data, &got))
	assert.Equal(t, map[string]any{"frameworks": []any{"batch/job", "pod", "kubeflow.org/pytorchjob"}}, got["integrations"])
	assert.Equal(t, map[string]any{"matchExpressions": []any{map[string]any{
		"key": "kubernetes.io/metadata.name", "operator": "In", "values": []any{"ml", "serving"},
	}}}, got["managedJobsNamespaceSelector"])
	assert.Equal(t, map[string]any{"qps": float64(300)}, got["clientConnection"])
	assert.Equal(t, map[string]any{"host": "127.0.0.1", "port": float64(1), "certDir": "/certs"}, got["webhook"])
	assert.NotContains(t, got, "pprofBindAddress")

	// Profiling: the manager's profiles on the port given, on 127.0.0.1.
	data, err = kueueConfiguration(defaults, KueueOptions{Fragment: fragment, Profiling: true}, "/certs", 1, 2, 3, 4)
	require.NoError(t, err)
	got = nil
	require.NoError(t, yaml.Unmarshal(data, &got))
	assert.Equal(t, "127.0.0.1:4", got["pprofBindAddress"])

	_, err = kueueConfiguration(defaults, KueueOptions{Fragment: []byte("apiVersion: v1\nkind: ConfigMap\n")}, "/certs", 1, 2, 3, 0)
	assert.ErrorContains(t, err, "the Configuration fragment is v1 ConfigMap, not Kueue's config.kueue.x-k8s.io/v1beta2 Configuration")
}
