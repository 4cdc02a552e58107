package async

import (
	"context"

	"github.com/tokendist/tokendist/node"

	"github.com/tokendist/tokendist"
	"github.com/tokendist/tokendist/handoff"
)

// The deliberately broken handoffs that TestBrokenHandoffCaught shows the simulator's
// checks catch. They wrap a correct machine in test code (as etcd's rafttest injects
// faults around raft); the production simulator and machine carry no trace of them.

// broken selects a broken handoff.
type broken uint8

const (
	// brokenNoDedup delivers a data datagram again when it arrives again (its tokens
	// join the load a second time).
	brokenNoDedup broken = iota + 1
	// brokenAckBeforePersist: the host sends a Ready's acks before it persists.
	brokenAckBeforePersist
	// brokenSendBeforePersist: the host sends a Ready's datagrams before it persists.
	brokenSendBeforePersist
)

// simulateBroken is Simulate with the broken handoff b on every node.
func simulateBroken(net tokendist.Network, progs node.Programs, loads tokendist.Loads, opts *Options, b broken) (Result, error) {
	return simulate(context.Background(), net, progs, loads, opts, func(s *sim, v int, m *handoff.CountMachine) nodeMachine {
		return &brokenNode{counter: counter{m}, s: s, v: v, b: b}
	})
}

// brokenNode is node v of s with the broken handoff b.
type brokenNode struct {
	counter
	s *sim
	v int
	b broken
}

func (n *brokenNode) restore(s *sim, v int, prog node.Program, state []byte) (nodeMachine, error) {
	c, err := n.counter.restore(s, v, prog, state)
	if err != nil {
		return nil, err
	}
	return &brokenNode{counter: c.(counter), s: s, v: v, b: n.b}, nil
}

// Step delivers a duplicate again with brokenNoDedup.
func (n *brokenNode) Step(d handoff.Datagram) error {
	if n.b == brokenNoDedup && d.Kind == handoff.DatagramData && d.Port >= 0 && d.Port < n.NodeContext().Degree &&
		d.Seq <= n.Sequence(d.Port).Delivered && d.Msg.Tokens > 0 {
		if err := n.SetLoad(n.NodeContext().Load + d.Msg.Tokens); err != nil {
			return err
		}
	}
	return n.counter.Step(d)
}

// Ready sends the acks (brokenAckBeforePersist) or every datagram
// (brokenSendBeforePersist) at once, before the simulator persists the State (and
// before its crash point faults.CrashBeforePersist), and leaves the rest to the simulator.
func (n *brokenNode) Ready() (handoff.Ready, error) {
	rd, err := n.counter.Ready()
	if err != nil {
		return rd, err
	}
	switch n.b {
	case brokenSendBeforePersist:
		n.s.sendAll(n.v, rd.Datagrams, handoff.DatagramData)
		n.s.sendAll(n.v, rd.Datagrams, handoff.DatagramAck)
		rd.Datagrams = nil
	case brokenAckBeforePersist:
		n.s.sendAll(n.v, rd.Datagrams, handoff.DatagramAck)
		var data []handoff.Datagram
		for _, d := range rd.Datagrams {
			if d.Kind == handoff.DatagramData {
				data = append(data, d)
			}
		}
		rd.Datagrams = data
	}
	return rd, nil
}
