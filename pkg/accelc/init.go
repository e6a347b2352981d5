package accelc

// accelc init: a new cluster directory written from the nodes of a
// cluster or a type named.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"text/template"

	"github.com/accelc/accelc/pkg/catalog"
	"github.com/accelc/accelc/pkg/inventory"
	"github.com/accelc/accelc/pkg/inventory/live"
	"github.com/accelc/accelc/pkg/policytest"
)

// DefaultInitType is the accelerator type `accelc init` starts a cluster
// with when it reads no live cluster and is given none.
const DefaultInitType = "nvidia-l40s-48gb"

// InitOptions choose what Init writes.
type InitOptions struct {
	// Name is the cluster's name; empty: the directory's base name, made
	// a DNS label.
	Name string
	// Type is the accelerator class of the cluster's one profile; empty:
	// the most common type among the live nodes, or DefaultInitType.
	Type string
	// Team is the one team, which gets a namespace of its own name;
	// empty: "research".
	Team string
	// Live reads the nodes of the kubeconfig context (LiveOptions) into
	// inventory.json instead of writing sample nodes.
	Live        bool
	LiveOptions live.Options
}

// InitResult says what Init wrote.
type InitResult struct {
	Dir     string
	Name    string
	Type    string
	Profile string
	Team    string
	// Nodes is the number of accelerator nodes of the inventory, Typed
	// those of Type; From says where they came from.
	Nodes, Typed int
	From         string
	// Labelling says, for a type no NodeFeatureRule labels (it has no PCI
	// id to match), how its nodes get the type label its profile selects
	// (catalog.Class.Labelling); Pinned are the nodes of the type init
	// pinned in cluster.nodes for that reason. Both empty for other types.
	Labelling string
	Pinned    []string
	// Files are the files written, relative to Dir, in order.
	Files []string
}

// ErrNotEmpty is returned by Init for a directory that already holds
// something: init never overwrites.
var ErrNotEmpty = errors.New("not empty")

// optionErr is an InitOptions field init cannot use: a UsageError.
func optionErr(format string, args ...any) error {
	return usage(fmt.Errorf(format, args...))
}

var dnsLabel = regexp.MustCompile(`[^a-z0-9-]+`)

// label makes s a DNS label: lower case, runs of other characters a
// dash, no dash at either end, at most 63 characters.
func label(s string) string {
	s = strings.Trim(dnsLabel.ReplaceAllString(strings.ToLower(s), "-"), "-")
	if len(s) > 63 {
		s = strings.Trim(s[:63], "-")
	}
	return s
}

