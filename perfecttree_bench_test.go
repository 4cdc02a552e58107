package tokendist_test

import (
	"context"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tokendist/tokendist"
)

// ptBenchInput is the target instance, built once: a random tree on 10⁴ nodes
// with 10⁵ tokens, spread uniformly or all on one node.
type ptBenchInput struct {
	g     *tokendist.Graph
	loads map[string]tokendist.Loads
	root  map[string]int
	final map[string]tokendist.Loads
}

var ptBench = sync.OnceValue(func() ptBenchInput {
	g := ptMust(tokendist.RandomTree(10_000, 1))
	in := ptBenchInput{g: g, loads: map[string]tokendist.Loads{
		"uniform": ptMust(tokendist.UniformRandom(10_000, 100_000, 2)),
		"point":   ptMust(tokendist.PointMass(10_000, 100_000, 17)),
	}, root: map[string]int{}, final: map[string]tokendist.Loads{}}
	for name, l := range in.loads {
		r := ptMust(runPT(context.Background(), g, l, nil, 0))
		in.root[name], in.final[name] = r.Root, r.Loads
	}
	return in
})

var ptBenchCases = []string{"uniform", "point"}

// ptCPU returns the process's user+system CPU time; the benchmarks report it per
// operation as cpu-ms/op, which a loaded machine distorts far less than wall time.
func ptCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func ptReportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric(float64(ptCPU()-start)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
}

func BenchmarkPerfectTreeSimulated(b *testing.B) {
	in := ptBench()
	for _, batch := range []bool{false, true} {
		for _, name := range ptBenchCases {
			if batch {
				name += "-batch"
			}
			b.Run(name, func(b *testing.B) {
				o := &tokendist.PerfectTreeOptions{Batch: batch}
				l := in.loads[strings.TrimSuffix(name, "-batch")]
				var moves int64
				cpu := ptCPU()
				for i := 0; i < b.N; i++ {
					r, err := runPT(context.Background(), in.g, l, o, 0)
					if err != nil || !r.Perfect {
						b.Fatal(err, r)
					}
					moves = r.TotalMoves()
				}
				ptReportCPU(b, cpu)
				b.ReportMetric(float64(moves), "moves/op")
			})
		}
	}
}

// BenchmarkPerfectTreeRatio measures issue 26's ratio in one process: each iteration
// runs the plain move loop (BenchmarkPerfectTreeDirectMoves), the per-token simulated
// runtime and the batched one (PerfectTreeOptions.Batch) on the same instance, one after
// the other, and reports each runtime's process CPU time over the plain loop's summed
// over the iterations, so that the machine's load affects both sides alike.
func BenchmarkPerfectTreeRatio(b *testing.B) {
	in := ptBench()
	for _, name := range ptBenchCases {
		b.Run(name, func(b *testing.B) {
			l := in.loads[name]
			var direct, tok, bat time.Duration
			for i := 0; i < b.N; i++ {
				c0 := ptCPU()
				ptDirectMoves(in.g, l, in.root[name], in.final[name])
				c1 := ptCPU()
				r, err := runPT(context.Background(), in.g, l, nil, 0)
				c2 := ptCPU()
				rb, errb := runPT(context.Background(), in.g, l, &tokendist.PerfectTreeOptions{Batch: true}, 0)
				c3 := ptCPU()
				if err != nil || errb != nil || !r.Perfect || !rb.Perfect || r.TotalMoves() != rb.TotalMoves() {
					b.Fatal(err, errb, r, rb)
				}
				direct, tok, bat = direct+c1-c0, tok+c2-c1, bat+c3-c2
			}
			b.ReportMetric(float64(direct)/float64(time.Millisecond)/float64(b.N), "direct-cpu-ms/op")
			b.ReportMetric(float64(tok)/float64(direct), "per-token/direct")
			b.ReportMetric(float64(bat)/float64(direct), "batched/direct")
		})
	}
}

func BenchmarkPerfectTreeConcurrent(b *testing.B) {
	in := ptBench()
	for _, name := range ptBenchCases {
		b.Run(name, func(b *testing.B) {
			cpu := ptCPU()
			for i := 0; i < b.N; i++ {
				r, err := runPTGoroutines(context.Background(), in.g, in.loads[name], nil, 0)
				if err != nil || !r.Perfect {
					b.Fatal(err, r)
				}
			}
			ptReportCPU(b, cpu)
		})
	}
}

