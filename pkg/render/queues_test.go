package render_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/yaml"

	"github.com/accelc/accelc/pkg/catalogdoc"
	"github.com/accelc/accelc/pkg/compile"
	"github.com/accelc/accelc/pkg/inventory"
	"github.com/accelc/accelc/pkg/render"
)

// clusterQueue is what the queue tests read of a rendered ClusterQueue.
type clusterQueue struct {
	Metadata struct{ Name string }
	Spec     struct {
		CohortName        string `json:"cohortName"`
		NamespaceSelector struct {
			MatchExpressions []struct {
				Key      string
				Operator string
				Values   []string
			} `json:"matchExpressions"`
		} `json:"namespaceSelector"`
		ResourceGroups []struct {
			CoveredResources []string `json:"coveredResources"`
			Flavors          []struct {
				Name      string
				Resources []struct {
					Name           string
					NominalQuota   resource.Quantity `json:"nominalQuota"`
					BorrowingLimit *int              `json:"borrowingLimit"`
				}
			}
		} `json:"resourceGroups"`
	}
}

// TestQueuesAgreeWithEntitlements: in hetero-prod, every team's Cohort
// holds its quotas, for exactly the types it is entitled to; each profile
// a team may use has a ClusterQueue in the team's Cohort that tries the
// profile's types in the profile's order and holds no quota of its own;
// every team namespace has the profile's LocalQueue on it, the one the
// HardwareProfile names.
func TestQueuesAgreeWithEntitlements(t *testing.T) {
	tree := renderExample(t, "hetero-prod")
	queues := map[string]clusterQueue{}
	cohorts := map[string]clusterQueue{} // the same shape, parentName aside
	parents := map[string]string{}
	localQueues := map[string]string{} // namespace/name → cluster queue
	hwpQueue := map[string]string{}    // profile → localQueueName
	flavors := map[string]string{}     // flavor → node label value
	for _, p := range tree.Paths() {
		switch {
		case strings.HasPrefix(p, "queues/clusterqueue-"):
			var cq clusterQueue
			require.NoError(t, yaml.Unmarshal(tree[p], &cq))
			queues[cq.Metadata.Name] = cq
		case strings.HasPrefix(p, "queues/cohort-"):
			var c clusterQueue
			require.NoError(t, yaml.Unmarshal(tree[p], &c))
			cohorts[c.Metadata.Name] = c
			var parent struct {
				Spec struct {
					ParentName string `json:"parentName"`
				}
			}
			require.NoError(t, yaml.Unmarshal(tree[p], &parent))
			parents[c.Metadata.Name] = parent.Spec.ParentName
		case strings.HasPrefix(p, "queues/localqueue-"):
			var lq struct {
				Metadata struct{ Namespace, Name string }
				Spec     struct {
					ClusterQueue string `json:"clusterQueue"`
				}
			}
			require.NoError(t, yaml.Unmarshal(tree[p], &lq))
			localQueues[lq.Metadata.Namespace+"/"+lq.Metadata.Name] = lq.Spec.ClusterQueue
		case strings.HasPrefix(p, "queues/resourceflavor-"):
			var rf struct {
				Metadata struct{ Name string }
				Spec     struct {
					NodeLabels map[string]string `json:"nodeLabels"`
				}
			}
			require.NoError(t, yaml.Unmarshal(tree[p], &rf))
			flavors[rf.Metadata.Name] = rf.Spec.NodeLabels["accelerator.opendatahub.io/type"]
		case strings.HasPrefix(p, "profiles/hardwareprofile-"):
			var hwp struct {
				Metadata struct{ Name string }
				Spec     struct {
					Scheduling struct {
						Type  string
						Kueue struct {
							LocalQueueName string `json:"localQueueName"`
						}
						Node any
					}
				}
			}
			require.NoError(t, yaml.Unmarshal(tree[p], &hwp))
			assert.Equal(t, "Queue", hwp.Spec.Scheduling.Type, p)
			assert.Nil(t, hwp.Spec.Scheduling.Node, "ODH's CEL: type Queue holds no node")
			hwpQueue[hwp.Metadata.Name] = hwp.Spec.Scheduling.Kueue.LocalQueueName
		}
	}
	m, err := compile.Load(examplesDir + "/hetero-prod")
	require.NoError(t, err)
	require.Len(t, cohorts, 3)
	for _, team := range m.Teams {
		c, ok := cohorts[team.Name]
		require.True(t, ok, team.Name)
		assert.Equal(t, team.Cohort, parents[team.Name])
		var covered []string
		for _, g := range c.Spec.ResourceGroups {
			if slices.Equal(g.CoveredResources, []string{"cpu", "memory"}) {
				// The CPU and memory that come with the accelerators:
				// without them Kueue admits no pod.
				require.Len(t, g.Flavors, 1)
				assert.Equal(t, render.DefaultFlavor, g.Flavors[0].Name)
				continue
			}
			for _, f := range g.Flavors {
				covered = append(covered, f.Name)
				assert.Equal(t, int64(team.Quota[f.Name]), f.Resources[0].NominalQuota.Value(), "%s %s", team.Name, f.Name)
				assert.Equal(t, f.Name, flavors[f.Name], "flavor %s selects its own type", f.Name)
			}
		}
		assert.Equal(t, team.AcceleratorTypes, covered, "%s's budget covers exactly its entitled types, in order", team.Name)
		for i := range m.Profiles {
			p := &m.Profiles[i]
			name := team.Name + "." + p.Name
			cq, ok := queues[name]
			require.Equal(t, team.MayUse(p), ok, "a queue for %s exactly when the team may use the profile", name)
			if !ok {
				continue
			}
			assert.Equal(t, team.Name, cq.Spec.CohortName, name)
			require.Len(t, cq.Spec.ResourceGroups, 2)
			var order []string
			for _, f := range cq.Spec.ResourceGroups[0].Flavors {
				order = append(order, f.Name)
				assert.Zero(t, f.Resources[0].NominalQuota.Value(), "%s borrows all from the team's budget", name)
			}
			want := p.AcceleratorTypes
			if p.Generic() {
				want = team.AcceleratorTypes
			}
			assert.Equal(t, want, order, "%s tries the profile's types in its order", name)
			require.Len(t, cq.Spec.NamespaceSelector.MatchExpressions, 1)
			assert.ElementsMatch(t, team.Namespaces, cq.Spec.NamespaceSelector.MatchExpressions[0].Values)
			for _, ns := range team.Namespaces {
				assert.Equal(t, name, localQueues[ns+"/"+hwpQueue[p.Name]], "the LocalQueue %s names exists in %s", p.Name, ns)
			}
		}
	}
	limit := cohorts["model-serving"].Spec.ResourceGroups[0].Flavors[1].Resources[0].BorrowingLimit
	require.NotNil(t, limit)
	assert.Equal(t, 16, *limit)
	assert.Contains(t, tree.Paths(), "priorities/priorityclass-production-inference.yaml")
	assert.Contains(t, tree.Paths(), "priorities/workloadpriorityclass-production-inference.yaml")
	assert.NotContains(t, string(tree["kustomization.yaml"]), "- flux")
	assert.Contains(t, string(tree["kustomization.yaml"]), "- queues")
}

