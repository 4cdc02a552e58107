package fleet

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/tokendist/tokendist/registry"
)

// runner runs the nodes of a fleet as goroutines of the test.
type runner struct {
	t      *testing.T
	cfgs   []Config
	nodes  []*Node
	cancel []context.CancelFunc
	errs   []chan error
}

func (r *runner) start(v int) {
	r.t.Helper()
	nd, err := NewNode(r.cfgs[v], &Options{Logf: r.t.Logf})
	if err != nil {
		r.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ch := make(chan error, 1)
	go func() { ch <- nd.Run(ctx) }()
	r.nodes[v], r.cancel[v], r.errs[v] = nd, cancel, ch
}

func (r *runner) stop(v int) {
	r.t.Helper()
	if r.cancel[v] == nil {
		return
	}
	r.cancel[v]()
	select {
	case err := <-r.errs[v]:
		if err != nil {
			r.t.Errorf("node %d: Run: %v", v, err)
		}
	case <-time.After(10 * time.Second):
		r.t.Fatalf("node %d did not stop within 10 s", v)
	}
	r.cancel[v] = nil
}

func (r *runner) loads() []int64 {
	out := make([]int64, len(r.nodes))
	for v, nd := range r.nodes {
		out[v] = nd.Snapshot().Load
	}
	return out
}

// TestFleetInProcess runs small fleets as goroutines over loopback TCP with BoltStores:
// work is added and completed, nodes stop and restart from their data directories, and
// in the end the loads are stable and within the algorithm's bound, every item is held
// exactly once, and the stopped fleet's persisted states agree.
func TestFleetInProcess(t *testing.T) {
	defer goleak.VerifyNone(t)
	for _, tp := range []topology{
		{"tree", registry.Spec{Network: choice("random-tree", map[string]any{"n": 6}), Loads: choice("uniform-random", map[string]any{"tokens": 60}),
			Algorithm: choice("threshold-1", nil), Seed: 3}},
		{"torus", registry.Spec{Network: choice("torus", map[string]any{"sides": []int{3, 3}}), Loads: choice("uniform-random", map[string]any{"tokens": 90}),
			Algorithm: choice("rsw-diffusion", nil), Seed: 4}},
	} {
		t.Run(tp.name, func(t *testing.T) {
			b := build(t, tp.spec)
			n := b.g.Order()
			cfgs := configs(t, b, tp.spec, t.TempDir(), func(_, v int, listen []string) string { return listen[v] })
			for v := range cfgs {
				cfgs[v].Tick = Duration(2 * time.Millisecond)
			}
			r := &runner{t: t, cfgs: cfgs, nodes: make([]*Node, n), cancel: make([]context.CancelFunc, n), errs: make([]chan error, n)}
			for v := range n {
				r.start(v)
			}
			defer func() {
				for v := range n {
					r.stop(v)
				}
			}()
			expected := b.initialItems()
			ctx := context.Background()
			next := uint64(1) << 63
			for i := range 12 {
				v := i % n
				ids := []uint64{next, next + 1, next + 2}
				next += 3
				if err := r.nodes[v].AddItems(ctx, ids); err != nil {
					t.Fatal(err)
				}
				expected = append(expected, ids...)
				done, err := r.nodes[(v+1)%n].CompleteItems(ctx, 2)
				if err != nil {
					t.Fatal(err)
				}
				expected = slices.DeleteFunc(expected, func(id uint64) bool { return slices.Contains(done, id) })
				if i%4 == 3 { // a stop and a restart from the data directory
					r.stop(v)
					time.Sleep(20 * time.Millisecond)
					r.start(v)
					if st := r.nodes[v].Snapshot(); !st.Restored || st.Starts < 2 {
						t.Fatalf("node %d did not restore its state: %+v", v, st)
					}
				}
				time.Sleep(10 * time.Millisecond)
			}
			// Recovery: wait (bounded) until the live loads look balanced, then stop
			// the fleet and check its persisted states, a consistent cut.
			waitBalanced(t, b, r.loads, 20*time.Second)
			for v := range n {
				r.stop(v)
			}
			items, settled := auditStores(t, b, cfgs)
			if lost, doubled, unknown := exactlyOnce(expected, items); len(lost)+len(doubled)+len(unknown) > 0 {
				t.Fatalf("persisted: lost %v, doubled %v, unknown %v", lost, doubled, unknown)
			}
			if !b.withinBound(settled) {
				disc, local := b.discrepancy(settled)
				t.Fatalf("settled loads %v: discrepancy %d (local %d) over the bound %d (local %d)", settled, disc, local, b.bound, b.local)
			}
			if _, err := r.nodes[0].Items(ctx); !errors.Is(err, ErrStopped) {
				t.Errorf("Items on a stopped node: %v; want ErrStopped", err)
			}
		})
	}
}

// waitBalanced polls loads until three polls in a row are within b's bound, at most
// limit; it only paces the test (a live poll is not a consistent cut).
func waitBalanced(t testing.TB, b built, loads func() []int64, limit time.Duration) {
	deadline := time.Now().Add(limit)
	for ok := 0; ok < 3 && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if b.withinBound(loads()) {
			ok++
		} else {
			ok = 0
		}
	}
}
