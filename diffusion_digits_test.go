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
	t.Parallel()
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

// starPlusPath returns the star with centre 0 and leaves 1..L, with a path hung on
// leaf 1: L+1 joined to 1, and L+2 and L+3 joined to L+1. Degrees: centre L (d+1 =
// L+1 slots), node 1 two, L+1 three, L+2 and L+3 one.
func starPlusPath(t *testing.T, L int) *Graph {
	edges := [][2]int{{1, L + 1}, {L + 1, L + 2}, {L + 1, L + 3}}
	for v := 1; v <= L; v++ {
		edges = append(edges, [2]int{0, v})
	}
	g, err := NewGraph(L+4, edges)
	require.NoError(t, err)
	return g
}

// excessLaw returns P(the links in T get an excess token and the others none) for a
// node with k links among D slots and r excess tokens, |T| = s: the paper's scheme
// gives the r tokens to a uniform r-subset of the D slots, so this is
// C(D−k, r−s)/C(D, r) = r!/(r−s)! · (D−r)!/(D−r−k+s)! · (D−k)!/D!.
func excessLaw(D, k, r, s int) float64 {
	if s > r || k-s > D-r {
		return 0
	}
	p := 1.0
	for i := 0; i < s; i++ {
		p *= float64(r - i)
	}
	for i := 0; i < k-s; i++ {
		p *= float64(D - r - i)
	}
	for i := 0; i < k; i++ {
		p /= float64(D - i)
	}
	return p
}

// chiSquare4 holds the 1 − 10^-4 quantiles of the chi-square law with 1..7 degrees of
// freedom: a correct sampler fails one check in 10^4 seeds (and the seeds are fixed).
var chiSquare4 = [...]float64{0, 15.137, 18.421, 21.108, 23.513, 25.745, 27.856, 29.878}

// TestRandomizedExcessLaw checks the law of the excess tokens of RandomizedDiffusion
// where a node draws its links alone (2·deg + 1 < d+1: selection sampling,
// selectSlots, selectBatched, selectShares and rdNodeDraw), per node and per excess
// value, by chi-square over the 2^deg patterns of its links against C(D−k, r−s)/C(D, r),
// the law of a uniform r-subset of the D slots cut to its k links. It runs real rounds
// (Step, from the same loads, the pattern read back with share): on a star of 15
// leaves plus a path (d+1 = 16: packed records) and of 70 leaves (d+1 = 71: one share
// per link end), with the chunk streams and with NodeStreams (the node programs' draw).
// The centre draws all d+1 slots; its links are checked for the marginal r/D.
func TestRandomizedExcessLaw(t *testing.T) {
	t.Parallel()
	draws := 20000
	if testing.Short() {
		draws = 6000
	}
	for _, L := range []int{15, 70} {
		g := starPlusPath(t, L)
		D := L + 1
		nodes := []int{1, L + 1, L + 2} // degrees 2, 3 and 1
		for _, nodeStreams := range []bool{false, true} {
			for _, r := range []int{1, 2, D / 2, D - 2, D - 1} {
				b, err := NewRandomizedDiffusion(g)
				require.NoError(t, err)
				loads := make(Loads, g.Order())
				for v := range loads {
					loads[v] = int64(3*D + r)
				}
				counts := make([][]float64, len(nodes))
				for i, v := range nodes {
					counts[i] = make([]float64, 1<<g.Degree(v))
				}
				centre := make([]float64, L)
				s := &State{Net: g, Loads: loads.Clone(), Workers: 1, Seed: uint64(1000*L + r), NodeStreams: nodeStreams}
				for i := 0; i < draws; i++ {
					copy(s.Loads, loads)
					s.Steps = int64(i)
					if err := b.Init(s); err != nil {
						t.Fatal(err)
					}
					if err := b.Step(s); err != nil {
						t.Fatal(err)
					}
					for j, v := range nodes {
						pat, sent := 0, 0
						for p := 0; p < g.Degree(v); p++ {
							x := b.share(v, uint64(p)) - 3
							if x > 1 {
								t.Fatalf("node %d link %d: share %d, want 3 or 4", v, p, x+3)
							}
							pat |= int(x) << p
							sent += int(x)
						}
						if sent > r {
							t.Fatalf("node %d sent %d excess tokens of %d", v, sent, r)
						}
						counts[j][pat]++
					}
					for p := range centre {
						centre[p] += float64(b.share(0, uint64(p)) - 3)
					}
					var total int64
					for _, x := range s.Loads {
						if x < 0 {
							t.Fatalf("negative load %d", x)
						}
						total += x
					}
					if total != int64(g.Order()*(3*D+r)) {
						t.Fatalf("tokens not conserved: %d", total)
					}
				}
				for j, v := range nodes {
					k := g.Degree(v)
					require.False(t, rdDrawsAll(uint64(D), uint64(k)), "node %d draws its links alone", v)
					var chi float64
					cells := 0
					for pat, c := range counts[j] {
						e := float64(draws) * excessLaw(D, k, r, bits.OnesCount(uint(pat)))
						if e == 0 {
							require.Zero(t, c, "L=%d r=%d node %d pattern %b is impossible", L, r, v, pat)
							continue
						}
						cells++
						chi += (c - e) * (c - e) / e
					}
					require.Less(t, chi, chiSquare4[cells-1], "L=%d streams=%v r=%d node %d (deg %d): chi-square %.2f over %d cells %v",
						L, nodeStreams, r, v, k, chi, cells, counts[j])
				}
				// The centre (all d+1 slots): each link gets a token with probability r/D.
				pr := float64(r) / float64(D)
				for p, c := range centre {
					e := float64(draws) * pr
					chi := (c-e)*(c-e)/e + (c-e)*(c-e)/(float64(draws)-e)
					require.Less(t, chi, chiSquare4[1], "L=%d r=%d centre link %d: %v of %d", L, r, p, c, draws)
				}
			}
		}
	}
}

