package serve

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/accelc/accelc/pkg/inventory"
)

// queued is a snapshot with Kueue's Workloads beside it.
type queued struct {
	Static
	wls []Workload
	why string
}

func (q queued) Workloads() ([]Workload, string) { return q.wls, q.why }

// now is the tests' clock.
var now = time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)

func ago(m int) time.Time { return now.Add(-time.Duration(m) * time.Minute) }

// premiumQueue: hetero-prod's premium-gpu profile (LocalQueue
// premium-gpu, team ml-research in namespaces ml-research and
// ml-research-dev) has seen runs of 10, 20 and 30 minutes (median 20);
// two run, admitted 5 and 15 minutes ago (places free in 15 and 5); two
// are pending. The first pending takes the place free in 5 (then 25),
// the second the one free in 15 (then 35): a workload queued now gets a
// place in 25 minutes.
func premiumQueue() []Workload {
	return []Workload{
		{Namespace: "ml-research", Name: "run-10", Queue: "premium-gpu", Admitted: ago(100), Finished: ago(90)},
		{Namespace: "ml-research-dev", Name: "run-20", Queue: "premium-gpu", Admitted: ago(80), Finished: ago(60)},
		{Namespace: "ml-research", Name: "run-30", Queue: "premium-gpu", Admitted: ago(50), Finished: ago(20)},
		{Namespace: "ml-research", Name: "running-5", Queue: "premium-gpu", Admitted: ago(5)},
		{Namespace: "ml-research-dev", Name: "running-15", Queue: "premium-gpu", Admitted: ago(15)},
		{Namespace: "ml-research", Name: "pending-1", Queue: "premium-gpu"},
		{Namespace: "ml-research-dev", Name: "pending-2", Queue: "premium-gpu"},
		// Not counted: deactivated; finished without admission; another
		// queue; a namespace of no team of the profile.
		{Namespace: "ml-research", Name: "inactive", Queue: "premium-gpu", Inactive: true},
		{Namespace: "ml-research", Name: "never-admitted", Queue: "premium-gpu", Finished: ago(3)},
		{Namespace: "ml-research", Name: "elsewhere", Queue: "team-queue"},
		{Namespace: "default", Name: "stray", Queue: "premium-gpu"},
	}
}

// allInUse is the snapshot with every device of every node held.
func allInUse(snap *inventory.Snapshot) *inventory.Snapshot {
	out := counted(snap, 0)
	for i := range out.Nodes {
		inventory.SetInUse(&out.Nodes[i], map[string]int{"ml-research": 10000})
	}
	return out
}

func profileOf(t *testing.T, h http.Handler, name string) (liveProfile, Meta) {
	t.Helper()
	r := get(t, h, http.MethodGet, "/api/v1/profiles/"+name, nil)
	require.Equal(t, http.StatusOK, r.StatusCode)
	var p struct {
		Meta    Meta        `json:"meta"`
		Profile liveProfile `json:"profile"`
	}
	require.NoError(t, json.Unmarshal(body(t, r), &p))
	return p.Profile, p.Meta
}