// TestResourceQuotaMode: without Kueue, each team namespace gets a
// ResourceQuota on its accelerator requests in total, no queue, and the
// HardwareProfiles schedule by node.
func TestResourceQuotaMode(t *testing.T) {
	m, err := compile.Load(examplesDir + "/hetero-prod")
	require.NoError(t, err)
	m.Cluster.Quotas = "resourcequota"
	objs, err := render.Render(m, &inventory.Inventory{})
	require.NoError(t, err)
	hard := map[string]int{}
	for _, o := range objs {
		assert.NotEqual(t, "ClusterQueue", o.Kind())
		if o.Kind() == "HardwareProfile" {
			b, err := yaml.Marshal(o.Body)
			require.NoError(t, err)
			assert.Contains(t, string(b), "type: Node", "without Kueue, %s schedules by node", o.Name())
			assert.NotContains(t, string(b), "kueue")
		}
		if o.Kind() == "ResourceQuota" {
			var quota struct {
				Spec struct {
					Hard map[string]int `json:"hard"`
				} `json:"spec"`
			}
			b, err := yaml.Marshal(o.Body)
			require.NoError(t, err)
			require.NoError(t, yaml.Unmarshal(b, &quota))
			hard[o.Namespace()] = quota.Spec.Hard["requests.nvidia.com/gpu"]
		}
	}
	assert.Equal(t, map[string]int{
		"ml-research": 56, "ml-research-dev": 56, // 16 H200 + 40 A100
		"serving-prod": 68, "serving-staging": 68, // 16 + 48 + 4
		"ds-notebooks": 56, // 32 V100 + 24 A100
	}, hard)
}

