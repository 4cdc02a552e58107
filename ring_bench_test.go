package tokendist

import (
	"context"
	"math/big"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// Benchmark inputs, built once on first use.
var (
	benchT24 = sync.OnceValue(func() TreeDag { d, _ := CompleteTree(24); return d })
	benchT20 = sync.OnceValue(func() TreeDag { d, _ := CompleteTree(20); return d })
	benchG   = sync.OnceValue(func() GridDag { d, _ := PyramidGrid(1500); return d })
	benchRT  = sync.OnceValue(func() TreeDag { d, _ := RandomTreeDag(0.75, 30, 1); return d })
)

func benchRing(b *testing.B, p int, tree TreeDag, grid GridDag, opts *RingOptions) {
	var r *RingScheduler
	var err error
	if tree != nil {
		r, err = NewRingTree(p, tree, opts)
	} else {
		r, err = NewRingGrid(p, grid, opts)
	}
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := RunRing(context.Background(), r, nil); err != nil {
			b.Fatal(err)
		}
	}
	st := r.stats()
	b.ReportMetric(float64(st.Tasks), "tasks")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(st.Tasks), "ns/task")
}

// BenchmarkRingTreeT24 is the target: T_24 (16.7 million tasks) on R_64.
func BenchmarkRingTreeT24(b *testing.B) { benchRing(b, 64, benchT24(), nil, nil) }

// BenchmarkRingTreeT24NoSchedule is the same without recording the schedule.
func BenchmarkRingTreeT24NoSchedule(b *testing.B) {
	benchRing(b, 64, benchT24(), nil, &RingOptions{NoSchedule: true})
}

// BenchmarkRingTreeT20 and its baseline (the straightforward reference simulator with a
// heap-allocated task per node and container/heap queues) give the ratio.
func BenchmarkRingTreeT20(b *testing.B) { benchRing(b, 64, benchT20(), nil, nil) }

func BenchmarkRingTreeT20Baseline(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		refSimulate(64, benchT20(), nil, RingPolicyKSBF, 1)
	}
}

// BenchmarkRingRandomTree runs a random tree (about 0.5 million tasks, out-of-order
// arrivals under the random policy) on R_16.
func BenchmarkRingRandomTree(b *testing.B) {
	benchRing(b, 16, benchRT(), nil, &RingOptions{Policy: RingPolicyRandom})
}

func BenchmarkRingRandomTreeBaseline(b *testing.B) {
	for b.Loop() {
		refSimulate(16, benchRT(), nil, RingPolicyRandom, 0)
	}
}

// BenchmarkRingGrid runs G_1500 (1.1 million tasks, binary tasks waiting in a map) on R_64.
func BenchmarkRingGrid(b *testing.B) { benchRing(b, 64, nil, benchG(), nil) }

func BenchmarkRingGridBaseline(b *testing.B) {
	for b.Loop() {
		refSimulate(64, nil, benchG(), RingPolicyKSBF, 1)
	}
}

// BenchmarkRingWork is the target: exact W_i(n) for n = 10 000, p = 1000.
func BenchmarkRingWork(b *testing.B) {
	for b.Loop() {
		if _, err := RingWork(10000, 1000); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRingWorkBaseline sums the levels of T_n as in the proof of Theorem 2.1: a
// Pascal recurrence on the counts of strings per weight residue, O(n·p) big additions.
func BenchmarkRingWorkBaseline(b *testing.B) {
	for b.Loop() {
		ringWorkByLevels(10000, 1000)
	}
}

// ringWorkByLevels is the baseline: W_i(n) = Σ_l #(strings of length l, weight ≡ i).
func ringWorkByLevels(n, p int) []*big.Int {
	level, next, w := make([]*big.Int, p), make([]*big.Int, p), make([]*big.Int, p)
	for i := range level {
		level[i], next[i], w[i] = new(big.Int), new(big.Int), new(big.Int)
	}
	level[0].SetInt64(1)
	for l := 0; l < n; l++ {
		for r := range w {
			w[r].Add(w[r], level[r])
		}
		for r := range level {
			next[r].Add(level[r], level[(r+p-1)%p])
		}
		level, next = next, level
	}
	return w
}

// BenchmarkRingWorkDFT is the floating-point DFT route at n = 1000, p = 1000.
func BenchmarkRingWorkDFT(b *testing.B) {
	for b.Loop() {
		if _, err := RingWorkDFT(1000, 1000); err != nil {
			b.Fatal(err)
		}
	}
}

// TestRingWorkByLevels checks the benchmark's baseline against RingWork.
func TestRingWorkByLevels(t *testing.T) {
	for _, np := range [][2]int{{1, 1}, {7, 3}, {200, 13}, {300, 1}} {
		got := ringWorkByLevels(np[0], np[1])
		want, _ := RingWork(np[0], np[1])
		for i := range want {
			require.Zero(t, got[i].Cmp(want[i]), "n %d p %d i %d: %v vs %v", np[0], np[1], i, got[i], want[i])
		}
	}
}
