package tokendist

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tokendist/tokendist/internal/par"
)

// roundCases are graphs with colourings of 2..Δ+1 colours: trees in heap and random
// order, a ring, a torus, a hypercube and random regular graphs (Misra–Gries colourings).
func roundCases(t *testing.T) map[string]*Graph {
	t.Helper()
	cases := map[string]*Graph{}
	add := func(name string, g *Graph, err error) {
		require.NoError(t, err, name)
		cases[name] = g
	}
	for _, n := range []int{1, 2, 3, 7, 100, 5000} {
		g, err := RandomTree(n, uint64(n))
		add(fmt.Sprint("RandomTree", n), g, err)
		g, err = Path(n)
		add(fmt.Sprint("Path", n), g, err)
	}
	g, err := KaryTree(KaryShape{Height: 13, Arity: 2})
	add("Binary13", g, err)
	g, err = KaryTree(KaryShape{Height: 5, Arity: 5})
	add("5ary5", g, err)
	g, err = Ring(1001)
	add("Ring1001", g, err)
	g, err = Torus(40, 30)
	add("Torus40x30", g, err)
	g, err = Hypercube(10)
	add("Hypercube10", g, err)
	g, err = RandomRegular(3000, 5, 7)
	add("RandomRegular3000x5", g, err)
	g, err = Star(50)
	add("Star50", g, err)
	g, err = KaryTree(KaryShape{Height: 15, Arity: 2}) // 65535 edges: Round splits it with 2 workers
	add("Binary15", g, err)
	return cases
}

// TestFusedScheduleIsTopological checks that the fused orders (several window sizes, and
// the parallel plans for 1 to 5 parts with their parts in either order before the cone)
// hold every edge once and meet each node's edges in colour order.
func TestFusedScheduleIsTopological(t *testing.T) {
	for name, g := range roundCases(t) {
		ec, err := DefaultColoring(g)
		require.NoError(t, err)
		var orders [][]int32
		for _, w := range []int{1, 3, 64, fusedWindow, 1 << 30} {
			orders = append(orders, fusedSchedule(g.Order(), ec.match, w))
		}
		for parts := 1; parts <= 5; parts++ {
			plan := newFusedPlan(g, ec.match, parts)
			var fwd, back []int32 // the parts in both orders, then the cone
			for i := range plan.parts {
				fwd = append(fwd, plan.parts[i]...)
				back = append(back, plan.parts[len(plan.parts)-1-i]...)
			}
			orders = append(orders, append(fwd, plan.cone...), append(back, plan.cone...))
		}
		for w, p := range orders {
			require.Equal(t, 2*g.Size(), len(p), "%s order %d: %d pairs for %d edges", name, w, len(p)/2, g.Size())
			last := make([]int, g.Order())
			for v := range last {
				last[v] = -1
			}
			seen := map[[2]int32]bool{}
			for i := 0; i < len(p); i += 2 {
				u, v := p[i], p[i+1]
				if seen[[2]int32{u, v}] {
					t.Fatalf("%s order %d: edge (%d, %d) twice", name, w, u, v)
				}
				seen[[2]int32{u, v}] = true
				c := ec.Color(int(u), int(v))
				if c <= last[u] || c <= last[v] {
					t.Fatalf("%s order %d: edge (%d, %d) of colour %d after colours %d, %d at its ends", name, w, u, v, c, last[u], last[v])
				}
				last[u], last[v] = c, c
			}
		}
	}
}

