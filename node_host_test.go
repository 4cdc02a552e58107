package tokendist

import (
	"fmt"
	"math/rand/v2"
	"sort"

	"github.com/tokendist/tokendist/node"
)

// syncHost is a test-only host of node programs. It implements EXACTLY this synchronous
// schedule (the event simulator of package async implements the same one):
//
// Time advances in unit steps; at time 0 every node gets Start, in increasing node
// order, with node.Context{ID, Degree, Load, Rounds: R, Seed}; a message sent at time t
// is delivered at time t+1; at each time t ≥ 1, nodes are visited in increasing order;
// for each node its messages arriving at t are delivered in order of (port ascending,
// then send order on that port), each with Receive after its Tokens were added to Load;
// then, if the program is not Idle, Now is set to t and Tick is called. The run ends
// when every program is idle and no message is in flight (bound the loop).
//
// Variants: restore saves and restores a program's state (AppendState → a fresh
// Program(v) → RestoreState) after its turn at random times, which must change
// nothing; delay gives a message a longer transit time (links stay FIFO: a message is
// never delivered before an earlier one of its link), which only Patience > 0 programs
// survive without waiting for ever.
type syncHost struct {
	g     *Graph
	progs node.Programs
	p     []node.Program
	c     []node.Context
	back  []int // edge end e = (v → w) → v's port at w

	restore *rand.Rand                                   // save/restore at random, or nil
	delay   func(t int64, from, to int, seq int64) int64 // extra transit time (≥ 0), or nil

	now      int64
	seq      int64
	pending  []hostMsg // messages in flight
	lastDue  []int64   // per edge end: the latest due time of a message on it
	inFlight int64     // tokens in flight
	restores int
}

type hostMsg struct {
	to, port int
	due, seq int64
	m        node.Message
}

func newSyncHost(g *Graph, progs node.Programs) *syncHost {
	h := &syncHost{g: g, progs: progs, back: make([]int, len(g.adj)), lastDue: make([]int64, len(g.adj))}
	for v := 0; v < g.Order(); v++ {
		for e := g.off[v]; e < g.off[v+1]; e++ {
			w := int(g.adj[e])
			h.back[e] = g.EdgeIndex(w, v) - g.off[w]
		}
	}
	return h
}

// collect moves node v's outbox into flight, sent at h.now.
func (h *syncHost) collect(v int) {
	c := &h.c[v]
	for _, env := range c.Outbox() {
		e := h.g.off[v] + env.Port
		w := int(h.g.adj[e])
		due := h.now + 1
		if h.delay != nil {
			due += h.delay(h.now, v, w, h.seq)
		}
		due = max(due, h.lastDue[e])
		h.lastDue[e] = due
		h.pending = append(h.pending, hostMsg{to: w, port: h.back[e], due: due, seq: h.seq, m: env.Msg})
		h.seq++
		h.inFlight += env.Msg.Tokens
	}
	c.Reset()
}

// run starts the programs with loads and runs the schedule until it ends or maxTime.
func (h *syncHost) run(loads Loads, rounds int64, seed uint64, maxTime int64) error {
	n := h.g.Order()
	h.p, h.c = make([]node.Program, n), make([]node.Context, n)
	h.now, h.seq, h.pending, h.inFlight = 0, 0, nil, 0
	clear(h.lastDue)
	for v := 0; v < n; v++ {
		p, err := h.progs.Program(v)
		if err != nil {
			return err
		}
		h.p[v] = p
		h.c[v] = node.Context{ID: v, Degree: h.g.Degree(v), Load: loads[v], Rounds: rounds, Seed: seed}
	}
	for v := 0; v < n; v++ {
		if err := h.p[v].Start(&h.c[v]); err != nil {
			return err
		}
		h.collect(v)
	}
	for h.now = 1; h.now <= maxTime; h.now++ {
		if len(h.pending) == 0 && h.allIdle() {
			return nil
		}
		// This time's deliveries, by (receiver, port, send order).
		var due []hostMsg
		rest := h.pending[:0]
		for _, m := range h.pending {
			if m.due == h.now {
				due = append(due, m)
			} else {
				rest = append(rest, m)
			}
		}
		h.pending = rest
		sort.Slice(due, func(i, j int) bool {
			a, b := due[i], due[j]
			if a.to != b.to {
				return a.to < b.to
			}
			if a.port != b.port {
				return a.port < b.port
			}
			return a.seq < b.seq
		})
		k := 0
		for v := 0; v < n; v++ {
			c := &h.c[v]
			for ; k < len(due) && due[k].to == v; k++ {
				c.Load += due[k].m.Tokens
				h.inFlight -= due[k].m.Tokens
				if err := h.p[v].Receive(c, due[k].port, due[k].m); err != nil {
					return err
				}
				h.collect(v)
			}
			if !h.p[v].Idle() {
				c.Now = h.now
				if err := h.p[v].Tick(c); err != nil {
					return err
				}
				h.collect(v)
			}
			if h.restore != nil && h.restore.IntN(4) == 0 {
				if err := h.saveRestore(v); err != nil {
					return err
				}
			}
		}
	}
	if len(h.pending) == 0 && h.allIdle() {
		return nil
	}
	return fmt.Errorf("sync host: not finished at time %d (%d messages in flight)", maxTime, len(h.pending))
}

// saveRestore replaces node v's program by a fresh one with its saved state.
func (h *syncHost) saveRestore(v int) error {
	st := h.p[v].AppendState(nil)
	p, err := h.progs.Program(v)
	if err != nil {
		return err
	}
	if err := p.RestoreState(st); err != nil {
		return fmt.Errorf("node %d: restore: %w", v, err)
	}
	if again := p.AppendState(nil); string(again) != string(st) {
		return fmt.Errorf("node %d: the restored program saves %x, the original saved %x", v, again, st)
	}
	h.p[v] = p
	h.restores++
	return nil
}

func (h *syncHost) allIdle() bool {
	for _, p := range h.p {
		if !p.Idle() {
			return false
		}
	}
	return true
}

// loads returns the programs' loads; moved and messages the totals they sent.
func (h *syncHost) loads() Loads {
	l := make(Loads, len(h.c))
	for v := range h.c {
		l[v] = h.c[v].Load
	}
	return l
}

func (h *syncHost) counts() (moved, messages int64) {
	for v := range h.c {
		moved += h.c[v].Moved
		messages += h.c[v].Messages
	}
	return moved, messages
}

// crossings counts the perfect-tree programs that met a phase-1 crossing (they hold a
// subtree message from their own chosen parent's side: see PerfectTree.NodePrograms).
func (h *syncHost) crossings() int {
	n := 0
	for _, p := range h.p {
		if pp, ok := p.(*ptProg); ok && pp.crossed {
			n++
		}
	}
	return n
}
