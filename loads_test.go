package tokendist_test

import (
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tokendist/tokendist"
	"gonum.org/v1/gonum/stat/distuv"
)

func TestLoadsMetrics(t *testing.T) {
	cases := []struct {
		l                       tokendist.Loads
		total, mx, mn, disc, sq int64
	}{
		{nil, 0, 0, 0, 0, 0},
		{tokendist.Loads{7}, 7, 7, 7, 0, 49},
		{tokendist.Loads{3, 0, 5, 1}, 9, 5, 0, 5, 35},
		{tokendist.Loads{4, 4, 4}, 12, 4, 4, 0, 48},
		{tokendist.Loads{-2, 3, -5}, -4, 3, -5, 8, 38},
	}
	for _, tc := range cases {
		name := fmt.Sprint(tc.l)
		require.Equal(t, tc.total, tc.l.Total(), name)
		require.Equal(t, tc.mx, tc.l.Max(), name)
		require.Equal(t, tc.mn, tc.l.Min(), name)
		require.Equal(t, tc.disc, tc.l.Discrepancy(), name)
		require.Equal(t, tokendist.Uint128{Lo: uint64(tc.sq)}, tc.l.Potential(), name)
	}
	l := tokendist.Loads{1, 2, 3}
	c := l.Clone()
	c[0] = 100
	require.Equal(t, tokendist.Loads{1, 2, 3}, l, "Clone shares storage")
	require.Nil(t, tokendist.Loads(nil).Clone())
}

// fndBigPotential is Σ x² in math/big.
func fndBigPotential(l tokendist.Loads) *big.Int {
	sum := new(big.Int)
	for _, x := range l {
		b := big.NewInt(x)
		sum.Add(sum, b.Mul(b, b))
	}
	return sum
}

// TestLoadsPotentialExact compares Potential with math/big on loads near 2^63 (where
// Σ x² needs up to 126 bits) and on valid loads whose total is close to MaxInt64.
func TestLoadsPotentialExact(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	extremes := []int64{math.MaxInt64, math.MaxInt64 - 1, math.MinInt64, math.MinInt64 + 1, 1 << 62, 1<<32 - 1, 1 << 32, -(1 << 32), 0, 1, -1}
	for trial := 0; trial < 2000; trial++ {
		n := 1 + r.IntN(4)
		l := make(tokendist.Loads, n)
		for i := range l {
			switch r.IntN(3) {
			case 0:
				l[i] = extremes[r.IntN(len(extremes))]
			case 1:
				l[i] = int64(r.Uint64())
			default:
				l[i] = r.Int64N(1 << 40)
			}
		}
		want := fndBigPotential(l)
		p := l.Potential()
		require.Equal(t, want.String(), p.Big().String(), "%v", l)
		require.Equal(t, want.String(), p.String(), "%v", l)
	}
	// Valid loads: total ≤ MaxInt64, so Σ x² ≤ (Σ x)² < 2^126 is always exact.
	for trial := 0; trial < 500; trial++ {
		n := 1 + r.IntN(50)
		l := make(tokendist.Loads, n)
		left := uint64(math.MaxInt64)
		for i := range l {
			x := r.Uint64N(left + 1)
			if i == n-1 {
				x = left
			}
			l[i] = int64(x)
			left -= x
		}
		total, err := l.Validate()
		require.NoError(t, err)
		require.Equal(t, int64(math.MaxInt64), total)
		require.Equal(t, fndBigPotential(l).String(), l.Potential().String())
	}
	// Beyond 2^128 (impossible for valid loads) the potential saturates, never wraps.
	huge := slices.Repeat(tokendist.Loads{math.MinInt64}, 5)
	require.Equal(t, tokendist.Uint128{Hi: math.MaxUint64, Lo: math.MaxUint64}, huge.Potential())
	four := slices.Repeat(tokendist.Loads{math.MinInt64}, 4) // exactly 2^128: one too many
	require.Equal(t, tokendist.Uint128{Hi: math.MaxUint64, Lo: math.MaxUint64}, four.Potential())
	three := slices.Repeat(tokendist.Loads{math.MinInt64}, 3)
	require.Equal(t, tokendist.Uint128{Hi: 3 << 62}, three.Potential())
}

