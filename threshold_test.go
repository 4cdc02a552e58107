package tokendist_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tokendist/tokendist"
)

// dxMonotone is a Recorder that checks Observations 2 and 3 of Houle et al. on every
// sample: Σ load² never increases, the maximum never increases, the minimum never
// decreases.
type dxMonotone struct {
	last    tokendist.Sample
	started bool
	samples int
}

func (m *dxMonotone) Record(s *tokendist.State, smp tokendist.Sample) error {
	if m.started {
		switch {
		case smp.Potential.Cmp(m.last.Potential) > 0:
			return fmt.Errorf("Σ load² rose from %v to %v at step %d", m.last.Potential, smp.Potential, s.Steps)
		case smp.Max > m.last.Max:
			return fmt.Errorf("max rose from %d to %d at step %d", m.last.Max, smp.Max, s.Steps)
		case smp.Min < m.last.Min:
			return fmt.Errorf("min fell from %d to %d at step %d", m.last.Min, smp.Min, s.Steps)
		}
	}
	m.last, m.started = smp, true
	m.samples++
	return nil
}

// dxRunChecked runs b with Observations 2 and 3 checked after every step.
func dxRunChecked(t *testing.T, g *tokendist.Graph, loads tokendist.Loads, b tokendist.Balancer, opts tokendist.RunOptions) tokendist.Result {
	t.Helper()
	m := &dxMonotone{}
	opts.SampleEvery, opts.Recorder = 1, m
	r, err := tokendist.Run(context.Background(), g, loads, b, &opts)
	require.NoError(t, err, "%s on %v", tokendist.BalancerName(b), g)
	require.Equal(t, r.Steps+1, int64(m.samples))
	return r
}

type dxNamedGraph struct {
	name string
	g    *tokendist.Graph
}

// dxSweepGraphs returns the graph families of Theorem 5's sweep.
func dxSweepGraphs(t *testing.T) []dxNamedGraph {
	var out []dxNamedGraph
	add := func(name string, g *tokendist.Graph, err error) {
		require.NoError(t, err)
		out = append(out, dxNamedGraph{name, g})
	}
	for n := 2; n <= 9; n++ {
		g, err := tokendist.Ring(n)
		add(fmt.Sprintf("Ring(%d)", n), g, err)
		g, err = tokendist.Path(n)
		add(fmt.Sprintf("Path(%d)", n), g, err)
		g, err = tokendist.Star(n)
		add(fmt.Sprintf("Star(%d)", n), g, err)
	}
	for d := 1; d <= 5; d++ {
		g, err := tokendist.Hypercube(d)
		add(fmt.Sprintf("Hypercube(%d)", d), g, err)
	}
	for _, s := range [][]int{{3, 3}, {4, 5}, {5, 6}, {3, 4, 2}} {
		g, err := tokendist.Torus(s...)
		add(fmt.Sprintf("Torus%v", s), g, err)
		g, err = tokendist.Mesh(s...)
		add(fmt.Sprintf("Mesh%v", s), g, err)
	}
	for seed := uint64(0); seed < 12; seed++ {
		g, err := tokendist.RandomTree(4+3*int(seed), seed)
		add(fmt.Sprintf("RandomTree(%d, %d)", 4+3*seed, seed), g, err)
		g, err = tokendist.RandomRegular(12+2*int(seed), 3+int(seed%3), seed)
		add(fmt.Sprintf("RandomRegular(%d, %d)", 12+2*seed, 3+seed%3), g, err)
		g = dxRandomGraph(t, 10+int(seed), 0.3, seed)
		if g.Connected() {
			out = append(out, dxNamedGraph{fmt.Sprintf("G(%d, 0.3, %d)", 10+seed, seed), g})
		}
	}
	for k := 2; k <= 4; k++ {
		g, err := tokendist.KaryTree(tokendist.KaryShape{Height: 3, Arity: k})
		add(fmt.Sprintf("KaryTree(KaryShape{Height: 3, Arity: %d})", k), g, err)
	}
	return out
}

// TestThreshold1Periods: THRESHOLD-1's stability period is a phase and THRESHOLD-2's a
// round, and a stable THRESHOLD-1 distribution comes back after exactly one phase.
func TestThreshold1Periods(t *testing.T) {
	g, err := tokendist.KaryTree(tokendist.KaryShape{Height: 3, Arity: 2})
	require.NoError(t, err)
	t1, err := tokendist.NewThreshold1(g, nil)
	require.NoError(t, err)
	t2, err := tokendist.NewThreshold2(g, nil)
	require.NoError(t, err)
	require.Equal(t, 3, t1.Colors())
	require.Equal(t, int64(3*15), t1.Period(nil))
	require.Equal(t, int64(3), t2.Period(nil))
	require.Equal(t, 2, t1.ActiveColor(5))
}
