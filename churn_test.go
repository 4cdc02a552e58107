package tokendist

import (
	"context"
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestChurnScheduleSkipsLink: on a path 0–1–2 with the link (0, 1) down from step 0 to
// step 9, THRESHOLD-1 moves nothing over it, then balances once it is back.
func TestChurnScheduleSkipsLink(t *testing.T) {
	g, _ := Path(3)
	start := Loads{30, 0, 0}
	for _, build := range []func() (Balancer, error){
		func() (Balancer, error) { return NewThreshold1(g, nil) },
		func() (Balancer, error) { return NewRSWDiffusion(g) },
		func() (Balancer, error) { return NewFGSDeterministic(g) },
		func() (Balancer, error) { return NewRandomMatching(g) },
		func() (Balancer, error) { return NewRandomizedDiffusion(g) },
	} {
		b, _ := build()
		c, _ := NewScheduledLinkChurn([]LinkEvent{{Step: 0, U: 0, V: 1}, {Step: 10, U: 1, V: 0, Up: true}})
		var moved10 int64 = -1
		res, err := Run(context.Background(), g, start, b, &RunOptions{MaxSteps: 400, Churn: c, SampleEvery: 1, NoStability: true,
			Recorder: RecorderFunc(func(s *State, smp Sample) error {
				if smp.Step == 10 {
					moved10 = smp.Moved
					require.Equal(t, int64(30), s.Loads[0], "%v: at step 10 loads %v, down %d", BalancerName(b), s.Loads, smp.Down)
					require.Equal(t, 1, smp.Down, "%v: at step 10 loads %v, down %d", BalancerName(b), s.Loads, smp.Down)
				}
				return nil
			})})
		require.NoError(t, err)
		if moved10 != 0 || res.Loads[0] >= 20 {
			t.Errorf("%v: moved %d before step 10, final %v", BalancerName(b), moved10, res.Loads)
		}
	}
}

// TestRandomChurnStationary: the fraction of links down approaches
// fail/(fail + recover − fail·recover).
func TestRandomChurnStationary(t *testing.T) {
	g, _ := RandomRegular(1000, 4, 1)
	c, _ := NewRandomLinkChurn(0.05, 0.2)
	var sum float64
	var k int
	_, err := Run(context.Background(), g, make(Loads, 1000), idle(), &RunOptions{MaxSteps: 400, Churn: c, SampleEvery: 1,
		Recorder: RecorderFunc(func(s *State, smp Sample) error {
			if smp.Step > 100 {
				sum += float64(smp.Down)
				k++
			}
			down := 0
			for u := 0; u < g.Order(); u++ {
				for e := g.off[u]; e < g.off[u+1]; e++ {
					if !s.Live[e] {
						down++
					}
					require.Equal(t, s.Live[g.EdgeIndex(int(g.adj[e]), u)], s.Live[e], "ends of a link disagree")
				}
			}
			require.Equal(t, 2*smp.Down, down, "step %d: %d ends down, %d links reported", smp.Step, down, smp.Down)
			return nil
		})})
	require.NoError(t, err)
	want := 0.05 / (0.05 + 0.2 - 0.05*0.2) * float64(g.Size())
	got := sum / float64(k)
	require.LessOrEqual(t, math.Abs(got-want), 0.1*want, "mean links down %v, want about %v", got, want)
}
