package tokendist_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tokendist/tokendist"
)

// fndNeighbourExchange is a small realistic balancer: at step t every node u with
// u ≡ t (mod 2) compares its load with its clockwise neighbour u+1 (mod n) on a ring
// given by node order, and moves one token from the larger to the smaller load when
// they differ by at least 2. The pairs of one step are disjoint (a matching), so the
// step is one parallel step of the nearest-neighbour token-exchange model. It is O(n)
// per step, allocation-free, and keeps both invariants.
type fndNeighbourExchange struct{}

func (fndNeighbourExchange) String() string { return "neighbour-exchange" }

func (fndNeighbourExchange) Step(s *tokendist.State) error {
	l := s.Loads
	n := len(l)
	moved := int64(0)
	// For odd n the last pair (n-1, 0) would overlap the first pair; skip it.
	for u := int(s.Steps % 2); u+1 < n || (u+1 == n && n%2 == 0 && n > 2); u += 2 {
		v := u + 1
		if v == n {
			v = 0
		}
		switch d := l[u] - l[v]; {
		case d >= 2:
			l[u]--
			l[v]++
			moved++
		case d <= -2:
			l[u]++
			l[v]--
			moved++
		}
	}
	s.Moved += moved
	s.Messages += int64(n / 2)
	s.Time++
	return nil
}

// Period: two steps cover both matchings.
func (fndNeighbourExchange) Period(*tokendist.State) int64 { return 2 }

// fndScripted is a configurable test balancer: it adds add[node] to a node's load at a
// given step, can fail, can declare invariants and an expected total, and can finish.
type fndScripted struct {
	name      string
	doneAt    int64 // Done once Steps reaches doneAt (0: never)
	failAt    int64 // Step returns an error at this step (0: never)
	errToFail error
	changeAt  int64 // at this step add delta to node 0 and subtract from node 1
	delta     int64
	bump      int64 // add bump to node 0 at changeAt without compensating
	keeps     tokendist.Invariant
	expected  func(s *tokendist.State) int64
	sleep     time.Duration
	initErr   error
}

func (b *fndScripted) String() string { return b.name }

func (b *fndScripted) Init(s *tokendist.State) error { return b.initErr }

func (b *fndScripted) Step(s *tokendist.State) error {
	if b.sleep > 0 {
		time.Sleep(b.sleep)
	}
	if b.failAt > 0 && s.Steps == b.failAt {
		return b.errToFail
	}
	if b.changeAt > 0 && s.Steps == b.changeAt {
		s.Loads[0] += b.delta + b.bump
		s.Loads[1] -= b.delta
	}
	s.Time += 3
	s.Moved += 2
	s.Messages++
	return nil
}

func (b *fndScripted) Done(s *tokendist.State) bool { return b.doneAt > 0 && s.Steps >= b.doneAt }

// fndKeeper adds the optional Invariants method to a fndScripted.
type fndKeeper struct{ *fndScripted }

func (k fndKeeper) Invariants() tokendist.Invariant { return k.keeps }

// fndAccountant adds ExpectedTotal as well.
type fndAccountant struct{ fndKeeper }

func (a fndAccountant) ExpectedTotal(s *tokendist.State) int64 { return a.expected(s) }

