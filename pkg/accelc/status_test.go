package accelc

import (
	"bytes"
	"encoding/json"
	"maps"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/accelc/accelc/pkg/compile"
	"github.com/accelc/accelc/pkg/render"
	"github.com/accelc/accelc/pkg/workloads"
)

// decode reads a test object as the API server would send it.
func decode[T any](t *testing.T, doc string) T {
	t.Helper()
	var v T
	require.NoError(t, json.Unmarshal([]byte(doc), &v))
	return v
}

// statusModel has two teams: vision (namespaces cv, cv-dev) and speech
// (asr), each with a ClusterQueue for profile a100.
func statusModel() *compile.Model {
	return &compile.Model{
		Cluster: compile.Cluster{Name: "lab", Quotas: "kueue"},
		Profiles: []compile.Profile{
			{Name: "a100", Enabled: true, AcceleratorTypes: []string{"nvidia-a100-80gb"}, ResourceName: "nvidia.com/gpu"},
		},
		Teams: []compile.Team{
			{Name: "speech", Namespaces: []string{"asr"}, AcceleratorTypes: []string{"nvidia-a100-80gb"}, Quota: map[string]int{"nvidia-a100-80gb": 4}},
			{Name: "vision", Namespaces: []string{"cv", "cv-dev"}, AcceleratorTypes: []string{"nvidia-a100-80gb"}, Quota: map[string]int{"nvidia-a100-80gb": 8}},
		},
	}
}

const labLabels = `"labels": {"app.kubernetes.io/managed-by": "accelc", "accelc.io/cluster": "lab"}`

func statusObjects(t *testing.T) *clusterObjects {
	objs := &clusterObjects{gatekeeper: true, kueue: true, kueueVersion: "kueue.x-k8s.io/v1beta2", flux: true,
		mutators: map[string]int{"ModifySet": 2, "Assign": 5, "AssignImage": 0}}
	objs.constraints = []constraintObject{
		decode[constraintObject](t, `{"metadata": {"name": "accelc-warn", `+labLabels+`}, "spec": {"enforcementAction": "warn"}}`),
		decode[constraintObject](t, `{"metadata": {"name": "accelc", `+labLabels+`}, "spec": {"enforcementAction": "deny"},
			"status": {"auditTimestamp": "2026-11-20T10:00:00Z", "totalViolations": 5, "violations": [
				{"kind": "Pod", "namespace": "kube-batch", "name": "z", "message": "no team", "enforcementAction": "deny"},
				{"kind": "Pod", "namespace": "cv-dev", "name": "b", "message": "not entitled", "enforcementAction": "deny"},
				{"kind": "Job", "namespace": "asr", "name": "a", "message": "no profile", "enforcementAction": "deny"},
				{"kind": "Pod", "namespace": "cv", "name": "a", "message": "not entitled\nat all", "enforcementAction": "deny"}]}}`),
	}
	for i := range objs.constraints {
		objs.constraints[i].Kind = "AccelcAdmission"
	}
	objs.clusterQueues = []clusterQueueObject{
		decode[clusterQueueObject](t, `{"metadata": {"name": "vision.a100", `+labLabels+`, "annotations": {"accelc.io/profile": "a100"}},
			"spec": {"cohortName": "vision", "resourceGroups": [{"flavors": [{"name": "nvidia-a100-80gb", "resources": [{"name": "nvidia.com/gpu", "nominalQuota": 0}]}]}]},
			"status": {"pendingWorkloads": 1, "reservingWorkloads": 2, "admittedWorkloads": 2,
				"flavorsReservation": [{"name": "nvidia-a100-80gb", "resources": [{"name": "nvidia.com/gpu", "total": "3"}]}],
				"flavorsUsage": [{"name": "nvidia-a100-80gb", "resources": [{"name": "nvidia.com/gpu", "total": "2"}]}]}}`),
		// v1beta1 names the cohort spec.cohort.
		decode[clusterQueueObject](t, `{"metadata": {"name": "speech.a100", `+labLabels+`, "annotations": {"accelc.io/profile": "a100"}},
			"spec": {"cohort": "speech", "resourceGroups": [{"flavors": [{"name": "nvidia-a100-80gb", "resources": [{"name": "nvidia.com/gpu", "nominalQuota": "1"}]}]}]}}`),
	}
	objs.cohorts = []cohortObject{
		decode[cohortObject](t, `{"metadata": {"name": "vision"}, "spec": {"resourceGroups": [
			{"flavors": [{"name": "nvidia-a100-80gb", "resources": [{"name": "nvidia.com/gpu", "nominalQuota": 8}]}]},
			{"flavors": [{"name": "accelc-default", "resources": [{"name": "cpu", "nominalQuota": "96"}, {"name": "memory", "nominalQuota": "512Gi"}]}]}]}}`),
	}
	objs.localQueues = []localQueueObject{
		decode[localQueueObject](t, `{"metadata": {"name": "a100", "namespace": "cv"}, "spec": {"clusterQueue": "vision.a100"}}`),
		decode[localQueueObject](t, `{"metadata": {"name": "a100", "namespace": "cv-dev"}, "spec": {"clusterQueue": "vision.a100"}}`),
	}
	for _, w := range []string{
		`{"metadata": {"name": "w1", "namespace": "cv"}, "spec": {"queueName": "a100"}}`,
		`{"metadata": {"name": "w2", "namespace": "cv"}, "spec": {"queueName": "a100"}, "status": {"conditions": [{"type": "QuotaReserved", "status": "True"}]}}`,
		`{"metadata": {"name": "w3", "namespace": "cv"}, "spec": {"queueName": "a100"}, "status": {"conditions": [{"type": "Admitted", "status": "True"}]}}`,
		`{"metadata": {"name": "w4", "namespace": "cv"}, "spec": {"queueName": "a100"}, "status": {"conditions": [{"type": "Finished", "status": "True"}]}}`,
		`{"metadata": {"name": "w5", "namespace": "cv-dev"}, "spec": {"queueName": "a100"}}`,
		`{"metadata": {"name": "w6", "namespace": "cv"}, "spec": {"queueName": "someone-elses"}}`,
	} {
		objs.workloads = append(objs.workloads, decode[workloadObject](t, w))
	}
	objs.sources = []ociRepositoryObject{decode[ociRepositoryObject](t, `{"metadata": {"name": "accelc-lab", "namespace": "flux-system", `+labLabels+`},
		"spec": {"url": "oci://registry.example.com/lab"},
		"status": {"artifact": {"revision": "1.4.0@sha256:2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae",
			"metadata": {"accelc.io/content-digest": "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
				"org.opencontainers.image.revision": "main@sha1:0123456789abcdef0123456789abcdef01234567"}},
			"conditions": [{"type": "Ready", "status": "True", "reason": "Succeeded", "message": "stored artifact"}]}}`)}
	objs.kustomizations = []kustomizationObject{decode[kustomizationObject](t, `{"metadata": {"name": "accelc-lab", "namespace": "flux-system", `+labLabels+`},
		"spec": {"path": "./", "sourceRef": {"kind": "OCIRepository", "name": "accelc-lab"}},
		"status": {"lastAppliedRevision": "1.4.0@sha256:2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae",
			"conditions": [{"type": "Ready", "status": "True", "reason": "ReconciliationSucceeded", "message": "Applied"}]}}`)}
	return objs
}

