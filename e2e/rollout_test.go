//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/accelc/accelc/internal/controlplane"
	"github.com/accelc/accelc/pkg/accelc"
	"github.com/accelc/accelc/pkg/audit"
	"github.com/accelc/accelc/pkg/inventory/live"
	"github.com/accelc/accelc/pkg/render"
	"github.com/accelc/accelc/pkg/workloads"
)

// The rollout: what a dry run leaves untouched, what accelc audit
// predicts, and one team moved to deny before the others.

// plainPod is a pod written as before accelc: a GPU, a toleration of the
// GPU taint, no profile.
func plainPod(name, namespace string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: %s
  namespace: %s
  labels: {app: plain}
spec:
  tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
  containers:
  - name: main
    image: registry.example/legacy:1
    resources: {limits: {nvidia.com/gpu: 1}}
`, name, namespace)
}

// createPlain creates plainPod with kubectl and the kubeconfig; it
// returns kubectl's stdout and stderr and whether it was admitted.
func (st *story) createPlain(t *testing.T, kubeconfig, name, namespace string) (string, string, bool) {
	t.Helper()
	file := filepath.Join(st.s.work, namespace+"-"+name+".yaml")
	if err := os.WriteFile(file, []byte(plainPod(name, namespace)), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, err := st.s.kubectlAs(t.Context(), kubeconfig, "create", "-f", file)
	return stdout, stderr, err == nil
}

// apiAccess is the name of the token volume the ServiceAccount admission
// plugin adds to every pod, with its random suffix.
var apiAccess = regexp.MustCompile(`kube-api-access-[a-z0-9]{5}`)

// createdShape creates plainPod with kubectl and the kubeconfig and
// returns what admission made of it, as the API server answered the
// create (before the scheduler binds it, which adds its node and, since
// Kubernetes 1.33, the node's topology labels): its labels, annotations
// and spec, the token volume's random name made fixed.
func (st *story) createdShape(t *testing.T, kubeconfig, name, namespace string) string {
	t.Helper()
	file := filepath.Join(st.s.work, namespace+"-"+name+".yaml")
	if err := os.WriteFile(file, []byte(plainPod(name, namespace)), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, err := st.s.kubectlAs(t.Context(), kubeconfig, "create", "-f", file, "-o", "json")
	if err != nil {
		t.Fatalf("kubectl create of %s in %s: %v\n%s%s", name, namespace, err, stdout, stderr)
	}
	var p corev1.Pod
	if err := json.Unmarshal([]byte(stdout), &p); err != nil {
		t.Fatal(err)
	}
	shape, err := json.MarshalIndent(struct {
		Labels      map[string]string `json:"labels"`
		Annotations map[string]string `json:"annotations"`
		Spec        corev1.PodSpec    `json:"spec"`
	}{p.Labels, p.Annotations, p.Spec}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return apiAccess.ReplaceAllString(string(shape), "kube-api-access-XXXXX")
}

// auditPrediction runs accelc audit --live on the cluster as it is, with
// the repository as it is about to be committed: the workloads it says
// Gatekeeper's audit will list, as namespace/Kind/name.
func (st *story) auditPrediction(t *testing.T) (*audit.Report, []string) {
	t.Helper()
	s := st.s
	begin := time.Now()
	stdout, stderr, err := run(t.Context(), s.root, s.accelc, "audit", st.cluster, "--live", "--kubeconfig", s.cp.Kubeconfig(), "-o", "json")
	if err != nil {
		t.Fatalf("accelc audit --live (exit %d): %s%s", exitCode(err), stdout, stderr)
	}
	var r audit.Report
	if err := json.Unmarshal([]byte(stdout), &r); err != nil {
		t.Fatalf("accelc audit -o json: %v\n%s", err, stdout)
	}
	var listed []string
	for _, team := range r.Teams {
		for _, ns := range team.Namespaces {
			for _, f := range ns.Workloads {
				if f.Audited {
					listed = append(listed, ns.Name+"/"+f.Kind+"/"+f.Name)
				}
			}
		}
	}
	slices.Sort(listed)
	t.Logf("accelc audit --live before the commit (%s): %d workloads, %d pods; Gatekeeper's audit will list %v",
		time.Since(begin).Round(time.Millisecond), r.Totals.Workloads, r.Totals.Pods, listed)
	return &r, listed
}

// auditedWorkloads are the workloads of every object Gatekeeper's audit
// lists in the constraints' status now, as namespace/Kind/name: a pod,
// its ReplicaSet and its Deployment are the Deployment.
func (st *story) auditedWorkloads(ctx context.Context) ([]string, error) {
	set, err := workloads.ReadLive(ctx, live.Options{Kubeconfig: st.s.cp.Kubeconfig()})
	if err != nil {
		return nil, err
	}
	byRef := map[workloads.Ref]*unstructured.Unstructured{}
	for _, o := range set.Objects {
		ref := workloads.RefOf(o)
		ref.APIVersion = ""
		byRef[ref] = o
	}
	seen := map[string]bool{}
	for _, r := range st.c.objs {
		if r.group() != "constraints.gatekeeper.sh" {
			continue
		}
		live, err := st.s.get(ctx, r.obj)
		if err != nil {
			return nil, err
		}
		vs, _, _ := unstructured.NestedSlice(live.Object, "status", "violations")
		for _, v := range vs {
			m, _ := v.(map[string]any)
			ref := workloads.Ref{Kind: fmt.Sprint(m["kind"]), Namespace: fmt.Sprint(m["namespace"]), Name: fmt.Sprint(m["name"])}
			w := ref
			if o, ok := byRef[ref]; ok {
				w = set.Workload(o)
			}
			seen[w.Namespace+"/"+w.Kind+"/"+w.Name] = true
		}
	}
	return slices.Sorted(func(yield func(string) bool) {
		for k := range seen {
			if !yield(k) {
				return
			}
		}
	}), nil
}

// waitAudited waits until Gatekeeper's audit lists exactly want.
func (st *story) waitAudited(t *testing.T, want []string) {
	t.Helper()
	var got []string
	err := poll(t.Context(), gatekeeperTimeout+3*controlplane.AuditInterval, func(ctx context.Context) (bool, string, error) {
		var err error
		if got, err = st.auditedWorkloads(ctx); err != nil {
			return false, err.Error(), nil
		}
		return slices.Equal(got, want), fmt.Sprintf("Gatekeeper's audit lists %v, accelc audit predicted %v", got, want), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("Gatekeeper's audit lists exactly the %d workloads accelc audit predicted: %v", len(got), got)
}

// stagesPerTeam: the cluster in dryrun with ml-research moved to deny.
// The same pod written as before accelc is refused in ml-research and
// admitted, only reported, in serving-prod.
func (st *story) stagesPerTeam(t *testing.T) {
	st.setEnforcement(t, "dryrun")
	st.setTeamEnforcement(t, "ml-research", "deny")
	st.commit(t, "commit (dryrun, ml-research at deny)")
	st.status(t, map[string]string{"accelc": "dryrun", "accelc-deny": "deny"})
	st.relaxedBindingNoted(t, "premium-gpu")
	var stderr string
	err := poll(t.Context(), gatekeeperTimeout, func(ctx context.Context) (bool, string, error) {
		var ok bool
		if _, stderr, ok = st.createPlain(t, st.devKube, "plain-staged", "ml-research"); ok {
			st.deletePod(t, "ml-research", "plain-staged")
			return false, "admitted in ml-research", nil
		}
		return isAccelcDenial(stderr), stderr, nil
	})
	if err != nil {
		t.Fatalf("ml-research at deny: %v", err)
	}
	t.Logf("ml-research (deny): refused: %s", firstLine(stderr))
	stdout, stderr, ok := st.createPlain(t, st.devKube, "plain-staged", "serving-prod")
	if !ok {
		t.Fatalf("serving-prod (dryrun): the same pod was refused: %s%s", stdout, stderr)
	}
	if strings.Contains(stderr, "Warning:") {
		t.Errorf("serving-prod (dryrun): kubectl warned: %s", stderr)
	}
	err = poll(t.Context(), gatekeeperTimeout+3*controlplane.AuditInterval, func(ctx context.Context) (bool, string, error) {
		got, err := st.auditedWorkloads(ctx)
		if err != nil {
			return false, err.Error(), nil
		}
		return slices.Contains(got, "serving-prod/Pod/plain-staged"), fmt.Sprintf("the audit lists %v", got), nil
	})
	if err != nil {
		t.Fatalf("serving-prod (dryrun): the admitted pod is not reported: %v", err)
	}
	t.Logf("serving-prod (dryrun): the same pod admitted, and reported by Gatekeeper's audit")
	st.deletePod(t, "serving-prod", "plain-staged")
	// Moving ml-research to deny touched no other team's running pods
	// (serving-prod's Deployment from before accelc), nor its own.
	st.legacyUntouched(t)
	st.setTeamEnforcement(t, "ml-research", "")
}

// relaxedBindingNoted relaxes one profile's binding of
// accelc-pod-admission live (validationActions [Audit]) while
// accelc-deny denies, as an admin might by hand, and wants accelc status
// to say that profile's pods are admitted unjudged (Gatekeeper's webhook
// skips them, the API server only audits them); then puts it back.
// Flux may put it back first: each try relaxes it again.
func (st *story) relaxedBindingNoted(t *testing.T, profile string) {
	t.Helper()
	s := st.s
	name := render.PodAdmissionPolicyName + "-" + profile
	api := s.client.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings()
	set := func(ctx context.Context, action admissionregistrationv1.ValidationAction) error {
		patch, _ := json.Marshal(map[string]any{"spec": map[string]any{"validationActions": []admissionregistrationv1.ValidationAction{action}}})
		_, err := api.Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{})
		return err
	}
	want := "the binding of " + render.PodAdmissionPolicyName + " for hardware profile(s) " + profile + " (validationActions [Audit]) does not refuse"
	var notes []string
	err := poll(t.Context(), gatekeeperTimeout, func(ctx context.Context) (bool, string, error) {
		if err := set(ctx, admissionregistrationv1.Audit); err != nil {
			return false, "", err
		}
		got, err := st.readStatus(ctx)
		if err != nil {
			return false, "", err
		}
		notes = got.Notes
		return slices.ContainsFunc(notes, func(n string) bool { return strings.Contains(n, want) }), fmt.Sprintf("notes %q", notes), nil
	})
	if rerr := set(t.Context(), admissionregistrationv1.Deny); rerr != nil {
		t.Fatalf("putting back %s's validationActions [Deny]: %v", name, rerr)
	}
	if err != nil {
		t.Fatalf("accelc status with %s relaxed live: %v", name, err)
	}
	// The API server rebuilds its admission policies once a second.
	time.Sleep(3 * time.Second)
	t.Logf("accelc status with %s at [Audit]: %q", name, firstLine(notes[slices.IndexFunc(notes, func(n string) bool { return strings.Contains(n, want) })]))
}

// readStatus runs accelc status --config on the cluster and decodes its
// JSON.
func (st *story) readStatus(ctx context.Context) (accelc.Status, error) {
	s := st.s
	var got accelc.Status
	stdout, stderr, err := run(ctx, s.root, s.accelc, "status", "--kubeconfig", s.cp.Kubeconfig(), "--config", st.cluster, "-o", "json")
	if err != nil {
		return got, fmt.Errorf("accelc status (exit %d): %s%s", exitCode(err), stdout, stderr)
	}
	err = json.Unmarshal([]byte(stdout), &got)
	return got, err
}

// setTeamEnforcement gives a team its own stage in the repository, or
// ("") takes it away.
func (st *story) setTeamEnforcement(t *testing.T, team, action string) {
	t.Helper()
	const file = "stages.cue"
	if action == "" {
		if err := os.Remove(filepath.Join(st.cluster, file)); err != nil {
			t.Fatal(err)
		}
		return
	}
	st.write(t, file, fmt.Sprintf("package cluster\n\nteams: %q: enforcement: %q\n", team, action))
}

// status runs accelc status on the cluster with the repository as
// committed, and checks what it says: the constraints at their stages,
// and Flux running what the checkout renders.
func (st *story) status(t *testing.T, stages map[string]string) {
	t.Helper()
	var got accelc.Status
	err := poll(t.Context(), gatekeeperTimeout, func(ctx context.Context) (bool, string, error) {
		var err error
		if got, err = st.readStatus(ctx); err != nil {
			return false, "", err
		}
		if got.Delivery.Drift == nil || got.Delivery.Drift.State != accelc.InSync {
			return false, fmt.Sprintf("drift: %+v", got.Delivery.Drift), nil
		}
		return true, "", nil
	})
	if err != nil {
		t.Fatalf("accelc status: %v", err)
	}
	actions := map[string]string{}
	for _, c := range got.Admission.Constraints {
		actions[c.Name] = c.EnforcementAction
	}
	if !maps.Equal(actions, stages) {
		t.Fatalf("accelc status: constraints %v, want %v", actions, stages)
	}
	// Gatekeeper runs with the values this configuration renders, the
	// tree is applied as rendered, Kueue and the Job controller run as
	// the users the policies trust, and no namespace is labelled
	// admission.gatekeeper.sh/ignore: status has nothing to say of the
	// webhooks' scope, of accelc-pod-admission, of those users or of
	// that label.
	for _, n := range got.Notes {
		if strings.Contains(n, "Gatekeeper's mutating webhook") || strings.Contains(n, "Gatekeeper's validating webhook") || strings.Contains(n, render.PodAdmissionPolicyName) ||
			strings.Contains(n, "kueueIdentities") || strings.Contains(n, render.GatekeeperIgnoreLabel) {
			t.Errorf("accelc status: %s", n)
		}
	}
	t.Logf("accelc status: constraints %v; Flux runs what the checkout renders (%s); %d note(s)", actions, got.Delivery.Drift.State, len(got.Notes))
}
