package render_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/prometheus/prometheus/promql/promqltest"
	"github.com/prometheus/prometheus/util/teststorage"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	"github.com/accelc/accelc/pkg/render"
)

type ruleGroups struct {
	Spec struct {
		Groups []struct {
			Name  string
			Rules []struct {
				Record string
				Alert  string
				Expr   string
				Labels map[string]string
			}
		}
	}
}

func costRuleFile(t *testing.T, example ...string) (ruleGroups, []byte) {
	t.Helper()
	name := "hetero-prod"
	if len(example) > 0 {
		name = example[0]
	}
	tree := renderExample(t, name)
	data, ok := tree["monitoring/prometheusrule-accelc-gpu-cost.yaml"]
	require.True(t, ok, "%s renders its cost rules", name)
	var pr ruleGroups
	require.NoError(t, yaml.Unmarshal(data, &pr))
	// The rule file Prometheus reads is the PrometheusRule's spec.
	var obj map[string]any
	require.NoError(t, yaml.Unmarshal(data, &obj))
	spec, err := yaml.Marshal(obj["spec"])
	require.NoError(t, err)
	return pr, spec
}

// TestCostRulesParse checks the rendered rules with Prometheus's own rule
// parser, as `promtool check rules` does: groups, names, labels and every
// expression through the PromQL parser.
func TestCostRulesParse(t *testing.T) {
	_, spec := costRuleFile(t)
	groups, errs := rulefmt.Parse(spec, false, model.UTF8Validation)
	require.Empty(t, errs)
	var alerts, records int
	for _, g := range groups.Groups {
		for _, r := range g.Rules {
			_, err := parser.ParseExpr(r.Expr)
			require.NoError(t, err, r.Expr)
			if r.Alert != "" {
				alerts++
			} else {
				records++
			}
		}
	}
	assert.Equal(t, 6, alerts, "80%% and 100%% for each of the three teams with a budget")
	assert.Equal(t, 1+3+1+3, records, "pods; teams; GPU equivalents (no pool here, so no shares); cost per type, per team, per 30 days")
}