const (
	contentA = "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	contentB = "sha256:bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
)

// TestStatusGrouping: constraints sorted, violations by team (through the
// model), the team with none last; mutators counted by kind; queues by
// team, the Cohort's quota with what the team's ClusterQueues reserve and
// use; workloads waiting counted per accelc LocalQueue.
func TestStatusGrouping(t *testing.T) {
	st := assemble(statusObjects(t), statusModel(), &Rendering{ContentDigest: contentA})
	assert.Equal(t, "lab", st.Config)
	assert.Equal(t, "config", st.TeamsFrom)
	assert.Empty(t, st.Notes)

	a := st.Admission
	require.Len(t, a.Constraints, 2)
	assert.Equal(t, "accelc", a.Constraints[0].Name)
	assert.Equal(t, "accelc-warn", a.Constraints[1].Name)
	assert.False(t, a.Constraints[1].Audited)
	c := a.Constraints[0]
	assert.True(t, c.Audited)
	assert.Equal(t, 5, c.TotalViolations)
	assert.Equal(t, 4, c.Listed())
	var teams []string
	for _, tv := range c.ByTeam {
		teams = append(teams, tv.Team)
	}
	assert.Equal(t, []string{"speech", "vision", NoTeam}, teams)
	assert.Equal(t, []string{"cv", "cv-dev"}, []string{c.ByTeam[1].Violations[0].Namespace, c.ByTeam[1].Violations[1].Namespace})
	assert.Equal(t, []KindCount{{"Assign", 5}, {"ModifySet", 2}}, a.Mutators)
	assert.Equal(t, 7, a.MutatorCount)

	q := st.Queues
	require.Len(t, q.Teams, 2)
	speech, vision := q.Teams[0], q.Teams[1]
	assert.Equal(t, "speech", speech.Team)
	assert.Equal(t, "speech", speech.Cohort)
	assert.Equal(t, []FlavorResource{{Flavor: "nvidia-a100-80gb", Resource: "nvidia.com/gpu", Nominal: "1", Reserved: "0", Used: "0"}}, speech.Quota,
		"no Cohort object: the ClusterQueue's own quota")
	assert.Equal(t, "vision", vision.Team)
	assert.Equal(t, []FlavorResource{
		{Flavor: "nvidia-a100-80gb", Resource: "nvidia.com/gpu", Nominal: "8", Reserved: "3", Used: "2"},
		{Flavor: "accelc-default", Resource: "cpu", Nominal: "96", Reserved: "0", Used: "0"},
		{Flavor: "accelc-default", Resource: "memory", Nominal: "512Gi", Reserved: "0", Used: "0"},
	}, vision.Quota, "in the Cohort's order")
	require.Len(t, vision.ClusterQueues, 1)
	assert.Equal(t, ClusterQueue{Name: "vision.a100", Profile: "a100", PendingWorkloads: 1, ReservingWorkloads: 2, AdmittedWorkloads: 2,
		Flavors: []FlavorResource{{Flavor: "nvidia-a100-80gb", Resource: "nvidia.com/gpu", Nominal: "0", Reserved: "3", Used: "2"}}}, vision.ClusterQueues[0])
	assert.Equal(t, []PendingQueue{
		{Namespace: "cv", LocalQueue: "a100", ClusterQueue: "vision.a100", Team: "vision", Profile: "a100", Workloads: 2},
		{Namespace: "cv-dev", LocalQueue: "a100", ClusterQueue: "vision.a100", Team: "vision", Profile: "a100", Workloads: 1},
	}, q.Pending, "not admitted and not finished, in accelc's LocalQueues only")

	require.NotNil(t, st.Delivery.Drift)
	assert.Equal(t, InSync, st.Delivery.Drift.State)
}

// TestStatusTeamsWithoutConfig: without a model, namespaces map to teams
// through the NamespaceEntitlements, and ClusterQueues to their Cohort
// (the team's) and their profile annotation; without either, every
// namespace is NoTeam. No drift is computed.
func TestStatusTeamsWithoutConfig(t *testing.T) {
	objs := statusObjects(t)
	objs.entitlements = map[string]string{"cv": "vision", "cv-dev": "vision", "asr": "speech"}
	st := assemble(objs, nil, nil)
	assert.Equal(t, "NamespaceEntitlements", st.TeamsFrom)
	assert.Nil(t, st.Delivery.Drift)
	assert.Equal(t, "vision", st.Queues.Teams[1].Team)
	assert.Equal(t, "a100", st.Queues.Teams[1].ClusterQueues[0].Profile)
	assert.Len(t, st.Admission.Constraints[0].ByTeam, 3)

	objs.entitlements = nil
	st = assemble(objs, nil, nil)
	assert.Empty(t, st.TeamsFrom)
	require.Len(t, st.Admission.Constraints[0].ByTeam, 1)
	assert.Equal(t, NoTeam, st.Admission.Constraints[0].ByTeam[0].Team)
	assert.Len(t, st.Admission.Constraints[0].ByTeam[0].Violations, 4)
}

