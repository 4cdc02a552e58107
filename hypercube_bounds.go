package tokendist

import (
	"fmt"
	"math/big"
	"math/bits"
	"slices"

	"github.com/tokendist/tokendist/internal/nilcheck"
)

// This file holds the lower bounds and worst cases of Plaxton's sections 2.2, 2.3, 2.4
// and 3.2: Hamming balls (Definitions 2.1-2.3), fringes (Definition 2.4), f(H_d, x) by
// Harper's theorem (Theorem 2.1), the time bound of Lemma 2.1, the total discrepancy of
// Lemma 2.4, the explicit upper bounds that the paper's analysis gives in this library's
// cost model, and the adversarial inputs.

// maxBallDim bounds d where counts are exact in int64.
const maxBallDim = 62

// binom returns C(n, k) for 0 ≤ n ≤ 62 (0 outside 0 ≤ k ≤ n); exact in int64.
func binom(n, k int) int64 {
	if k < 0 || k > n || n < 0 {
		return 0
	}
	k = min(k, n-k)
	c := uint64(1)
	for i := 1; i <= k; i++ {
		// c·(n−k+i) can exceed 64 bits before the exact division by i.
		hi, lo := bits.Mul64(c, uint64(n-k+i))
		c, _ = bits.Div64(hi, lo, uint64(i))
	}
	return int64(c)
}

func checkBallDim(what string, d, maxD int) error {
	if d < 0 || d > maxD {
		return badParam("%s needs a dimension in 0..%d, got d = %d", what, maxD, d)
	}
	return nil
}

// HammingBallSize returns |B(i, r)|, the number of processors within Hamming distance r
// of a processor of Hypercube(d): Σ_{l=0}^{r} C(d, l) (Plaxton, Definitions 2.1-2.2; the
// ball of radius r includes layer r, as Definition 2.3 and Lemma 2.2 require, see
// docs/errata.md, P1). It costs O(d·r) and accepts 0 ≤ d ≤ 62 and r ≥ 0 (r > d gives 2^d).
func HammingBallSize(d, r int) (int64, error) {
	if err := checkBallDim("HammingBallSize", d, maxBallDim); err != nil {
		return 0, err
	}
	if r < 0 {
		return 0, badParam("HammingBallSize needs a radius r ≥ 0, got r = %d", r)
	}
	var v int64
	for l := 0; l <= min(r, d); l++ {
		v += binom(d, l)
	}
	return v, nil
}

// HammingBallShape returns the radius r and the outer-layer size y of a Hamming ball of
// x processors in Hypercube(d) (Plaxton, Definition 2.3): the unique r, y with
// x = y + Σ_{l=0}^{r−1} C(d, l) and 1 ≤ y ≤ C(d, r). It needs 1 ≤ x ≤ 2^d, 0 ≤ d ≤ 62,
// and costs O(d²).
func HammingBallShape(d int, x int64) (r int, y int64, err error) {
	if err := checkBallDim("HammingBallShape", d, maxBallDim); err != nil {
		return 0, 0, err
	}
	if x < 1 || x > int64(1)<<d {
		return 0, 0, badParam("HammingBallShape needs 1 ≤ x ≤ 2^%d, got x = %d", d, x)
	}
	for r = 0; ; r++ {
		if c := binom(d, r); x <= c {
			return r, x, nil
		} else {
			x -= c
		}
	}
}

// HammingBall returns a Hamming ball of x processors of Hypercube(d) centred at center
// (Plaxton, Definition 2.3): every processor within distance r−1 of center and the
// first y of distance r, where (r, y) = HammingBallShape(d, x), listed by distance and,
// within a layer, in Harper's simplicial order (a set of flipped dimensions A comes
// before B when the lowest dimension in which they differ is in A). This is the ball of
// Harper's theorem (Theorem 2.1): its fringe is f(H_d, x), the least fringe of any set of
// x processors. The order is also Lemma 2.4's fill order when center = 2^d − 1. It costs
// O(x·d) and needs 0 ≤ d ≤ 30, 0 ≤ x ≤ 2^d and center in 0..2^d−1.
func HammingBall(d, x, center int) ([]int, error) {
	if err := checkBallDim("HammingBall", d, 30); err != nil {
		return nil, err
	}
	p := 1 << d
	if x < 0 || x > p {
		return nil, badParam("HammingBall needs 0 ≤ x ≤ 2^%d, got x = %d", d, x)
	}
	if center < 0 || center >= p {
		return nil, badParam("HammingBall centre %d outside 0..%d", center, p-1)
	}
	ball := make([]int, 0, x)
	for l := 0; len(ball) < x; l++ {
		ball = appendLayer(ball, d, l, x-len(ball), center)
	}
	return ball, nil
}

