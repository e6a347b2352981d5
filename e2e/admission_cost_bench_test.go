//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	admissionv1review "k8s.io/api/admission/v1"
	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/accelc/accelc/internal/controlplane"
	"github.com/accelc/accelc/pkg/render"
)

// kueueUser is Kueue's controller as the API server knows it: the user
// that removes a pod's scheduling gate when Kueue admits it.
const kueueUser = "system:serviceaccount:kueue-system:kueue-controller-manager"

// BenchmarkAdmissionCost: what accelc's admission costs the API server a
// pod, measured apart from any storm. BenchmarkCluster's storms differ
// from one another by more than accelc's whole share of them; this
// measures that share alone, on one quiet API server (etcd and
// kube-apiserver, no controller) from one client, by server-side dry
// run: the API server's CPU a request (api-cpu-ms/op, less its rate at
// rest).
//
// The cluster has the admission accelc renders into the API server (the
// MutatingAdmissionPolicies, the ValidatingAdmissionPolicies and their
// bindings, the HardwareProfiles they read) and Gatekeeper's validating
// webhook as accelc's values register it, match conditions and all (it
// calls a server of the benchmark's that refuses every pod, failure
// policy Fail: a pod that reached it would fail the benchmark; other
// objects it admits). Three kinds of pods, the storm's
// (stormKinds, in their shares):
//
//   - pods=odh, in the teams' namespaces: as Open Data Hub writes them,
//     the profile's annotation only, which accelc's policies complete
//     and judge;
//   - pods=by-hand, in a twin of each team namespace (its labels, Pod
//     Security's included) that Gatekeeper's ignore label keeps from
//     every accelc policy and from Gatekeeper: as BenchmarkCluster's
//     kueue variant writes them (queue and priority labels, node selector
//     or affinity, tolerations);
//   - pods=by-hand-affinity, as pods=by-hand but a one-type profile's
//     confined by required node affinity (In, one value) as accelc's
//     mutations wrote it until 30 November 2026, not a node selector:
//     what that form alone costs the API server;
//
// all with the scheduling gate Kueue's pod webhook adds. Each is priced
// at creation (op=create) and at Kueue's update when it admits the pod
// (op=kueue-admits: the gate removed, the flavor's node selector
// written, as Kueue's service account), the one UPDATE of a pod accelc's
// admission sees in a storm. The storm's Jobs of five are priced at
// creation too (jobs=by-hand, jobs=odh; op=job-create): accelc's job
// policies give an ODH Job its queue, and Gatekeeper judges it. The
// kinds alternate round by round
// ($ACCELC_BENCH_ROUNDS, 3) so that a slow spell of the machine falls on
// both; the table at the end gives each op's medians and what accelc
// adds. docs/scale.md.
func BenchmarkAdmissionCost(b *testing.B) {
	s := newSuite(b)
	if s.older() {
		b.Skipf("Kubernetes %s serves no MutatingAdmissionPolicy: accelc's webhook does their work (BenchmarkCluster on the older minor measures it)", s.k8sVersion)
	}
	var opts []controlplane.Option
	profiles := os.Getenv(benchProfileEnv)
	if profiles != "" {
		opts = append(opts, controlplane.WithProfiling())
		if err := os.MkdirAll(profiles, 0o755); err != nil {
			b.Fatal(err)
		}
	}
	s.cp = controlplane.Start(b, opts...)
	s.connect(b)
	s.installCRDs(b)
	s.mapper.Reset()
	out := s.render(b, storyExample, "admission-cost")
	c := &clusterUnderTest{example: storyExample, out: out, objs: readTree(b, out)}
	c.read(b)
	s.ensureNamespaces(b, foreignNamespaces(b, out)...)
	s.createRendered(b, c.objs, "Namespace", "PriorityClass")

	hand := newStormWriter(b, variant{kueue: true}, c)
	handAffinity := newStormWriter(b, variant{kueue: true, affinity: true}, c)
	odh := newStormWriter(b, variant{kueue: true, accelc: true}, c)
	var mix []stormPod // the storm's kinds in their shares
	for _, k := range stormKinds {
		for range k.share {
			mix = append(mix, k)
		}
	}
	twin := s.unjudgedTwins(b, c, mix)
	pod := func(w stormWriter, k stormPod, name string) *corev1.Pod {
		labels, annotations, spec := w.object(k)
		spec.SchedulingGates = []corev1.PodSchedulingGate{{Name: kueueGate}}
		ns := k.ns
		if !w.v.accelc {
			ns = twin[k.ns]
		}
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels, Annotations: annotations}, Spec: spec}
	}
	s.applyAdmission(b, c, pod(odh, mix[0], "probe"))
	kueue := s.kueueClient(b)
	api := map[string]int{"kube-apiserver": s.cp.PIDs()["kube-apiserver"]}
	idle := idleRates(api, 5*time.Second)["kube-apiserver"]
	b.Logf("kube-apiserver at rest: %.1f ms a second", idle*1000)

	results := map[string][]float64{} // "pods op" → api-cpu-ms/op, a round each
	// measure runs op once an iteration and reports the API server's CPU
	// an op, less what it spends at rest.
	measure := func(b *testing.B, key string, op func(ctx context.Context, i int) error) {
		if profiles != "" {
			defer s.profileAPIServer(b, filepath.Join(profiles, "admission-"+strings.NewReplacer("/", "-", ",", "-", "=", "-").Replace(b.Name())+".pprof"))()
		}
		start, began, n := cpuTimes(api)["kube-apiserver"], time.Now(), 0
		for b.Loop() {
			if err := op(b.Context(), n); err != nil {
				b.Fatal(err)
			}
			n++
		}
		spent := cpuTimes(api)["kube-apiserver"] - start
		ms := (spent.Seconds() - idle*time.Since(began).Seconds()) * 1000 / float64(n)
		b.ReportMetric(ms, "api-cpu-ms/op")
		results[key] = append(results[key], ms)
	}
	dryRun := []string{metav1.DryRunAll}
	create := func(w stormWriter, key string) func(*testing.B) {
		return func(b *testing.B) {
			measure(b, key, func(ctx context.Context, i int) error {
				p := pod(w, mix[i%len(mix)], fmt.Sprintf("cost-%d", i))
				_, err := s.client.CoreV1().Pods(p.Namespace).Create(ctx, p, metav1.CreateOptions{DryRun: dryRun})
				return err
			})
		}
	}
	// createJob: the storm's Jobs of five, made by dry run (Kueue's job
	// webhook, which suspends them, is not here: by hand and with
	// accelc alike).
	createJob := func(w stormWriter, key string) func(*testing.B) {
		return func(b *testing.B) {
			measure(b, key, func(ctx context.Context, i int) error {
				k := mix[i%len(mix)]
				j := w.job(k, fmt.Sprintf("cost-%d", i))
				if !w.v.accelc {
					j.Namespace = twin[k.ns]
				}
				_, err := s.client.BatchV1().Jobs(j.Namespace).Create(ctx, j, metav1.CreateOptions{DryRun: dryRun})
				return err
			})
		}
	}
	// admits: Kueue admitting each made pod, by dry run.
	admits := func(made []*corev1.Pod, key string) func(*testing.B) {
		return func(b *testing.B) {
			measure(b, key, func(ctx context.Context, i int) error {
				p := made[i%len(made)].DeepCopy()
				p.Spec.SchedulingGates = nil
				if p.Spec.NodeSelector == nil {
					p.Spec.NodeSelector = map[string]string{}
				}
				p.Spec.NodeSelector[c.typeLabel] = mix[i%len(mix)].types[0]
				_, err := kueue.CoreV1().Pods(p.Namespace).Update(ctx, p, metav1.UpdateOptions{DryRun: dryRun})
				return err
			})
		}
	}
	// made is one pod of each kind of the mix, made for real, for Kueue's
	// update to change.
	made := func(w stormWriter, prefix string) []*corev1.Pod {
		var out []*corev1.Pod
		for i, k := range mix {
			p := pod(w, k, fmt.Sprintf("%s-%d", prefix, i))
			p, err := s.client.CoreV1().Pods(p.Namespace).Create(b.Context(), p, metav1.CreateOptions{})
			if err != nil {
				b.Fatalf("making the %s pod of %s/%s: %v", prefix, k.ns, k.profile, err)
			}
			out = append(out, p)
		}
		return out
	}
	handMade, affinityMade, odhMade := made(hand, "hand"), made(handAffinity, "hand-affinity"), made(odh, "odh")
	rounds := envInt(b, benchRoundsEnv, 3)
	for r := 1; r <= rounds; r++ {
		b.Run(fmt.Sprintf("round=%d/pods=by-hand/op=create", r), create(hand, "by-hand create"))
		b.Run(fmt.Sprintf("round=%d/pods=by-hand-affinity/op=create", r), create(handAffinity, "by-hand-affinity create"))
		b.Run(fmt.Sprintf("round=%d/pods=odh/op=create", r), create(odh, "odh create"))
		b.Run(fmt.Sprintf("round=%d/jobs=by-hand/op=create", r), createJob(hand, "by-hand job-create"))
		b.Run(fmt.Sprintf("round=%d/jobs=odh/op=create", r), createJob(odh, "odh job-create"))
		b.Run(fmt.Sprintf("round=%d/pods=by-hand/op=kueue-admits", r), admits(handMade, "by-hand kueue-admits"))
		b.Run(fmt.Sprintf("round=%d/pods=by-hand-affinity/op=kueue-admits", r), admits(affinityMade, "by-hand-affinity kueue-admits"))
		b.Run(fmt.Sprintf("round=%d/pods=odh/op=kueue-admits", r), admits(odhMade, "odh kueue-admits"))
	}
	var table strings.Builder
	fmt.Fprintf(&table, "\nBenchmarkAdmissionCost: kube-apiserver CPU a request, ms (dry run, one client; median of %d rounds, less the API server's rate at rest, %.1f ms a second)\n\n", rounds, idle*1000)
	table.WriteString("| op | by hand, unjudged | by hand, one type by affinity | as ODH writes them, accelc's admission | accelc adds |\n| --- | --- | --- | --- | --- |\n")
	for _, op := range []string{"create", "kueue-admits", "job-create"} {
		h, a, o := median(results["by-hand "+op]), median(results["by-hand-affinity "+op]), median(results["odh "+op])
		affinity := fmt.Sprintf("%.2f", a)
		if len(results["by-hand-affinity "+op]) == 0 {
			affinity = "" // Jobs are made by hand one way
		}
		fmt.Fprintf(&table, "| %s | %.2f | %s | %.2f | %+.2f |\n", op, h, affinity, o, o-h)
	}
	fmt.Print(table.String())
}