// TestStatusDrift: the states, decided by the content digest alone.
func TestStatusDrift(t *testing.T) {
	for _, tc := range []struct {
		name     string
		edit     func(*clusterObjects)
		checkout Rendering
		state    string
		reason   string
		hint     string
	}{
		{name: "same content, other commit", checkout: Rendering{Revision: "main@sha1:fedcba9876543210fedcba9876543210fedcba98", ContentDigest: contentA}, state: InSync},
		{name: "other content", checkout: Rendering{Revision: "main@sha1:fedcba9876543210fedcba9876543210fedcba98", ContentDigest: contentB}, state: Drifted,
			hint: "if the checkout is newer, render and push it"},
		{name: "uncommitted", checkout: Rendering{Revision: "main@sha1:0123456789abcdef0123456789abcdef01234567", Uncommitted: true, ContentDigest: contentB}, state: Drifted,
			hint: "the checkout has uncommitted changes"},
		{name: "not applied yet", checkout: Rendering{ContentDigest: contentA}, state: Pending,
			edit: func(o *clusterObjects) {
				o.kustomizations[0].Status.LastAppliedRevision = "1.3.0@sha256:0000000000000000000000000000000000000000000000000000000000000000"
				o.kustomizations[0].Status.Conditions = []condition{{Type: "Ready", Status: "False", Reason: "ReconciliationFailed", Message: "namespace gone"}}
			},
			reason: "Flux holds the checkout's render (1.4.0@sha256:2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae), but Kustomization flux-system/accelc-lab has applied 1.3.0@sha256:0000000000000000000000000000000000000000000000000000000000000000 (ReconciliationFailed: namespace gone)"},
		{name: "no annotation", checkout: Rendering{ContentDigest: contentA}, state: Unknown,
			edit:   func(o *clusterObjects) { delete(o.sources[0].Status.Artifact.Metadata, "accelc.io/content-digest") },
			reason: "carries no accelc.io/content-digest annotation"},
		{name: "no artifact", checkout: Rendering{ContentDigest: contentA}, state: Unknown,
			edit:   func(o *clusterObjects) { o.sources[0].Status.Artifact = nil },
			reason: "OCIRepository flux-system/accelc-lab has no artifact yet"},
		{name: "another cluster's source", checkout: Rendering{ContentDigest: contentA}, state: Unknown,
			edit:   func(o *clusterObjects) { o.sources[0].Metadata.Labels["accelc.io/cluster"] = "prod" },
			reason: "no OCIRepository of accelc's for cluster lab"},
		{name: "no Flux", checkout: Rendering{ContentDigest: contentA}, state: Unknown,
			edit:   func(o *clusterObjects) { o.flux, o.sources, o.kustomizations = false, nil, nil },
			reason: "Flux is not installed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objs := statusObjects(t)
			if tc.edit != nil {
				tc.edit(objs)
			}
			d := assemble(objs, statusModel(), &tc.checkout).Delivery.Drift
			require.NotNil(t, d)
			assert.Equal(t, tc.state, d.State)
			assert.Contains(t, d.Reason, tc.reason)
			assert.Contains(t, d.Hint, tc.hint)
			assert.Equal(t, tc.checkout, d.Checkout)
		})
	}
}

// TestStatusNotes: objects labelled for another cluster than the
// configuration's are noted.
func TestStatusNotes(t *testing.T) {
	objs := statusObjects(t)
	m := statusModel()
	m.Cluster.Name = "prod"
	st := assemble(objs, m, &Rendering{ContentDigest: contentA})
	require.Len(t, st.Notes, 1)
	assert.Contains(t, st.Notes[0], "labelled accelc.io/cluster=lab, but the configuration is cluster prod")
}

// TestStatusText: the sections, aligned, in order; digests and commits
// shortened; a message kept on one line; the audit's listing said to be
// partial.
func TestStatusText(t *testing.T) {
	st := assemble(statusObjects(t), statusModel(), &Rendering{Revision: "main@sha1:fedcba9876543210fedcba9876543210fedcba98", ContentDigest: contentB})
	st.Cluster = "kind-lab"
	var b bytes.Buffer
	require.NoError(t, st.WriteText(&b))
	assert.Equal(t, `Cluster kind-lab, configuration lab (teams from its CUE)

Gatekeeper: 2 constraints, 7 mutators (5 Assign, 2 ModifySet)
  CONSTRAINT                   ACTION  VIOLATIONS  AUDITED
  AccelcAdmission/accelc       deny    5           2026-11-20T10:00:00Z
  AccelcAdmission/accelc-warn  warn    -           not yet

  Violations of AccelcAdmission/accelc by team (the audit lists 4 of 5):
  TEAM       ACTION  OBJECT            MESSAGE
  speech     deny    Job asr/a         no profile
  vision     deny    Pod cv/a          not entitled at all
  vision     deny    Pod cv-dev/b      not entitled
  (no team)  deny    Pod kube-batch/z  no team

Kueue (kueue.x-k8s.io/v1beta2): 2 ClusterQueues of 2 teams, 3 workloads pending
  TEAM    PROFILE  CLUSTERQUEUE  ADMITTED  RESERVING  PENDING
  speech  a100     speech.a100   0         0          0
  vision  a100     vision.a100   2         2          1

  TEAM    COHORT  FLAVOR            RESOURCE        QUOTA  RESERVED  USED
  speech  speech  nvidia-a100-80gb  nvidia.com/gpu  1      0         0
  vision  vision  nvidia-a100-80gb  nvidia.com/gpu  8      3         2
  vision  vision  accelc-default    cpu             96     0         0
  vision  vision  accelc-default    memory          512Gi  0         0

  NAMESPACE  LOCALQUEUE  TEAM    PROFILE  PENDING
  cv         a100        vision  a100     2
  cv-dev     a100        vision  a100     1

Flux: 1 OCIRepository, 1 Kustomization
  KIND           NAME                    READY  REVISION                   MESSAGE
  OCIRepository  flux-system/accelc-lab  True   1.4.0@sha256:2c26b46b68ff  stored artifact
  Kustomization  flux-system/accelc-lab  True   1.4.0@sha256:2c26b46b68ff  Applied
  artifact 1.4.0@sha256:2c26b46b68ff: commit main@sha1:0123456789ab, content sha256:aaaaaaaaaaaa

drift: cluster runs main@sha1:0123456789ab (content sha256:aaaaaaaaaaaa), the checkout renders main@sha1:fedcba987654 (content sha256:bbbbbbbbbbbb)
  hint: if the checkout is newer, render and push it (accelc render, then accelc push; CI does on merge) for Flux to apply; if the cluster is newer, update the checkout
`, b.String())

	// Nothing installed, no configuration.
	b.Reset()
	require.NoError(t, assemble(&clusterObjects{}, nil, nil).WriteText(&b))
	assert.Equal(t, `Cluster  (no teams known: no configuration given, no NamespaceEntitlements)

Gatekeeper: not installed

Kueue: not installed

Flux: not installed

drift not computed: give --config CLUSTER_DIR to compare the cluster with what the checkout renders
`, b.String())

	// Installed, but none of accelc's objects there.
	b.Reset()
	require.NoError(t, assemble(&clusterObjects{gatekeeper: true, kueue: true, kueueVersion: "kueue.x-k8s.io/v1beta1", flux: true}, nil, nil).WriteText(&b))
	for _, line := range []string{
		"Gatekeeper: none of accelc's constraints or mutators",
		"Kueue (kueue.x-k8s.io/v1beta1): none of accelc's ClusterQueues",
		"Flux: none of accelc's OCIRepositories or Kustomizations",
	} {
		assert.Contains(t, b.String(), "\n"+line)
	}
}

