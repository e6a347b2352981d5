package policytest

// The engine protocol: the requests accelc sends the policy test engine
// and the answers it gets.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime/debug"
	"strings"

	"github.com/accelc/accelc/internal/sibling"
	"github.com/accelc/accelc/pkg/compile"
)

// EngineCommand is the program that holds the policy engine: OPA's tester
// and Gatekeeper's constraint framework, verify runner and expander
// (cmd/accelc-policytest, package engine). They take some 50 ms of package
// initialisation and 80 MB, which every accelc command would pay were they
// linked into accelc, so RunRego, RunSuite and Suite's mutations run them
// in this program, found beside the running executable or else on PATH.
const EngineCommand = "accelc-policytest"

// EngineProtocol is the version of the requests and responses accelc
// and EngineCommand exchange; the engine refuses another.
const EngineProtocol = 1

// What an EngineRequest asks for.
const (
	OpRego   = "rego"   // run Policies' Rego unit tests
	OpMutate = "mutate" // mutate Objects with Tree's mutators (for Namespaces)
	OpSuite  = "suite"  // run the gator suite in Files
	OpDRA    = "dra"    // evaluate Selectors on Devices in Kubernetes' DRA CEL environment
	OpAudit  = "audit"  // judge stored Objects as Gatekeeper's audit does (Audit)
	OpCases  = "cases"  // judge Cases through Tree's admission path with Data synced (RunCases)
)

// EngineRequest is what accelc writes, as JSON, to the engine's stdin.
type EngineRequest struct {
	Protocol int `json:"protocol"`
	// Build is BuildID of the binary asking: the engine refuses one of
	// another build, so accelc test always runs the Gatekeeper it was
	// built with.
	Build      string            `json:"build"`
	Op         string            `json:"op"`
	Policies   []RegoPolicy      `json:"policies,omitempty"`
	Tree       map[string][]byte `json:"tree,omitempty"`
	Namespaces []string          `json:"namespaces,omitempty"`
	Objects    [][]byte          `json:"objects,omitempty"`
	Files      map[string][]byte `json:"files,omitempty"`
	// Selectors (DeviceClass name → CEL) and the Devices (by catalog
	// class) to evaluate them on, for OpDRA.
	Selectors map[string]string            `json:"selectors,omitempty"`
	Devices   map[string]compile.DRADevice `json:"devices,omitempty"`
	// Data are the objects Gatekeeper would have synced beside the
	// tree's own (Nodes, ResourceClaims), and EnforcingTree the tree
	// rendered with every namespace at deny, whose mutators say what
	// enforcement would change of each pod, for OpAudit.
	Data          [][]byte          `json:"data,omitempty"`
	EnforcingTree map[string][]byte `json:"enforcingTree,omitempty"`
	// Cases are OpCases' admission cases, with Data the Nodes synced.
	Cases []CaseInput `json:"cases,omitempty"`
}

// EngineResponse is what the engine writes, as JSON, to its stdout.
type EngineResponse struct {
	// Error is why the operation failed, as the in-process call would say.
	Error   string       `json:"error,omitempty"`
	Rego    []Result     `json:"rego,omitempty"`
	Mutated []Mutation   `json:"mutated,omitempty"`
	Cases   []CaseResult `json:"cases,omitempty"`
	// Selectors are OpDRA's outcomes, by DeviceClass name.
	Selectors map[string]compile.SelectorOutcome `json:"selectors,omitempty"`
	// Audits are OpAudit's judgements, one per object, in order.
	Audits []ObjectAudit `json:"audits,omitempty"`
}

// Violation is what one constraint found in a review.
type Violation struct {
	Constraint string `json:"constraint"`
	// Kind is the constraint's kind (its template's), which the engine
	// uses to tell constraints apart; not sent.
	Kind string `json:"-"`
	// Action is the constraint's enforcementAction: deny, warn or dryrun.
	Action  string `json:"action"`
	Message string `json:"message"`
}

// ObjectAudit is one stored object judged as Gatekeeper's audit judges
// it, and, for a pod, what enforcement's mutations would make of it.
type ObjectAudit struct {
	// Violations are what Gatekeeper's audit will find in the object as
	// it is stored.
	Violations []Violation `json:"violations,omitempty"`
	// Recreated are what admission would find were the object made again
	// now, through the tree's own mutations at its namespace's stage:
	// what a controller's next pod, or the workload applied again, meets.
	Recreated []Violation `json:"recreated,omitempty"`
	// Enforced is a pod as accelc's mutations would change it were its
	// namespace at deny (the EnforcingTree's mutators); nil for
	// another kind.
	Enforced []byte `json:"enforced,omitempty"`
	Error    string `json:"error,omitempty"`
}

