package render

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/accelc/accelc/pkg/compile"
	"github.com/accelc/accelc/pkg/mig"
)

// Cost attribution: recording rules that turn kube-state-metrics series
// into GPUs held and their cost per team, namespace and accelerator type,
// and alerts on the teams' monthly budgets.
//
// The type is the one the pod records, else that of the node it runs on,
// so a pod of a multi-type profile is billed for the type it actually got,
// and a pod in a pool for its share of a GPU: a replica of a GPU
// time-sliced three ways costs a third, a 3g slice of an A100 three
// sevenths. A pod records its type in its <labelPrefix>/type annotation:
// accelc's mutation writes it for a single-type profile, accelc serve
// --record-types for the others once they are bound; kube-state-metrics
// exports it when the annotation is allowlisted
// (--metric-annotations-allowlist=pods=[<labelPrefix>/type]). The node's
// normalized type label is the fallback, and the node's pool label gives
// the pool; kube-state-metrics exports them when they are allowlisted
// (--metric-labels-allowlist=nodes=[<labelPrefix>/type,<labelPrefix>/pool]).
// The recorded type outlives a node's relabelling, and a pod counts once:
// the node's type is taken only for pods that record none. Team
// membership comes from the CUE, as for the admission policy, never from
// namespace labels.

// Recording rule names.
const (
	RulePodGPUs = "accelc:gpu_requests:pod_type"
	// RuleTeamGPUs counts devices held: whole GPUs, MIG slices or
	// time-sliced replicas, by pool and resource.
	RuleTeamGPUs = "accelc:gpu_requests:team_namespace_type"
	// RuleDeviceShare is the share of a GPU one device of a pool is, per
	// pool and resource: 1/replicas when time-sliced or MPS, a MIG
	// slice's compute slices over the GPU's.
	RuleDeviceShare = "accelc:gpu_share:pool_resource"
	// RuleTeamGPUEquivalents is RuleTeamGPUs in whole GPUs: 3 replicas of
	// a GPU time-sliced three ways are one.
	RuleTeamGPUEquivalents = "accelc:gpu_equivalents:team_namespace_type"
	RuleHourlyCost         = "accelc:gpu_hourly_cost:type"
	RuleTeamCost           = "accelc:gpu_cost_per_hour:team_namespace_type"
	RuleTeamMonthly        = "accelc:gpu_cost:team_30d"
)

// ksmName is how kube-state-metrics sanitizes a Kubernetes name into a
// Prometheus label value or name: an extended resource in the resource
// label ("nvidia_com_gpu"), a label key after "label_" in
// kube_node_labels.
var ksmName = strings.NewReplacer(".", "_", "/", "_", "-", "_").Replace

func ksmResource(name string) string { return ksmName(name) }

func ksmLabel(key string) string { return "label_" + ksmName(key) }

// ksmAnnotation is an annotation key in kube_pod_annotations.
func ksmAnnotation(key string) string { return "annotation_" + ksmName(key) }

