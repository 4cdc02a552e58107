package tokendist

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tokendist/tokendist/internal/par"
)

// TestBlockedGatherMatchesPlain runs RandomizedDiffusion with the blocked gather forced
// on and forced off from the same loads and seed, and checks identical loads, Moved and
// Messages after every round: regular and irregular networks, several blocks (and a
// partial last one), the 16- and 8-bit formats as the loads flatten, one and two
// workers.
func TestBlockedGatherMatchesPlain(t *testing.T) {
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
	for _, c := range cases {
		g, err := c.g()
		require.NoError(t, err)
		loads, _ := RandomRange(g.Order(), 0, c.hi, 11)
		for _, workers := range []int{1, 2} {
			t.Run(fmt.Sprintf("%s/workers=%d", c.name, workers), func(t *testing.T) {
				var st [2]*State
				var bs [2]*RandomizedDiffusion
				for i := range bs {
					b, err := NewRandomizedDiffusion(g)
					require.NoError(t, err)
					if i == 0 {
						b.blocked = newBlockedGather(g)
					} else {
						b.blocked = nil
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
					if bs[0].useBlocked() {
						blockedRounds++
					}
					a, p := st[0], st[1]
					require.Equal(t, p.Moved, a.Moved, "round %d: moved/messages %d/%d, plain %d/%d", r, a.Moved, a.Messages, p.Moved, p.Messages)
					require.Equal(t, p.Messages, a.Messages, "round %d: moved/messages %d/%d, plain %d/%d", r, a.Moved, a.Messages, p.Moved, p.Messages)
					for v := range a.Loads {
						if a.Loads[v] != p.Loads[v] {
							t.Fatalf("round %d (format %d): node %d has %d, plain gather %d", r, bs[0].format, v, a.Loads[v], p.Loads[v])
						}
					}
				}
				require.NotZero(t, blockedRounds, "the blocked gather never ran")
			})
		}
	}
}
