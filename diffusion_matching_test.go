package tokendist

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRandomMatchingUnderLinkFailures tests Ghosh and Muthukrishnan's claim (JCSS 1996,
// abstract) that balancing over random matchings "works on networks of arbitrary
// topology under possible failure of links": with random churn keeping about half the
// links of RandomRegular(64, 4) down at any time, RandomMatching still balances a point
// mass to discrepancy at most 3 (the run without churn reaches the same), only more
// slowly.
func TestRandomMatchingUnderLinkFailures(t *testing.T) {
	g, _ := RandomRegular(64, 4, 7)
	start, _ := PointMass(64, 64*100, 0)
	steps := map[bool]int64{}
	for _, churn := range []bool{false, true} {
		for seed := uint64(0); seed < 5; seed++ {
			b, _ := NewRandomMatching(g)
			o := &RunOptions{MaxSteps: 20000, Seed: seed, UseTarget: true, TargetDiscrepancy: 3}
			if churn {
				o.Churn, _ = NewRandomLinkChurn(0.3, 0.3)
			}
			res, err := Run(context.Background(), g, start, b, o)
			require.NoError(t, err)
			require.Equal(t, StatusTarget, res.Status, "churn %v seed %d: %v", churn, seed, res)
			steps[churn] += res.Steps
		}
	}
	require.Greater(t, steps[true], steps[false], "churn did not slow balancing: %v", steps)
}

// TestRandomMatchingOneProposer checks the matching rule on fixed proposals: an inactive
// node balances with its proposer only when it has exactly one (with two or more the
// proposals collide and nobody is matched); an active node accepts nothing; a proposal
// over a link that is down does not count. The pair splits its sum, the odd token going
// by the proposer's coin, and counts the tokens moved and one acceptance message.
func TestRandomMatchingOneProposer(t *testing.T) {
	g, err := Star(5) // centre 0, leaves 1..4
	require.NoError(t, err)
	start := Loads{3, 10, 20, 30, 40}
	for _, tc := range []struct {
		name  string
		prop  []int32 // by node, −1: inactive
		coin  []uint8
		down  int // a leaf whose link is down, or 0
		want  Loads
		moved int64
		acks  int64
	}{
		{"no proposer", []int32{-1, -1, -1, -1, -1}, nil, 0, start, 0, 0},
		{"one proposer, coin 1", []int32{-1, 0, -1, -1, -1}, []uint8{0, 1, 0, 0, 0}, 0, Loads{6, 7, 20, 30, 40}, 3, 1},
		{"one proposer, coin 0", []int32{-1, -1, -1, 0, -1}, []uint8{0, 0, 0, 0, 0}, 0, Loads{17, 10, 20, 16, 40}, 14, 1},
		{"one proposer, coin 1, more above", []int32{-1, -1, -1, 0, -1}, []uint8{0, 0, 0, 1, 0}, 0, Loads{16, 10, 20, 17, 40}, 13, 1},
		{"two proposers", []int32{-1, 0, 0, -1, -1}, nil, 0, start, 0, 0},
		{"four proposers", []int32{-1, 0, 0, 0, 0}, nil, 0, start, 0, 0},
		{"active centre", []int32{1, 0, -1, -1, -1}, nil, 0, start, 0, 0},
		{"two proposers, one link down", []int32{-1, 0, 0, -1, -1}, []uint8{0, 0, 0, 0, 0}, 1, Loads{12, 10, 11, 30, 40}, 9, 1},
	} {
		b, err := NewRandomMatching(g)
		require.NoError(t, err)
		s := &State{Net: g, Loads: start.Clone(), Workers: 1}
		if tc.down > 0 {
			s.Live = make([]bool, 2*g.Size())
			for e := range s.Live {
				s.Live[e] = true
			}
			s.Live[g.EdgeIndex(0, tc.down)], s.Live[g.EdgeIndex(tc.down, 0)] = false, false
		}
		require.NoError(t, b.Init(s))
		copy(b.prop, tc.prop)
		if tc.coin != nil {
			copy(b.coin, tc.coin)
		}
		clear(b.msgs)
		b.s = s
		b.matchChunks(0, b.ln.chunks())
		require.Equal(t, tc.want, s.Loads, tc.name)
		require.Equal(t, tc.moved, sumChunks(b.moved), tc.name)
		require.Equal(t, tc.acks, sumChunks(b.msgs), tc.name)
	}
	// Two pairs in one round (path 0–1–2–3: 1 proposes to 0, 2 to 3): both balance, and
	// the tokens moved and the acceptances add up.
	p4, err := Path(4)
	require.NoError(t, err)
	b, err := NewRandomMatching(p4)
	require.NoError(t, err)
	s := &State{Net: p4, Loads: Loads{0, 8, 11, 1}, Workers: 1}
	require.NoError(t, b.Init(s))
	copy(b.prop, []int32{-1, 0, 3, -1})
	copy(b.coin, []uint8{0, 0, 1, 0})
	clear(b.msgs)
	b.s = s
	b.matchChunks(0, b.ln.chunks())
	require.Equal(t, Loads{4, 4, 6, 6}, s.Loads)
	require.Equal(t, int64(4+5), sumChunks(b.moved))
	require.Equal(t, int64(2), sumChunks(b.msgs))
}
