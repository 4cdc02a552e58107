package async

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/tokendist/tokendist/node"

	"github.com/tokendist/tokendist"
	"github.com/tokendist/tokendist/faults"
)

func randomLoads(n int, seed uint64, max int64) tokendist.Loads {
	r := rand.New(rand.NewPCG(seed, 7))
	l := make(tokendist.Loads, n)
	for i := range l {
		l[i] = r.Int64N(max + 1)
	}
	return l
}

func testGraphs(t *testing.T) []*tokendist.Graph {
	t.Helper()
	var gs []*tokendist.Graph
	add := func(g *tokendist.Graph, err error) {
		if err != nil {
			t.Fatal(err)
		}
		gs = append(gs, g)
	}
	add(tokendist.Ring(9))
	add(tokendist.Torus(4, 4))
	add(tokendist.RandomRegular(20, 3, 5))
	add(tokendist.Star(7))
	add(tokendist.Hypercube(4))
	add(tokendist.RandomTree(15, 3))
	return gs
}

// TestSyncShare: unit delays and no faults give the synchronous diffusion exactly, and
// the run ends at time R.
func TestSyncShare(t *testing.T) {
	for gi, g := range testGraphs(t) {
		for seed := range uint64(4) {
			loads := randomLoads(g.Order(), seed+uint64(gi)*10, 1000)
			const R = 7
			want, moved, msgs := syncShare(g, loads, R)
			res, err := Simulate(context.Background(), g, sharePrograms{}, loads, &Options{Rounds: R, Seed: seed})
			if err != nil {
				t.Fatalf("graph %d seed %d: %v", gi, seed, err)
			}
			if res.Status != tokendist.StatusDone || !slices.Equal(res.Loads, want) || res.Moved != moved || res.Messages != msgs {
				t.Fatalf("graph %d seed %d: got %v %v moved %d msgs %d, want %v moved %d msgs %d", gi, seed, res.Status, res.Loads, res.Moved, res.Messages, want, moved, msgs)
			}
			if res.Time != R || res.Retransmissions != 0 || res.Lost != 0 || res.InFlight != 0 {
				t.Fatalf("graph %d seed %d: time %v, retransmissions %d, lost %d, in flight %d", gi, seed, res.Time, res.Retransmissions, res.Lost, res.InFlight)
			}
		}
	}
}

func TestSyncPair(t *testing.T) {
	for _, n := range []int{4, 8, 12} {
		g, _ := tokendist.Ring(n)
		for seed := range uint64(5) {
			loads := randomLoads(n, seed, 500)
			want, moved, msgs := syncPair(loads, 9)
			res, err := Simulate(context.Background(), g, pairPrograms{n}, loads, &Options{Rounds: 9, Seed: seed})
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != tokendist.StatusDone || !slices.Equal(res.Loads, want) || res.Moved != moved || res.Messages != msgs {
				t.Fatalf("n %d seed %d: got %v moved %d msgs %d, want %v moved %d msgs %d", n, seed, res.Loads, res.Moved, res.Messages, want, moved, msgs)
			}
		}
	}
}

// traceProgram records every call into a shared log, for the schedule test.
type traceProgram struct {
	log   *[]string
	ticks int64
	k     int64
}

type tracePrograms struct{ log *[]string }

func (tp tracePrograms) Program(int) (node.Program, error) {
	return &traceProgram{log: tp.log}, nil
}

func (p *traceProgram) add(c *node.Context, f string, args ...any) {
	*p.log = append(*p.log, fmt.Sprintf("v%d load %d now %d: ", c.ID, c.Load, c.Now)+fmt.Sprintf(f, args...))
}

func (p *traceProgram) Start(c *node.Context) error {
	p.add(c, "start deg %d rounds %d seed %d", c.Degree, c.Rounds, c.Seed)
	for port := range c.Degree {
		p.k++
		if err := c.Send(port, node.Message{Value: int64(c.ID)*1000 + p.k, Tokens: min(c.Load, 1)}); err != nil {
			return err
		}
	}
	return nil
}