// unjudgedTwins makes, for each team namespace of the mix, a namespace
// with its labels and Gatekeeper's ignore label, which keeps every
// accelc policy and Gatekeeper's webhooks from its pods; it returns the
// twin of each.
func (s *suite) unjudgedTwins(b *testing.B, c *clusterUnderTest, mix []stormPod) map[string]string {
	twins := map[string]string{}
	for _, k := range mix {
		if twins[k.ns] != "" {
			continue
		}
		ns, err := s.client.CoreV1().Namespaces().Get(b.Context(), k.ns, metav1.GetOptions{})
		if err != nil {
			b.Fatalf("the team namespace %s: %v", k.ns, err)
		}
		labels := maps.Clone(ns.Labels)
		delete(labels, corev1.LabelMetadataName)
		labels[render.GatekeeperIgnoreLabel] = "accelc-bench"
		twin := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: k.ns + "-unjudged", Labels: labels}}
		if _, err := s.client.CoreV1().Namespaces().Create(b.Context(), twin, metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
		twins[k.ns] = twin.Name
	}
	return twins
}

// profileAPIServer takes a CPU profile of kube-apiserver into file,
// $ACCELC_BENCH_PROFILE_SECONDS (10) long from now; the function it
// returns waits for it (run the benchmark at least as long:
// -benchtime 12s).
func (s *suite) profileAPIServer(b *testing.B, file string) (wait func()) {
	seconds := envInt(b, benchProfileSecondsEnv, 10)
	done := make(chan struct{})
	go func() {
		defer close(done)
		data, err := s.client.CoreV1().RESTClient().Get().AbsPath("/debug/pprof/profile").Param("seconds", strconv.Itoa(seconds)).
			Timeout(time.Duration(seconds+60) * time.Second).DoRaw(context.Background())
		if err == nil {
			err = os.WriteFile(file, data, 0o644)
		}
		if err != nil {
			b.Errorf("profiling kube-apiserver: %v", err)
		}
	}()
	return func() { <-done }
}

