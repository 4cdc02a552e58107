// Package dsu is a union–find forest over int32 node IDs: path halving, and the
// smaller root on top, so that the forest needs no rank or size array (4 bytes a
// node). The core's RandomRegular and the random families' connectivity checks
// (internal/randgraph) share it.
package dsu

// Forest is a union–find forest over nodes 0..len−1: f[x] is x's parent, a root its
// own parent.
type Forest []int32

// Reset makes every node a root of its own. O(n).
func (f Forest) Reset() {
	for i := range f {
		f[i] = int32(i)
	}
}

// Find returns x's root, halving the path on the way. O(log n) amortized.
func (f Forest) Find(x int32) int32 {
	for f[x] != x {
		f[x] = f[f[x]]
		x = f[x]
	}
	return x
}

// Link joins the trees of roots a and b (a ≠ b) under the smaller of the two, and
// returns it. O(1).
func (f Forest) Link(a, b int32) int32 {
	lo := min(a, b)
	f[max(a, b)] = lo
	return lo
}
