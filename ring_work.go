package tokendist

import (
	"fmt"
	"math"
	"math/big"
)

// Analytics of Gao and Rosenberg, "On balancing computational load on rings of
// processors", sections 2 and 3: the work each PE does under KS, its DFT form, the bounds
// of Theorem 1.1 and the exact schedule of Theorems 2.2 and 3.2. Where the paper's printed
// formula is wrong these functions implement the corrected one (see the doc comments and
// the Errata section of the README).

// binom62[m][w] is C(m, w) for m ≤ 62 (all fit an int64).
var binom62 = func() (t [TreeMaxLevel + 1][TreeMaxLevel + 1]int64) {
	for m := 0; m <= TreeMaxLevel; m++ {
		t[m][0] = 1
		for w := 1; w <= m; w++ {
			t[m][w] = t[m-1][w-1] + t[m-1][w]
		}
	}
	return t
}()

// maxRingDFT bounds RingWorkDFT's p: its O(p²) cosines take seconds at 2^14.
const maxRingDFT = 1 << 14

func checkRingSize(what string, n, p int) error {
	if n < 1 {
		return badParam("%s needs n ≥ 1, got n = %d", what, n)
	}
	if p < 1 {
		return badParam("%s needs p ≥ 1 PEs, got p = %d", what, p)
	}
	return nil
}

// RingWork returns the exact work W_i(n) of every PE i of R_p when KS executes the
// complete tree T_n (Theorem 2.1): by Lemma 1.1(a) PE i executes the nodes of weight
// ≡ i (mod p), so
//
//	W_i(n) = Σ_{1 ≤ k ≤ n, k ≡ i+1 (mod p)} C(n, k).
//
// The paper's equation (2.1) omits k ≥ 1; that adds C(n, 0) = 1 to W_{p-1}(n) and makes
// the total 2^n instead of 2^n - 1 (Fact 2.1). The result is exact for any n (math/big):
// it costs O(n²/64) word operations.
func RingWork(n, p int) ([]*big.Int, error) {
	if err := checkRingSize("RingWork", n, p); err != nil {
		return nil, err
	}
	// n/2+1 binomials and p sums of up to n bits each, plus the big.Int headers.
	if n > math.MaxInt32 {
		return nil, badParam("RingWork needs n < 2^31, got n = %d", n)
	}
	if err := checkAlloc(fmt.Sprintf("RingWork(%d, %d)", n, p), int64(n/2+1)+int64(min(p, n+1)), int64(n/8+64)); err != nil {
		return nil, err
	}
	if err := checkAlloc(fmt.Sprintf("RingWork(%d, %d): %d PEs", n, p, p), int64(p), 64); err != nil {
		return nil, err
	}
	w := make([]*big.Int, p)
	for i := range w {
		w[i] = new(big.Int)
	}
	// Binomials C(n, k) by C(n, k+1) = C(n, k)(n-k)/(k+1); the second half by symmetry.
	c := big.NewInt(1)
	var num, den big.Int
	half := make([]*big.Int, 0, n/2+1)
	for k := 0; k <= n/2; k++ {
		if k > 0 {
			c.Mul(c, num.SetInt64(int64(n-k+1)))
			c.Quo(c, den.SetInt64(int64(k)))
		}
		half = append(half, new(big.Int).Set(c))
	}
	for k := 1; k <= n; k++ {
		ck := half[min(k, n-k)]
		w[(k-1)%p].Add(w[(k-1)%p], ck)
	}
	return w, nil
}

// RingWorkDFT returns W_i(n) of RingWork by the discrete Fourier transform route of
// section 2.1 (equations (2.3)-(2.6)), in floating point: with ω = e^{2πi/p},
//
//	W_i(n) = (1/p) [2^n - p·[i = p-1] + Σ_{j=1}^{p-1} ω^{-j(i+1)} (1 + ω^j)^n]
//	       = (1/p) [2^n - p·[i = p-1] + Σ_{j=1}^{p-1} (2cos(πj/p))^n cos(πj(n-2i-2)/p)].
//
// The paper's (2.6) lacks the term -p·[i = p-1]: its step "Σ_j γ^j = 0 for any p-th root
// of unity γ" fails for γ = ω^{-(i+1)} = 1. The result is close to the integer W_i(n)
// (exact after rounding while 2^n < 2^52/p); it costs O(p²) and needs n ≤ 1023 and
// p ≤ 16384.
func RingWorkDFT(n, p int) ([]float64, error) {
	if err := checkRingSize("RingWorkDFT", n, p); err != nil {
		return nil, err
	}
	if n > 1023 {
		return nil, badParam("RingWorkDFT needs n ≤ 1023 (2^n must be a float64), got n = %d; use RingWork", n)
	}
	if p > maxRingDFT {
		return nil, badParam("RingWorkDFT costs O(p²) and needs p ≤ %d, got p = %d; use RingWork", maxRingDFT, p)
	}
	mod := make([]float64, p) // (2cos(πj/p))^n
	for j := 1; j < p; j++ {
		mod[j] = math.Pow(2*math.Cos(math.Pi*float64(j)/float64(p)), float64(n))
	}
	w := make([]float64, p)
	for i := range w {
		s := math.Ldexp(1, n)
		if i == p-1 {
			s -= float64(p)
		}
		for j := 1; j < p; j++ {
			// The angle πj(n-2i-2)/p, reduced exactly modulo 2π in integers.
			a := (int64(j) * int64(n-2*i-2)) % int64(2*p)
			s += mod[j] * math.Cos(math.Pi*float64(a)/float64(p))
		}
		w[i] = s / float64(p)
	}
	return w, nil
}

