package tokendist

import (
	"math/rand/v2"
	"sync"
	"testing"
)

// benchRR is RandomRegular(10^6, 4) with random loads, built once.
var benchRR = sync.OnceValues(func() (*Graph, Loads) {
	g, err := RandomRegular(1_000_000, 4, 1)
	if err != nil {
		panic(err)
	}
	l, err := RandomRange(g.Order(), 0, 1000, 2)
	if err != nil {
		panic(err)
	}
	return g, l
})

// naiveRandomizedRound is the straightforward baseline: one sequential pass that
// scatters into a second buffer, drawing each excess destination with Rand.IntN from a
// partial Fisher–Yates shuffle of the slots.
func naiveRandomizedRound(g *Graph, loads, next Loads, r *rand.Rand, slots []int) {
	d := g.MaxDegree()
	D := int64(d + 1)
	clear(next)
	for i := range loads {
		q, rem := loads[i]/D, loads[i]%D
		nb := g.Neighbors(i)
		next[i] += loads[i] - int64(len(nb))*q - rem
		for _, j := range nb {
			next[j] += q
		}
		for s := range slots {
			slots[s] = s
		}
		for k := 0; k < int(rem); k++ {
			t := k + r.IntN(d+1-k)
			slots[k], slots[t] = slots[t], slots[k]
			if slots[k] < len(nb) {
				next[nb[slots[k]]]++
			} else {
				next[i]++
			}
		}
	}
}

func BenchmarkRandomizedDiffusionRound(b *testing.B) {
	g, l0 := benchRR()
	rd, err := NewRandomizedDiffusion(g)
	if err != nil {
		b.Fatal(err)
	}
	for _, w := range []int{1, 2} {
		b.Run("workers="+string(rune('0'+w)), func(b *testing.B) {
			s := &State{Net: g, Loads: l0.Clone(), Workers: w, Seed: 1}
			if err := rd.Init(s); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := rd.Step(s); err != nil {
					b.Fatal(err)
				}
				s.Steps++
			}
		})
	}
	b.Run("baseline", func(b *testing.B) {
		loads, next := l0.Clone(), make(Loads, len(l0))
		r := rand.New(rand.NewPCG(1, 2))
		slots := make([]int, g.MaxDegree()+1)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			naiveRandomizedRound(g, loads, next, r, slots)
			loads, next = next, loads
		}
	})
}