// TestRoundMatchesSteps checks that Round leaves the loads and counters of χ calls of
// Step, bit for bit, for THRESHOLD-1 on trees and THRESHOLD-2 on every case, from
// random and point-mass loads, over many rounds and seeds, with one and two workers.
func TestRoundMatchesSteps(t *testing.T) {
	par.Acquire() // as Run does: parallel rounds really run concurrently
	defer par.Release()
	for name, g := range roundCases(t) {
		type ctor struct {
			name string
			f    func(*Graph, *EdgeColoring) (*DimensionExchange, error)
		}
		ctors := []ctor{{"T2", NewThreshold2}}
		if g.Size() == g.Order()-1 {
			ctors = append(ctors, ctor{"T1", NewThreshold1})
		}
		for _, c := range ctors {
			for seed := uint64(1); seed <= 4; seed++ {
				loads, err := RandomRange(g.Order(), 0, int64(10*seed*seed), seed)
				require.NoError(t, err)
				if seed == 4 {
					loads, _ = PointMass(g.Order(), int64(3*g.Order()), 0)
				}
				for _, workers := range []int{1, 2} {
					a, err := c.f(g, nil)
					require.NoError(t, err)
					b, _ := c.f(g, a.Coloring())
					sa := &State{Net: g, Loads: loads.Clone(), Workers: workers}
					sb := &State{Net: g, Loads: loads.Clone(), Workers: workers}
					require.NoError(t, a.Init(sa))
					require.NoError(t, b.Init(sb))
					for r := 0; r < 25; r++ {
						n, err := a.round(sa)
						require.NoError(t, err)
						sa.Steps += n // Run counts the steps of a round
						for k := 0; k < a.Colors(); k++ {
							require.NoError(t, b.Step(sb))
							sb.Steps++
						}
						require.Equal(t, sb.Steps, sa.Steps, "%s %s seed %d workers %d round %d: steps", name, c.name, seed, workers, r)
						require.Equal(t, sb.Time, sa.Time, "%s %s seed %d workers %d round %d: time", name, c.name, seed, workers, r)
						require.Equal(t, sb.Moved, sa.Moved, "%s %s seed %d workers %d round %d: moved", name, c.name, seed, workers, r)
						require.Equal(t, sb.Messages, sa.Messages, "%s %s seed %d workers %d round %d: messages", name, c.name, seed, workers, r)
						for v := range sa.Loads {
							if sa.Loads[v] != sb.Loads[v] {
								t.Fatalf("%s %s seed %d workers %d round %d: node %d has %d, steps give %d", name, c.name, seed, workers, r, v, sa.Loads[v], sb.Loads[v])
							}
						}
					}
				}
			}
		}
	}
}

// TestRunRoundsMatchSteps checks that Run gives the same result whether it steps whole
// rounds (SampleEvery 0) or single steps (SampleEvery 1 disables rounds), including a
// MaxSteps that ends inside a round and the stability stop.
func TestRunRoundsMatchSteps(t *testing.T) {
	g, err := RandomTree(2000, 3)
	require.NoError(t, err)
	loads, _ := RandomRange(g.Order(), 0, 50, 9)
	probe, _ := NewThreshold1(g, nil)
	chi := int64(probe.Colors())
	for every, want := range map[int64]bool{0: true, 1: false, 2 * chi: true, chi + 1: false} {
		d, _ := NewThreshold1(g, nil)
		r, err := newRunner(g, loads, d, &RunOptions{SampleEvery: every})
		require.NoError(t, err)
		got := r.rounder != nil
		require.Equal(t, want, got, "SampleEvery %d (χ = %d): whole rounds %v, want %v", every, chi, got, want)
	}
	for _, maxSteps := range []int64{0, 1, 7, 301} {
		var res [2]Result
		for i, every := range []int64{0, 1} {
			d, err := NewThreshold1(g, nil)
			require.NoError(t, err)
			r, err := Run(context.Background(), g, loads, d, &RunOptions{MaxSteps: maxSteps, SampleEvery: every, Workers: 1})
			require.NoError(t, err)
			res[i] = r
		}
		a, b := res[0], res[1]
		require.Equal(t, b.Status, a.Status, "MaxSteps %d: status", maxSteps)
		require.Equal(t, b.Steps, a.Steps, "MaxSteps %d: steps", maxSteps)
		require.Equal(t, b.Time, a.Time, "MaxSteps %d: time", maxSteps)
		require.Equal(t, b.Moved, a.Moved, "MaxSteps %d: moved", maxSteps)
		require.Equal(t, b.Messages, a.Messages, "MaxSteps %d: messages", maxSteps)
		require.True(t, slices.Equal(a.Loads, b.Loads), "MaxSteps %d: rounds give loads %v, steps give %v", maxSteps, a.Loads, b.Loads)
	}
}

