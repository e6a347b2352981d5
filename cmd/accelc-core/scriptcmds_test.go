package main

// The scripts' own commands (TestScripts lists them): servers on
// 127.0.0.1, started by the script that asks for one and stopped by PID
// when it ends, and the inputs a txtar archive cannot hold (zeros, sparse
// files, escape bytes, a snapshot's age).

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/rogpeppe/go-internal/testscript"
	"github.com/rogpeppe/go-internal/txtar"
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8stypes "k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/restmapper"
	"sigs.k8s.io/yaml"

	"github.com/accelc/accelc/internal/controlplane"
	"github.com/accelc/accelc/internal/testutil"
	"github.com/accelc/accelc/pkg/accelc"
	"github.com/accelc/accelc/pkg/artifact"
	"github.com/accelc/accelc/pkg/inventory"
	"github.com/accelc/accelc/pkg/render"
)

var scriptCmds = map[string]func(ts *testscript.TestScript, neg bool, args []string){
	"exitcode":       cmdExitcode,
	"registry":       cmdRegistry,
	"pushlayer":      cmdPushLayer,
	"pull":           cmdPull,
	"digest":         cmdDigest,
	"contentdigest":  cmdContentDigest,
	"repositories":   cmdRepositories,
	"tgz":            cmdTgz,
	"zeros":          cmdZeros,
	"sparse":         cmdSparse,
	"bytes":          cmdBytes,
	"replace":        cmdReplace,
	"inuse":          cmdInUse,
	"taken":          cmdTaken,
	"apiserver":      cmdAPIServer,
	"kube-nodes":     cmdKubeNodes,
	"kube-pod":       cmdKubePod,
	"kube-slices":    cmdKubeSlices,
	"kube-user":      cmdKubeUser,
	"kube-apply":     cmdKubeApply,
	"gitrev":         cmdGitRev,
	"workload-items": cmdWorkloadItems,
}

// scriptState is what one script's servers leave for its later steps.
type scriptState struct {
	// t is the script's subtest: the servers stop when it ends.
	t        testing.TB
	registry string
	cp       *controlplane.ControlPlane
}

type stateKey struct{}

func newScriptState(e *testscript.Env) {
	e.Values[stateKey{}] = &scriptState{t: e.T().(testing.TB)}
}

func state(ts *testscript.TestScript) *scriptState {
	return ts.Value(stateKey{}).(*scriptState)
}

// usage fails the step unless it is positive and has n arguments.
func usage(ts *testscript.TestScript, neg bool, args []string, n int, form string) {
	if neg || len(args) != n {
		ts.Fatalf("usage: %s", form)
	}
}

func cmdRegistry(ts *testscript.TestScript, neg bool, args []string) {
	usage(ts, neg, args, 0, "registry")
	st := state(ts)
	if st.registry != "" {
		ts.Fatalf("registry: this script has one already, at %s", st.registry)
	}
	st.registry = testutil.Registry(st.t)
	ts.Setenv("REGISTRY", st.registry)
}

// ociRef parses oci://HOST/REPO:TAG, as accelc's flags take it.
func ociRef(ts *testscript.TestScript, ref string) name.Reference {
	rest, ok := strings.CutPrefix(ref, "oci://")
	if !ok {
		ts.Fatalf("%s: write oci://HOST/REPO:TAG", ref)
	}
	r, err := name.ParseReference(rest, name.Insecure)
	ts.Check(err)
	return r
}

func cmdPushLayer(ts *testscript.TestScript, neg bool, args []string) {
	usage(ts, neg, args, 2, "pushlayer oci://HOST/REPO:TAG FILE")
	layer, err := os.ReadFile(ts.MkAbs(args[1]))
	ts.Check(err)
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, artifact.ConfigMediaType)
	img, err = mutate.Append(img, mutate.Addendum{Layer: static.NewLayer(layer, artifact.ContentMediaType)})
	ts.Check(err)
	ts.Check(remote.Write(ociRef(ts, args[0]), img))
}

