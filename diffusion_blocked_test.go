package tokendist

import (
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tokendist/tokendist/internal/par"
)

// TestBlockedGatherMatchesPlain runs RandomizedDiffusion with the blocked gather forced
// on and forced off from the same loads and seed, and checks identical loads, Moved and
// Messages after every round: regular and irregular networks, several blocks (and a
// partial last one), the 16- and 8-bit formats as the loads flatten, one and two
// workers. The blocked gather runs three ways: with its spare accumulators, without
// them (every sum adds into the loads), and without the link array (as beyond 2^26
// nodes, where the regular 8-bit spread still uses its tables).
func TestBlockedGatherMatchesPlain(t *testing.T) {
	t.Parallel()
	par.Acquire()
	defer par.Release()
	type tc struct {
		name string
		g    func() (*Graph, error)
		hi   int64
	}
	cases := []tc{
		{"RandomRegular(600001, 4)", func() (*Graph, error) { return RandomRegular(600001, 4, 3) }, 1000},
		{"Torus(300, 400)", func() (*Graph, error) { return Torus(300, 400) }, 5000},
		{"RandomTree(150000)", func() (*Graph, error) { return RandomTree(150000, 5) }, 300},
		{"RandomRegular(70000, 7)", func() (*Graph, error) { return RandomRegular(70000, 7, 1) }, 100},
	}
	for i, c := range cases {
		if !sweepTakes(i, 0, 1) { // -short: every other network
			continue
		}
		g, err := c.g()
		require.NoError(t, err)
		loads, _ := RandomRange(g.Order(), 0, c.hi, 11)
		for _, workers := range []int{1, 2} {
			t.Run(fmt.Sprintf("%s/workers=%d", c.name, workers), func(t *testing.T) {
				var st [4]*State
				var bs [4]*RandomizedDiffusion
				for i := range bs {
					b, err := NewRandomizedDiffusion(g)
					require.NoError(t, err)
					switch i {
					case 0: // the plain gather
						b.blocked = nil
					case 1:
						b.blocked = newBlockedGather(g)
					case 2: // no spare accumulator
						b.blocked = newBlockedGather(g)
						for len(b.blocked.acc) > 0 {
							<-b.blocked.acc
						}
					case 3: // no link array
						b.blocked = newBlockedGather(g)
						b.link, b.pos32 = nil, b.ln.backPositions()
						if b.regular && b.d < 8 {
							b.r8 = newRDTables8(b.d, &b.table)
						}
					}
					bs[i] = b
					st[i] = &State{Net: g, Loads: loads.Clone(), Workers: workers, Seed: 42}
					require.NoError(t, b.Init(st[i]))
				}
				blockedRounds := 0
				for r := 0; r < 12; r++ {
					for i := range bs {
						require.NoError(t, bs[i].Step(st[i]))
						st[i].Steps++
					}
					if bs[1].useBlocked() {
						blockedRounds++
					}
					p := st[0]
					for i, a := range st[1:] {
						require.Equal(t, p.Moved, a.Moved, "variant %d round %d: moved/messages %d/%d, plain %d/%d", i+1, r, a.Moved, a.Messages, p.Moved, p.Messages)
						require.Equal(t, p.Messages, a.Messages, "variant %d round %d: moved/messages %d/%d, plain %d/%d", i+1, r, a.Moved, a.Messages, p.Moved, p.Messages)
						for v := range a.Loads {
							if a.Loads[v] != p.Loads[v] {
								t.Fatalf("variant %d round %d (format %d): node %d has %d, plain gather %d", i+1, r, bs[i+1].format, v, a.Loads[v], p.Loads[v])
							}
						}
					}
				}
				require.NotZero(t, blockedRounds, "the blocked gather never ran")
			})
		}
	}
}