// TestPoolQuotas: in gpu-pools, teams hold quotas of MIG slices and
// time-sliced replicas. Each pool's flavor selects the pool's nodes and
// carries its taint, so Kueue admits into it only workloads that tolerate
// it: the pool's profiles, never whole-GPU ones.
func TestPoolQuotas(t *testing.T) {
	tree := renderExample(t, "gpu-pools")
	type flavor struct {
		Spec struct {
			NodeLabels map[string]string `json:"nodeLabels"`
			NodeTaints []compile.Taint   `json:"nodeTaints"`
		}
	}
	read := func(path string, v any) {
		t.Helper()
		b, ok := tree[path]
		require.True(t, ok, "%s is rendered", path)
		require.NoError(t, yaml.Unmarshal(b, v))
	}
	mig := compile.Taint{Key: "example.com/gpu", Value: "mig", Effect: "NoSchedule"}
	shared := compile.Taint{Key: "example.com/gpu", Value: "true", Effect: "NoSchedule"}
	for name, want := range map[string]compile.Taint{"a100-1g": mig, "a100-2g": mig, "a100-3g": mig, "a100-shared-3": shared, "h100-shared-2": shared} {
		var f flavor
		read("queues/resourceflavor-"+name+".yaml", &f)
		assert.Equal(t, name, f.Spec.NodeLabels["accelerator.opendatahub.io/pool"], name)
		assert.Equal(t, []compile.Taint{want}, f.Spec.NodeTaints, name)
	}
	quotas := func(team string) map[string]int {
		var q clusterQueue
		read("queues/cohort-"+team+".yaml", &q)
		out := map[string]int{}
		groups := q.Spec.ResourceGroups
		require.Len(t, groups, 2, "the accelerators, then CPU and memory")
		assert.Equal(t, []string{"cpu", "memory"}, groups[1].CoveredResources)
		assert.Equal(t, []string{"nvidia.com/gpu"}, groups[0].CoveredResources, "MIG single and unrenamed time-slicing: nvidia.com/gpu")
		for _, f := range groups[0].Flavors {
			out[f.Name] = int(f.Resources[0].NominalQuota.Value())
		}
		return out
	}
	assert.Equal(t, map[string]int{"a100-1g": 56, "a100-2g": 24, "a100-3g": 16}, quotas("model-serving"))
	assert.Equal(t, map[string]int{"a100-shared-3": 24, "h100-shared-2": 32}, quotas("ml-research"))
	assert.Equal(t, map[string]int{"a100-shared-3": 24}, quotas("data-science"))
	// A pool profile's queue tries its pools in order: its pool, then
	// its fallbacks.
	var q clusterQueue
	read("queues/clusterqueue-ml-research.research-shared.yaml", &q)
	var order []string
	for _, f := range q.Spec.ResourceGroups[0].Flavors {
		order = append(order, f.Name)
	}
	assert.Equal(t, []string{"a100-shared-3", "h100-shared-2"}, order)
}

// TestQueuesCoverHostResources: a team's budget covers CPU and memory too
// (Kueue leaves pending a workload that requests a resource its queue does
// not cover), as much as comes with the team's accelerators: data-science
// holds 24 of a100-shared-3's 48 replicas, so half its two nodes' CPU and
// memory, one node's worth.
func TestQueuesCoverHostResources(t *testing.T) {
	tree := renderExample(t, "gpu-pools")
	m, err := compile.Load(examplesDir + "/gpu-pools")
	require.NoError(t, err)
	inv, err := inventory.Load(examplesDir+"/gpu-pools/inventory.json", m.Catalog, inventory.Options{Pins: m.Pins})
	require.NoError(t, err)
	pool, ok := m.Pool("a100-shared-3")
	require.True(t, ok)
	nodes := m.PoolNodes(pool, inv)
	require.Len(t, nodes, 2)
	cpu, mem := nodes[0].Resources()
	var cq clusterQueue
	require.NoError(t, yaml.Unmarshal(tree["queues/cohort-data-science.yaml"], &cq))
	host := cq.Spec.ResourceGroups[len(cq.Spec.ResourceGroups)-1]
	require.Equal(t, []string{"cpu", "memory"}, host.CoveredResources)
	quota := map[string]string{}
	for _, r := range host.Flavors[0].Resources {
		quota[r.Name] = r.NominalQuota.String()
	}
	assert.Equal(t, resource.NewMilliQuantity(cpu/1000*1000, resource.DecimalSI).String(), quota["cpu"])
	assert.Equal(t, resource.NewQuantity(mem/(1<<30)*(1<<30), resource.BinarySI).String(), quota["memory"])
	assert.Contains(t, tree.Paths(), "queues/resourceflavor-"+render.DefaultFlavor+".yaml")
}