// appendLayer appends up to k processors at distance l from center in simplicial order:
// the weight-l words u in decreasing order, bit-reversed (so that the lowest flipped
// dimension decides), XOR center.
func appendLayer(ball []int, d, l, k, center int) []int {
	full := uint64(1)<<d - 1
	switch l {
	case 0:
		return append(ball, center)
	case d:
		return append(ball, center^int(full))
	}
	u := ((uint64(1) << l) - 1) << (d - l) // the largest weight-l word
	for i := 0; i < k; i++ {
		ball = append(ball, center^int(reverseBits(u, d)))
		if u == (uint64(1)<<l)-1 {
			break
		}
		u = ^gosper(^u&full) & full // the next smaller word of weight l
	}
	return ball
}

// gosper returns the next larger word with the same number of ones.
func gosper(x uint64) uint64 {
	c := x & -x
	r := x + c
	return (((r ^ x) >> 2) / c) | r
}

func reverseBits(u uint64, d int) uint64 {
	if d == 0 {
		return 0
	}
	return bits.Reverse64(u) >> (64 - d)
}

// Fringe returns |F(G, U)|, the number of processors of set that have a neighbour outside
// set (Plaxton, Definition 2.4). Repeated entries count once. It costs O(n + Σ deg) and
// returns an error wrapping ErrBadParameter for a node outside 0..n−1.
func Fringe(net Network, set []int) (int, error) {
	g, err := AsGraph(net)
	if err != nil {
		return 0, err
	}
	n := g.Order()
	in := make([]bool, n)
	for _, v := range set {
		if v < 0 || v >= n {
			return 0, badParam("Fringe: node %d outside 0..%d", v, n-1)
		}
		in[v] = true
	}
	f := 0
	for v, ok := range in {
		if !ok {
			continue
		}
		for _, u := range g.Neighbors(v) {
			if !in[u] {
				f++
				break
			}
		}
	}
	return f, nil
}

// MinFringe returns f(G, x), the least fringe of any set of x nodes (Plaxton,
// Definition 2.4), and one set attaining it, by exhaustive search over all C(n, x) sets:
// O(C(n, x)·x) for networks of at most 24 nodes. It serves to check Harper's theorem
// and to measure small shuffle-exchanges, whose f has no closed form.
func MinFringe(net Network, x int) (int, []int, error) {
	if nilcheck.IsNil(net) {
		return 0, nil, ErrNilNetwork
	}
	if n := net.Order(); n > 24 {
		return 0, nil, badParam("MinFringe searches networks of at most 24 nodes, got %d", n)
	}
	g, err := AsGraph(net)
	if err != nil {
		return 0, nil, err
	}
	n := g.Order()
	if x < 0 || x > n {
		return 0, nil, badParam("MinFringe needs 0 ≤ x ≤ %d, got x = %d", n, x)
	}
	nb := make([]uint32, n)
	for v := range nb {
		for _, u := range g.Neighbors(v) {
			nb[v] |= 1 << u
		}
	}
	best, bestSet := n+1, uint32(0)
	forEachSubset(n, x, func(set uint32) {
		f := 0
		for s := set; s != 0; s &= s - 1 {
			if nb[bits.TrailingZeros32(s)]&^set != 0 {
				f++
			}
		}
		if f < best {
			best, bestSet = f, set
		}
	})
	var nodes []int
	for s := bestSet; s != 0; s &= s - 1 {
		nodes = append(nodes, bits.TrailingZeros32(s))
	}
	return best, nodes, nil
}