// RingAlpha returns α_p = max_{0<j<p} |1 + ω^j| = 2cos(π/p) (section 2.1), the base of
// the deviation bound (2.2): α_1 = 0 (an empty maximum), α_2 = 0, α_3 = 1, and
// α_p → 2 as p grows. It costs O(1).
func RingAlpha(p int) (float64, error) {
	if p < 1 {
		return 0, badParam("RingAlpha needs p ≥ 1, got p = %d", p)
	}
	if p <= 2 {
		return 0, nil
	}
	return 2 * math.Cos(math.Pi/float64(p)), nil
}

// RingGridWork returns the exact work W_i(n) of every PE i of R_p when KS executes the
// pyramidal grid G_n (Theorem 3.1, equation (3.3)): with q = ⌊(n-i)/p⌋,
//
//	W_i(n) = (n - i - (p/2)q)(q + 1),
//
// which equals (3.1) and is 0 for the PEs i ≥ n that get no row. It costs O(p).
func RingGridWork(n, p int) ([]int64, error) {
	if err := checkRingSize("RingGridWork", n, p); err != nil {
		return nil, err
	}
	if n >= math.MaxInt32 {
		return nil, badParam("RingGridWork needs n < 2^31, got n = %d", n)
	}
	if err := checkAlloc(fmt.Sprintf("RingGridWork(%d, %d)", n, p), int64(p), 8); err != nil {
		return nil, err
	}
	w := make([]int64, p)
	for i := range w {
		if i >= n {
			continue
		}
		q := int64((n - i) / p)
		// (n-i-(p/2)q)(q+1), kept in integers: p·q·(q+1) is even.
		w[i] = int64(n-i)*(q+1) - int64(p)*q*(q+1)/2
	}
	return w, nil
}

// RingBounds collects the analytic predictions for one (n, p).
type RingBounds struct {
	// Nodes is the dag's size N (2^n - 1 or n(n+1)/2) and Ideal = N/p.
	Nodes float64 `json:"nodes"`
	Ideal float64 `json:"ideal"`
	// Alpha is α_p (trees only).
	Alpha float64 `json:"alpha"`
	// Deviation bounds max_i |W_i(n) - N/p| correctly; PaperDeviation is the paper's
	// bound, α_p^n (2.2) or 3n/2 + 2 (3.2), which can fail (see RingTreeBounds).
	Deviation      float64 `json:"deviation"`
	PaperDeviation float64 `json:"paper_deviation"`
	// Time is the exact completion time under KS-BF, max over PEs with work of W_i + i
	// (Theorems 2.2 and 3.2: PE i starts at step i and never idles), as a float64.
	Time float64 `json:"time"`
	// TimeBound is Theorem 1.1's bound: (2^n-1)/p + α_p^n + p or n(n+1)/(2p) + 3n/2 + 2.
	TimeBound float64 `json:"time_bound"`
}

// RingTreeBounds returns the predictions for T_n on R_p (Theorems 1.1(a), 2.1, 2.2). The
// corrected deviation bound is, from the exact DFT form (see RingWorkDFT),
//
//	|W_i(n) - (2^n-1)/p| ≤ ((p-1)α_p^n + 1)/p for i < p-1,  ((p-1)/p)(α_p^n + 1) for i = p-1,
//
// so Deviation = (1 - 1/p)(α_p^n + 1). The paper's (2.2), α_p^n, fails for p = 2
// (α_2 = 0 but W_0 - W_1 = 1) and at i = p-1 for small n (p = 3, n = 3: deviation 4/3 >
// α_3^3 = 1). It costs O(n²/64 + p) word operations and needs 1 ≤ n ≤ 1023.
func RingTreeBounds(n, p int) (RingBounds, error) {
	if err := checkRingSize("RingTreeBounds", n, p); err != nil {
		return RingBounds{}, err
	}
	if n > 1023 {
		return RingBounds{}, badParam("RingTreeBounds needs n ≤ 1023 (2^n must be a float64), got n = %d", n)
	}
	alpha, _ := RingAlpha(p)
	an := math.Pow(alpha, float64(n))
	b := RingBounds{Nodes: math.Ldexp(1, n) - 1, Alpha: alpha, PaperDeviation: an}
	b.Ideal = b.Nodes / float64(p)
	b.Deviation = (1 - 1/float64(p)) * (an + 1)
	b.TimeBound = b.Ideal + an + float64(p)
	w, err := RingWork(n, p)
	if err != nil {
		return RingBounds{}, err
	}
	var t, x big.Int
	for i, wi := range w {
		if wi.Sign() > 0 {
			if x.Add(wi, big.NewInt(int64(i))); x.Cmp(&t) > 0 {
				t.Set(&x)
			}
		}
	}
	b.Time, _ = new(big.Float).SetInt(&t).Float64()
	return b, nil
}

