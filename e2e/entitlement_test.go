//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	"github.com/accelc/accelc/internal/controlplane"
)

// stepEntitlement takes a team and a type of the cluster the team is not
// entitled to, cordons every node of the other types, so that a node of
// that type is the only place an accelerator pod can go, and creates, in
// the team's namespace, a pod for every profile that could reach the type
// (the profiles that list it, and any-type profiles). Each must be denied
// or stay pending; none may bind to a node of the type. The same pod in a
// namespace of a team that is entitled must bind there, which shows the
// nodes had room.
func (s *suite) stepEntitlement(t *testing.T, c *clusterUnderTest) {
	nodes, err := s.client.CoreV1().Nodes().List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ns, typ, ok := c.unentitled(nodes.Items)
	if !ok {
		t.Logf("every team of %s may use every type of its nodes: nothing to check", c.example)
		return
	}
	ent := c.entitlements[ns]
	t.Logf("team %s (namespace %s) may use %v, not %s", ent.team, ns, ent.types, typ)

	cordoned := s.cordonAllBut(t, c, typ)
	defer s.uncordon(t, cordoned)
	t.Logf("cordoned the %d nodes that are not %s", len(cordoned), typ)

	checked, failed := 0, 0
	for _, p := range c.profiles {
		if !p.reaches(c, typ, nodes.Items) {
			continue
		}
		failed++
		s.ensureNamespaces(t, ns)
		c.addNamespace(ns)
		pod := userPod("unentitled-"+p.name, ns, map[string]string{p.labelKey: p.name}, p.resource, p.count)
		created, err := c.dev.CoreV1().Pods(ns).Create(t.Context(), pod, metav1.CreateOptions{})
		switch {
		case err != nil && isAccelcDenial(err.Error()):
			msg, _ := accelcDenied(err.Error())
			t.Logf("profile %-14s in %s: denied at admission: %s", p.name, ns, msg)
		case err != nil:
			t.Errorf("profile %s in %s: refused, but not by Gatekeeper: %v", p.name, ns, err)
			continue
		default:
			node, cond, err := s.decided(t.Context(), created)
			if err != nil {
				t.Errorf("profile %s in %s: %v", p.name, ns, err)
				continue
			}
			if node != nil {
				if node.Labels[c.typeLabel] == typ {
					t.Errorf("profile %s: team %s's pod %s/%s was admitted and bound to %s, a %s node, which the team is not entitled to (pod affinity %s)",
						p.name, ent.team, ns, pod.Name, node.Name, typ, jsonString(created.Spec.Affinity))
				} else {
					t.Errorf("profile %s: pod %s/%s was bound to %s (%s=%q), a cordoned node", p.name, ns, pod.Name, node.Name, c.typeLabel, node.Labels[c.typeLabel])
				}
				continue
			}
			t.Logf("profile %-14s in %s: admitted, never bound: %s", p.name, ns, cond)
		}
		checked++
		failed--

		// The control: a team entitled to the type gets the node.
		want := slices.Clone(p.types)
		if len(want) == 0 {
			want = []string{typ}
		}
		okNS, okEnt, found := c.entitledNamespace(p.name, want)
		if !found {
			t.Logf("profile %-14s: no team is entitled to %v, no control", p.name, want)
			continue
		}
		s.ensureNamespaces(t, okNS)
		c.addNamespace(okNS)
		control := userPod("entitled-"+p.name, okNS, map[string]string{p.labelKey: p.name}, p.resource, p.count)
		if p.queue != "" && len(p.types) != 1 {
			// Kueue admits the pod to the first of the profile's
			// flavours with quota, another type's maybe, whose nodes are
			// cordoned: the control asks for the type, which Kueue's
			// flavour assignment respects.
			control.Spec.NodeSelector = map[string]string{c.typeLabel: typ}
		}
		if _, err := c.dev.CoreV1().Pods(okNS).Create(t.Context(), control, metav1.CreateOptions{}); err != nil {
			t.Errorf("profile %s: the control pod in %s (team %s) was not admitted: %v", p.name, okNS, okEnt.team, err)
			continue
		}
		node, err := s.waitBound(t.Context(), control)
		if err != nil {
			t.Errorf("profile %s: the control pod in %s: %v", p.name, okNS, err)
			continue
		}
		if node.Labels[c.typeLabel] != typ {
			t.Errorf("profile %s: the control pod was bound to %s (%s), not a %s node", p.name, node.Name, node.Labels[c.typeLabel], typ)
			continue
		}
		t.Logf("profile %-14s in %s (team %s): bound to %s, a %s node: the nodes had room", p.name, okNS, okEnt.team, node.Name, typ)
	}
	if checked+failed == 0 {
		t.Errorf("no profile could reach %s: nothing was checked", typ)
	}
	t.Logf("checked: %d profiles could reach %s; team %s's pods of %d were kept off it", checked+failed, typ, ent.team, checked)
}