// forEachSubset calls fn on every x-subset of n ≤ 31 elements, as a bit mask.
func forEachSubset(n, x int, fn func(uint32)) {
	if x == 0 {
		fn(0)
		return
	}
	limit := uint64(1) << n
	for s := uint64(1)<<x - 1; s < limit; s = gosper(s) {
		fn(uint32(s))
	}
}

// HypercubeFringe returns f(H_d, x), the least fringe of a set of x processors of
// Hypercube(d), by Harper's theorem (Plaxton, Theorem 2.1): the fringe of HammingBall
// (d, x, ·). With (r, y) = HammingBallShape(d, x), the fringe is the y processors of the
// outer layer (when r < d) plus the processors of layer r−1 with a neighbour among the
// C(d, r) − y layer-r processors left out; those form a final segment of the simplicial
// order, whose shadow the Kruskal–Katona formula counts. It costs O(d²) for 0 ≤ d ≤ 62
// and 0 ≤ x ≤ 2^d.
func HypercubeFringe(d int, x int64) (int64, error) {
	if err := checkBallDim("HypercubeFringe", d, maxBallDim); err != nil {
		return 0, err
	}
	if x < 0 || x > int64(1)<<d {
		return 0, badParam("HypercubeFringe needs 0 ≤ x ≤ 2^%d, got x = %d", d, x)
	}
	if x == 0 {
		return 0, nil
	}
	r, y, _ := HammingBallShape(d, x)
	var f int64
	if r < d {
		f = y
	}
	return f + shadow(binom(d, r)-y, r), nil
}

// shadow returns the Kruskal–Katona lower shadow size of the first t r-sets in colex
// order: write t = C(a_r, r) + C(a_{r−1}, r−1) + ... + C(a_s, s), a_r > ... > a_s ≥ s ≥ 1,
// and sum C(a_i, i−1).
func shadow(t int64, r int) int64 {
	var s int64
	for k := r; k >= 1 && t > 0; k-- {
		a := k
		for binom(a+1, k) <= t {
			a++
		}
		t -= binom(a, k)
		s += binom(a, k-1)
	}
	return s
}

// BalanceLowerBound returns the time bound of Plaxton's Lemma 2.1 on Hypercube(d) with
// f(H_d, x) from Harper's theorem: any algorithm that balances n tokens, at most m per
// processor, to error at most xi needs at least ⌈(n − x·c)/f(H_d, x)⌉ time steps on the
// input HammingBallLoads(d, n, m, ·), where x = ⌈n/m⌉ and c = ⌊n/p⌋ + xi is the most a
// processor may hold at the end (c = ⌈n/p⌉ for minimum error, as in the paper): the
// packed ball must shed n − x·c tokens and only its f(H_d, x) fringe processors can
// send, one token per time step each. It returns 0 when nothing must leave. It needs
// 0 ≤ d ≤ 62, n ≥ 1, ⌈n/p⌉ ≤ m ≤ n and xi ≥ MinimumError(n, p), and costs O(d²).
func BalanceLowerBound(d int, n, m, xi int64) (int64, error) {
	if err := checkBallDim("BalanceLowerBound", d, maxBallDim); err != nil {
		return 0, err
	}
	p := int64(1) << d
	if n < 1 || m > n || m < (n+p-1)/p {
		return 0, badParam("BalanceLowerBound needs n ≥ 1 and ⌈n/p⌉ ≤ m ≤ n, got n = %d, m = %d, p = %d", n, m, p)
	}
	if xi < 0 || (xi == 0 && n%p != 0) {
		return 0, badParam("BalanceLowerBound: error %d is below the minimum error of %d tokens on %d processors", xi, n, p)
	}
	x := (n + m - 1) / m
	c := n/p + xi
	if c >= n || x >= (n+c-1)/c {
		return 0, nil // x·c ≥ n: the ball may keep everything
	}
	f, _ := HypercubeFringe(d, x)
	return (n - x*c + f - 1) / f, nil
}