// cmdPull writes what an artifact publishes into DIR: manifest.json and
// config.json as the registry serves them; annotations, the manifest's,
// one key=value a line; entries, the layer's names in its order (folders
// end in /); and layer.txtar, every file's name and bytes.
func cmdPull(ts *testscript.TestScript, neg bool, args []string) {
	usage(ts, neg, args, 2, "pull oci://HOST/REPO:TAG DIR")
	img, err := remote.Image(ociRef(ts, args[0]))
	ts.Check(err)
	manifest, err := img.RawManifest()
	ts.Check(err)
	config, err := img.RawConfigFile()
	ts.Check(err)
	m, err := img.Manifest()
	ts.Check(err)
	var annotations strings.Builder
	for _, k := range slices.Sorted(maps.Keys(m.Annotations)) {
		fmt.Fprintf(&annotations, "%s=%s\n", k, m.Annotations[k])
	}
	layers, err := img.Layers()
	ts.Check(err)
	if len(layers) != 1 {
		ts.Fatalf("%s: %d layers, want 1", args[0], len(layers))
	}
	rc, err := layers[0].Compressed()
	ts.Check(err)
	defer rc.Close()
	gz, err := gzip.NewReader(rc)
	ts.Check(err)
	tr := tar.NewReader(gz)
	var entries strings.Builder
	var files txtar.Archive
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		ts.Check(err)
		entries.WriteString(hdr.Name + "\n")
		body, err := io.ReadAll(tr)
		ts.Check(err)
		if hdr.Typeflag == tar.TypeReg {
			files.Files = append(files.Files, txtar.File{Name: hdr.Name, Data: body})
		}
	}
	dir := ts.MkAbs(args[1])
	ts.Check(os.MkdirAll(dir, 0o755))
	for file, data := range map[string][]byte{
		"manifest.json": manifest,
		"config.json":   config,
		"annotations":   []byte(annotations.String()),
		"entries":       []byte(entries.String()),
		"layer.txtar":   txtar.Format(&files),
	} {
		ts.Check(os.WriteFile(filepath.Join(dir, file), data, 0o644))
	}
}

func cmdDigest(ts *testscript.TestScript, neg bool, args []string) {
	usage(ts, neg, args, 2, "digest VAR oci://HOST/REPO:TAG")
	desc, err := remote.Head(ociRef(ts, args[1]))
	ts.Check(err)
	ts.Setenv(args[0], desc.Digest.String())
}

// cmdContentDigest sets VAR to the content digest of the tree render
// wrote into DIR (artifact.ContentDigest of the files push packs), and
// VAR_SHORT to it as accelc status prints it.
func cmdContentDigest(ts *testscript.TestScript, neg bool, args []string) {
	usage(ts, neg, args, 2, "contentdigest VAR DIR")
	dir := ts.MkAbs(args[1])
	paths, _, err := render.RenderedFiles(dir)
	ts.Check(err)
	files := map[string][]byte{}
	for _, p := range paths {
		files[p], err = os.ReadFile(filepath.Join(dir, filepath.FromSlash(p)))
		ts.Check(err)
	}
	d := artifact.ContentDigest(files)
	ts.Setenv(args[0], d)
	ts.Setenv(args[0]+"_SHORT", d[:len("sha256:")+12])
}

func cmdRepositories(ts *testscript.TestScript, neg bool, args []string) {
	usage(ts, neg, args, 0, "repositories")
	st := state(ts)
	if st.registry == "" {
		ts.Fatalf("repositories: start the registry first")
	}
	resp, err := http.Get("http://" + st.registry + "/v2/_catalog")
	ts.Check(err)
	defer resp.Body.Close()
	var cat struct{ Repositories []string }
	ts.Check(json.NewDecoder(resp.Body).Decode(&cat))
	for _, r := range cat.Repositories {
		fmt.Fprintln(ts.Stdout(), r)
	}
}

func cmdTgz(ts *testscript.TestScript, neg bool, args []string) {
	usage(ts, neg, args, 2, "tgz OUT DIR")
	root := ts.MkAbs(args[1])
	var buf bytes.Buffer
	gw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gw)
	ts.Check(filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		hdr := &tar.Header{Typeflag: tar.TypeReg, Name: filepath.ToSlash(rel), Mode: 0o644, Size: int64(len(data))}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		_, err = tw.Write(data)
		return err
	}))
	ts.Check(tw.Close())
	ts.Check(gw.Close())
	ts.Check(os.WriteFile(ts.MkAbs(args[0]), buf.Bytes(), 0o644))
}