func TestShort(t *testing.T) {
	for in, want := range map[string]string{
		"":                       "",
		"sha256:abc":             "sha256:abc",
		"sha":                    "sha",
		"shasha1:0123456789abcd": "shasha1:0123456789ab",
		"1.4.0@sha256:2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae": "1.4.0@sha256:2c26b46b68ff",
		"stored 'v1@sha256:2c26b46b68ffc68ff99b' and main@sha1:0123456789abcdef0123":    "stored 'v1@sha256:2c26b46b68ff' and main@sha1:0123456789ab",
		"sha256:" + strings.Repeat("A", 64):                                             "sha256:" + strings.Repeat("A", 64),
	} {
		assert.Equal(t, want, short(in), in)
	}
}

// running is what the lab runs: a pod of 4 GPUs naming as its owner a
// CPU-only Job that Kueue admitted, a GPU pod with no owner in speech's
// namespace, and one in a namespace of no team.
func running(t *testing.T) *workloads.Set {
	set, err := workloads.Decode([]byte(`{"apiVersion": "v1", "kind": "List", "items": [
		{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "spoof", "namespace": "cv", "uid": "p1",
			"ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job", "name": "cpu-only", "uid": "j1", "controller": true}]},
			"spec": {"nodeName": "a100-1", "containers": [{"name": "c", "resources": {"limits": {"nvidia.com/gpu": "4"}}}]}, "status": {"phase": "Running"}},
		{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "bare", "namespace": "asr", "uid": "p2"},
			"spec": {"nodeName": "a100-2", "containers": [{"name": "c", "resources": {"limits": {"nvidia.com/gpu": "1"}}}]}, "status": {"phase": "Running"}},
		{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "z", "namespace": "kube-batch", "uid": "p3"},
			"spec": {"nodeName": "a100-2", "containers": [{"name": "c", "resources": {"limits": {"nvidia.com/gpu": "1"}}}]}, "status": {"phase": "Running"}},
		{"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "cpu-only", "namespace": "cv", "uid": "j1"}}]}`))
	require.NoError(t, err)
	set.Kueue = "kueue.x-k8s.io/v1beta2"
	set.KueueWorkloads = []workloads.KueueWorkload{{
		Namespace: "cv", Name: "job-cpu-only-1a2b3", Admitted: true,
		Owners:  []workloads.OwnerRef{{Ref: workloads.Ref{APIVersion: "batch/v1", Kind: "Job", Namespace: "cv", Name: "cpu-only"}, UID: "j1"}},
		PodSets: []workloads.PodSet{{Name: "main", Count: 1, PerPod: map[string]int64{"cpu": 1}}},
	}}
	return set
}

// TestStatusUnaccounted: the pods holding accelerators that no admitted
// Workload accounts for, in the namespaces of teams that queue through
// Kueue (the model's; without it, those with accelc's LocalQueues), with
// their team, in the Kueue section.
func TestStatusUnaccounted(t *testing.T) {
	objs := statusObjects(t)
	objs.running = running(t)
	st := assemble(objs, statusModel(), nil)
	var got []string
	for _, u := range st.Queues.Unaccounted {
		got = append(got, u.Team+" "+u.Namespace+"/"+u.Name+" "+u.Reason)
	}
	assert.Equal(t, []string{"speech asr/bare NoWorkload", "vision cv/spoof FewerDevices"}, got)

	var b bytes.Buffer
	require.NoError(t, st.WriteText(&b))
	assert.Contains(t, b.String(), "Kueue (kueue.x-k8s.io/v1beta2): 2 ClusterQueues of 2 teams, 3 workloads pending, 2 pods holding accelerators outside it\n")
	assert.Contains(t, b.String(), `
  Pods holding accelerators that no admitted Kueue Workload accounts for (Kueue's quota counts none of their devices):
  TEAM    POD       NODE    DEVICES           OWNER         WHY
  speech  asr/bare  a100-2  1 nvidia.com/gpu  -             NoWorkload: no Workload of Kueue's is for the pod: Kueue counts none of its devices
  vision  cv/spoof  a100-1  4 nvidia.com/gpu  Job/cpu-only  FewerDevices: Workload cv/job-cpu-only-1a2b3, admitted for the pod or its owner Job cv/cpu-only, asks for at most 0 nvidia.com/gpu a pod; the pod holds 4 nvidia.com/gpu
`)
	data, err := json.Marshal(st.Queues.Unaccounted[1])
	require.NoError(t, err)
	assert.JSONEq(t, `{"team": "vision", "namespace": "cv", "name": "spoof", "node": "a100-1", "devices": {"nvidia.com/gpu": 4},
		"owner": {"apiVersion": "batch/v1", "kind": "Job", "namespace": "cv", "name": "cpu-only"}, "workload": "cv/job-cpu-only-1a2b3",
		"reason": "FewerDevices", "message": "Workload cv/job-cpu-only-1a2b3, admitted for the pod or its owner Job cv/cpu-only, asks for at most 0 nvidia.com/gpu a pod; the pod holds 4 nvidia.com/gpu"}`, string(data))

	// Without the configuration: asr has none of accelc's LocalQueues.
	objs.entitlements = map[string]string{"cv": "vision", "asr": "speech"}
	st = assemble(objs, nil, nil)
	require.Len(t, st.Queues.Unaccounted, 1)
	assert.Equal(t, "vision", st.Queues.Unaccounted[0].Team)
	assert.Equal(t, map[string]map[string]bool{"cv": {"a100": true}, "cv-dev": {"a100": true}}, queuedNamespaces(objs, nil))
}

