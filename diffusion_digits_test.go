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