func TestRunStopRulesTable(t *testing.T) {
	ring := fndMust(tokendist.Ring(8))
	spread := tokendist.Loads{20, 0, 0, 0, 0, 0, 0, 0}
	ctx := context.Background()
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	cases := []struct {
		name   string
		ctx    context.Context
		b      tokendist.Balancer
		opts   *tokendist.RunOptions
		status tokendist.Status
		steps  int64
		is     error
	}{
		{"Done", ctx, &fndScripted{name: "s", doneAt: 5}, nil, tokendist.StatusDone, 5, nil},
		{"Done not reached", ctx, &fndScripted{name: "s", doneAt: -1 + 1<<62}, &tokendist.RunOptions{MaxSteps: 3}, tokendist.StatusMaxSteps, 3, nil},
		{"Target", ctx, fndNeighbourExchange{}, &tokendist.RunOptions{UseTarget: true, TargetDiscrepancy: 6}, tokendist.StatusTarget, -1, nil},
		{"Target at start", ctx, fndNeighbourExchange{}, &tokendist.RunOptions{UseTarget: true, TargetDiscrepancy: 20}, tokendist.StatusTarget, 0, nil},
		{"Stable", ctx, fndNeighbourExchange{}, nil, tokendist.StatusStable, -1, nil},
		{"NoStability", ctx, fndNeighbourExchange{}, &tokendist.RunOptions{NoStability: true, MaxSteps: 500}, tokendist.StatusMaxSteps, 500, nil},
		{"MaxSteps", ctx, fndNeighbourExchange{}, &tokendist.RunOptions{MaxSteps: 3}, tokendist.StatusMaxSteps, 3, nil},
		{"Canceled", canceled, fndNeighbourExchange{}, nil, tokendist.StatusCanceled, 0, context.Canceled},
		{"Step error", ctx, &fndScripted{name: "s", failAt: 4, errToFail: errFnd}, nil, tokendist.StatusFailed, 4, errFnd},
		{"Default budget", ctx, &fndScripted{name: "s"}, nil, tokendist.StatusMaxSteps, tokendist.DefaultMaxSteps, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			orig := spread.Clone()
			r, err := tokendist.Run(tc.ctx, ring, spread, tc.b, tc.opts)
			require.Equal(t, orig, spread, "caller's loads changed")
			require.Equal(t, tc.status, r.Status, "%v", err)
			if tc.is != nil {
				fndCheckErr(t, err, tc.is)
			} else {
				require.NoError(t, err)
			}
			if tc.steps >= 0 {
				require.Equal(t, tc.steps, r.Steps)
			}
			total, verr := r.Loads.Validate()
			require.NoError(t, verr)
			require.Equal(t, int64(20), total)
			require.GreaterOrEqual(t, len(r.Trace), 1)
			require.Equal(t, int64(0), r.Trace[0].Step)
			require.Equal(t, r.Steps, r.Trace[len(r.Trace)-1].Step, "trace does not end at the last step")
			require.Equal(t, r.Loads.Discrepancy(), r.Trace[len(r.Trace)-1].Discrepancy)
			require.Equal(t, r.Loads.Discrepancy(), r.Discrepancy())
			require.Equal(t, tokendist.BalancerName(tc.b), r.Balancer)
			switch tc.status {
			case tokendist.StatusTarget:
				require.LessOrEqual(t, r.Discrepancy(), tc.opts.TargetDiscrepancy)
				if r.Steps > 0 {
					// It stopped at the first step meeting the target.
					again, _ := tokendist.Run(ctx, ring, spread, tc.b, &tokendist.RunOptions{MaxSteps: r.Steps - 1})
					require.Greater(t, again.Discrepancy(), tc.opts.TargetDiscrepancy)
				}
			case tokendist.StatusStable:
				// Stable: two more steps change nothing.
				// Neighbours differ by at most 1 around the ring of 8: at most 8/2.
				require.LessOrEqual(t, r.Discrepancy(), int64(4))
				more, _ := tokendist.Run(ctx, ring, r.Loads, tc.b, &tokendist.RunOptions{MaxSteps: 2})
				require.Equal(t, r.Loads, more.Loads)
			}
		})
	}
}

var errFnd = errors.New("fnd: scripted failure")

// TestRunDeadline stops a slow run with a context deadline: StatusCanceled, an error
// wrapping context.DeadlineExceeded, and a consistent partial result.
func TestRunDeadline(t *testing.T) {
	ring := fndMust(tokendist.Ring(6))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	b := &fndScripted{name: "slow", sleep: 2 * time.Millisecond}
	r, err := tokendist.Run(ctx, ring, tokendist.Loads{1, 2, 3, 4, 5, 6}, b, &tokendist.RunOptions{MaxSteps: 1 << 40, SampleEvery: 1})
	require.Equal(t, tokendist.StatusCanceled, r.Status)
	fndCheckErr(t, err, context.DeadlineExceeded, "slow")
	require.Greater(t, r.Steps, int64(0))
	require.Less(t, r.Steps, int64(1000))
	require.Equal(t, 3*r.Steps, r.Time)
	require.Equal(t, 2*r.Steps, r.Moved)
	require.Equal(t, r.Steps, r.Messages)
	require.Len(t, r.Trace, int(r.Steps)+1)
}