// TestStatusGatekeeperMutatesUpdates: Gatekeeper's default mutating rules
// (CREATE and UPDATE of everything) send running pods' UPDATEs through
// accelc's mutators: status says so, and how to install it; accelc's
// installation (CREATE only) and a rule for other kinds say nothing.
func TestStatusGatekeeperMutatesUpdates(t *testing.T) {
	hook := func(doc string) mutatingWebhookConfiguration {
		return decode[mutatingWebhookConfiguration](t, doc)
	}
	chart := hook(`{"webhooks": [{"rules": [{"operations": ["CREATE", "UPDATE"], "apiGroups": ["*"], "apiVersions": ["*"], "resources": ["*"]}]}]}`)
	accelcs := hook(`{"webhooks": [{"rules": [{"operations": ["CREATE"], "apiGroups": ["*"], "apiVersions": ["*"], "resources": ["*"]}]}]}`)
	others := hook(`{"webhooks": [{"rules": [{"operations": ["*"], "apiGroups": ["apps"], "apiVersions": ["*"], "resources": ["deployments"]}]}]}`)
	assert.True(t, chart.mutatesPodUpdates())
	assert.False(t, accelcs.mutatesPodUpdates())
	assert.False(t, others.mutatesPodUpdates())

	objs := statusObjects(t)
	objs.mutatingWebhook = &chart
	st := assemble(objs, nil, nil)
	require.NotEmpty(t, objs.mutators, "the fixture has accelc's mutators")
	require.Len(t, st.Notes, 1)
	assert.Contains(t, st.Notes[0], "receives pod UPDATEs")
	assert.Contains(t, st.Notes[0], "mutations/configmap-accelc-gatekeeper-values.yaml")
	objs.mutatingWebhook = &accelcs
	assert.Empty(t, assemble(objs, nil, nil).Notes)
}

// TestStatusGatekeeperMutatesPods: on Kubernetes 1.36 a Gatekeeper whose
// mutating webhook receives new pods (installed without accelc's match
// condition) makes every pod wait for a call that changes nothing, since
// the API server mutates them (accelc-pod-profile): status says so. With
// the condition, on an older cluster, or with no model, it says nothing.
func TestStatusGatekeeperMutatesPods(t *testing.T) {
	hook := func(doc string) mutatingWebhookConfiguration {
		return decode[mutatingWebhookConfiguration](t, doc)
	}
	chart := hook(`{"webhooks": [{"rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["*"], "resources": ["pods"]}]}]}`)
	accelcs := hook(`{"webhooks": [{"rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["*"], "resources": ["pods"]}], "matchConditions": [{"name": "pods-mutated-by-accelc-pod-profile", "expression": "true"}]}]}`)
	selected := hook(`{"webhooks": [{"rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["*"], "resources": ["pods"]}], "objectSelector": {"matchExpressions": [{"key": "accelc.io/no-object", "operator": "Exists"}, {"key": "accelc.io/no-object", "operator": "DoesNotExist"}]}}]}`)
	someLabelled := hook(`{"webhooks": [{"rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["*"], "resources": ["pods"]}], "objectSelector": {"matchExpressions": [{"key": "team", "operator": "Exists"}, {"key": "accelc.io/no-object", "operator": "DoesNotExist"}]}}]}`)
	others := hook(`{"webhooks": [{"rules": [{"operations": ["CREATE"], "apiGroups": ["apps"], "apiVersions": ["*"], "resources": ["deployments"]}]}]}`)
	assert.True(t, chart.mutatesPods())
	assert.False(t, accelcs.mutatesPods())
	assert.False(t, selected.mutatesPods(), "a selector no object meets sends no pod")
	assert.True(t, someLabelled.mutatesPods(), "a selector some pods meet sends them")
	assert.False(t, others.mutatesPods())

	objs := statusObjects(t)
	objs.mutatingWebhook = &chart
	m := &compile.Model{Cluster: compile.Cluster{KubernetesVersion: "1.36"}}
	st := assemble(objs, m, nil)
	require.Len(t, st.Notes, 1)
	assert.Contains(t, st.Notes[0], "receives new pods")
	assert.Contains(t, st.Notes[0], "mutations/configmap-accelc-gatekeeper-values.yaml")
	m.Cluster.KubernetesVersion = "1.34"
	assert.Empty(t, assemble(objs, m, nil).Notes, "before 1.36 Gatekeeper mutates pods")
	assert.Empty(t, assemble(objs, nil, nil).Notes)
}

