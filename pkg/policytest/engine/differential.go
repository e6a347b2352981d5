package engine

// Generated pods for judging with another judge than the Rego (the API
// server's ValidatingAdmissionPolicy, for one), and the Rego's verdict on
// a pod as the API server stored it.

import (
	"context"
	"math/rand/v2"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// GeneratedPods are n pod creations as Run draws them for seed — half
// starting as a team's legitimate pod, the rest drawn freely, with each
// hostile feature's odds — and legitimate ones as its check of false
// denials writes them, alternately; of a workload, the pods its
// controllers make; claims are left out.
// Each is written as a user or controller writes it, before any
// mutation, with the user who makes it.
func (e *EscapeCheck) GeneratedPods(seed uint64, n int) []Request {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	var out []Request
	for i := 0; len(out) < n && i < 50*n; i++ {
		obj := e.generate(rng, i)
		if i%2 == 1 {
			var ok bool
			if obj, ok = e.legitimateObject(rng, i); !ok {
				continue
			}
		}
		if obj["kind"] == "Pod" {
			out = append(out, Request{Object: &unstructured.Unstructured{Object: obj}, User: e.requester(rng, obj)})
			continue
		}
		// A workload: the pods its controllers make of it (a Job's
		// by the Job controller, owned by the Job).
		w := &unstructured.Unstructured{Object: obj}
		for _, p := range ControllerPods(w) {
			out = append(out, e.controllerRequest(w, p.Pod))
		}
	}
	return out
}

// JudgeStored is the Rego's verdict on a pod's creation whose object is
// as the API server's admission chain leaves it (mutated, defaulted):
// Gatekeeper's validating webhook's, the violations' messages, none if
// admitted. Kueue's webhook has run, or not, as the object shows.
func (e *EscapeCheck) JudgeStored(ctx context.Context, req Request) ([]string, error) {
	d, err := e.mutator.Validate(ctx, e.reviewer, Request{Object: req.Object.DeepCopy(), User: req.User, KueueSkipped: true})
	return d.Messages, err
}
