// Plaxton, "Load balancing on the hypercube and shuffle-exchange" (Stanford TR
// STAN-CS-89-1281; the project's shared/papers/hypercube-shuffle-exchange-balance.txt): the tests
// that check a theorem, lemma, definition or bound of the report against the simulation or
// by exhaustive search, in the style of etcd-io/raft's raft_paper_test.go. Each test
// quotes the statement it checks; tests named Erratum pin a statement the check refutes.

package tokendist

import (
	"context"
	"fmt"
	"math"
	"math/bits"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestPlaxtonLemma23Sweep runs every Balance variant on every d ≤ 12 over many seeds and the
// adversarial inputs, checking Lemma 2.3 and the step bound on every step, the final
// error (≤ log p, or exactly minimal), the exact final distribution of Leighton's
// algorithm and of Theorem 2.4's pipeline, the explicit upper bounds and exact phase
// costs, and Lemma 2.1's lower bound.
//
// Plaxton, section 2.3 (Upper Bounds for the Hypercube), Lemma 2.3: "Let the low and high
// subcubes with respect to dimension i of a given hypercube be balanced with error ξ. Then
// after balancing across dimension i, the entire hypercube is balanced with error ξ + 1."
//
// Theorem 2.4: "The Balance operation, with minimum error, runs in O(m log^{1/2} p + log^2
// p) time on the hypercube."
//
// Section 2.2, Lemma 2.1: "The Balance operation requires Ω((n − ⌈n/m⌉⌈n/p⌉)/f(G, ⌈n/m⌉))
// time."
func TestPlaxtonLemma23Sweep(t *testing.T) {
	t.Parallel()
	for d := 0; d <= 12; d++ {
		hc := mustCube(t, d, false)
		var se *Graph
		if d >= 2 {
			se = mustCube(t, d, true)
		}
		for seed := uint64(1); seed <= uint64(cubeSeeds(d)); seed++ {
			for name, loads := range cubeInputs(t, d, seed) {
				t.Run(fmt.Sprintf("d=%d/seed=%d/%s", d, seed, name), func(t *testing.T) {
					sweepOne(t, d, hc, se, loads, name)
				})
			}
		}
	}
}

// TestPlaxtonTheorem21Harper checks Theorem 2.1 (Harper) by exhaustive search over all subsets
// for d ≤ 4: f(H_d, x) equals the fringe of HammingBall for every x and centre and
// HypercubeFringe's closed form. It also shows that "there exists a ball" cannot be
// strengthened to "every ball": for d = 4 some Hamming balls of 𝓑(x) (Definition 2.3,
// other outer layers S) have a larger fringe.
//
// Plaxton, section 2.2 (A Lower Bound for the Hypercube), Theorem 2.1: "For every integer
// x, 0 ≤ x ≤ p, there exists a ball B ∈ 𝓑(x) such that f(H_d, x) = |𝓕(H_d, B)|."
func TestPlaxtonTheorem21Harper(t *testing.T) {
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

// TestPlaxtonDefinition23HammingBall checks Definition 2.3 and the ball's layers for every x, d ≤ 12.
//
// Plaxton, section 2.2 (A Lower Bound for the Hypercube), Definition 2.3: "Given a
// positive integer x, let r and y be the unique pair of nonnegative integers such that x =
// y + Σ_{0 ≤ l ≤ r−1} C(d, l), 1 ≤ y ≤ C(d, r). A set of processors B is a Hamming ball of
// size x and radius r if there is some processor i and some set of processors S such that
// B = B(i, r−1) ∪ S, S ⊆ Γ^r(i) and |S| = y."
func TestPlaxtonDefinition23HammingBall(t *testing.T) {
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

// TestPlaxtonErratumDefinition22HammingBallRadius pins the transcription's Definition 2.2, B(i, r) =
// ∪_{0≤l<r} Γ^l(i): with it, Definition 2.3's B(i, r−1) ∪ S has fewer than x processors
// whenever r ≥ 1. The consistent reading (and Lemma 2.2's V) includes layer r.
//
// Plaxton, section 2.2 (A Lower Bound for the Hypercube), Definition 2.2: "Let B(i, r)
// denote the complete Hamming ball of radius r centered at processor i. More formally,
// this is the set of processors given by B(i, r) = ⋃_{0 ≤ l < r} Γ^l(i)." (As transcribed;
// the bound l < r may be a transcription slip for l ≤ r, which is the reading Definition
// 2.3 and Lemma 2.2 need.)
func TestPlaxtonErratumDefinition22HammingBallRadius(t *testing.T) {
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

// TestPlaxtonLemma22Ratio checks Lemma 2.2 (and Theorem B.1): for a complete ball of radius
// r ≤ d/2 with V = 2^{d(1−1/k)} processors and outer layer S = C(d, r), V/S = Θ(√k).
// Over every d ≤ 62 and r the ratio (V/S)/√k stays within [0.5, 1.1].
//
// Plaxton, section 2.2 (A Lower Bound for the Hypercube), Lemma 2.2: "For positive
// integers d and r = r(d), 0 ≤ r ≤ d/2, let S = C(d, r) and let V = Σ_{0 ≤ l ≤ r} C(d, l).
// Then V = 2^{d(1−1/k)} implies that V/S = Θ(k^{1/2}), 1 ≤ k ≤ d." (The transcription
// garbles the binomials as "{}_{0r}^d" and "{}_{0l}^d"; C(d, r) and C(d, l) are the
// reading of Definition B.1 and Theorem B.1.)
func TestPlaxtonLemma22Ratio(t *testing.T) {
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

// TestPlaxtonTheorem22Constant checks Theorem 2.2 with an explicit constant: for m = p^{1/k}·n/p
// ≥ 2n/p, Lemma 2.1 with Harper's f gives at least 0.2·√k·m, over d ≤ 40, n/p ∈
// {1, 3, 8} and every m = (n/p)·2^s, s = 1..d.
//
// Plaxton, section 2.2 (A Lower Bound for the Hypercube), Theorem 2.2: "The Balance
// operation requires Ω(k^{1/2} m) time on the hypercube if m = Θ(p^{1/k}(n/p)) and m ≥
// 2n/p."
func TestPlaxtonTheorem22Constant(t *testing.T) {
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

// TestPlaxtonLemma21LowerBoundFringe recomputes Lemma 2.1 from the ball's fringe.
//
// Plaxton, section 2.2 (A Lower Bound for the Hypercube), Lemma 2.1: "The Balance
// operation requires Ω((n − ⌈n/m⌉⌈n/p⌉)/f(G, ⌈n/m⌉)) time."
func TestPlaxtonLemma21LowerBoundFringe(t *testing.T) {
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

// TestPlaxtonLemma24BruteForce checks Lemma 2.4 by exhaustive search: over every load vector
// with at most m tokens per processor (d ≤ 3, m ≤ 3; d = 4 with m = 1, all subsets),
// the largest A = Σ δ_i for each n is MaxTotalDiscrepancy and is attained by
// HammingBallLoads with any centre. It also checks Lemma 2.5's A ≤ m·d·C(d, ⌊d/2⌋).
//
// Plaxton, section 2.3 (Upper Bounds for the Hypercube), Lemma 2.4: "The value of A is
// maximized by packing all of the tokens into a Hamming ball B of size ⌈n/m⌉."
//
// Lemma 2.5: "Let an instance of Balance be given for which the tokens are packed into a
// Hamming ball of size ⌈n/m⌉. Then A = O(m d^{1/2} p)."
func TestPlaxtonLemma24BruteForce(t *testing.T) {
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

// TestPlaxtonLemma25MaxTotalDiscrepancy checks the closed form against the packing itself and
// Lemma 2.5's bound for d ≤ 12 over a sweep of n and m.
//
// Plaxton, section 2.3 (Upper Bounds for the Hypercube), Lemma 2.5: "Let an instance of
// Balance be given for which the tokens are packed into a Hamming ball of size ⌈n/m⌉. Then
// A = O(m d^{1/2} p). Furthermore, if m ≥ 2n/p and ⌈n/m⌉ = p^{1−1/k}, then A = Θ(m d
// k^{−1/2} p^{1−1/k})."
func TestPlaxtonLemma25MaxTotalDiscrepancy(t *testing.T) {
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

// TestPlaxtonTheorem25ShuffleExchangeBounds checks the shuffle-exchange lower bound against its set's
// fringe and against the measured time of both shuffle-exchange algorithms on the
// packed input; and compares f(SE_d, x) with f(H_d, x) by exhaustive search for d ≤ 4.
//
// Plaxton, section 2.4 (Load Balancing on the Shuffle-Exchange), Theorem 2.5: "Assuming m
// ≥ 2n/p, the Balance operation requires Ω(m log(n/m)) time on the shuffle-exchange."
func TestPlaxtonTheorem25ShuffleExchangeBounds(t *testing.T) {
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

// TestPlaxtonLemma33 checks the edge count of Lemma 3.3 exactly: each condensed-ID class U of
// Theorem 3.2's input has r·|U|·⌈q/2⌉·C(q, ⌈q/2⌉)/2^{q−1} edges leaving it, and
// 2^{d−r} processors.
//
// Plaxton, section 3.2 (A Lower Bound for the Hypercube), Lemma 3.3: "The number of
// hypercube edges from processors in U to processors outside of U is Θ(r q^{1/2} |U|)."
func TestPlaxtonLemma33(t *testing.T) {
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

// TestPlaxtonSection32DeltaMErrorLogP pins the limit of section 3.2's "Δ^M … is certainly less than dgp
// after the MultiBalance operation has been performed": it needs a minimum-error output
// (MultiBalance as section 3 defines it, see TestPlaxtonSection32DeltaMMinimumError), or an
// output of Plaxton's algorithms; an arbitrary output of error log p is not enough. On
// Hypercube(9) the loads ξ·[weight(v) > d/2] have error ξ = 9 = log p, yet Δ = Σ δ_i =
// 5670 exceeds d·p = 4608 (one group).
//
// Plaxton, section 3.2 (A Lower Bound for the Hypercube): "It is easy to see that ½(Δ^M −
// dgp)/p is a lower bound on the running time of MultiBalance, since Δ^M can only decrease
// by 2p each time step and it is certainly less than dgp after the MultiBalance operation
// has been performed."
func TestPlaxtonSection32DeltaMErrorLogP(t *testing.T) {
	d, p := 9, 1<<9
	l := make(Loads, p)
	for v := range l {
		if 2*bitsOnes(v) > d {
			l[v] = int64(d)
		}
	}
	require.Equal(t, int64(d), l.Discrepancy())
	require.Equal(t, int64(5670), totalDisc(l))
	require.Greater(t, totalDisc(l), int64(d*p))
}

// TestPlaxtonSection32DeltaMMinimumError checks section 3.2's claim for MultiBalance as
// section 3 defines it: g Balance operations, and Balance (unqualified, section 2) leaves
// ⌊x/p⌋ or ⌈x/p⌉ tokens of each group on every processor. Such an output of group j is
// a + 1_S (S: the processors holding the ceiling), so δ^j_i = |S ∩ high_i| − |S ∩ low_i|
// in absolute value ≤ p/2, Δ_j ≤ d·p/2 and Δ^M ≤ d·g·p/2 < d·g·p: the claim holds, with a
// factor 2 to spare. Exhaustive: every minimum-error output of one group on H_d, d ≤ 4
// (every S, base a ≤ 2), where moreover Δ_j is at most Lemma 2.4's maximum for m = 1 and
// |S| tokens, attained; and every minimum-error output of two groups on H_d, d ≤ 3, where
// MultiBalanceLowerBound with finalDisc = p/2 is 0 (the output is its own target). The
// outputs NewMultiBalance reaches (with MinError or not) are checked in
// TestMultiBalanceSweep.
//
// Plaxton, section 3.2 (A Lower Bound for the Hypercube): "It is easy to see that ½(Δ^M −
// dgp)/p is a lower bound on the running time of MultiBalance, since Δ^M can only decrease
// by 2p each time step and it is certainly less than dgp after the MultiBalance operation
// has been performed."
func TestPlaxtonSection32DeltaMMinimumError(t *testing.T) {
	t.Parallel()
	for d := 0; d <= 4; d++ {
		p := 1 << d
		maxBySize := make([]int64, p+1)
		l := make(Loads, p)
		for mask := uint64(0); mask < 1<<p; mask++ {
			for _, a := range []int64{0, 2} {
				for v := range l {
					l[v] = a + int64(mask>>v&1)
				}
				delta, err := DimensionDiscrepancies(l)
				if err != nil || l.Discrepancy() > 1 {
					t.Fatalf("d %d mask %b: %v", d, mask, err)
				}
				var sum int64
				for _, x := range delta {
					if 2*x > int64(p) {
						t.Fatalf("d %d mask %b: δ = %d > p/2", d, mask, x)
					}
					sum += x
				}
				if 2*sum > int64(d*p) {
					t.Fatalf("d %d mask %b: Δ = %d > dp/2", d, mask, sum)
				}
				size := bitsOnes(int(mask))
				maxBySize[size] = max(maxBySize[size], sum)
			}
		}
		for x := 0; x <= p; x++ {
			want, err := MaxTotalDiscrepancy(d, int64(x), 1)
			require.NoError(t, err)
			require.Equal(t, want, maxBySize[x], "d %d, |S| = %d", d, x)
		}
	}
	for d := 1; d <= 3; d++ {
		p := 1 << d
		for m1 := uint64(0); m1 < 1<<p; m1++ {
			for m2 := uint64(0); m2 < 1<<p; m2++ {
				groups := []Loads{make(Loads, p), make(Loads, p)}
				for v := 0; v < p; v++ {
					groups[0][v] = 1 + int64(m1>>v&1)
					groups[1][v] = int64(m2 >> v & 1)
				}
				dm, err := MultiDiscrepancies(groups)
				require.NoError(t, err)
				var total int64
				for _, x := range dm {
					total += x
				}
				g := int64(len(groups))
				// Δ^M ≤ dgp/2, hence the paper's "less than dgp".
				if 2*total > int64(d)*g*int64(p) || total >= int64(d)*g*int64(p) {
					t.Fatalf("d %d masks %b %b: Δ^M = %d", d, m1, m2, total)
				}
				lb, err := MultiBalanceLowerBound(groups, int64(p/2))
				if err != nil || lb != 0 {
					t.Fatalf("d %d masks %b %b: lower bound %d, %v", d, m1, m2, lb, err)
				}
			}
		}
	}
}
