package render

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/accelc/accelc/pkg/compile"
)

// TestKueueSizing: Kueue's defaults up to the quota they serve, then a
// request a second per 16 devices in steps of 50 and a reconciler worker
// per 400 devices up to 20.
func TestKueueSizing(t *testing.T) {
	for _, c := range []struct {
		devices, qps, burst, workers int
	}{
		{0, 300, 500, 5},
		{180, 300, 500, 5},
		{2000, 300, 500, 5},
		{2001, 300, 500, 6},
		{4800, 300, 500, 12},
		{4801, 350, 583, 13},
		{6300, 400, 666, 16},
		{100000, 6250, 10416, 20},
	} {
		t.Run(fmt.Sprint(c.devices), func(t *testing.T) {
			// Two teams share the devices.
			m := &compile.Model{Teams: []compile.Team{
				{Name: "a", Quota: map[string]int{"x": c.devices / 2}},
				{Name: "b", Quota: map[string]int{"x": c.devices - c.devices/2}},
			}}
			ctl, cc := kueueSizing(m)
			assert.Equal(t, kueueClientConnection{QPS: c.qps, Burst: c.burst}, cc)
			assert.Equal(t, c.workers, ctl.GroupKindConcurrency["Pod"])
			assert.Equal(t, c.workers, ctl.GroupKindConcurrency["Job.batch"])
			assert.Equal(t, 2*c.workers, ctl.GroupKindConcurrency["Workload.kueue.x-k8s.io"])
			assert.Len(t, ctl.GroupKindConcurrency, 7)
		})
	}
}

// TestGatekeeperAuditSizing: the chart's minute up to 600 devices, then
// D/10 seconds in whole minutes, at most ten minutes.
func TestGatekeeperAuditSizing(t *testing.T) {
	for _, c := range []struct{ devices, seconds int }{
		{0, 60},
		{180, 60},
		{600, 60},
		{601, 120},
		{1800, 180},
		{6000, 600},
		{6300, 600},
		{100000, 600},
	} {
		t.Run(fmt.Sprint(c.devices), func(t *testing.T) {
			m := &compile.Model{Teams: []compile.Team{
				{Name: "a", Quota: map[string]int{"x": c.devices / 2}},
				{Name: "b", Quota: map[string]int{"y": c.devices - c.devices/2}},
			}}
			assert.Equal(t, c.seconds, gatekeeperAuditInterval(m))
		})
	}
}