// TestCatalogQueueUsage: the catalog gives each Queue profile its
// LocalQueue and, per team, the ClusterQueue and the team's quota of each
// flavor in the profile's order; with pod data, what the team's pods hold
// of it and what is left (the budget is the team's, across its profiles).
func TestCatalogQueueUsage(t *testing.T) {
	m, err := compile.Load(examplesDir + "/hetero-prod")
	require.NoError(t, err)
	inv := &inventory.Inventory{
		Source: &inventory.Source{PodsCounted: true},
		Nodes: []inventory.Node{
			{Name: "h200-1", AcceleratorType: "nvidia-h200-141gb", Count: 8, Allocatable: 8, InUse: 7, InUseBy: map[string]int{"serving-prod": 5, "ml-research": 2}},
			{Name: "a100-1", AcceleratorType: "nvidia-a100-80gb", Count: 8, Allocatable: 8, InUse: 3, InUseBy: map[string]int{"serving-staging": 3}},
		},
	}
	doc := render.Catalog(m, inv)
	var q *catalogdoc.Queue
	for _, p := range doc.Profiles {
		if p.Name == "large-memory" {
			q = p.Queue
		}
	}
	require.NotNil(t, q)
	assert.Equal(t, "large-memory", q.LocalQueue)
	var serving *catalogdoc.TeamQueue
	for i := range q.Teams {
		if q.Teams[i].Team == "model-serving" {
			serving = &q.Teams[i]
		}
	}
	require.NotNil(t, serving)
	assert.Equal(t, "model-serving.large-memory", serving.ClusterQueue)
	require.Len(t, serving.Flavors, 2)
	h200, a100 := serving.Flavors[0], serving.Flavors[1]
	assert.Equal(t, "nvidia-h200-141gb", h200.Flavor, "the profile's order: H200 first")
	require.NotNil(t, h200.Used)
	assert.Equal(t, 5, *h200.Used, "serving's namespaces only")
	assert.Equal(t, 11, *h200.Left)
	assert.Equal(t, 3, *a100.Used)
	assert.Equal(t, 45, *a100.Left)

	for _, p := range render.Catalog(m, &inventory.Inventory{}).Profiles {
		for _, tq := range p.Queue.Teams {
			for _, f := range tq.Flavors {
				assert.Nil(t, f.Used, "no pod data, no usage")
			}
		}
	}
}