// TestRunPartialResult checks what a failed run returns: the loads and counters at the
// failure, a trace ending there, and an error naming the balancer and step.
func TestRunPartialResult(t *testing.T) {
	ring := fndMust(tokendist.Ring(4))
	loads := tokendist.Loads{5, 5, 5, 5}
	ctx := context.Background()

	// A Step error after a change at step 2.
	b := &fndScripted{name: "failing", changeAt: 2, delta: 3, failAt: 4, errToFail: errFnd}
	r, err := tokendist.Run(ctx, ring, loads, b, &tokendist.RunOptions{SampleEvery: 3})
	fndCheckErr(t, err, errFnd, "failing", "step 4")
	require.Equal(t, tokendist.StatusFailed, r.Status)
	require.Equal(t, int64(4), r.Steps)
	require.Equal(t, tokendist.Loads{8, 2, 5, 5}, r.Loads)
	require.Equal(t, []int64{0, 3, 4}, fndSteps(r.Trace))
	require.Equal(t, int64(12), r.Time)

	// A recorder error at step 3.
	rec := tokendist.RecorderFunc(func(s *tokendist.State, smp tokendist.Sample) error {
		if smp.Step == 3 {
			return errFnd
		}
		return nil
	})
	b = &fndScripted{name: "recorded"}
	r, err = tokendist.Run(ctx, ring, loads, b, &tokendist.RunOptions{SampleEvery: 1, Recorder: rec})
	fndCheckErr(t, err, errFnd, "recorder", "recorded", "step 3")
	require.Equal(t, tokendist.StatusFailed, r.Status)
	require.Equal(t, int64(3), r.Steps)
	require.Equal(t, []int64{0, 1, 2, 3}, fndSteps(r.Trace))

	// A recorder that fails on the very first sample.
	first := tokendist.RecorderFunc(func(*tokendist.State, tokendist.Sample) error { return errFnd })
	r, err = tokendist.Run(ctx, ring, loads, b, &tokendist.RunOptions{Recorder: first})
	fndCheckErr(t, err, errFnd, "step 0")
	require.Equal(t, tokendist.StatusFailed, r.Status)
	require.Zero(t, r.Steps)
	require.Len(t, r.Trace, 1)

	// An Init error.
	r, err = tokendist.Run(ctx, ring, loads, &fndScripted{name: "bad-init", initErr: errFnd}, nil)
	fndCheckErr(t, err, errFnd, "bad-init")
	require.Equal(t, tokendist.StatusFailed, r.Status)
	require.Equal(t, "bad-init", r.Balancer)

	// Bad input still names the balancer in the result.
	r, err = tokendist.Run(ctx, ring, tokendist.Loads{1}, &fndScripted{name: "named"}, nil)
	fndCheckErr(t, err, tokendist.ErrBadLoads, "1 loads", "4 nodes")
	require.Equal(t, "named", r.Balancer)
	require.Equal(t, tokendist.StatusFailed, r.Status)
}

func fndSteps(tr tokendist.Trace) []int64 {
	var out []int64
	for _, s := range tr {
		out = append(out, s.Step)
	}
	return out
}

// TestRunInvariants covers the declared invariants: conservation and non-negativity
// violations are InvariantErrors at the right step; balancers that may go negative are
// counted instead; an Accountant's total is checked against ExpectedTotal.
func TestRunInvariants(t *testing.T) {
	ring := fndMust(tokendist.Ring(4))
	loads := tokendist.Loads{5, 5, 5, 5}
	ctx := context.Background()
	every := &tokendist.RunOptions{SampleEvery: 1, MaxSteps: 10}

	cases := []struct {
		name   string
		b      tokendist.Balancer
		opts   *tokendist.RunOptions
		inv    tokendist.Invariant
		atStep int64
	}{
		{"leak", &fndScripted{name: "leak", changeAt: 3, bump: 1}, every, tokendist.Conserves, 4},
		{"leak seen at the end", &fndScripted{name: "leak", changeAt: 3, bump: -1}, &tokendist.RunOptions{MaxSteps: 10}, tokendist.Conserves, 10},
		{"negative", &fndScripted{name: "neg", changeAt: 2, delta: 6}, every, tokendist.NonNegative, 3},
		{"accountant wrong", fndAccountant{fndKeeper{&fndScripted{name: "acct", changeAt: 2, bump: 4, keeps: tokendist.NonNegative,
			expected: func(*tokendist.State) int64 { return 20 }}}}, every, tokendist.Conserves, 3},
		{"negative though declared", fndKeeper{&fndScripted{name: "decl", changeAt: 1, delta: 9, keeps: tokendist.Conserves | tokendist.NonNegative}},
			every, tokendist.NonNegative, 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r, err := tokendist.Run(ctx, ring, loads, tc.b, tc.opts)
			var ie *tokendist.InvariantError
			require.ErrorAs(t, err, &ie)
			fndCheckErr(t, err, nil, tokendist.BalancerName(tc.b), tc.inv.String())
			require.Equal(t, tc.inv, ie.Invariant)
			require.Equal(t, tc.atStep, ie.Step)
			require.Equal(t, tokendist.StatusFailed, r.Status)
		})
	}

	// Declared possibly negative: counted, not failed.
	neg := fndKeeper{&fndScripted{name: "fgs-like", changeAt: 2, delta: 8, keeps: tokendist.Conserves}}
	r, err := tokendist.Run(ctx, ring, loads, neg, &tokendist.RunOptions{MaxSteps: 6, SampleEvery: 2})
	require.NoError(t, err)
	require.Equal(t, int64(4), r.NegativeSteps, "steps 3..6 end negative")
	require.Equal(t, int64(-3), r.MostNegative)
	require.Equal(t, 1, r.Trace[len(r.Trace)-1].Negative)
	require.Equal(t, 0, r.Trace[1].Negative)
	require.Contains(t, r.String(), "negative after 4 steps (lowest -3)")

	// An Accountant with the right expectation passes.
	grow := fndAccountant{fndKeeper{&fndScripted{name: "spawn", changeAt: 2, bump: 7, keeps: tokendist.NonNegative,
		expected: func(s *tokendist.State) int64 {
			if s.Steps >= 3 {
				return 27
			}
			return 20
		}}}}
	r, err = tokendist.Run(ctx, ring, loads, grow, every)
	require.NoError(t, err)
	require.Equal(t, int64(27), r.Loads.Total())

	// A balancer that keeps neither invariant and is no Accountant is not checked.
	free := fndKeeper{&fndScripted{name: "free", changeAt: 2, bump: -9}}
	r, err = tokendist.Run(ctx, ring, loads, free, every)
	require.NoError(t, err)
	require.Equal(t, int64(-4), r.Loads[0])
}

