package tokendist

import (
	"context"
	"fmt"
	"math"
)

// OptimalPerfectMoves returns the least number of token moves (one token crossing one
// link) that turns loads into a perfect distribution on tree g: every node ends with
// ⌊T/N⌋ or ⌈T/N⌉ tokens, the T mod N larger shares placed where they cost least. It is
// the yardstick of Margara, Pistocchi and Vassura's section 5 ("the number of token
// exchanges exceeds the optimum by at most O(D·min{T, N})").
//
// On a tree the moves of a final distribution are Σ over edges of |net flow|, and the
// flow across an edge is fixed by how many larger shares lie below it; a knapsack over
// the tree (f_v[k] = least cost inside v's subtree with k larger shares there) finds the
// best placement in O(N · min(N, T mod N)) time and O(N) memory beyond its output. It
// fails with ErrNotTree, ErrBadLoads for loads of the wrong length or negative, or
// ErrOverflow if the number of moves does not fit in an int64 (less than MaxInt64).
func OptimalPerfectMoves(net Network, loads Loads) (int64, error) {
	return optimalPerfectMoves(context.Background(), net, loads)
}

// optimalPerfectMoves is OptimalPerfectMoves, stopping with ctx's error when ctx is
// done (checked every 64 nodes).
func optimalPerfectMoves(ctx context.Context, net Network, loads Loads) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	g, err := AsGraph(net)
	if err != nil {
		return 0, err
	}
	if err := requireTree(g); err != nil {
		return 0, err
	}
	n := g.Order()
	if len(loads) != n {
		return 0, ptBadLength(len(loads), n)
	}
	total, err := loads.Validate()
	if err != nil {
		return 0, err
	}
	avg, extra := total/int64(n), int(total%int64(n))
	dist := make([]int32, n)
	order := g.bfs(0, dist, make([]int32, 0, n))
	size := make([]int64, n)
	sum := make([]int64, n)
	f := make([][]int64, n)
	for i := n - 1; i >= 0; i-- {
		if i&63 == 0 {
			if err := ctx.Err(); err != nil {
				return 0, err
			}
		}
		v := int(order[i])
		size[v]++
		sum[v] += loads[v]
		cur := make([]int64, min(1, extra)+1) // v itself takes Avg or Avg+1, at no cost
		for _, c := range g.Neighbors(v) {
			if dist[c] != dist[v]+1 {
				continue
			}
			size[v] += size[c]
			sum[v] += sum[c]
			cur = ptMinPlus(cur, f[c], extra)
			f[c] = nil
		}
		if i > 0 { // the edge to v's parent carries sum − Avg·size − k tokens
			excess := sum[v] - avg*size[v]
			for k := range cur {
				d := excess - int64(k)
				if d < 0 {
					d = -d
				}
				cur[k] = satAdd(cur[k], d)
			}
		}
		f[v] = cur
	}
	best := f[order[0]][extra]
	if best == math.MaxInt64 {
		return 0, overflow("OptimalPerfectMoves: the least number of moves exceeds %d", int64(math.MaxInt64-1))
	}
	return best, nil
}

// satAdd returns x + y for x, y ≥ 0, or math.MaxInt64 if the sum overflows (a cost of
// math.MaxInt64 stands for "too large" and stays so).
func satAdd(x, y int64) int64 {
	if x > math.MaxInt64-y {
		return math.MaxInt64
	}
	return x + y
}

// ptMinPlus returns the (min, +) convolution of a and b truncated to indices 0..limit.
func ptMinPlus(a, b []int64, limit int) []int64 {
	out := make([]int64, min(len(a)+len(b)-1, limit+1))
	for k := range out {
		out[k] = math.MaxInt64
	}
	for i, x := range a {
		for j, y := range b {
			if i+j >= len(out) {
				break
			}
			if s := satAdd(x, y); s < out[i+j] {
				out[i+j] = s
			}
		}
	}
	return out
}

func ptBadLength(got, n int) error {
	return fmt.Errorf("%w: %d loads for a network of %d nodes", ErrBadLoads, got, n)
}