// TestFlavorTolerationsAreEveryProfiles: Kueue adds a flavor's tolerations
// to every pod it admits there, so a flavor may only carry what every
// profile whose queue lists it tolerates: never another profile's pool
// taint, which would let a pod onto nodes its profile keeps it off (and
// which the scheduling policy refuses). The vendor taint every profile
// tolerates is carried, so pods made as ODH alone makes them run.
func TestFlavorTolerationsAreEveryProfiles(t *testing.T) {
	type toleration struct{ Key, Operator, Value, Effect string }
	for _, name := range []string{"hetero-prod", "gpu-pools"} {
		t.Run(name, func(t *testing.T) {
			tree := renderExample(t, name)
			flavorTols := map[string][]toleration{}
			profileTols := map[string][]toleration{}
			queues := map[string][]string{} // profile → flavors of its ClusterQueues
			for p, data := range tree {
				var obj struct {
					Kind     string
					Metadata struct {
						Name        string
						Annotations map[string]string
					}
					Spec struct {
						Tolerations    []toleration
						ResourceGroups []struct{ Flavors []struct{ Name string } } `json:"resourceGroups"`
					}
				}
				if !strings.HasSuffix(p, ".yaml") || yaml.Unmarshal(data, &obj) != nil {
					continue
				}
				switch obj.Kind {
				case "ResourceFlavor":
					flavorTols[obj.Metadata.Name] = obj.Spec.Tolerations
				case "HardwareProfile":
					var tols []toleration
					if a := obj.Metadata.Annotations["accelerator.opendatahub.io/tolerations"]; a != "" {
						require.NoError(t, yaml.Unmarshal([]byte(a), &tols))
					}
					profileTols[obj.Metadata.Name] = tols
				case "ClusterQueue":
					for _, g := range obj.Spec.ResourceGroups {
						for _, f := range g.Flavors {
							queues[obj.Metadata.Annotations["accelc.io/profile"]] = append(queues[obj.Metadata.Annotations["accelc.io/profile"]], f.Name)
						}
					}
				}
			}
			require.NotEmpty(t, queues)
			carried := 0
			for profile, flavors := range queues {
				for _, f := range flavors {
					for _, tol := range flavorTols[f] {
						carried++
						assert.Contains(t, profileTols[profile], tol, "flavor %s gives profile %s's pods a toleration the profile lacks", f, profile)
					}
				}
			}
			assert.Positive(t, carried, "no flavor carries a toleration: pods made by ODH alone cannot reach tainted GPU nodes")
		})
	}
}

// TestSliceQuotaCohort: a MIG config cut into 1×3g.40gb + 2×2g.20gb under
// the mixed strategy (issue 17's fleet), quota'd per profile, beside a
// config of 3g.40gb slices alone. Kueue covers a resource in one group of
// a Cohort and each flavor of a group lists all its resources, so the
// team's Cohort has one group over both slice resources, each flavor
// holding 0 of what it does not provide; each profile's ClusterQueue
// lists the configs that cut its slice, for its resource alone; without
// Kueue, each namespace's ResourceQuota caps each slice resource.
func TestSliceQuotaCohort(t *testing.T) {
	src := `package c

cluster: {
	name: "mixed"
	enforcement: "deny"
	mig: {
		strategy: "mixed"
		configs: {
			"a100-mixed": {acceleratorType: "nvidia-a100-80gb", nodes: ["a100-1"], layout: {"3g.40gb": 1, "2g.20gb": 2}}
			"a100-3g": {acceleratorType: "nvidia-a100-80gb", nodes: ["a100-2"], layout: "3g.40gb": 2}
		}
	}
}
profiles: {
	"slice-3g": {displayName: "3g", acceleratorTypes: ["nvidia-a100-80gb"], mig: "3g.40gb"}
	"slice-2g": {displayName: "2g", acceleratorTypes: ["nvidia-a100-80gb"], mig: "2g.20gb"}
}
teams: a: {
	namespaces: ["a"]
	acceleratorTypes: ["nvidia-a100-80gb"]
	profiles: ["slice-3g", "slice-2g"]
	quota: {"a100-mixed": {"3g.40gb": 4, "2g.20gb": 8}, "a100-3g": 6}
}
`
	objs, err := render.Render(loadCUE(t, src), &inventory.Inventory{})
	require.NoError(t, err)
	tree, err := render.BuildTree("mixed", objs, render.Provenance{})
	require.NoError(t, err)
	read := func(path string) clusterQueue {
		t.Helper()
		var q clusterQueue
		require.Contains(t, tree, path)
		require.NoError(t, yaml.Unmarshal(tree[path], &q))
		return q
	}
	type quota map[string]int64 // flavor/resource → nominal
	quotas := func(q clusterQueue, group int) ([]string, quota) {
		g := q.Spec.ResourceGroups[group]
		out := quota{}
		for _, f := range g.Flavors {
			require.Len(t, f.Resources, len(g.CoveredResources), "flavor %s lists every covered resource", f.Name)
			for i, r := range f.Resources {
				assert.Equal(t, g.CoveredResources[i], r.Name, "in coveredResources order")
				out[f.Name+"/"+r.Name] = r.NominalQuota.Value()
			}
		}
		return g.CoveredResources, out
	}
	cohort := read("queues/cohort-a.yaml")
	require.Len(t, cohort.Spec.ResourceGroups, 2, "one group for both slices, then CPU and memory")
	covered, got := quotas(cohort, 0)
	assert.Equal(t, []string{"nvidia.com/mig-3g.40gb", "nvidia.com/mig-2g.20gb"}, covered)
	assert.Equal(t, quota{
		"a100-3g/nvidia.com/mig-3g.40gb": 6, "a100-3g/nvidia.com/mig-2g.20gb": 0,
		"a100-mixed/nvidia.com/mig-3g.40gb": 4, "a100-mixed/nvidia.com/mig-2g.20gb": 8,
	}, got)

	covered, got = quotas(read("queues/clusterqueue-a.slice-3g.yaml"), 0)
	assert.Equal(t, []string{"nvidia.com/mig-3g.40gb"}, covered)
	assert.Equal(t, quota{"a100-3g/nvidia.com/mig-3g.40gb": 0, "a100-mixed/nvidia.com/mig-3g.40gb": 0}, got)
	covered, got = quotas(read("queues/clusterqueue-a.slice-2g.yaml"), 0)
	assert.Equal(t, []string{"nvidia.com/mig-2g.20gb"}, covered)
	assert.Equal(t, quota{"a100-mixed/nvidia.com/mig-2g.20gb": 0}, got)

	objs, err = render.Render(loadCUE(t, strings.Replace(src, `name: "mixed"`, `name: "mixed"`+"\n\tquotas: \"resourcequota\"", 1)), &inventory.Inventory{})
	require.NoError(t, err)
	tree, err = render.BuildTree("mixed", objs, render.Provenance{})
	require.NoError(t, err)
	var rq struct{ Spec struct{ Hard map[string]int } }
	require.Contains(t, tree, "queues/resourcequota-a-accelc-accelerators.yaml")
	require.NoError(t, yaml.Unmarshal(tree["queues/resourcequota-a-accelc-accelerators.yaml"], &rq))
	assert.Equal(t, map[string]int{"requests.nvidia.com/mig-3g.40gb": 10, "requests.nvidia.com/mig-2g.20gb": 8}, rq.Spec.Hard)
}

