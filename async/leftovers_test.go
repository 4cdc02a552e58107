package async

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/tokendist/tokendist"
	"github.com/tokendist/tokendist/faults"
	"github.com/tokendist/tokendist/node"
)

// bounce sends its whole load on port 0 at Start (when it has any) and back on the
// port a message came from, until it has sent twice: huge loads pass the int64 range
// of Moved in a few messages.
type bounce struct{}

func (bounce) send(c *node.Context, port int) error {
	if c.Load == 0 || c.Messages >= 2 {
		return nil
	}
	return c.Send(port, node.Message{Tokens: c.Load, Counted: true})
}
func (b bounce) Start(c *node.Context) error                             { return b.send(c, 0) }
func (b bounce) Receive(c *node.Context, port int, _ node.Message) error { return b.send(c, port) }
func (bounce) Tick(*node.Context) error                                  { return nil }
func (bounce) Idle() bool                                                { return true }
func (bounce) AppendState(b []byte) []byte                               { return b }
func (bounce) RestoreState([]byte) error                                 { return nil }

type bounces struct{}

func (bounces) Program(int) (node.Program, error) { return bounce{}, nil }

// TestSimulateOverflow: the review's case. Tokens bounced between two nodes take a
// node's Moved past 2^63 (node.Context.Send refuses), or only the sum over the nodes
// (Simulate's total refuses); either way the run fails with ErrOverflow, as Run's
// does, instead of reporting a wrapped Moved with StatusDone. The persisted loads and
// the tokens in flight still add up to the initial total.
func TestSimulateOverflow(t *testing.T) {
	g, _ := tokendist.Path(2)
	for _, c := range []struct {
		load int64
		want string
	}{
		{1 << 62, "node 0 sends"},       // node 0's second send: Moved 2^63
		{3 << 60, "the total of Moved"}, // each node 6·2^60, the sum 12·2^60
	} {
		res, err := Simulate(context.Background(), g, bounces{}, tokendist.Loads{c.load, 0}, nil)
		if !errors.Is(err, tokendist.ErrOverflow) || res.Status != tokendist.StatusFailed || !strings.Contains(err.Error(), c.want) {
			t.Errorf("load %d: %v, %v (Moved %d), want ErrOverflow naming %q", c.load, res.Status, err, res.Moved, c.want)
			continue
		}
		if res.Loads[0]+res.Loads[1]+res.InFlight != c.load {
			t.Errorf("load %d: persisted loads %v + in flight %d", c.load, res.Loads, res.InFlight)
		}
	}
}

// panicky wraps a share program and panics in its k-th call of Idle or AppendState.
type panicky struct {
	shareProgram
	what string
	k, n int
}

func (p *panicky) hit(what string) {
	if p.what == what {
		if p.n++; p.n == p.k {
			panic(fmt.Sprintf("boom in %s call %d", what, p.n))
		}
	}
}
func (p *panicky) Idle() bool { p.hit("Idle"); return p.shareProgram.Idle() }
func (p *panicky) AppendState(b []byte) []byte {
	p.hit("AppendState")
	return p.shareProgram.AppendState(b)
}

type panickyPrograms struct {
	what string
	k    int
}

func (pp panickyPrograms) Program(v int) (node.Program, error) {
	if v == 3 {
		return &panicky{what: pp.what, k: pp.k}, nil
	}
	return &shareProgram{}, nil
}

// TestProgramPanicsInIdleAndAppendState: a panic in a program's Idle or AppendState,
// at its k-th call, fails the run (StatusFailed) with an error naming the node and the
// method, and no token is lost or doubled: the persisted loads and the tokens in
// flight add up to the initial total.
func TestProgramPanicsInIdleAndAppendState(t *testing.T) {
	g, _ := tokendist.Ring(6)
	loads := randomLoads(6, 1, 10)
	var total int64
	for _, x := range loads {
		total += x
	}
	for i, what := range []string{"Idle", "AppendState", "Idle", "AppendState"} {
		model := faults.Model{} // unit delays, then delay spread and loss
		if i >= 2 {
			model = faults.Model{Delay: faults.Uniform(1, 3), Loss: 0.2}
		}
		for _, k := range []int{1, 3, 5} {
			res, err := Simulate(context.Background(), g, panickyPrograms{what, k}, loads,
				&Options{Rounds: 4, Seed: uint64(i), Faults: model})
			want := fmt.Sprintf("program of node 3 panicked in %s: boom in %s call %d", what, what, k)
			if err == nil || res.Status != tokendist.StatusFailed || !strings.HasPrefix(err.Error(), "tokendist: ") ||
				!strings.Contains(err.Error(), want) {
				t.Errorf("%s call %d: %v %v, want %q", what, k, res.Status, err, want)
				continue
			}
			var sum int64
			for _, x := range res.Loads {
				sum += x
			}
			if sum+res.InFlight != total {
				t.Errorf("%s call %d: persisted loads %d + in flight %d ≠ %d", what, k, sum, res.InFlight, total)
			}
		}
	}
}