// BenchmarkPerfectTreeDirectMoves is the baseline: a plain loop that makes the same
// token moves as the protocol (phase-2 flows up and down the tree rooted at the elected
// root, then the phase-3 extras down), one token at a time, with no messages, no
// scheduling and no asynchrony: the floor of any token-level simulation.
func BenchmarkPerfectTreeDirectMoves(b *testing.B) {
	in := ptBench()
	for _, name := range ptBenchCases {
		b.Run(name, func(b *testing.B) {
			g, l := in.g, in.loads[name]
			var moves int64
			cpu := ptCPU()
			for i := 0; i < b.N; i++ {
				moves = ptDirectMoves(g, l, in.root[name], in.final[name])
			}
			ptReportCPU(b, cpu)
			b.ReportMetric(float64(moves), "moves/op")
		})
	}
}

func ptDirectMoves(g *tokendist.Graph, initial tokendist.Loads, root int, final tokendist.Loads) int64 {
	n := g.Order()
	_, parent, _ := g.BFSTree(root)
	depth := ptMust(g.BFS(root))
	order := make([]int, 0, n) // children before parents: by decreasing depth
	buckets := make([][]int, n)
	for v := 0; v < n; v++ {
		buckets[depth[v]] = append(buckets[depth[v]], v)
	}
	for d := n - 1; d >= 0; d-- {
		order = append(order, buckets[d]...)
	}
	total := initial.Total()
	avg := total / int64(n)
	loads := initial.Clone()
	sum := make([]int64, n)
	size := make([]int64, n)
	extra := make([]int64, n)
	var moves int64
	for _, v := range order { // phase 2: each subtree's surplus or deficit crosses its edge
		sum[v] += initial[v]
		size[v]++
		extra[v] += final[v] - avg
		if p := parent[v]; p >= 0 {
			for a := sum[v] - avg*size[v]; a != 0; moves++ {
				if a > 0 {
					loads[v]--
					loads[p]++
					a--
				} else {
					loads[v]++
					loads[p]--
					a++
				}
			}
			sum[p] += sum[v]
			size[p] += size[v]
			extra[p] += extra[v]
		}
	}
	for i := n - 1; i >= 0; i-- { // phase 3: the extras go down from the root
		v := order[i]
		if p := parent[v]; p >= 0 {
			for k := extra[v]; k > 0; k-- {
				loads[p]--
				loads[v]++
				moves++
			}
		}
	}
	if !tokendist.IsPerfectDistribution(loads) {
		panic("direct moves did not end perfect")
	}
	return moves
}

func BenchmarkOptimalPerfectMoves(b *testing.B) {
	in := ptBench()
	l := ptMust(tokendist.RandomRange(10_000, 0, 20, 3)) // T mod N in the thousands
	for i := 0; i < b.N; i++ {
		if _, err := tokendist.OptimalPerfectMoves(in.g, l); err != nil {
			b.Fatal(err)
		}
	}
}

// TestPerfectTreeConcurrentScale is issue 15's goroutine-runtime row: the concurrent
// runtime on a random tree of n = 10⁵ nodes with T = 10⁶ tokens (the benchmark
// instance's ten tokens per node), spread uniformly or all on one node, must finish in
// ≤ 30 s of wall time. It runs only when TOKENDIST_SCALE ≥ 1e5 (and not under -short),
// checks the paper's theorems on each run and logs the wall and CPU times; the time
// target itself is reported, not asserted, as a loaded machine distorts wall time.
func TestPerfectTreeConcurrentScale(t *testing.T) {
	top, _ := strconv.ParseFloat(os.Getenv("TOKENDIST_SCALE"), 64)
	if testing.Short() || top < 1e5 {
		t.Skip("set TOKENDIST_SCALE=1e5 (or more) to run the n = 10^5 goroutine-runtime case")
	}
	const n, total = 100_000, 1_000_000
	g := ptMust(tokendist.RandomTree(n, 1))
	for _, c := range []struct {
		name  string
		loads tokendist.Loads
	}{
		{"uniform", ptMust(tokendist.UniformRandom(n, total, 2))},
		{"point", ptMust(tokendist.PointMass(n, total, 17))},
	} {
		cpu, start := ptCPU(), time.Now()
		r, err := runPTGoroutines(context.Background(), g, c.loads, nil, 0)
		used, wall := ptCPU()-cpu, time.Since(start)
		require.NoError(t, err, "%s", c.name)
		require.NoError(t, r.CheckTheorems(g), "%s", c.name)
		require.Equal(t, int64(total), r.Loads.Total(), "%s: %d tokens at the end, want %d", c.name, r.Loads.Total(), total)
		t.Logf("%s: n = %d, T = %d: wall %v, CPU %v, moves %d, messages %d (target: wall ≤ 30 s)",
			c.name, n, total, wall.Round(time.Millisecond), used.Round(time.Millisecond), r.TotalMoves(), r.TotalMessages())
	}
}