// size parses 64KiB, 1TiB.
func size(ts *testscript.TestScript, s string) int64 {
	q, err := resource.ParseQuantity(strings.TrimSuffix(s, "B"))
	ts.Check(err)
	return q.Value()
}

func cmdZeros(ts *testscript.TestScript, neg bool, args []string) {
	usage(ts, neg, args, 3, "zeros DIR N SIZE")
	dir := ts.MkAbs(args[0])
	n, err := strconv.Atoi(args[1])
	ts.Check(err)
	zeros := make([]byte, size(ts, args[2]))
	ts.Check(os.MkdirAll(dir, 0o755))
	for i := range n {
		ts.Check(os.WriteFile(filepath.Join(dir, fmt.Sprintf("zero-%02d.yaml", i)), zeros, 0o644))
	}
}

func cmdSparse(ts *testscript.TestScript, neg bool, args []string) {
	usage(ts, neg, args, 3, "sparse OUT NAME SIZE")
	layer := testutil.SparseLayer(state(ts).t, args[1], size(ts, args[2]))
	ts.Check(os.WriteFile(ts.MkAbs(args[0]), layer, 0o644))
}

func cmdBytes(ts *testscript.TestScript, neg bool, args []string) {
	usage(ts, neg, args, 2, "bytes FILE TEXT")
	unquote := func(s string) string {
		u, err := strconv.Unquote(`"` + s + `"`)
		ts.Check(err)
		return u
	}
	file := ts.MkAbs(unquote(args[0]))
	ts.Check(os.MkdirAll(filepath.Dir(file), 0o755))
	ts.Check(os.WriteFile(file, []byte(unquote(args[1])), 0o644))
}

func cmdReplace(ts *testscript.TestScript, neg bool, args []string) {
	usage(ts, neg, args, 3, "replace FILE OLD NEW")
	file := ts.MkAbs(args[0])
	data, err := os.ReadFile(file)
	ts.Check(err)
	if !bytes.Contains(data, []byte(args[1])) {
		ts.Fatalf("replace: %s does not hold %q", args[0], args[1])
	}
	ts.Check(os.WriteFile(file, bytes.Replace(data, []byte(args[1]), []byte(args[2]), 1), 0o644))
}

// editSnapshot reads the snapshot file, lets edit change it, and writes it
// back as accelc writes snapshots.
func editSnapshot(ts *testscript.TestScript, file string, edit func(*inventory.Snapshot)) {
	file = ts.MkAbs(file)
	snap, err := inventory.ReadSnapshot(file)
	ts.Check(err)
	if snap.Source == nil {
		snap.Source = &inventory.Source{}
	}
	edit(snap)
	var buf bytes.Buffer
	ts.Check(snap.Write(&buf))
	ts.Check(os.WriteFile(file, buf.Bytes(), 0o644))
}

func cmdInUse(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 3 {
		ts.Fatalf("usage: inuse FILE NODE NAMESPACE=N...")
	}
	byNamespace := map[string]int{}
	for _, kv := range args[2:] {
		ns, n, ok := strings.Cut(kv, "=")
		count, err := strconv.Atoi(n)
		if !ok || err != nil {
			ts.Fatalf("inuse: %s: write NAMESPACE=N", kv)
		}
		byNamespace[ns] = count
	}
	editSnapshot(ts, args[0], func(snap *inventory.Snapshot) {
		snap.Source.TakenAt = time.Now().UTC()
		snap.Source.PodsCounted = true
		for i := range snap.Nodes {
			if snap.Nodes[i].Metadata.Name == args[1] {
				inventory.SetInUse(&snap.Nodes[i], byNamespace)
				return
			}
		}
		ts.Fatalf("inuse: %s has no node %s", args[0], args[1])
	})
}

func cmdTaken(ts *testscript.TestScript, neg bool, args []string) {
	usage(ts, neg, args, 3, "taken FILE AGE CLUSTER")
	age, err := time.ParseDuration(args[1])
	ts.Check(err)
	editSnapshot(ts, args[0], func(snap *inventory.Snapshot) {
		snap.Source.TakenAt = time.Now().UTC().Add(-age)
		snap.Source.Cluster = args[2]
	})
}