// reaches reports whether the profile's pods may go to nodes of typ: it
// lists the type, or it is an any-type profile.
//
// and it tolerates the taints of some node of the type (a pool's taint
// keeps a whole-GPU profile off the pool's nodes).
func (p profile) reaches(c *clusterUnderTest, typ string, nodes []corev1.Node) bool {
	if len(p.types) > 0 && !slices.Contains(p.types, typ) {
		return false
	}
	for _, n := range nodes {
		if n.Labels[c.typeLabel] == typ && tolerates(p.tolerations, n.Spec.Taints) {
			return true
		}
	}
	return false
}

// tolerates reports whether tolerations tolerate every NoSchedule and
// NoExecute taint, as kube-scheduler requires.
func tolerates(tolerations []corev1.Toleration, taints []corev1.Taint) bool {
	for i := range taints {
		if taints[i].Effect == corev1.TaintEffectPreferNoSchedule {
			continue
		}
		ok := false
		for j := range tolerations {
			ok = ok || tolerations[j].ToleratesTaint(klog.Background(), &taints[i], false)
		}
		if !ok {
			return false
		}
	}
	return true
}

// unentitled picks a namespace and a type of the cluster's nodes its team
// is not entitled to, when another team is: of those pairs, the one the
// most profiles reach, then the first by namespace and type.
func (c *clusterUnderTest) unentitled(nodes []corev1.Node) (string, string, bool) {
	var nodeTypes []string
	for _, typ := range c.nodeTypes {
		if !slices.Contains(nodeTypes, typ) {
			nodeTypes = append(nodeTypes, typ)
		}
	}
	slices.Sort(nodeTypes)
	var names []string
	for ns := range c.entitlements {
		names = append(names, ns)
	}
	slices.Sort(names)
	bestNS, bestType, best := "", "", 0
	for _, ns := range names {
		for _, typ := range nodeTypes {
			if slices.Contains(c.entitlements[ns].types, typ) {
				continue
			}
			if _, _, ok := c.entitledNamespace("", []string{typ}); !ok {
				continue
			}
			n := 0
			for _, p := range c.profiles {
				if p.reaches(c, typ, nodes) {
					n++
				}
			}
			if n > best {
				bestNS, bestType, best = ns, typ, n
			}
		}
	}
	return bestNS, bestType, best > 0
}

// cordonAllBut marks every schedulable node whose type is not typ
// unschedulable and returns them.
func (s *suite) cordonAllBut(t *testing.T, c *clusterUnderTest, typ string) []string {
	t.Helper()
	nodes, err := s.client.CoreV1().Nodes().List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, n := range nodes.Items {
		if n.Labels[c.typeLabel] == typ || n.Spec.Unschedulable {
			continue
		}
		s.setUnschedulable(t, n.Name, true)
		out = append(out, n.Name)
	}
	return out
}

func (s *suite) uncordon(t *testing.T, names []string) {
	t.Helper()
	for _, n := range names {
		s.setUnschedulable(t, n, false)
	}
}

func (s *suite) setUnschedulable(t *testing.T, node string, on bool) {
	t.Helper()
	patch, _ := json.Marshal(map[string]any{"spec": map[string]any{"unschedulable": on}})
	if _, err := s.client.CoreV1().Nodes().Patch(t.Context(), node, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatalf("setting node %s unschedulable=%v: %v", node, on, err)
	}
}