// TestRunSamples checks the trace: samples every k steps plus the last, and each
// sample's metrics equal to the loads at that step.
func TestRunSamples(t *testing.T) {
	g := fndMust(tokendist.Ring(10))
	loads, _ := tokendist.RandomRange(10, 0, 50, 3)
	var seen []tokendist.Loads
	rec := tokendist.RecorderFunc(func(s *tokendist.State, smp tokendist.Sample) error {
		seen = append(seen, s.Loads.Clone())
		require.Equal(t, s.Steps, smp.Step)
		return nil
	})
	r, err := tokendist.Run(context.Background(), g, loads, fndNeighbourExchange{}, &tokendist.RunOptions{SampleEvery: 4, MaxSteps: 10, NoStability: true, Recorder: rec})
	require.NoError(t, err)
	require.Equal(t, []int64{0, 4, 8, 10}, fndSteps(r.Trace))
	require.Len(t, seen, 4)
	for k, smp := range r.Trace {
		l := seen[k]
		require.Equal(t, l.Max(), smp.Max)
		require.Equal(t, l.Min(), smp.Min)
		require.Equal(t, l.Discrepancy(), smp.Discrepancy)
		require.Equal(t, l.Potential(), smp.Potential)
		require.Equal(t, smp.Step, smp.Time)
		require.Equal(t, 5*smp.Step, smp.Messages)
	}
	require.Equal(t, seen[len(seen)-1], r.Loads)
	// The potential never increases under token exchange.
	for k := 1; k < len(r.Trace); k++ {
		require.LessOrEqual(t, r.Trace[k].Potential.Cmp(r.Trace[k-1].Potential), 0)
	}
}

// fndRandomWalker moves one token along a random link chosen with s.Rand.
type fndRandomWalker struct{ g *tokendist.Graph }

func (w *fndRandomWalker) Init(s *tokendist.State) error {
	g, err := tokendist.AsGraph(s.Net)
	w.g = g
	return err
}

func (w *fndRandomWalker) Step(s *tokendist.State) error {
	u := s.Rand.IntN(w.g.Order())
	if nb := w.g.Neighbors(u); len(nb) > 0 && s.Loads[u] > 0 {
		v := nb[s.Rand.IntN(len(nb))]
		s.Loads[u]--
		s.Loads[v]++
		s.Moved++
	}
	s.Time++
	return nil
}

