package registry

import (
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tokendist/tokendist"
)

// TestSize checks that Size reports the nodes, links, initial discrepancy and step
// budget the run itself then uses.
func TestSize(t *testing.T) {
	r := New()
	for _, s := range []Spec{
		{Network: ch("hypercube", "d", 6), Loads: ch("random-range", "hi", 50), Algorithm: ch("randomized-diffusion"), Seed: 3,
			Stop: StopRule{Tau: true, NoStability: true}},
		{Network: ch("torus", "sides", []any{6, 5}), Loads: ch("distance"), Algorithm: ch("fgs-deterministic"), Seed: 1,
			Stop: StopRule{Tau: true, MaxSteps: 7, NoStability: true}},
		{Network: ch("random-regular", "n", 40, "d", 3), Loads: ch("random-range", "hi", 9), Algorithm: ch("random-matching"), Seed: 2,
			Stop: StopRule{MaxSteps: 11, NoStability: true}},
		// A random network whose certified upper bound on λ_max is above the Lanczos
		// value: τ comes from the bound, in Size as in the run.
		{Network: ch("erdos-renyi", "n", 256, "p", 0.03), Loads: ch("point-mass", "tokens", 100000), Algorithm: ch("randomized-diffusion"), Seed: 1,
			Stop: StopRule{Tau: true, NoStability: true}},
	} {
		sz, err := r.Size(s)
		require.NoError(t, err)
		out, err := r.Run(t.Context(), s, nil)
		require.NoError(t, err)
		require.Equal(t, RunSize{N: out.N, Edges: out.Edges, InitialDiscrepancy: out.InitialDiscrepancy, MaxSteps: out.MaxSteps}, sz)
		require.Positive(t, sz.MaxSteps)
	}
	_, err := r.Size(Spec{Network: ch("no-such-network"), Loads: ch("distance"), Algorithm: ch("randomized-diffusion")})
	require.ErrorContains(t, err, "no-such-network")
}

// TestNotTreeHint checks that "network is not a tree" names the option that fixes it:
// spanning_tree: true for an algorithm that has it, a tree network for one that has not.
func TestNotTreeHint(t *testing.T) {
	r := New()
	for _, tc := range []struct {
		alg  Choice
		hint string
	}{
		{ch("discrepancy-1"), "set spanning_tree: true"},
		{ch("threshold-1"), "set spanning_tree: true"},
		{ch("perfect-tree"), "runs on trees only: use a tree network"},
	} {
		_, err := r.Run(t.Context(), Spec{Network: ch("ring", "n", 6), Loads: ch("random-range", "hi", 9), Algorithm: tc.alg}, nil)
		require.ErrorIs(t, err, tokendist.ErrNotTree)
		require.ErrorContains(t, err, tc.hint)
	}
	_, err := r.Run(t.Context(), Spec{Network: ch("ring", "n", 6), Loads: ch("random-range", "hi", 9), Algorithm: ch("discrepancy-1", "spanning_tree", true)}, nil)
	require.NoError(t, err)
}
