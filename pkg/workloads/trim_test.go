package workloads_test

import (
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/accelc/accelc/pkg/workloads"
)

// object reads a YAML object as unstructured holds it.
func object(t *testing.T, doc string) *unstructured.Unstructured {
	t.Helper()
	data, err := yaml.YAMLToJSON([]byte(doc))
	require.NoError(t, err)
	u := &unstructured.Unstructured{}
	require.NoError(t, u.UnmarshalJSON(data))
	return u
}

// TestTrim: a pod's secrets and addresses go, in its own spec and in
// every pod template of a workload however deep (a CronJob's, a JobSet's
// list); what the policies judge stays, field for field.
func TestTrim(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
	}{{
		name: "pod",
		in: `
apiVersion: v1
kind: Pod
metadata:
  name: train
  namespace: team-a
  uid: 0b5c6a1e-0000-4000-8000-000000000001
  resourceVersion: "4711"
  generation: 1
  labels: {accelc.io/profile: h200}
  annotations:
    opendatahub.io/hardware-profile-name: h200
    kubectl.kubernetes.io/last-applied-configuration: '{"spec":{"containers":[{"env":[{"name":"TOKEN","value":"s3cret"}]}]}}'
    k8s.v1.cni.cncf.io/network-status: '[{"ips":["10.1.2.3"]}]'
  managedFields: [{manager: kubectl, operation: Apply}]
  ownerReferences:
  - {apiVersion: apps/v1, kind: ReplicaSet, name: train-5d8f9, uid: 0b5c6a1e-0000-4000-8000-000000000002, controller: true, blockOwnerDeletion: true}
spec:
  serviceAccountName: trainer
  nodeName: h200-01
  nodeSelector: {accelc.io/accelerator-type: nvidia-h200-141gb}
  runtimeClassName: nvidia
  priorityClassName: gpu-high
  imagePullSecrets: [{name: registry-creds}]
  hostAliases: [{ip: 10.1.2.3, hostnames: [registry.internal]}]
  dnsConfig: {nameservers: [10.1.2.53]}
  tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
  affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: a, operator: In, values: [b]}]}]}}}
  resourceClaims: [{name: gpu, resourceClaimTemplateName: one-gpu}]
  volumes: [{name: dev, hostPath: {path: /dev/nvidia0}}]
  initContainers:
  - name: fetch
    image: registry.example/fetch:1
    command: [sh, -c, "curl -H 'Authorization: Bearer s3cret' https://10.1.2.3/"]
    envFrom: [{secretRef: {name: creds}}]
  containers:
  - name: app
    image: registry.example/train:1
    args: [--token=s3cret]
    env:
    - {name: TOKEN, value: s3cret}
    - {name: PASSWORD, valueFrom: {secretKeyRef: {name: creds, key: password}}}
    - {name: NVIDIA_VISIBLE_DEVICES, value: all}
    - {name: AMD_VISIBLE_DEVICES, valueFrom: {configMapKeyRef: {name: devices, key: amd}}}
    resources: {limits: {nvidia.com/gpu: "2"}, claims: [{name: gpu}]}
    securityContext: {privileged: true}
    volumeMounts: [{name: dev, mountPath: /dev/nvidia0}]
  ephemeralContainers:
  - {name: debug, image: busybox, command: [sh], env: [{name: X, value: "y"}]}
status:
  phase: Running
  podIP: 10.1.2.3
  hostIP: 10.0.0.7
  nominatedNodeName: h200-02
  conditions: [{type: Ready, status: "True"}]
`,
		want: `
apiVersion: v1
kind: Pod
metadata:
  name: train
  namespace: team-a
  uid: 0b5c6a1e-0000-4000-8000-000000000001
  generation: 1
  labels: {accelc.io/profile: h200}
  annotations:
    opendatahub.io/hardware-profile-name: h200
  ownerReferences:
  - {apiVersion: apps/v1, kind: ReplicaSet, name: train-5d8f9, uid: 0b5c6a1e-0000-4000-8000-000000000002, controller: true}
spec:
  serviceAccountName: trainer
  nodeName: h200-01
  nodeSelector: {accelc.io/accelerator-type: nvidia-h200-141gb}
  runtimeClassName: nvidia
  priorityClassName: gpu-high
  tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
  affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: a, operator: In, values: [b]}]}]}}}
  resourceClaims: [{name: gpu, resourceClaimTemplateName: one-gpu}]
  volumes: [{name: dev, hostPath: {path: /dev/nvidia0}}]
  initContainers:
  - {name: fetch, image: registry.example/fetch:1}
  containers:
  - name: app
    image: registry.example/train:1
    env:
    - {name: TOKEN}
    - {name: PASSWORD}
    - {name: NVIDIA_VISIBLE_DEVICES, value: all}
    - {name: AMD_VISIBLE_DEVICES, valueFrom: {configMapKeyRef: {name: devices, key: amd}}}
    resources: {limits: {nvidia.com/gpu: "2"}, claims: [{name: gpu}]}
    securityContext: {privileged: true}
    volumeMounts: [{name: dev, mountPath: /dev/nvidia0}]
  ephemeralContainers:
  - {name: debug, image: busybox, env: [{name: X}]}
status:
  phase: Running
`,
	}, {
		name: "cronjob: the job template's pod template",
		in: `
apiVersion: batch/v1
kind: CronJob
metadata: {name: nightly, namespace: team-a}
spec:
  schedule: "0 2 * * *"
  jobTemplate:
    spec:
      template:
        metadata: {labels: {accelc.io/profile: h200}}
        spec:
          imagePullSecrets: [{name: creds}]
          containers: [{name: app, image: report:1, command: [run, --password=s3cret], env: [{name: T, value: s3cret}]}]
status:
  lastScheduleTime: "2026-01-01T02:00:00Z"
  active: [{name: nightly-1}]
`,
		want: `
apiVersion: batch/v1
kind: CronJob
metadata: {name: nightly, namespace: team-a}
spec:
  schedule: "0 2 * * *"
  jobTemplate:
    spec:
      template:
        metadata: {labels: {accelc.io/profile: h200}}
        spec:
          containers: [{name: app, image: report:1, env: [{name: T}]}]
`,
	}, {
		name: "jobset and raycluster: templates in lists",
		in: `
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: pretrain, namespace: team-a}
spec:
  replicatedJobs:
  - name: workers
    template:
      spec:
        template:
          spec:
            imagePullSecrets: [{name: creds}]
            containers: [{name: w, image: w:1, args: [--key=s3cret], env: [{name: K, value: s3cret}], resources: {limits: {nvidia.com/gpu: 8}}}]
  - name: driver
    template: {spec: {template: {spec: {containers: [{name: d, image: d:1, envFrom: [{secretRef: {name: s}}]}]}}}}
  rayLike:
    workerGroupSpecs:
    - groupName: gpu
      template: {spec: {containers: [{name: r, image: r:1, command: [ray, start, --redis-password=s3cret]}]}}
`,
		want: `
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: pretrain, namespace: team-a}
spec:
  replicatedJobs:
  - name: workers
    template:
      spec:
        template:
          spec:
            containers: [{name: w, image: w:1, env: [{name: K}], resources: {limits: {nvidia.com/gpu: 8}}}]
  - name: driver
    template: {spec: {template: {spec: {containers: [{name: d, image: d:1}]}}}}
  rayLike:
    workerGroupSpecs:
    - groupName: gpu
      template: {spec: {containers: [{name: r, image: r:1}]}}
`,
	}, {
		name: "trainjob and inferenceservice: containers written inline",
		in: `
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: tj, namespace: team-a}
spec:
  runtimeRef: {name: torch-distributed}
  trainer:
    image: t:1
    command: [torchrun, --token=s3cret]
    env: [{name: TOKEN, value: s3cret}, {name: NVIDIA_VISIBLE_DEVICES, value: all}]
    resourcesPerNode: {limits: {nvidia.com/gpu: "8"}}
  kserveLike:
    predictor:
      model: {modelFormat: {name: vllm}, args: [--api-key=s3cret], env: [{name: KEY, valueFrom: {secretKeyRef: {name: creds, key: k}}}]}
`,
		want: `
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: tj, namespace: team-a}
spec:
  runtimeRef: {name: torch-distributed}
  trainer:
    image: t:1
    env: [{name: TOKEN}, {name: NVIDIA_VISIBLE_DEVICES, value: all}]
    resourcesPerNode: {limits: {nvidia.com/gpu: "8"}}
  kserveLike:
    predictor:
      model: {modelFormat: {name: vllm}, env: [{name: KEY}]}
`,
	}, {
		name: "what is not a pod spec is left alone",
		in: `
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: one-gpu, namespace: team-a, annotations: {kubectl.kubernetes.io/last-applied-configuration: "{}"}}
spec: {spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu.nvidia.com}}]}}}
status: "not an object"
`,
		want: `
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: one-gpu, namespace: team-a}
spec: {spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu.nvidia.com}}]}}}
`,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			u := object(t, tc.in)
			workloads.Trim(u)
			assert.Equal(t, object(t, tc.want).Object, u.Object)
			data, err := json.Marshal(u.Object)
			require.NoError(t, err)
			for _, gone := range []string{"s3cret", "10.1.2.3", "creds"} {
				assert.NotContains(t, string(data), gone)
			}
			workloads.Trim(u)
			assert.Equal(t, object(t, tc.want).Object, u.Object, "Trim twice is Trim once")
		})
	}
	workloads.Trim(nil)
	workloads.Trim(&unstructured.Unstructured{})
}

// TestVisibilityEnvIsThePolicys holds the variables whose values Trim
// keeps to the device access policy's list: a variable the policy judges
// and Trim empties would make the audit pass what admission denies.
func TestVisibilityEnvIsThePolicys(t *testing.T) {
	rego, err := os.ReadFile("../../policies/lib/accelc.rego")
	require.NoError(t, err)
	m := regexp.MustCompile(`(?s)\nvisibility_env := \{(.*?)\}`).FindSubmatch(rego)
	require.NotNil(t, m, "policies/lib/accelc.rego has no visibility_env")
	var want []string
	for _, name := range regexp.MustCompile(`"([^"]+)"`).FindAllSubmatch(m[1], -1) {
		want = append(want, string(name[1]))
	}
	slices.Sort(want)
	assert.Equal(t, want, workloads.VisibilityEnv)
	for _, name := range want {
		u := object(t, `{apiVersion: v1, kind: Pod, metadata: {name: p, namespace: n}, spec: {containers: [{name: c, env: [{name: `+name+`, value: all}]}]}}`)
		workloads.Trim(u)
		assert.Contains(t, mustJSON(t, u.Object), `"value":"all"`, name)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	data, err := json.Marshal(v)
	require.NoError(t, err)
	return string(data)
}