// TestRunSeedAndOptions checks the run's random source (same seed, same run; another
// seed, another run), Workers, and a Network that is not a *Graph.
func TestRunSeedAndOptions(t *testing.T) {
	g := fndMust(tokendist.Torus(4, 4))
	loads, _ := tokendist.PointMass(16, 100, 0)
	run := func(seed uint64, net tokendist.Network) tokendist.Result {
		r, err := tokendist.Run(context.Background(), net, loads, &fndRandomWalker{}, &tokendist.RunOptions{MaxSteps: 300, Seed: seed, SampleEvery: 50})
		require.NoError(t, err)
		return r
	}
	a, b, c := run(1, g), run(1, g), run(2, g)
	require.Equal(t, a, b)
	require.NotEqual(t, a.Loads, c.Loads)
	// The same run on an equivalent custom Network.
	d := run(1, fndFuncNet{g.Order(), g.Neighbors})
	require.Equal(t, a, d)

	var workers []int
	probe := tokendist.RecorderFunc(func(s *tokendist.State, _ tokendist.Sample) error {
		workers = append(workers, s.Workers)
		require.Equal(t, uint64(9), s.Seed)
		return nil
	})
	for _, w := range []int{0, 1, 3} {
		_, err := tokendist.Run(context.Background(), g, loads, fndNeighbourExchange{}, &tokendist.RunOptions{MaxSteps: 1, Workers: w, Seed: 9, Recorder: probe})
		require.NoError(t, err)
	}
	gm := runtime.GOMAXPROCS(0)
	require.Equal(t, []int{gm, gm, 1, 1, 3, 3}, workers)
}

func TestRunOptionErrors(t *testing.T) {
	g := fndMust(tokendist.Path(3))
	loads := tokendist.Loads{1, 2, 3}
	for _, tc := range []struct {
		opts  tokendist.RunOptions
		words string
	}{
		{tokendist.RunOptions{MaxSteps: -5}, "MaxSteps -5"},
		{tokendist.RunOptions{SampleEvery: -2}, "SampleEvery -2"},
	} {
		r, err := tokendist.Run(context.Background(), g, loads, fndNeighbourExchange{}, &tc.opts)
		fndCheckErr(t, err, tokendist.ErrBadParameter, tc.words)
		require.Equal(t, tokendist.StatusFailed, r.Status)
	}
}

func TestRunNames(t *testing.T) {
	require.Equal(t, "neighbour-exchange", tokendist.BalancerName(fndNeighbourExchange{}))
	require.Equal(t, "*tokendist_test.fndRandomWalker", tokendist.BalancerName(&fndRandomWalker{}))
	for s, name := range []string{"NotStarted", "Done", "Target", "Stable", "MaxSteps", "Canceled", "Failed"} {
		st := tokendist.Status(s)
		require.Equal(t, name, st.String())
		text, err := st.MarshalText()
		require.NoError(t, err)
		require.Equal(t, name, string(text))
		var back tokendist.Status
		require.NoError(t, back.UnmarshalText(text))
		require.Equal(t, st, back)
	}
	require.Equal(t, "Status(7)", tokendist.Status(7).String())
	require.Equal(t, "Status(-1)", tokendist.Status(-1).String())
	require.Equal(t, "conservation", tokendist.Conserves.String())
	require.Equal(t, "non-negativity", tokendist.NonNegative.String())
	require.Equal(t, "conservation|non-negativity", (tokendist.Conserves | tokendist.NonNegative).String())
	require.Equal(t, "none", tokendist.Invariant(0).String())
	require.Equal(t, "Invariant(4)", tokendist.Invariant(4).String())

	g := fndMust(tokendist.Ring(4))
	r, err := tokendist.Run(context.Background(), g, tokendist.Loads{9, 0, 0, 3}, fndNeighbourExchange{}, nil)
	require.NoError(t, err)
	require.Equal(t, fmt.Sprintf("neighbour-exchange: Stable after %d steps (time %d), discrepancy %d, moved %d, messages %d",
		r.Steps, r.Time, r.Discrepancy(), r.Moved, r.Messages), r.String())
	require.Equal(t, int64(12), r.Loads.Total())
}

// fndTrace returns a trace with extreme values, including a potential above 2^64.
func fndTrace() tokendist.Trace {
	return tokendist.Trace{
		{Step: 0, Time: 0, Discrepancy: math.MaxInt64, Max: math.MaxInt64, Min: 0,
			Potential: tokendist.Uint128{Hi: 1 << 62, Lo: 12345}, Moved: 0, Messages: 0},
		{Step: 7, Round: 7.0 / 3, Time: 21, Discrepancy: 3, Max: 5, Min: 2, Potential: tokendist.Uint128{Lo: 99}, Moved: 14, Messages: 7, Negative: 0},
		{Step: 9, Round: 3, Time: 30, Discrepancy: 4, Max: 2, Min: -2, Potential: tokendist.Uint128{Lo: 8}, Moved: 15, Messages: 9, Negative: 1},
	}
}

