package registry

import (
	"testing"

	"github.com/stretchr/testify/require"
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