// PackedLoads returns the loads of n tokens packed m per processor onto nodes in order
// (the last one gets n mod m), on a network of p processors: the adversarial inputs of
// Lemmas 2.1 and 2.4. It needs m ≥ 1, n ≥ 0, ⌈n/m⌉ ≤ len(nodes) and nodes in 0..p−1
// without repeats. It costs O(p + len(nodes)).
func PackedLoads(p int, nodes []int, n, m int64) (Loads, error) {
	if p < 1 || m < 1 || n < 0 {
		return nil, badParam("PackedLoads needs p ≥ 1, m ≥ 1 and n ≥ 0, got p = %d, m = %d, n = %d", p, m, n)
	}
	x := ceilDiv(n, m)
	if x > int64(len(nodes)) {
		return nil, badParam("PackedLoads: %d tokens at most %d per node need %d nodes, got %d", n, m, x, len(nodes))
	}
	l, err := makeLoads("PackedLoads", p)
	if err != nil {
		return nil, err
	}
	for _, v := range nodes[:x] {
		if v < 0 || v >= p || l[v] != 0 {
			return nil, badParam("PackedLoads: node %d is outside 0..%d or repeated", v, p-1)
		}
		l[v] = min(m, n)
		n -= l[v]
	}
	return l, nil
}

// HammingBallLoads returns the worst case of Plaxton's Lemma 2.4: n tokens packed m per
// processor into HammingBall(d, ⌈n/m⌉, center), which maximises the total discrepancy
// Σ δ_i over all inputs with at most m tokens per processor when center = 2^d − 1 (or any
// centre, by symmetry). With the Harper ball it is also the input of BalanceLowerBound.
// It costs O(p + ⌈n/m⌉·d) and needs 0 ≤ d ≤ 30, m ≥ 1, 0 ≤ n ≤ m·2^d.
func HammingBallLoads(d int, n, m int64, center int) (Loads, error) {
	if err := checkBallDim("HammingBallLoads", d, 30); err != nil {
		return nil, err
	}
	p := int64(1) << d
	if m < 1 || n < 0 || ceilDiv(n, m) > p {
		return nil, badParam("HammingBallLoads needs m ≥ 1 and 0 ≤ n ≤ m·2^%d, got n = %d, m = %d", d, n, m)
	}
	ball, err := HammingBall(d, int(ceilDiv(n, m)), center)
	if err != nil {
		return nil, err
	}
	return PackedLoads(int(p), ball, n, m)
}

// DimensionOrderWorstLoads returns loads of at most m tokens per processor on which
// NewDimensionOrderBalance takes Θ(m log p) time with m = O(n/p), the case Plaxton's
// section 2.3 says exists: the processors whose bits above j are 1…10 (bit j+1 clear,
// all higher bits set) form a region R_j, j = 0..d−2, and v ∈ R_j holds m tokens if bit j
// of v is set. Balancing dimensions below j leaves every subcube of R_j constant, so step
// j balances pairs that differ by m, and each of the first d−1 steps costs
// ⌈m/2⌉ + PairOverhead. The total is about m·p/2. It needs 0 ≤ d ≤ 30 and m ≥ 0.
func DimensionOrderWorstLoads(d int, m int64) (Loads, error) {
	if err := checkBallDim("DimensionOrderWorstLoads", d, 30); err != nil {
		return nil, err
	}
	if m < 0 {
		return nil, badParam("DimensionOrderWorstLoads needs m ≥ 0, got %d", m)
	}
	p := 1 << d
	// p/4 processors (those whose bits top and top−1 are 0 and 1) hold m.
	if _, ok := mul64(int64(p/4), m); !ok {
		return nil, overflow("DimensionOrderWorstLoads(%d, %d): total %d·%d exceeds int64", d, m, p/4, m)
	}
	l, err := makeLoads("DimensionOrderWorstLoads", p)
	if err != nil {
		return nil, err
	}
	for v := range l {
		// v ∈ R_j for j+1 the highest clear bit of v, if that is not bit 0.
		top := bits.Len(uint(^v&(p-1))) - 1
		if top < 1 {
			continue
		}
		if j := top - 1; v>>j&1 == 1 {
			l[v] = m
		}
	}
	return l, nil
}

