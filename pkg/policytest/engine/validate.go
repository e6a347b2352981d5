package engine

// Kubernetes' own create-time validation, run in the k8s-validate
// program, so that the escape check judges only what an API server
// would let reach admission.

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"sync"
)

// Validator runs Kubernetes' own create-time validation (the API server's
// registry strategies, in the k8s-validate program the end-to-end tools
// build) over objects, so that the escape check judges only what a real
// API server would let reach admission.
type Validator struct {
	mu   sync.Mutex
	cmd  *exec.Cmd
	in   io.WriteCloser
	out  *bufio.Reader
	path string
}

// StartValidator starts the program at path.
func StartValidator(path string) (*Validator, error) {
	cmd := exec.Command(path)
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", path, err)
	}
	return &Validator{cmd: cmd, in: in, out: bufio.NewReaderSize(out, 1<<16), path: path}, nil
}

// Validate returns why the API server would refuse obj, or "".
func (v *Validator) Validate(obj map[string]any) (string, error) {
	b, err := json.Marshal(obj)
	if err != nil {
		return "", err
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if _, err := v.in.Write(append(b, '\n')); err != nil {
		return "", fmt.Errorf("%s: %w", v.path, err)
	}
	line, err := v.out.ReadString('\n')
	if err != nil {
		return "", fmt.Errorf("%s: %w", v.path, err)
	}
	return line[:len(line)-1], nil
}

// Close stops the program.
func (v *Validator) Close() error {
	_ = v.in.Close()
	return v.cmd.Wait()
}