// TestRoundShortLoads checks that round and Step refuse a load vector shorter than the
// graph (their kernels index it without bounds checks).
func TestRoundShortLoads(t *testing.T) {
	g, _ := Path(10)
	d, _ := NewThreshold1(g, nil)
	round := func(s *State) error { _, err := d.round(s); return err }
	for _, f := range []func(*State) error{round, d.Step} {
		s := &State{Net: g, Loads: make(Loads, 10), Workers: 1}
		require.NoError(t, d.Init(s))
		s.Loads = s.Loads[:9]
		require.Error(t, f(s), "no error for 9 loads on 10 nodes")
	}
}

// TestRoundDoesNotAllocate checks that Round allocates nothing after its first call, on
// one worker (fused pass) and on two (parts, then cone).
func TestRoundDoesNotAllocate(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's runtime allocates")
	}
	par.Acquire()
	defer par.Release()
	g, err := KaryTree(KaryShape{Height: 15, Arity: 2})
	require.NoError(t, err)
	loads, _ := RandomRange(g.Order(), 0, 100, 1)
	for _, workers := range []int{1, 2} {
		d, _ := NewThreshold1(g, nil)
		s := &State{Net: g, Loads: loads.Clone(), Workers: workers}
		require.NoError(t, d.Init(s))
		_, err := d.round(s)
		require.NoError(t, err)
		if a := testing.AllocsPerRun(20, func() {
			_, err := d.round(s)
			require.NoError(t, err)
		}); a != 0 {
			t.Errorf("workers %d: %v allocations per Round", workers, a)
		}
	}
}

// stepTwin returns a second balancer on d's colouring and a State for it with the same
// loads, counters and workers, for comparing round against χ calls of Step.
func stepTwin(t *testing.T, d *DimensionExchange, s *State, ctor func(*Graph, *EdgeColoring) (*DimensionExchange, error)) (*DimensionExchange, *State) {
	t.Helper()
	b, err := ctor(d.Graph(), d.Coloring())
	require.NoError(t, err)
	sb := &State{Net: s.Net, Loads: s.Loads.Clone(), Workers: s.Workers, Steps: s.Steps, Time: s.Time, Moved: s.Moved, Messages: s.Messages}
	if s.Live != nil {
		sb.Live = slices.Clone(s.Live)
	}
	require.NoError(t, b.Init(sb))
	return b, sb
}

func requireSameState(t *testing.T, want, got *State, what string) {
	t.Helper()
	require.Equal(t, want.Time, got.Time, "%s: time", what)
	require.Equal(t, want.Moved, got.Moved, "%s: moved", what)
	require.Equal(t, want.Messages, got.Messages, "%s: messages", what)
	require.True(t, slices.Equal(want.Loads, got.Loads), "%s: loads differ", what)
}

// TestRoundMidRound: a round that starts inside a round (s.Steps not a multiple of χ)
// performs the χ steps s.Steps … s.Steps+χ−1, colours s.Steps mod χ onwards, like χ calls
// of Step, and so does a round with links down (State.Live); the fused pass, which
// applies the colours from 0 over every link, is for whole rounds without churn only.
func TestRoundMidRound(t *testing.T) {
	g, err := RandomTree(3000, 5)
	require.NoError(t, err)
	for _, ctor := range []func(*Graph, *EdgeColoring) (*DimensionExchange, error){NewThreshold1, NewThreshold2} {
		for _, offset := range []int64{0, 1, 2} {
			for _, churn := range []bool{false, true} {
				d, err := ctor(g, nil)
				require.NoError(t, err)
				chi := int64(d.Colors())
				require.GreaterOrEqual(t, chi, int64(3))
				loads, _ := RandomRange(g.Order(), 0, 40, uint64(offset))
				s := &State{Net: g, Loads: loads, Workers: 1, Steps: 5*chi + offset}
				if churn {
					s.Live = make([]bool, 2*g.Size())
					for e := range s.Live {
						s.Live[e] = e%7 != 0
					}
					for u := 0; u < g.Order(); u++ { // make both ends of every link agree
						for e := g.off[u]; e < g.off[u+1]; e++ {
							if v := int(g.adj[e]); v > u {
								s.Live[g.EdgeIndex(v, u)] = s.Live[e]
							}
						}
					}
				}
				require.NoError(t, d.Init(s))
				b, sb := stepTwin(t, d, s, ctor)
				for r := 0; r < 3; r++ {
					n, err := d.round(s)
					require.NoError(t, err)
					require.Equal(t, chi, n)
					s.Steps += n
					for k := int64(0); k < chi; k++ {
						require.NoError(t, b.Step(sb))
						sb.Steps++
					}
					requireSameState(t, sb, s, fmt.Sprintf("%v offset %d churn %v round %d", d, offset, churn, r))
				}
			}
		}
	}
}

