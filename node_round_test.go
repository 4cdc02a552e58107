package tokendist

import (
	"fmt"
	"slices"
	"testing"

	"github.com/tokendist/tokendist/node"
)

// handPair drives the node programs of a two-node path by hand: node 0's port 0 and
// node 1's port 0 are the one link. The tests choose every clock, delivery and load.
type handPair struct {
	t *testing.T
	p [2]node.Program
	c [2]node.Context
}

func newHandPair(t *testing.T, progs node.Programs, loads [2]int64, seed uint64) *handPair {
	t.Helper()
	h := &handPair{t: t}
	for v := range 2 {
		h.p[v] = must(progs.Program(v))
		h.c[v] = node.Context{ID: v, Degree: 1, Load: loads[v], Seed: seed}
	}
	return h
}

// start calls Start on node v and returns its outbox (then emptied).
func (h *handPair) start(v int) []node.Message {
	h.t.Helper()
	if err := h.p[v].Start(&h.c[v]); err != nil {
		h.t.Fatalf("node %d: Start: %v", v, err)
	}
	return h.take(v)
}

// tick sets node v's clock to now, ticks it and returns its outbox.
func (h *handPair) tick(v int, now int64) []node.Message {
	h.t.Helper()
	h.c[v].Now = now
	if err := h.p[v].Tick(&h.c[v]); err != nil {
		h.t.Fatalf("node %d: Tick at %d: %v", v, now, err)
	}
	return h.take(v)
}

// receive delivers ms to node v (their tokens first join its load, as a host adds
// them) and returns its outbox.
func (h *handPair) receive(v int, ms ...node.Message) []node.Message {
	h.t.Helper()
	for _, m := range ms {
		h.c[v].Load += m.Tokens
		if err := h.p[v].Receive(&h.c[v], 0, m); err != nil {
			h.t.Fatalf("node %d: Receive(%+v): %v", v, m, err)
		}
	}
	return h.take(v)
}

func (h *handPair) take(v int) []node.Message {
	var ms []node.Message
	for _, e := range h.c[v].Outbox() {
		if e.Port != 0 {
			h.t.Fatalf("node %d sent on port %d", v, e.Port)
		}
		ms = append(ms, e.Msg)
	}
	h.c[v].Reset()
	return ms
}

// requireMsgs fails unless got is want.
func requireMsgs(t *testing.T, what string, got, want []node.Message) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Fatalf("%s: sent %+v, want %+v", what, got, want)
	}
}

// halfDX returns the dimension-exchange programs on Path(2) whose protocol moves
// half the difference (rounded down) from the heavier end, every round.
func halfDX(t *testing.T, patience int64) node.Programs {
	t.Helper()
	g := must(Path(2))
	d := must(NewDimensionExchange(g, nil, ProtocolFunc(func(_ int64, _, _ int, lu, lv int64) int64 { return (lu - lv) / 2 })))
	return must(d.NodePrograms(g, &node.Options{Patience: patience}))
}

func dxLoad(r, load int64) node.Message {
	return node.Message{Kind: dxKindLoad, Round: r, Value: load, Counted: true}
}

func dxTokens(r, tokens int64) node.Message {
	return node.Message{Kind: dxKindTokens, Round: r, Tokens: tokens}
}

