package controlplane

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// stopGrace is how long a process has to exit after SIGTERM before its
// process group is killed.
const stopGrace = 10 * time.Second

// errKilled marks a process that was stopped with SIGKILL after stopGrace:
// stopped all the same, so a note, not a failure (kube-apiserver can hold
// on to in-flight requests after its webhooks are gone).
var errKilled = errors.New("killed")

// logTailLines is how much of each log a failed test prints.
const logTailLines = 60

// process is one server this package started, in a process group of its own
// so that stopping it stops whatever it started too.
type process struct {
	name    string
	logPath string
	cmd     *exec.Cmd
	started time.Time
	logFile *os.File
	done    chan struct{} // closed when the process has exited
	waitErr error         // set before done is closed
}

// startProcess runs path with args, its stdout and stderr going to
// dir/name.log.
func startProcess(dir, name, path string, args ...string) (*process, error) {
	return startProcessEnv(dir, name, path, nil, args...)
}

// startProcessEnv is startProcess with env added to this process's
// environment.
func startProcessEnv(dir, name, path string, env []string, args ...string) (*process, error) {
	logPath := filepath.Join(dir, name+".log")
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(path, args...)
	cmd.Dir = dir
	if len(env) > 0 {
		cmd.Env = append(os.Environ(), env...)
	}
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Setpgid: true,
		// Should the test binary die without running its cleanups (a
		// -timeout panic, a kill), the servers die with it.
		Pdeathsig: syscall.SIGKILL,
	}
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	p := &process{name: name, logPath: logPath, cmd: cmd, started: time.Now(), logFile: logFile, done: make(chan struct{})}
	go func() {
		p.waitErr = cmd.Wait()
		logFile.Close()
		close(p.done)
	}()
	return p, nil
}

// exited reports whether the process has ended, and how.
func (p *process) exited() (bool, error) {
	select {
	case <-p.done:
		if p.waitErr == nil {
			return true, fmt.Errorf("%s exited", p.name)
		}
		return true, fmt.Errorf("%s exited: %w", p.name, p.waitErr)
	default:
		return false, nil
	}
}

// stop ends the process group the process leads: SIGTERM, then SIGKILL
// after stopGrace. It signals only the group of the PID it started.
func (p *process) stop() error {
	select {
	case <-p.done:
		return nil
	default:
	}
	pgid := p.cmd.Process.Pid
	if err := syscall.Kill(-pgid, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("stopping %s (process group %d): %w", p.name, pgid, err)
	}
	select {
	case <-p.done:
		return nil
	case <-time.After(stopGrace):
	}
	if err := syscall.Kill(-pgid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("killing %s (process group %d): %w", p.name, pgid, err)
	}
	<-p.done
	return fmt.Errorf("%s (process group %d) ignored SIGTERM for %s and was killed: %w", p.name, pgid, stopGrace, errKilled)
}

// tail is the end of the process's log.
func (p *process) tail() string {
	b, err := os.ReadFile(p.logPath)
	if err != nil {
		return fmt.Sprintf("(reading %s: %v)", p.logPath, err)
	}
	lines := bytes.Split(bytes.TrimRight(b, "\n"), []byte("\n"))
	if len(lines) > logTailLines {
		lines = lines[len(lines)-logTailLines:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}

// bindConflict reports whether the log says a port was taken, which happens
// when another process takes a port between freePorts closing it and the
// server binding it.
func (p *process) bindConflict() bool {
	b, err := os.ReadFile(p.logPath)
	return err == nil && strings.Contains(string(b), "address already in use")
}

// freePorts picks n distinct free TCP ports on 127.0.0.1. The ports are
// free when it returns; a server started soon after can nearly always bind
// them, and Start retries once when one cannot.
func freePorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("picking a free port on 127.0.0.1: %w", err)
		}
		// Held open until all are picked, so that none is picked twice.
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