func TestLoadsValidate(t *testing.T) {
	good := []struct {
		l     tokendist.Loads
		total int64
	}{
		{tokendist.Loads{0}, 0},
		{tokendist.Loads{1, 2, 3}, 6},
		{tokendist.Loads{math.MaxInt64}, math.MaxInt64},
		{tokendist.Loads{math.MaxInt64 - 5, 5, 0}, math.MaxInt64},
	}
	for _, tc := range good {
		total, err := tc.l.Validate()
		require.NoError(t, err, "%v", tc.l)
		require.Equal(t, tc.total, total)
	}
	bad := []struct {
		name  string
		l     tokendist.Loads
		words []string
	}{
		{"empty", tokendist.Loads{}, []string{"empty"}},
		{"nil", nil, []string{"empty"}},
		{"negative", tokendist.Loads{4, 0, -3, 2}, []string{"-3", "node 2"}},
		{"most negative", tokendist.Loads{math.MinInt64}, []string{"-9223372036854775808", "node 0"}},
		{"overflow", tokendist.Loads{math.MaxInt64, 1}, []string{"overflows", "node 1"}},
		{"overflow later", tokendist.Loads{1 << 61, 1 << 61, 0, 1 << 62, 1 << 62}, []string{"overflows", "node 3"}},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.l.Validate()
			fndCheckErr(t, err, tokendist.ErrBadLoads, tc.words...)
		})
	}
}

func TestLoadsUint128(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	max128 := tokendist.Uint128{Hi: math.MaxUint64, Lo: math.MaxUint64}
	values := []tokendist.Uint128{{}, {Lo: 1}, {Lo: math.MaxUint64}, {Hi: 1}, {Hi: 1, Lo: 1}, max128, {Hi: 1 << 63},
		// 2^127 + 2^74 is a tie (half an ulp): it rounds to even, 2^127; one more unit,
		// in the low word, must round up. Rounding Hi and Lo separately gets this wrong.
		{Hi: 1<<63 | 1<<10}, {Hi: 1<<63 | 1<<10, Lo: 1}, {Hi: 1<<63 | 3<<10}, {Hi: 1<<11 | 1, Lo: 1}}
	for i := 0; i < 300; i++ {
		values = append(values, tokendist.Uint128{Hi: r.Uint64() >> r.UintN(64), Lo: r.Uint64()})
	}
	for _, a := range values {
		ab := a.Big()
		require.Equal(t, ab.String(), a.String())
		// Text round trip, alone and inside JSON.
		text, err := a.MarshalText()
		require.NoError(t, err)
		var back tokendist.Uint128
		require.NoError(t, back.UnmarshalText(text))
		require.Equal(t, a, back)
		js, err := json.Marshal(struct{ P tokendist.Uint128 }{a})
		require.NoError(t, err)
		require.Equal(t, `{"P":"`+ab.String()+`"}`, string(js))
		var dec struct{ P tokendist.Uint128 }
		require.NoError(t, json.Unmarshal(js, &dec))
		require.Equal(t, a, dec.P)
		// Float64 is the correctly rounded value.
		want, _ := new(big.Float).SetInt(ab).Float64()
		require.Equal(t, want, a.Float64(), "Float64(%v)", a)
		for _, b := range values[:20] {
			require.Equal(t, ab.Cmp(b.Big()), a.Cmp(b), "Cmp(%v, %v)", a, b)
		}
	}
	for _, bad := range []string{"", "-1", "abc", "1.5", "0x10", "340282366920938463463374607431768211456", " 1"} {
		var u tokendist.Uint128
		err := u.UnmarshalText([]byte(bad))
		fndCheckErr(t, err, nil, fmt.Sprintf("%q", bad))
	}
}

func TestLoadsPointMass(t *testing.T) {
	for n := 1; n <= 6; n++ {
		for node := 0; node < n; node++ {
			l, err := tokendist.PointMass(n, 17, node)
			require.NoError(t, err)
			want := make(tokendist.Loads, n)
			want[node] = 17
			require.Equal(t, want, l)
		}
	}
	l, err := tokendist.PointMass(3, 0, 1)
	require.NoError(t, err)
	require.Equal(t, tokendist.Loads{0, 0, 0}, l)
}