func (p *traceProgram) Receive(c *node.Context, port int, m node.Message) error {
	p.add(c, "recv port %d value %d tokens %d", port, m.Value, m.Tokens)
	if m.Value%3 == 0 && p.ticks < 3 {
		p.k++
		return c.Send(port, node.Message{Value: int64(c.ID)*1000 + p.k, Tokens: c.Load / 3})
	}
	return nil
}

func (p *traceProgram) Tick(c *node.Context) error {
	p.ticks++
	p.add(c, "tick %d", p.ticks)
	if c.Now%2 == int64(c.ID)%2 {
		p.k++
		return c.Send(int(c.Now)%c.Degree, node.Message{Value: int64(c.ID)*1000 + p.k, Tokens: c.Load / 2})
	}
	return nil
}

func (p *traceProgram) Idle() bool                  { return p.ticks >= 4 }
func (p *traceProgram) AppendState(b []byte) []byte { return b }
func (p *traceProgram) RestoreState([]byte) error   { return nil }

// referenceHost runs programs on the synchronous schedule, written from its text.
func referenceHost(t *testing.T, g *tokendist.Graph, progs node.Programs, loads tokendist.Loads, rounds int64) {
	t.Helper()
	n := g.Order()
	type arrival struct {
		port int
		m    node.Message
	}
	ps := make([]node.Program, n)
	cs := make([]node.Context, n)
	next := make([][]arrival, n)
	send := func(v int) {
		for _, e := range cs[v].Outbox() {
			w := int(g.Neighbors(v)[e.Port])
			q, _ := slices.BinarySearch(g.Neighbors(w), int32(v))
			next[w] = append(next[w], arrival{q, e.Msg})
		}
		cs[v].Reset()
	}
	for v := range n {
		ps[v], _ = progs.Program(v)
		cs[v] = node.Context{ID: v, Degree: len(g.Neighbors(v)), Load: loads[v], Rounds: rounds, Seed: 3}
		if err := ps[v].Start(&cs[v]); err != nil {
			t.Fatal(err)
		}
		send(v)
	}
	for tm := int64(1); ; tm++ {
		cur := next
		next = make([][]arrival, n)
		busy := false
		for v := range n {
			slices.SortStableFunc(cur[v], func(a, b arrival) int { return a.port - b.port })
			for _, a := range cur[v] {
				cs[v].Load += a.m.Tokens
				if err := ps[v].Receive(&cs[v], a.port, a.m); err != nil {
					t.Fatal(err)
				}
				send(v)
			}
			if !ps[v].Idle() {
				cs[v].Now = tm
				if err := ps[v].Tick(&cs[v]); err != nil {
					t.Fatal(err)
				}
				send(v)
			}
		}
		for v := range n {
			busy = busy || !ps[v].Idle() || len(next[v]) > 0
		}
		if !busy {
			return
		}
	}
}

// TestSyncSchedule compares every program call of a run with unit delays and no
// faults with the reference host's.
func TestSyncSchedule(t *testing.T) {
	for _, mk := range []func() (*tokendist.Graph, error){
		func() (*tokendist.Graph, error) { return tokendist.Star(5) },
		func() (*tokendist.Graph, error) { return tokendist.RandomRegular(10, 3, 1) },
		func() (*tokendist.Graph, error) { return tokendist.Torus(3, 4) },
	} {
		g, err := mk()
		if err != nil {
			t.Fatal(err)
		}
		loads := randomLoads(g.Order(), 4, 50)
		var want, got []string
		referenceHost(t, g, tracePrograms{&want}, loads, 5)
		res, err := Simulate(context.Background(), g, tracePrograms{&got}, loads, &Options{Rounds: 5, Seed: 3})
		if err != nil {
			t.Fatal(err)
		}
		if res.Status != tokendist.StatusDone {
			t.Fatal(res.Status)
		}
		if !slices.Equal(got, want) {
			for i := range min(len(got), len(want)) {
				if got[i] != want[i] {
					t.Fatalf("call %d: simulator %q, reference %q", i, got[i], want[i])
				}
			}
			t.Fatalf("simulator made %d calls, reference %d", len(got), len(want))
		}
	}
}

