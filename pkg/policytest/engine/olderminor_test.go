package engine_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/accelc/accelc/internal/odh"
	"github.com/accelc/accelc/pkg/accelc"
	"github.com/accelc/accelc/pkg/policytest"
	"github.com/accelc/accelc/pkg/policytest/engine"
	"github.com/accelc/accelc/pkg/render"
)

// olderMinor is the Kubernetes minor, without MutatingAdmissionPolicy,
// that the examples are rendered for beside their default (1.36); the
// end-to-end suite plays the same on a live 1.34 (make e2e-older).
const olderMinor = "1.34"

// TestOlderMinorVerdicts judges every example's admission fixtures twice:
// rendered for 1.36 (MutatingAdmissionPolicies label what names its
// profile by annotation), and for 1.34, where no such policy is rendered
// and a Gatekeeper mutator labels what joins the profile's LocalQueue.
// On 1.34 a tree with accelc's webhook (the catalog service's) is played
// as 1.36's, the fixtures as written; without it the workloads that name
// their profile by annotation only and are mutated (the ODH workloads)
// carry the queue label Open Data Hub's webhook writes from their
// HardwareProfile (internal/odh); the hostile fixtures are played as
// written. Every case must be admitted on both or
// refused on both, and a refusal on 1.34 must name every policy 1.36's
// did.
func TestOlderMinorVerdicts(t *testing.T) {
	src := "../../../examples/clusters"
	older := t.TempDir()
	require.NoError(t, os.CopyFS(older, os.DirFS(src)))
	for _, name := range examples {
		t.Run(name, func(t *testing.T) {
			require.NoError(t, os.WriteFile(filepath.Join(older, name, "kubernetes.cue"),
				[]byte("package cluster\n\ncluster: kubernetesVersion: \""+olderMinor+"\"\n"), 0o644))
			newer := caseVerdicts(t, filepath.Join(src, name), false)
			old := caseVerdicts(t, filepath.Join(older, name), true)
			same, differ := 0, 0
			for _, c := range slices.Sorted(func(yield func(string) bool) {
				for c := range newer {
					if !yield(c) {
						return
					}
				}
			}) {
				n, o := newer[c], old[c]
				switch {
				case (len(n) == 0) != (len(o) == 0):
					differ++
					if why, ok := differs(name, c); ok {
						t.Logf("%s: 1.36 %s, %s %s: expected (%s)", c, verdictWords(n), olderMinor, verdictWords(o), why)
						continue
					}
					t.Errorf("%s: 1.36 %s, but %s %s", c, verdictWords(n), olderMinor, verdictWords(o))
				case !subset(n, o) && !slices.Equal(n, []string{"?"}):
					// ("?": 1.36 refused it before Gatekeeper judged it, as
					// the API server refuses a pod Kueue gates that names a
					// node; 1.34, whose mutators give no queue label, judges
					// it.)
					t.Errorf("%s: 1.36 refused it by %v, %s by %v only", c, n, olderMinor, o)
				default:
					same++
					if _, ok := differs(name, c); ok {
						t.Errorf("%s: listed in internal/odh as differing, but both %s it: take it out", c, verdictWords(n))
					}
					if !slices.Equal(n, o) {
						t.Logf("%s: refused on both, by %v on 1.36 and %v on %s", c, n, o, olderMinor)
					}
				}
			}
			t.Logf("%d cases: %d the same verdict on 1.36 and %s, %d not", len(newer), same, olderMinor, differ)
		})
	}
}

