package tokendist

import (
	"context"
	"math/bits"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tokendist/tokendist/internal/rng"
)

// referenceRound is a straightforward scatter implementation of one round of
// RandomizedDiffusion that takes the excess slots from the balancer's own draws
// (drawBatch, in chunk order with the same streams), to check the packed records and
// the gather pass of every format.
func referenceRound(t *testing.T, b *RandomizedDiffusion, s *State) (Loads, int64, int64) {
	g := b.ln.g
	next := make(Loads, g.Order())
	sent := map[[2]int]int64{} // tokens sent along each directed link
	var msgs int64
	D := b.slots
	var qs, ms [rdBatch]uint64
	var rs [rdBatch]uint8
	b.s = s
	defer func() { b.s = nil }()
	for c := 0; c < b.ln.chunks(); c++ {
		var st digits
		rng.Reseed(&st.src, s.Seed, s.Steps, c)
		v0, v1 := b.ln.chunkRange(c)
		for i := v0; i < v1; {
			require.LessOrEqual(t, D, uint64(64), "reference needs d+1 ≤ 64")
			j := b.drawBatch(&st, i, v1, &qs, &rs, &ms)
			for k := i; k < j; k++ {
				q, m := int64(qs[k-i]), ms[k-i]
				require.Equal(t, uint64(s.Loads[k]), qs[k-i]*D+uint64(rs[k-i]))
				next[k] += q * int64(D-uint64(g.Degree(k)))
				for p, nb := range g.Neighbors(k) {
					x := q + int64(m>>p&1)
					next[nb] += x
					sent[[2]int{k, int(nb)}] = x
					if x > 0 {
						msgs++
					}
				}
				// the excess that reaches no link stays (a mask drawn over the links
				// alone, selectSlots, has no bits at or above the degree)
				next[k] += int64(rs[k-i]) - int64(bits.OnesCount64(m&(1<<g.Degree(k)-1)))
			}
			i = j
		}
	}
	var moved int64
	for _, x := range sent {
		moved += x
	}
	return next, moved, msgs
}

// TestRandomizedMatchesReference runs rounds in every record format (chosen by the
// spread of the loads) and compares with the reference scatter implementation.
func TestRandomizedMatchesReference(t *testing.T) {
	t.Parallel()
	nets := map[string]func() (*Graph, error){
		"RandomRegular(9000,4)": func() (*Graph, error) { return RandomRegular(9000, 4, 3) },
		"Torus(70,70)":          func() (*Graph, error) { return Torus(70, 70) },
		"Star(40)":              func() (*Graph, error) { return Star(40) },
		"KaryTree(KaryShape{Height: 5, Arity: 3})": func() (*Graph, error) { return KaryTree(KaryShape{Height: 5, Arity: 3}) },
		"Complete(5)": func() (*Graph, error) { return Complete(5) },
	}
	seen := map[rdFormat]bool{}
	for name, mk := range nets {
		g, err := mk()
		require.NoError(t, err)
		b, err := NewRandomizedDiffusion(g)
		require.NoError(t, err)
		for _, spread := range []int64{60, 1000, 1 << 20, 1 << 40, 6 << 60} {
			loads, err := RandomRange(g.Order(), 0, min(spread, 100), uint64(spread))
			require.NoError(t, err)
			loads[0], loads[g.Order()/2] = spread, spread/3 // a few large loads set the spread
			for _, workers := range []int{1, 2} {
				s := &State{Net: g, Loads: loads.Clone(), Workers: workers, Seed: 77}
				require.NoError(t, b.Init(s))
				for step := 0; step < 3; step++ {
					ref, moved, msgs := referenceRound(t, b, s)
					m0, g0 := s.Moved, s.Messages
					require.NoError(t, b.Step(s))
					require.Equal(t, moved, s.Moved-m0, "moved")
					require.Equal(t, msgs, s.Messages-g0, "messages")
					seen[b.format] = true
					require.Equal(t, ref, s.Loads, "%s format %d step %d", name, b.format, step)
					s.Steps++
				}
			}
		}
	}
	require.Len(t, seen, 5, "every record format exercised")
}

