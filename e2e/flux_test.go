//go:build e2e

package e2e

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/accelc/accelc/internal/controlplane"
	"github.com/accelc/accelc/internal/testutil"
	"github.com/accelc/accelc/pkg/artifact"
)

const (
	// fluxTimeout bounds one rollout: source-controller pulls the
	// artifact, kustomize-controller applies the tree, Gatekeeper makes
	// the constraint CRD the health check waits for, then the
	// constraints are applied.
	fluxTimeout = 3 * time.Minute

	fluxCluster = "flux-lab"
)

var (
	fluxOCIRepositories = schema.GroupVersionResource{Group: "source.toolkit.fluxcd.io", Version: "v1", Resource: "ocirepositories"}
	fluxKustomizations  = schema.GroupVersionResource{Group: "kustomize.toolkit.fluxcd.io", Version: "v1", Resource: "kustomizations"}
	hardwareProfile     = schema.GroupVersionResource{Group: "infrastructure.opendatahub.io", Version: "v1", Resource: "hardwareprofiles"}
)

// TestFlux delivers a rendered tree the way a cluster gets it: accelc push
// to an OCI registry (docker-registry on 127.0.0.1), then Flux's own
// source-controller and kustomize-controller, run out of cluster against a
// control plane with Gatekeeper, given only the rendered flux/ objects.
// Flux pulls and applies the tree, the constraints' Kustomization waiting
// for the tree's and its health check; a CUE change pushed as a new version
// rolls out (a dropped profile is pruned); a broken artifact leaves the
// cluster on the last good revision; and `accelc diff` against the
// artifact Flux applied is clean.
func TestFlux(t *testing.T) {
	s := newSuite(t)
	registry := testutil.Registry(t)
	begin := time.Now()
	s.cp = controlplane.Start(t)
	s.gk = s.cp.StartGatekeeper(t)
	s.connect(t)
	if !t.Run("crds", s.stepCRDs) {
		t.FailNow()
	}
	fx := s.cp.StartFlux(t)
	t.Logf("control plane, Gatekeeper and Flux up in %s; registry at %s", time.Since(begin).Round(time.Millisecond), registry)
	repo := "oci://" + registry + "/accelc/" + fluxCluster
	f := &fluxRun{s: s, fx: fx, repo: repo, name: fluxCluster}
	f.signingKey(t)

	// 1.0.0: both profiles. Only flux/ is applied by hand, after the
	// namespaces the tree writes into but does not make: Open Data Hub's
	// (the HardwareProfiles) and the GPU Operator's (its values), which
	// their installations make.
	v1 := f.cluster(t, "v1", true)
	out1 := s.render(t, v1, "v1")
	s.ensureNamespaces(t, foreignNamespaces(t, out1)...)
	d1 := f.push(t, out1, "1.0.0")
	s.mustKubectl(t, "apply", "--server-side", "--field-manager=accelc-e2e", "-k", filepath.Join(out1, "flux"))
	first := f.rollout(t, "1.0.0", d1)
	f.treeApplied(t, out1)
	if !slices.Contains(first.constraintReasons, "DependencyNotReady") {
		t.Logf("the constraints' Kustomization was never seen waiting (reasons seen: %v); its Ready came at %s, the tree's at %s", first.constraintReasons, first.constraintsReady, first.treeReady)
	}
	if first.constraintsReady.Before(first.treeReady) {
		t.Errorf("the constraints' Kustomization was Ready at %s, before the tree's at %s: it must wait for the tree and its health check", first.constraintsReady, first.treeReady)
	}
	t.Logf("1.0.0 rolled out: tree Ready at %s (health check: %s), constraints Ready at %s after waiting (reasons seen: %v)",
		first.treeReady.Format(time.TimeOnly), first.health, first.constraintsReady.Format(time.TimeOnly), first.constraintReasons)

	// 1.1.0: the CUE drops profiles.h200 and renames a100.
	v2 := f.cluster(t, "v2", false)
	f.edit(t, filepath.Join(v2, "cluster.cue"), `displayName: "One A100"`, `displayName: "One A100, v2"`)
	out2 := s.render(t, v2, "v2")
	d2 := f.push(t, out2, "1.1.0")
	f.reconcile(t)
	f.rollout(t, "1.1.0", d2)
	f.treeApplied(t, out2)
	if _, err := s.dyn.Resource(hardwareProfile).Namespace("opendatahub").Get(t.Context(), "h200", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("HardwareProfile h200, dropped from the CUE in 1.1.0, is still there (err %v): Flux prunes what the new revision leaves out", err)
	}
	if got := f.displayName(t, "a100"); got != "One A100, v2" {
		t.Errorf("HardwareProfile a100's display name is %q after 1.1.0, want %q", got, "One A100, v2")
	}
	t.Logf("1.1.0 rolled out: h200 pruned, a100 renamed")

	// accelc diff against the artifact Flux applied: nothing to change.
	stdout, stderr, err := run(t.Context(), s.root, s.accelc, "diff", v2, "--against", repo+":1.1.0")
	if err != nil {
		t.Errorf("accelc diff %s --against %s:1.1.0 after the rollout: %v (exit %d)\n%s%s", v2, repo, err, exitCode(err), stdout, stderr)
	}
	if _, _, err := run(t.Context(), s.root, s.accelc, "diff", v1, "--against", repo+":1.1.0"); exitCode(err) != 1 {
		t.Errorf("accelc diff of 1.0.0's CUE against 1.1.0's artifact exits %d, want 1 (a change)", exitCode(err))
	}

	// 1.2.0: a hand-edited tree the API server refuses (a
	// NamespaceEntitlement whose team is a list), beside a valid change.
	broken := f.brokenTree(t, out2)
	d3 := f.push(t, broken, "1.2.0")
	f.reconcile(t)
	f.refused(t, "1.2.0", d3, "1.1.0", d2)
	if got := f.displayName(t, "a100"); got != "One A100, v2" {
		t.Errorf("HardwareProfile a100's display name is %q after the broken 1.2.0, want 1.1.0's %q: nothing of a refused revision is applied", got, "One A100, v2")
	}

	// Artifacts source-controller must not take: unsigned, and signed by
	// a key the cluster does not trust. Each is a newer version the semver
	// range picks; the OCIRepository keeps the last one it verified.
	tampered := f.brokenTree(t, out2, "tampered")
	f.edit(t, filepath.Join(tampered, "tenancy", "namespaceentitlement-lab.yaml"), "team: [lab]", "team: lab")
	f.edit(t, filepath.Join(tampered, "tenancy", "namespaceentitlement-lab.yaml"), "- nvidia-a100-80gb", "- nvidia-a100-80gb\n  - nvidia-h100-80gb")
	d4 := f.pushWith(t, tampered, "1.3.0")
	f.reconcile(t)
	f.unverified(t, "1.3.0", d4, "1.2.0@"+d3)
	other, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	otherKey := filepath.Join(f.s.work, "other.key")
	otherPEM, err := artifact.EncryptCosignKey(other, []byte("e2e-password"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(otherKey, otherPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	d5 := f.pushWith(t, tampered, "1.4.0", "--sign-key", otherKey, "--annotation", "tampered=1")
	f.reconcile(t)
	f.unverified(t, "1.4.0", d5, "1.2.0@"+d3)
	f.entitlementUnchanged(t)

	// A signature lifted from a good artifact: 1.1.0's signature image,
	// copied to the tag of a tampered 1.5.0's digest. The signature is
	// valid, but its payload names 1.1.0's digest. source-controller
	// v1.9.6 verifies key-based cosign signatures without checking the
	// payload's claims (its CheckOpts set no ClaimVerifier), so it takes
	// the artifact: anyone who may write to the repository can replay a
	// signature. docs/delivery.md says so and what to do;
	// this step keeps that warning true.
	d6 := f.pushWith(t, tampered, "1.5.0", "--annotation", "tampered=2")
	f.copySignature(t, d2, d6)
	f.reconcile(t)
	if outcome := f.copiedSignature(t, "1.5.0", d6); outcome != "accepted" {
		t.Errorf("source-controller now refuses an artifact with a signature copied from another (%s): it checks the payload's digest; drop docs/delivery.md's warning and make this step expect the refusal", outcome)
	}
}

// unverified waits until source-controller has refused tag@digest for its
// signature, keeping kept as its artifact.
func (f *fluxRun) unverified(t *testing.T, tag, digest, kept string) {
	t.Helper()
	want := tag + "@" + digest
	var msg string
	err := poll(t.Context(), fluxTimeout, func(ctx context.Context) (bool, string, error) {
		src, err := f.object(ctx, fluxOCIRepositories, "accelc-"+f.name)
		if err != nil {
			return false, err.Error(), nil
		}
		c := condition(src, "SourceVerified")
		rev, _, _ := unstructured.NestedString(src.Object, "status", "artifact", "revision")
		if rev == want {
			return false, "", fmt.Errorf("source-controller took %s: %s", want, conditions(src))
		}
		if c == nil || c["status"] != "False" || !strings.Contains(fmt.Sprint(c["message"]), digest) {
			return false, fmt.Sprintf("not refused yet: artifact %q; %s", rev, conditions(src)), nil
		}
		if rev != kept {
			return false, "", fmt.Errorf("source-controller refused %s but its artifact is %q, want %q kept", want, rev, kept)
		}
		msg = fmt.Sprint(c["message"])
		return true, "", nil
	})
	if err != nil {
		f.logs(t)
		t.Fatalf("source-controller did not refuse %s: %v", want, err)
	}
	t.Logf("%s refused by source-controller's cosign verification, artifact kept at %s: %s", want, kept, firstLine(msg))
}

// copySignature copies the signature image of one digest to the
// signature tag of another, as someone with write access to the registry
// could.
func (f *fluxRun) copySignature(t *testing.T, from, to string) {
	t.Helper()
	repo, err := name.NewRepository(strings.TrimPrefix(f.repo, "oci://"), name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	src, err := artifact.SignatureTag(repo.Digest(from))
	if err != nil {
		t.Fatal(err)
	}
	dst, err := artifact.SignatureTag(repo.Digest(to))
	if err != nil {
		t.Fatal(err)
	}
	img, err := remote.Image(src)
	if err != nil {
		t.Fatalf("reading %s: %v", src, err)
	}
	if err := remote.Write(dst, img); err != nil {
		t.Fatalf("writing %s: %v", dst, err)
	}
}

// copiedSignature says what source-controller does with an artifact
// whose signature image was copied from another artifact's.
func (f *fluxRun) copiedSignature(t *testing.T, tag, digest string) string {
	t.Helper()
	want := tag + "@" + digest
	var outcome string
	err := poll(t.Context(), fluxTimeout, func(ctx context.Context) (bool, string, error) {
		src, err := f.object(ctx, fluxOCIRepositories, "accelc-"+f.name)
		if err != nil {
			return false, err.Error(), nil
		}
		rev, _, _ := unstructured.NestedString(src.Object, "status", "artifact", "revision")
		if rev == want {
			outcome = "accepted"
			return true, "", nil
		}
		if c := condition(src, "SourceVerified"); c != nil && c["status"] == "False" && strings.Contains(fmt.Sprint(c["message"]), digest) {
			outcome = "refused: " + fmt.Sprint(c["message"])
			return true, "", nil
		}
		return false, conditions(src), nil
	})
	if err != nil {
		f.logs(t)
		t.Fatalf("source-controller neither took nor refused %s: %v", want, err)
	}
	t.Logf("%s with a signature copied from another artifact: source-controller %s", want, outcome)
	return outcome
}

// entitlementUnchanged: no refused artifact gave team lab another type.
func (f *fluxRun) entitlementUnchanged(t *testing.T) {
	t.Helper()
	ne, err := f.s.dyn.Resource(schema.GroupVersionResource{Group: "accelc.io", Version: "v1alpha1", Resource: "namespaceentitlements"}).Get(t.Context(), "lab", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	types, _, _ := unstructured.NestedStringSlice(ne.Object, "spec", "acceleratorTypes")
	if slices.Contains(types, "nvidia-h100-80gb") {
		t.Errorf("NamespaceEntitlement lab has %v: an unverified artifact reached the cluster", types)
	}
}

// fluxRun is one cluster delivered through Flux: the registry repository
// it is pushed to, and the controllers that follow it.
type fluxRun struct {
	s    *suite
	fx   *controlplane.Flux
	repo string // oci://127.0.0.1:PORT/accelc/flux-lab
	name string // the cluster's name, which names its Flux objects
	key  string // cosign's encrypted key, whose password is $COSIGN_PASSWORD
}

// signingKey makes the cluster's signing key as `cosign generate-key-pair`
// does (encrypted; COSIGN_PASSWORD opens it), and puts its public half in
// the Secret the OCIRepository's verify names.
func (f *fluxRun) signingKey(t *testing.T) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("COSIGN_PASSWORD", "e2e-password")
	enc, err := artifact.EncryptCosignKey(key, []byte("e2e-password"))
	if err != nil {
		t.Fatal(err)
	}
	f.key = filepath.Join(f.s.work, "cosign.key")
	if err := os.WriteFile(f.key, enc, 0o600); err != nil {
		t.Fatal(err)
	}
	pub, err := artifact.PublicKeyPEM(key)
	if err != nil {
		t.Fatal(err)
	}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "cosign-pub", Namespace: controlplane.FluxNamespace}, Data: map[string][]byte{"cosign.pub": pub}}
	if _, err := f.s.client.CoreV1().Secrets(controlplane.FluxNamespace).Create(t.Context(), secret, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// cluster is a copy of e2e/testdata/flux (with h200.cue or without) with
// the delivery to the test's registry.
func (f *fluxRun) cluster(t *testing.T, name string, h200 bool) string {
	t.Helper()
	src := filepath.Join(f.s.root, "e2e", "testdata", "flux")
	dir := filepath.Join(f.s.work, "clusters", name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	files := []string{"cluster.cue", "inventory.json"}
	if h200 {
		files = append(files, "h200.cue")
	}
	for _, file := range files {
		data, err := os.ReadFile(filepath.Join(src, file))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, file), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	f.writeDelivery(t, dir)
	return dir
}

// writeDelivery writes the cluster's delivery: Flux pulls its tree from
// the run's registry, any 1.x tag, verified with the run's cosign key.
func (f *fluxRun) writeDelivery(t *testing.T, dir string) {
	t.Helper()
	delivery := fmt.Sprintf(`package cluster

cluster: delivery: {
	url:      %q
	insecure: true
	ref: semver: ">=1.0.0"
	interval: "1m"
	verify: secretRef: "cosign-pub"
}
`, f.repo)
	if err := os.WriteFile(filepath.Join(dir, "delivery.cue"), []byte(delivery), 0o644); err != nil {
		t.Fatal(err)
	}
}

// push runs accelc push, signing with the cluster's key, and returns the
// artifact's digest.
func (f *fluxRun) push(t *testing.T, out, tag string) string {
	t.Helper()
	return f.pushWith(t, out, tag, "--sign-key", f.key)
}

// pushWith runs accelc push with extra flags.
func (f *fluxRun) pushWith(t *testing.T, out, tag string, extra ...string) string {
	t.Helper()
	args := append([]string{"push", out, f.repo + ":" + tag, "-o", "json"}, extra...)
	stdout, stderr, err := run(t.Context(), f.s.root, f.s.accelc, args...)
	if err != nil {
		t.Fatalf("accelc %s: %v\n%s", strings.Join(args, " "), err, stderr)
	}
	var pushed struct {
		Digest string `json:"digest"`
	}
	if err := json.Unmarshal([]byte(stdout), &pushed); err != nil || pushed.Digest == "" {
		t.Fatalf("accelc push -o json: %v\n%s", err, stdout)
	}
	return pushed.Digest
}

// reconcile asks source-controller to look at the repository now, as
// `flux reconcile source oci` does, rather than after the interval.
func (f *fluxRun) reconcile(t *testing.T) {
	t.Helper()
	patch := fmt.Sprintf(`{"metadata":{"annotations":{"reconcile.fluxcd.io/requestedAt":%q}}}`, time.Now().Format(time.RFC3339Nano))
	if _, err := f.s.dyn.Resource(fluxOCIRepositories).Namespace(controlplane.FluxNamespace).Patch(t.Context(), "accelc-"+f.name, "application/merge-patch+json", []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatalf("requesting a reconcile of the OCIRepository: %v", err)
	}
}

// rolledOut is what a rollout showed.
type rolledOut struct {
	treeReady, constraintsReady time.Time
	health                      string   // the tree's Healthy condition's message
	constraintReasons           []string // the constraints' Ready reasons seen while waiting
}

// rollout waits until the OCIRepository holds tag@digest and both
// Kustomizations have applied it.
func (f *fluxRun) rollout(t *testing.T, tag, digest string) rolledOut {
	t.Helper()
	want := tag + "@" + digest
	var res rolledOut
	seen := map[string]bool{}
	err := poll(t.Context(), fluxTimeout, func(ctx context.Context) (bool, string, error) {
		src, err := f.object(ctx, fluxOCIRepositories, "accelc-"+f.name)
		if err != nil {
			return false, err.Error(), nil
		}
		if rev, _, _ := unstructured.NestedString(src.Object, "status", "artifact", "revision"); rev != want {
			return false, fmt.Sprintf("OCIRepository holds %q, want %q; %s", rev, want, conditions(src)), nil
		}
		cons, err := f.object(ctx, fluxKustomizations, "accelc-"+f.name+"-constraints")
		if err != nil {
			return false, err.Error(), nil
		}
		if _, reason, _, _ := fluxReady(cons); reason != "" && !seen[reason] {
			seen[reason] = true
			res.constraintReasons = append(res.constraintReasons, reason)
		}
		tree, err := f.object(ctx, fluxKustomizations, "accelc-"+f.name)
		if err != nil {
			return false, err.Error(), nil
		}
		for _, k := range []*unstructured.Unstructured{tree, cons} {
			applied, _, _ := unstructured.NestedString(k.Object, "status", "lastAppliedRevision")
			if status, _, _, _ := fluxReady(k); applied != want || status != "True" {
				return false, fmt.Sprintf("Kustomization %s: lastAppliedRevision %q, want %q; %s", k.GetName(), applied, want, conditions(k)), nil
			}
		}
		_, _, _, res.treeReady = fluxReady(tree)
		_, _, _, res.constraintsReady = fluxReady(cons)
		if h := condition(tree, "Healthy"); h != nil {
			res.health = fmt.Sprint(h["message"])
		}
		return true, "", nil
	})
	if err != nil {
		f.logs(t)
		t.Fatalf("Flux did not roll out %s: %v", want, err)
	}
	return res
}

// refused waits until the tree's Kustomization has tried tag@digest and
// failed, with lastAppliedRevision still the good one.
func (f *fluxRun) refused(t *testing.T, tag, digest, goodTag, goodDigest string) {
	t.Helper()
	want, good := tag+"@"+digest, goodTag+"@"+goodDigest
	var msg string
	err := poll(t.Context(), fluxTimeout, func(ctx context.Context) (bool, string, error) {
		k, err := f.object(ctx, fluxKustomizations, "accelc-"+f.name)
		if err != nil {
			return false, err.Error(), nil
		}
		attempted, _, _ := unstructured.NestedString(k.Object, "status", "lastAttemptedRevision")
		applied, _, _ := unstructured.NestedString(k.Object, "status", "lastAppliedRevision")
		status, reason, message, _ := fluxReady(k)
		if attempted != want || status != "False" {
			return false, fmt.Sprintf("lastAttemptedRevision %q (want %q), %s", attempted, want, conditions(k)), nil
		}
		if applied != good {
			return false, "", fmt.Errorf("the Kustomization failed %s (%s) but its lastAppliedRevision is %q, want %q", want, reason, applied, good)
		}
		msg = message
		return true, "", nil
	})
	if err != nil {
		f.logs(t)
		t.Fatalf("Flux did not refuse %s: %v", want, err)
	}
	if !strings.Contains(msg, "NamespaceEntitlement/lab") {
		t.Errorf("the Kustomization refused %s, but its message does not name NamespaceEntitlement/lab: %s", want, msg)
	}
	t.Logf("%s refused, the cluster stays on %s: %s", want, good, firstLine(msg))
}

// brokenTree is a copy of a rendered tree, edited by hand as no render
// would: NamespaceEntitlement lab's team is a list (the API server refuses
// it), and profile a100 is renamed (valid, but in the same revision).
func (f *fluxRun) brokenTree(t *testing.T, out string, name ...string) string {
	t.Helper()
	dirName := "broken"
	if len(name) > 0 {
		dirName = name[0]
	}
	dir := filepath.Join(f.s.work, "render", dirName)
	if err := os.CopyFS(dir, os.DirFS(out)); err != nil {
		t.Fatal(err)
	}
	f.edit(t, filepath.Join(dir, "tenancy", "namespaceentitlement-lab.yaml"), "team: lab", "team: [lab]")
	f.edit(t, filepath.Join(dir, "profiles", "hardwareprofile-a100.yaml"), "opendatahub.io/display-name: One A100, v2", "opendatahub.io/display-name: One A100, broken")
	return dir
}

// treeApplied checks that every object of the rendered tree Flux applies
// (the root kustomization and constraints/) is in the cluster.
func (f *fluxRun) treeApplied(t *testing.T, out string) {
	t.Helper()
	n := 0
	for _, r := range readTree(t, out) {
		top, _, _ := strings.Cut(r.file, "/")
		if top == "flux" || top == "monitoring" {
			continue // applied by hand, and the Prometheus operator's
		}
		if _, err := f.s.get(t.Context(), r.obj); err != nil {
			t.Errorf("%s (%s) is not in the cluster after the rollout: %v", r, r.file, err)
			continue
		}
		n++
	}
	t.Logf("every object of the tree but flux/ and monitoring/ is in the cluster: %d", n)
}

// foreignNamespaces are the namespaces of the tree's objects that the tree
// does not make.
func foreignNamespaces(t testing.TB, out string) []string {
	t.Helper()
	made := map[string]bool{}
	var used []string
	for _, r := range readTree(t, out) {
		if top, _, _ := strings.Cut(r.file, "/"); top == "flux" || top == "monitoring" {
			continue
		}
		if r.obj.GetKind() == "Namespace" {
			made[r.obj.GetName()] = true
		}
		if ns := r.obj.GetNamespace(); ns != "" && !slices.Contains(used, ns) {
			used = append(used, ns)
		}
	}
	var out2 []string
	for _, ns := range used {
		if !made[ns] {
			out2 = append(out2, ns)
		}
	}
	slices.Sort(out2)
	t.Logf("namespaces the tree writes into and their operators make: %v", out2)
	return out2
}

// edit replaces old, which the file must hold, with repl.
func (f *fluxRun) edit(t *testing.T, path, old, repl string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), old) {
		t.Fatalf("%s has no %q to edit", path, old)
	}
	if err := os.WriteFile(path, []byte(strings.Replace(string(data), old, repl, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
}

func (f *fluxRun) displayName(t *testing.T, profile string) string {
	t.Helper()
	hp, err := f.s.dyn.Resource(hardwareProfile).Namespace("opendatahub").Get(t.Context(), profile, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("HardwareProfile %s: %v", profile, err)
	}
	return hp.GetAnnotations()["opendatahub.io/display-name"]
}

func (f *fluxRun) object(ctx context.Context, gvr schema.GroupVersionResource, name string) (*unstructured.Unstructured, error) {
	return f.s.dyn.Resource(gvr).Namespace(controlplane.FluxNamespace).Get(ctx, name, metav1.GetOptions{})
}

// logs shows the controllers' last lines.
func (f *fluxRun) logs(t *testing.T) {
	t.Helper()
	for _, path := range f.fx.LogPaths() {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Logf("%s: %v", path, err)
			continue
		}
		lines := strings.Split(strings.TrimSpace(string(data)), "\n")
		if len(lines) > 40 {
			lines = lines[len(lines)-40:]
		}
		t.Logf("%s (last %d lines):\n%s", filepath.Base(path), len(lines), strings.Join(lines, "\n"))
	}
}

// fluxReady is the Ready condition's status, reason, message and last
// transition.
func fluxReady(obj *unstructured.Unstructured) (status, reason, message string, at time.Time) {
	c := condition(obj, "Ready")
	if c == nil {
		return "", "", "", time.Time{}
	}
	at, _ = time.Parse(time.RFC3339, fmt.Sprint(c["lastTransitionTime"]))
	return fmt.Sprint(c["status"]), fmt.Sprint(c["reason"]), fmt.Sprint(c["message"]), at
}

// conditions is an object's conditions in a line, for messages.
func conditions(obj *unstructured.Unstructured) string {
	conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	var parts []string
	for _, c := range conds {
		m, _ := c.(map[string]any)
		parts = append(parts, fmt.Sprintf("%v=%v (%v: %v)", m["type"], m["status"], m["reason"], m["message"]))
	}
	if len(parts) == 0 {
		return "no conditions"
	}
	return strings.Join(parts, "; ")
}