// Init writes a new cluster directory that vet, render and test accept:
// cluster.cue with one profile of one accelerator type and one team,
// inventory.json (the live cluster's nodes, or sample nodes of the type),
// and admission/cases.yaml with a pod the policies admit and one they
// deny. It refuses a directory that exists and is not empty. The files
// are written into a temporary directory beside DIR and moved into place
// at once, so a failure leaves nothing behind.
func Init(ctx context.Context, dir string, opts InitOptions) (*InitResult, error) {
	if err := checkEmpty(dir); err != nil {
		return nil, err
	}
	cat, err := catalog.Builtin()
	if err != nil {
		return nil, err
	}
	res := &InitResult{Dir: dir, Name: opts.Name, Team: opts.Team}
	if res.Name == "" {
		abs, err := filepath.Abs(dir)
		if err != nil {
			return nil, err
		}
		res.Name = label(filepath.Base(abs))
		if res.Name == "" {
			res.Name = "cluster"
		}
	} else if label(res.Name) != res.Name {
		return nil, optionErr("--name %q: a cluster name is a DNS label (lower-case letters, digits, '-'), such as %q", res.Name, label(res.Name))
	}
	if res.Team == "" {
		res.Team = "research"
	} else if label(res.Team) != res.Team {
		return nil, optionErr("--team %q: a team name is a namespace name (lower-case letters, digits, '-'), such as %q", res.Team, label(res.Team))
	}
	if opts.Type != "" {
		if _, ok := cat.Get(opts.Type); !ok {
			return nil, optionErr("--type %s: unknown accelerator type; did you mean %s? (`accelc types` lists them)", opts.Type, strings.Join(cat.Closest(opts.Type, 3), ", "))
		}
	}

	var snap *inventory.Snapshot
	if opts.Live {
		if snap, err = live.Read(ctx, opts.LiveOptions); err != nil {
			return nil, &OutsideError{Err: err}
		}
		res.From = "cluster " + snap.Source.Cluster
	}
	res.Type = opts.Type
	perNode := 4
	if snap != nil {
		inv := snap.Classify(cat, inventory.Options{})
		counts := map[string]int{}
		for _, n := range inv.Nodes {
			if _, ok := cat.Get(n.AcceleratorType); ok {
				counts[n.AcceleratorType]++
			}
		}
		res.Nodes = len(inv.Nodes)
		if res.Type == "" {
			types := slices.Sorted(func(yield func(string) bool) {
				for t := range counts {
					if !yield(t) {
						return
					}
				}
			})
			sort.SliceStable(types, func(i, j int) bool { return counts[types[i]] > counts[types[j]] })
			if len(types) == 0 {
				return nil, fmt.Errorf("%s has no accelerator node of a type accelc knows (%d accelerator nodes, %d without): give --type (`accelc types` lists them), or leave out --live for sample nodes", res.From, len(inv.Nodes), inv.OtherNodes)
			}
			res.Type = types[0]
		}
		perNode = 0
		for _, n := range inv.Nodes {
			if n.AcceleratorType == res.Type {
				res.Typed++
				perNode = max(perNode, n.Allocatable)
			}
		}
		perNode = max(perNode, 1)
	} else {
		if res.Type == "" {
			res.Type = DefaultInitType
		}
		class, _ := cat.Get(res.Type)
		if snap, err = sampleSnapshot(cat, class, perNode); err != nil {
			return nil, err
		}
		res.From = "sample nodes"
		res.Nodes, res.Typed = 2, 2
	}
	class, _ := cat.Get(res.Type)
	if res.Labelling = class.Labelling(defaultTypeLabel); res.Labelling != "" {
		// Nothing rendered would give the nodes the type label: pin them,
		// so that what init writes schedules, and say what a real
		// cluster's nodes need.
		for _, n := range snap.Classify(cat, inventory.Options{}).Nodes {
			if v, _ := n.Label(defaultTypeLabel); n.AcceleratorType == res.Type && v != res.Type {
				res.Pinned = append(res.Pinned, n.Name)
			}
		}
		sort.Strings(res.Pinned)
	}
	res.Profile = label(class.Model)
	if res.Profile == "" {
		res.Profile = res.Type
	}

	files, err := initFiles(res, class, snap, perNode)
	if err != nil {
		return nil, err
	}
	parent := filepath.Dir(filepath.Clean(dir))
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(filepath.Clean(dir))+".init-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	for _, f := range files {
		p := filepath.Join(tmp, filepath.FromSlash(f.name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(p, f.data, 0o644); err != nil {
			return nil, err
		}
		res.Files = append(res.Files, f.name)
	}
	if err := os.Remove(dir); err != nil && !os.IsNotExist(err) {
		return nil, err
	}
	if err := os.Rename(tmp, dir); err != nil {
		return nil, err
	}
	return res, nil
}

// checkEmpty refuses a directory that holds anything, and a path that is
// not a directory.
func checkEmpty(dir string) error {
	fi, err := os.Stat(dir)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s: %w: it is a file; give a new or empty directory", dir, ErrNotEmpty)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	if len(entries) > 0 {
		var names []string
		for _, e := range entries[:min(len(entries), 3)] {
			names = append(names, e.Name())
		}
		if len(entries) > 3 {
			names = append(names, "…")
		}
		return fmt.Errorf("%s: %w (it holds %s): accelc init never overwrites; give a new or empty directory", dir, ErrNotEmpty, strings.Join(names, ", "))
	}
	return nil
}

// identifyingLabel is the label a sample node of class carries: the first
// of its identifying labels in the order feature discovery is trusted.
func identifyingLabel(class *catalog.Class) (key, value string, ok bool) {
	keys := make([]string, 0, len(class.IdentifiedBy))
	for k := range class.IdentifiedBy {
		keys = append(keys, k)
	}
	prefer := []string{"nvidia.com/gpu.product", "amd.com/gpu.product-name", "cloud.google.com/gke-accelerator", "node.kubernetes.io/instance-type"}
	rank := func(k string) int {
		if i := slices.Index(prefer, k); i >= 0 {
			return i
		}
		return len(prefer)
	}
	sort.Slice(keys, func(i, j int) bool {
		if rank(keys[i]) != rank(keys[j]) {
			return rank(keys[i]) < rank(keys[j])
		}
		return keys[i] < keys[j]
	})
	for _, k := range keys {
		if vs := class.IdentifiedBy[k]; len(vs) > 0 {
			return k, vs[0], true
		}
	}
	return "", "", false
}

