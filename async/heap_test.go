package async

import (
	"math/rand/v2"
	"slices"
	"testing"
)

func TestHeapOrder(t *testing.T) {
	var q eventHeap
	r := rand.New(rand.NewPCG(3, 4))
	var want []event
	for range 2000 {
		t := float64(r.IntN(50))
		key := nodeKey(r.IntN(10), uint64(r.IntN(3)), r.IntN(4))
		q.push(t, key, 0)
		want = append(want, event{t: t, key: key, seq: q.seq})
	}
	slices.SortFunc(want, func(a, b event) int {
		if a.less(&b) {
			return -1
		}
		return 1
	})
	for i := range want {
		e := q.pop()
		if e.t != want[i].t || e.key != want[i].key || e.seq != want[i].seq {
			t.Fatalf("pop %d: %+v, want %+v", i, e, want[i])
		}
	}
}