// TestStatusGatekeeperValidatesEverything: Gatekeeper's default
// validating rules (every resource) send every write through its webhook:
// status says so, and how to install it; accelc's narrowed rules say
// nothing.
func TestStatusGatekeeperValidatesEverything(t *testing.T) {
	hook := func(doc string) mutatingWebhookConfiguration {
		return decode[mutatingWebhookConfiguration](t, doc)
	}
	chart := hook(`{"webhooks": [{"rules": [{"operations": ["CREATE", "UPDATE"], "apiGroups": ["*"], "apiVersions": ["*"], "resources": ["*", "pods/ephemeralcontainers"]}]}, ` + checkIgnoreLabelJSON + `]}`)
	accelcs := hook(`{"webhooks": [{"rules": [{"operations": ["CREATE", "UPDATE"], "apiGroups": [""], "apiVersions": ["*"], "resources": ["pods", "pods/ephemeralcontainers"]}, {"operations": ["CREATE", "UPDATE"], "apiGroups": ["templates.gatekeeper.sh", "constraints.gatekeeper.sh"], "apiVersions": ["*"], "resources": ["*"]}]}, ` + checkIgnoreLabelJSON + `]}`)
	assert.True(t, chart.receivesEverything())
	assert.False(t, accelcs.receivesEverything())

	objs := statusObjects(t)
	require.NotEmpty(t, objs.constraints, "the fixture has accelc's constraints")
	objs.validatingWebhook = &chart
	st := assemble(objs, nil, nil)
	require.Len(t, st.Notes, 1)
	assert.Contains(t, st.Notes[0], "receives every resource")
	assert.Contains(t, st.Notes[0], "mutations/configmap-accelc-gatekeeper-values.yaml")
	objs.validatingWebhook = &accelcs
	assert.Empty(t, assemble(objs, nil, nil).Notes)
}

// TestStatusPodAdmission: where Gatekeeper's webhook skips the pods
// accelc-pod-admission judges and the policy, its bindings or their Deny
// are not in the cluster while a constraint denies, status says those
// pods are admitted unjudged; where the bindings deny and no constraint
// does (an enforcementAction relaxed live), it says the API server still
// refuses them. Nothing is said where the policy could not be read.
func TestStatusPodAdmission(t *testing.T) {
	hook := decode[mutatingWebhookConfiguration](t, `{"webhooks": [{"matchConditions": [{"name": "changes-what-policies-read"}, {"name": "pods-judged-by-accelc-pod-admission"}]}, `+checkIgnoreLabelJSON+`]}`)
	assert.True(t, hook.skipsJudgedPods())
	assert.False(t, decode[mutatingWebhookConfiguration](t, `{"webhooks": [{"matchConditions": [{"name": "changes-what-policies-read"}]}]}`).skipsJudgedPods())

	installed := podAdmissionObjects{read: true, policy: true, bindings: 3, denying: 3,
		bound: map[string]string{"a100": "", "h200": "", "l4": ""}, unknownPolicy: true, unknownBinding: true, unknownLeaves: []string{"a100", "h200", "l4"}}
	without := func(f func(*podAdmissionObjects)) podAdmissionObjects {
		pa := installed
		pa.bound = maps.Clone(installed.bound)
		f(&pa)
		return pa
	}
	for _, tc := range []struct {
		name    string
		skips   bool
		pa      podAdmissionObjects
		relaxed bool // every constraint at dryrun
		want    string
	}{
		{name: "as rendered", skips: true, pa: installed},
		{name: "not read", skips: true},
		{name: "no policy", skips: true, pa: podAdmissionObjects{read: true}, want: "has no ValidatingAdmissionPolicy accelc-pod-admission: those pods are admitted unjudged"},
		{name: "no binding", skips: true, pa: podAdmissionObjects{read: true, policy: true}, want: "has no binding of the ValidatingAdmissionPolicy accelc-pod-admission: those pods are admitted unjudged"},
		{name: "bindings warn", skips: true, pa: podAdmissionObjects{read: true, policy: true, bindings: 3}, want: "no binding of accelc-pod-admission has validationActions Deny while AccelcAdmission/accelc denies: those pods are admitted unjudged"},
		{name: "bindings warn, Gatekeeper judges", pa: podAdmissionObjects{read: true, policy: true, bindings: 3}},
		{name: "bindings warn, constraints relaxed", skips: true, pa: podAdmissionObjects{read: true, policy: true, bindings: 3}, relaxed: true},
		{name: "constraints relaxed live", skips: true, pa: installed, relaxed: true, want: "accelc's constraints do not deny (AccelcAdmission/accelc-warn (warn), AccelcAdmission/accelc (dryrun)), but 3 binding(s) of the ValidatingAdmissionPolicy accelc-pod-admission have validationActions Deny: the API server still refuses"},
		{name: "no policy, Gatekeeper judges", pa: podAdmissionObjects{read: true}},
		{name: "no unknown-profile policy", skips: true, pa: without(func(pa *podAdmissionObjects) { pa.unknownPolicy = false }), want: "has no accelc-pod-admission-unknown-profile (the policy or its binding): a pod naming a profile the tree no longer has"},
		{name: "no unknown-profile binding", skips: true, pa: without(func(pa *podAdmissionObjects) { pa.unknownBinding = false }), want: "has no accelc-pod-admission-unknown-profile"},
		{name: "one profile's binding deleted", skips: true, pa: without(func(pa *podAdmissionObjects) { delete(pa.bound, "h200"); pa.bindings, pa.denying = 2, 2 }), want: "no binding of accelc-pod-admission selects hardware profile(s) h200 (the tree renders accelc-pod-admission-<profile>): their pods are admitted unjudged"},
		{name: "one profile's binding deleted, Gatekeeper judges", pa: without(func(pa *podAdmissionObjects) { delete(pa.bound, "h200") })},
		{name: "one profile's binding relaxed live", skips: true, pa: without(func(pa *podAdmissionObjects) { pa.bound["h200"] = "validationActions [Audit]"; pa.denying = 2 }), want: "the binding of accelc-pod-admission for hardware profile(s) h200 (validationActions [Audit]) does not refuse while AccelcAdmission/accelc denies: their pods are admitted unjudged"},
		{name: "one profile's missing HardwareProfile allowed", skips: true, pa: without(func(pa *podAdmissionObjects) { pa.bound["h200"] = "parameterNotFoundAction Allow" }), want: "the binding of accelc-pod-admission for hardware profile(s) h200 (parameterNotFoundAction Allow) does not refuse"},
		{name: "one profile's binding relaxed live, Gatekeeper judges", pa: without(func(pa *podAdmissionObjects) { pa.bound["h200"] = "validationActions [Audit]"; pa.denying = 2 })},
		{name: "one profile's binding relaxed, constraints relaxed", skips: true, pa: without(func(pa *podAdmissionObjects) { pa.bound["h200"] = "validationActions [Audit]"; pa.denying = 2 }), relaxed: true, want: "accelc's constraints do not deny (AccelcAdmission/accelc-warn (warn), AccelcAdmission/accelc (dryrun)), but 2 binding(s)"},
		{name: "no policy, nothing denies", skips: true, pa: podAdmissionObjects{read: true}, relaxed: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objs := statusObjects(t)
			objs.podAdmission = tc.pa
			if tc.skips {
				objs.validatingWebhook = &hook
			}
			if tc.relaxed {
				for i := range objs.constraints {
					if objs.constraints[i].Spec.EnforcementAction == "deny" {
						objs.constraints[i].Spec.EnforcementAction = "dryrun"
					}
				}
			}
			notes := assemble(objs, nil, nil).Notes
			if tc.want == "" {
				assert.Empty(t, notes)
				return
			}
			require.Len(t, notes, 1)
			assert.Contains(t, notes[0], tc.want)
		})
	}
}