// sampleSnapshot is two nodes of class with perNode devices each, tainted
// for its resource, and one node without accelerators. It checks that
// accelc classifies them as class.
func sampleSnapshot(cat *catalog.Catalog, class *catalog.Class, perNode int) (*inventory.Snapshot, error) {
	key, value, ok := identifyingLabel(class)
	resource := class.ResourceName
	if !ok {
		// A class its resource names (tenstorrent.com/n300) needs no
		// label: the sample nodes advertise that resource.
		if rs := namingResources(cat, class); len(rs) > 0 {
			resource, ok = rs[0], true
		}
	}
	if !ok {
		return nil, optionErr("--type %s: the catalog gives no label that identifies it, so init cannot write sample nodes: use --live, or another type", class.ID)
	}
	node := func(name string, gpus bool) inventory.RawNode {
		var n inventory.RawNode
		n.Metadata.Name = name
		n.Metadata.Labels = map[string]string{"kubernetes.io/hostname": name, "kubernetes.io/os": "linux"}
		n.Status.Capacity = map[string]string{"cpu": "32", "memory": "256Gi", "pods": "110"}
		if gpus {
			if key != "" {
				n.Metadata.Labels[key] = value
			}
			count := strconv.Itoa(perNode)
			if class.Vendor == "nvidia" {
				n.Metadata.Labels["nvidia.com/gpu.count"] = count
				// GPU Feature Discovery gives memory in MiB.
				n.Metadata.Labels["nvidia.com/gpu.memory"] = strconv.Itoa(int(math.Floor(float64(class.MemoryGB) * 1e9 / (1 << 20))))
			}
			n.Status.Capacity[resource] = count
			n.Spec.Taints = []inventory.Taint{{Key: resource, Effect: "NoSchedule"}}
		}
		n.Status.Allocatable = n.Status.Capacity
		n.Status.Conditions = []inventory.Condition{{Type: "Ready", Status: "True"}}
		return n
	}
	snap := &inventory.Snapshot{Nodes: []inventory.RawNode{
		node("cpu-node-01", false),
		node("gpu-node-01", true),
		node("gpu-node-02", true),
	}}
	inv := snap.Classify(cat, inventory.Options{})
	if len(inv.Nodes) != 2 || inv.Nodes[0].AcceleratorType != class.ID || inv.Nodes[1].AcceleratorType != class.ID {
		got := "no accelerator nodes"
		if len(inv.Nodes) > 0 {
			got = inv.Nodes[0].AcceleratorType
		}
		return nil, optionErr("--type %s: sample nodes labelled %s=%s classify as %s, not as the type: use --live, or another type", class.ID, key, value, got)
	}
	return snap, nil
}

type initFile struct {
	name string
	data []byte
}

var clusterTemplate = template.Must(template.New("cluster.cue").Parse(`// {{.Name}}: a cluster written by ` + "`accelc init`" + `. Change it and run
//
//	accelc vet {{.Dir}} && accelc render {{.Dir}} && accelc test {{.Dir}}
//
// docs/first-cluster.md walks through these files; docs/configuration.md
// lists every field.
package cluster

cluster: {
	name: "{{.Name}}"
	// dryrun: Gatekeeper's audit reports violations and no pod is refused.
	// Move to "warn", then "deny", once ` + "`accelc audit`" + ` shows what
	// would be refused (docs/rollout.md).
	enforcement: "dryrun"
{{- if .Pinned}}
	// {{.Type}} has no PCI id a NodeFeatureRule can match, so nothing
	// accelc renders gives its nodes the type label the profile selects:
	// they are pinned here. On a real cluster pin yours, or set
	// accelerator.opendatahub.io/type={{.Type}} through their node pool
	// (` + "`accelc vet`" + ` warns about nodes that have neither).
	nodes: {
{{- range .Pinned}}
		"{{.}}": acceleratorType: "{{$.Type}}"
{{- end}}
	}
{{- end}}
}

// The one hardware profile: what a pod asks for with the label
// accelerator.opendatahub.io/profile: {{.Profile}} (or Open Data Hub's
// annotation opendatahub.io/hardware-profile-name). ` + "`accelc types`" + ` lists
// the accelerator types accelc knows.
profiles: "{{.Profile}}": {
	displayName: "{{.DisplayName}}"
	description: "{{.Description}}"
	acceleratorTypes: ["{{.Type}}"]
	gpu: {min: 1, default: 1, max: {{.Max}}}
	tolerations: [{key: "{{.Resource}}", operator: "Exists", effect: "NoSchedule"}]
}

// The one team: pods in its namespaces may use the profile's type.
teams: "{{.Team}}": {
	displayName: "{{.TeamDisplay}}"
	namespaces: ["{{.Team}}"]
	acceleratorTypes: ["{{.Type}}"]
}
`))