// TestCostArithmetic evaluates the rules with Prometheus's engine on a
// small cluster: ml-research holds 2 H200 (serving-prod 1 H200 and 3
// A100 80GB, one pod of a multi-type profile billed by the node it got,
// which it also records: counted once); a pending pod and a pod on a CPU
// node cost nothing.
func TestCostArithmetic(t *testing.T) {
	pr, _ := costRuleFile(t)
	storage := promqltest.LoadedStorage(t, `
load 5m
  kube_pod_container_resource_requests{namespace="ml-research",pod="train",container="c",resource="nvidia_com_gpu",unit="integer"} 2+0x20
  kube_pod_container_resource_requests{namespace="serving-prod",pod="llm",container="c",resource="nvidia_com_gpu",unit="integer"} 1+0x20
  kube_pod_container_resource_requests{namespace="serving-prod",pod="multi",container="c",resource="nvidia_com_gpu",unit="integer"} 3+0x20
  kube_pod_container_resource_requests{namespace="serving-prod",pod="waiting",container="c",resource="nvidia_com_gpu",unit="integer"} 4+0x20
  kube_pod_container_resource_requests{namespace="ml-research",pod="cpu",container="c",resource="cpu",unit="core"} 8+0x20
  kube_pod_info{namespace="ml-research",pod="train",node="h200-1"} 1+0x20
  kube_pod_info{namespace="serving-prod",pod="llm",node="h200-2"} 1+0x20
  kube_pod_info{namespace="serving-prod",pod="multi",node="a100-1"} 1+0x20
  kube_pod_info{namespace="serving-prod",pod="waiting",node=""} 1+0x20
  kube_pod_info{namespace="ml-research",pod="cpu",node="cpu-1"} 1+0x20
  kube_pod_status_phase{namespace="ml-research",pod="train",phase="Running"} 1+0x20
  kube_pod_status_phase{namespace="serving-prod",pod="llm",phase="Running"} 1+0x20
  kube_pod_status_phase{namespace="serving-prod",pod="multi",phase="Running"} 1+0x20
  kube_pod_status_phase{namespace="serving-prod",pod="waiting",phase="Pending"} 1+0x20
  kube_pod_status_phase{namespace="ml-research",pod="cpu",phase="Running"} 1+0x20
  kube_node_labels{node="h200-1",label_accelerator_opendatahub_io_type="nvidia-h200-141gb"} 1+0x20
  kube_node_labels{node="h200-2",label_accelerator_opendatahub_io_type="nvidia-h200-141gb"} 1+0x20
  kube_node_labels{node="a100-1",label_accelerator_opendatahub_io_type="nvidia-a100-80gb"} 1+0x20
  kube_node_labels{node="cpu-1"} 1+0x20
  kube_pod_annotations{namespace="serving-prod",pod="llm",annotation_accelerator_opendatahub_io_type="nvidia-h200-141gb"} 1+0x20
  kube_pod_annotations{namespace="serving-prod",pod="multi",annotation_accelerator_opendatahub_io_type="nvidia-a100-80gb"} 1+0x20
  kube_pod_annotations{namespace="ml-research",pod="train"} 1+0x20
`)
	eval := evaluate(t, pr, storage)
	assert.Equal(t, map[string]float64{
		"ml-research/ml-research/nvidia-h200-141gb":    2,
		"model-serving/serving-prod/nvidia-h200-141gb": 1,
		"model-serving/serving-prod/nvidia-a100-80gb":  3,
	}, eval(render.RuleTeamGPUs))
	assert.Equal(t, map[string]float64{
		"ml-research/ml-research/nvidia-h200-141gb":    10, // 2 × $5
		"model-serving/serving-prod/nvidia-h200-141gb": 5,
		"model-serving/serving-prod/nvidia-a100-80gb":  9, // 3 × $3
	}, eval(render.RuleTeamCost))

	// Budgets: the 30-day cost one hour in sums the five-minute samples
	// from the first (t=0) to now (t=60m), 13 of them, each a twelfth of
	// an hour: model-serving holds $14/h (5 + 9), ml-research $10/h.
	monthly := eval(render.RuleTeamMonthly)
	assert.InDelta(t, 14.0*13/12, monthly["model-serving//"], 1e-9)
	assert.InDelta(t, 10.0*13/12, monthly["ml-research//"], 1e-9)
	// Far below the budgets ($90,000 and $60,000): no alert fires.
	for _, g := range pr.Spec.Groups {
		for _, r := range g.Rules {
			if r.Alert != "" {
				assert.Empty(t, eval(r.Expr), r.Alert)
			}
		}
	}
	// The same alerts with model-serving's budget cut to $10 fire.
	fired := 0
	for _, g := range pr.Spec.Groups {
		for _, r := range g.Rules {
			if r.Alert != "" && r.Labels["team"] == "model-serving" {
				require.Contains(t, r.Expr, "* 90000")
				assert.NotEmpty(t, eval(strings.Replace(r.Expr, "* 90000", "* 10", 1)), r.Alert)
				fired++
			}
		}
	}
	assert.Equal(t, 2, fired)
}

