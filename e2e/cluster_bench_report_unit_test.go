//go:build e2e

package e2e

import (
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The benchmark's API figures: writes by verb and resource, webhook calls
// by webhook and operation, their latency, what the counters grew by.
func TestParseAPIMetrics(t *testing.T) {
	before, err := parseAPIMetrics(strings.NewReader(`# TYPE apiserver_request_total counter
apiserver_request_total{code="201",component="apiserver",dry_run="",group="",resource="pods",scope="resource",subresource="",verb="POST",version="v1"} 10
apiserver_request_total{code="200",component="apiserver",dry_run="",group="",resource="pods",scope="resource",subresource="",verb="LIST",version="v1"} 3
# TYPE apiserver_admission_webhook_admission_duration_seconds histogram
apiserver_admission_webhook_admission_duration_seconds_bucket{name="validation.gatekeeper.sh",operation="CREATE",rejected="false",type="validating",le="0.005"} 0
apiserver_admission_webhook_admission_duration_seconds_bucket{name="validation.gatekeeper.sh",operation="CREATE",rejected="false",type="validating",le="0.025"} 1
apiserver_admission_webhook_admission_duration_seconds_bucket{name="validation.gatekeeper.sh",operation="CREATE",rejected="false",type="validating",le="+Inf"} 1
apiserver_admission_webhook_admission_duration_seconds_sum{name="validation.gatekeeper.sh",operation="CREATE",rejected="false",type="validating"} 0.01
apiserver_admission_webhook_admission_duration_seconds_count{name="validation.gatekeeper.sh",operation="CREATE",rejected="false",type="validating"} 1
`))
	require.NoError(t, err)
	after, err := parseAPIMetrics(strings.NewReader(`# TYPE apiserver_request_total counter
apiserver_request_total{code="201",component="apiserver",dry_run="",group="",resource="pods",scope="resource",subresource="",verb="POST",version="v1"} 110
apiserver_request_total{code="201",component="apiserver",dry_run="",group="",resource="pods",scope="resource",subresource="binding",verb="POST",version="v1"} 100
apiserver_request_total{code="200",component="apiserver",dry_run="",group="kueue.x-k8s.io",resource="workloads",scope="resource",subresource="status",verb="APPLY",version="v1beta2"} 40
apiserver_request_total{code="409",component="apiserver",dry_run="",group="kueue.x-k8s.io",resource="clusterqueues",scope="resource",subresource="status",verb="PUT",version="v1beta2"} 3
apiserver_request_total{code="200",component="apiserver",dry_run="",group="",resource="pods",scope="resource",subresource="",verb="LIST",version="v1"} 9
apiserver_request_total{code="200",component="apiserver",dry_run="",group="",resource="",scope="",subresource="",verb="GET",version=""} 9
# TYPE etcd_requests_total counter
etcd_requests_total{group="kueue.x-k8s.io",operation="update",resource="workloads"} 45
etcd_requests_total{group="",operation="create",resource="pods"} 100
# TYPE apiserver_admission_webhook_admission_duration_seconds histogram
apiserver_admission_webhook_admission_duration_seconds_bucket{name="validation.gatekeeper.sh",operation="CREATE",rejected="false",type="validating",le="0.005"} 0
apiserver_admission_webhook_admission_duration_seconds_bucket{name="validation.gatekeeper.sh",operation="CREATE",rejected="false",type="validating",le="0.025"} 100
apiserver_admission_webhook_admission_duration_seconds_bucket{name="validation.gatekeeper.sh",operation="CREATE",rejected="false",type="validating",le="+Inf"} 101
apiserver_admission_webhook_admission_duration_seconds_sum{name="validation.gatekeeper.sh",operation="CREATE",rejected="false",type="validating"} 1.51
apiserver_admission_webhook_admission_duration_seconds_count{name="validation.gatekeeper.sh",operation="CREATE",rejected="false",type="validating"} 101
apiserver_admission_webhook_admission_duration_seconds_bucket{name="validation.gatekeeper.sh",operation="UPDATE",rejected="false",type="validating",le="0.005"} 50
apiserver_admission_webhook_admission_duration_seconds_bucket{name="validation.gatekeeper.sh",operation="UPDATE",rejected="false",type="validating",le="0.025"} 50
apiserver_admission_webhook_admission_duration_seconds_bucket{name="validation.gatekeeper.sh",operation="UPDATE",rejected="false",type="validating",le="+Inf"} 50
apiserver_admission_webhook_admission_duration_seconds_sum{name="validation.gatekeeper.sh",operation="UPDATE",rejected="false",type="validating"} 0
apiserver_admission_webhook_admission_duration_seconds_count{name="validation.gatekeeper.sh",operation="UPDATE",rejected="false",type="validating"} 50
# TYPE apiserver_admission_match_condition_exclusions_total counter
apiserver_admission_match_condition_exclusions_total{kind="webhook",name="validation.gatekeeper.sh",operation="UPDATE",type="validating"} 7
`))
	require.NoError(t, err)
	d := after.minus(before)
	assert.Equal(t, map[string]float64{"POST pods": 100, "POST pods/binding": 100, "APPLY workloads.kueue.x-k8s.io/status": 40, "PUT clusterqueues.kueue.x-k8s.io/status": 3}, d.writes())
	assert.Equal(t, map[string]float64{"update workloads.kueue.x-k8s.io": 45, "create pods": 100}, d.etcd, "45 attempts for 40 status writes: 5 tried again inside the API server")
	assert.Equal(t, "POST pods 1.00, POST pods/binding 1.00, APPLY workloads.kueue.x-k8s.io/status 0.40, LIST pods 0.06, PUT clusterqueues.kueue.x-k8s.io/status 0.03",
		clusterRun{pods: 100}.perPodRows(d.requests), "largest first, a pod each")
	assert.Equal(t, map[string]float64{"PUT clusterqueues.kueue.x-k8s.io/status 409": 3}, d.refused, "a conflict is a write refused, which its client retries")
	assert.Equal(t, map[string]float64{"LIST pods": 6}, d.lists(), "the storm's LISTs and WATCHes, not its writes")
	assert.Equal(t, map[string]float64{"validation.gatekeeper.sh CREATE": 100, "validation.gatekeeper.sh UPDATE": 50}, d.webhooks)
	assert.Equal(t, map[string]float64{"validation.gatekeeper.sh UPDATE": 7}, d.excluded)
	assert.InDelta(t, 150, d.webhookCalls("validation.gatekeeper.sh"), 1e-9)
	assert.InDelta(t, 1.5, d.webhookSeconds["validation.gatekeeper.sh"], 1e-9)
	// 150 calls: 50 within 5 ms, 149 within 25 ms, one past it.
	assert.InDelta(t, 0.025, d.webhookP99("validation.gatekeeper.sh"), 1e-9)
}

// CPU over the idle stack's: each component's storm CPU less its rate at
// rest times the storm's length, none below zero; KWOK is not the stack.
func TestBusyCPU(t *testing.T) {
	r := clusterRun{
		pods: 100,
		wall: 10 * time.Second,
		cpu: map[string]time.Duration{
			"kube-apiserver": 5 * time.Second, "etcd": time.Second,
			"kube-scheduler": 100 * time.Millisecond, loadComponent: 3 * time.Second,
		},
		// kube-apiserver spends 0.2 s a second at rest: 2 s of its 5 over
		// the storm; the scheduler's rest rate would take more than it
		// spent, so it counts for nothing, not less.
		idle: map[string]float64{"kube-apiserver": 0.2, "kube-scheduler": 0.05, loadComponent: 0.1},
	}
	assert.Equal(t, 6100*time.Millisecond, r.stackCPU())
	assert.Equal(t, 4*time.Second, r.busyCPU())
	assert.InDelta(t, 40, r.perPod(r.busyCPU()), 1e-9)
	// The wake: 5 s more, in which kube-apiserver spends 2 s (1 at its
	// rest rate, 1 the storm's work left over) and etcd nothing: etcd's
	// storm second is counted once, and kube-apiserver gets 5 + 2 - 0.2 × 15.
	r.wake = 5 * time.Second
	r.wakeCPU = map[string]time.Duration{"kube-apiserver": 2 * time.Second}
	assert.Equal(t, 5*time.Second, r.wokenCPU())
	assert.Equal(t, 4*time.Second, r.busyCPU(), "the storm's own figure does not change")
}

// TestResetPeakRSS: after the reset a process's peak is what it holds
// now, not what it held before, so a storm's peak is told from its
// set-up's.
func TestResetPeakRSS(t *testing.T) {
	const size = 256 << 20
	pid := os.Getpid()
	var held int64
	func() {
		buf := make([]byte, size)
		for i := range buf {
			buf[i] = 1
		}
		held = peakRSS(pid)
		runtime.KeepAlive(buf)
	}()
	runtime.GC()
	debug.FreeOSMemory()
	require.Less(t, residentRSS(pid), held-size/2, "the buffer was not given back to the system")
	require.NoError(t, resetPeakRSS(pid))
	assert.Less(t, peakRSS(pid), held-size/2, "the peak still counts the buffer")
	assert.GreaterOrEqual(t, peakRSS(pid), residentRSS(pid)/2)
}

// TestSpeedProbe: the probe's work takes CPU time, and the probe reports
// the median of its samples.
func TestSpeedProbe(t *testing.T) {
	runtime.LockOSThread() // both readings of one thread's clock
	d, ok := probeWork()
	runtime.UnlockOSThread()
	require.True(t, ok, "no thread CPU time on this system")
	assert.Greater(t, d, 100*time.Microsecond)
	assert.Less(t, d, time.Second)
	stop := startSpeedProbe()
	time.Sleep(1500 * time.Millisecond)
	m := stop()
	assert.Greater(t, m, 100*time.Microsecond)
	t.Logf("probeWork: %s, the probe's median %s", d, m)
}

// TestSteady: the stack has settled when a window's CPU is like the one
// before, not while it falls and not when a burst starts.
func TestSteady(t *testing.T) {
	for _, tc := range []struct {
		prev, now float64
		want      bool
	}{
		{0.49, 0.09, false}, // still settling after the tree was applied
		{0.09, 0.10, true},
		{0.10, 0.11, true},
		{0.07, 0.36, false}, // a burst of node status renewals starting
		{0.36, 0.30, true},
		{0.05, 0.065, true}, // within 0.02 of a core
		{0.30, 0.40, false},
	} {
		assert.Equal(t, tc.want, steady(tc.prev, tc.now), "%.2f → %.2f", tc.prev, tc.now)
	}
}