// TestRdDrawsAllBoundaries pins which nodes draw all d+1 slots (and so keep the draws
// they made before issue 37): every node when d+1 ≤ subsetTableMax, and a node with
// 2·deg + 1 ≥ d+1 beyond; and the words of their masks. With d+1 ≤ subsetTableMax,
// rdNodeDraw is rdNodeSlots, draw for draw.
func TestRdDrawsAllBoundaries(t *testing.T) {
	for _, c := range []struct {
		D, deg uint64
		all    bool
		words  int
	}{
		{12, 1, true, 1}, {3, 1, true, 1}, {13, 5, false, 1}, {13, 6, true, 1},
		{71, 34, false, 1}, {71, 35, true, 2}, {200, 99, false, 2}, {200, 100, true, 4},
		{129, 64, true, 3}, {1000, 65, false, 2}, {1000, 64, false, 1},
	} {
		require.Equal(t, c.all, rdDrawsAll(c.D, c.deg), "rdDrawsAll(%d, %d)", c.D, c.deg)
		require.Equal(t, c.words, rdMaskWords(c.D, c.deg), "rdMaskWords(%d, %d)", c.D, c.deg)
	}
	for _, D := range []uint64{5, 12} {
		table := newSubsetTable(int(D))
		for r := uint64(0); r < D; r++ {
			for i := 0; i < 50; i++ {
				a, b := newNodeStream(9, int64(r), i), newNodeStream(9, int64(r), i)
				ma, mb := make([]uint64, 1), make([]uint64, 1)
				rdNodeDraw(&a, D, 1, r, &table, ma)
				rdNodeSlots(&b, D, r, &table, mb)
				require.Equal(t, mb, ma)
			}
		}
	}
}

// TestSelectBatch checks the batches of selection sampling: the ranges D−p .. D−e+1
// multiply to prod ≤ digitLimit, e ≤ deg, and one more range would not fit.
func TestSelectBatch(t *testing.T) {
	for _, D := range []uint64{13, 71, 1000, 1 << 20, 1 << 40} {
		for _, deg := range []uint64{1, 2, 5, 12} {
			if deg >= D {
				continue
			}
			for p := uint64(0); p < deg; p++ {
				prod, e := selectBatch(D, p, deg)
				require.Greater(t, e, p)
				require.LessOrEqual(t, e, deg)
				want := uint64(1)
				for i := p; i < e; i++ {
					want *= D - i
				}
				require.Equal(t, want, prod, "D=%d p=%d e=%d", D, p, e)
				require.True(t, prod <= digitLimit || e == p+1)
				if e < deg {
					hi, lo := bits.Mul64(prod, D-e)
					require.True(t, hi != 0 || lo > digitLimit, "D=%d p=%d: range %d would fit", D, p, D-e)
				}
			}
		}
	}
}

// TestExpandShares checks the in-place expansion of a slot mask into shares.
func TestExpandShares(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{1, 2, 63, 64, 65, 130, 200} {
		for trial := 0; trial < 20; trial++ {
			words := (n + 63) / 64
			mask := make([]uint64, words)
			for i := range mask {
				mask[i] = r.Uint64()
			}
			if n%64 != 0 {
				mask[words-1] &= 1<<(n%64) - 1
			}
			out := make([]uint64, n)
			copy(out, mask)
			want := uint64(0)
			for p := 0; p < n; p++ {
				want += mask[p>>6] >> (p & 63) & 1
			}
			require.Equal(t, want, expandShares(out, 7))
			for p := 0; p < n; p++ {
				require.Equal(t, 7+(mask[p>>6]>>(p&63)&1), out[p], "n=%d p=%d", n, p)
			}
		}
	}
}
