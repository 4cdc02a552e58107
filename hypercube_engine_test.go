package tokendist

import (
	"math/bits"
	"testing"

	"github.com/stretchr/testify/require"
)

// This file holds straightforward reference implementations of the recursive and
// dimension-order (Multi)Balance: plain recursion, δ computed by summing over the subcube
// once per free dimension (O(2^l·l) per subcube), sequential. They are the test oracle
// for the engine and the baseline of the benchmarks.

// refResult is what a reference run produces.
type refResult struct {
	time, moved, selectTime int64
}

// refPair balances two rows of w groups by the rule documented on cubeEngine.pair,
// written out independently: split each group; odd tokens alternate, the first going to
// the processor with fewer tokens in total (x on a tie).
func refPair(x, y []int64) (t, moved int64) {
	var tx, ty int64
	for j := range x {
		tx += x[j]
		ty += y[j]
	}
	giveX := tx <= ty
	var sentX, sentY int64
	for j := range x {
		sum := x[j] + y[j]
		nx := sum / 2
		if sum%2 == 1 {
			if giveX {
				nx = sum/2 + 1
			}
			giveX = !giveX
		}
		if nx < x[j] {
			sentX += x[j] - nx
		} else {
			sentY += nx - x[j]
		}
		x[j], y[j] = nx, sum-nx
	}
	return max(sentX, sentY) + int64(len(x)), sentX + sentY
}

// refRecursive runs the least (multi-)discrepancy recursion on rows (p·w, node-major).
func refRecursive(rows []int64, d, w int) refResult {
	var res refResult
	levelTime := make([]int64, d+1) // largest pair time per recursion depth
	var rec func(free, base uint32, depth int)
	rec = func(free, base uint32, depth int) {
		l := bits.OnesCount32(free)
		if l == 0 {
			return
		}
		nodes := subcubeNodes(free, base)
		best, bestDim := int64(-1), -1
		for i := 0; i < d; i++ {
			if free>>i&1 == 0 {
				continue
			}
			var delta int64
			for j := 0; j < w; j++ {
				var s int64
				for _, v := range nodes {
					if v>>i&1 == 1 {
						s += rows[v*w+j]
					} else {
						s -= rows[v*w+j]
					}
				}
				delta += abs64(s)
			}
			if best < 0 || delta < best {
				best, bestDim = delta, i
			}
		}
		bit := uint32(1) << bestDim
		rec(free&^bit, base, depth+1)
		rec(free&^bit, base|bit, depth+1)
		for _, v := range nodes {
			if v&int(bit) == 0 {
				u := v | int(bit)
				t, m := refPair(rows[v*w:(v+1)*w], rows[u*w:(u+1)*w])
				levelTime[depth] = max(levelTime[depth], t)
				res.moved += m
			}
		}
	}
	rec(uint32(1)<<d-1, 0, 0)
	for _, t := range levelTime {
		res.time += t
	}
	for l := 2; l <= d; l++ {
		res.selectTime += allReduceTime(int64(w*l), l)
	}
	res.time += res.selectTime
	return res
}

// refAscend balances dimensions 0..d−1 in order on the hypercube.
func refAscend(rows []int64, d, w int) refResult {
	var res refResult
	for i := 0; i < d; i++ {
		var tmax int64
		for v := 0; v < 1<<d; v++ {
			if v>>i&1 == 0 {
				u := v | 1<<i
				t, m := refPair(rows[v*w:(v+1)*w], rows[u*w:(u+1)*w])
				tmax = max(tmax, t)
				res.moved += m
			}
		}
		res.time += tmax
	}
	return res
}

// subcubeNodes lists the nodes base | x for every submask x of free.
func subcubeNodes(free, base uint32) []int {
	var nodes []int
	for x := uint32(0); ; {
		nodes = append(nodes, int(base|x))
		if x = (x - free) & free; x == 0 {
			return nodes
		}
	}
}