// costRules renders the PrometheusRule; nothing when no team exists.
func costRules(m *compile.Model) []Object {
	if len(m.Teams) == 0 {
		return nil
	}
	var resources []string
	seen := map[string]bool{}
	for _, c := range m.Catalog.Classes() {
		if r := ksmResource(c.ResourceName); !seen[r] {
			seen[r] = true
			resources = append(resources, r)
		}
	}
	for _, pool := range m.NodePools {
		if r := ksmResource(compile.PoolResource(m, pool)); r != "" && !seen[r] {
			seen[r] = true
			resources = append(resources, r)
		}
		for _, p := range slices.Sorted(maps.Keys(pool.Layout)) {
			if r := ksmResource(mig.ResourceName(p)); pool.Layout[p] > 0 && !seen[r] {
				seen[r] = true
				resources = append(resources, r)
			}
		}
	}
	sort.Strings(resources)
	typeLabel, poolLabel := ksmLabel(m.Cluster.TypeLabel()), ksmLabel(m.Cluster.PoolLabel())
	typeAnnotation := ksmAnnotation(m.Cluster.TypeLabel())
	// Each running pod's type and its node's pool (empty for a node in
	// none: a device in a pool is a share of a GPU): the type the pod
	// records, or, only for a pod that records none (or on nodes
	// kube-state-metrics does not list), its node's. `or on (namespace,
	// pod)` keeps one series per pod.
	podGPUs := fmt.Sprintf(`sum by (namespace, pod, resource, accelerator_type, pool) (
  kube_pod_container_resource_requests{resource=~"%[1]s"}
  * on (namespace, pod) group_left() max by (namespace, pod) (kube_pod_status_phase{phase="Running"} == 1)
  * on (namespace, pod) group_left(accelerator_type, pool) (
      max by (namespace, pod, accelerator_type, pool) (
        label_replace(kube_pod_annotations{%[2]s!=""}, "accelerator_type", "$1", "%[2]s", "(.+)")
        * on (namespace, pod) group_left(pool) max by (namespace, pod, pool) (
            kube_pod_info{node!=""}
            * on (node) group_left(pool) max by (node, pool) (label_replace(kube_node_labels, "pool", "$1", "%[4]s", "(.+)"))
          )
      )
      or on (namespace, pod)
      max by (namespace, pod, accelerator_type, pool) (
        kube_pod_info{node!=""}
        * on (node) group_left(accelerator_type, pool) max by (node, accelerator_type, pool) (
            label_replace(
              label_replace(kube_node_labels{%[3]s!=""}, "accelerator_type", "$1", "%[3]s", "(.+)"),
              "pool", "$1", "%[4]s", "(.+)"
            )
          )
      )
    )
)`, strings.Join(resources, "|"), typeAnnotation, typeLabel, poolLabel)

	rules := []promRule{rule(RulePodGPUs, podGPUs, nil)}
	for i := range m.Teams {
		t := &m.Teams[i]
		if len(t.Namespaces) == 0 {
			continue
		}
		ns := append([]string(nil), t.Namespaces...)
		sort.Strings(ns)
		rules = append(rules, rule(RuleTeamGPUs,
			fmt.Sprintf(`sum by (namespace, resource, accelerator_type, pool) (%s{namespace=~"%s"})`, RulePodGPUs, strings.Join(ns, "|")),
			map[string]string{"team": t.Name}))
	}
	equivalents := fmt.Sprintf(`sum by (team, namespace, accelerator_type) (%s)`, RuleTeamGPUs)
	if shares := deviceShares(m); len(shares) > 0 {
		rules = append(rules, rule(RuleDeviceShare, strings.Join(shares, "\nor "), nil))
		// Devices outside pools are whole GPUs; a pool's count its share.
		equivalents = fmt.Sprintf(`sum by (team, namespace, accelerator_type) (
  (%s unless on (pool, resource) %s)
  or
  (%s * on (pool, resource) group_left() %s)
)`, RuleTeamGPUs, RuleDeviceShare, RuleTeamGPUs, RuleDeviceShare)
	}
	rules = append(rules, rule(RuleTeamGPUEquivalents, equivalents, nil))
	var costs []string
	for _, c := range m.Catalog.Classes() {
		if c.CostPerHour != nil {
			costs = append(costs, fmt.Sprintf(`label_replace(vector(%s), "accelerator_type", "%s", "", "")`, strconv.FormatFloat(*c.CostPerHour, 'f', -1, 64), c.ID))
		}
	}
	groups := []ruleGroup{{Name: "accelc.gpu-usage", Interval: "1m", Rules: rules}}
	if len(costs) > 0 {
		costRules := []promRule{
			rule(RuleHourlyCost, strings.Join(costs, "\nor "), nil),
			rule(RuleTeamCost, fmt.Sprintf(`%s * on (accelerator_type) group_left() %s`, RuleTeamGPUEquivalents, RuleHourlyCost), nil),
			// Each 5-minute sample of an hourly cost is a twelfth of it.
			rule(RuleTeamMonthly, fmt.Sprintf(`sum by (team) (sum_over_time(sum by (team) (%s)[30d:5m])) / 12`, RuleTeamCost), nil),
		}
		for i := range m.Teams {
			t := &m.Teams[i]
			if t.MonthlyBudget <= 0 {
				continue
			}
			budget := strconv.FormatFloat(t.MonthlyBudget, 'f', -1, 64)
			for _, level := range []struct {
				name, severity string
				share          float64
			}{{"AccelcTeamBudget80Percent", "warning", 0.8}, {"AccelcTeamBudgetExceeded", "critical", 1}} {
				costRules = append(costRules, promRule{
					Alert:  level.name,
					Expr:   fmt.Sprintf(`%s{team="%s"} > %s * %s`, RuleTeamMonthly, t.Name, strconv.FormatFloat(level.share, 'f', -1, 64), budget),
					For:    "15m",
					Labels: map[string]string{"severity": level.severity, "team": t.Name},
					Annotations: map[string]string{
						"summary":     fmt.Sprintf("%s has spent {{ $value | humanize }} on accelerators in 30 days, of a %s monthly budget", t.DisplayName, budget),
						"description": "Sum of GPUs held × the catalog's costPerHour, per accelerator type, over the last 30 days (accelc cost attribution).",
					},
				})
			}
		}
		groups = append(groups, ruleGroup{Name: "accelc.gpu-cost", Interval: "5m", Rules: costRules})
	}
	parts := splitRuleGroups(groups, RulePartBytes)
	out := make([]Object, len(parts))
	for i, groups := range parts {
		name := "accelc-gpu-cost"
		if i > 0 {
			name = fmt.Sprintf("%s-%d", name, i+1)
		}
		out[i] = Object{
			Dir:    DirMonitoring,
			Source: []string{"teams"},
			Body: &prometheusRule{
				TypeMeta:   metav1.TypeMeta{APIVersion: "monitoring.coreos.com/v1", Kind: "PrometheusRule"},
				ObjectMeta: objectMeta(m.Cluster.Name, m.Cluster.ProfileNamespace, name),
				Spec:       prometheusRuleSpec{Groups: groups},
			},
		}
	}
	return out
}