// TestStatusWebhookScope: Gatekeeper installed with the values the
// configuration renders says nothing; installed with another
// configuration's (a cluster before 1.36 that took its catalog service
// out, whose mutators now label Jobs from their queue; a validating
// webhook narrowed to pods), status names what its webhooks do not
// receive.
func TestStatusWebhookScope(t *testing.T) {
	res, err := Cluster(t.Context(), "../../examples/clusters/hetero-prod", Options{Stages: Rendered})
	require.NoError(t, err)
	m := res.Model
	hook := func(rules []admissionregistrationv1.RuleWithOperations, sel *metav1.LabelSelector) *mutatingWebhookConfiguration {
		b, err := json.Marshal(map[string]any{"webhooks": []any{map[string]any{"rules": rules, "objectSelector": sel}}})
		require.NoError(t, err)
		h := decode[mutatingWebhookConfiguration](t, string(b))
		return &h
	}
	installed := func(m *compile.Model) *clusterObjects {
		v, err := render.GatekeeperInstallValues(m)
		require.NoError(t, err)
		objs := statusObjects(t)
		objs.mutatingWebhook = hook(v.MutatingWebhookCustomRules, v.MutatingWebhookObjectSelector)
		objs.validatingWebhook = hook(v.ValidatingWebhookCustomRules, nil)
		return objs
	}

	objs := installed(m)
	notes, err := webhookScopeNotes(objs, m)
	require.NoError(t, err)
	assert.Empty(t, notes, "installed with this configuration's values")

	pods := []admissionregistrationv1.RuleWithOperations{{
		Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
		Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"*"}, Resources: []string{"pods"}},
	}}
	objs.validatingWebhook = hook(pods, nil)
	notes, err = webhookScopeNotes(objs, m)
	require.NoError(t, err)
	require.Len(t, notes, 1)
	assert.Contains(t, notes[0], "validating webhook (gatekeeper-validating-webhook-configuration) does not receive pods/ephemeralcontainers (CREATE, UPDATE), daemonsets.apps (CREATE, UPDATE), ")
	assert.Contains(t, notes[0], "jobs.batch (CREATE, UPDATE)")
	assert.Contains(t, notes[0], "more, which accelc's constraints judge")
	assert.Contains(t, notes[0], "admitted unjudged")

	// The same cluster before 1.36 without its catalog service: its
	// mutators label Jobs, and Gatekeeper still has the values rendered
	// with the catalog service (pods only).
	withService := *m
	withService.Cluster.KubernetesVersion = "1.34"
	objs = installed(&withService)
	without := withService
	without.Cluster.CatalogService = nil
	notes, err = webhookScopeNotes(objs, &without)
	require.NoError(t, err)
	require.Len(t, notes, 1)
	assert.Contains(t, notes[0], "mutating webhook (gatekeeper-mutating-webhook-configuration) does not receive daemonsets.apps (CREATE), deployments.apps (CREATE), replicasets.apps (CREATE), statefulsets.apps (CREATE), jobs.batch (CREATE), which accelc's mutators mutate")
	assert.Contains(t, notes[0], "mutations/configmap-accelc-gatekeeper-values.yaml")
	notes, err = webhookScopeNotes(installed(&without), &without)
	require.NoError(t, err)
	assert.Empty(t, notes)
}

// checkIgnoreLabelJSON is Gatekeeper's check-ignore-label webhook as its
// chart registers it.
const checkIgnoreLabelJSON = `{"name": "check-ignore-label.gatekeeper.sh", "clientConfig": {"service": {"name": "gatekeeper-webhook-service", "namespace": "policy-system", "path": "/v1/admitlabel"}},
	"failurePolicy": "Fail", "rules": [{"operations": ["CREATE", "UPDATE"], "apiGroups": [""], "apiVersions": ["*"], "resources": ["namespaces"]}]}`