// evaluate does the rule manager's work by hand: each recording rule in
// order is evaluated over the loaded 100 minutes and its output stored
// under its name, with the rule's labels, for the rules after it. It
// returns an instant query at one hour, keyed team/namespace/type.
func evaluate(t *testing.T, pr ruleGroups, storage *teststorage.TestStorage) func(string) map[string]float64 {
	t.Helper()
	t.Cleanup(func() { storage.Close() })
	engine := promqltest.NewTestEngine(t, false, 0, promqltest.DefaultMaxSamplesPerQuery)
	start, end, step := time.Unix(0, 0), time.Unix(0, 0).Add(100*time.Minute), 5*time.Minute
	for _, g := range pr.Spec.Groups {
		for _, r := range g.Rules {
			if r.Record == "" {
				continue
			}
			q, err := engine.NewRangeQuery(context.Background(), storage, nil, r.Expr, start, end, step)
			require.NoError(t, err, r.Expr)
			res := q.Exec(context.Background())
			require.NoError(t, res.Err, r.Record)
			matrix, err := res.Matrix()
			require.NoError(t, err)
			app := storage.Appender(context.Background())
			for _, series := range matrix {
				b := labels.NewBuilder(series.Metric)
				b.Set(labels.MetricName, r.Record)
				for k, v := range r.Labels {
					b.Set(k, v)
				}
				lset := b.Labels()
				for _, p := range series.Floats {
					_, err := app.Append(0, lset, p.T, p.F)
					require.NoError(t, err)
				}
			}
			require.NoError(t, app.Commit())
		}
	}
	at := time.Unix(0, 0).Add(60 * time.Minute)
	eval := func(expr string) map[string]float64 {
		q, err := engine.NewInstantQuery(context.Background(), storage, nil, expr, at)
		require.NoError(t, err)
		res := q.Exec(context.Background())
		require.NoError(t, res.Err, expr)
		vec, err := res.Vector()
		require.NoError(t, err)
		out := map[string]float64{}
		for _, s := range vec {
			out[s.Metric.Get("team")+"/"+s.Metric.Get("namespace")+"/"+s.Metric.Get("accelerator_type")] = s.F
		}
		return out
	}
	return eval
}

// TestCostOfSharedGPUs: in gpu-pools a device in a pool is billed as its
// share of a GPU (seed 004: a time-sliced replica costs about a third of
// a dedicated GPU). data-science holds 2 replicas of the A100 pool
// time-sliced three ways: 2/3 of $3. model-serving holds 2 3g.40gb slices
// (MIG single, requested as nvidia.com/gpu): 2 × 3/7 of $3. A pod on a node
// in no pool is billed whole.
func TestCostOfSharedGPUs(t *testing.T) {
	pr, spec := costRuleFile(t, "gpu-pools")
	groups, errs := rulefmt.Parse(spec, false, model.UTF8Validation)
	require.Empty(t, errs)
	for _, g := range groups.Groups {
		for _, r := range g.Rules {
			_, err := parser.ParseExpr(r.Expr)
			require.NoError(t, err, r.Expr)
		}
	}
	storage := promqltest.LoadedStorage(t, `
load 5m
  kube_pod_container_resource_requests{namespace="ds-notebooks",pod="nb",container="c",resource="nvidia_com_gpu",unit="integer"} 2+0x20
  kube_pod_container_resource_requests{namespace="serving-prod",pod="llm",container="c",resource="nvidia_com_gpu",unit="integer"} 2+0x20
  kube_pod_container_resource_requests{namespace="ml-research",pod="whole",container="c",resource="nvidia_com_gpu",unit="integer"} 1+0x20
  kube_pod_info{namespace="ds-notebooks",pod="nb",node="a100-ts-01"} 1+0x20
  kube_pod_info{namespace="serving-prod",pod="llm",node="a100-mig3g-01"} 1+0x20
  kube_pod_info{namespace="ml-research",pod="whole",node="a100-x"} 1+0x20
  kube_pod_status_phase{namespace="ds-notebooks",pod="nb",phase="Running"} 1+0x20
  kube_pod_status_phase{namespace="serving-prod",pod="llm",phase="Running"} 1+0x20
  kube_pod_status_phase{namespace="ml-research",pod="whole",phase="Running"} 1+0x20
  kube_node_labels{node="a100-ts-01",label_accelerator_opendatahub_io_type="nvidia-a100-80gb",label_accelerator_opendatahub_io_pool="a100-shared-3"} 1+0x20
  kube_node_labels{node="a100-mig3g-01",label_accelerator_opendatahub_io_type="nvidia-a100-80gb",label_accelerator_opendatahub_io_pool="a100-3g"} 1+0x20
  kube_node_labels{node="a100-x",label_accelerator_opendatahub_io_type="nvidia-a100-80gb"} 1+0x20
`)
	eval := evaluate(t, pr, storage)
	devices := eval(render.RuleTeamGPUs)
	assert.Equal(t, 2.0, devices["data-science/ds-notebooks/nvidia-a100-80gb"], "2 replicas held")
	assert.Equal(t, 2.0, devices["model-serving/serving-prod/nvidia-a100-80gb"], "2 slices held")
	gpus := eval(render.RuleTeamGPUEquivalents)
	assert.InDelta(t, 2.0/3, gpus["data-science/ds-notebooks/nvidia-a100-80gb"], 1e-9)
	assert.InDelta(t, 2*3.0/7, gpus["model-serving/serving-prod/nvidia-a100-80gb"], 1e-9)
	assert.InDelta(t, 1.0, gpus["ml-research/ml-research/nvidia-a100-80gb"], 1e-9)
	cost := eval(render.RuleTeamCost)
	assert.InDelta(t, 2.0, cost["data-science/ds-notebooks/nvidia-a100-80gb"], 1e-9, "2 × $3/3")
	assert.InDelta(t, 18.0/7, cost["model-serving/serving-prod/nvidia-a100-80gb"], 1e-9, "2 × 3/7 × $3")
	assert.InDelta(t, 3.0, cost["ml-research/ml-research/nvidia-a100-80gb"], 1e-9, "a whole A100")
	assert.Len(t, cost, 3)
}

