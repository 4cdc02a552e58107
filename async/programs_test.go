package async

import (
	"encoding/binary"
	"errors"

	"github.com/tokendist/tokendist/node"

	"github.com/tokendist/tokendist"
	"github.com/tokendist/tokendist/internal/testprog"
)

// The test programs: share (a round-based diffusion) and pair (a dimension exchange on
// the alternating matchings of an even ring). Both wait for their neighbours, so their
// final loads are the synchronous ones whatever the network does.

// shareProgram: in round r every node sends ⌊L/(deg+1)⌋ to each neighbour
// (internal/testprog.Share, shared with the other hosts' tests).
type shareProgram = testprog.Share

// sharePrograms makes shareProgram for every node.
type sharePrograms = testprog.Shares

// pairProgram: on an even ring, round r pairs the nodes along matching (r−1) mod 2
// ((2i, 2i+1), then (2i+1, 2i+2)); the partners exchange load reports and the one with
// more load (ties: the lower ID) sends the other its excess over ⌈total/2⌉.
type pairProgram struct {
	n, id, rounds int64
	r             int64 // current round (1..rounds)
	phase         int64 // 0: waiting for the report, 1: waiting for the transfer, 2: finished
	mine          int64 // the load this node reported in round r
	early         [2]int64
	earlyOK       [2]int64
}

type pairPrograms struct{ n int }

func (pp pairPrograms) Program(v int) (node.Program, error) {
	return &pairProgram{n: int64(pp.n), id: int64(v)}, nil
}

func pairPartner(v, n, r int64) int64 {
	if (r-1)%2 == 0 {
		return v ^ 1
	}
	if v%2 == 1 {
		return (v + 1) % n
	}
	return (v - 1 + n) % n
}

// ringPort is w's port at v on the ring of n nodes (neighbours ascending).
func ringPort(v, w, n int64) int {
	a, b := (v-1+n)%n, (v+1)%n
	if a > b {
		a, b = b, a
	}
	if w == a {
		return 0
	}
	return 1
}

func (p *pairProgram) Start(c *node.Context) error {
	p.rounds = c.Rounds
	if p.rounds == 0 {
		p.phase = 2
		return nil
	}
	return p.begin(c, 1)
}

func (p *pairProgram) begin(c *node.Context, r int64) error {
	p.r, p.phase, p.mine = r, 0, c.Load
	w := pairPartner(p.id, p.n, r)
	port := ringPort(p.id, w, p.n)
	if err := c.Send(port, node.Message{Kind: 1, Round: r, Value: c.Load, Counted: true}); err != nil {
		return err
	}
	if p.earlyOK[port] == r {
		p.earlyOK[port] = 0
		return p.report(c, p.early[port])
	}
	return nil
}

func (p *pairProgram) report(c *node.Context, theirs int64) error {
	w := pairPartner(p.id, p.n, p.r)
	if p.mine > theirs || (p.mine == theirs && p.id < w) {
		x := min(p.mine-(p.mine+theirs+1)/2, c.Load)
		if err := c.Send(ringPort(p.id, w, p.n), node.Message{Kind: 2, Round: p.r, Tokens: x, Counted: true}); err != nil {
			return err
		}
		return p.finish(c)
	}
	p.phase = 1
	return nil
}

func (p *pairProgram) finish(c *node.Context) error {
	p.phase = 2
	if p.r < p.rounds {
		return p.begin(c, p.r+1)
	}
	return nil
}

func (p *pairProgram) Receive(c *node.Context, port int, m node.Message) error {
	switch {
	case m.Kind == 1 && m.Round == p.r && p.phase == 0:
		return p.report(c, m.Value)
	case m.Kind == 1 && m.Round == p.r+1:
		p.early[port], p.earlyOK[port] = m.Value, m.Round
		return nil
	case m.Kind == 2 && m.Round == p.r && p.phase == 1:
		return p.finish(c)
	}
	return errors.New("tokendist: pair: unexpected message")
}

func (p *pairProgram) Tick(*node.Context) error { return nil }

func (p *pairProgram) Idle() bool { return p.phase == 2 }

func (p *pairProgram) AppendState(b []byte) []byte {
	for _, x := range [...]int64{p.n, p.id, p.rounds, p.r, p.phase, p.mine, p.early[0], p.early[1], p.earlyOK[0], p.earlyOK[1]} {
		b = binary.AppendVarint(b, x)
	}
	return b
}

func (p *pairProgram) RestoreState(b []byte) error {
	var xs [10]int64
	for i := range xs {
		v, k := binary.Varint(b)
		if k <= 0 {
			return errors.New("tokendist: pair: bad state")
		}
		xs[i], b = v, b[k:]
	}
	if len(b) != 0 {
		return errors.New("tokendist: pair: trailing state")
	}
	p.n, p.id, p.rounds, p.r, p.phase, p.mine = xs[0], xs[1], xs[2], xs[3], xs[4], xs[5]
	p.early, p.earlyOK = [2]int64{xs[6], xs[7]}, [2]int64{xs[8], xs[9]}
	return nil
}

// syncShare is the synchronous reference of shareProgram: R rounds, loads, Moved and
// Messages.
func syncShare(g *tokendist.Graph, loads tokendist.Loads, rounds int) (tokendist.Loads, int64, int64) {
	l := loads.Clone()
	var moved, msgs int64
	share := make([]int64, len(l))
	for range rounds {
		for v := range l {
			d := int64(len(g.Neighbors(v)))
			if d > 0 {
				share[v] = l[v] / (d + 1)
			}
		}
		for v := range l {
			d := int64(len(g.Neighbors(v)))
			l[v] -= d * share[v]
			moved += d * share[v]
			msgs += d
			for _, w := range g.Neighbors(v) {
				l[v] += share[w]
			}
		}
	}
	return l, moved, msgs
}

// syncPair is the synchronous reference of pairProgram on the ring of len(loads) nodes.
func syncPair(loads tokendist.Loads, rounds int) (tokendist.Loads, int64, int64) {
	l := loads.Clone()
	n := int64(len(l))
	var moved, msgs int64
	for r := int64(1); r <= int64(rounds); r++ {
		for a := int64(0); a < n; a++ {
			b := pairPartner(a, n, r)
			if b < a {
				continue
			}
			s, t := a, b
			if l[b] > l[a] {
				s, t = b, a
			}
			x := l[s] - (l[a]+l[b]+1)/2
			l[s] -= x
			l[t] += x
			moved += x
			msgs += 3
		}
	}
	return l, moved, msgs
}
