package tokendist

import "math/bits"

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