// TestStatusIgnoreLabel: every accelc policy skips a namespace labelled
// admission.gatekeeper.sh/ignore, trusting Gatekeeper's check-ignore-label
// webhook to keep that label to the namespaces Gatekeeper exempts. Status
// says where that webhook is missing, fails open or does not see the
// namespaces' writes, and names the labelled namespaces accelc governs:
// not Gatekeeper's own (its webhooks' Service's namespace), not those
// cluster.excludedNamespaces names or matches. It says nothing where accelc
// has no constraint in the cluster.
func TestStatusIgnoreLabel(t *testing.T) {
	hook := func(doc string) *mutatingWebhookConfiguration {
		h := decode[mutatingWebhookConfiguration](t, doc)
		return &h
	}
	validation := `{"name": "validation.gatekeeper.sh", "clientConfig": {"service": {"name": "gatekeeper-webhook-service", "namespace": "policy-system", "path": "/v1/admit"}}, "rules": [{"operations": ["CREATE", "UPDATE"], "apiGroups": [""], "apiVersions": ["*"], "resources": ["pods"]}]}`
	guarded := hook(`{"webhooks": [` + validation + `, ` + checkIgnoreLabelJSON + `]}`)
	assert.Empty(t, guarded.ignoreLabelUnguarded())
	assert.Equal(t, "policy-system", guarded.namespace())
	for _, tc := range []struct{ name, doc, want string }{
		{"no check-ignore-label", `{"webhooks": [` + validation + `]}`, "has no check-ignore-label.gatekeeper.sh webhook"},
		{"fails open", `{"webhooks": [{"name": "check-ignore-label.gatekeeper.sh", "failurePolicy": "Ignore", "rules": [{"operations": ["CREATE", "UPDATE"], "apiGroups": [""], "resources": ["namespaces"]}]}]}`, "registers check-ignore-label.gatekeeper.sh with failurePolicy Ignore"},
		{"no UPDATE", `{"webhooks": [{"name": "check-ignore-label.gatekeeper.sh", "rules": [{"operations": ["CREATE"], "apiGroups": [""], "resources": ["namespaces"]}]}]}`, "registers check-ignore-label.gatekeeper.sh without namespaces' UPDATE in its rules"},
		{"other resources", `{"webhooks": [{"name": "check-ignore-label.gatekeeper.sh", "rules": [{"operations": ["*"], "apiGroups": [""], "resources": ["pods"]}]}]}`, "registers check-ignore-label.gatekeeper.sh without namespaces' CREATE in its rules"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objs := statusObjects(t)
			objs.validatingWebhook = hook(tc.doc)
			notes := assemble(objs, nil, nil).Notes
			require.Len(t, notes, 1)
			assert.Contains(t, notes[0], "Gatekeeper's validating webhook configuration (gatekeeper-validating-webhook-configuration) "+tc.want)
			assert.Contains(t, notes[0], "validatingWebhookCheckIgnoreFailurePolicy: Fail")
			objs.constraints = nil
			assert.Empty(t, assemble(objs, nil, nil).Notes, "no accelc constraint: nothing to say")
		})
	}
	assert.Empty(t, hook(`{"webhooks": [{"name": "check-ignore-label.gatekeeper.sh", "rules": [{"operations": ["*"], "apiGroups": ["*"], "resources": ["*"]}]}]}`).ignoreLabelUnguarded(),
		"wildcards send namespaces, and no failurePolicy is the API server's Fail")

	objs := statusObjects(t)
	objs.validatingWebhook = guarded
	objs.ignored = []string{"asr", "kube-public", "kube-system", "policy-system", "scratch"}
	m := statusModel()
	m.Cluster.ExcludedNamespaces = []string{"kube-system", "kube-p*"}
	notes := assemble(objs, m, nil).Notes
	require.Len(t, notes, 1)
	assert.Contains(t, notes[0], "namespaces labelled admission.gatekeeper.sh/ignore, which accelc governs: asr (team speech), scratch; ")
	assert.Contains(t, notes[0], "kubectl label namespace NAME admission.gatekeeper.sh/ignore-")
	notes = assemble(objs, nil, nil).Notes
	require.Len(t, notes, 1, "without a configuration every labelled namespace but Gatekeeper's is named")
	assert.Contains(t, notes[0], "(give --config to leave out those cluster.excludedNamespaces names): asr, kube-public, kube-system, scratch; ")
	objs.ignored = []string{"policy-system", "kube-system"}
	assert.Empty(t, assemble(objs, m, nil).Notes)
}

// TestStatusIdentities: the users the policies trust to lift Kueue's
// gate and to make a Job's pods must be who the cluster runs as. Status
// says where Kueue's webhooks are served from a namespace none of the
// manager's service accounts is in, or where every trusted service
// account is missing; a user that is no service account is not checked,
// and nothing is said without accelc's admission in the cluster.
func TestStatusIdentities(t *testing.T) {
	const (
		kueueSA = "system:serviceaccount:kueue-system:kueue-controller-manager"
		jobSA   = "system:serviceaccount:kube-system:job-controller"
	)
	m := statusModel()
	m.Cluster.KueueIdentities = compile.KueueIdentities{Manager: []string{kueueSA}, PodControllers: map[string][]string{"batch/Job": {jobSA}}}
	notes := func(ids identityObjects) []string {
		objs := statusObjects(t)
		objs.identities = ids
		return assemble(objs, m, nil).Notes
	}
	assert.Empty(t, notes(identityObjects{kueueNamespace: "kueue-system"}), "as installed")

	got := notes(identityObjects{kueueNamespace: "openshift-kueue-operator"})
	require.Len(t, got, 1)
	assert.Contains(t, got[0], "Kueue's webhooks (kueue-mutating-webhook-configuration) call a Service in namespace openshift-kueue-operator, but cluster.kueueIdentities.manager names service accounts of kueue-system: accelc refuses the update by which Kueue lifts its admission gate")
	assert.Contains(t, got[0], "system:serviceaccount:openshift-kueue-operator:NAME")

	got = notes(identityObjects{missing: map[string]bool{kueueSA: true, jobSA: true}})
	require.Len(t, got, 2)
	assert.Contains(t, got[0], "cluster.kueueIdentities.manager names no service account this cluster has ("+kueueSA+")")
	assert.Contains(t, got[1], `cluster.kueueIdentities.podControllers["batch/Job"] names no service account this cluster has (`+jobSA+`): accelc refuses every pod holding accelerators that a Job makes`)
	assert.Contains(t, got[1], "--use-service-account-credentials")

	m.Cluster.KueueIdentities.PodControllers["batch/Job"] = []string{jobSA, "system:kube-controller-manager"}
	m.Cluster.KueueIdentities.Manager = []string{kueueSA, "system:serviceaccount:redhat-ods-applications:kueue-controller-manager"}
	got = notes(identityObjects{missing: map[string]bool{kueueSA: true, jobSA: true}})
	assert.Empty(t, got, "a user that is no service account, or one that exists, may be who runs")

	objs := statusObjects(t)
	objs.constraints = nil
	objs.identities = identityObjects{kueueNamespace: "elsewhere", missing: map[string]bool{kueueSA: true, jobSA: true}}
	assert.Empty(t, assemble(objs, m, nil).Notes, "no accelc admission: nothing to say")

	for user, want := range map[string]bool{kueueSA: true, "system:serviceaccount:ns": false, "system:serviceaccount::x": false, "system:kube-controller-manager": false, "system:serviceaccount:a:b:c": false} {
		_, _, ok := serviceAccountUser(user)
		assert.Equal(t, want, ok, user)
	}
}
