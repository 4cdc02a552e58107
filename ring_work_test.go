package tokendist

import (
	"math"
	"math/big"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRingWorkSweep checks the analytics alone over a wider sweep: RingWork against an
// independent level-by-level count (n ≤ 62), Fact 2.1, RingWorkDFT, the corrected bound
// (2.2) for every PE and Theorem 1.1(a) with the exact time.
func TestRingWorkSweep(t *testing.T) {
	for p := 1; p <= 12; p++ {
		for n := 1; n <= TreeMaxLevel; n++ {
			work, err := RingWork(n, p)
			require.NoError(t, err)
			ref := refTreeWork(n, p)
			total := new(big.Int)
			for i := range work {
				require.Equal(t, ref[i], work[i].Int64(), "n %d p %d i %d", n, p, i)
				total.Add(total, work[i])
			}
			require.Equal(t, int64(1)<<uint(n)-1, total.Int64(), "Fact 2.1")
			if n <= 40 {
				dft, err := RingWorkDFT(n, p)
				require.NoError(t, err)
				b, err := RingTreeBounds(n, p)
				require.NoError(t, err)
				for i := range work {
					require.Equal(t, float64(ref[i]), math.Round(dft[i]), "DFT n %d p %d i %d", n, p, i)
					// |W - (2^n-1)/p|, exactly: |pW - 2^n + 1| / p.
					dev := math.Abs(float64(int64(p)*ref[i]-(int64(1)<<uint(n)-1))) / float64(p)
					require.LessOrEqual(t, dev, ringTreeDeviationBound(n, p, i)+1e-9, "n %d p %d i %d", n, p, i)
				}
				require.LessOrEqual(t, b.Time, b.TimeBound, "Theorem 1.1(a) n %d p %d", n, p)
			}
		}
	}
}