func TestLoadsUniformRandom(t *testing.T) {
	for seed := uint64(0); seed < 20; seed++ {
		n := 1 + int(seed)
		tokens := int64(seed * 37)
		l, err := tokendist.UniformRandom(n, tokens, seed)
		require.NoError(t, err)
		require.Len(t, l, n)
		total, err := l.Validate()
		require.NoError(t, err)
		require.Equal(t, tokens, total)
		again, _ := tokendist.UniformRandom(n, tokens, seed)
		require.Equal(t, l, again, "not deterministic")
	}
	a, _ := tokendist.UniformRandom(10, 1000, 1)
	b, _ := tokendist.UniformRandom(10, 1000, 2)
	require.NotEqual(t, a, b, "seed ignored")
	// Multinomial: counts pass a chi-square test of uniformity at level 10^-6.
	const n, tokens = 16, 160000
	l, _ := tokendist.UniformRandom(n, tokens, 7)
	chi2, expect := 0.0, float64(tokens)/n
	for _, x := range l {
		chi2 += (float64(x) - expect) * (float64(x) - expect) / expect
	}
	require.Less(t, chi2, distuv.ChiSquared{K: n - 1}.Quantile(1-1e-6))
}

func TestLoadsRandomRange(t *testing.T) {
	for _, tc := range [][2]int64{{0, 0}, {0, 1}, {3, 3}, {5, 9}, {0, 100}, {1 << 40, 1<<40 + 3}} {
		lo, hi := tc[0], tc[1]
		l, err := tokendist.RandomRange(2000, lo, hi, 5)
		require.NoError(t, err)
		seen := map[int64]bool{}
		for _, x := range l {
			require.True(t, lo <= x && x <= hi, "%d outside %d..%d", x, lo, hi)
			seen[x] = true
		}
		if hi-lo <= 10 {
			require.Len(t, seen, int(hi-lo+1), "not every value of %d..%d drawn", lo, hi)
		}
		again, _ := tokendist.RandomRange(2000, lo, hi, 5)
		require.Equal(t, l, again)
	}
	// The largest accepted ranges keep the total within int64; one node may take the
	// full range 0..MaxInt64.
	for _, tc := range []struct {
		n  int
		hi int64
	}{{4, math.MaxInt64 / 4}, {1, math.MaxInt64}, {2, math.MaxInt64 / 2}} {
		l, err := tokendist.RandomRange(tc.n, 0, tc.hi, 1)
		require.NoError(t, err)
		_, err = l.Validate()
		require.NoError(t, err)
		for _, x := range l {
			require.True(t, 0 <= x && x <= tc.hi)
		}
	}
}

// TestLoadsDistributionErrors covers the bad parameters of every distribution.
func TestLoadsDistributionErrors(t *testing.T) {
	ring := fndMust(tokendist.Ring(5))
	split := fndMust(tokendist.NewGraph(4, [][2]int{{0, 1}, {2, 3}}))
	cases := []struct {
		name  string
		call  func() (tokendist.Loads, error)
		is    error
		words []string
	}{
		{"PointMass n=0", func() (tokendist.Loads, error) { return tokendist.PointMass(0, 5, 0) }, tokendist.ErrBadParameter, []string{"0"}},
		{"PointMass tokens<0", func() (tokendist.Loads, error) { return tokendist.PointMass(3, -5, 0) }, tokendist.ErrBadParameter, []string{"-5"}},
		{"PointMass node=n", func() (tokendist.Loads, error) { return tokendist.PointMass(3, 5, 3) }, tokendist.ErrBadParameter, []string{"node 3"}},
		{"PointMass node<0", func() (tokendist.Loads, error) { return tokendist.PointMass(3, 5, -1) }, tokendist.ErrBadParameter, []string{"node -1"}},
		{"UniformRandom n<0", func() (tokendist.Loads, error) { return tokendist.UniformRandom(-2, 5, 0) }, tokendist.ErrBadParameter, []string{"-2"}},
		{"UniformRandom tokens<0", func() (tokendist.Loads, error) { return tokendist.UniformRandom(3, -1, 0) }, tokendist.ErrBadParameter, []string{"-1"}},
		{"RandomRange n=0", func() (tokendist.Loads, error) { return tokendist.RandomRange(0, 1, 2, 0) }, tokendist.ErrBadParameter, []string{"0"}},
		{"RandomRange lo<0", func() (tokendist.Loads, error) { return tokendist.RandomRange(3, -1, 2, 0) }, tokendist.ErrBadParameter, []string{"lo = -1"}},
		{"RandomRange hi<lo", func() (tokendist.Loads, error) { return tokendist.RandomRange(3, 5, 4, 0) }, tokendist.ErrBadParameter, []string{"hi = 4"}},
		{"RandomRange overflow", func() (tokendist.Loads, error) { return tokendist.RandomRange(3, 0, math.MaxInt64/2, 0) }, tokendist.ErrBadParameter, []string{"overflow"}},
		{"RandomRange overflow, two nodes", func() (tokendist.Loads, error) { return tokendist.RandomRange(2, 0, math.MaxInt64/2+1, 0) }, tokendist.ErrBadParameter, []string{"4611686018427387904"}},
		{"DistanceLoads nil", func() (tokendist.Loads, error) { return tokendist.DistanceLoads(nil, 0) }, tokendist.ErrNilNetwork, nil},
		{"DistanceLoads node", func() (tokendist.Loads, error) { return tokendist.DistanceLoads(ring, 5) }, tokendist.ErrBadParameter, []string{"5"}},
		{"DistanceLoads disconnected", func() (tokendist.Loads, error) { return tokendist.DistanceLoads(split, 0) }, tokendist.ErrNotConnected, []string{"4 nodes"}},
		{"DistanceLoads bad network", func() (tokendist.Loads, error) {
			return tokendist.DistanceLoads(fndListNet([]int32{1}, []int32{}), 0)
		}, tokendist.ErrBadParameter, []string{"symmetric"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l, err := tc.call()
			require.Nil(t, l)
			fndCheckErr(t, err, tc.is, tc.words...)
		})
	}
	_, err := tokendist.Peripheral(split)
	fndCheckErr(t, err, tokendist.ErrNotConnected)
	_, err = tokendist.Peripheral(nil)
	fndCheckErr(t, err, tokendist.ErrNilNetwork)
}