// The Prometheus Operator's PrometheusRule, monitoring.coreos.com/v1, as
// accelc writes it. The operator's Go types are not in go.mod, and
// Prometheus' own rulefmt has YAML tags only.
type (
	prometheusRule struct {
		metav1.TypeMeta   `json:",inline"`
		metav1.ObjectMeta `json:"metadata"`
		Spec              prometheusRuleSpec `json:"spec"`
	}
	prometheusRuleSpec struct {
		Groups []ruleGroup `json:"groups"`
	}
	ruleGroup struct {
		Name     string     `json:"name"`
		Interval string     `json:"interval"`
		Rules    []promRule `json:"rules"`
	}
	// promRule is a recording rule (Record) or an alert (Alert).
	promRule struct {
		Record      string            `json:"record,omitempty"`
		Alert       string            `json:"alert,omitempty"`
		Expr        string            `json:"expr"`
		For         string            `json:"for,omitempty"`
		Labels      map[string]string `json:"labels,omitempty"`
		Annotations map[string]string `json:"annotations,omitempty"`
	}
)

// RulePartBytes is about the most rules one PrometheusRule holds; past
// it (hundreds of teams) the rules go into several, accelc-gpu-cost-2
// and on, with the same labels, so the Prometheus Operator's rule
// selector takes them all.
const RulePartBytes = 512 << 10

// splitRuleGroups packs rule groups into parts of about limit bytes of
// rules each, in order. A group cut in two keeps its name in its first
// part and is <name>-2, -3… in the next (Prometheus evaluates groups
// concurrently, so a recording rule's readers in a later part see it
// one interval late).
func splitRuleGroups(groups []ruleGroup, limit int) [][]ruleGroup {
	parts := [][]ruleGroup{nil}
	size := 0
	for _, g := range groups {
		chunk := 0
		open := false // the group has a chunk in the last part
		for _, r := range g.Rules {
			b, _ := json.Marshal(r) // strings: cannot fail
			if size > 0 && size+len(b) > limit {
				parts = append(parts, nil)
				size = 0
				open = false
			}
			part := &parts[len(parts)-1]
			if !open {
				chunk++
				name := g.Name
				if chunk > 1 {
					name = fmt.Sprintf("%s-%d", name, chunk)
				}
				*part = append(*part, ruleGroup{Name: name, Interval: g.Interval})
				open = true
			}
			cur := &(*part)[len(*part)-1]
			cur.Rules = append(cur.Rules, r)
			size += len(b)
		}
	}
	return parts
}

// deviceShares are the series of RuleDeviceShare: per pool and the
// resource its pods request, the share of a GPU one device is.
func deviceShares(m *compile.Model) []string {
	var out []string
	share := func(pool *compile.NodePool, resource, profile string) {
		out = append(out, fmt.Sprintf(`label_replace(label_replace(vector(%s), "pool", "%s", "", ""), "resource", "%s", "", "")`,
			strconv.FormatFloat(compile.DeviceShare(pool, profile), 'f', -1, 64), pool.Name, ksmResource(resource)))
	}
	for _, pool := range m.NodePools {
		if pool.Sharing != compile.ShareMIG {
			share(pool, compile.PoolResource(m, pool), "")
			continue
		}
		class, _ := m.Catalog.Get(pool.AcceleratorType)
		for _, p := range slices.Sorted(maps.Keys(pool.Layout)) {
			if pool.Layout[p] == 0 {
				continue
			}
			resource := mig.ResourceName(p)
			if m.Cluster.MIGStrategy() == "single" {
				resource = class.ResourceName
			}
			share(pool, resource, p)
		}
	}
	return out
}

func rule(record, expr string, labels map[string]string) promRule {
	return promRule{Record: record, Expr: expr, Labels: labels}
}
