package compile

// Loading a cluster within bounds: the time and memory a load may take,
// and the errors that say which was overrun.

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime/metrics"
	"strings"
	"time"
)

// Limits bound the CUE evaluation of one Load. CUE has no way to stop an
// evaluation from outside, and an expression can grow exponentially (a
// string or list built from itself twice over, a few dozen times): Load
// evaluates in a goroutine and gives up on the configuration when it
// overruns a limit, instead of running until the Go runtime kills the
// process.
type Limits struct {
	// Timeout is how long the evaluation may take; 0 is DefaultTimeout.
	Timeout time.Duration
	// MaxMemory is how many bytes of heap the process may grow by while
	// the configuration is evaluated; 0 is DefaultMaxMemory.
	MaxMemory uint64
}

const (
	// DefaultTimeout bounds one cluster's CUE evaluation. The examples
	// evaluate in well under a second.
	DefaultTimeout = 30 * time.Second
	// DefaultMaxMemory bounds the heap growth of one evaluation (the
	// examples need about 50 MiB).
	DefaultMaxMemory = 1 << 30
	// maxStack bounds the goroutine stacks: Go kills the process when
	// one stack passes 1 GB, and a stack grows by doubling.
	maxStack = 256 << 20
	// pollEvery is how often the memory bound is checked.
	pollEvery = 10 * time.Millisecond
)

func (l Limits) timeout() time.Duration {
	if l.Timeout <= 0 {
		return DefaultTimeout
	}
	return l.Timeout
}

func (l Limits) maxMemory() uint64 {
	if l.MaxMemory == 0 {
		return DefaultMaxMemory
	}
	return l.MaxMemory
}

// Load compiles the cluster directory dir under DefaultTimeout and
// DefaultMaxMemory. A configuration that is wrong (or overruns a limit)
// yields Errors, listing every problem found; a directory that cannot be
// read yields a plain error.
func Load(dir string) (*Model, error) {
	return LoadContext(context.Background(), dir, Limits{})
}

// LoadContext is Load under the given limits; it returns ctx's error when
// ctx is done first. When it gives up on an evaluation, the goroutine
// doing it is left to run: callers that give up should exit soon.
func LoadContext(ctx context.Context, dir string, lim Limits) (*Model, error) {
	type result struct {
		m   *Model
		err error
	}
	done := make(chan result, 1)
	base := memStats()
	go func() {
		defer func() {
			if r := recover(); r != nil {
				done <- result{nil, crashed(dir, r)}
			}
		}()
		m, err := loadUnbounded(dir)
		done <- result{m, err}
	}()
	timer := time.NewTimer(lim.timeout())
	defer timer.Stop()
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	for {
		select {
		case r := <-done:
			return r.m, r.err
		case <-ctx.Done():
			return nil, fmt.Errorf("%s: %w", dir, ctx.Err())
		case <-timer.C:
			return nil, overrun(dir, fmt.Sprintf("evaluating the CUE took longer than %s", lim.timeout()),
				"raise the limit (accelc --cue-timeout) only if the configuration is truly this large")
		case <-tick.C:
			m := memStats()
			switch {
			case m.heap > base.heap && m.heap-base.heap > lim.maxMemory():
				return nil, overrun(dir, fmt.Sprintf("evaluating the CUE took more than %s of memory", mib(lim.maxMemory())),
					"raise the limit (accelc --cue-max-memory) only if the configuration is truly this large")
			case m.stacks > maxStack:
				return nil, overrun(dir, fmt.Sprintf("evaluating the CUE nested deeper than %s of stack", mib(maxStack)),
					"look for a value that refers to itself through a list or a function")
			}
		}
	}
}

// overrun is the input error for an evaluation that went past a limit,
// naming the cluster's CUE files (CUE cannot say which expression).
func overrun(dir, what, todo string) error {
	files, _ := filepath.Glob(filepath.Join(dir, "*.cue"))
	pos := filepath.ToSlash(dir)
	if len(files) == 1 {
		pos = filepath.ToSlash(files[0])
	} else if len(files) > 1 {
		names := make([]string, len(files))
		for i, f := range files {
			names[i] = filepath.Base(f)
		}
		pos += " (" + strings.Join(names, ", ") + ")"
	}
	return Errors{{Pos: pos, Msg: what + ": an expression grows without bound (a string, list or struct built from itself twice over, again and again); simplify it, or " + todo}}
}

// crashed is the error for a panic while loading: a bug in accelc or CUE
// that this configuration reaches, not a limit it overran.
func crashed(dir string, r any) error {
	return Errors{{Pos: filepath.ToSlash(dir), Msg: fmt.Sprintf("CUE evaluation failed (%v): this is a bug in accelc or CUE that this configuration reaches, not a mistake in it; report it to accelc's maintainers with the .cue files, and look at their last change meanwhile", r)}}
}

type mem struct{ heap, stacks uint64 }

var memSamples = []string{"/memory/classes/heap/objects:bytes", "/memory/classes/heap/stacks:bytes"}

// memStats reads the heap and stack sizes without stopping the world.
func memStats() mem {
	s := make([]metrics.Sample, len(memSamples))
	for i, name := range memSamples {
		s[i].Name = name
	}
	metrics.Read(s)
	var m mem
	if s[0].Value.Kind() == metrics.KindUint64 {
		m.heap = s[0].Value.Uint64()
	}
	if s[1].Value.Kind() == metrics.KindUint64 {
		m.stacks = s[1].Value.Uint64()
	}
	return m
}

func mib(n uint64) string {
	if n >= 1<<30 && n%(1<<30) == 0 {
		return fmt.Sprintf("%d GiB", n>>30)
	}
	return fmt.Sprintf("%d MiB", n>>20)
}