// DimensionDiscrepancies returns δ_0, ..., δ_{d−1} of loads on Hypercube(d) (Plaxton,
// Definition 2.6): δ_i is the absolute difference between the tokens of the processors
// with bit i set and those with bit i clear. Their sum is Lemma 2.4's A. It costs O(p)
// and needs a length that is a power of two.
func DimensionDiscrepancies(l Loads) ([]int64, error) {
	d, ok := log2Order(len(l))
	if !ok {
		return nil, fmt.Errorf("%w: %d loads is not a power of two", ErrBadLoads, len(l))
	}
	if _, err := l.Validate(); err != nil {
		return nil, err
	}
	delta := make([]int64, d)
	buf := l.Clone()
	for t := d - 1; t >= 0; t-- {
		half := 1 << t
		var s int64
		for z := 0; z < half; z++ {
			s += buf[z+half] - buf[z]
			buf[z] += buf[z+half]
		}
		delta[t] = abs64(s)
	}
	return delta, nil
}

// MaxTotalDiscrepancy returns the largest total discrepancy A = Σ_i δ_i that n tokens
// with at most m per processor can have on Hypercube(d) (Plaxton, Lemma 2.4): that of
// the packing into a Hamming ball, 2·Σ w(v)·load(v) − n·d with the heaviest processors
// (weight w) filled first. It costs O(d²) and needs 0 ≤ d ≤ 62, m ≥ 1, 0 ≤ n ≤ m·2^d
// (and m·d·2^d below 2^63).
func MaxTotalDiscrepancy(d int, n, m int64) (int64, error) {
	if err := checkBallDim("MaxTotalDiscrepancy", d, maxBallDim); err != nil {
		return 0, err
	}
	p := int64(1) << d
	if m < 1 || n < 0 || ceilDiv(n, m) > p {
		return 0, badParam("MaxTotalDiscrepancy needs m ≥ 1 and 0 ≤ n ≤ m·2^%d, got n = %d, m = %d", d, n, m)
	}
	// Exact in big integers; the result is at most n·d but the partial sums may not be.
	a := new(big.Int)
	t := new(big.Int)
	for w := d; w >= 0 && n > 0; w-- {
		full := min(binom(d, w), n/m) // processors of weight w filled with m tokens
		t.SetInt64(full).Mul(t, big.NewInt(m)).Mul(t, big.NewInt(int64(2*w-d)))
		a.Add(a, t)
		n -= full * m
		if full < binom(d, w) && n > 0 {
			t.SetInt64(n).Mul(t, big.NewInt(int64(2*w-d)))
			a.Add(a, t)
			n = 0
		}
	}
	if !a.IsInt64() {
		return 0, overflow("MaxTotalDiscrepancy(%d, n, %d) = %v exceeds int64", d, m, a)
	}
	return a.Int64(), nil
}

// DimensionOrderTimeBound returns the most model time NewDimensionOrderBalance (without
// MinError) can take on net from loads of at most m tokens per processor: loads stay in
// [0, m], so each of the d steps costs at most ⌈m/2⌉ + PairOverhead, and on the
// shuffle-exchange each unshuffle at most m + d − 1 (Plaxton's O(m log p), section 2.3).
func DimensionOrderTimeBound(net Network, m int64) (int64, error) {
	shape, err := detectCube("DimensionOrderTimeBound", net)
	if err != nil {
		return 0, err
	}
	if m < 0 {
		return 0, badParam("DimensionOrderTimeBound needs m ≥ 0, got %d", m)
	}
	d := big.NewInt(int64(shape.d))
	t := new(big.Int).Mul(d, big.NewInt(ceilDiv(m, 2)+PairOverhead))
	if shape.topo == topoShuffleExchange {
		u := big.NewInt(m)
		u.Add(u, d).Sub(u, big.NewInt(1)).Mul(u, d)
		t.Add(t, u)
	}
	if !t.IsInt64() {
		return 0, overflow("DimensionOrderTimeBound(%v, %d) = %v exceeds int64", net, m, t)
	}
	return t.Int64(), nil
}

