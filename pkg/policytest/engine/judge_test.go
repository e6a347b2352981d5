package engine

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/accelc/accelc/pkg/compile"
	"github.com/accelc/accelc/pkg/render"
)

func TestNodeWide(t *testing.T) {
	container := func(sc map[string]any) map[string]any {
		return map[string]any{"containers": []any{map[string]any{"name": "main", "securityContext": sc}}}
	}
	caps := func(c ...any) map[string]any {
		return container(map[string]any{"capabilities": map[string]any{"add": c}})
	}
	for _, tc := range []struct {
		name      string
		spec, md  map[string]any
		wantEmpty bool
	}{
		{"nothing", map[string]any{}, nil, true},
		{"CDI", nil, map[string]any{"annotations": map[string]any{"cdi.k8s.io/gpu": "nvidia.com/gpu=all"}}, false},
		{"NVIDIA CDI", nil, map[string]any{"annotations": map[string]any{"nvidia.cdi.k8s.io/all": "x"}}, false},
		{"CRI-O devices", nil, map[string]any{"annotations": map[string]any{"io.kubernetes.cri-o.Devices": "/dev/nvidia0"}}, false},
		{"other annotation", nil, map[string]any{"annotations": map[string]any{"example.com/cdi": "x"}}, true},
		{"hostPID", map[string]any{"hostPID": true}, nil, false},
		{"hostIPC", map[string]any{"hostIPC": true}, nil, false},
		{"hostNetwork", map[string]any{"hostNetwork": true}, nil, false},
		{"hostNetwork false", map[string]any{"hostNetwork": false}, nil, true},
		{"SYS_ADMIN", caps("SYS_ADMIN"), nil, false},
		{"CAP_SYS_RAWIO", caps("CAP_SYS_RAWIO"), nil, false},
		{"ALL", caps("ALL"), nil, false},
		{"lower-case sys_ptrace", caps("NET_BIND_SERVICE", "sys_ptrace"), nil, false},
		{"baseline's, spelled every way", caps("NET_BIND_SERVICE", "cap_chown", "Kill"), nil, true},
		{"unmasked /proc", container(map[string]any{"procMount": "Unmasked"}), nil, false},
		{"default /proc", container(map[string]any{"procMount": "Default"}), nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := nodeWide(tc.spec, tc.md)
			assert.Equal(t, tc.wantEmpty, got == "", "nodeWide = %q", got)
		})
	}
}

func TestDeviceHostPath(t *testing.T) {
	for p, want := range map[string]bool{
		"/run/containerd/containerd.sock":     true,
		"/run/crio/crio.sock":                 true,
		"/run":                                true,
		"/var/run/containerd/containerd.sock": true,
		"/":                                   true,
		"/dev/nvidia0":                        true,
		"/data":                               false,
		"/home/run":                           false,
	} {
		assert.Equal(t, want, deviceHostPath(p), p)
	}
}

func TestIsAccelerator(t *testing.T) {
	for r, want := range map[string]bool{
		"nvidia.com/gpu":              true,
		"nvidia.com/GH100_H200_141GB": true,
		"huawei.com/Ascend910":        true,
		"qualcomm.com/qaic":           true,
		"cambricon.com/mlu":           true,
		"example.com/gpu":             false,
		"hugepages-2Mi":               false,
		"cpu":                         false,
	} {
		assert.Equal(t, want, isAccelerator(r), r)
	}
	for _, r := range unknownVendorResources {
		assert.True(t, isAccelerator(r), r)
	}
}

