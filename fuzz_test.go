package tokendist_test

import (
	"errors"
	"math"
	"math/big"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tokendist/tokendist"
)

// fuzzPrefixed fails unless err is nil or a short "tokendist: " error.
func fuzzPrefixed(t *testing.T, err error) {
	t.Helper()
	if err != nil && (!strings.HasPrefix(err.Error(), "tokendist: ") || len(err.Error()) > 1000) {
		t.Fatalf("error without the prefix or too long (%d bytes): %.200q", len(err.Error()), err.Error())
	}
}

// FuzzTextDecoders feeds arbitrary text to Status.UnmarshalText and ParseTreeNode:
// either a short prefixed error or a value that encodes back to the input.
func FuzzTextDecoders(f *testing.F) {
	for _, s := range []string{"Done", "Failed", "λ", "0101", "", strings.Repeat("1", 70), "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var st tokendist.Status
		err := st.UnmarshalText([]byte(s))
		fuzzPrefixed(t, err)
		if err == nil && st.String() != s {
			t.Fatalf("status %q decoded as %v", s, st)
		}
		x, err := tokendist.ParseTreeNode(s)
		fuzzPrefixed(t, err)
		if err == nil {
			want := s
			if want == "" {
				want = "λ"
			}
			require.Equal(t, want, x.String(), "tree node %q decoded as %v", s, x)
		}
	})
}

// FuzzBounds checks the closed forms and bounds against exact big-integer arithmetic
// or, where there is no simple oracle, for sign: every integer result is exact or an
// error, never a wrapped value.
func FuzzBounds(f *testing.F) {
	f.Add(int64(3), int64(2), int64(10))
	f.Add(int64(math.MaxInt64), int64(math.MaxInt64), int64(math.MaxInt64))
	f.Add(int64(62), int64(1), int64(math.MaxInt64))
	f.Add(int64(-1), int64(math.MinInt64), int64(0))
	f.Fuzz(func(t *testing.T, a, b, m int64) {
		h, k := int(a), int(b)
		// KaryTreeBound = min((k−1)h + 1, ⌊(k+2)(h+1)/2⌋) for k ≥ 1, h ≥ 1.
		v, err := tokendist.KaryTreeBound(tokendist.KaryShape{Height: h, Arity: k})
		fuzzPrefixed(t, err)
		if h >= 1 && k >= 1 {
			H, K := big.NewInt(a), big.NewInt(b)
			x := new(big.Int).Sub(K, big.NewInt(1))
			x.Mul(x, H).Add(x, big.NewInt(1))
			y := new(big.Int).Add(K, big.NewInt(2))
			y.Mul(y, new(big.Int).Add(H, big.NewInt(1))).Rsh(y, 1)
			if y.Cmp(x) < 0 {
				x = y
			}
			switch {
			case err == nil && (!x.IsInt64() || x.Int64() != int64(v)):
				t.Fatalf("KaryTreeBound(%d, %d) = %d, exact %v", h, k, v, x)
			case err != nil && x.IsInt64() && x.Int64() <= math.MaxInt:
				t.Fatalf("KaryTreeBound(%d, %d): %v, exact %v fits", h, k, err, x)
			case err != nil && !errors.Is(err, tokendist.ErrOverflow):
				t.Fatalf("KaryTreeBound(%d, %d): %v, not ErrOverflow", h, k, err)
			}
		}
		// PairTime = ⌈|a − b|/2⌉ + 1 exactly, or ErrOverflow when that exceeds MaxInt64.
		d := new(big.Int).Sub(big.NewInt(a), big.NewInt(b))
		d.Abs(d).Add(d, big.NewInt(1)).Rsh(d, 1).Add(d, big.NewInt(tokendist.PairOverhead))
		switch pt, err := tokendist.PairTime(a, b); {
		case d.IsInt64() && (err != nil || pt != d.Int64()):
			t.Fatalf("PairTime(%d, %d) = %d, %v; exact %v", a, b, pt, err, d)
		case !d.IsInt64() && !errors.Is(err, tokendist.ErrOverflow):
			t.Fatalf("PairTime(%d, %d) = %d, %v; exact %v overflows", a, b, pt, err, d)
		}
		// Sign checks on the time bounds and totals.
		dim := int(uint64(a) % 70)
		for name, f := range map[string]func() (int64, error){
			"HypercubeBalanceTimeBound": func() (int64, error) { return tokendist.HypercubeBalanceTimeBound(dim, m) },
			"MaxTotalDiscrepancy":       func() (int64, error) { return tokendist.MaxTotalDiscrepancy(dim, b, m) },
			"BalanceLowerBound":         func() (int64, error) { return tokendist.BalanceLowerBound(dim, b, m, a) },
			"HypercubeFringe":           func() (int64, error) { return tokendist.HypercubeFringe(dim, m) },
			"HammingBallSize":           func() (int64, error) { return tokendist.HammingBallSize(dim, int(b)) },
			"BalancingTime":             func() (int64, error) { return tokendist.BalancingTime(float64(uint64(a)%1000)/1000, int(b), m) },
		} {
			v, err := f()
			fuzzPrefixed(t, err)
			if err == nil && v < 0 {
				t.Fatalf("%s(%d, %d, %d, %d) = %d", name, dim, a, b, m, v)
			}
		}
		cube, _ := tokendist.Hypercube(int(uint64(b) % 6))
		for name, f := range map[string]func() (int64, error){
			"LeightonTime":            func() (int64, error) { return tokendist.LeightonTime(cube, m) },
			"DimensionOrderTimeBound": func() (int64, error) { return tokendist.DimensionOrderTimeBound(cube, m) },
		} {
			v, err := f()
			fuzzPrefixed(t, err)
			if err == nil && v < 0 {
				t.Fatalf("%s(%v, %d) = %d", name, cube, m, v)
			}
		}
	})
}
