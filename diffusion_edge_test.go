package tokendist

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tokendist/tokendist/internal/rng"
)

// referenceEdgeRound is a straightforward per-link implementation of one round of the
// edge-based schemes: links in order of their lower end, flows from the loads at the
// start of the round; FGSRandomized takes its digits from the same per-chunk streams,
// FGSDeterministic keeps its scaled error per link in errs.
func referenceEdgeRound(g *Graph, rule edgeRule, s *State, errs map[[2]int]int64) (next Loads, moved, msgs int64) {
	D := int64(g.MaxDegree() + 1)
	next = s.Loads.Clone()
	for c := 0; c < (g.Order()+diffusionChunk-1)/diffusionChunk; c++ {
		var st fixedDigits
		rng.Reseed(&st.src, s.Seed, s.Steps, c)
		st.reset(uint64(D))
		for u := c * diffusionChunk; u < min(g.Order(), (c+1)*diffusionChunk); u++ {
			for _, v := range g.Neighbors(u) {
				if int(v) < u {
					continue
				}
				a := s.Loads[u] - s.Loads[v]
				fl := math.Floor(float64(a) / float64(D))
				var f int64
				switch rule {
				case ruleRSW:
					f = int64(math.Trunc(float64(a) / float64(D)))
				case ruleFGSDet:
					e := errs[[2]int{u, int(v)}]
					// The integer closest to (a − e)/D, halves rounded up.
					f = int64(math.Floor((float64(a-e))/float64(D) + 0.5))
					errs[[2]int{u, int(v)}] = e + D*f - a
				case ruleFGSRand:
					f = int64(fl)
					if int64(st.draw()) < a-int64(fl)*D {
						f++
					}
				}
				next[u] -= f
				next[v] += f
				moved += max(f, -f)
				if f != 0 {
					msgs++
				}
			}
		}
	}
	return next, moved, msgs
}

// TestEdgeSchemesMatchReference compares the edge engine with the per-link reference
// over several rounds, on small and multi-chunk networks, and checks that
// FGSDeterministic's accumulated error stays in (−1/2, 1/2] on every link.
func TestEdgeSchemesMatchReference(t *testing.T) {
	nets := []*Graph{must2(RandomRegular(9000, 4, 3)), must2(Torus(7, 9)), must2(Star(20)), must2(KaryTree(KaryShape{Height: 4, Arity: 3})), must2(Complete(6))}
	for _, g := range nets {
		for _, rule := range []edgeRule{ruleRSW, ruleFGSDet, ruleFGSRand} {
			var b edgeDiffusion
			require.NoError(t, b.build(g, rule))
			loads, err := RandomRange(g.Order(), 0, 60, 8)
			require.NoError(t, err)
			loads[0] = 5000
			for _, workers := range []int{1, 2} {
				s := &State{Net: g, Loads: loads.Clone(), Workers: workers, Seed: 4}
				require.NoError(t, b.Init(s))
				errs := map[[2]int]int64{}
				D := int64(g.MaxDegree() + 1)
				for step := 0; step < 6; step++ {
					ref, moved, msgs := referenceEdgeRound(g, rule, s, errs)
					m0, g0 := s.Moved, s.Messages
					require.NoError(t, b.Step(s))
					require.Equal(t, ref, s.Loads, "%v rule %d step %d", g, rule, step)
					require.Equal(t, moved, s.Moved-m0)
					require.Equal(t, msgs, s.Messages-g0)
					for _, e := range errs {
						require.True(t, -D < 2*e && 2*e <= D, "accumulated error %d/%d", e, D)
					}
					s.Steps++
				}
			}
		}
	}
}

func must2(g *Graph, err error) *Graph {
	if err != nil {
		panic(err)
	}
	return g
}
