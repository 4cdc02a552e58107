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
	t.Parallel()
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

// churnDownTrace runs an idle balancer on g for steps steps with churn c and returns the
// links down before each step (Sample.Down) and a copy of State.Live at the end.
func churnDownTrace(t *testing.T, g *Graph, c Churn, steps int64, seed uint64) ([]int, []bool) {
	t.Helper()
	var down []int
	var live []bool
	_, err := Run(context.Background(), g, make(Loads, g.Order()), idle(), &RunOptions{MaxSteps: steps, Seed: seed, Churn: c, SampleEvery: 1,
		Recorder: RecorderFunc(func(s *State, smp Sample) error {
			if smp.Step > 0 {
				down = append(down, smp.Down)
			}
			live = append(live[:0], s.Live...)
			return nil
		})})
	require.NoError(t, err)
	return down, live
}

// TestChurnScheduleRepeatedEvents: on Path(4) a link failed twice is down once (the
// count of links down does not count it twice), recovers with one event, and a recovery
// of a link that is up changes nothing; events apply from their step on, ties in the
// given order; both ends of a link agree.
func TestChurnScheduleRepeatedEvents(t *testing.T) {
	g, _ := Path(4)
	c, err := NewScheduledLinkChurn([]LinkEvent{
		{Step: 4, U: 2, V: 1, Up: true}, // (1, 2) is already down at step 4
		{Step: 1, U: 0, V: 1},
		{Step: 2, U: 1, V: 0}, // failed again, other order
		{Step: 2, U: 1, V: 2},
		{Step: 3, U: 0, V: 1, Up: true},
		{Step: 3, U: 0, V: 1, Up: true}, // recovered twice
		{Step: 4, U: 2, V: 3, Up: true}, // up already
		{Step: 5, U: 2, V: 3},
		{Step: 5, U: 2, V: 3, Up: true}, // the later event of the step wins
	})
	require.NoError(t, err)
	down, live := churnDownTrace(t, g, c, 6, 1)
	// down[k−1] is the count in the sample after k steps, whose last step (number k − 1,
	// counting from 0) saw the events of steps ≤ k − 1.
	require.Equal(t, []int{0, 1, 2, 1, 0, 0}, down)
	for _, e := range live {
		require.True(t, e, "live %v", live)
	}
}

// TestChurnReuse: a churn value run again (on the same or another network, as a sweep
// reuses its options) starts over: the listed schedule from its first event with every
// link up, the random churn with the same draws for the same seed.
func TestChurnReuse(t *testing.T) {
	g, _ := Path(4)
	r, _ := Ring(6)
	sc, err := NewScheduledLinkChurn([]LinkEvent{{Step: 2, U: 0, V: 1}, {Step: 3, U: 1, V: 2}, {Step: 5, U: 0, V: 1, Up: true}})
	require.NoError(t, err)
	want := []int{0, 0, 1, 2, 2, 1} // as in TestChurnScheduleRepeatedEvents
	for i := 0; i < 3; i++ {
		down, _ := churnDownTrace(t, g, sc, 6, 1)
		require.Equal(t, want, down, "run %d", i)
	}
	down, _ := churnDownTrace(t, r, sc, 6, 1) // the ring has the same links and more
	require.Equal(t, want, down, "on the ring")
	rc, err := NewRandomLinkChurn(0.3, 0.2)
	require.NoError(t, err)
	big, _ := RandomRegular(200, 4, 1)
	first, firstLive := churnDownTrace(t, big, rc, 30, 7)
	require.NotZero(t, first[len(first)-1], "no link ever failed")
	_, _ = churnDownTrace(t, r, rc, 30, 8) // another network and seed in between
	again, againLive := churnDownTrace(t, big, rc, 30, 7)
	require.Equal(t, first, again)
	require.Equal(t, firstLive, againLive)
	fresh, _ := NewRandomLinkChurn(0.3, 0.2)
	other, _ := churnDownTrace(t, big, fresh, 30, 7)
	require.Equal(t, first, other, "a reused churn differs from a fresh one")
}