// TestTraceCSV writes a trace as CSV and reads it back field by field.
func TestTraceCSV(t *testing.T) {
	for _, tr := range []tokendist.Trace{fndTrace(), nil} {
		var buf bytes.Buffer
		require.NoError(t, tr.WriteCSV(&buf))
		rows, err := csv.NewReader(&buf).ReadAll()
		require.NoError(t, err)
		require.Equal(t, []string{"step", "time", "discrepancy", "max", "min", "potential", "moved", "messages", "negative", "round"}, rows[0])
		require.Len(t, rows, len(tr)+1)
		var back tokendist.Trace
		for _, row := range rows[1:] {
			num := func(i int) int64 {
				x, err := strconv.ParseInt(row[i], 10, 64)
				require.NoError(t, err)
				return x
			}
			var p tokendist.Uint128
			require.NoError(t, p.UnmarshalText([]byte(row[5])))
			round, err := strconv.ParseFloat(row[9], 64)
			require.NoError(t, err)
			back = append(back, tokendist.Sample{Step: num(0), Round: round, Time: num(1), Discrepancy: num(2), Max: num(3), Min: num(4),
				Potential: p, Moved: num(6), Messages: num(7), Negative: int(num(8))})
		}
		require.Equal(t, tr, back)
	}
	// A failing writer's error is returned.
	require.ErrorIs(t, fndTrace().WriteCSV(fndFailWriter{}), errFnd)
}

// TestTraceJSON writes a trace as JSON and decodes it back into a Trace.
func TestTraceJSON(t *testing.T) {
	tr := fndTrace()
	var buf bytes.Buffer
	require.NoError(t, tr.WriteJSON(&buf))
	require.Contains(t, buf.String(), `"potential": "85070591730234615865843651857942065209"`)
	var back tokendist.Trace
	require.NoError(t, json.Unmarshal(buf.Bytes(), &back))
	require.Equal(t, tr, back)
	// A whole Result round-trips too (Status by name).
	g := fndMust(tokendist.Ring(6))
	r, err := tokendist.Run(context.Background(), g, tokendist.Loads{12, 0, 0, 0, 0, 0}, fndNeighbourExchange{}, &tokendist.RunOptions{SampleEvery: 1})
	require.NoError(t, err)
	js, err := json.Marshal(r)
	require.NoError(t, err)
	require.Contains(t, string(js), `"status":"Stable"`)
	var decoded tokendist.Result
	require.NoError(t, json.Unmarshal(js, &decoded))
	require.Equal(t, r, decoded)
	var st tokendist.Status
	fndCheckErr(t, st.UnmarshalText([]byte("Finished")), nil, `"Finished"`)
	require.ErrorIs(t, tr.WriteJSON(fndFailWriter{}), errFnd)
}

func TestTraceDiscrepancies(t *testing.T) {
	steps, disc := fndTrace().Discrepancies()
	require.Equal(t, []float64{0, 7, 9}, steps)
	require.Equal(t, []float64{math.MaxInt64, 3, 4}, disc)
	steps, disc = tokendist.Trace(nil).Discrepancies()
	require.Empty(t, steps)
	require.Empty(t, disc)
}

type fndFailWriter struct{}

func (fndFailWriter) Write([]byte) (int, error) { return 0, errFnd }

