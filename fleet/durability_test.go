package fleet

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/tokendist/tokendist/handoff"
)

// savedLinks watches one fleet's stores and network: it keeps, per node, the sequence
// state of the last state that node saved, and checks every data frame a node sends
// against it.
type savedLinks struct {
	t    *testing.T
	b    built
	mu   sync.Mutex
	next map[int][]uint64 // node -> port -> saved Links[port].Next
	now  map[int]int64    // node -> the saved Now
	// data counts the data frames checked; bad lists those whose sequence number the
	// sender's last saved state did not cover yet; back lists the saves whose round
	// clock was lower than the one the node saved before.
	data      int
	bad, back []string
}

// savedStore is a Store that reports every successful Save to a savedLinks.
type savedStore struct {
	Store
	v int
	w *savedLinks
}

func (s *savedStore) Save(rec []byte) error {
	if err := s.Store.Save(rec); err != nil {
		return err
	}
	st, err := DecodeStored(rec)
	if err != nil {
		s.w.t.Errorf("node %d saved a record DecodeStored refuses: %v", s.v, err)
		return nil
	}
	ps, err := handoff.DecodeState(st.State)
	if err != nil {
		s.w.t.Errorf("node %d saved a state DecodeState refuses: %v", s.v, err)
		return nil
	}
	s.w.mu.Lock()
	defer s.w.mu.Unlock()
	next := make([]uint64, len(ps.Links))
	for p, l := range ps.Links {
		next[p] = l.Next
	}
	s.w.next[s.v] = next
	if prev, ok := s.w.now[s.v]; ok && ps.Now < prev {
		s.w.back = append(s.w.back, fmt.Sprintf("node %d saved round clock %d after %d", s.v, ps.Now, prev))
	}
	s.w.now[s.v] = ps.Now
	return nil
}

// frame is the network's Drop hook (called on the sender's goroutine, before the
// frame is delivered): a data frame must carry a sequence number below the Next its
// sender's last saved state records for that link, since a node persists a Ready
// before it sends its datagrams. It never drops.
func (w *savedLinks) frame(from, to int, frame []byte) bool {
	if len(frame) < MACSize {
		w.t.Errorf("node %d sent a frame of %d bytes, shorter than its MAC", from, len(frame))
		return false
	}
	_, d, err := DecodeFrame(frame[:len(frame)-MACSize], 0)
	if err != nil {
		w.t.Errorf("node %d sent a frame DecodeFrame refuses: %v", from, err)
		return false
	}
	if d.Kind != handoff.DatagramData {
		return false
	}
	p := slices.Index(w.b.g.Neighbors(from), int32(to))
	w.mu.Lock()
	defer w.mu.Unlock()
	w.data++
	if next := w.next[from]; p < 0 || p >= len(next) || d.Seq >= next[p] {
		w.bad = append(w.bad, fmt.Sprintf("node %d sent data %d to node %d before saving it (saved Next %v)", from, d.Seq, to, next))
	}
	return false
}

// TestInmemSavesBeforeSending checks the durability order on every frame rather than
// through crashes: each data frame's sequence number is below the Next of its
// sender's last saved state (a node that sent before saving could, crashing in
// between, resend that number with other tokens after its restart, which its
// neighbour would drop as a duplicate). It also checks that a restarted node's round
// clock goes on from the one it saved, never back (a clock restarting at 0). Both hold
// on every save and frame of a fleet whose nodes each restart once.
func TestInmemSavesBeforeSending(t *testing.T) {
	defer goleak.VerifyNone(t)
	for _, tp := range memTopologies() {
		t.Run(tp.name, func(t *testing.T) {
			w := &savedLinks{t: t, b: build(t, tp.spec), next: map[int][]uint64{}, now: map[int]int64{}}
			f := newMemFleetOpts(t, tp.spec, &InmemOptions{Queue: 4096, Drop: w.frame})
			defer f.close()
			for v := range f.cfgs {
				// With patience a node's program ticks (its round clock moves); without, it
				// is driven by messages alone and its clock stays at 0.
				f.cfgs[v].Patience = 20
			}
			f.wrap = func(v int, s Store) Store { return &savedStore{Store: s, v: v, w: w} }
			f.startAll()
			ctx := context.Background()
			l := newLedger(f.b)
			n := len(f.nodes)
			for v := range n {
				if err := f.nodes[v].AddItems(ctx, l.newIDs(2)); err != nil {
					t.Fatal(err)
				}
			}
			for v := range n {
				// Let the node run some rounds, so that its clock is past 0 when it stops.
				waitFor(t, "a few rounds", func() bool {
					w.mu.Lock()
					defer w.mu.Unlock()
					return w.now[v] >= 5
				})
				if err := f.stop(v); err != nil {
					t.Fatal(err)
				}
				f.start(v)
			}
			waitBalanced(t, f.b, f.loads, 10*time.Second)
			w.mu.Lock()
			defer w.mu.Unlock()
			t.Logf("saved clocks %v, %d data frames", w.now, w.data)
			if w.data == 0 {
				t.Fatal("no data frame was sent: nothing checked")
			}
			if len(w.bad) > 0 {
				t.Errorf("%d of %d data frames sent before their state was saved, e.g. %s", len(w.bad), w.data, w.bad[0])
			}
			if len(w.back) > 0 {
				t.Errorf("%d saves moved the round clock back, e.g. %s", len(w.back), w.back[0])
			}
		})
	}
}
