//go:build e2e

package e2e

import (
	"context"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/accelc/accelc/internal/controlplane"
	"github.com/accelc/accelc/pkg/policytest"
)

// TestWorkloadKinds: kinds whose controllers make pods later (KubeRay's
// RayJob, LeaderWorkerSet) are judged at the workload, before Kueue admits
// them. hetero-prod's tree at deny is applied to a control plane with
// Gatekeeper and Kueue managing the team namespaces' RayJobs and
// LeaderWorkerSets (its rendered Configuration, with those integrations
// added); as data science's member, a RayJob and a LeaderWorkerSet whose
// templates name premium-gpu (H200s, ml-research's) are refused with
// accelc's message, and so is a RayJob of the team's own profile whose
// Kueue priority-class label outranks the team's tier; a RayJob and a
// LeaderWorkerSet of the team's own standard-gpu are admitted, and Kueue
// makes the RayJob's Workload.
func TestWorkloadKinds(t *testing.T) {
	s := newSuite(t)
	begin := time.Now()
	s.cp = controlplane.Start(t)
	s.gk = s.cp.StartGatekeeper(t)
	s.connect(t)
	s.ensureNamespaces(t, systemNamespaces...)
	s.installCRDs(t)

	c := &clusterUnderTest{example: "hetero-prod", out: s.render(t, "hetero-prod", "file")}
	c.objs = readTree(t, c.out)
	c.applied = appliedFolders(t, c.out)
	c.read(t)
	fragment, teamNamespaces := kueueConfig(t, c.objs)
	// Kueue's RayJob and LeaderWorkerSet integrations, beside the
	// rendered batch/job and pod: Kueue then reads these kinds' queue and
	// priority labels itself.
	var conf map[string]any
	if err := yaml.Unmarshal([]byte(fragment), &conf); err != nil {
		t.Fatalf("the rendered Kueue Configuration: %v", err)
	}
	conf["integrations"] = map[string]any{"frameworks": []any{"batch/job", "pod", "ray.io/rayjob", "leaderworkerset.x-k8s.io/leaderworkerset"}}
	withKinds, err := yaml.Marshal(conf)
	if err != nil {
		t.Fatal(err)
	}
	kq := s.cp.StartKueue(t, controlplane.KueueOptions{Namespaces: teamNamespaces, Fragment: withKinds})
	t.Logf("control plane, Gatekeeper and Kueue up in %s; Kueue's log: %s", time.Since(begin).Round(time.Millisecond), kq.LogPath())

	// What the dry-run step of TestEndToEnd makes first: the namespaces
	// the tree's objects live in, and the tree's own CRDs.
	var namespaces []string
	var crds []string
	for _, r := range c.objs {
		if ns := r.obj.GetNamespace(); ns != "" && !slices.Contains(namespaces, ns) {
			namespaces = append(namespaces, ns)
		}
		if r.obj.GetKind() == "CustomResourceDefinition" {
			crds = append(crds, filepath.Join(c.out, r.file))
		}
	}
	s.ensureNamespaces(t, namespaces...)
	if _, err := controlplane.ApplyCRDs(t.Context(), s.dyn, crds...); err != nil {
		t.Fatalf("applying the tree's CRDs: %v", err)
	}
	s.apply(t, c)
	s.waitGatekeeper(t, c)
	for _, r := range c.objs {
		if r.group() != "constraints.gatekeeper.sh" {
			continue
		}
		if action, _, _ := unstructuredString(r.obj.Object, "spec", "enforcementAction"); action != "deny" {
			t.Fatalf("hetero-prod renders %s with enforcementAction %q, not deny", r, action)
		}
	}
	c.dev, c.devDyn = s.devClient(t)

	fixture := func(name string) *unstructured.Unstructured {
		t.Helper()
		objs, err := controlplane.ReadObjects(filepath.Join(s.root, "examples", "clusters", "hetero-prod", filepath.Dir(policytest.CasesFile), "pods", name+".yaml"))
		if err != nil || len(objs) != 1 {
			t.Fatalf("fixture %s: %v", name, err)
		}
		return objs[0]
	}
	refusals := []struct {
		fixture string
		re      *regexp.Regexp
	}{
		{"rayjob-worker-other-team", regexp.MustCompile(`entitlement: \[workerGroupSpecs\[0\] gpu\] team data-science may not use hardware profile "premium-gpu"`)},
		{"lws-other-team", regexp.MustCompile(`\[Implied by accelc-leaderworkerset-worker\] entitlement: team data-science may not use hardware profile "premium-gpu"`)},
		{"rayjob-priority-above-tier", regexp.MustCompile(`entitlement: RayJob ray-jump-the-queue: label kueue\.x-k8s\.io/priority-class=production-inference \(\d+\) outranks team data-science's tier research`)},
	}
	for _, r := range refusals {
		obj := fixture(r.fixture)
		s.ensureNamespaces(t, obj.GetNamespace())
		msg, err := s.denied(t.Context(), c, obj, nil, r.re)
		if err != nil {
			t.Errorf("%s %s (%s) must be refused at the workload with a message matching %q: %v", obj.GetKind(), obj.GetName(), r.fixture, r.re, err)
			continue
		}
		if _, err := s.get(t.Context(), obj); err == nil {
			t.Errorf("%s %s was refused, yet it exists", obj.GetKind(), obj.GetName())
		}
		t.Logf("%-26s %s %s refused: …%s…", r.fixture, obj.GetKind(), obj.GetName(), r.re.FindString(msg))
	}

	for _, name := range []string{"rayjob-odh", "lws-odh"} {
		obj := fixture(name)
		if err := s.createForReal(t.Context(), c, obj); err != nil {
			t.Errorf("%s %s (%s) of the team's own profile must be admitted: %v", obj.GetKind(), obj.GetName(), name, err)
			continue
		}
		t.Logf("%-26s %s %s admitted", name, obj.GetKind(), obj.GetName())
	}
	// Kueue took the admitted RayJob: it suspended it and made its
	// Workload, which names the RayJob as its owner.
	workloads := schema.GroupVersionResource{Group: "kueue.x-k8s.io", Version: "v1beta2", Resource: "workloads"}
	err = poll(t.Context(), admitTimeout, func(ctx context.Context) (bool, string, error) {
		list, err := s.dyn.Resource(workloads).Namespace("ds-notebooks").List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err.Error(), nil
		}
		var seen []string
		for _, w := range list.Items {
			for _, o := range w.GetOwnerReferences() {
				if o.Kind == "RayJob" && o.Name == "ray-v100-job" {
					return true, "", nil
				}
				seen = append(seen, o.Kind+"/"+o.Name)
			}
		}
		return false, "Workloads' owners: " + strings.Join(seen, ", "), nil
	})
	if err != nil {
		t.Errorf("Kueue made no Workload for the admitted RayJob ray-v100-job: %v", err)
	} else {
		t.Logf("checked: Kueue made the Workload of the admitted RayJob ray-v100-job")
	}
}
