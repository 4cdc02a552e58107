package handoff

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/tokendist/tokendist/node"
)

// itemNet is a tiny host for item-mode nodes on a ring: a bag of datagrams in flight
// that the test loses, duplicates and reorders, crashes that restore a node from its
// last persisted state, and a workload of AddItems and CompleteItems.
type itemNet struct {
	t         *testing.T
	r         *rand.Rand
	n         int
	nodes     []*ItemMachine
	persisted [][]byte
	bag       []itemDatagram
	completed []uint64
	added     []uint64
	nextID    uint64
	// sendBeforePersist breaks the host's order: a Ready's datagrams go out, then a
	// crash may hit before the state is persisted.
	sendBeforePersist bool
}

type itemDatagram struct {
	from, to int
	d        Datagram // Port: the receiver's port
}

// ringNbr is v's neighbour on port p (neighbours ascending, as ringPort).
func ringNbr(v, p, n int) int {
	a, b := (v-1+n)%n, (v+1)%n
	if a > b {
		a, b = b, a
	}
	if p == 0 {
		return a
	}
	return b
}

func newItemNet(t *testing.T, n int, seed uint64, rounds int64) *itemNet {
	in := &itemNet{t: t, r: rand.New(rand.NewPCG(seed, 1)), n: n, persisted: make([][]byte, n)}
	for v := range n {
		var ids []uint64
		for range (v * 7) % 23 {
			in.nextID++
			ids = append(ids, in.nextID)
		}
		in.added = append(in.added, ids...)
		nd, err := NewItemMachine(&shareProgram{}, Config{ID: v, Degree: 2, Rounds: rounds}, ids)
		if err != nil {
			t.Fatal(err)
		}
		if err := nd.Start(); err != nil {
			t.Fatal(err)
		}
		in.nodes = append(in.nodes, nd)
		in.flush(v)
	}
	return in
}

// flush persists and sends node v's Ready; with sendBeforePersist it may crash the
// node between sending and persisting.
func (in *itemNet) flush(v int) (crashed bool) {
	nd := in.nodes[v]
	if !nd.HasReady() {
		return false
	}
	rd := mustReady(nd)
	send := func() {
		for _, d := range rd.Datagrams {
			d.Items = slices.Clone(d.Items)
			w := ringNbr(v, d.Port, in.n)
			d.Port = 0
			if ringNbr(w, 1, in.n) == v {
				d.Port = 1
			}
			in.bag = append(in.bag, itemDatagram{from: v, to: w, d: d})
		}
	}
	if in.sendBeforePersist {
		send()
		if in.r.IntN(4) == 0 {
			in.crash(v)
			return true
		}
	}
	if rd.State != nil {
		in.persisted[v] = slices.Clone(rd.State)
	}
	if !in.sendBeforePersist {
		send()
	}
	nd.Advance()
	return false
}

func (in *itemNet) crash(v int) {
	nd, err := RestoreItemMachine(&shareProgram{}, Config{ID: v, Degree: 2}, in.persisted[v])
	if err != nil {
		in.t.Fatal(err)
	}
	in.nodes[v] = nd
}

// step does one random thing; it returns a node's error from Step.
func (in *itemNet) step(now int64) error {
	switch k := in.r.IntN(20); {
	case k < 12 && len(in.bag) > 0:
		i := in.r.IntN(len(in.bag))
		x := in.bag[i]
		if in.r.IntN(5) != 0 { // else duplicate: leave it in the bag
			in.bag[i] = in.bag[len(in.bag)-1]
			in.bag = in.bag[:len(in.bag)-1]
		}
		if in.r.IntN(8) == 0 {
			return nil // lost
		}
		if err := in.nodes[x.to].Step(x.d); err != nil {
			return err
		}
		in.flush(x.to)
	case k < 15:
		v := in.r.IntN(in.n)
		if err := in.nodes[v].Tick(now); err != nil {
			in.t.Fatal(err)
		}
		in.flush(v)
	case k < 16:
		in.crash(in.r.IntN(in.n))
	case k < 18:
		v := in.r.IntN(in.n)
		ids := make([]uint64, in.r.IntN(4))
		for i := range ids {
			in.nextID++
			ids[i] = in.nextID
		}
		in.nodes[v].AddItems(ids)
		if !in.flush(v) { // persisted: the work is accepted
			in.added = append(in.added, ids...)
		}
	default:
		v := in.r.IntN(in.n)
		done, err := in.nodes[v].CompleteItems(in.r.IntN(3))
		if err != nil {
			in.t.Fatal(err)
		}
		if !in.flush(v) {
			in.completed = append(in.completed, done...)
		}
	}
	return nil
}

