// Package testprog holds node programs for the tests of the hosts (handoff, async,
// fleet): small round-based programs whose final loads are the synchronous ones
// whatever the network does, so a host's test can compare with a reference. It is not
// part of the API.
package testprog

import (
	"encoding/binary"
	"errors"

	"github.com/tokendist/tokendist/node"
)

// Share: in round r every node sends ⌊L/(deg+1)⌋ to each neighbour, L being its
// load when round r−1 was complete (tokens of round r+1 that arrive early excluded).
type Share struct {
	deg     int64
	rounds  int64
	r       int64 // rounds begun
	got     int64 // messages of round r received
	early   int64 // messages of round r+1 received
	earlyTk int64 // their tokens
}

// Shares makes a Share program for every node (node.Programs).
type Shares struct{}

// Program returns a fresh Share.
func (Shares) Program(int) (node.Program, error) { return &Share{}, nil }

// Start begins round 1 (a node without links has nothing to do).
func (p *Share) Start(c *node.Context) error {
	p.deg, p.rounds = int64(c.Degree), c.Rounds
	if p.deg == 0 {
		return nil
	}
	return p.begin(c)
}

// advance begins rounds while the current one is complete.
func (p *Share) advance(c *node.Context) error {
	for p.got == p.deg {
		if p.rounds > 0 && p.r >= p.rounds {
			return nil
		}
		if err := p.begin(c); err != nil {
			return err
		}
	}
	return nil
}

func (p *Share) begin(c *node.Context) error {
	{
		share := max(0, c.Load-p.earlyTk) / int64(c.Degree+1)
		p.r++
		p.got, p.early, p.earlyTk = p.early, 0, 0
		for port := range c.Degree {
			if err := c.Send(port, node.Message{Kind: 1, Round: p.r, Tokens: share, Counted: true}); err != nil {
				return err
			}
		}
	}
	return nil
}

// Receive counts a message of the current or the next round and adds its tokens.
func (p *Share) Receive(c *node.Context, port int, m node.Message) error {
	switch m.Round {
	case p.r:
		p.got++
	case p.r + 1:
		p.early++
		p.earlyTk += m.Tokens
	default:
		return errors.New("tokendist: share: message of an unexpected round")
	}
	return p.advance(c)
}

// Tick does nothing: Share waits for its neighbours.
func (p *Share) Tick(*node.Context) error { return nil }

// Idle reports whether the last round asked for is complete.
func (p *Share) Idle() bool {
	return p.deg == 0 || (p.rounds > 0 && p.r >= p.rounds && p.got == p.deg)
}

// AppendState appends the program state (six varints).
func (p *Share) AppendState(b []byte) []byte {
	for _, x := range [...]int64{p.deg, p.rounds, p.r, p.got, p.early, p.earlyTk} {
		b = binary.AppendVarint(b, x)
	}
	return b
}

// RestoreState restores what AppendState wrote.
func (p *Share) RestoreState(b []byte) error {
	var xs [6]int64
	for i := range xs {
		v, k := binary.Varint(b)
		if k <= 0 {
			return errors.New("tokendist: share: bad state")
		}
		xs[i], b = v, b[k:]
	}
	if len(b) != 0 {
		return errors.New("tokendist: share: trailing state")
	}
	p.deg, p.rounds, p.r, p.got, p.early, p.earlyTk = xs[0], xs[1], xs[2], xs[3], xs[4], xs[5]
	return nil
}
