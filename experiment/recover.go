package experiment

import (
	"context"
	"fmt"
	"runtime/debug"
	"sort"
	"strings"
	"sync"

	"github.com/tokendist/tokendist"
	"github.com/tokendist/tokendist/internal/errs"
	"github.com/tokendist/tokendist/registry"
)

// ErrPanic marks a run whose user code (a registered network, loads, algorithm, metric,
// workload or churn constructor, or anything they call) panicked. The experiment layer
// turns the panic into a failed run: the error names the panic value and carries the
// stack, the sweep stores the run as failed and goes on.
var ErrPanic = fmt.Errorf("%suser code panicked", errs.Prefix)

// panicError is a recovered panic: its message is "tokendist: run <label>: user code
// panicked: <value>" followed by the goroutine's stack.
type panicError struct {
	label string
	value any
	stack []byte
}

func (e *panicError) Error() string {
	return fmt.Sprintf("%srun %s: user code panicked: %s\n%s", errs.Prefix, e.label, errs.Quote([]byte(fmt.Sprint(e.value))), e.stack)
}

func (e *panicError) Unwrap() error { return ErrPanic }

// maxStack bounds the stack kept with a panicking run.
const maxStack = 16 << 10

// runSafely is the one recovery point for user code in the experiment layer: it runs
// spec with reg.Run and turns a panic into a failed run (StatusFailed, an error wrapping
// ErrPanic with the value and the stack). Every run of Sweep and of the run command goes
// through it.
func runSafely(ctx context.Context, reg *registry.Registry, r Run, opts *tokendist.RunOptions) (out registry.Result, err error) {
	defer func() {
		if p := recover(); p != nil {
			st := debug.Stack()
			if len(st) > maxStack {
				st = append(st[:maxStack:maxStack], "\n... (stack truncated)"...)
			}
			out = registry.Result{Spec: r.Spec, Result: tokendist.Result{Status: tokendist.StatusFailed}}
			err = &panicError{label: errs.Quote([]byte(r.Algorithm + " on " + r.Network)), value: p, stack: st}
		}
	}()
	return reg.Run(ctx, r.Spec, opts)
}

// inflight is the set of runs in progress, for the message of a second interrupt.
type inflight struct {
	mu   sync.Mutex
	runs map[int]Run
}

func newInflight() *inflight { return &inflight{runs: map[int]Run{}} }

func (f *inflight) add(r Run) {
	if f == nil {
		return
	}
	f.mu.Lock()
	f.runs[r.Index] = r
	f.mu.Unlock()
}

func (f *inflight) remove(r Run) {
	if f == nil {
		return
	}
	f.mu.Lock()
	delete(f.runs, r.Index)
	f.mu.Unlock()
}

// describe lists the runs in progress (at most 20, then a count).
func (f *inflight) describe() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.runs) == 0 {
		return "no run was in progress"
	}
	idx := make([]int, 0, len(f.runs))
	for i := range f.runs {
		idx = append(idx, i)
	}
	sort.Ints(idx)
	var parts []string
	for k, i := range idx {
		if k == 20 {
			parts = append(parts, fmt.Sprintf("and %d more", len(idx)-20))
			break
		}
		r := f.runs[i]
		parts = append(parts, fmt.Sprintf("#%d %s on %s seed %d (key %s)", r.Index, r.Algorithm, r.Network, r.Spec.Seed, r.Key))
	}
	return fmt.Sprintf("%d runs in progress are lost (they run again next time): %s", len(idx), strings.Join(parts, "; "))
}