func cmdAPIServer(ts *testscript.TestScript, neg bool, args []string) {
	usage(ts, neg, args, 0, "apiserver")
	st := state(ts)
	if st.cp != nil {
		ts.Fatalf("apiserver: this script has one already, at %s", st.cp.URL())
	}
	st.cp = controlplane.Start(st.t)
	// The namespaces cluster.excludedNamespaces names by default, as a
	// cluster where Gatekeeper and the GPU Operator run has them: a live
	// read lists the cluster's namespaces, and vet and render refuse an
	// excluded name the cluster lacks.
	for _, ns := range []string{"gatekeeper-system", "gpu-operator", "nvidia-gpu-operator"} {
		_, err := kube(ts).CoreV1().Namespaces().Create(st.t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
		ts.Check(err)
	}
	ts.Setenv("APISERVER", st.cp.URL())
	ts.Setenv("ADMIN_KUBECONFIG", st.cp.Kubeconfig())
}

func kube(ts *testscript.TestScript) *kubernetes.Clientset {
	st := state(ts)
	if st.cp == nil {
		ts.Fatalf("start the apiserver first")
	}
	cs, err := kubernetes.NewForConfig(st.cp.RESTConfig())
	ts.Check(err)
	return cs
}

func cmdKubeNodes(ts *testscript.TestScript, neg bool, args []string) {
	usage(ts, neg, args, 1, "kube-nodes FILE")
	cs := kube(ts)
	ctx := state(ts).t.Context()
	snap, err := inventory.ReadSnapshot(ts.MkAbs(args[0]))
	ts.Check(err)
	for _, raw := range snap.Nodes {
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: raw.Metadata.Name, Labels: raw.Metadata.Labels}}
		created, err := cs.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{})
		ts.Check(err)
		created.Status.Capacity = corev1.ResourceList{}
		for k, v := range raw.Status.Capacity {
			q, err := resource.ParseQuantity(v)
			ts.Check(err)
			created.Status.Capacity[corev1.ResourceName(k)] = q
		}
		created.Status.Allocatable = created.Status.Capacity
		created.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}
		_, err = cs.CoreV1().Nodes().UpdateStatus(ctx, created, metav1.UpdateOptions{})
		ts.Check(err)
	}
}

// cmdKubeSlices creates a list's ResourceSlices with the typed client,
// every attribute as the file has it: what a DRA driver publishes.
func cmdKubeSlices(ts *testscript.TestScript, neg bool, args []string) {
	usage(ts, neg, args, 1, "kube-slices FILE")
	cs := kube(ts)
	data, err := os.ReadFile(ts.MkAbs(args[0]))
	ts.Check(err)
	var list struct {
		Items []json.RawMessage `json:"items"`
	}
	ts.Check(yaml.Unmarshal(data, &list))
	for _, raw := range list.Items {
		var s resourcev1.ResourceSlice
		ts.Check(json.Unmarshal(raw, &s))
		if s.Kind != "ResourceSlice" {
			continue
		}
		_, err := cs.ResourceV1().ResourceSlices().Create(state(ts).t.Context(), &s, metav1.CreateOptions{})
		ts.Check(err)
	}
}

func cmdKubePod(ts *testscript.TestScript, neg bool, args []string) {
	const form = "kube-pod NAMESPACE/NAME NODE RESOURCE=N"
	usage(ts, neg, args, 3, form)
	ns, podName, nameOK := strings.Cut(args[0], "/")
	res, n, limitOK := strings.Cut(args[2], "=")
	if !nameOK || !limitOK {
		ts.Fatalf("usage: %s", form)
	}
	q, err := resource.ParseQuantity(n)
	ts.Check(err)
	_, err = kube(ts).CoreV1().Pods(ns).Create(state(ts).t.Context(), &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: podName},
		Spec: corev1.PodSpec{NodeName: args[1], Containers: []corev1.Container{{Name: "app", Image: "app",
			Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceName(res): q}}}}},
	}, metav1.CreateOptions{})
	ts.Check(err)
}

func cmdKubeUser(ts *testscript.TestScript, neg bool, args []string) {
	usage(ts, neg, args, 2, "kube-user NAME FILE")
	st := state(ts)
	if st.cp == nil {
		ts.Fatalf("kube-user: start the apiserver first")
	}
	data, err := os.ReadFile(st.cp.UserKubeconfig(st.t, args[0]))
	ts.Check(err)
	ts.Check(os.WriteFile(ts.MkAbs(args[1]), data, 0o600))
}