func TestWaiting(t *testing.T) {
	m, snap := example(t, "hetero-prod")
	srv := New(m, queued{Static: Static{Snap: allInUse(snap)}, wls: premiumQueue()}, Options{Now: func() time.Time { return now }})
	srv.Update()
	h := srv.Handler()

	p, meta := profileOf(t, h, "premium-gpu")
	require.Equal(t, 0, p.Available)
	require.NotNil(t, p.Waiting)
	assert.Equal(t, Waiting{Pending: new(2), Running: new(2), Estimate: WaitEstimate{
		Minutes: new(25), Method: "median of 3 finished runs of this profile, 20 min; 2 running, 2 pending ahead",
	}}, *p.Waiting)
	assert.Empty(t, meta.Warnings)

	// Nothing of large-gpu ran yet: no basis.
	p, _ = profileOf(t, h, "large-gpu")
	assert.Equal(t, Waiting{Pending: new(0), Running: new(0), Estimate: WaitEstimate{Unknown: "no finished run of this profile observed yet"}}, *p.Waiting)

	page := string(body(t, get(t, h, http.MethodGet, "/", nil)))
	assert.Contains(t, page, `<span class="wait-line">0 available — 2 pending — about 25 min</span><br><small>median of 3 finished runs of this profile, 20 min; 2 running, 2 pending ahead</small>`)
	assert.Contains(t, page, `<span class="wait-line">0 available — 0 pending — wait unknown: no finished run of this profile observed yet</span>`)
	metrics := string(body(t, get(t, h, http.MethodGet, "/metrics", nil)))
	assert.Contains(t, metrics, `accelc_profile_workloads_pending{profile="premium-gpu"} 2`)

	// The same documents every time: the workloads' order does not
	// reach them.
	wls := premiumQueue()
	for i, j := 0, len(wls)-1; i < j; i, j = i+1, j-1 {
		wls[i], wls[j] = wls[j], wls[i]
	}
	again := New(m, queued{Static: Static{Snap: allInUse(snap)}, wls: wls}, Options{Now: func() time.Time { return now }})
	again.Update()
	first := string(body(t, get(t, h, http.MethodGet, "/api/v1/profiles", nil)))
	second := string(body(t, get(t, again.Handler(), http.MethodGet, "/api/v1/profiles", nil)))
	assert.Equal(t, first[strings.Index(first, `"schemaVersion"`):], second[strings.Index(second, `"schemaVersion"`):])
}

func TestWaitingWithoutKueue(t *testing.T) {
	m, snap := example(t, "hetero-prod")
	why := "may not list Kueue's Workloads (RBAC: get, list and watch on workloads in kueue.x-k8s.io)"
	srv := New(m, queued{Static: Static{Snap: snap}, why: why}, Options{Now: func() time.Time { return now }})
	srv.Update()
	p, meta := profileOf(t, srv.Handler(), "premium-gpu")
	assert.Equal(t, Waiting{Estimate: WaitEstimate{Unknown: why}}, *p.Waiting)
	assert.Contains(t, meta.Warnings, why+": how long a job waits is unknown")
	page := string(body(t, get(t, srv.Handler(), http.MethodGet, "/", nil)))
	assert.Contains(t, page, "32 available — wait unknown: may not list Kueue&#39;s Workloads")

	// A snapshot has no Workloads, and says so only per profile.
	srv = New(m, Static{Snap: snap}, Options{})
	srv.Update()
	p, meta = profileOf(t, srv.Handler(), "premium-gpu")
	assert.Equal(t, "a snapshot holds no Kueue Workloads: --live watches them", p.Waiting.Estimate.Unknown)
	assert.Empty(t, meta.Warnings)

	// A cluster without Kueue has no waiting at all.
	m, snap = example(t, "small-lab")
	srv = New(m, queued{Static: Static{Snap: snap}}, Options{})
	srv.Update()
	for _, p := range srv.cur.Load().live {
		assert.Nil(t, p.Waiting, p.Name)
	}
}

func TestEstimateWait(t *testing.T) {
	min := func(ms ...int) []time.Duration {
		var out []time.Duration
		for _, m := range ms {
			out = append(out, time.Duration(m)*time.Minute)
		}
		return out
	}
	for _, c := range []struct {
		name               string
		runs, running      []time.Duration
		pending, available int
		minutes            int
		method, unknown    string
	}{
		{name: "free", runs: nil, pending: 0, available: 3, minutes: 0, method: "nothing pending and 3 available"},
		{name: "no run seen", running: min(5), pending: 1, unknown: "no finished run of this profile observed yet"},
		{name: "nothing running", runs: min(10), pending: 2, unknown: "none of its workloads is running, so no run's end to wait for: they wait on something else (quota, a flavor that fits, an admission check)"},
		{name: "full, nothing pending", runs: min(10), running: min(4), minutes: 6, method: "median of 1 finished run of this profile, 10 min; 1 running, 0 pending ahead"},
		{name: "overdue run", runs: min(10, 20), running: min(40), pending: 1, minutes: 15, method: "median of 2 finished runs of this profile, 15 min; 1 running, 1 pending ahead"},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := estimateWait(c.runs, c.running, c.pending, c.available)
			if c.unknown != "" {
				assert.Equal(t, WaitEstimate{Unknown: c.unknown}, e)
				return
			}
			assert.Equal(t, WaitEstimate{Minutes: new(c.minutes), Method: c.method}, e)
		})
	}
}