// TestLoadsDistanceAndPeripheral checks DistanceLoads against BFS for every node of
// every generated network (its discrepancy is the node's eccentricity, neighbours differ
// by at most one) and that Peripheral's eccentricity is the diameter.
func TestLoadsDistanceAndPeripheral(t *testing.T) {
	nets := fndGenerated()
	delete(nets, "NewGraph(5, isolated)")
	for seed := uint64(0); seed < 20; seed++ {
		nets[fmt.Sprintf("G(9, 0.4, %d)", seed)] = fndRandomGraph(t, 9, 0.4, seed)
		nets[fmt.Sprintf("RandomTree(15, %d)", seed)] = fndMust(tokendist.RandomTree(15, seed))
	}
	for name, g := range nets {
		if !g.Connected() {
			continue
		}
		ecc, err := g.Eccentricities()
		require.NoError(t, err)
		diam, _ := g.Diameter()
		for v := 0; v < g.Order(); v++ {
			l, err := tokendist.DistanceLoads(g, v)
			require.NoError(t, err)
			dist, _ := g.BFS(v)
			for w, d := range dist {
				require.Equal(t, int64(d), l[w])
			}
			require.Equal(t, int64(ecc[v]), l.Discrepancy(), "%s node %d", name, v)
			for _, e := range g.EdgeList() {
				require.LessOrEqual(t, max(l[e[0]]-l[e[1]], l[e[1]]-l[e[0]]), int64(1))
			}
		}
		p, err := tokendist.Peripheral(g)
		require.NoError(t, err)
		require.Equal(t, diam, ecc[p], "%s: Peripheral %d has eccentricity %d, diameter %d", name, p, ecc[p], diam)
		// Through a non-*Graph Network as well.
		l, err := tokendist.DistanceLoads(fndFuncNet{g.Order(), g.Neighbors}, p)
		require.NoError(t, err)
		require.Equal(t, int64(diam), l.Discrepancy())
	}
}

// FuzzUint128Text decodes arbitrary text: either an error, or a value whose decimal
// form is the canonical form of the input.
func FuzzUint128Text(f *testing.F) {
	for _, s := range []string{"0", "18446744073709551616", "340282366920938463463374607431768211455", "-1", "+7", "007", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var u tokendist.Uint128
		err := u.UnmarshalText([]byte(s))
		b, ok := new(big.Int).SetString(s, 10)
		valid := ok && b.Sign() >= 0 && b.BitLen() <= 128 && len(s) <= 256 // documented length limit
		if !valid {
			require.Error(t, err, "%q accepted as %v", s, u)
			require.True(t, strings.HasPrefix(err.Error(), "tokendist: "), "error %q: no prefix or too long", err)
			require.LessOrEqual(t, len(err.Error()), 300, "error %q: no prefix or too long", err)
			return
		}
		require.NoError(t, err, "%q rejected", s)
		require.Equal(t, b.String(), u.String(), "%q decoded as %v", s, u)
	})
}