// cmdKubeApply creates every object of the files (YAML, one or more
// documents; a folder stands for its *.yaml files but kustomization.yaml),
// CustomResourceDefinitions first, each waited for until the API server
// serves it. An object that exists already is kept; where the document has
// a status, it is written through the status subresource, as the
// controller that owns the object would: a document may hold only an
// object's apiVersion, kind, name and status. An owner reference without
// a uid gets the uid of the object it names, made before it (as a
// controller writes it). With -env, $VAR and ${VAR} in the files are
// replaced by the script's variables first.
func cmdKubeApply(ts *testscript.TestScript, neg bool, args []string) {
	const form = "kube-apply [-env] FILE|DIR..."
	expand := len(args) > 0 && args[0] == "-env"
	if expand {
		args = args[1:]
	}
	if neg || len(args) == 0 {
		ts.Fatalf("usage: %s", form)
	}
	st := state(ts)
	if st.cp == nil {
		ts.Fatalf("kube-apply: start the apiserver first")
	}
	ctx := st.t.Context()
	var files []string
	for _, a := range args {
		path := ts.MkAbs(a)
		info, err := os.Stat(path)
		ts.Check(err)
		if !info.IsDir() {
			files = append(files, path)
			continue
		}
		entries, err := os.ReadDir(path)
		ts.Check(err)
		for _, e := range entries {
			if !e.IsDir() && strings.HasSuffix(e.Name(), ".yaml") && e.Name() != "kustomization.yaml" {
				files = append(files, filepath.Join(path, e.Name()))
			}
		}
	}
	var crds, objs []*unstructured.Unstructured
	for _, f := range files {
		data, err := os.ReadFile(f)
		ts.Check(err)
		if expand {
			data = []byte(os.Expand(string(data), ts.Getenv))
		}
		dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
		for {
			var doc map[string]any
			if err := dec.Decode(&doc); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				ts.Fatalf("%s: %v", f, err)
			}
			if len(doc) == 0 {
				continue
			}
			u := &unstructured.Unstructured{Object: doc}
			if u.GetKind() == "CustomResourceDefinition" {
				crds = append(crds, u)
			} else {
				objs = append(objs, u)
			}
		}
	}
	cfg := st.cp.RESTConfig()
	dyn, err := dynamic.NewForConfig(cfg)
	ts.Check(err)
	crdAPI := dyn.Resource(schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"})
	for _, crd := range crds {
		if _, err := crdAPI.Create(ctx, crd, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			ts.Fatalf("creating CustomResourceDefinition %s: %v", crd.GetName(), err)
		}
	}
	for _, crd := range crds {
		waitFor(ts, "CustomResourceDefinition "+crd.GetName()+" established", func() bool {
			got, err := crdAPI.Get(ctx, crd.GetName(), metav1.GetOptions{})
			ts.Check(err)
			conds, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
			for _, c := range conds {
				if c, ok := c.(map[string]any); ok && c["type"] == "Established" && c["status"] == "True" {
					return true
				}
			}
			return false
		})
	}
	disc, err := discovery.NewDiscoveryClientForConfig(cfg)
	ts.Check(err)
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disc))
	made := map[string]k8stypes.UID{}
	for _, obj := range objs {
		gvk := obj.GroupVersionKind()
		var mapping *meta.RESTMapping
		// Discovery serves a new CRD's resource a moment after it is
		// established.
		waitFor(ts, gvk.String()+" served", func() bool {
			mapping, err = mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
			if meta.IsNoMatchError(err) {
				mapper.Reset()
				return false
			}
			ts.Check(err)
			return true
		})
		var api dynamic.ResourceInterface = dyn.Resource(mapping.Resource)
		if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
			api = dyn.Resource(mapping.Resource).Namespace(obj.GetNamespace())
		}
		refs := obj.GetOwnerReferences()
		for i, r := range refs {
			if r.UID == "" {
				uid, ok := made[ownerKey(r.Kind, obj.GetNamespace(), r.Name)]
				if !ok {
					ts.Fatalf("%s %s: its owner %s %s is not made before it", gvk.Kind, obj.GetName(), r.Kind, r.Name)
				}
				refs[i].UID = uid
			}
		}
		if len(refs) > 0 {
			obj.SetOwnerReferences(refs)
		}
		status, hasStatus := obj.Object["status"]
		got, err := api.Create(ctx, obj, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			got, err = api.Get(ctx, obj.GetName(), metav1.GetOptions{})
		}
		if err != nil {
			ts.Fatalf("creating %s %s: %v", gvk.Kind, obj.GetName(), err)
		}
		made[ownerKey(gvk.Kind, obj.GetNamespace(), obj.GetName())] = got.GetUID()
		if hasStatus {
			got.Object["status"] = status
			if _, err := api.UpdateStatus(ctx, got, metav1.UpdateOptions{}); err != nil {
				ts.Fatalf("writing the status of %s %s: %v", gvk.Kind, obj.GetName(), err)
			}
		}
	}
}