// TestRandomizedRegular8MatchesReference checks the 8-bit passes of regular networks
// (rdTables8) against the reference round for d = 2..7 (4: the unrolled gather), with
// loads near 500 (every quotient positive: qmin > 0) and near 0 (qmin = 0).
func TestRandomizedRegular8MatchesReference(t *testing.T) {
	t.Parallel()
	for _, d := range []int{2, 3, 4, 5, 6, 7} { // every connected d < 8 (d = 7 fills the tables)
		if !sweepTakes(d, 1, 1) { // -short: the odd d, 7 among them
			continue
		}
		g, err := RandomRegular(6000, d, 5)
		require.NoError(t, err)
		b, err := NewRandomizedDiffusion(g)
		require.NoError(t, err)
		require.NotNil(t, b.r8)
		D := int64(d + 1)
		for _, lo := range []int64{0, 61 * D} {
			// quotients lo/D .. lo/D + 2^(8−d) − 1: the first round's spread fits 8 bits
			loads, err := RandomRange(g.Order(), lo, lo+D*(1<<(8-d)-1), uint64(d))
			require.NoError(t, err)
			for _, workers := range []int{1, 2} {
				s := &State{Net: g, Loads: loads.Clone(), Workers: workers, Seed: 9}
				require.NoError(t, b.Init(s))
				for step := 0; step < 3; step++ {
					ref, moved, msgs := referenceRound(t, b, s)
					m0, g0 := s.Moved, s.Messages
					require.NoError(t, b.Step(s))
					if step == 0 { // later rounds may widen the spread past 8 bits for d = 7
						require.Equal(t, rd8, b.format)
						require.Equal(t, lo > 0, b.qmin > 0)
					}
					require.Equal(t, moved, s.Moved-m0, "moved")
					require.Equal(t, msgs, s.Messages-g0, "messages")
					require.Equal(t, ref, s.Loads, "d=%d lo=%d step %d", d, lo, step)
					s.Steps++
				}
			}
		}
	}
}

// TestRandomizedDiffusionChurnWide: on a star with 70 leaves (d + 1 = 71 slots: the wide
// records), a leaf whose link is down all run keeps its load exactly, the others
// balance, and the accounting holds (Run checks it at every sample).
func TestRandomizedDiffusionChurnWide(t *testing.T) {
	g, err := Star(71)
	require.NoError(t, err)
	b, _ := NewRandomizedDiffusion(g)
	start := make(Loads, 71)
	start[0], start[5] = 71*300, 77
	c, _ := NewScheduledLinkChurn([]LinkEvent{{Step: 0, U: 0, V: 5}})
	res, err := Run(context.Background(), g, start, b, &RunOptions{MaxSteps: 300, Seed: 4, Churn: c, SampleEvery: 1})
	require.NoError(t, err)
	require.Equal(t, int64(77), res.Loads[5], "loads %v", res.Loads)
	require.GreaterOrEqual(t, res.Loads[1], int64(200), "loads %v", res.Loads)
	// Moved counts only tokens over live links: with no churn the same run moves more.
	b2, _ := NewRandomizedDiffusion(g)
	res2, _ := Run(context.Background(), g, start, b2, &RunOptions{MaxSteps: 300, Seed: 4})
	require.Less(t, res.Moved, res2.Moved, "moved %d with a dead link, %d without", res.Moved, res2.Moved)
}

// TestRandomizedDiffusionAllLinksDown: with every link down every step, randomized
// diffusion moves nothing and counts nothing, for packed (RandomRegular) and wide (a
// 70-leaf star) records.
func TestRandomizedDiffusionAllLinksDown(t *testing.T) {
	rr, _ := RandomRegular(64, 4, 2)
	star, _ := Star(71)
	for _, g := range []*Graph{rr, star} {
		b, _ := NewRandomizedDiffusion(g)
		start, _ := UniformRandom(g.Order(), int64(50*g.Order()), 3)
		c, _ := NewRandomLinkChurn(1, 0)
		res, err := Run(context.Background(), g, start, b, &RunOptions{MaxSteps: 20, Seed: 1, Churn: c})
		require.NoError(t, err)
		require.Equal(t, int64(0), res.Moved, "%v: moved %d, messages %d", g, res.Moved, res.Messages)
		require.Equal(t, int64(0), res.Messages, "%v: moved %d, messages %d", g, res.Moved, res.Messages)
		for v := range start {
			require.Equal(t, start[v], res.Loads[v], "%v: node %d went from %d to %d", g, v, start[v], res.Loads[v])
		}
	}
}
