package tokendist

import (
	"fmt"
	"math"
	"math/big"
	"math/bits"
	"math/rand/v2"
	"strconv"
)

// Loads holds the number of tokens on each node; index v is node v. Methods never
// modify the receiver.
type Loads []int64

// Clone returns a copy of l. It costs O(n).
func (l Loads) Clone() Loads { return append(Loads(nil), l...) }

// Total returns the number of tokens. It wraps silently if the sum exceeds int64: use
// Validate first on untrusted input (Run does). It costs O(n).
func (l Loads) Total() int64 {
	var t int64
	for _, x := range l {
		t += x
	}
	return t
}

// Validate returns an error wrapping ErrBadLoads if l is empty, has a negative load, or
// its total overflows int64. It returns the total otherwise. It costs O(n).
func (l Loads) Validate() (int64, error) {
	if len(l) == 0 {
		return 0, fmt.Errorf("%w: empty load vector", ErrBadLoads)
	}
	var t int64
	for v, x := range l {
		if x < 0 {
			return 0, fmt.Errorf("%w: negative load %d at node %d", ErrBadLoads, x, v)
		}
		if t > math.MaxInt64-x {
			return 0, fmt.Errorf("%w: total overflows int64 at node %d (load %d)", ErrBadLoads, v, x)
		}
		t += x
	}
	return t, nil
}

// Max returns the largest load (0 for an empty vector). It costs O(n).
func (l Loads) Max() int64 {
	mx, _ := l.extremes()
	return mx
}

// Min returns the smallest load (0 for an empty vector). It costs O(n).
func (l Loads) Min() int64 {
	_, mn := l.extremes()
	return mn
}

// Discrepancy returns max − min, the papers' measure of imbalance. It costs O(n).
func (l Loads) Discrepancy() int64 {
	mx, mn := l.extremes()
	return mx - mn
}

func (l Loads) extremes() (mx, mn int64) {
	if len(l) == 0 {
		return 0, 0
	}
	mx, mn = l[0], l[0]
	for _, x := range l[1:] {
		mx = max(mx, x)
		mn = min(mn, x)
	}
	return mx, mn
}

// Potential returns Σ load², exactly (Houle et al., Observation 2: it never increases
// under dimension exchange). Negative loads contribute their square. Valid loads (non-
// negative, total ≤ MaxInt64) have Σ load² ≤ total² < 2^126; a sum of 2^128 or more,
// possible only for invalid loads, saturates at 2^128 − 1 instead of wrapping. O(n).
func (l Loads) Potential() Uint128 {
	var p Uint128
	for _, x := range l {
		a := uint64(x)
		if x < 0 {
			a = uint64(-x)
		}
		hi, lo := bits.Mul64(a, a)
		p = p.add(Uint128{hi, lo})
	}
	return p
}

// Uint128 is an unsigned 128-bit integer, used for the exact potential Σ load², which
// exceeds 64 bits for large loads. Its zero value is 0.
type Uint128 struct {
	// Hi and Lo are the high and low 64 bits: the value is Hi·2^64 + Lo.
	Hi, Lo uint64
}

func (u Uint128) add(v Uint128) Uint128 {
	lo, c := bits.Add64(u.Lo, v.Lo, 0)
	hi, c2 := bits.Add64(u.Hi, v.Hi, c)
	if c2 != 0 {
		return Uint128{math.MaxUint64, math.MaxUint64} // saturate; unreachable for valid loads
	}
	return Uint128{hi, lo}
}

// Cmp returns -1, 0 or +1 as u is less than, equal to or greater than v. It costs O(1).
func (u Uint128) Cmp(v Uint128) int {
	switch {
	case u.Hi != v.Hi:
		if u.Hi < v.Hi {
			return -1
		}
		return 1
	case u.Lo < v.Lo:
		return -1
	case u.Lo > v.Lo:
		return 1
	}
	return 0
}

// Big returns u as a big.Int.
func (u Uint128) Big() *big.Int {
	b := new(big.Int).SetUint64(u.Hi)
	b.Lsh(b, 64)
	return b.Or(b, new(big.Int).SetUint64(u.Lo))
}

// Float64 returns u rounded to the nearest float64 (ties to even). It costs O(1).
func (u Uint128) Float64() float64 {
	if u.Hi == 0 {
		return float64(u.Lo)
	}
	// float64(Hi)·2^64 + float64(Lo) would round twice. Instead keep the top 64 bits,
	// with a sticky bit for any nonzero bit shifted out, and round once: the sticky bit
	// sits 11 places below the last kept bit, so it only decides ties.
	s := uint(64 - bits.LeadingZeros64(u.Hi))
	top := u.Hi<<(64-s) | u.Lo>>s
	if u.Lo<<(64-s) != 0 {
		top |= 1
	}
	return math.Ldexp(float64(top), int(s))
}

// String returns u in decimal.
func (u Uint128) String() string {
	if u.Hi == 0 {
		return strconv.FormatUint(u.Lo, 10)
	}
	return u.Big().String()
}

// MarshalText encodes u in decimal, so JSON traces carry the exact value.
func (u Uint128) MarshalText() ([]byte, error) { return []byte(u.String()), nil }