func TestDeterministic(t *testing.T) {
	g, _ := tokendist.RandomRegular(30, 4, 2)
	loads := randomLoads(30, 1, 300)
	opts := func() *Options {
		return &Options{Rounds: 6, Seed: 11, Faults: faults.Model{
			Delay: faults.Exponential(0.2, 1), Loss: 0.1, Duplicate: 0.1, Reorder: 0.1, Drift: 0.1, CrashRate: 0.01,
			DownTime: faults.Uniform(1, 3),
		}}
	}
	a, err := Simulate(context.Background(), g, sharePrograms{}, loads, opts())
	if err != nil {
		t.Fatal(err)
	}
	b, err := Simulate(context.Background(), g, sharePrograms{}, loads, opts())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("two runs differ:\n%+v\n%+v", a, b)
	}
	o := opts()
	o.Seed++
	c, err := Simulate(context.Background(), g, sharePrograms{}, loads, o)
	if err != nil {
		t.Fatal(err)
	}
	if c.Events == a.Events && c.Time == a.Time {
		t.Fatal("another seed gave the same run")
	}
}

func TestErrors(t *testing.T) {
	g, _ := tokendist.Ring(6)
	loads := randomLoads(6, 1, 10)
	bad := []*Options{
		{Rounds: -1},
		{Faults: faults.Model{Loss: 1.5}},
		{Faults: faults.Model{Loss: 1}},
		{Faults: faults.Model{Delay: faults.Uniform(2, 1)}},
		{Faults: faults.Model{Delay: faults.Delay{Kind: 9}}},
		{Faults: faults.Model{Drift: 1}},
		{Faults: faults.Model{TickInterval: []float64{1}}},
		{Faults: faults.Model{Crashes: []faults.Crash{{Node: 6}}}},
		{Faults: faults.Model{Crashes: []faults.Crash{{Node: 1, Point: 7}}}},
		{Faults: faults.Model{CrashRate: -1}},
		{MaxTime: -1},
	}
	for i, o := range bad {
		_, err := Simulate(context.Background(), g, sharePrograms{}, loads, o)
		if !errors.Is(err, tokendist.ErrBadParameter) || !strings.HasPrefix(err.Error(), "tokendist: ") {
			t.Errorf("options %d: %v", i, err)
		}
	}
	if _, err := Simulate(context.Background(), g, sharePrograms{}, loads[:3], nil); !errors.Is(err, tokendist.ErrBadLoads) {
		t.Error(err)
	}
	if _, err := Simulate(context.Background(), nil, sharePrograms{}, loads, nil); !errors.Is(err, tokendist.ErrNilNetwork) {
		t.Error(err)
	}
	if _, err := Simulate(context.Background(), g, nil, loads, nil); !errors.Is(err, tokendist.ErrBadParameter) {
		t.Error(err)
	}
}

// faultyPrograms wraps share programs: node 3's program fails or panics in its round-2
// Receive.
type faultyPrograms struct{ panics bool }

type faulty struct {
	shareProgram
	panics bool
}

func (f faultyPrograms) Program(v int) (node.Program, error) {
	if v == 3 {
		return &faulty{panics: f.panics}, nil
	}
	return &shareProgram{}, nil
}

func (p *faulty) Receive(c *node.Context, port int, m node.Message) error {
	if m.Round == 2 {
		if p.panics {
			panic("boom")
		}
		return errors.New("boom")
	}
	return p.shareProgram.Receive(c, port, m)
}

func TestProgramFailure(t *testing.T) {
	g, _ := tokendist.Ring(6)
	for _, panics := range []bool{false, true} {
		res, err := Simulate(context.Background(), g, faultyPrograms{panics}, randomLoads(6, 1, 10), &Options{Rounds: 4})
		if err == nil || res.Status != tokendist.StatusFailed || !strings.HasPrefix(err.Error(), "tokendist: ") ||
			!strings.Contains(err.Error(), "node 3") || !strings.Contains(err.Error(), "boom") {
			t.Errorf("panics %v: %v %v", panics, res.Status, err)
		}
	}
}