var casesTemplate = template.Must(template.New("cases.yaml").Parse(`# accelc test runs every case through the rendered policies with
# Gatekeeper's engine; docs/admission-cases.md is the reference.
cases:
# A pod of team {{.Team}} naming the profile by its label, mutated as the
# cluster's webhooks would (node affinity, tolerations), then admitted.
- name: profile-pod
  object: pods/profile-pod.yaml
  deny: []
  mutate: true
# A pod asking for an accelerator without naming a profile: denied.
- name: no-profile
  object: pods/no-profile.yaml
  deny: [profilerequired]
  message: names no hardware profile
`))

var podTemplate = template.Must(template.New("pod.yaml").Parse(`apiVersion: v1
kind: Pod
metadata:
  name: {{.PodName}}
  namespace: {{.Team}}
{{- if .Labelled}}
  labels:
    accelerator.opendatahub.io/profile: {{.Profile}}
{{- end}}
spec:
  containers:
  - name: main
    image: quay.io/example/app:1
    resources:
      limits:
        {{.Resource}}: 1
`))

// defaultTypeLabel is the type label of a cluster init writes, which
// leaves cluster.labelPrefix at its default.
const defaultTypeLabel = "accelerator.opendatahub.io/type"

func initFiles(res *InitResult, class *catalog.Class, snap *inventory.Snapshot, perNode int) ([]initFile, error) {
	data := map[string]any{
		"Pinned":      res.Pinned,
		"Labelling":   res.Labelling,
		"Name":        res.Name,
		"Dir":         filepath.ToSlash(res.Dir),
		"Profile":     res.Profile,
		"DisplayName": class.DisplayName,
		"Description": fmt.Sprintf("1 to %d %s per pod.", perNode, class.DisplayName),
		"Type":        res.Type,
		"Max":         perNode,
		"Resource":    class.ResourceName,
		"Team":        res.Team,
		"TeamDisplay": strings.ToUpper(res.Team[:1]) + res.Team[1:],
	}
	if perNode == 1 {
		data["Description"] = "One " + class.DisplayName + " per pod."
	}
	exec := func(t *template.Template, extra map[string]any) ([]byte, error) {
		m := map[string]any{}
		for k, v := range data {
			m[k] = v
		}
		for k, v := range extra {
			m[k] = v
		}
		var buf bytes.Buffer
		err := t.Execute(&buf, m)
		return buf.Bytes(), err
	}
	var files []initFile
	add := func(name string, b []byte, err error) error {
		if err == nil {
			files = append(files, initFile{name, b})
		}
		return err
	}
	var inv bytes.Buffer
	if err := snap.Write(&inv); err != nil {
		return nil, err
	}
	cue, err := exec(clusterTemplate, nil)
	if err := add("cluster.cue", cue, err); err != nil {
		return nil, err
	}
	if err := add("inventory.json", inv.Bytes(), nil); err != nil {
		return nil, err
	}
	cases, err := exec(casesTemplate, nil)
	if err := add(policytest.CasesFile, cases, err); err != nil {
		return nil, err
	}
	pod, err := exec(podTemplate, map[string]any{"PodName": "profile-pod", "Labelled": true})
	if err := add("admission/pods/profile-pod.yaml", pod, err); err != nil {
		return nil, err
	}
	bare, err := exec(podTemplate, map[string]any{"PodName": "no-profile", "Labelled": false})
	if err := add("admission/pods/no-profile.yaml", bare, err); err != nil {
		return nil, err
	}
	return files, nil
}