// Audit judges stored objects (JSON) against a rendered tree as
// Gatekeeper's audit would once the tree is applied, with data (Nodes,
// ResourceClaims) as Gatekeeper would sync them, and mutates each pod
// with enforcing's mutators. It runs in EngineCommand.
func Audit(ctx context.Context, tree, enforcing map[string][]byte, namespaces []string, data, objects [][]byte) ([]ObjectAudit, error) {
	resp, err := callEngine(ctx, EngineRequest{Op: OpAudit, Tree: tree, EnforcingTree: enforcing, Namespaces: namespaces, Data: data, Objects: objects})
	if err != nil {
		return nil, err
	}
	if len(resp.Audits) != len(objects) {
		return nil, &EngineError{fmt.Errorf("%s answered %d audits for %d objects", EngineCommand, len(resp.Audits), len(objects))}
	}
	return resp.Audits, nil
}

// Mutation is one object of an OpMutate request, mutated, or why not.
type Mutation struct {
	Object []byte `json:"object,omitempty"`
	Error  string `json:"error,omitempty"`
}

// EngineError is a failure to run EngineCommand: missing, of another
// build, or stopped before it answered. It is about the installation, not
// the policies or fixtures.
type EngineError struct {
	Err error
}

func (e *EngineError) Error() string { return e.Err.Error() }
func (e *EngineError) Unwrap() error { return e.Err }

// BuildID names the build of the running binary: its main module's
// version and, built from a checkout, the commit and whether the tree was
// modified.
func BuildID() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	id := bi.Main.Path + "@" + bi.Main.Version
	for _, s := range bi.Settings {
		if s.Key == "vcs.revision" || s.Key == "vcs.modified" {
			id += " " + s.Key + "=" + s.Value
		}
	}
	return id
}

// callEngine runs EngineCommand on one request. What the engine writes to
// its stderr is copied to accelc's, or, when it fails, into the error.
func callEngine(ctx context.Context, req EngineRequest) (*EngineResponse, error) {
	path, err := enginePath()
	if err != nil {
		return nil, err
	}
	req.Protocol, req.Build = EngineProtocol, BuildID()
	in, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, path)
	var stdout, stderr bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = bytes.NewReader(in), &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = err.Error()
		}
		return nil, &EngineError{fmt.Errorf("%s: %s", path, msg)}
	}
	os.Stderr.Write(stderr.Bytes())
	var resp EngineResponse
	if err := json.Unmarshal(stdout.Bytes(), &resp); err != nil {
		return nil, &EngineError{fmt.Errorf("%s: reading its answer: %w", path, err)}
	}
	if resp.Error != "" {
		return nil, errors.New(resp.Error)
	}
	return &resp, nil
}

// enginePath finds EngineCommand beside the running executable, else on
// PATH.
func enginePath() (string, error) {
	p, exe, ok := sibling.Find(EngineCommand)
	if ok {
		return p, nil
	}
	return "", &EngineError{fmt.Errorf("%s, which runs the policies with OPA and Gatekeeper, is neither beside %s nor on PATH: %s",
		EngineCommand, exe, sibling.InstallHint(EngineCommand))}
}

// CheckSelectors evaluates DeviceClass selectors in Kubernetes' own DRA
// CEL environment, on a device of each catalog class (package dra, in
// EngineCommand: its start-up stays out of accelc).
func CheckSelectors(ctx context.Context, selectors map[string]string, devices map[string]compile.DRADevice) (map[string]compile.SelectorOutcome, error) {
	resp, err := callEngine(ctx, EngineRequest{Op: OpDRA, Selectors: selectors, Devices: devices})
	if err != nil {
		return nil, err
	}
	return resp.Selectors, nil
}

// resultJSON is Result on the wire.
type resultJSON struct {
	Policy string  `json:"policy"`
	File   string  `json:"file,omitempty"`
	Name   string  `json:"name"`
	Pass   bool    `json:"pass"`
	Err    *string `json:"error,omitempty"`
}

// MarshalJSON writes Err as its message.
func (r Result) MarshalJSON() ([]byte, error) {
	return json.Marshal(resultJSON{Policy: r.Policy, File: r.File, Name: r.Name, Pass: r.Pass, Err: errString(r.Err)})
}

// UnmarshalJSON reads what MarshalJSON wrote.
func (r *Result) UnmarshalJSON(b []byte) error {
	var j resultJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*r = Result{Policy: j.Policy, File: j.File, Name: j.Name, Pass: j.Pass, Err: stringErr(j.Err)}
	return nil
}

// caseResultJSON is CaseResult on the wire.
type caseResultJSON struct {
	Test string  `json:"test"`
	Case string  `json:"case"`
	Err  *string `json:"error,omitempty"`
}

// MarshalJSON writes Err as its message.
func (r CaseResult) MarshalJSON() ([]byte, error) {
	return json.Marshal(caseResultJSON{Test: r.Test, Case: r.Case, Err: errString(r.Err)})
}

// UnmarshalJSON reads what MarshalJSON wrote.
func (r *CaseResult) UnmarshalJSON(b []byte) error {
	var j caseResultJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*r = CaseResult{Test: j.Test, Case: j.Case, Err: stringErr(j.Err)}
	return nil
}

// errString and stringErr carry an error as its message, nil as null.
func errString(err error) *string {
	if err == nil {
		return nil
	}
	s := err.Error()
	return &s
}

func stringErr(s *string) error {
	if s == nil {
		return nil
	}
	return errors.New(*s)
}
