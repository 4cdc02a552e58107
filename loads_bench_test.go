package tokendist_test

import "testing"

// BenchmarkLoadsMetrics measures the exact 128-bit potential, Validate and Discrepancy
// on 10^6 loads; the baseline is a plain (overflowing) int64 Σ x² loop.
func BenchmarkLoadsMetrics(b *testing.B) {
	l := fndLoads1e6()
	var sink int64
	b.Run("Potential", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			sink += int64(l.Potential().Lo)
		}
	})
	b.Run("Validate", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			t, _ := l.Validate()
			sink += t
		}
	})
	b.Run("Discrepancy", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			sink += l.Discrepancy()
		}
	})
	b.Run("baseline-int64-sum-of-squares", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			var p int64
			for _, x := range l {
				p += x * x
			}
			sink += p
		}
	})
	_ = sink
}