// TestDRAQueues: Kueue counts the claims of a DRA profile whose template
// asks for exactly one DeviceClass (a type's, a MIG slice's), so such a
// profile is queued like any other, and Kueue's Configuration maps its
// class to the profile's resource: a claimed device draws on the team's
// quota of the type, in the type's (or the MIG config's) flavor. A
// firstAvailable profile (several types) and an attribute class's
// profile are not queued: Kueue would refuse their claims.
func TestDRAQueues(t *testing.T) {
	m := loadCUE(t, `package c

cluster: {
	name: "dra"
	enforcement: "deny"
	mig: {strategy: "mixed", configs: "a100-3g": {acceleratorType: "nvidia-a100-80gb", layout: "3g.40gb": 2}}
	dra: classes: "big-memory": {
		selector: "device.driver == 'gpu.nvidia.com' && device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('80Gi')) >= 0"
	}
}
profiles: {
	h100: {displayName: "H100", acceleratorTypes: ["nvidia-h100-80gb"], dra: {}}
	a100: {displayName: "A100", acceleratorTypes: ["nvidia-a100-80gb"], dra: {}}
	large: {displayName: "Large", acceleratorTypes: ["nvidia-h100-80gb", "nvidia-a100-80gb"], gpu: {default: 2, max: 8}, dra: {}}
	slice: {displayName: "Slice", acceleratorTypes: ["nvidia-a100-80gb"], mig: "3g.40gb", dra: {}}
	big: {displayName: "Big", dra: deviceClass: "big-memory"}
	plain: {displayName: "Plain", acceleratorTypes: ["nvidia-h100-80gb"]}
}
teams: ml: {namespaces: ["ml"], acceleratorTypes: ["nvidia-h100-80gb", "nvidia-a100-80gb"],
	quota: {"nvidia-h100-80gb": 8, "nvidia-a100-80gb": 16, "a100-3g": 6}}
`)
	for name, want := range map[string]bool{"h100": true, "a100": true, "slice": true, "plain": true, "large": false, "big": false} {
		p := m.Profile(name)
		require.NotNil(t, p, name)
		assert.Equal(t, want, len(m.QueueTeams(p)) > 0, "profile %s queued", name)
	}
	objs, err := render.Render(m, &inventory.Inventory{})
	require.NoError(t, err)
	require.NoError(t, render.Validate(m, objs))
	tree, err := render.BuildTree("dra", objs, render.Provenance{})
	require.NoError(t, err)

	var cm struct {
		Data map[string]string `json:"data"`
	}
	require.NoError(t, yaml.Unmarshal(tree["queues/configmap-"+render.KueueConfigMapName+".yaml"], &cm))
	var fragment struct {
		Resources struct {
			DeviceClassMappings []struct {
				Name             string   `json:"name"`
				DeviceClassNames []string `json:"deviceClassNames"`
			} `json:"deviceClassMappings"`
		} `json:"resources"`
	}
	require.NoError(t, yaml.Unmarshal([]byte(cm.Data["configuration.yaml"]), &fragment))
	mappings := map[string][]string{}
	for _, mp := range fragment.Resources.DeviceClassMappings {
		mappings[mp.Name] = mp.DeviceClassNames
	}
	assert.Equal(t, map[string][]string{
		"nvidia.com/gpu":         {"nvidia-a100-80gb", "nvidia-h100-80gb"},
		"nvidia.com/mig-3g.40gb": {"nvidia-a100-80gb-mig-3g.40gb"},
	}, mappings, "each queued profile's class, under its resource; not the attribute class, not large's (firstAvailable)")

	flavorsOf := func(queue string) (resource string, flavors []string) {
		t.Helper()
		path := "queues/clusterqueue-" + queue + ".yaml"
		require.Contains(t, tree, path)
		var q clusterQueue
		require.NoError(t, yaml.Unmarshal(tree[path], &q))
		for _, f := range q.Spec.ResourceGroups[0].Flavors {
			flavors = append(flavors, f.Name)
		}
		return q.Spec.ResourceGroups[0].CoveredResources[0], flavors
	}
	res, flavors := flavorsOf("ml.a100")
	assert.Equal(t, "nvidia.com/gpu", res)
	assert.Equal(t, []string{"nvidia-a100-80gb"}, flavors, "a claimed A100 draws on the team's A100s, as plain's requested H100 on its H100s")
	res, flavors = flavorsOf("ml.slice")
	assert.Equal(t, "nvidia.com/mig-3g.40gb", res)
	assert.Equal(t, []string{"a100-3g"}, flavors)
	assert.NotContains(t, tree, "queues/clusterqueue-ml.large.yaml")
	assert.NotContains(t, tree, "queues/clusterqueue-ml.big.yaml")
	// The namespace's cap on claims stays, for the claims Kueue never sees.
	assert.Contains(t, tree, "dra/resourcequota-ml-"+render.DRAQuotaName+".yaml")
}