func TestUnaccounted(t *testing.T) {
	queued, plain := &compile.Team{Name: "queued"}, &compile.Team{Name: "plain"}
	e := &EscapeCheck{
		teamOf: map[string]*compile.Team{"q": queued, "p": plain},
		queued: map[string]bool{"queued": true},
		kueue:  defaultKueueIdentities(),
		// accelc's Kueue Configuration turns on the batch/job integration.
		mutator: &Mutator{kueueJobKinds: map[string]bool{"batch/Job": true}},
	}
	const jobCtl = "system:serviceaccount:kube-system:job-controller"
	const kueueCtl = "system:serviceaccount:kueue-system:kueue-controller-manager"
	pod := func(ns, apiVersion, kind string, controller bool) map[string]any {
		md := map[string]any{"name": "p", "namespace": ns}
		if kind != "" {
			md["ownerReferences"] = []any{map[string]any{"apiVersion": apiVersion, "kind": kind, "name": "o", "controller": controller}}
		}
		return map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": md, "spec": map[string]any{}}
	}
	for _, tc := range []struct {
		name   string
		req    Request
		pod    map[string]any
		escape bool
	}{
		{"a Job's pod made by a user", Request{}, pod("q", "batch/v1", "Job", true), true},
		{"a Job's pod of another version made by a user", Request{}, pod("q", "batch/v2", "Job", true), true},
		{"a Job's pod made by the Job controller", Request{User: jobCtl}, pod("q", "batch/v1", "Job", true), false},
		{"a PyTorchJob's pod, whose controller is not known, made by the Job controller", Request{User: jobCtl}, pod("q", "kubeflow.org/v1", "PyTorchJob", true), true},
		{"a RayCluster's pod made by a user", Request{}, pod("q", "ray.io/v1", "RayCluster", true), true},
		{"a Job that is not the controller", Request{}, pod("q", "batch/v1", "Job", false), false},
		{"a ReplicaSet's pod made by a user", Request{}, pod("q", "apps/v1", "ReplicaSet", true), false},
		{"a Job's pod where Kueue shares out nothing", Request{}, pod("p", "batch/v1", "Job", true), false},
		{"a pod of no owner", Request{}, pod("q", "", "", false), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := e.unaccounted(tc.req, tc.pod)
			assert.Equal(t, tc.escape, got != "", "unaccounted = %q", got)
			if got != "" {
				assert.Equal(t, "ownerReference spoof", familyOf(got))
			}
		})
	}

	// On UPDATE: a controller owner named on a running pod.
	orphan := &unstructured.Unstructured{Object: pod("q", "", "", false)}
	adopted := &unstructured.Unstructured{Object: pod("q", "batch/v1", "Job", true)}
	for user, escape := range map[string]bool{"": true, kueueCtl: true, jobCtl: false} {
		got := e.unaccounted(Request{Object: adopted, OldObject: orphan, Operation: "UPDATE", User: user}, adopted.Object)
		assert.Equal(t, escape, got != "", "%s names a Job the controller: %q", user, got)
		if got != "" {
			assert.Equal(t, "ownerReference spoof", familyOf(got))
		}
	}
	kept := e.unaccounted(Request{Object: adopted, OldObject: adopted, Operation: "UPDATE"}, adopted.Object)
	assert.Empty(t, kept, "a controller kept")

	// A new pod naming a LocalQueue that Kueue's webhook did not gate.
	// Kueue shares out profile gpu's devices in team queued's namespace.
	m := &compile.Model{
		Cluster:  compile.Cluster{Quotas: "kueue", LabelPrefix: "accelerator.opendatahub.io"},
		Profiles: []compile.Profile{{Name: "gpu", Enabled: true}},
		Teams:    []compile.Team{{Name: "queued", Namespaces: []string{"q"}, Quota: map[string]int{"gpu": 1}}},
	}
	e.model, e.teamOf["q"] = m, &m.Teams[0]
	e.queued = map[string]bool{"queued": true}
	newPod := func(gate bool) map[string]any {
		u := &unstructured.Unstructured{Object: pod("q", "", "", false)}
		u.SetLabels(map[string]string{render.QueueNameLabel: "q", "accelerator.opendatahub.io/profile": "gpu"})
		if gate {
			gateAsKueue(u)
		}
		return u.Object
	}
	skipped := e.unaccounted(Request{}, newPod(false))
	assert.Contains(t, skipped, "Kueue's pod webhook skipped the pod")
	assert.Equal(t, "pod Kueue's webhook skipped", familyOf(skipped))
	assert.Empty(t, e.unaccounted(Request{}, newPod(true)), "gated by Kueue")
	assert.Empty(t, e.unaccounted(Request{}, pod("q", "", "", false)), "no LocalQueue: not Kueue's")

	gated := &unstructured.Unstructured{Object: pod("q", "", "", false)}
	gateAsKueue(gated)
	for user, escape := range map[string]bool{"": true, jobCtl: true, kueueCtl: false} {
		req := e.ungate(rand.New(rand.NewPCG(1, 2)), gated, user)
		req.OldObject = gated
		assert.False(t, hasGate(req.Object.Object, KueueGate))
		got := e.unaccounted(req, req.Object.Object)
		assert.Equal(t, escape, got != "", "%s removes the gate: %q", user, got)
		if got != "" {
			assert.Equal(t, "Kueue gate removal", familyOf(got))
		}
	}
}

func TestReadKueueIdentities(t *testing.T) {
	ids, err := readKueueIdentities(render.Tree{"gatekeeper/constraint.yaml": []byte(`apiVersion: constraints.gatekeeper.sh/v1beta1
kind: AccelcAdmission
metadata: {name: accelc}
spec:
  parameters:
    podControllers:
      batch/Job: [system:serviceaccount:kube-system:job-controller]
      kubeflow.org/PyTorchJob: [system:serviceaccount:kubeflow:training-operator]
      kubeflow.org/MPIJob: null
    kueueManagers: {system:serviceaccount:kueue:kueue: true}
`)})
	require.NoError(t, err)
	assert.Equal(t, []string{"system:serviceaccount:kubeflow:training-operator"}, ids.controllers["kubeflow.org/PyTorchJob"])
	assert.Empty(t, ids.controllers["kubeflow.org/MPIJob"])
	assert.Equal(t, []string{"system:serviceaccount:kueue:kueue"}, ids.users)

	ids, err = readKueueIdentities(render.Tree{})
	require.NoError(t, err)
	assert.Equal(t, defaultKueueIdentities(), ids)
}

func TestFamilyOf(t *testing.T) {
	for why, want := range map[string]string{
		"annotation cdi.k8s.io/gpu on node n (t) sees devices the device plugin did not hand it":                                               "CDI annotation",
		"container main's capability SYS_ADMIN on node n (t) sees devices the device plugin did not hand it":                                   "capability or host namespace",
		"hostPID on node n (t) sees devices the device plugin did not hand it":                                                                 "capability or host namespace",
		"host path /run/crio/crio.sock on node n (t) sees devices the device plugin did not hand it":                                           "host path under /run",
		"container main's huawei.com/Ascend910 on node vendor-node-0 (unknown huawei.com/Ascend910), and namespace no-team belongs to no team": "unknown vendor's resource",
		"a ResourceClaim in namespace x that asks for no device":                                                                               "empty claim",
		"the pod of DRA profile p may land on node n (t), which is not of the profile's types u":                                               "unconfined DRA pod",
		"privileged container main on node n (t) sees devices the device plugin did not hand it":                                               "other",
	} {
		assert.Equal(t, want, familyOf(why), why)
	}
}