// TestTrimWorkload: the informer keeps of a Workload its queue, whether
// it is active and its Admitted and Finished conditions, and reads them.
func TestTrimWorkload(t *testing.T) {
	var u unstructured.Unstructured
	require.NoError(t, json.Unmarshal([]byte(`{
	  "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Workload",
	  "metadata": {"name": "job-train-1a2b3", "namespace": "ml-research", "uid": "u1", "resourceVersion": "7",
	    "labels": {"secret-project": "x"}, "managedFields": [{"manager": "kueue"}]},
	  "spec": {"queueName": "premium-gpu", "active": true,
	    "podSets": [{"name": "main", "count": 4, "template": {"spec": {"containers": [{"name": "c", "image": "registry.example/train:1", "env": [{"name": "TOKEN", "value": "s3cret"}]}]}}}]},
	  "status": {"conditions": [
	    {"type": "QuotaReserved", "status": "True", "reason": "QuotaReserved", "message": "Quota reserved in ClusterQueue ml-research.premium-gpu", "lastTransitionTime": "2026-03-02T11:00:00Z"},
	    {"type": "Admitted", "status": "True", "reason": "Admitted", "message": "The workload is admitted", "lastTransitionTime": "2026-03-02T11:00:01Z"},
	    {"type": "Finished", "status": "False", "reason": "", "message": "", "lastTransitionTime": "2026-03-02T11:00:01Z"}],
	    "admission": {"clusterQueue": "ml-research.premium-gpu"}}
	}`), &u.Object))
	trimmed, err := trimWorkload(&u)
	require.NoError(t, err)
	b, err := json.Marshal(trimmed)
	require.NoError(t, err)
	assert.JSONEq(t, `{
	  "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Workload",
	  "metadata": {"name": "job-train-1a2b3", "namespace": "ml-research", "uid": "u1", "resourceVersion": "7"},
	  "spec": {"queueName": "premium-gpu", "active": true},
	  "status": {"conditions": [
	    {"type": "Admitted", "status": "True", "lastTransitionTime": "2026-03-02T11:00:01Z"},
	    {"type": "Finished", "status": "False", "lastTransitionTime": "2026-03-02T11:00:01Z"}]}
	}`, string(b))
	wl, err := decodeWorkload(trimmed.(*unstructured.Unstructured))
	require.NoError(t, err)
	assert.Equal(t, Workload{Namespace: "ml-research", Name: "job-train-1a2b3", Queue: "premium-gpu", Admitted: time.Date(2026, 3, 2, 11, 0, 1, 0, time.UTC)}, wl)
}

// BenchmarkWaiting counts the waits of hetero-prod's profiles over 50,000
// Workloads: a tenth finished, a tenth running, the rest pending.
func BenchmarkWaiting(b *testing.B) {
	m, snap := example(b, "hetero-prod")
	doc := renderCatalog(m, snap.Classify(m.Catalog, inventory.Options{Pins: m.Pins, TypeLabel: m.Cluster.TypeLabel()}))
	queues := []string{"gpu", "large-gpu", "large-memory", "premium-gpu", "standard-gpu"}
	nss := []string{"ml-research", "ml-research-dev", "ds-notebooks"}
	wls := make([]Workload, 50000)
	for i := range wls {
		wl := Workload{Namespace: nss[i%len(nss)], Name: fmt.Sprintf("job-%d", i), Queue: queues[i%len(queues)]}
		switch i % 10 {
		case 0:
			wl.Admitted, wl.Finished = ago(60+i%50), ago(i%50)
		case 1:
			wl.Admitted = ago(i % 30)
		}
		wls[i] = wl
	}
	b.ResetTimer()
	for b.Loop() {
		waiting(&doc, m, wls, "", now)
	}
}
