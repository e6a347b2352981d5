package serve

// The server's own Prometheus metrics: requests, counts and their
// freshness.

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// metrics are the server's Prometheus metrics, in a registry of its own.
type metrics struct {
	reg       *prometheus.Registry
	requests  *prometheus.HistogramVec
	lag       prometheus.Histogram
	count     prometheus.Histogram
	recounted prometheus.Counter
	available *prometheus.GaugeVec
	nodes     *prometheus.GaugeVec
	profile   *prometheus.GaugeVec
	pending   *prometheus.GaugeVec
	updated   prometheus.Gauge
}

func newMetrics() *metrics {
	m := &metrics{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "accelc_serve_request_duration_seconds", Help: "Time to answer a request, by route and status code.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1},
		}, []string{"route", "code"}),
		lag: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "accelc_serve_update_lag_seconds", Help: "From the first change the informers saw to the catalog that counts it.",
			Buckets: []float64{.05, .1, .25, .5, 1, 2, 5, 10},
		}),
		count: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "accelc_serve_count_duration_seconds", Help: "Time to classify the nodes and count the catalog once.",
			Buckets: []float64{.001, .005, .01, .025, .05, .1, .25, .5, 1},
		}),
		recounted: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "accelc_serve_nodes_recounted_total", Help: "Nodes classified and placed again by the counts: every node in a whole count, only those that changed in a count after node changes.",
		}),
		available: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "accelc_accelerators_available", Help: "Accelerator devices available now, by type (allocatable on Ready nodes less what pods hold)."}, []string{"accelerator_type"}),
		nodes:     prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "accelc_accelerator_nodes", Help: "Nodes by accelerator type."}, []string{"accelerator_type"}),
		profile:   prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "accelc_profile_available", Help: "Devices available now to each hardware profile."}, []string{"profile"}),
		pending:   prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "accelc_profile_workloads_pending", Help: "Kueue Workloads pending in each hardware profile's queue (profiles that schedule through Kueue, when Workloads can be read)."}, []string{"profile"}),
		updated:   prometheus.NewGauge(prometheus.GaugeOpts{Name: "accelc_serve_updated_timestamp_seconds", Help: "When the catalog was last counted."}),
	}
	m.reg.MustRegister(m.requests, m.lag, m.count, m.recounted, m.available, m.nodes, m.profile, m.pending, m.updated,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

func (m *metrics) request(route string, code int, d time.Duration) {
	m.requests.WithLabelValues(route, strconv.Itoa(code)).Observe(d.Seconds())
}

func (m *metrics) observe(v *view, begin, since time.Time) {
	m.count.Observe(time.Since(begin).Seconds())
	if !since.IsZero() {
		m.lag.Observe(time.Since(since).Seconds())
	}
	m.updated.Set(float64(v.updated.Unix()))
	m.available.Reset()
	m.nodes.Reset()
	for _, t := range v.inv.Summary() {
		avail := t.Allocatable
		if t.Available != nil {
			avail = *t.Available
		}
		m.available.WithLabelValues(t.AcceleratorType).Set(float64(avail))
		m.nodes.WithLabelValues(t.AcceleratorType).Set(float64(t.Nodes))
	}
	m.profile.Reset()
	for _, p := range v.doc.Profiles {
		m.profile.WithLabelValues(p.Name).Set(float64(p.Available))
	}
	m.pending.Reset()
	for name, w := range v.waiting {
		if w.Pending != nil {
			m.pending.WithLabelValues(name).Set(float64(*w.Pending))
		}
	}
}