// TestDRAMappingLimits: Kueue maps at most 8 DeviceClasses to one
// resource; vet says so at the profiles, rather than Kueue refusing to
// start.
func TestDRAMappingLimits(t *testing.T) {
	types := []string{"nvidia-h200-141gb", "nvidia-h100-80gb", "nvidia-a100-80gb", "nvidia-a100-40gb", "nvidia-l40s-48gb", "nvidia-l4-24gb", "nvidia-t4-16gb", "nvidia-v100-16gb", "nvidia-a10-24gb"}
	var src strings.Builder
	src.WriteString("package c\n\ncluster: {name: \"many\", dra: {}}\nprofiles: {\n")
	for _, id := range types {
		fmt.Fprintf(&src, "\t%q: {displayName: %q, acceleratorTypes: [%q], dra: {}}\n", id, id, id)
	}
	src.WriteString("}\nteams: t: {namespaces: [\"t\"], acceleratorTypes: [")
	for i, id := range types {
		if i > 0 {
			src.WriteString(", ")
		}
		fmt.Fprintf(&src, "%q", id)
	}
	src.WriteString("], quota: {")
	for i, id := range types {
		if i > 0 {
			src.WriteString(", ")
		}
		fmt.Fprintf(&src, "%q: 1", id)
	}
	src.WriteString("}}\n")
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "c.cue"), []byte(src.String()), 0o644))
	_, err := compile.Load(dir)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "Kueue maps at most 8 to one resource")
	assert.Contains(t, err.Error(), "through 9 DeviceClasses")
}