// TestRoundPatienceWindows: with Patience P, round r owns the local ticks
// [r·P, (r+1)·P): a node whose partner is silent gives round r up at tick (r+1)·P
// exactly (not one tick before) and begins round r+1 there; a node that finished
// its round early waits and begins the next round at the first tick of its window
// (not before).
func TestRoundPatienceWindows(t *testing.T) {
	const P = 4
	h := newHandPair(t, halfDX(t, P), [2]int64{6, 6}, 1)
	requireMsgs(t, "node 0 starts", h.start(0), []node.Message{dxLoad(0, 6)})
	requireMsgs(t, "node 1 starts", h.start(1), []node.Message{dxLoad(0, 6)})
	// Node 0 never hears from node 1: it gives rounds up at the ends of their windows.
	for now := int64(1); now <= 3*P; now++ {
		var want []node.Message
		if now%P == 0 {
			want = []node.Message{dxLoad(now/P, 6)}
		}
		requireMsgs(t, fmt.Sprintf("silent partner, node 0 at tick %d", now), h.tick(0, now), want)
		if h.p[0].Idle() {
			t.Fatalf("node 0 idle at tick %d with a positive patience", now)
		}
	}
	// Node 1 gets node 0's round-0 load: equal loads, nothing moves, round 0 is over
	// at once and node 1 waits for round 1's window.
	requireMsgs(t, "node 1 completes round 0", h.receive(1, dxLoad(0, 6)), nil)
	for now := int64(0); now < P; now++ {
		requireMsgs(t, fmt.Sprintf("node 1 waiting, tick %d", now), h.tick(1, now), nil)
	}
	requireMsgs(t, "node 1 begins round 1", h.tick(1, P), []node.Message{dxLoad(1, 6)})
	// A restart after its window has passed skips the round without a message: node 1
	// restored at tick 3P (rounds 1 and 2 passed) begins round 3 at once.
	st := h.p[1].AppendState(nil)
	h.p[1] = must(halfDX(t, P).Program(1))
	if err := h.p[1].RestoreState(st); err != nil {
		t.Fatal(err)
	}
	requireMsgs(t, "node 1 after a pause", h.tick(1, 3*P), []node.Message{dxLoad(3, 6)})
	// The last tick of a window still belongs to its round: node 0 (10 tokens), ticked
	// through 1..P−1, then hearing node 1's round-0 load 6, sends (10 − 6)/2 = 2.
	h = newHandPair(t, halfDX(t, P), [2]int64{10, 6}, 1)
	h.start(0)
	for now := int64(1); now < P; now++ {
		requireMsgs(t, fmt.Sprintf("node 0 at tick %d", now), h.tick(0, now), nil)
	}
	requireMsgs(t, "node 0 at the window's last tick", h.receive(0, dxLoad(0, 6)), []node.Message{dxTokens(0, 2)})
}

// TestRoundWaitingNodeKeepsItsRoundsMessage: a paced node that waits for its next
// round's window keeps a message of that round that arrives early (its partner's clock
// is ahead) and uses it when the window begins; one of a later round waits too.
func TestRoundWaitingNodeKeepsItsRoundsMessage(t *testing.T) {
	const P = 4
	h := newHandPair(t, halfDX(t, P), [2]int64{6, 6}, 1)
	l0, l1 := h.start(0), h.start(1)
	requireMsgs(t, "node 0 round 0", h.receive(0, l1...), nil)
	requireMsgs(t, "node 1 round 0", h.receive(1, l0...), nil)
	// Both wait for round 1. A workload gives node 1 four tokens; node 0's clock is
	// ahead and begins round 1 while node 1's clock is at 3.
	h.c[1].Load += 4
	m0 := h.tick(0, P)
	requireMsgs(t, "node 0 begins round 1", m0, []node.Message{dxLoad(1, 6)})
	requireMsgs(t, "node 1 waiting, gets node 0's round-1 load", h.receive(1, m0...), nil)
	requireMsgs(t, "node 1 still waiting at tick 3", h.tick(1, P-1), nil)
	// At its window node 1 reports 10 and, holding node 0's 6, sends (6 − 10)/2 → 2.
	m1 := h.tick(1, P)
	requireMsgs(t, "node 1 begins round 1 with node 0's load", m1, []node.Message{dxLoad(1, 10), dxTokens(1, 2)})
	requireMsgs(t, "node 0 settles round 1", h.receive(0, m1...), nil)
	if h.c[0].Load != 8 || h.c[1].Load != 8 {
		t.Fatalf("loads %d, %d after round 1; want 8, 8", h.c[0].Load, h.c[1].Load)
	}
	// A message two rounds ahead waits through round 2 and is used in round 3.
	requireMsgs(t, "node 1 gets a round-3 load", h.receive(1, dxLoad(3, 2)), nil)
	requireMsgs(t, "node 1 round 2", h.tick(1, 2*P), []node.Message{dxLoad(2, 8)})
	requireMsgs(t, "node 1 gives round 2 up, round 3", h.tick(1, 3*P), []node.Message{dxLoad(3, 8), dxTokens(3, 3)})
}