// TestFoundationBadInput gathers the foundation's bad-input rules of issue 2 in one
// table: every case is a "tokendist: " error wrapping the right sentinel and naming the
// bad value.
func TestFoundationBadInput(t *testing.T) {
	ctx := context.Background()
	ring := fndMust(tokendist.Ring(4))
	split := fndMust(tokendist.NewGraph(4, [][2]int{{0, 1}, {2, 3}}))
	run := func(net tokendist.Network, l tokendist.Loads) error {
		_, err := tokendist.Run(ctx, net, l, fndNeighbourExchange{}, nil)
		return err
	}
	cases := []struct {
		name  string
		err   func() error
		is    error
		words []string
	}{
		{"negative size", func() error { _, err := tokendist.Ring(-4); return err }, tokendist.ErrBadParameter, []string{"-4"}},
		{"negative dimension", func() error { _, err := tokendist.Hypercube(-2); return err }, tokendist.ErrBadParameter, []string{"-2"}},
		{"negative side", func() error { _, err := tokendist.Torus(3, -3); return err }, tokendist.ErrBadParameter, []string{"-3"}},
		{"k < 1", func() error { _, err := tokendist.KaryTree(tokendist.KaryShape{Height: 2, Arity: 0}); return err }, tokendist.ErrBadParameter, []string{"k = 0"}},
		{"degree ≥ n", func() error { _, err := tokendist.RandomRegular(6, 6, 1); return err }, tokendist.ErrBadParameter, []string{"d = 6"}},
		{"n·d odd", func() error { _, err := tokendist.RandomRegular(7, 3, 1); return err }, tokendist.ErrBadParameter, []string{"n = 7", "d = 3"}},
		{"loads too short", func() error { return run(ring, tokendist.Loads{1, 2, 3}) }, tokendist.ErrBadLoads, []string{"3 loads", "4 nodes"}},
		{"loads too long", func() error { return run(ring, tokendist.Loads{1, 2, 3, 4, 5}) }, tokendist.ErrBadLoads, []string{"5 loads", "4 nodes"}},
		{"negative load", func() error { return run(ring, tokendist.Loads{1, 2, -7, 4}) }, tokendist.ErrBadLoads, []string{"-7", "node 2"}},
		{"total overflow", func() error { return run(ring, tokendist.Loads{math.MaxInt64, 0, 1, 0}) }, tokendist.ErrBadLoads, []string{"overflows", "node 2"}},
		{"disconnected: DistanceLoads", func() error { _, err := tokendist.DistanceLoads(split, 0); return err }, tokendist.ErrNotConnected, []string{"4 nodes", "2 edges"}},
		{"disconnected: Diameter", func() error { _, err := split.Diameter(); return err }, tokendist.ErrNotConnected, []string{"4 nodes", "2 edges"}},
		{"disconnected: Center", func() error { _, err := split.Center(); return err }, tokendist.ErrNotConnected, []string{"4 nodes", "2 edges"}},
		{"disconnected: Eccentricities", func() error { _, err := split.Eccentricities(); return err }, tokendist.ErrNotConnected, []string{"4 nodes", "2 edges"}},
		{"disconnected: BFSTree", func() error { _, _, err := split.BFSTree(0); return err }, tokendist.ErrNotConnected, []string{"node 2"}},
		{"disconnected: Peripheral", func() error { _, err := tokendist.Peripheral(split); return err }, tokendist.ErrNotConnected, []string{"4 nodes", "2 edges"}},
		{"no connected 1-regular graph", func() error { _, err := tokendist.RandomRegular(8, 1, 1); return err }, tokendist.ErrNotConnected, []string{"8 nodes"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { fndCheckErr(t, tc.err(), tc.is, tc.words...) })
	}
}

func TestReadTraceCSVRoundTrip(t *testing.T) {
	g, _ := tokendist.Path(12)
	loads, _ := tokendist.PointMass(12, 1<<40, 0)
	b, _ := tokendist.NewRandomizedDiffusion(g)
	res, err := tokendist.Run(context.Background(), g, loads, b, &tokendist.RunOptions{MaxSteps: 50, SampleEvery: 3, Seed: 9})
	require.NoError(t, err)
	fuzzRoundTrip(t, res.Trace)
	for _, bad := range []string{"", "step\n", "step,time,discrepancy,max,min,potential,moved,messages,negative\n1,2,3\n",
		"step,time,discrepancy,max,min,potential,moved,messages,negative\n1,2,3,4,5,x,7,8,9\n"} {
		if _, err := tokendist.ReadTraceCSV(strings.NewReader(bad)); err == nil || !strings.HasPrefix(err.Error(), "tokendist: ") {
			t.Errorf("ReadTraceCSV(%q): %v", bad, err)
		}
	}
}

// FuzzTraceCSV reads arbitrary bytes as a trace CSV: either a short prefixed error, or a
// trace that writes back and reads back to itself. It also round-trips traces built
// from the fuzzer's numbers.
func FuzzTraceCSV(f *testing.F) {
	var buf bytes.Buffer
	tr := tokendist.Trace{{Step: 0, Time: 0, Discrepancy: 5, Max: 5, Min: 0, Potential: tokendist.Uint128{Hi: 1, Lo: 2}, Moved: 0, Messages: 0, Negative: 0},
		{Step: 3, Time: math.MaxInt64, Discrepancy: 1, Max: 2, Min: 1, Moved: 9, Messages: 4, Negative: 2}}
	require.NoError(f, tr.WriteCSV(&buf))
	f.Add(buf.Bytes(), int64(1), int64(2), uint64(3))
	f.Add([]byte("step,time\n1,2\n"), int64(-1), int64(math.MinInt64), uint64(math.MaxUint64))
	f.Add([]byte("step,time,discrepancy,max,min,potential,moved,messages,negative\n1,2,3,4,5,-6,7,8,9\n"), int64(0), int64(0), uint64(0))
	f.Fuzz(func(t *testing.T, data []byte, a, b int64, p uint64) {
		got, err := tokendist.ReadTraceCSV(bytes.NewReader(data))
		fuzzPrefixed(t, err)
		if err == nil {
			fuzzRoundTrip(t, got)
		}
		fuzzRoundTrip(t, tokendist.Trace{{Step: a, Time: b, Discrepancy: a ^ b, Max: b, Min: a, Potential: tokendist.Uint128{Hi: p, Lo: ^p}, Moved: a, Messages: b, Negative: int(int32(p))}})
	})
}

func fuzzRoundTrip(t *testing.T, tr tokendist.Trace) {
	t.Helper()
	var buf bytes.Buffer
	if err := tr.WriteCSV(&buf); err != nil {
		t.Fatalf("WriteCSV: %v", err)
	}
	back, err := tokendist.ReadTraceCSV(&buf)
	require.NoError(t, err, "ReadTraceCSV of WriteCSV output")
	if len(back) != len(tr) || (len(tr) > 0 && !reflect.DeepEqual(back, tr)) {
		t.Fatalf("round trip: %v, want %v", back, tr)
	}
}

// TestTraceCSVRound: ReadTraceCSV reads the round column back, reads a trace written
// before it existed (Round 0), and refuses a round that is not a finite number ≥ 0.
func TestTraceCSVRound(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, fndTrace().WriteCSV(&buf))
	back, err := tokendist.ReadTraceCSV(bytes.NewReader(buf.Bytes()))
	require.NoError(t, err)
	require.Equal(t, fndTrace(), back)

	old := "step,time,discrepancy,max,min,potential,moved,messages,negative\n7,21,3,5,2,99,14,7,0\n"
	back, err = tokendist.ReadTraceCSV(strings.NewReader(old))
	require.NoError(t, err)
	require.Equal(t, tokendist.Trace{{Step: 7, Time: 21, Discrepancy: 3, Max: 5, Min: 2, Potential: tokendist.Uint128{Lo: 99}, Moved: 14, Messages: 7}}, back)

	for _, bad := range []string{"NaN", "-1", "+Inf", "x", ""} {
		in := "step,time,discrepancy,max,min,potential,moved,messages,negative,round\n7,21,3,5,2,99,14,7,0," + bad + "\n"
		_, err := tokendist.ReadTraceCSV(strings.NewReader(in))
		require.ErrorContains(t, err, "column round", bad)
		require.True(t, strings.HasPrefix(err.Error(), "tokendist: "))
	}
}