// kueueClient is a client acting as Kueue's controller, allowed to
// update pods.
func (s *suite) kueueClient(b *testing.B) kubernetes.Interface {
	s.bindUser(b, kueueUser, []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "update", "patch"}}})
	cs, err := kubernetes.NewForConfig(s.cp.UserRESTConfig(b, kueueUser, "system:serviceaccounts", "system:serviceaccounts:kueue-system"))
	if err != nil {
		b.Fatal(err)
	}
	return cs
}

// applyAdmission makes the admission accelc renders in the API server
// (its HardwareProfiles, admission policies and bindings) and
// Gatekeeper's validating webhook as accelc's values register it, calling
// a server that admits every object but a pod (allowWorkloadsOnly); then
// waits until both policies are in
// force: probe, a pod Open Data Hub writes, comes back completed, and the
// same pod aimed at a node type no profile allows is refused by
// accelc-pod-admission.
func (s *suite) applyAdmission(b *testing.B, c *clusterUnderTest, probe *corev1.Pod) {
	s.createRendered(b, c.objs, "HardwareProfile",
		"MutatingAdmissionPolicy", "MutatingAdmissionPolicyBinding",
		"ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding")
	var values render.GatekeeperHelmValues
	if err := yaml.UnmarshalStrict([]byte(gatekeeperValues(b, c)), &values); err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewTLSServer(http.HandlerFunc(allowWorkloadsOnly))
	b.Cleanup(srv.Close)
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	vwc := controlplane.GatekeeperValidatingWebhook(&values, func(path string) admissionv1.WebhookClientConfig {
		return admissionv1.WebhookClientConfig{URL: ptr.To(srv.URL + path), CABundle: ca}
	})
	if _, err := s.client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(b.Context(), vwc, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	wrong := probe.DeepCopy()
	wrong.Spec.NodeSelector = map[string]string{c.typeLabel: "accelc-e2e-no-such-type"}
	deadline := time.Now().Add(time.Minute)
	for {
		got, err := s.client.CoreV1().Pods(probe.Namespace).Create(b.Context(), probe, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		mutated := err == nil && got.Labels[c.labelPrefix+"/profile"] != "" && got.Annotations[c.labelPrefix+"/team"] != ""
		_, err = s.client.CoreV1().Pods(wrong.Namespace).Create(b.Context(), wrong, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if mutated && err != nil && strings.Contains(err.Error(), render.PodAdmissionPolicyName) {
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("accelc's admission policies not in force after a minute: the probe mutated %t; the pod of no type's profile: %v", mutated, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// allowWorkloadsOnly stands in for Gatekeeper's webhook: it admits every
// object but a pod, which it refuses, so that a pod that reached it (one
// accelc's installation keeps from Gatekeeper: the common GPU pod, and
// Kueue's update) fails the benchmark, while a Job, which Gatekeeper
// judges in a storm too, costs the API server the call it makes.
func allowWorkloadsOnly(w http.ResponseWriter, r *http.Request) {
	var review admissionv1review.AdmissionReview
	if err := json.NewDecoder(r.Body).Decode(&review); err != nil || review.Request == nil {
		http.Error(w, "not an AdmissionReview", http.StatusBadRequest)
		return
	}
	pod := review.Request.Resource.Group == "" && review.Request.Resource.Resource == "pods"
	review.Response = &admissionv1review.AdmissionResponse{UID: review.Request.UID, Allowed: !pod}
	if pod {
		review.Response.Result = &metav1.Status{Message: "BenchmarkAdmissionCost: a pod reached Gatekeeper's webhook"}
	}
	review.Request = nil
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(&review)
}
