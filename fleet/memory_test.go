package fleet

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/tokendist/tokendist/fleet/internal/brokenstore"
	"github.com/tokendist/tokendist/handoff"
	"github.com/tokendist/tokendist/registry"
)

// ---- MemoryStore

func wantErr(t *testing.T, err error, what string) {
	t.Helper()
	if err == nil || !strings.HasPrefix(err.Error(), "tokendist: ") || !strings.Contains(err.Error(), what) {
		t.Errorf("error %v; want a tokendist error naming %q", err, what)
	}
}

// TestMemoryStore checks the Store rules on MemoryStore: Load of nothing is nil,
// Save and Load copy, nil is refused, a closed handle fails and keeps the state for
// Reopen, and concurrent Saves are atomic.
func TestMemoryStore(t *testing.T) {
	s := NewMemoryStore()
	if got, err := s.Load(); got != nil || err != nil {
		t.Fatalf("Load of a new store = %q, %v; want nil, nil", got, err)
	}
	buf := []byte("state-1")
	if err := s.Save(buf); err != nil {
		t.Fatal(err)
	}
	buf[0] = 'X' // Save copied
	got, err := s.Load()
	if err != nil || string(got) != "state-1" {
		t.Fatalf("Load = %q, %v; want state-1", got, err)
	}
	got[0] = 'Y' // Load copied
	if again, _ := s.Load(); string(again) != "state-1" {
		t.Fatalf("Load after changing a loaded copy = %q", again)
	}
	wantErr(t, s.Save(nil), "nil state")
	if err := s.Save([]byte{}); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Load(); got == nil || len(got) != 0 || err != nil {
		t.Fatalf("Load of an empty state = %v, %v; want empty, not nil", got, err)
	}
	if err := s.Save([]byte("state-2")); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	_, err = s.Load()
	wantErr(t, err, "closed MemoryStore")
	wantErr(t, s.Save([]byte("z")), "closed MemoryStore")
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	r := s.Reopen()
	if got, err := r.Load(); err != nil || string(got) != "state-2" {
		t.Fatalf("Reopen().Load() = %q, %v; want state-2 (a failed Save changes nothing)", got, err)
	}
	if err := r.Save([]byte("state-3")); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Reopen().Load(); string(got) != "state-3" {
		t.Fatalf("a third handle loads %q; want state-3", got)
	}
	if _, err := s.Load(); err == nil {
		t.Error("Reopen reopened the closed handle itself")
	}

	// Concurrent Saves and Loads: every state loaded is one that was saved whole.
	var wg sync.WaitGroup
	var torn atomic.Int64
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			state := bytes.Repeat([]byte{byte('a' + w)}, 256)
			for range 200 {
				if err := r.Save(state); err != nil {
					t.Error(err)
					return
				}
				got, err := r.Load()
				if err != nil || len(got) != 256 || bytes.Count(got, got[:1]) != 256 {
					torn.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	if torn.Load() > 0 {
		t.Fatalf("%d torn or failed loads", torn.Load())
	}
}

// ---- InmemNetwork

// TestInmemNetwork checks the Transport rules on InmemTransport: frames arrive in
// order per link with the sender's ID, never to two receive calls at once; errors for
// bad IDs and sizes; drops only when told, over a full queue or to a node that is not
// attached; the accounting; Close stops every goroutine.
func TestInmemNetwork(t *testing.T) {
	defer goleak.VerifyNone(t)
	if _, err := NewInmemNetwork(&InmemOptions{Queue: -1}); err == nil {
		t.Error("a negative Queue was accepted")
	} else {
		wantErr(t, err, "Queue -1")
	}
	if _, err := NewInmemNetwork(&InmemOptions{MaxFrame: -2}); err == nil {
		t.Error("a negative MaxFrame was accepted")
	} else {
		wantErr(t, err, "MaxFrame -2")
	}
	var drop atomic.Bool
	nw, err := NewInmemNetwork(&InmemOptions{Queue: 4096, MaxFrame: 64, Drop: func(from, to int, _ []byte) bool {
		return drop.Load() && from == 0 && to == 2
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer nw.Close()

	// Node 2's receive function checks that it is never entered twice at once.
	var busy, overlaps atomic.Int64
	var boxes [3]inbox
	recv2 := func(from int, frame []byte) {
		if busy.Add(1) > 1 {
			overlaps.Add(1)
		}
		boxes[2].recv(from, frame)
		busy.Add(-1)
	}
	t0, err := nw.Attach(0, boxes[0].recv)
	if err != nil {
		t.Fatal(err)
	}
	tr1, err := nw.Transport(1)(boxes[1].recv)
	if err != nil {
		t.Fatal(err)
	}
	t1 := tr1.(*InmemTransport)
	t2, err := nw.Attach(2, recv2)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		id   int
		recv func(int, []byte)
		want string
	}{{-1, boxes[0].recv, "ID -1"}, {0, nil, "nil receive"}, {1, boxes[0].recv, "node 1 is already attached"}} {
		if _, err := nw.Attach(tc.id, tc.recv); err == nil {
			t.Errorf("Attach(%d) succeeded", tc.id)
		} else {
			wantErr(t, err, tc.want)
		}
	}
	wantErr(t, t0.Send(0, nil), "node 0 sends to 0")
	wantErr(t, t0.Send(-3, nil), "node 0 sends to -3")
	wantErr(t, t0.Send(1, make([]byte, 65)), "65 bytes over the limit 64")

	// Two senders to node 2, each in order; node 0 also to node 1.
	const k = 500
	var wg sync.WaitGroup
	for _, tr := range []*InmemTransport{t0, t1} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range k {
				if err := tr.Send(2, fmt.Appendf(nil, "%d", i)); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	for i := range k {
		if err := t0.Send(1, fmt.Appendf(nil, "%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()
	waitFor(t, "every frame", func() bool { return nw.Stats().Delivered == 3*k })
	for _, l := range []struct{ to, from int }{{2, 0}, {2, 1}, {1, 0}} {
		b := &boxes[l.to]
		b.mu.Lock()
		for i, f := range b.frames[l.from] {
			if f != fmt.Sprint(i) {
				t.Fatalf("link %d→%d: frame %d is %q", l.from, l.to, i, f)
			}
		}
		b.mu.Unlock()
	}
	if overlaps.Load() > 0 {
		t.Fatalf("node 2's receive function was entered concurrently %d times", overlaps.Load())
	}
	if st := nw.Stats(); st != (InmemStats{Sent: 3 * k, Delivered: 3 * k}) {
		t.Fatalf("Stats = %+v; want %d sent and delivered, none dropped", st, 3*k)
	}

	if err := t0.Send(1, make([]byte, 64)); err != nil {
		t.Fatalf("a frame of exactly MaxFrame bytes: %v", err)
	}
	waitFor(t, "the frame of MaxFrame bytes", func() bool { return boxes[1].count(0) == k+1 })

	// Drops when told: 0→2 is cut, 1→2 is not.
	drop.Store(true)
	_ = t0.Send(2, []byte("cut"))
	_ = t1.Send(2, []byte("through"))
	waitFor(t, "the frame on the other link", func() bool { return boxes[2].count(1) == k+1 })
	if st := nw.Stats(); st.Dropped != 1 || boxes[2].count(0) != k {
		t.Fatalf("after a told drop: %+v, %d frames from 0", st, boxes[2].count(0))
	}
	drop.Store(false)

	// A node that is not attached: accepted, dropped on delivery; a closed node may
	// attach again under its ID.
	if err := t0.Send(7, []byte("nobody")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the drop to a missing node", func() bool { return nw.Stats().Dropped == 2 })
	if err := t1.Close(); err != nil {
		t.Fatal(err)
	}
	_ = t0.Send(1, []byte("to a closed node"))
	waitFor(t, "the drop to a closed node", func() bool { return nw.Stats().Dropped == 3 })
	if err := t1.Send(0, []byte("from a closed transport")); err != nil {
		t.Fatal(err)
	}
	if st := nw.Stats(); st.Dropped != 4 {
		t.Fatalf("Send on a closed transport: %+v; want 4 dropped", st)
	}
	if err := t1.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	var again inbox
	t1b, err := nw.Attach(1, again.recv)
	if err != nil {
		t.Fatalf("re-attaching node 1 after Close: %v", err)
	}
	_ = t0.Send(1, []byte("hello again"))
	waitFor(t, "a frame to the re-attached node", func() bool { return again.count(0) == 1 })

	// A full queue drops: node 3's receive function holds the link up.
	release := make(chan struct{})
	entered := make(chan struct{}, 1)
	small, err := NewInmemNetwork(&InmemOptions{Queue: 2})
	if err != nil {
		t.Fatal(err)
	}
	s0, _ := small.Attach(0, func(int, []byte) {})
	if _, err := small.Attach(3, func(int, []byte) {
		select {
		case entered <- struct{}{}:
			<-release
		default:
		}
	}); err != nil {
		t.Fatal(err)
	}
	_ = s0.Send(3, []byte("held"))
	<-entered
	for range 5 {
		_ = s0.Send(3, []byte("queued or dropped"))
	}
	if st := small.Stats(); st.Sent != 6 || st.Dropped != 3 {
		t.Fatalf("queue of 2 behind a held frame: %+v; want 6 sent, 3 dropped", st)
	}
	close(release)
	waitFor(t, "the queue to drain", func() bool { return small.Stats().Delivered == 3 })
	if err := small.Close(); err != nil {
		t.Fatal(err)
	}
	if st := small.Stats(); st.Sent != st.Delivered+st.Dropped {
		t.Fatalf("after Close: %+v; want Sent = Delivered + Dropped", st)
	}

	// Frames queued when their transport closes are dropped, and counted.
	slow, _ := NewInmemNetwork(nil)
	hold := make(chan struct{})
	started := make(chan struct{}, 1)
	q0, _ := slow.Attach(0, func(int, []byte) {})
	if _, err := slow.Attach(1, func(int, []byte) {
		select {
		case started <- struct{}{}:
			<-hold
		default:
		}
	}); err != nil {
		t.Fatal(err)
	}
	for range 4 {
		_ = q0.Send(1, []byte("x"))
	}
	<-started
	closed := make(chan struct{})
	go func() { _ = q0.Close(); close(closed) }()
	waitFor(t, "Close to stop the link", func() bool { return q0.ctx.Err() != nil })
	close(hold)
	<-closed
	if err := slow.Close(); err != nil {
		t.Fatal(err)
	}
	if st := slow.Stats(); st != (InmemStats{Sent: 4, Delivered: 1, Dropped: 3}) {
		t.Fatalf("frames queued at Close: %+v; want 4 sent, the one held delivered, 3 dropped", st)
	}

	if err := nw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := nw.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := nw.Attach(5, again.recv); err == nil {
		t.Error("Attach on a closed network succeeded")
	} else {
		wantErr(t, err, "closed")
	}
	if _, err := nw.Transport(5)(again.recv); err == nil {
		t.Error("Transport on a closed network succeeded")
	}
	_ = t1b.Send(0, []byte("after the network closed"))
	if st := nw.Stats(); st.Sent != st.Delivered+st.Dropped {
		t.Fatalf("after Close: %+v; want Sent = Delivered + Dropped", st)
	}
	_ = t2
}

// ---- a fleet in one process

// memFleet runs a fleet as goroutines over an InmemNetwork with one MemoryStore per
// node: no sockets, no store files.
type memFleet struct {
	t      *testing.T
	b      built
	cfgs   []Config
	nw     *InmemNetwork
	disks  []*MemoryStore
	wrap   func(v int, s Store) Store // nil: the MemoryStore as it is
	reinit bool                       // Options.Reinit on every start
	// transport, when not nil, makes node v's Options.Transport (nil: the network's).
	transport func(v int) func(recv func(from int, frame []byte)) (Transport, error)
	dupGrace  time.Duration // Options.dupGrace
	nodes     []*Node
	cancel    []context.CancelFunc
	errc      []chan error
}

func newMemFleet(t *testing.T, spec registry.Spec) *memFleet {
	t.Helper()
	return newMemFleetOpts(t, spec, nil)
}

// newMemFleetOpts is newMemFleet on a network with the options opts.
func newMemFleetOpts(t *testing.T, spec registry.Spec, opts *InmemOptions) *memFleet {
	t.Helper()
	b := build(t, spec)
	n := b.g.Order()
	nw, err := NewInmemNetwork(opts)
	if err != nil {
		t.Fatal(err)
	}
	f := &memFleet{t: t, b: b, nw: nw, cfgs: make([]Config, n), disks: make([]*MemoryStore, n),
		nodes: make([]*Node, n), cancel: make([]context.CancelFunc, n), errc: make([]chan error, n)}
	dir := t.TempDir() // the starts files
	for v := range n {
		peers := map[int]string{}
		for _, w := range b.g.Neighbors(v) {
			peers[int(w)] = "inmem:0" // not used: the transport is the network's
		}
		f.cfgs[v] = Config{ID: v, Spec: spec, Listen: "inmem:0", Status: "inmem:0", Data: filepath.Join(dir, fmt.Sprint(v)),
			Peers: peers, Tick: Duration(time.Millisecond), RetransmitTicks: 5, KeyFile: testKeyFile(t, dir)}
		f.disks[v] = NewMemoryStore()
	}
	return f
}

// start builds node v on a new handle of its MemoryStore (restoring its last saved
// state) and runs it.
func (f *memFleet) start(v int) {
	f.t.Helper()
	var st Store = f.disks[v].Reopen()
	if f.wrap != nil {
		st = f.wrap(v, st)
	}
	tr := f.nw.Transport(v)
	if f.transport != nil {
		tr = f.transport(v)
	}
	nd, err := NewNode(f.cfgs[v], &Options{Store: st, Transport: tr, Reinit: f.reinit, dupGrace: f.dupGrace})
	if err != nil {
		f.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ch := make(chan error, 1)
	go func() { ch <- nd.Run(ctx) }()
	f.nodes[v], f.cancel[v], f.errc[v] = nd, cancel, ch
}

func (f *memFleet) startAll() {
	for v := range f.nodes {
		f.start(v)
	}
}

// stop stops node v (if running) and returns Run's error.
func (f *memFleet) stop(v int) error {
	f.t.Helper()
	if f.cancel[v] == nil {
		return nil
	}
	f.cancel[v]()
	f.cancel[v] = nil
	select {
	case err := <-f.errc[v]:
		return err
	case <-time.After(10 * time.Second):
		f.t.Fatalf("node %d did not stop within 10 s", v)
		return nil
	}
}

// close stops every node and the network.
func (f *memFleet) close() {
	for v := range f.nodes {
		if err := f.stop(v); err != nil {
			f.t.Errorf("node %d: Run: %v", v, err)
		}
	}
	_ = f.nw.Close()
}

func (f *memFleet) loads() []int64 {
	out := make([]int64, len(f.nodes))
	for v, nd := range f.nodes {
		out[v] = nd.Snapshot().Load
	}
	return out
}

// audit reads the persisted states of the stopped fleet from the MemoryStores: the
// items held or in flight, and the settled loads (as auditStores).
func (f *memFleet) audit() (items []uint64, loads []int64) {
	f.t.Helper()
	n := len(f.nodes)
	states := make([]handoff.State, n)
	for v := range n {
		raw, err := f.disks[v].Reopen().Load()
		if err != nil {
			f.t.Fatal(err)
		}
		stored, err := DecodeStored(raw)
		raw = stored.State
		if err != nil {
			f.t.Fatal(err)
		}
		if states[v], err = handoff.DecodeState(raw); err != nil {
			f.t.Fatal(err)
		}
	}
	loads = make([]int64, n)
	for v, ps := range states {
		items = append(items, ps.Items...)
		loads[v] += ps.Load
		nb := f.b.g.Neighbors(v)
		for p, l := range ps.Links {
			w := int(nb[p])
			q := slices.Index(f.b.g.Neighbors(w), int32(v))
			for _, d := range l.Log {
				if d.Seq > states[w].Links[q].Delivered {
					items = append(items, d.Items...)
					loads[w] += d.Msg.Tokens
				}
			}
		}
	}
	return items, loads
}

// drain completes every item of the running fleet, until every node holds nothing and
// has nothing in flight (twice in a row) or limit passes; it returns the items
// completed (each occurrence) and whether the fleet emptied.
func (f *memFleet) drain(limit time.Duration) (items []uint64, ok bool) {
	ctx := context.Background()
	empty := 0
	for deadline := time.Now().Add(limit); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		moved := false
		for _, nd := range f.nodes {
			ids, err := nd.CompleteItems(ctx, 1<<30)
			if err != nil {
				f.t.Logf("drain: %v", err)
				return items, false
			}
			items = append(items, ids...)
			moved = moved || len(ids) > 0
		}
		quiet := !moved
		for _, nd := range f.nodes {
			s := nd.Snapshot()
			quiet = quiet && s.Load == 0 && s.InFlight == 0
		}
		if !quiet {
			empty = 0
		} else if empty++; empty == 2 {
			return items, true
		}
	}
	return items, false
}

// ledger is what the test knows of the fleet's items.
type ledger struct {
	expected  map[uint64]bool // accepted and not completed: must be found exactly once
	maybe     map[uint64]bool // may or may not have been accepted: found at most once
	completed map[uint64]bool // returned by a CompleteItems: never found again
	twice     int             // items completed twice
	next      uint64
}

func newLedger(b built) *ledger {
	l := &ledger{expected: map[uint64]bool{}, maybe: map[uint64]bool{}, completed: map[uint64]bool{}, next: 1 << 63}
	for _, id := range b.initialItems() {
		l.expected[id] = true
	}
	return l
}

func (l *ledger) newIDs(k int) []uint64 {
	ids := make([]uint64, k)
	for i := range ids {
		ids[i] = l.next
		l.next++
	}
	return ids
}

func (l *ledger) complete(ids []uint64) {
	for _, id := range ids {
		if l.completed[id] {
			l.twice++
		}
		l.completed[id] = true
		delete(l.expected, id)
		delete(l.maybe, id)
	}
}

// check compares the items found (each occurrence) with the ledger.
func (l *ledger) check(found []uint64) (lost, doubled, unknown int) {
	seen := map[uint64]int{}
	for _, id := range found {
		seen[id]++
	}
	for id := range l.expected {
		switch seen[id] {
		case 0:
			lost++
		case 1:
		default:
			doubled++
		}
		delete(seen, id)
	}
	for id, c := range seen {
		switch {
		case l.completed[id] || c > 1:
			doubled++
		case !l.maybe[id]:
			unknown++
		}
	}
	return lost, doubled + l.twice, unknown
}

// finish waits until the running fleet is balanced, stops it, checks its persisted
// states (every expected item exactly once, the settled loads within the algorithm's
// bound), restarts it from its MemoryStores and drains it: every item exactly once.
func (f *memFleet) finish(l *ledger) {
	t := f.t
	t.Helper()
	waitBalanced(t, f.b, f.loads, 10*time.Second)
	for v := range f.nodes {
		if err := f.stop(v); err != nil {
			t.Fatalf("node %d: Run: %v", v, err)
		}
	}
	items, settled := f.audit()
	if lost, doubled, unknown := l.check(items); lost+doubled+unknown > 0 {
		t.Fatalf("persisted: lost %d, doubled %d, unknown %d", lost, doubled, unknown)
	}
	if !f.b.withinBound(settled) {
		disc, local := f.b.discrepancy(settled)
		t.Fatalf("settled loads %v: discrepancy %d (local %d) over the bound %d (local %d)", settled, disc, local, f.b.bound, f.b.local)
	}
	f.startAll()
	for v, nd := range f.nodes {
		if !nd.Snapshot().Restored {
			t.Fatalf("node %d did not restore from its MemoryStore", v)
		}
	}
	drained, ok := f.drain(10 * time.Second)
	if !ok {
		t.Fatalf("the fleet did not drain within 10 s (%d items completed)", len(drained))
	}
	if lost, doubled, unknown := l.check(drained); lost+doubled+unknown > 0 {
		t.Fatalf("drained %d items: lost %d, doubled %d, unknown %d", len(drained), lost, doubled, unknown)
	}
	t.Logf("%d items drained exactly once; settled loads %v (bound %d); network %+v", len(drained), settled, f.b.bound, f.nw.Stats())
}

func memTopologies() []topology {
	return []topology{
		{"tree", registry.Spec{Network: choice("random-tree", map[string]any{"n": 6}), Loads: choice("uniform-random", map[string]any{"tokens": 60}),
			Algorithm: choice("threshold-1", nil), Seed: 3}},
		{"torus", registry.Spec{Network: choice("torus", map[string]any{"sides": []int{3, 3}}), Loads: choice("point-mass", map[string]any{"tokens": 90}),
			Algorithm: choice("rsw-diffusion", nil), Seed: 4}},
	}
}

// TestInmemFleet runs whole fleets in one process over an InmemNetwork with
// MemoryStores: work is added and completed, nodes stop and restart from their
// stores, and the fleet ends within the algorithm's bound with every item exactly once
// (in its persisted states, and again when drained).
func TestInmemFleet(t *testing.T) {
	defer goleak.VerifyNone(t)
	for _, tp := range memTopologies() {
		t.Run(tp.name, func(t *testing.T) {
			f := newMemFleet(t, tp.spec)
			defer f.close()
			f.startAll()
			l := newLedger(f.b)
			ctx := context.Background()
			n := len(f.nodes)
			for i := range 12 {
				v := i % n
				ids := l.newIDs(3)
				if err := f.nodes[v].AddItems(ctx, ids); err != nil {
					t.Fatal(err)
				}
				for _, id := range ids {
					l.expected[id] = true
				}
				done, err := f.nodes[(v+1)%n].CompleteItems(ctx, 2)
				if err != nil {
					t.Fatal(err)
				}
				l.complete(done)
				if i%4 == 3 {
					if err := f.stop(v); err != nil {
						t.Fatal(err)
					}
					f.start(v)
					if st := f.nodes[v].Snapshot(); !st.Restored || st.Starts < 2 {
						t.Fatalf("node %d did not restore its state: %+v", v, st)
					}
				}
				time.Sleep(2 * time.Millisecond)
			}
			f.finish(l)
		})
	}
}

// TestInmemCrashRestore stops nodes in the middle of the traffic (a point mass
// spreading, work arriving) and rebuilds each from the same MemoryStore: the fleet
// still ends within the bound with every item exactly once.
func TestInmemCrashRestore(t *testing.T) {
	defer goleak.VerifyNone(t)
	spec := registry.Spec{Network: choice("random-tree", map[string]any{"n": 8}), Loads: choice("point-mass", map[string]any{"tokens": 80}),
		Algorithm: choice("threshold-1", nil), Seed: 5}
	f := newMemFleet(t, spec)
	defer f.close()
	f.startAll()
	l := newLedger(f.b)
	r := rand.New(rand.NewPCG(1, 2))
	ctx := context.Background()
	n := len(f.nodes)
	for i := range 10 {
		v := r.IntN(n)
		ids := l.newIDs(4)
		if err := f.nodes[(v+1)%n].AddItems(ctx, ids); err != nil {
			t.Fatal(err)
		}
		for _, id := range ids {
			l.expected[id] = true
		}
		time.Sleep(time.Duration(r.IntN(5)) * time.Millisecond)
		if err := f.stop(v); err != nil {
			t.Fatal(err)
		}
		if _, err := f.nodes[v].Items(ctx); !errors.Is(err, ErrStopped) {
			t.Fatalf("Items on a stopped node: %v; want ErrStopped", err)
		}
		time.Sleep(time.Duration(r.IntN(5)) * time.Millisecond) // down: its frames are dropped
		f.start(v)
		if st := f.nodes[v].Snapshot(); !st.Restored {
			t.Fatalf("node %d did not restore: %+v", v, st)
		}
		if i%3 == 0 {
			done, err := f.nodes[(v+2)%n].CompleteItems(ctx, 3)
			if err != nil {
				t.Fatal(err)
			}
			l.complete(done)
		}
	}
	f.finish(l)
}

// ---- the durability order, checked with crashes inside events

// errCrash is the injected crash.
var errCrash = errors.New("tokendist: injected crash")

// crashStore wraps a node's store and crashes the node inside an event: the k-th Save
// after arm fails (Run returns the error without sending what the event would send),
// before the state reaches the inner store or, with after, once it has. A crashed
// store does not close the inner one: a crashed process closes nothing.
type crashStore struct {
	inner   Store
	mu      sync.Mutex
	k       int // 0: not armed
	after   bool
	saves   int
	crashed bool
}

func (c *crashStore) arm(k int, after bool) {
	c.mu.Lock()
	c.k, c.after, c.saves = k, after, 0
	c.mu.Unlock()
}

func (c *crashStore) Load() ([]byte, error) { return c.inner.Load() }

func (c *crashStore) Save(state []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.crashed {
		return errCrash
	}
	if c.k > 0 {
		if c.saves++; c.saves == c.k {
			c.crashed = true
			if c.after {
				if err := c.inner.Save(state); err != nil {
					return err
				}
			}
			return errCrash
		}
	}
	return c.inner.Save(state)
}

func (c *crashStore) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.crashed {
		return nil
	}
	return c.inner.Close()
}

// crashReport is what one crash run found.
type crashReport struct {
	crashes                 int
	lost, doubled, unknown  int
	drained                 bool
	anomalies               []string // node errors other than the injected crash
	acceptedAfterCrashSaved int      // AddItems that failed with the crash after the write
}

func (r crashReport) clean() bool {
	return r.lost+r.doubled+r.unknown == 0 && r.drained && len(r.anomalies) == 0
}

// runCrashes runs a fleet whose nodes crash, one at a time, at the k-th Save after
// being armed, for crashes values of k, while work is added at every node and
// completed at the others; each crashed node is rebuilt from its MemoryStore. Then it
// drains the fleet. writeBehind puts brokenstore.WriteBehind (writing every 4th
// state) under every node's crashStore: the self-check, which must be caught.
func runCrashes(t *testing.T, crashes int, after, writeBehind bool) crashReport {
	spec := registry.Spec{Network: choice("random-tree", map[string]any{"n": 6}), Loads: choice("uniform-random", map[string]any{"tokens": 48}),
		Algorithm: choice("threshold-1", nil), Seed: 7}
	f := newMemFleet(t, spec)
	defer f.close()
	n := len(f.nodes)
	stores := make([]*crashStore, n)
	// A write-behind store loses a node's first states: without Reinit its restart
	// is refused (TestIdentityUsedDataDir); with it the self-check sees the loss in
	// the items, as an operator who forced the restart would.
	f.reinit = writeBehind
	f.wrap = func(v int, s Store) Store {
		if writeBehind {
			s = brokenstore.NewWriteBehind(s, 4)
		}
		stores[v] = &crashStore{inner: s}
		return stores[v]
	}
	f.startAll()
	l := newLedger(f.b)
	r := rand.New(rand.NewPCG(uint64(crashes), 9))
	ctx := context.Background()
	var rep crashReport
	wait := 5 * time.Second
	if writeBehind {
		wait = 500 * time.Millisecond // a stuck fleet is one of the ways it is caught
	}
crashing:
	for i := range crashes {
		v, k := i%n, 1+(i*7)%31
		stores[v].arm(k, after)
		deadline := time.Now().Add(wait)
	traffic:
		for {
			select {
			case err := <-f.errc[v]:
				f.cancel[v]()
				f.cancel[v] = nil
				if !errors.Is(err, errCrash) {
					if !writeBehind {
						t.Fatalf("node %d: Run: %v; want the injected crash", v, err)
					}
					rep.anomalies = append(rep.anomalies, fmt.Sprint(err))
				}
				break traffic
			default:
			}
			if time.Now().After(deadline) {
				if !writeBehind {
					t.Fatalf("node %d did not reach its Save %d within %v", v, k, wait)
				}
				stores[v].arm(0, false)
				rep.anomalies = append(rep.anomalies, fmt.Sprintf("node %d stuck: not %d saves in %v", v, k, wait))
				break crashing
			}
			u := r.IntN(n)
			ids := l.newIDs(1 + r.IntN(3))
			switch err := f.nodes[u].AddItems(ctx, ids); {
			case err == nil:
				for _, id := range ids {
					l.expected[id] = true
				}
			case errors.Is(err, errCrash) && after: // saved, then the crash: accepted
				rep.acceptedAfterCrashSaved++
				for _, id := range ids {
					l.expected[id] = true
				}
			case errors.Is(err, errCrash) || errors.Is(err, ErrStopped): // never saved
			default:
				t.Fatalf("node %d: AddItems: %v", u, err)
			}
			if w := r.IntN(n); w != v {
				done, err := f.nodes[w].CompleteItems(ctx, 1+r.IntN(2))
				if err != nil {
					t.Fatalf("node %d: CompleteItems: %v", w, err)
				}
				for _, id := range done {
					if !l.expected[id] {
						rep.unknown++ // completed something not in the fleet
					}
				}
				l.complete(done)
			}
			time.Sleep(time.Millisecond)
		}
		rep.crashes++
		f.start(v)
	}
	drained, ok := f.drain(2 * wait)
	rep.drained = ok
	lost, doubled, unknown := l.check(drained)
	rep.lost, rep.doubled, rep.unknown = lost, doubled, rep.unknown+unknown
	return rep
}

// TestInmemDurabilityOrder crashes nodes inside events, at their k-th Save for many k,
// before and after the write: since a node saves before it sends or answers, nothing
// another node (or a caller) was told is ever lost or repeated, and the fleet drains
// with every item exactly once. Its self-check runs the same crashes on a write-behind
// store (brokenstore.WriteBehind), which sends before its state is durable, and must
// see items lost or doubled, or the fleet stuck.
func TestInmemDurabilityOrder(t *testing.T) {
	defer goleak.VerifyNone(t)
	crashes := 90
	if testing.Short() {
		crashes = 30
	}
	for _, after := range []bool{false, true} {
		name := map[bool]string{false: "crash before the write", true: "crash after the write"}[after]
		t.Run(name, func(t *testing.T) {
			rep := runCrashes(t, crashes, after, false)
			t.Logf("%+v", rep)
			if !rep.clean() {
				t.Fatalf("%d crashes: lost %d, doubled %d, unknown %d, drained %t, errors %v",
					rep.crashes, rep.lost, rep.doubled, rep.unknown, rep.drained, rep.anomalies)
			}
			if after && rep.acceptedAfterCrashSaved == 0 {
				t.Log("no AddItems met its crash (timing): the after-the-write answers are unchecked in this run")
			}
		})
	}
	t.Run("self-check: write-behind caught", func(t *testing.T) {
		rep := runCrashes(t, 12, false, true)
		t.Logf("write-behind: %+v", rep)
		if rep.clean() {
			t.Fatalf("%d crashes of nodes on a write-behind store went unnoticed: the test cannot see a broken persistence order", rep.crashes)
		}
	})
}

// TestInmemAnswersAfterSave: a request's answer comes after its state is saved. On an
// idle fleet (its rounds done) the next Save of a node is the request's own, so a
// crash there is a crash between the event and its answer: AddItems and CompleteItems
// fail with it, and after the restart the fleet holds exactly what the store says —
// the items added when the crash came after the write, not before it, and the items
// completed gone after the write, still there before it.
func TestInmemAnswersAfterSave(t *testing.T) {
	defer goleak.VerifyNone(t)
	for _, after := range []bool{false, true} {
		t.Run(fmt.Sprintf("after the write %t", after), func(t *testing.T) {
			spec := registry.Spec{Network: choice("random-tree", map[string]any{"n": 4}), Loads: choice("uniform-random", map[string]any{"tokens": 16}),
				Algorithm: choice("threshold-1", nil), Seed: 11}
			f := newMemFleet(t, spec)
			defer f.close()
			n := len(f.nodes)
			for v := range f.cfgs {
				f.cfgs[v].Rounds = 3
			}
			stores := make([]*crashStore, n)
			f.wrap = func(v int, s Store) Store {
				stores[v] = &crashStore{inner: s}
				return stores[v]
			}
			f.startAll()
			idle := func() bool {
				for _, nd := range f.nodes {
					if !nd.Snapshot().Idle {
						return false
					}
				}
				return true
			}
			waitFor(t, "the rounds to end", idle)
			l := newLedger(f.b)
			ctx := context.Background()
			for v := range n {
				ids := l.newIDs(2)
				stores[v].arm(1, after)
				if err := f.nodes[v].AddItems(ctx, ids); !errors.Is(err, errCrash) {
					t.Fatalf("node %d: AddItems at the crash: %v; want the crash", v, err)
				}
				if after {
					for _, id := range ids {
						l.expected[id] = true
					}
				}
				<-f.errc[v]
				f.cancel[v]()
				f.cancel[v] = nil
				f.start(v)

				held, err := f.nodes[v].Items(ctx)
				if err != nil {
					t.Fatal(err)
				}
				stores[v].arm(1, after)
				if _, err := f.nodes[v].CompleteItems(ctx, 2); !errors.Is(err, errCrash) {
					t.Fatalf("node %d: CompleteItems at the crash: %v; want the crash", v, err)
				}
				if after { // done, though the answer was lost
					l.complete(held[:min(2, len(held))])
				}
				<-f.errc[v]
				f.cancel[v]()
				f.cancel[v] = nil
				f.start(v)
			}
			waitFor(t, "the fleet to be idle again", idle)
			drained, ok := f.drain(10 * time.Second)
			if !ok {
				t.Fatalf("the fleet did not drain (%d items)", len(drained))
			}
			if lost, doubled, unknown := l.check(drained); lost+doubled+unknown > 0 {
				t.Fatalf("drained %d items: lost %d, doubled %d, unknown %d", len(drained), lost, doubled, unknown)
			}
		})
	}
}