// TestIntervalFloor: WorkloadEvery, ObserveEvery and the fault model's intervals of
// 1e-300 (a run that would never reach MaxTime) are refused naming the option and the
// value; 1e-3 is accepted and the run reaches its MaxTime.
func TestIntervalFloor(t *testing.T) {
	g, _ := tokendist.Ring(4)
	loads := randomLoads(4, 1, 10)
	wl, err := tokendist.NewPoissonArrivals(0.3, true)
	if err != nil {
		t.Fatal(err)
	}
	obs := ObserverFunc(func(*Snapshot) error { return nil })
	for _, c := range []struct {
		name string
		opts func(x float64) *Options
	}{
		{"WorkloadEvery", func(x float64) *Options { return &Options{Workload: wl, WorkloadEvery: x, MaxTime: 0.5} }},
		{"ObserveEvery", func(x float64) *Options { return &Options{Observer: obs, ObserveEvery: x, MaxTime: 0.5} }},
		{"TickInterval[2]", func(x float64) *Options {
			return &Options{Faults: faults.Model{TickInterval: []float64{1, 1, x, 1}}, MaxTime: 0.5}
		}},
		{"Delay", func(x float64) *Options {
			return &Options{Faults: faults.Model{Delay: faults.Constant(x)}, MaxTime: 0.5}
		}},
		{"LinkDelay(0, 1)", func(x float64) *Options {
			return &Options{Faults: faults.Model{LinkDelay: func(int, int) faults.Delay { return faults.Uniform(0, x) }}, MaxTime: 0.5}
		}},
	} {
		res, err := Simulate(context.Background(), g, sharePrograms{}, loads, c.opts(1e-300))
		if !errors.Is(err, tokendist.ErrBadParameter) || res.Status != tokendist.StatusFailed ||
			!strings.HasPrefix(err.Error(), "tokendist: ") || !strings.Contains(err.Error(), c.name) || !strings.Contains(err.Error(), "1e-300") {
			t.Errorf("%s 1e-300: %v %v", c.name, res.Status, err)
		}
		if res, err := Simulate(context.Background(), g, sharePrograms{}, loads, c.opts(1e-3)); err != nil || res.Time > 0.5 {
			t.Errorf("%s 1e-3: %v %v at time %g", c.name, res.Status, err, res.Time)
		}
	}
}

// flood adds k tokens to node 0 at each call (or reports negative arrivals).
type flood struct{ k int64 }

func (flood) Init(*tokendist.State) error { return nil }
func (f flood) Apply(s *tokendist.State) (int64, int64, error) {
	if f.k < 0 {
		return f.k, 0, nil
	}
	s.Loads[0] += f.k
	return f.k, 0, nil
}

// TestWorkloadOverflow: a workload whose arrivals would take the total past the int64
// range is refused with ErrBadLoads, as Run refuses it, and one reporting negative
// arrivals with ErrBadParameter; the run fails before the loads change.
func TestWorkloadOverflow(t *testing.T) {
	g, _ := tokendist.Ring(4)
	res, err := Simulate(context.Background(), g, sharePrograms{}, tokendist.Loads{1, 1, 1, 1},
		&Options{Workload: flood{1 << 62}, MaxTime: 10})
	if !errors.Is(err, tokendist.ErrBadLoads) || res.Status != tokendist.StatusFailed || res.Arrived != 1<<62 {
		t.Errorf("overflow: %v %v, arrived %d", res.Status, err, res.Arrived)
	}
	res, err = Simulate(context.Background(), g, sharePrograms{}, tokendist.Loads{1, 1, 1, 1},
		&Options{Workload: flood{-1}, MaxTime: 10})
	if !errors.Is(err, tokendist.ErrBadParameter) || res.Status != tokendist.StatusFailed || !strings.Contains(err.Error(), "-1 arrivals") {
		t.Errorf("negative: %v %v", res.Status, err)
	}
}

// sendOnce sends its whole load on port 0 at Start, once.
type sendOnce struct{ bounce }

func (sendOnce) Start(c *node.Context) error {
	if c.Load == 0 {
		return nil
	}
	return c.Send(0, node.Message{Tokens: c.Load, Counted: true})
}
func (sendOnce) Receive(*node.Context, int, node.Message) error { return nil }

type sendOnces struct{}

func (sendOnces) Program(int) (node.Program, error) { return sendOnce{}, nil }

// TestSimulateTotalAtMaxInt64: a sum of the nodes' Moved of exactly MaxInt64 (2^62 and
// 2^62 − 1 tokens sent across one link) is a result, not an overflow; one more token is
// ErrOverflow. (The boundary of finish's check; TestSimulateOverflow tests far past it.)
func TestSimulateTotalAtMaxInt64(t *testing.T) {
	g, _ := tokendist.Path(2)
	res, err := Simulate(context.Background(), g, sendOnces{}, tokendist.Loads{1 << 62, 1<<62 - 1}, nil)
	if err != nil || res.Moved != math.MaxInt64 || res.Status == tokendist.StatusFailed {
		t.Fatalf("total MaxInt64: %v, Moved %d, status %v; want a result with Moved MaxInt64", err, res.Moved, res.Status)
	}
	if res.Loads[0] != 1<<62-1 || res.Loads[1] != 1<<62 {
		t.Errorf("loads %v, want the two swapped", res.Loads)
	}
	// One token more cannot be made with loads that sum within int64 here: node 1's
	// 2^62 tokens would make the initial total overflow, which Simulate refuses first.
	if _, err := Simulate(context.Background(), g, sendOnces{}, tokendist.Loads{1 << 62, 1 << 62}, nil); err == nil {
		t.Errorf("loads summing to 2^63: no error")
	}
}
