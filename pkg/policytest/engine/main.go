package engine

// The accelc-policytest engine's entry point: requests read, served and
// answered.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/accelc/accelc/pkg/dra"
	"github.com/accelc/accelc/pkg/policytest"
	"github.com/accelc/accelc/pkg/render"
)

// Command is accelc-policytest's main: Main on the process's arguments
// and streams, with what the libraries print to stdout sent to stderr,
// which accelc copies to its own, so that only the answer is on stdout.
func Command() int {
	args := os.Args[1:]
	if st, err := os.Stdin.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 && len(args) == 0 {
		// Started by hand: say what it is rather than wait for a request.
		args = []string{"-h"}
	}
	stdout := os.Stdout
	os.Stdout = os.Stderr
	return Main(args, os.Stdin, stdout, os.Stderr)
}

// Main is accelc-policytest: it reads one policytest.EngineRequest from
// stdin, runs it and writes the policytest.EngineResponse to stdout. It
// exits 2, saying why on stderr, when the request is not one it can run:
// unreadable, of another protocol, or from another build of accelc.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		fmt.Fprintf(stderr, "%s runs accelc's policies with OPA and Gatekeeper for `accelc test`, which starts it with a request on stdin; it takes no arguments\n", policytest.EngineCommand)
		return 2
	}
	var req policytest.EngineRequest
	if err := json.NewDecoder(stdin).Decode(&req); err != nil {
		fmt.Fprintf(stderr, "reading the request: %v\n", err)
		return 2
	}
	if req.Protocol != policytest.EngineProtocol {
		fmt.Fprintf(stderr, "the request is of protocol %d, this %s speaks %d: install accelc and %[2]s from one build (make build builds both)\n", req.Protocol, policytest.EngineCommand, policytest.EngineProtocol)
		return 2
	}
	if id := policytest.BuildID(); req.Build != id {
		fmt.Fprintf(stderr, "the request comes from %s, this %s is %s: install accelc and %[2]s from one build (make build builds both)\n", req.Build, policytest.EngineCommand, id)
		return 2
	}
	resp := Serve(context.Background(), &req)
	if err := json.NewEncoder(stdout).Encode(resp); err != nil {
		fmt.Fprintf(stderr, "writing the response: %v\n", err)
		return 1
	}
	return 0
}

// Serve runs one request in-process.
func Serve(ctx context.Context, req *policytest.EngineRequest) *policytest.EngineResponse {
	resp := &policytest.EngineResponse{}
	var err error
	switch req.Op {
	case policytest.OpRego:
		resp.Rego, err = RunRego(ctx, req.Policies)
	case policytest.OpMutate:
		var m *Mutator
		if m, err = NewMutator(render.Tree(req.Tree), req.Namespaces); err == nil {
			for _, obj := range req.Objects {
				out, err := m.Mutate(obj)
				mu := policytest.Mutation{Object: out}
				if err != nil {
					mu = policytest.Mutation{Error: err.Error()}
				}
				resp.Mutated = append(resp.Mutated, mu)
			}
		}
	case policytest.OpSuite:
		resp.Cases, err = RunSuite(ctx, req.Files)
	case policytest.OpCases:
		resp.Cases, err = JudgeCases(ctx, render.Tree(req.Tree), req.Data, req.Cases)
	case policytest.OpAudit:
		resp.Audits, err = serveAudit(ctx, req)
	case policytest.OpDRA:
		resp.Selectors = dra.Evaluate(ctx, req.Selectors, req.Devices)
	default:
		err = fmt.Errorf("%s: no operation %q", policytest.EngineCommand, req.Op)
	}
	if err != nil {
		return &policytest.EngineResponse{Error: err.Error()}
	}
	return resp
}