func TestCanceled(t *testing.T) {
	g, _ := tokendist.Ring(6)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res, err := Simulate(ctx, g, sharePrograms{}, randomLoads(6, 1, 10), &Options{})
	if !errors.Is(err, context.Canceled) || res.Status != tokendist.StatusCanceled {
		t.Fatal(res.Status, err)
	}
}

func TestMaxBounds(t *testing.T) {
	g, _ := tokendist.Ring(6)
	res, err := Simulate(context.Background(), g, sharePrograms{}, randomLoads(6, 1, 100), &Options{MaxTime: 10})
	if err != nil || res.Status != tokendist.StatusMaxSteps || res.Time != 10 {
		t.Fatal(res.Status, res.Time, err)
	}
	res, err = Simulate(context.Background(), g, sharePrograms{}, randomLoads(6, 1, 100), &Options{MaxEvents: 100})
	if err != nil || res.Status != tokendist.StatusMaxSteps || res.Events != 100 {
		t.Fatal(res.Status, res.Events, err)
	}
}

// tickProgram ticks six times and records Now.
type tickProgram struct{ nows *[]int64 }

func (p *tickProgram) Start(*node.Context) error { return nil }
func (p *tickProgram) Receive(*node.Context, int, node.Message) error {
	return nil
}
func (p *tickProgram) Tick(c *node.Context) error {
	*p.nows = append(*p.nows, c.Now)
	return nil
}
func (p *tickProgram) Idle() bool                  { return len(*p.nows) >= 6 }
func (p *tickProgram) AppendState(b []byte) []byte { return b }
func (p *tickProgram) RestoreState([]byte) error   { return nil }

type tickPrograms struct{ nows [][]int64 }

func (tp *tickPrograms) Program(v int) (node.Program, error) {
	return &tickProgram{&tp.nows[v]}, nil
}

func TestTickIntervals(t *testing.T) {
	g, _ := tokendist.Path(2)
	tp := &tickPrograms{nows: make([][]int64, 2)}
	res, err := Simulate(context.Background(), g, tp, tokendist.Loads{0, 0},
		&Options{Faults: faults.Model{TickInterval: []float64{2, 0.5}}})
	if err != nil {
		t.Fatal(err)
	}
	want := []int64{1, 2, 3, 4, 5, 6}
	if !slices.Equal(tp.nows[0], want) || !slices.Equal(tp.nows[1], want) || res.Time != 12 {
		t.Fatalf("Now %v %v, time %v", tp.nows[0], tp.nows[1], res.Time)
	}
	tp = &tickPrograms{nows: make([][]int64, 2)}
	res, err = Simulate(context.Background(), g, tp, tokendist.Loads{0, 0},
		&Options{Seed: 2, Faults: faults.Model{TickInterval: []float64{2, 0.5}, Drift: 0.3}})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(tp.nows[0], want) || res.Time == 12 || res.Time < 12*0.7 || res.Time > 12*1.3 {
		t.Fatalf("with drift: Now %v, time %v", tp.nows[0], res.Time)
	}
}

// nilPrograms returns a typed nil program for every node.
type nilPrograms struct{}

func (nilPrograms) Program(int) (node.Program, error) {
	var p *shareProgram
	return p, nil
}

// TestSimulateNilProgram: a nil program fails the run with an error naming the node.
func TestSimulateNilProgram(t *testing.T) {
	g, _ := tokendist.Ring(4)
	_, err := Simulate(context.Background(), g, nilPrograms{}, tokendist.Loads{1, 2, 3, 4}, nil)
	if !errors.Is(err, tokendist.ErrBadParameter) || !strings.Contains(err.Error(), "node 0: nil program") {
		t.Fatalf("nil program: %v", err)
	}
}