// TestRoundWorkersChange: the parallel fused round keeps one plan per worker count; a
// balancer whose runs (or rounds) use 3, then 2, then 4, then 3 workers gives the loads
// of χ single steps every time. GOMAXPROCS is raised to 4 for the test so that a tree of
// 70000 edges really splits 4 ways (par.Workers caps the count at GOMAXPROCS).
func TestRoundWorkersChange(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	par.Acquire()
	defer par.Release()
	g, err := RandomTree(70001, 2)
	require.NoError(t, err)
	require.GreaterOrEqual(t, g.Size(), 4*parallelMinEdges)
	d, err := NewThreshold1(g, nil)
	require.NoError(t, err)
	loads, _ := RandomRange(g.Order(), 0, 30, 4)
	s := &State{Net: g, Loads: loads, Workers: 3}
	require.NoError(t, d.Init(s))
	b, sb := stepTwin(t, d, s, NewThreshold1)
	chi := int64(d.Colors())
	for i, workers := range []int{3, 2, 4, 3, 1, 4} {
		s.Workers = workers
		n, err := d.round(s)
		require.NoError(t, err)
		s.Steps += n
		for k := int64(0); k < chi; k++ {
			require.NoError(t, b.Step(sb))
			sb.Steps++
		}
		requireSameState(t, sb, s, fmt.Sprintf("round %d, %d workers", i, workers))
		if workers > 1 {
			require.Len(t, d.plan.parts, workers, "round %d: the plan in use", i)
		}
	}
}

// TestRunRoundsUnderChurn: Run must not replace steps by whole rounds under churn, since
// the churn schedule changes the links before every step: a link that fails in the
// middle of a round is skipped from that step on. Results with whole-round sampling
// (SampleEvery χ) and with single-step sampling agree, and the failure is seen.
func TestRunRoundsUnderChurn(t *testing.T) {
	g, _ := Path(6) // χ = 2: colours alternate along the path
	start := Loads{60, 0, 0, 0, 0, 0}
	d, _ := NewThreshold1(g, nil)
	chi := int64(d.Colors())
	require.Equal(t, int64(2), chi)
	var res [3]Result
	for i, every := range []int64{chi, 1, 0} {
		// Events at odd steps, inside the rounds of two steps, on links of both colours.
		c, err := NewScheduledLinkChurn([]LinkEvent{{Step: 3, U: 0, V: 1}, {Step: 3, U: 1, V: 2}, {Step: 9, U: 0, V: 1, Up: true}, {Step: 9, U: 1, V: 2, Up: true}})
		require.NoError(t, err)
		d, _ := NewThreshold1(g, nil)
		r, err := newRunner(g, start, d, &RunOptions{SampleEvery: every, Churn: c})
		require.NoError(t, err)
		require.Nil(t, r.rounder, "SampleEvery %d: whole rounds under churn", every)
		free, err := newRunner(g, start, d, &RunOptions{SampleEvery: every})
		require.NoError(t, err)
		require.Equal(t, every != 1, free.rounder != nil, "SampleEvery %d without churn: whole rounds %v", every, free.rounder != nil)
		res[i], err = Run(context.Background(), g, start, d, &RunOptions{MaxSteps: 14, SampleEvery: every, Churn: c, NoStability: true})
		require.NoError(t, err)
	}
	for i := 1; i < 3; i++ {
		require.Equal(t, res[0].Moved, res[i].Moved)
		require.Equal(t, res[0].Loads, res[i].Loads)
	}
	// Reference without churn: the links (0, 1) and (1, 2) carry a token at every step of
	// their colours, so churn must leave node 0 with more.
	d2, _ := NewThreshold1(g, nil)
	free, err := Run(context.Background(), g, start, d2, &RunOptions{MaxSteps: 14, NoStability: true})
	require.NoError(t, err)
	require.Greater(t, res[0].Loads[0], free.Loads[0])
}