// decided waits until kube-scheduler has bound the pod (its node) or found
// no node for it (the PodScheduled condition).
func (s *suite) decided(ctx context.Context, pod *corev1.Pod) (*corev1.Node, string, error) {
	var node, cond string
	err := poll(ctx, scheduleTimeout, func(ctx context.Context) (bool, string, error) {
		got, err := s.client.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error(), nil
		}
		node = got.Spec.NodeName
		cond = scheduledCondition(got)
		unschedulable := slices.ContainsFunc(got.Status.Conditions, func(c corev1.PodCondition) bool {
			return c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable
		})
		return node != "" || unschedulable, cond, nil
	})
	if err != nil {
		return nil, "", fmt.Errorf("kube-scheduler did not decide on %s/%s: %v", pod.Namespace, pod.Name, err)
	}
	if node == "" {
		return nil, cond, nil
	}
	n, err := s.client.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
	return n, cond, err
}

// teardown removes what step 4 and 5 made, so that the next example starts
// from its own tree: the pods, the objects of the root kustomization but
// its CRDs and ConstraintTemplates (the next example's apply takes them
// over; deleting a template would race Gatekeeper deleting its constraint
// CRD), and the nodes.
func (s *suite) teardown(t *testing.T, c *clusterUnderTest, nodes []string) {
	if c != nil {
		s.deletePods(t, c.namespaces...)
		// Kueue's Workloads of the pods: their ClusterQueues and flavors
		// are not deleted while a Workload holds them, and no garbage
		// collector runs here to follow the pods.
		workloads := workloadGVR
		for _, ns := range c.namespaces {
			// The cases' Jobs first: Kueue makes a Workload again for a
			// Job that is there.
			bg := metav1.DeletePropagationBackground
			_ = s.client.BatchV1().Jobs(ns).DeleteCollection(t.Context(), metav1.DeleteOptions{PropagationPolicy: &bg}, metav1.ListOptions{})
			list, err := s.dyn.Resource(workloads).Namespace(ns).List(t.Context(), metav1.ListOptions{})
			if err != nil {
				continue // Kueue's CRDs are not there
			}
			for _, w := range list.Items {
				// Kueue keeps its finalizer while the Workload's Job lives.
				_, _ = s.dyn.Resource(workloads).Namespace(ns).Patch(t.Context(), w.GetName(), types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
				_ = s.dyn.Resource(workloads).Namespace(ns).Delete(t.Context(), w.GetName(), metav1.DeleteOptions{})
			}
		}
		args := []string{"delete", "--ignore-not-found", "--wait=true"}
		n := 0
		for _, r := range c.objs {
			// Namespaces stay: the examples share team namespaces, and no
			// namespace controller runs here to finish deleting one.
			if r.root(c) == "" || slices.Contains([]string{"CustomResourceDefinition", "ConstraintTemplate", "Namespace"}, r.obj.GetKind()) {
				continue
			}
			args = append(args, "-f", filepath.Join(c.out, r.file))
			n++
		}
		if n > 0 {
			s.mustKubectl(t, args...)
		}
		t.Logf("deleted %d objects of %s's tree and the pods of %v", n, c.example, c.namespaces)
	}
	s.deleteNodes(t, nodes)
	err := poll(t.Context(), scheduleTimeout, func(ctx context.Context) (bool, string, error) {
		left := 0
		for _, n := range nodes {
			if _, err := s.client.CoreV1().Nodes().Get(ctx, n, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				left++
			}
		}
		return left == 0, fmt.Sprintf("%d nodes left", left), nil
	})
	if err != nil {
		t.Errorf("deleting the nodes: %v", err)
	}
}

// waitEstablished waits, within the Gatekeeper timeout, for a CRD.
func waitEstablished(ctx context.Context, s *suite, name string) error {
	ctx, cancel := context.WithTimeout(ctx, gatekeeperTimeout)
	defer cancel()
	return controlplane.WaitEstablished(ctx, s.dyn, name)
}