// RingGridBounds returns the predictions for G_n on R_p (Theorems 1.1(b), 3.1, 3.2):
// Deviation is max of the paper's intermediate bounds (3.4) and (3.5),
// (3/2 - 1/(2p))n and (3/2 - 1/p)n + 1/2 + 3/(2p); PaperDeviation is (3.2), 3n/2 + 2.
// It costs O(p).
func RingGridBounds(n, p int) (RingBounds, error) {
	w, err := RingGridWork(n, p)
	if err != nil {
		return RingBounds{}, err
	}
	fn, fp := float64(n), float64(p)
	b := RingBounds{Nodes: fn * (fn + 1) / 2}
	b.Ideal = b.Nodes / fp
	b.Deviation = max((1.5-1/(2*fp))*fn, (1.5-1/fp)*fn+0.5+1.5/fp)
	b.PaperDeviation = 1.5*fn + 2
	b.TimeBound = b.Ideal + 1.5*fn + 2
	for i, wi := range w {
		if wi > 0 {
			b.Time = max(b.Time, float64(wi+int64(i)))
		}
	}
	return b, nil
}

// RingTreeTau returns τ(x) = ν(x) + π(x), the step at which KS-BF executes node x of a
// complete tree on R_p (Theorem 2.2): π(x) = Wgt(x) mod p is x's PE (Lemma 1.1(a)) and
// ν(x) the number of nodes on that PE before x in breadth-first order. ν(x) does not
// depend on the tree's height, and has the closed form
//
//	ν(x) = W_π(|x|) + #{y : |y| = |x|, y <lex x, Wgt(y) ≡ π (mod p)},
//
// W as in RingWork. It costs O(|x|²/p + |x|).
func RingTreeTau(x TreeNode, p int) (int64, error) {
	if p < 1 {
		return 0, badParam("RingTreeTau needs p ≥ 1, got p = %d", p)
	}
	if x < 1 || x.Level() > TreeMaxLevel {
		return 0, badParam("RingTreeTau: %d is not a tree node (heap number in 1..2^%d-1)", uint64(x), TreeMaxLevel+1)
	}
	l := x.Level()
	pi := x.Weight() % p
	// Nodes of the levels above: weight ≡ π at lengths < l is Σ_{k ≡ π+1, k≥1} C(l, k).
	var nu int64
	for k := pi + 1; k <= l; k += min(p, l+1) { // min: k + p must not overflow
		nu += binom62[l][k]
	}
	// Same level, lexicographically smaller: at each 1 of x, put a 0 and count the
	// suffixes whose weight completes the residue.
	prefix := 0
	for t := l - 1; t >= 0; t-- {
		if x>>uint(t)&1 == 0 {
			continue
		}
		m := t // suffix length after this position
		r := (pi - prefix) % p
		if r < 0 {
			r += p
		}
		for w := r; w <= m; w += min(p, m+1) {
			nu += binom62[m][w]
		}
		prefix++
	}
	return nu + int64(pi), nil
}

// RingGridTau returns τ(k, l) = ν(k, l) + π(k, l), the step at which KS-BF executes node
// ⟨k, l⟩ of a pyramidal grid on R_p (Theorem 3.2): π = k mod p (Lemma 1.1(b)) and ν the
// number of nodes ⟨a, b⟩ with a ≡ k (mod p) before ⟨k, l⟩ in breadth-first order, in
// closed form (O(1)).
func RingGridTau(x GridNode, p int) (int64, error) {
	if p < 1 {
		return 0, badParam("RingGridTau needs p ≥ 1, got p = %d", p)
	}
	if x.K < 0 || x.L < 0 || x.K >= math.MaxInt32 || x.L >= math.MaxInt32 || x.Level() >= math.MaxInt32 {
		return 0, badParam("RingGridTau: %v is not a grid node", x)
	}
	pi := int64(x.K % p)
	pp := int64(p)
	// Levels L < λ contribute #{a ≤ L : a ≡ π} = ⌊(L-π)/p⌋ + 1 for L ≥ π.
	var nu int64
	if m := int64(x.Level()) - pi; m > 0 {
		q := m / pp
		nu = m + pp*q*(q-1)/2 + q*(m-q*pp)
	}
	// Same level, a < k with a ≡ π.
	nu += int64(x.K) / pp
	return nu + pi, nil
}