// caseVerdicts judges each case of the cluster in dir through its
// enforced tree, as accelc test does, and returns the policies that
// refused it (none: admitted). odhForm gives the mutated cases that name
// their profile by annotation only the queue label ODH writes.
func caseVerdicts(t *testing.T, dir string, odhForm bool) map[string][]string {
	t.Helper()
	ctx := context.Background()
	res, err := accelc.Cluster(ctx, dir, accelc.Options{Stages: accelc.Rendered})
	require.NoError(t, err)
	tree, err := res.EnforcedTree()
	require.NoError(t, err)
	cases, err := policytest.ReadCases(dir)
	require.NoError(t, err)
	inputs, err := policytest.ReadCaseInputs(dir, cases)
	require.NoError(t, err)
	if filepath.Base(dir) == "hetero-prod" {
		inputs = append(inputs, queueCases...)
	}
	if _, webhook := tree[render.AdmissionMutationsFile]; odhForm && !webhook {
		// Without accelc's webhook the label comes from ODH's queue
		// label; with it, the fixtures are played as written, as on 1.36.
		queues := map[string]string{}
		for p, data := range tree {
			if !strings.HasPrefix(p, "profiles/hardwareprofile-") {
				continue
			}
			var hwp unstructured.Unstructured
			require.NoError(t, yaml.Unmarshal(data, &hwp.Object))
			queues[hwp.GetName()], _, _ = unstructured.NestedString(hwp.Object, "spec", "scheduling", "kueue", "localQueueName")
		}
		label := res.Model.Cluster.LabelPrefix + "/profile"
		for i := range inputs {
			if !inputs[i].Mutate || inputs[i].OldObjectData != nil {
				continue
			}
			var obj unstructured.Unstructured
			require.NoError(t, yaml.Unmarshal(inputs[i].ObjectData, &obj.Object))
			if odh.QueueLabelled(&obj, label, func(p string) string { return queues[p] }) {
				inputs[i].ObjectData, err = yaml.Marshal(obj.Object)
				require.NoError(t, err)
			}
		}
	}
	nodes, err := policytest.Nodes(res.Model.Cluster.TypeLabel(), res.NodeTypes())
	require.NoError(t, err)
	j, err := engine.NewCaseJudge(ctx, tree, nodes, inputs)
	require.NoError(t, err)
	out := map[string][]string{}
	for _, in := range inputs {
		d, _, err := j.Judge(ctx, in)
		require.NoError(t, err, "case %s", in.Name)
		out[in.Name] = refusingPolicies(d.Messages)
		if in.Mutate || in.OldObjectData != nil {
			continue
		}
		// A case judged as written reaches Gatekeeper's validation
		// mutated on a live cluster: that verdict is compared too.
		in.Mutate = true
		d, _, err = j.Judge(ctx, in)
		require.NoError(t, err, "case %s mutated", in.Name)
		out[mutatedCase+in.Name] = refusingPolicies(d.Messages)
	}
	return out
}

// mutatedCase prefixes, among caseVerdicts, the verdict of a case judged
// as written once mutated as the API server mutates it.
const mutatedCase = "mutated:"

// differs is why a case's verdict before 1.36 is not 1.36's, when one of
// odh's maps names it (c is a caseVerdicts key of the example).
func differs(example, c string) (string, bool) {
	if name, ok := strings.CutPrefix(c, mutatedCase); ok {
		why, listed := odh.OlderMinorDiffersMutated[example+"/"+name]
		return why, listed
	}
	why, listed := odh.OlderMinorDiffers[example+"/"+c]
	return why, listed
}

// queueCases are what joins a profile's queue without being an ODH
// workload of it, played on hetero-prod (whose teams queue by profile):
// the differences odh.OlderMinorDiffers names for them.
var queueCases = []policytest.CaseInput{
	{
		Case: policytest.Case{Name: "older-cpu-job-in-gpu-queue", Mutate: true},
		ObjectData: []byte(`apiVersion: batch/v1
kind: Job
metadata: {name: cpu-only, namespace: ml-research, labels: {kueue.x-k8s.io/queue-name: premium-gpu}}
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - {name: main, image: registry.example/prep:1, resources: {requests: {cpu: 100m}}}
`),
	},
	{
		Case: policytest.Case{Name: "older-queue-label-only", Mutate: true},
		ObjectData: []byte(`apiVersion: v1
kind: Pod
metadata: {name: queue-only, namespace: ml-research, labels: {kueue.x-k8s.io/queue-name: premium-gpu}}
spec:
  containers:
  - {name: main, image: registry.example/train:1, resources: {limits: {nvidia.com/gpu: 1}}}
`),
	},
}

var policyOfMessage = regexp.MustCompile(`^(?:\[Implied by [^\]]+\] )?([a-z]+): `)

// refusingPolicies are the policies the messages come from, sorted, once
// each.
func refusingPolicies(msgs []string) []string {
	var out []string
	for _, m := range msgs {
		p := "?"
		if sm := policyOfMessage.FindStringSubmatch(m); sm != nil {
			p = sm[1]
		}
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}

func subset(a, b []string) bool {
	for _, x := range a {
		if !slices.Contains(b, x) {
			return false
		}
	}
	return true
}

func verdictWords(policies []string) string {
	if len(policies) == 0 {
		return "admitted it"
	}
	return "refused it by " + strings.Join(policies, ", ")
}