// TestCubeMatchesReference compares the parallel engine with the straightforward
// recursion and dimension order, for Balance (w = 1) and NewMultiBalance (w = 3).
func TestCubeMatchesReference(t *testing.T) {
	for d := 0; d <= 10; d++ {
		g := mustCube(t, d, false)
		p := 1 << d
		for seed := uint64(1); seed <= 4; seed++ {
			for _, w := range []int{1, 3} {
				groups := make([]Loads, w)
				for j := range groups {
					l, err := RandomRange(p, 0, int64(10*(j+1))+int64(seed*seed), seed*100+uint64(j))
					require.NoError(t, err)
					groups[j] = l
				}
				for _, asc := range []bool{false, true} {
					rows := make([]int64, p*w)
					total := make(Loads, p)
					for j, grp := range groups {
						for v, x := range grp {
							rows[v*w+j] = x
							total[v] += x
						}
					}
					var ref refResult
					if asc {
						ref = refAscend(rows, d, w)
					} else {
						ref = refRecursive(rows, d, w)
					}
					var b Balancer
					var err error
					if w == 1 {
						if asc {
							b, err = NewDimensionOrderBalance(g, nil)
						} else {
							b, err = NewHypercubeBalance(g, nil)
						}
					} else {
						b, err = NewMultiBalance(g, groups, &MultiOptions{Ascending: asc})
					}
					require.NoError(t, err)
					r := drive(t, g, total, b)
					require.Equal(t, rows, r.core.eng.rows, "d=%d seed=%d w=%d asc=%v: final rows", d, seed, w, asc)
					require.Equal(t, ref.time, r.s.Time, "d=%d seed=%d w=%d asc=%v: time", d, seed, w, asc)
					require.Equal(t, ref.moved, r.s.Moved, "d=%d seed=%d w=%d asc=%v: moved", d, seed, w, asc)
					require.Equal(t, ref.selectTime, r.core.times.Select)
				}
			}
		}
	}
}

// TestCubeDeterministicAcrossWorkers runs the chunked kernels with 1 and 2 workers.
func TestCubeDeterministicAcrossWorkers(t *testing.T) {
	for _, se := range []bool{false, true} {
		g := mustCube(t, 13, se)
		loads, err := HammingBallLoads(13, 40000, 17, 5)
		require.NoError(t, err)
		mk := []func() (Balancer, error){
			func() (Balancer, error) { return NewDimensionOrderBalance(g, &CubeOptions{MinError: true}) },
		}
		if !se {
			mk = append(mk, func() (Balancer, error) { return NewHypercubeBalance(g, &CubeOptions{MinError: true}) })
		}
		for _, f := range mk {
			var res []Result
			for _, workers := range []int{1, 2} {
				b, err := f()
				require.NoError(t, err)
				r, err := runQuiet(g, loads, b, workers)
				require.NoError(t, err)
				res = append(res, r)
			}
			require.Equal(t, res[0], res[1])
		}
	}
}

// TestCubeStepDoesNotAllocate checks that Init (after the first run) and every Step of
// every balancer run without allocating.
func TestCubeStepDoesNotAllocate(t *testing.T) {
	for _, se := range []bool{false, true} {
		d := 12
		g := mustCube(t, d, se)
		p := 1 << d
		loads, err := RandomRange(p, 0, 30, 3)
		require.NoError(t, err)
		groups, err := CondensedIDGroups(d, 3, 5)
		require.NoError(t, err)
		total := make(Loads, p)
		for _, grp := range groups {
			for v, x := range grp {
				total[v] += x
			}
		}
		var bs []Balancer
		add := func(b Balancer, err error) {
			require.NoError(t, err)
			bs = append(bs, b)
		}
		add(NewDimensionOrderBalance(g, &CubeOptions{MinError: true}))
		add(NewLeightonBalance(g))
		add(NewMultiBalance(g, groups, &MultiOptions{MinError: true}))
		if !se {
			add(NewHypercubeBalance(g, &CubeOptions{MinError: true}))
		}
		for _, b := range bs {
			in := loads
			if _, ok := b.(*MultiBalancer); ok {
				in = total
			}
			s := State{Net: g, Loads: in.Clone(), Workers: 2}
			require.NoError(t, b.(Initializer).Init(&s))
			allocs := testing.AllocsPerRun(3, func() {
				copy(s.Loads, in)
				require.NoError(t, b.(Initializer).Init(&s))
				for !b.(Terminator).Done(&s) {
					require.NoError(t, b.Step(&s))
				}
			})
			require.Zero(t, allocs, "%v allocates", b)
		}
	}
}
