package tokendist

import (
	"context"
	"math"
	"math/bits"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestHarperBruteForce checks Theorem 2.1 (Harper) by exhaustive search over all subsets
// for d ≤ 4: f(H_d, x) equals the fringe of HammingBall for every x and centre and
// HypercubeFringe's closed form. It also shows that "there exists a ball" cannot be
// strengthened to "every ball": for d = 4 some Hamming balls of 𝓑(x) (Definition 2.3,
// other outer layers S) have a larger fringe.
func TestHarperBruteForce(t *testing.T) {
	worseBall := false
	for d := 0; d <= 4; d++ {
		g := mustCube(t, d, false)
		p := 1 << d
		for x := 0; x <= p; x++ {
			f, _, err := MinFringe(g, x)
			require.NoError(t, err)
			closed, err := HypercubeFringe(d, int64(x))
			require.NoError(t, err)
			require.Equal(t, int64(f), closed, "d=%d x=%d", d, x)
			for c := 0; c < p; c++ {
				ball, err := HammingBall(d, x, c)
				require.NoError(t, err)
				fb, err := Fringe(g, ball)
				require.NoError(t, err)
				require.Equal(t, f, fb, "d=%d x=%d centre %d", d, x, c)
			}
			if x == 0 {
				continue
			}
			lo, hi := allBallsFringe(t, g, d, int64(x))
			require.Equal(t, f, lo, "d=%d x=%d: the best ball of 𝓑(x)", d, x)
			worseBall = worseBall || hi > lo
		}
	}
	require.True(t, worseBall, "some Hamming ball should have more than the least fringe")
}

// allBallsFringe returns the least and largest fringe over the Hamming balls of size x
// centred at 0 (every choice of the outer layer S).
func allBallsFringe(t *testing.T, g *Graph, d int, x int64) (lo, hi int) {
	r, y, err := HammingBallShape(d, x)
	require.NoError(t, err)
	var inner, layer []int
	for v := 0; v < 1<<d; v++ {
		switch w := bits.OnesCount(uint(v)); {
		case w < r:
			inner = append(inner, v)
		case w == r:
			layer = append(layer, v)
		}
	}
	lo = math.MaxInt
	forEachSubset(len(layer), int(y), func(mask uint32) {
		set := append([]int(nil), inner...)
		for s := mask; s != 0; s &= s - 1 {
			set = append(set, layer[bits.TrailingZeros32(s)])
		}
		f, err := Fringe(g, set)
		require.NoError(t, err)
		lo, hi = min(lo, f), max(hi, f)
	})
	return lo, hi
}

// TestHypercubeFringeClosedForm checks the Kruskal–Katona closed form against the
// fringe of the ball itself, for every x and d ≤ 10.
func TestHypercubeFringeClosedForm(t *testing.T) {
	for d := 0; d <= 10; d++ {
		g := mustCube(t, d, false)
		p := 1 << d
		for x := 0; x <= p; x++ {
			ball, err := HammingBall(d, x, p-1)
			require.NoError(t, err)
			f, err := Fringe(g, ball)
			require.NoError(t, err)
			closed, err := HypercubeFringe(d, int64(x))
			require.NoError(t, err)
			if int64(f) != closed {
				t.Fatalf("d=%d x=%d: fringe of the ball %d, closed form %d", d, x, f, closed)
			}
		}
	}
}

// TestHammingBallShape checks Definition 2.3 and the ball's layers for every x, d ≤ 12.
func TestHammingBallShape(t *testing.T) {
	for d := 0; d <= 12; d++ {
		p := 1 << d
		for x := 1; x <= p; x++ {
			r, y, err := HammingBallShape(d, int64(x))
			require.NoError(t, err)
			require.True(t, y >= 1 && y <= binom(d, r))
			inner := int64(0)
			if r > 0 {
				inner, err = HammingBallSize(d, r-1)
				require.NoError(t, err)
			}
			require.Equal(t, int64(x), inner+y, "d=%d x=%d", d, x)
			if d > 10 && x%37 != 0 {
				continue
			}
			center := (x * 2654435761) % p
			ball, err := HammingBall(d, x, center)
			require.NoError(t, err)
			seen := map[int]bool{}
			for i, v := range ball {
				dist := bits.OnesCount(uint(v ^ center))
				if seen[v] || (int64(i) < inner) != (dist < r) || dist > r {
					t.Fatalf("d=%d x=%d: ball entry %d (node %d, distance %d) repeated or outside radius %d", d, x, i, v, dist, r)
				}
				seen[v] = true
			}
		}
	}
}

// TestErratumHammingBallRadius pins the transcription's Definition 2.2, B(i, r) =
// ∪_{0≤l<r} Γ^l(i): with it, Definition 2.3's B(i, r−1) ∪ S has fewer than x processors
// whenever r ≥ 1. The consistent reading (and Lemma 2.2's V) includes layer r.
func TestErratumHammingBallRadius(t *testing.T) {
	literal := func(d, r int) int64 { // Σ_{l<r} C(d, l)
		var s int64
		for l := 0; l < r; l++ {
			s += binom(d, l)
		}
		return s
	}
	for d := 1; d <= 12; d++ {
		for x := int64(1); x <= int64(1)<<d; x++ {
			r, y, err := HammingBallShape(d, x)
			require.NoError(t, err)
			if r == 0 {
				continue
			}
			require.Less(t, literal(d, r-1)+y, x, "d=%d x=%d: the literal reading should come up short", d, x)
			inc, err := HammingBallSize(d, r-1)
			require.NoError(t, err)
			require.Equal(t, x, inc+y)
		}
	}
}

// TestLemma24BruteForce checks Lemma 2.4 by exhaustive search: over every load vector
// with at most m tokens per processor (d ≤ 3, m ≤ 3; d = 4 with m = 1, all subsets),
// the largest A = Σ δ_i for each n is MaxTotalDiscrepancy and is attained by
// HammingBallLoads with any centre. It also checks Lemma 2.5's A ≤ m·d·C(d, ⌊d/2⌋).
func TestLemma24BruteForce(t *testing.T) {
	type dm struct {
		d int
		m int64
	}
	cases := []dm{{0, 2}, {1, 3}, {2, 3}, {3, 1}, {3, 2}, {3, 3}, {4, 1}}
	for _, c := range cases {
		p := 1 << c.d
		best := map[int64]int64{}
		loads := make(Loads, p)
		var rec func(i int)
		rec = func(i int) {
			if i == p {
				a := totalDisc(loads)
				n := loads.Total()
				best[n] = max(best[n], a)
				return
			}
			for x := int64(0); x <= c.m; x++ {
				loads[i] = x
				rec(i + 1)
			}
		}
		rec(0)
		for n, a := range best {
			got, err := MaxTotalDiscrepancy(c.d, n, c.m)
			require.NoError(t, err)
			require.Equal(t, a, got, "d=%d m=%d n=%d", c.d, c.m, n)
			require.LessOrEqual(t, a, c.m*int64(c.d)*binom(c.d, c.d/2), "Lemma 2.5")
			for center := 0; center < p; center++ {
				l, err := HammingBallLoads(c.d, n, c.m, center)
				require.NoError(t, err)
				require.Equal(t, a, totalDisc(l), "d=%d m=%d n=%d centre %d", c.d, c.m, n, center)
			}
		}
	}
}

func totalDisc(l Loads) int64 {
	delta, err := DimensionDiscrepancies(l)
	if err != nil {
		panic(err)
	}
	var a int64
	for _, x := range delta {
		a += x
	}
	return a
}

// TestMaxTotalDiscrepancySweep checks the closed form against the packing itself and
// Lemma 2.5's bound for d ≤ 12 over a sweep of n and m.
func TestMaxTotalDiscrepancySweep(t *testing.T) {
	for d := 0; d <= 12; d++ {
		p := int64(1) << d
		for _, m := range []int64{1, 2, 5, int64(d) + 1} {
			for n := int64(0); n <= m*p; n += max(1, m*p/23) {
				want, err := MaxTotalDiscrepancy(d, n, m)
				require.NoError(t, err)
				l, err := HammingBallLoads(d, n, m, int(p-1))
				require.NoError(t, err)
				require.Equal(t, want, totalDisc(l), "d=%d m=%d n=%d", d, m, n)
				require.LessOrEqual(t, want, m*int64(d)*binom(d, d/2), "Lemma 2.5: d=%d m=%d n=%d", d, m, n)
			}
		}
	}
}

// TestLemma22Ratio checks Lemma 2.2 (and Theorem B.1): for a complete ball of radius
// r ≤ d/2 with V = 2^{d(1−1/k)} processors and outer layer S = C(d, r), V/S = Θ(√k).
// Over every d ≤ 62 and r the ratio (V/S)/√k stays within [0.5, 1.1].
func TestLemma22Ratio(t *testing.T) {
	lo, hi := math.Inf(1), math.Inf(-1)
	for d := 1; d <= 62; d++ {
		for r := 0; 2*r <= d; r++ {
			v, err := HammingBallSize(d, r)
			require.NoError(t, err)
			k := float64(d) / (float64(d) - math.Log2(float64(v)))
			ratio := float64(v) / float64(binom(d, r)) / math.Sqrt(k)
			lo, hi = min(lo, ratio), max(hi, ratio)
		}
	}
	t.Logf("Lemma 2.2: (V/S)/√k in [%.3f, %.3f] for d ≤ 62", lo, hi)
	require.GreaterOrEqual(t, lo, 0.5)
	require.LessOrEqual(t, hi, 1.1)
}

// TestTheorem22Constant checks Theorem 2.2 with an explicit constant: for m = p^{1/k}·n/p
// ≥ 2n/p, Lemma 2.1 with Harper's f gives at least 0.2·√k·m, over d ≤ 40, n/p ∈
// {1, 3, 8} and every m = (n/p)·2^s, s = 1..d.
func TestTheorem22Constant(t *testing.T) {
	worst := math.Inf(1)
	for d := 2; d <= 40; d++ {
		p := int64(1) << d
		for _, a := range []int64{1, 3, 8} {
			for s := 1; s <= d; s++ {
				n, m := a*p, a<<s
				k := float64(d) / float64(s)
				lb, err := BalanceLowerBound(d, n, m, 0)
				require.NoError(t, err)
				worst = min(worst, float64(lb)/(math.Sqrt(k)*float64(m)))
			}
		}
	}
	t.Logf("Theorem 2.2: BalanceLowerBound ≥ %.3f·√k·m", worst)
	require.GreaterOrEqual(t, worst, 0.2)
}

// TestBalanceLowerBoundMatchesFringe recomputes Lemma 2.1 from the ball's fringe.
func TestBalanceLowerBoundMatchesFringe(t *testing.T) {
	for d := 1; d <= 9; d++ {
		g := mustCube(t, d, false)
		p := int64(1) << d
		for _, n := range []int64{p, 3*p + 1, 10 * p} {
			for m := (n + p - 1) / p; m <= n; m = 2*m + 1 {
				xi := mustMinimumError(t, n, int(p))
				lb, err := BalanceLowerBound(d, n, m, xi)
				require.NoError(t, err)
				x := (n + m - 1) / m
				ball, err := HammingBall(d, int(x), 0)
				require.NoError(t, err)
				f, err := Fringe(g, ball)
				require.NoError(t, err)
				c := n/p + xi
				want := int64(0)
				if n > x*c {
					want = (n - x*c + int64(f) - 1) / int64(f)
				}
				require.Equal(t, want, lb, "d=%d n=%d m=%d", d, n, m)
			}
		}
	}
}

// TestShuffleExchangeBounds checks the shuffle-exchange lower bound against its set's
// fringe and against the measured time of both shuffle-exchange algorithms on the
// packed input; and compares f(SE_d, x) with f(H_d, x) by exhaustive search for d ≤ 4.
func TestShuffleExchangeBounds(t *testing.T) {
	for d := 2; d <= 10; d++ {
		g := mustCube(t, d, true)
		p := int64(1) << d
		for _, a := range []int64{1, 4} {
			n := a * p
			for m := 2 * a; m <= n; m *= 4 {
				lb, set, err := ShuffleExchangeLowerBound(d, n, m, 0)
				require.NoError(t, err)
				if set == nil {
					require.Zero(t, lb)
					continue
				}
				f, err := Fringe(g, set)
				require.NoError(t, err)
				c := n / p
				require.Equal(t, (n-int64(len(set))*c+int64(f)-1)/int64(f), lb, "d=%d n=%d m=%d", d, n, m)
				loads, err := PackedLoads(int(p), set, n, m)
				require.NoError(t, err)
				for _, mk := range []func() (*CubeBalancer, error){
					func() (*CubeBalancer, error) { return NewDimensionOrderBalance(g, &CubeOptions{MinError: true}) },
					func() (*CubeBalancer, error) { return NewLeightonBalance(g) },
				} {
					b, err := mk()
					require.NoError(t, err)
					r, err := Run(context.Background(), g, loads, b, nil)
					require.NoError(t, err)
					require.Equal(t, int64(0), r.Discrepancy())
					require.GreaterOrEqual(t, r.Time, lb, "%v d=%d n=%d m=%d", b, d, n, m)
				}
			}
		}
	}
	for d := 2; d <= 4; d++ {
		se, hc := mustCube(t, d, true), mustCube(t, d, false)
		var fs, fh []int
		for x := 0; x <= 1<<d; x++ {
			a, _, err := MinFringe(se, x)
			require.NoError(t, err)
			b, _, err := MinFringe(hc, x)
			require.NoError(t, err)
			fs, fh = append(fs, a), append(fh, b)
		}
		t.Logf("d=%d f(SE_d, x) = %v, f(H_d, x) = %v", d, fs, fh)
	}
}

// TestLemma33 checks the edge count of Lemma 3.3 exactly: each condensed-ID class U of
// Theorem 3.2's input has r·|U|·⌈q/2⌉·C(q, ⌈q/2⌉)/2^{q−1} edges leaving it, and
// 2^{d−r} processors.
func TestLemma33(t *testing.T) {
	for d := 1; d <= 12; d++ {
		p := 1 << d
		for r := 1; r <= d; r++ {
			groups, err := CondensedIDGroups(d, r, 1)
			require.NoError(t, err)
			q := d / r
			if q%2 == 0 {
				q--
			}
			half := (q + 1) / 2
			for id, grp := range groups {
				size := int64(grp.Total())
				require.Equal(t, int64(1)<<(d-r), size, "d=%d r=%d class %d", d, r, id)
				var edges int64
				for v := 0; v < p; v++ {
					if grp[v] == 0 {
						continue
					}
					for i := 0; i < d; i++ {
						if grp[v^1<<i] == 0 {
							edges++
						}
					}
				}
				want := int64(r) * size * int64(half) * binom(q, half) / (int64(1) << (q - 1))
				require.Equal(t, want, edges, "d=%d r=%d class %d", d, r, id)
			}
		}
	}
}

// TestBinom checks the binomials against Pascal's rule up to n = 62.
func TestBinom(t *testing.T) {
	for n := 1; n <= 62; n++ {
		for k := 0; k <= n; k++ {
			require.Equal(t, binom(n-1, k-1)+binom(n-1, k), binom(n, k), "C(%d, %d)", n, k)
		}
	}
	require.Equal(t, int64(465428353255261088), binom(62, 31)) // math.comb(62, 31)
}
