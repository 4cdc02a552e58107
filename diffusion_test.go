package tokendist

import (
	"math"
	"math/big"
	"math/bits"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tokendist/tokendist/internal/rng"
)

// TestDigitsMixedRadix checks the identity behind digits: the digits taken by chained
// multiplications are the mixed-radix digits of ⌊x·prod/2^64⌋, and the final word is
// x·prod mod 2^64 (what Lemire's test examines).
func TestDigitsMixedRadix(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 2000; trial++ {
		var ranges []uint64
		prod := uint64(1)
		for {
			rr := 1 + r.Uint64N(1000)
			hi, lo := bits.Mul64(prod, rr)
			if hi != 0 || lo > digitLimit {
				break
			}
			prod = lo
			ranges = append(ranges, rr)
		}
		x := r.Uint64()
		g := digits{x: x}
		h := uint64(0)
		for _, rr := range ranges {
			dgt := g.next(rr)
			require.Less(t, dgt, rr)
			h = h*rr + dgt
		}
		want := new(big.Int).Mul(new(big.Int).SetUint64(x), new(big.Int).SetUint64(prod))
		lo := new(big.Int).And(want, new(big.Int).SetUint64(math.MaxUint64)).Uint64()
		require.Equal(t, new(big.Int).Rsh(want, 64).Uint64(), h)
		require.Equal(t, lo, g.x)
	}
}

// TestDivider checks the multiply-based division against the hardware for every
// divisor up to 200 and dividends at and around the edges, plus random ones.
func TestDivider(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for d := uint64(1); d <= 200; d++ {
		v := newDivider(d)
		check := func(n uint64) {
			if got := v.div(n); got != n/d {
				t.Fatalf("%d/%d = %d, divider says %d", n, d, n/d, got)
			}
		}
		for n := uint64(0); n < 3000; n++ {
			check(n)
		}
		for _, n := range []uint64{1<<32 - 1, 1<<32 - d, 1 << 32, 1<<32 + 1, 1<<63 - 1, 1<<64 - 1} {
			check(n)
		}
		for i := 0; i < 3000; i++ {
			check(r.Uint64N(1 << 32))
			check(r.Uint64())
		}
	}
}

// TestDigitsUniform is a chi-square test of fixedDigits and of subset draws.
func TestDigitsUniform(t *testing.T) {
	for _, r := range []uint64{2, 3, 5, 7, 13, 1000} {
		var f fixedDigits
		rng.Reseed(&f.src, 9, 0, int(r))
		f.reset(r)
		const draws = 200000
		counts := make([]float64, r)
		for i := 0; i < draws; i++ {
			counts[f.draw()]++
		}
		requireUniform(t, counts, draws)
	}
}

// requireUniform fails if counts deviate from uniform by more than 6 standard
// deviations of the chi-square statistic.
func requireUniform(t *testing.T, counts []float64, draws int) {
	t.Helper()
	k := float64(len(counts))
	exp := float64(draws) / k
	chi := 0.0
	for _, c := range counts {
		chi += (c - exp) * (c - exp) / exp
	}
	require.Less(t, chi, k-1+6*math.Sqrt(2*(k-1)), "chi-square %v for %d cells", chi, len(counts))
}

// TestSubsetDrawsUniform checks that the excess slots are a uniform r-subset, for the
// table (d+1 ≤ 12) and Floyd's algorithm (d+1 > 12), by counting subsets.
func TestSubsetDrawsUniform(t *testing.T) {
	for _, D := range []int{3, 5, 13, 16} {
		star, err := Star(D) // centre degree D−1: d+1 = D slots
		require.NoError(t, err)
		b, err := NewRandomizedDiffusion(star)
		require.NoError(t, err)
		for _, r := range []int{1, 2, D - 1} {
			loads := make(Loads, D)
			loads[0] = int64(3*D + r)
			s := &State{Net: star, Loads: loads, Workers: 1, Seed: uint64(D)}
			require.NoError(t, b.Init(s))
			b.s = s
			b.chooseFormat()
			counts := map[uint64]float64{}
			const draws = 60000
			var st digits
			rng.Reseed(&st.src, 5, int64(r), D)
			var qs, ms [rdBatch]uint64
			var rs [rdBatch]uint8
			for i := 0; i < draws; i++ {
				b.drawBatch(&st, 0, 1, &qs, &rs, &ms)
				require.Equal(t, r, bits.OnesCount64(ms[0]))
				counts[ms[0]]++
			}
			cells := binomial(D, r)
			require.Len(t, counts, cells, "D=%d r=%d", D, r)
			vals := make([]float64, 0, cells)
			for _, c := range counts {
				vals = append(vals, c)
			}
			requireUniform(t, vals, draws)
		}
	}
}

func binomial(n, k int) int {
	c := 1
	for i := 0; i < k; i++ {
		c = c * (n - i) / (i + 1)
	}
	return c
}

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
			if D > 64 {
				t.Fatal("reference needs d+1 ≤ 64")
			}
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
				next[k] += int64(bits.OnesCount64(m >> g.Degree(k)))
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

// TestRandomizedRegular8MatchesReference checks the 8-bit passes of regular networks
// (rdTables8) against the reference round for d = 2..7 (4: the unrolled gather), with
// loads near 500 (every quotient positive: qmin > 0) and near 0 (qmin = 0).
func TestRandomizedRegular8MatchesReference(t *testing.T) {
	for _, d := range []int{2, 3, 4, 5, 6, 7} { // every connected d < 8 (d = 7 fills the tables)
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