// TestRoundBufferOverflowTokens: with a positive patience a node keeps at most
// 2·deg + 2 messages of later rounds and drops the oldest beyond that; the dropped
// message's tokens then count as the node's own at once (the others only in their
// round), so the load it reports is exact. Saving and restoring keeps the count.
func TestRoundBufferOverflowTokens(t *testing.T) {
	const P = 4
	for _, restore := range []bool{false, true} {
		h := newHandPair(t, halfDX(t, P), [2]int64{10, 0}, 1)
		requireMsgs(t, "node 0 starts", h.start(0), []node.Message{dxLoad(0, 10)})
		// Five messages of round 5 with 1..5 tokens: the first is dropped (deg 1: 4 kept).
		for k := int64(1); k <= 5; k++ {
			requireMsgs(t, "node 0 buffers", h.receive(0, dxTokens(5, k)), nil)
		}
		if h.c[0].Load != 25 {
			t.Fatalf("load %d, want 25", h.c[0].Load)
		}
		if restore {
			st := h.p[0].AppendState(nil)
			h.p[0] = must(halfDX(t, P).Program(0))
			if err := h.p[0].RestoreState(st); err != nil {
				t.Fatal(err)
			}
		}
		// Round 1 begins with the own load 25 − (2+3+4+5) = 11.
		requireMsgs(t, fmt.Sprintf("restore %v: node 0 round 1", restore), h.tick(0, P), []node.Message{dxLoad(1, 11)})
		requireMsgs(t, fmt.Sprintf("restore %v: node 0 round 2", restore), h.tick(0, 2*P), []node.Message{dxLoad(2, 11)})
	}
}

// TestRandomMatchingGiftClamped: an inactive random-matching node that accepts a
// proposal gives at most what it holds: when a workload took tokens after the round
// began, its Accept carries its whole own load instead of the computed half, and
// nothing fails.
func TestRandomMatchingGiftClamped(t *testing.T) {
	g := must(Path(2))
	b := must(NewRandomMatching(g))
	progs := must(b.NodePrograms(g, nil))
	// A seed whose round 0 has node 0 proposing to node 1 and node 1 inactive.
	seed := uint64(0)
	for ; seed < 1000; seed++ {
		s0, s1 := newNodeStream(seed, 0, 0), newNodeStream(seed, 0, 1)
		a0, _, _ := rmNodeChoice(&s0, 1)
		a1, _, _ := rmNodeChoice(&s1, 1)
		if a0 == 1 && a1 == 0 {
			break
		}
	}
	if seed == 1000 {
		t.Fatal("no seed with node 0 active and node 1 inactive in round 0")
	}
	for _, tc := range []struct{ left, gift int64 }{{2, 2}, {0, 0}, {5, 5}, {9, 5}} {
		h := newHandPair(t, progs, [2]int64{0, 10}, seed)
		h.c[0].Rounds, h.c[1].Rounds = 1, 1
		prop := h.start(0)
		if len(prop) != 1 || prop[0].Kind != rmKindProp0 && prop[0].Kind != rmKindProp1 || prop[0].Value != 0 {
			t.Fatalf("seed %d: node 0 sent %+v, want one proposal with load 0", seed, prop)
		}
		requireMsgs(t, "node 1 starts", h.start(1), []node.Message{{Kind: rmKindNone}})
		h.c[1].Load = tc.left // the workload took tokens
		got := h.receive(1, prop...)
		want := []node.Message{{Kind: rmKindAccept, Tokens: tc.gift, Counted: true}}
		requireMsgs(t, fmt.Sprintf("node 1 with %d left accepts", tc.left), got, want)
		if h.c[1].Load != tc.left-tc.gift {
			t.Fatalf("node 1 keeps %d, want %d", h.c[1].Load, tc.left-tc.gift)
		}
	}
}

