package async

import (
	"context"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tokendist/tokendist"
	"github.com/tokendist/tokendist/faults"
	"github.com/tokendist/tokendist/handoff"
	"github.com/tokendist/tokendist/node"
)

// silent is a program that never sends: the network's tests send by hand.
type silent struct{}

func (silent) Start(*node.Context) error                      { return nil }
func (silent) Receive(*node.Context, int, node.Message) error { return nil }
func (silent) Tick(*node.Context) error                       { return nil }
func (silent) Idle() bool                                     { return true }
func (silent) AppendState(b []byte) []byte                    { return b }
func (silent) RestoreState([]byte) error                      { return nil }

type silents struct{}

func (silents) Program(int) (node.Program, error) { return silent{}, nil }

// requireRate checks that k successes in n trials fit probability p: within five
// standard errors of the binomial (and exactly 0 or n when p is 0 or 1).
func requireRate(t *testing.T, what string, k, n int64, p float64) {
	t.Helper()
	require.Positive(t, n, what)
	se := math.Sqrt(p * (1 - p) / float64(n))
	require.InDelta(t, p, float64(k)/float64(n), 5*se, "%s: %d of %d, want rate %v", what, k, n, p)
}

// TestNetworkModelRates: the simulated network does what faults.Model says, at the
// stated rates. 10,000 data datagrams leave node 0 of a path of two nodes at time 0,
// delay 1: a datagram is sent twice with probability Duplicate (the copies counted in
// Result.Datagrams), each copy is lost with probability Loss (Result.Lost), and a copy
// that arrives is held back with probability Reorder by an extra delay uniform on
// [0, ReorderDelay] (the others arrive at time 1, in order); every copy not lost
// arrives once, at node 1.
func TestNetworkModelRates(t *testing.T) {
	const n = 10000
	for _, m := range []faults.Model{
		{Loss: 0.1},
		{Duplicate: 0.2},
		{Reorder: 0.3, ReorderDelay: 8},
		{Reorder: 0.1}, // ReorderDelay 0 means 4
		{Loss: 0.05, Duplicate: 0.1, Reorder: 0.2, ReorderDelay: 2},
		{Loss: 0.5, Duplicate: 0.5}, // the second copy of a duplicate is sent even when the first is lost
		{},
	} {
		g, err := tokendist.Path(2)
		require.NoError(t, err)
		s := &sim{ctx: context.Background(), progs: silents{}}
		s.opts = Options{Seed: 7, Faults: m}
		require.NoError(t, s.init(g, tokendist.Loads{0, 0}, plain))
		s.q.h = s.q.h[:0] // the start's ticks: only the sends below are of interest
		base := s.res
		ds := make([]handoff.Datagram, n)
		for i := range ds {
			ds[i] = handoff.Datagram{Port: 0, Kind: handoff.DatagramData, Seq: uint64(i + 1)}
		}
		s.sendAll(0, ds, 0)
		copies, lost := s.res.Datagrams-base.Datagrams, s.res.Lost-base.Lost
		var arrived, late int64
		var extra, maxExtra float64
		for s.q.len() > 0 {
			e := s.q.pop()
			require.Equal(t, classArrival, e.class())
			require.Equal(t, 1, e.node())
			require.False(t, e.ack())
			arrived++
			require.GreaterOrEqual(t, e.t, 1.0)
			if e.t > 1 {
				late++
				extra += e.t - 1
				maxExtra = max(maxExtra, e.t-1)
			}
		}
		rd := m.ReorderDelay
		if rd == 0 {
			rd = 4
		}
		requireRate(t, "duplicated", copies-n, n, m.Duplicate)
		requireRate(t, "lost", lost, copies, m.Loss)
		require.Equal(t, copies-lost, arrived, "every copy not lost arrives once")
		requireRate(t, "held back", late, arrived, m.Reorder)
		require.LessOrEqual(t, maxExtra, rd)
		if late > 0 { // uniform on [0, rd]: mean rd/2, standard deviation rd/√12
			require.InDelta(t, rd/2, extra/float64(late), 5*rd/math.Sqrt(12*float64(late)), "mean extra delay")
		}
	}
}