// audit checks the item version of the conservation invariant over the persisted
// states: every ID accepted is exactly once held, in flight (in a log above the
// receiver's delivered counter) or completed.
func (in *itemNet) audit() error {
	seen := map[uint64]int{}
	for _, id := range in.completed {
		seen[id]++
	}
	states := make([]State, in.n)
	for v := range in.n {
		ps, err := DecodeState(in.persisted[v])
		if err != nil {
			return err
		}
		states[v] = ps
		if int64(len(ps.Items)) != ps.Load {
			return fmt.Errorf("node %d: load %d, %d items", v, ps.Load, len(ps.Items))
		}
	}
	for v, ps := range states {
		for _, id := range ps.Items {
			seen[id]++
		}
		for p, l := range ps.Links {
			w := ringNbr(v, p, in.n)
			q := 0
			if ringNbr(w, 1, in.n) == v {
				q = 1
			}
			for _, d := range l.Log {
				if d.Seq > states[w].Links[q].Delivered {
					for _, id := range d.Items {
						seen[id]++
					}
				}
			}
		}
	}
	var lost, doubled []uint64
	for _, id := range in.added {
		switch seen[id] {
		case 0:
			lost = append(lost, id)
		case 1:
		default:
			doubled = append(doubled, id)
		}
		delete(seen, id)
	}
	if len(lost) > 0 || len(doubled) > 0 || len(seen) > 0 {
		return fmt.Errorf("lost %v, doubled %v, unknown %v", lost, doubled, seen)
	}
	return nil
}

// TestItemsExactlyOnce: on a ring under loss, duplication, reordering, crashes and a
// workload, every item is exactly once held, in flight or completed, after every step,
// and at the end, with the faults stopped, every item is held or completed.
func TestItemsExactlyOnce(t *testing.T) {
	for seed := range uint64(6) {
		in := newItemNet(t, 6, seed, 40)
		for i := range 4000 {
			if err := in.step(int64(i / 10)); err != nil {
				t.Fatalf("seed %d, step %d: %v", seed, i, err)
			}
			if err := in.audit(); err != nil {
				t.Fatalf("seed %d, step %d: %v", seed, i, err)
			}
		}
		// Recovery: no loss, ticks until every node is idle and the bag is empty.
		for i := 0; i < 100000 && (len(in.bag) > 0 || !allIdle(in.nodes)); i++ {
			if len(in.bag) > 0 {
				x := in.bag[0]
				in.bag = in.bag[1:]
				if err := in.nodes[x.to].Step(x.d); err != nil {
					t.Fatal(err)
				}
				in.flush(x.to)
			} else {
				for v := range in.n {
					if err := in.nodes[v].Tick(int64(1000 + i)); err != nil {
						t.Fatal(err)
					}
					in.flush(v)
				}
			}
		}
		if !allIdle(in.nodes) {
			t.Fatalf("seed %d: not idle after recovery", seed)
		}
		if err := in.audit(); err != nil {
			t.Fatalf("seed %d, end: %v", seed, err)
		}
		var held int
		for _, nd := range in.nodes {
			held += len(nd.Items())
			if nd.InFlight() != 0 {
				t.Fatalf("seed %d: tokens in flight after recovery", seed)
			}
		}
		if held+len(in.completed) != len(in.added) {
			t.Fatalf("seed %d: held %d + completed %d != added %d", seed, held, len(in.completed), len(in.added))
		}
	}
}

func allIdle(ns []*ItemMachine) bool {
	for _, n := range ns {
		if !n.Idle() {
			return false
		}
	}
	return true
}

// TestItemsSendBeforePersistCaught: the audit catches a host that sends before it
// persists (a crash in between loses or doubles items).
func TestItemsSendBeforePersistCaught(t *testing.T) {
	caught := 0
	for seed := range uint64(6) {
		in := newItemNet(t, 6, seed, 40)
		in.sendBeforePersist = true
		for i := range 4000 {
			if err := in.step(int64(i / 10)); err != nil {
				caught++ // the receiver saw an ack or data the sender's state denies
				break
			}
			if err := in.audit(); err != nil {
				if !strings.Contains(err.Error(), "lost") || strings.Contains(err.Error(), "lost [], doubled []") {
					t.Fatal(err)
				}
				caught++
				break
			}
		}
	}
	if caught == 0 {
		t.Fatal("no run of the broken host was caught")
	}
}