// TestRoundWaitingKeepsEarlierBuffered: a message of round r+1 that arrived while the
// node was still in round r (from another neighbour, whose clock is ahead) is kept
// when round r ends early and the node waits for round r+1's window, and is used when
// that window begins. On Path(3) with two colours the middle node exchanges with one
// end in even rounds and with the other in odd rounds.
func TestRoundWaitingKeepsEarlierBuffered(t *testing.T) {
	const P = 4
	g := must(Path(3))
	d := must(NewDimensionExchange(g, nil, ProtocolFunc(func(_ int64, _, _ int, lu, lv int64) int64 { return (lu - lv) / 2 })))
	progs := must(d.NodePrograms(g, &node.Options{Patience: P}))
	// even: the middle node's port of colour 0 (its round-0 partner); odd: the other.
	even := 0
	if d.ec.color[g.off[1]] != 0 {
		even = 1
	}
	odd := 1 - even
	oddEnd := int(g.Neighbors(1)[odd])
	var p [3]node.Program
	var c [3]node.Context
	for v := range 3 {
		p[v] = must(progs.Program(v))
		c[v] = node.Context{ID: v, Degree: g.Degree(v), Load: 6, Seed: 1}
	}
	c[1].Load = 14
	step := func(v int, err error, want ...node.Envelope) {
		t.Helper()
		if err != nil {
			t.Fatalf("node %d: %v", v, err)
		}
		if got := c[v].Outbox(); !slices.Equal(got, want) {
			t.Fatalf("node %d (clock %d) sent %+v, want %+v", v, c[v].Now, got, want)
		}
		c[v].Reset()
	}
	step(1, p[1].Start(&c[1]), node.Envelope{Port: even, Msg: dxLoad(0, 14)})
	step(oddEnd, p[oddEnd].Start(&c[oddEnd])) // it waits for round 1
	// The odd end's clock is ahead: at tick P it begins round 1, and its load reaches
	// the middle node, still in round 0 (clock 0), which keeps it for later.
	c[oddEnd].Now = P
	step(oddEnd, p[oddEnd].Tick(&c[oddEnd]), node.Envelope{Port: 0, Msg: dxLoad(1, 6)})
	step(1, p[1].Receive(&c[1], odd, dxLoad(1, 6)))
	// The even end's round-0 load: the middle node sends (14 − 6)/2 = 4, its round 0 is
	// over, and it waits for round 1's window.
	step(1, p[1].Receive(&c[1], even, dxLoad(0, 6)), node.Envelope{Port: even, Msg: dxTokens(0, 4)})
	c[1].Now = P - 1
	step(1, p[1].Tick(&c[1]))
	// At tick P it begins round 1 with the odd end's load at hand: it reports 10 and
	// sends (10 − 6)/2 = 2 at once.
	c[1].Now = P
	step(1, p[1].Tick(&c[1]), node.Envelope{Port: odd, Msg: dxLoad(1, 10)}, node.Envelope{Port: odd, Msg: dxTokens(1, 2)})
}

// TestRoundZeroPatienceTick: with zero patience a tick does nothing (hosts do not tick
// an idle program, but a tick must not fail or send either), at any clock.
func TestRoundZeroPatienceTick(t *testing.T) {
	h := newHandPair(t, halfDX(t, 0), [2]int64{10, 6}, 1)
	requireMsgs(t, "node 0 starts", h.start(0), []node.Message{dxLoad(0, 10)})
	if !h.p[0].Idle() {
		t.Fatal("a zero-patience program waiting for a message is not idle")
	}
	for _, now := range []int64{0, 1, 5, 1 << 40} {
		requireMsgs(t, fmt.Sprintf("tick at %d", now), h.tick(0, now), nil)
	}
	// Its round is still open: node 1's load is used, and round 1 begins at once.
	requireMsgs(t, "node 0 hears node 1", h.receive(0, dxLoad(0, 6)), []node.Message{dxTokens(0, 2), dxLoad(1, 8)})
}