// LeightonTime returns the exact model time of NewLeightonBalance on net when the largest
// load is m: one all-reduce of m and m phases of a prefix sum and a route, (2m + 1)·d on
// Hypercube(d) and twice that on ShuffleExchange(d) (Plaxton's O(m log p), section 2.1).
// Theorem 2.4's post-processing after an error of xi costs LeightonTime(net, xi) plus one
// more all-reduce (the minimum).
func LeightonTime(net Network, m int64) (int64, error) {
	shape, err := detectCube("LeightonTime", net)
	if err != nil {
		return 0, err
	}
	if m < 0 {
		return 0, badParam("LeightonTime needs m ≥ 0, got %d", m)
	}
	if shape.d == 0 {
		return 0, nil
	}
	t := big.NewInt(m)
	t.Lsh(t, 1).Add(t, big.NewInt(1)).Mul(t, big.NewInt(shape.reduceTime()))
	if !t.IsInt64() {
		return 0, overflow("LeightonTime(%v, %d) = %v exceeds int64", net, m, t)
	}
	return t.Int64(), nil
}

// HypercubeBalanceTimeBound returns an explicit upper bound on the model time of
// NewHypercubeBalance (without MinError) on Hypercube(d) from loads of at most m tokens per
// processor, following Plaxton's analysis in section 2.3 in this library's cost model:
// the selection all-reduces cost Σ_{l=2}^{d} allReduce(l), at most 4l each; when a
// subcube of dimension l balances across i*, its halves have error at most l−1
// (Lemma 2.3), so no pair differs by more than ⌊δ_{i*}/2^{l−1}⌋ + 2(l−1), nor by more
// than m; and δ_{i*} is at most the average ⌊A/l⌋, with A ≤ max over n of
// MaxTotalDiscrepancy(l, n, m) (Lemmas 2.4 and 2.5). That level then costs at most
// ⌈D/2⌉ + PairOverhead for the smaller bound D. The sum is O(m √log p + log² p). It
// costs O(d²) and needs 0 ≤ d ≤ 62 and 0 ≤ m with m·d·2^d below 2^63.
func HypercubeBalanceTimeBound(d int, m int64) (int64, error) {
	if err := checkBallDim("HypercubeBalanceTimeBound", d, maxBallDim); err != nil {
		return 0, err
	}
	if m < 0 {
		return 0, badParam("HypercubeBalanceTimeBound needs m ≥ 0, got %d", m)
	}
	t := new(big.Int)
	for l := 1; l <= d; l++ {
		if l >= 2 {
			t.Add(t, big.NewInt(allReduceTime(int64(l), l)))
		}
		// max over n of the Lemma 2.4 packing: fill every processor of weight > l/2.
		var a int64
		for w := l/2 + 1; w <= l; w++ {
			a += binom(l, w) * int64(2*w-l)
		}
		diff := new(big.Int).Mul(big.NewInt(m), big.NewInt(a))
		diff.Quo(diff, big.NewInt(int64(l))).Rsh(diff, uint(l-1)).Add(diff, big.NewInt(2*int64(l-1)))
		dm := m
		if diff.IsInt64() {
			dm = min(diff.Int64(), m)
		}
		t.Add(t, big.NewInt(ceilDiv(dm, 2)+PairOverhead))
	}
	if !t.IsInt64() {
		return 0, overflow("HypercubeBalanceTimeBound(%d, %d) = %v exceeds int64", d, m, t)
	}
	return t.Int64(), nil
}

// MultiDiscrepancies returns the multi-discrepancies δ^M_0, ..., δ^M_{d−1} of groups on
// Hypercube(d) (Plaxton, Definition 3.2): δ^M_i = Σ_j δ_i^j. Their sum is Δ^M. Every
// group must have the same power-of-two length. It costs O(p·g).
func MultiDiscrepancies(groups []Loads) ([]int64, error) {
	if len(groups) < 1 {
		return nil, badParam("MultiDiscrepancies needs g ≥ 1 groups, got %d", len(groups))
	}
	var sum []int64
	for j, grp := range groups {
		if len(grp) != len(groups[0]) {
			return nil, fmt.Errorf("%w: group %d has %d loads, group 0 has %d", ErrBadLoads, j, len(grp), len(groups[0]))
		}
		delta, err := DimensionDiscrepancies(grp)
		if err != nil {
			return nil, fmt.Errorf("%w (group %d)", err, j)
		}
		if sum == nil {
			sum = delta
			continue
		}
		for i, x := range delta {
			sum[i] += x
		}
	}
	return sum, nil
}