// TestItemModeErrors: a method of one mode does not exist on the other mode's type; a
// data datagram whose items do not match its tokens is an error; the persisted state
// round-trips through DecodeState and RestoreItemMachine, and restoring it in the other mode
// is an error naming both modes.
func TestItemModeErrors(t *testing.T) {
	cnt, _ := NewCountMachine(&shareProgram{}, Config{ID: 0, Degree: 2}, 3)
	if _, ok := any(cnt).(interface{ AddItems([]uint64) }); ok {
		t.Error("a CountMachine has AddItems")
	}
	if _, ok := any(cnt).(interface{ CompleteItems(int) ([]uint64, error) }); ok {
		t.Error("a CountMachine has CompleteItems")
	}
	it, _ := NewItemMachine(&shareProgram{}, Config{ID: 0, Degree: 2}, []uint64{7, 8, 9})
	if _, ok := any(it).(interface{ SetLoad(int64) error }); ok {
		t.Error("an ItemMachine has SetLoad")
	}
	if _, err := it.CompleteItems(-1); err == nil {
		t.Error("CompleteItems(-1) succeeded")
	}
	if err := it.Start(); err != nil {
		t.Fatal(err)
	}
	if err := it.Step(Datagram{Port: 1, Kind: DatagramData, Seq: 1, Msg: node.Message{Kind: 1, Round: 1, Tokens: 2}, Items: []uint64{5}}); err == nil {
		t.Error("a datagram with 2 tokens and 1 item was accepted")
	}
	rd := mustReady(it)
	st := slices.Clone(rd.State)
	it.Advance()
	ps, err := DecodeState(st)
	if err != nil || !ps.ItemMode || ps.Load != int64(len(ps.Items)) || len(ps.Links) != 2 {
		t.Fatalf("DecodeState = %+v, %v", ps, err)
	}
	if _, err := RestoreCountMachine(&shareProgram{}, Config{ID: 0, Degree: 2}, st); err == nil ||
		!strings.Contains(err.Error(), "of an ItemMachine restored as a CountMachine") {
		t.Errorf("restoring an ItemMachine's state as a CountMachine: %v", err)
	}
	_ = cnt.Start()
	cst := slices.Clone(mustReady(cnt).State)
	cnt.Advance()
	if _, err := RestoreItemMachine(&shareProgram{}, Config{ID: 0, Degree: 2}, cst); err == nil ||
		!strings.Contains(err.Error(), "of a CountMachine restored as an ItemMachine") {
		t.Errorf("restoring a CountMachine's state as an ItemMachine: %v", err)
	}
	back, err := RestoreItemMachine(&shareProgram{}, Config{ID: 0, Degree: 2}, st)
	if err != nil || !slices.Equal(back.Items(), it.Items()) || back.InFlight() != it.InFlight() {
		t.Fatalf("RestoreItemMachine: %v, items %v vs %v", err, back.Items(), it.Items())
	}
	done, _ := back.CompleteItems(10)
	if int64(len(done)) != ps.Load || back.NodeContext().Load != 0 {
		t.Fatalf("CompleteItems(10) = %v, load %d", done, back.NodeContext().Load)
	}
	for cut := range len(st) {
		if _, err := DecodeState(st[:cut]); err == nil {
			t.Fatalf("DecodeState of %d of %d bytes succeeded", cut, len(st))
		}
	}
}

// FuzzDecodeState: DecodeState never panics, and what it accepts is consistent.
func FuzzDecodeState(f *testing.F) {
	it, _ := NewItemMachine(&shareProgram{}, Config{ID: 0, Degree: 2}, []uint64{7, 8, 9, 1 << 40})
	_ = it.Start()
	f.Add(slices.Clone(mustReady(it).State))
	cnt, _ := NewCountMachine(&shareProgram{}, Config{ID: 0, Degree: 2}, 9)
	_ = cnt.Start()
	f.Add(slices.Clone(mustReady(cnt).State))
	f.Fuzz(func(t *testing.T, b []byte) {
		ps, err := DecodeState(b)
		if err != nil {
			return
		}
		if ps.ItemMode && int64(len(ps.Items)) != ps.Load {
			t.Fatalf("load %d with %d items", ps.Load, len(ps.Items))
		}
	})
}