// TestResultRounds: a dimension-exchange step is one colour's matching, so its round is
// χ steps (Result.Rounds = Steps/χ, fractional inside a round, and every sample's Round
// = Step/χ); a diffusion step is a round; a balancer's negative RoundSteps is refused.
func TestResultRounds(t *testing.T) {
	tree := fndMust(tokendist.KaryTree(tokendist.KaryShape{Height: 3, Arity: 2}))
	dx, err := tokendist.NewThreshold1(tree, nil)
	require.NoError(t, err)
	chi := float64(dx.Colors())
	require.Greater(t, chi, 1.0)
	loads := make(tokendist.Loads, tree.Order())
	loads[0] = 100
	for _, steps := range []int64{1, 7, 12} {
		r, err := tokendist.Run(context.Background(), tree, loads, dx, &tokendist.RunOptions{MaxSteps: steps, SampleEvery: 1, NoStability: true})
		require.NoError(t, err)
		require.Equal(t, steps, r.Steps)
		require.Equal(t, float64(steps)/chi, r.Rounds)
		for _, smp := range r.Trace {
			require.Equal(t, float64(smp.Step)/chi, smp.Round)
		}
	}
	torus := fndMust(tokendist.Torus(4, 4))
	rd, err := tokendist.NewRandomizedDiffusion(torus)
	require.NoError(t, err)
	r, err := tokendist.Run(context.Background(), torus, tokendist.Loads{64, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, rd, &tokendist.RunOptions{MaxSteps: 5})
	require.NoError(t, err)
	require.Equal(t, float64(r.Steps), r.Rounds)

	bad := &tokendist.Funcs{StepFunc: func(*tokendist.State) error { return nil }, InitFunc: func(s *tokendist.State) error { s.RoundSteps = -2; return nil }}
	_, err = tokendist.Run(context.Background(), torus, make(tokendist.Loads, 16), bad, &tokendist.RunOptions{MaxSteps: 1})
	require.ErrorIs(t, err, tokendist.ErrBadParameter)
	require.ErrorContains(t, err, "RoundSteps to -2")
}