// MultiBalanceLowerBound returns the lower bound of Plaxton's section 3.2 on the time of
// multi-balancing groups on Hypercube(d) by any algorithm that ends with every per-group
// discrepancy δ^j_i at most finalDisc: one token crossing dimension i changes δ^j_i by at
// most 2 and every processor sends at most one token per time step, so Δ^M = Σ_{i,j} δ^j_i
// falls by at most 2p per time step, and the time is at least
// ⌈(Δ^M − g·d·finalDisc)/(2p)⌉ (0 if that is negative).
//
// A minimum-error output (each group j holds ⌊x_j/p⌋ or ⌈x_j/p⌉ tokens on every
// processor: MultiBalance as section 3 defines it) has δ^j_i ≤ p/2, and so has every
// output of NewMultiBalance and of the Balance algorithms in either order, with or
// without MinError (balancing across one dimension leaves the signed sums across the
// others unchanged, and right after it every pair differs by at most one); so
// finalDisc = p/2 applies to them, and the paper's d·g·p subtracts twice as much. An
// arbitrary output of error ξ per group only has δ^j_i ≤ (p/2)·ξ. It costs O(p·g).
func MultiBalanceLowerBound(groups []Loads, finalDisc int64) (int64, error) {
	if finalDisc < 0 {
		return 0, badParam("MultiBalanceLowerBound needs finalDisc ≥ 0, got %d", finalDisc)
	}
	delta, err := MultiDiscrepancies(groups)
	if err != nil {
		return 0, err
	}
	p := int64(len(groups[0]))
	var total int64
	for _, x := range delta {
		total += x
	}
	rest := total - int64(len(groups))*int64(len(delta))*finalDisc
	if rest <= 0 || p < 2 {
		return 0, nil
	}
	return (rest + 2*p - 1) / (2 * p), nil
}

// CondensedIDGroups returns the worst-case NewMultiBalance input of Plaxton's Theorem 3.2
// on Hypercube(d) with g = 2^r groups: q is ⌊d/r⌋ − 1 or ⌊d/r⌋, whichever is odd; bit i
// of a processor's r-bit condensed ID is the majority of its ID bits iq..iq+q−1; and
// every processor holds perNode tokens, all of the group given by its condensed ID.
// Exactly 2^{d−r} processors share a condensed ID (Lemma 3.3). It costs O(p·g) memory
// and needs 1 ≤ r ≤ d ≤ 30 and perNode ≥ 0.
func CondensedIDGroups(d, r int, perNode int64) ([]Loads, error) {
	if err := checkBallDim("CondensedIDGroups", d, 30); err != nil {
		return nil, err
	}
	if r < 1 || r > d {
		return nil, badParam("CondensedIDGroups needs 1 ≤ r ≤ d = %d, got r = %d", d, r)
	}
	if perNode < 0 {
		return nil, badParam("CondensedIDGroups needs perNode ≥ 0, got %d", perNode)
	}
	q := d / r
	if q%2 == 0 {
		q--
	}
	p, g := 1<<d, 1<<r
	if _, ok := mul64(int64(p), perNode); !ok {
		return nil, overflow("CondensedIDGroups(%d, %d, %d): total 2^%d·%d exceeds int64", d, r, perNode, d, perNode)
	}
	if err := checkAlloc(fmt.Sprintf("CondensedIDGroups(%d, %d): %d groups of %d loads", d, r, g, p), int64(g)*int64(p), 8); err != nil {
		return nil, err
	}
	groups := make([]Loads, g)
	for j := range groups {
		groups[j] = make(Loads, p)
	}
	for v := 0; v < p; v++ {
		groups[condensedID(v, r, q)][v] = perNode
	}
	return groups, nil
}