// TestBlockedGatherWidths forces the blocked gather on a small torus (degree 4, so a
// record holds 4 excess bits and w − 4 quotient bits) and checks, round by round against
// the plain gather, which record width each round uses and whether the blocked gather
// runs: quotient spreads below 2^4 take 8-bit records and below 2^12 16-bit ones, both
// blocked; larger spreads take 32-bit records through the plain gather. Without the
// link array (as on a network too large for it) the blocked gather is the only packed
// path, so spreads beyond 16 bits must take the wide format, never 32 or 64 bits.
func TestBlockedGatherWidths(t *testing.T) {
	g, err := Torus(40, 50)
	require.NoError(t, err)
	for _, tc := range []struct {
		name    string
		hi      int64 // loads uniform in [0, hi]: quotient spread about hi/5; negative: −hi at node 0, 0 elsewhere
		noLink  bool
		first   rdFormat
		blocked bool
	}{
		{"8-bit", 75, false, rd8, true},
		{"spread 15", -79, false, rd8, true}, // quotients ⌊79/5⌋ = 15 and 0
		{"spread 16", -80, false, rd16, true},
		{"spread 4095", -(5*4095 + 4), false, rd16, true},
		{"spread 4096", -5 * 4096, false, rd32, false},
		{"16-bit", 20000, false, rd16, true},
		{"32-bit", 1 << 22, false, rd32, false},
		{"16-bit, no link array", 20000, true, rd16, true},
		{"wide, no link array", 1 << 22, true, rdWide, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			loads, _ := RandomRange(g.Order(), 0, tc.hi, 3)
			if tc.hi < 0 {
				loads = make(Loads, g.Order())
				loads[0] = -tc.hi
			}
			var st [2]*State
			var bs [2]*RandomizedDiffusion
			for i := range bs {
				b, err := NewRandomizedDiffusion(g)
				require.NoError(t, err)
				if i == 0 {
					b.blocked = newBlockedGather(g)
					if tc.noLink { // as NewRandomizedDiffusion sets it up beyond 2^26 nodes
						b.link, b.pos32 = nil, b.ln.backPositions()
					}
				}
				bs[i] = b
				st[i] = &State{Net: g, Loads: loads.Clone(), Workers: 1, Seed: 8}
				require.NoError(t, b.Init(st[i]))
			}
			widths := map[rdFormat]bool{}
			for r := 0; r < 6; r++ {
				for i := range bs {
					require.NoError(t, bs[i].Step(st[i]))
					st[i].Steps++
				}
				b := bs[0]
				if r == 0 {
					require.Equal(t, tc.first, b.format, "first round's format")
					require.Equal(t, tc.blocked, b.useBlocked(), "first round blocked")
				}
				widths[b.format] = true
				require.Equal(t, b.format == rd8 || b.format == rd16, b.useBlocked(), "round %d: format %d", r, b.format)
				if tc.noLink {
					require.NotContains(t, []rdFormat{rd32, rd64}, b.format, "round %d without the link array", r)
				}
				require.Equal(t, st[1].Moved, st[0].Moved, "round %d: moved", r)
				require.Equal(t, st[1].Messages, st[0].Messages, "round %d: messages", r)
				require.True(t, slices.Equal(st[1].Loads, st[0].Loads), "round %d (format %d): loads differ from the plain gather", r, b.format)
			}
		})
	}
}

// TestBlockedGatherNoAlloc: a round through the blocked gather allocates nothing, on one
// and two workers (the sums take and return their spare accumulators).
func TestBlockedGatherNoAlloc(t *testing.T) {
	par.Acquire()
	defer par.Release()
	g, err := RandomRegular(1<<17+3, 4, 2)
	require.NoError(t, err)
	for _, workers := range []int{1, 2} {
		b, err := NewRandomizedDiffusion(g)
		require.NoError(t, err)
		b.blocked = newBlockedGather(g)
		loads, _ := RandomRange(g.Order(), 490, 510, 1)
		s := &State{Net: g, Loads: loads, Workers: workers, Seed: 3}
		require.NoError(t, b.Init(s))
		allocs := testing.AllocsPerRun(20, func() {
			require.NoError(t, b.Step(s))
			s.Steps++
		})
		require.True(t, b.useBlocked())
		require.Zero(t, allocs, "workers %d", workers)
		require.Len(t, b.blocked.acc, cap(b.blocked.acc), "every accumulator returned")
	}
}