func ownerKey(kind, namespace, name string) string {
	return kind + " " + namespace + "/" + name
}

// cmdWorkloadItems prints a snapshot's items after its nodes and
// ResourceSlices, in its order, as YAML documents: what the cluster runs.
// What the API server makes anew each run is put in words: each uid of an
// object there as "uid of <Kind> <namespace>/<name>", wherever it is (an
// owner reference's, so it shows which object it names; a Job's
// selector's), each creationTimestamp as "<time>".
func cmdWorkloadItems(ts *testscript.TestScript, neg bool, args []string) {
	usage(ts, neg, args, 1, "workload-items FILE")
	data, err := os.ReadFile(ts.MkAbs(args[0]))
	ts.Check(err)
	var list struct {
		Items []map[string]any `json:"items"`
	}
	ts.Check(json.Unmarshal(data, &list))
	var items []*unstructured.Unstructured
	uids := map[string]string{}
	for _, it := range list.Items {
		u := &unstructured.Unstructured{Object: it}
		if u.GetKind() == "Node" || u.GetKind() == "ResourceSlice" {
			continue
		}
		items = append(items, u)
		if uid := string(u.GetUID()); uid != "" {
			uids[uid] = "uid of " + ownerKey(u.GetKind(), u.GetNamespace(), u.GetName())
		}
	}
	// Every uid, wherever it is: a Job's selector and labels hold its own.
	var mask func(v any) any
	mask = func(v any) any {
		switch v := v.(type) {
		case string:
			if n, ok := uids[v]; ok {
				return n
			}
		case map[string]any:
			for k, e := range v {
				v[k] = mask(e)
			}
		case []any:
			for i, e := range v {
				v[i] = mask(e)
			}
		}
		return v
	}
	for i, u := range items {
		mask(u.Object)
		if md, ok := u.Object["metadata"].(map[string]any); ok {
			if _, ok := md["creationTimestamp"]; ok {
				md["creationTimestamp"] = "<time>"
			}
		}
		out, err := yaml.Marshal(u.Object)
		ts.Check(err)
		if i > 0 {
			fmt.Fprintln(ts.Stdout(), "---")
		}
		fmt.Fprint(ts.Stdout(), string(out))
	}
}

// waitFor polls done for up to 30 seconds.
func waitFor(ts *testscript.TestScript, what string, done func() bool) {
	for deadline := time.Now().Add(30 * time.Second); !done(); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			ts.Fatalf("timed out waiting for %s", what)
		}
	}
}

// cmdGitRev sets VAR to the revision of the Git checkout DIR is in, as
// render and push write it (<branch>@sha1:<commit>), and VAR_SHORT to it as
// accelc status prints it.
func cmdGitRev(ts *testscript.TestScript, neg bool, args []string) {
	usage(ts, neg, args, 2, "gitrev VAR DIR")
	rev := accelc.Checkout(ts.MkAbs(args[1])).Revision
	branch, commit, ok := strings.Cut(rev, "@sha1:")
	if !ok || len(commit) < 12 {
		ts.Fatalf("gitrev: %s is not in a Git checkout with a commit", args[1])
	}
	ts.Setenv(args[0], rev)
	ts.Setenv(args[0]+"_SHORT", branch+"@sha1:"+commit[:12])
}
