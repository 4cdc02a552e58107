package dsu

import (
	"math/rand/v2"
	"testing"
)

// Find and Link agree with a naive labelling of the components after every link of a
// random sequence of joins, for every n up to 40; a root is always the smallest node
// of its component.
func TestForestAgainstLabels(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for n := 1; n <= 40; n++ {
		f := make(Forest, n)
		f.Reset()
		label := make([]int32, n)
		for i := range label {
			label[i] = int32(i)
		}
		for range 3 * n {
			a, b := int32(r.IntN(n)), int32(r.IntN(n))
			ra, rb := f.Find(a), f.Find(b)
			if (ra == rb) != (label[a] == label[b]) {
				t.Fatalf("n = %d: %d and %d: roots %d, %d; labels %d, %d", n, a, b, ra, rb, label[a], label[b])
			}
			if ra == rb {
				continue
			}
			lo, hi := min(label[a], label[b]), max(label[a], label[b])
			for i := range label {
				if label[i] == hi {
					label[i] = lo
				}
			}
			if got := f.Link(ra, rb); got != lo {
				t.Fatalf("n = %d: Link(%d, %d) = %d, want %d", n, ra, rb, got, lo)
			}
			for x := range int32(n) {
				if f.Find(x) != label[x] {
					t.Fatalf("n = %d: Find(%d) = %d, want the component's least node %d", n, x, f.Find(x), label[x])
				}
			}
		}
	}
}