// UnmarshalText decodes a decimal value written by MarshalText.
func (u *Uint128) UnmarshalText(b []byte) error {
	var v *big.Int
	ok := len(b) <= 256 // 2^128 has 39 digits; allow some leading zeros, refuse essays
	if ok {
		v, ok = new(big.Int).SetString(string(b), 10)
	}
	if !ok || v.Sign() < 0 || v.BitLen() > 128 {
		return fmt.Errorf("tokendist: %s is not an unsigned 128-bit decimal", quote(b))
	}
	lo := new(big.Int).And(v, new(big.Int).SetUint64(math.MaxUint64))
	u.Hi, u.Lo = new(big.Int).Rsh(v, 64).Uint64(), lo.Uint64()
	return nil
}

func checkTokens(what string, n int, tokens int64) error {
	if n < 1 {
		return badParam("%s needs n ≥ 1 nodes, got %d", what, n)
	}
	if tokens < 0 {
		return badParam("%s needs a non-negative token count, got %d", what, tokens)
	}
	return nil
}

// PointMass returns n loads with all tokens on one node. It costs O(n).
func PointMass(n int, tokens int64, node int) (Loads, error) {
	if err := checkTokens("PointMass", n, tokens); err != nil {
		return nil, err
	}
	if node < 0 || node >= n {
		return nil, badParam("PointMass node %d outside 0..%d", node, n-1)
	}
	l, err := makeLoads("PointMass", n)
	if err != nil {
		return nil, err
	}
	l[node] = tokens
	return l, nil
}

// MaxUniformTokens is the most tokens UniformRandom throws (one random draw each).
const MaxUniformTokens = 1 << 32

// UniformRandom throws tokens one at a time onto uniformly random nodes (a multinomial
// distribution), fixed by seed. It costs O(n + tokens), so it refuses more than
// MaxUniformTokens tokens on two or more nodes (on one node they all land there).
func UniformRandom(n int, tokens int64, seed uint64) (Loads, error) {
	if err := checkTokens("UniformRandom", n, tokens); err != nil {
		return nil, err
	}
	if n > 1 && tokens > MaxUniformTokens {
		return nil, badParam("UniformRandom throws tokens one at a time: %d tokens exceed MaxUniformTokens = %d", tokens, int64(MaxUniformTokens))
	}
	r := rand.New(rand.NewPCG(seed, 0x756e69666f726d))
	l, err := makeLoads("UniformRandom", n)
	if err != nil {
		return nil, err
	}
	if n == 1 {
		l[0] = tokens
		return l, nil
	}
	for t := int64(0); t < tokens; t++ {
		l[r.IntN(n)]++
	}
	return l, nil
}

// RandomRange returns n loads drawn independently and uniformly from lo..hi, fixed by
// seed. It rejects ranges whose worst-case total n·hi exceeds MaxInt64. O(n).
func RandomRange(n int, lo, hi int64, seed uint64) (Loads, error) {
	if n < 1 {
		return nil, badParam("RandomRange needs n ≥ 1 nodes, got %d", n)
	}
	if lo < 0 || hi < lo {
		return nil, badParam("RandomRange needs 0 ≤ lo ≤ hi, got lo = %d, hi = %d", lo, hi)
	}
	if hi > 0 && int64(n) > math.MaxInt64/hi {
		return nil, badParam("RandomRange(%d, %d, %d) could overflow the int64 total", n, lo, hi)
	}
	r := rand.New(rand.NewPCG(seed, 0x72616e6765))
	l, err := makeLoads("RandomRange", n)
	if err != nil {
		return nil, err
	}
	for v := range l {
		// Uint64N draws exactly as Int64N does, and also covers hi - lo = MaxInt64.
		l[v] = lo + int64(r.Uint64N(uint64(hi-lo)+1))
	}
	return l, nil
}

// DistanceLoads returns load(v) = the distance from node to v. On any connected network
// this distribution is stable under THRESHOLD-2 (neighbours differ by at most 1) and its
// discrepancy is the eccentricity of node: the diameter when node is an end of a
// longest path (Houle et al., Theorem 5's tightness). It costs O(n + m) (one breadth-
// first search).
func DistanceLoads(net Network, node int) (Loads, error) {
	g, err := AsGraph(net)
	if err != nil {
		return nil, err
	}
	if err := requireConnected(g); err != nil {
		return nil, err
	}
	dist, err := g.BFS(node)
	if err != nil {
		return nil, err
	}
	l := make(Loads, len(dist))
	for v, d := range dist {
		l[v] = int64(d)
	}
	return l, nil
}

// Peripheral returns one end of a longest shortest path of a connected network (a node
// whose eccentricity is the diameter), the start for DistanceLoads' worst case. It costs
// O(n) on a tree and O(n·(n + m)) on other networks (Eccentricities).
func Peripheral(net Network) (int, error) {
	g, err := AsGraph(net)
	if err != nil {
		return 0, err
	}
	if g.IsTree() {
		// In a tree the farthest node from any node ends a longest path.
		dist := make([]int32, g.Order())
		queue := make([]int32, 0, g.Order())
		v, _ := farthest(g.bfs(0, dist, queue), dist)
		return v, nil
	}
	ecc, err := g.Eccentricities()
	if err != nil {
		return 0, err
	}
	best := 0
	for v, e := range ecc {
		if e > ecc[best] {
			best = v
		}
	}
	return best, nil
}