// condensedID returns the r-bit condensed ID of v: bit i is the majority of the q bits
// of field i.
func condensedID(v, r, q int) int {
	id := 0
	for i := 0; i < r; i++ {
		field := (v >> (i * q)) & (1<<q - 1)
		if 2*bits.OnesCount(uint(field)) > q {
			id |= 1 << i
		}
	}
	return id
}

// ShuffleExchangeLowerBound returns a lower bound in the manner of Plaxton's Theorem 2.5
// on the time any algorithm needs to balance n tokens, at most m per processor, to error
// at most xi on ShuffleExchange(d), and the set the tokens are packed into
// (PackedLoads(2^d, set, n, m) is the input). It applies Lemma 2.1 to the best of two
// families of unions of necklaces, whose fringe consists of exchange edges only: the
// processors of weight at most k, and those whose longest cyclic run of zeros is at
// least L. Theorem 2.5's Ω(m log(n/m)) rests on Cypher's chip partition, which is not
// constructive; this bound is rigorous but weaker (see docs/errata.md, P4). It costs
// O(p·d) for 2 ≤ d ≤ 20 and needs the same n, m, xi as BalanceLowerBound.
func ShuffleExchangeLowerBound(d int, n, m, xi int64) (int64, []int, error) {
	if d < 2 || d > 20 {
		return 0, nil, badParam("ShuffleExchangeLowerBound needs 2 ≤ d ≤ 20, got d = %d", d)
	}
	p := 1 << d
	if n < 1 || m > n || m < (n+int64(p)-1)/int64(p) {
		return 0, nil, badParam("ShuffleExchangeLowerBound needs n ≥ 1 and ⌈n/p⌉ ≤ m ≤ n, got n = %d, m = %d, p = %d", n, m, p)
	}
	if xi < 0 || (xi == 0 && n%int64(p) != 0) {
		return 0, nil, badParam("ShuffleExchangeLowerBound: error %d is below the minimum error of %d tokens on %d processors", xi, n, p)
	}
	c := n/int64(p) + xi
	x := (n + m - 1) / m
	// key(v) orders each family; a set is {v : key(v) ≤ t}.
	weight := func(v int) int { return bits.OnesCount(uint(v)) }
	run := func(v int) int { return d - longestZeroRun(v, d) }
	best, bestT := int64(0), -1
	var bestKey func(int) int
	for _, key := range []func(int) int{weight, run} {
		size := make([]int64, d+2)
		fringe := make([]int64, d+2)
		for v := 0; v < p; v++ {
			kv, ku := key(v), key(v^1)
			size[kv+1]++
			if ku > kv { // v is in the sets with t in [kv, ku)
				fringe[kv]++
				fringe[ku]--
			}
		}
		for t := 0; t <= d; t++ {
			size[t+1] += size[t]
			if t > 0 {
				fringe[t] += fringe[t-1]
			}
			s, f := size[t+1], fringe[t]
			if s < x || f == 0 || c >= n || s >= (n+c-1)/c {
				continue // too small, no fringe, or it may keep every token
			}
			if b := (n - s*c + f - 1) / f; b > best {
				best, bestT, bestKey = b, t, key
			}
		}
	}
	if bestT < 0 {
		return 0, nil, nil
	}
	var set []int
	for v := 0; v < p; v++ {
		if bestKey(v) <= bestT {
			set = append(set, v)
		}
	}
	// Pack the tokens deepest inside the set first (smallest key), far from its fringe.
	slices.SortStableFunc(set, func(a, b int) int { return bestKey(a) - bestKey(b) })
	return best, set, nil
}

// longestZeroRun returns the longest cyclic run of zeros of the d-bit word v.
func longestZeroRun(v, d int) int {
	if v == 0 {
		return d
	}
	best, cur := 0, 0
	for i := 0; i < 2*d; i++ {
		if v>>(i%d)&1 == 0 {
			cur++
			best = max(best, cur)
		} else {
			cur = 0
		}
	}
	return min(best, d)
}