// TestCostPrefersRecordedType: a pod that records its type (accelc serve
// --record-types, exported by kube-state-metrics' annotation allowlist) is
// billed for it, though its node's label says otherwise now; a pod that
// records none is billed by its node; each once, with its node's pool.
func TestCostPrefersRecordedType(t *testing.T) {
	pr, _ := costRuleFile(t, "gpu-pools")
	storage := promqltest.LoadedStorage(t, `
load 5m
  kube_pod_container_resource_requests{namespace="serving-prod",pod="recorded",container="c",resource="nvidia_com_gpu",unit="integer"} 2+0x20
  kube_pod_container_resource_requests{namespace="serving-prod",pod="unrecorded",container="c",resource="nvidia_com_gpu",unit="integer"} 1+0x20
  kube_pod_container_resource_requests{namespace="ds-notebooks",pod="pooled",container="c",resource="nvidia_com_gpu",unit="integer"} 3+0x20
  kube_pod_info{namespace="serving-prod",pod="recorded",node="relabelled-1"} 1+0x20
  kube_pod_info{namespace="serving-prod",pod="unrecorded",node="relabelled-1"} 1+0x20
  kube_pod_info{namespace="ds-notebooks",pod="pooled",node="a100-ts-01"} 1+0x20
  kube_pod_status_phase{namespace="serving-prod",pod="recorded",phase="Running"} 1+0x20
  kube_pod_status_phase{namespace="serving-prod",pod="unrecorded",phase="Running"} 1+0x20
  kube_pod_status_phase{namespace="ds-notebooks",pod="pooled",phase="Running"} 1+0x20
  kube_node_labels{node="relabelled-1",label_accelerator_opendatahub_io_type="nvidia-h100-80gb"} 1+0x20
  kube_node_labels{node="a100-ts-01",label_accelerator_opendatahub_io_type="nvidia-a100-80gb",label_accelerator_opendatahub_io_pool="a100-shared-3"} 1+0x20
  kube_pod_annotations{namespace="serving-prod",pod="recorded",annotation_accelerator_opendatahub_io_type="nvidia-a100-80gb"} 1+0x20
  kube_pod_annotations{namespace="serving-prod",pod="unrecorded"} 1+0x20
  kube_pod_annotations{namespace="ds-notebooks",pod="pooled",annotation_accelerator_opendatahub_io_type="nvidia-a100-80gb"} 1+0x20
`)
	eval := evaluate(t, pr, storage)
	assert.Equal(t, map[string]float64{
		"model-serving/serving-prod/nvidia-a100-80gb": 2,
		"model-serving/serving-prod/nvidia-h100-80gb": 1,
		"data-science/ds-notebooks/nvidia-a100-80gb":  3,
	}, eval(render.RuleTeamGPUs))
	gpus := eval(render.RuleTeamGPUEquivalents)
	assert.InDelta(t, 1.0, gpus["data-science/ds-notebooks/nvidia-a100-80gb"], 1e-9, "3 replicas of a GPU time-sliced three ways: the recorded type keeps its node's pool")
}
