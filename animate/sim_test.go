package animate

import (
	"bytes"
	"context"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tokendist/tokendist"
	"github.com/tokendist/tokendist/async"
	"github.com/tokendist/tokendist/faults"
	"github.com/tokendist/tokendist/internal/testprog"
)

// simCase is a simulated run on a 5 × 5 torus of the share diffusion, with delays
// spread over [0.5, 2], some loss and a node crashed over [2.3, 5.4).
func simCase(t *testing.T) (*tokendist.Graph, tokendist.Loads, async.Options) {
	t.Helper()
	g, err := tokendist.Torus(5, 5)
	require.NoError(t, err)
	l := make(tokendist.Loads, g.Order())
	for v := range l {
		l[v] = int64((v * 37) % 90)
	}
	l[12] = 600
	return g, l, async.Options{Seed: 4, Rounds: 10, Faults: faults.Model{
		Delay: faults.Uniform(0.5, 2), Loss: 0.08,
		Crashes: []faults.Crash{{Node: 7, At: 2.3, DownFor: 3.1}},
	}}
}

// snapshots runs the case with an observer of its own and keeps what it saw.
func snapshots(t *testing.T, g *tokendist.Graph, l tokendist.Loads, o async.Options, every float64) ([]async.Snapshot, async.Result) {
	t.Helper()
	var out []async.Snapshot
	o.Observer = async.ObserverFunc(func(s *async.Snapshot) error {
		c := *s
		c.Loads, c.Down = slices.Clone(s.Loads), slices.Clone(s.Down)
		c.LinkInFlight, c.LinkLost = slices.Clone(s.LinkInFlight), slices.Clone(s.LinkLost)
		out = append(out, c)
		return nil
	})
	o.ObserveEvery = every
	res, err := async.Simulate(context.Background(), g, testprog.Shares{}, l, &o)
	require.NoError(t, err)
	return out, res
}

// TestSimulationFramesMatchTheSnapshots: a simulated run's frames are its snapshots
// (loads, crashed nodes, tokens in flight and lost datagrams per link direction) at
// equal model-time intervals; in the GIF every live node has the colour of its load,
// every crashed node the crashed style, arrows lie on the links with tokens in flight
// and marks on the links that lost datagrams; frames whose loads differ differ.
func TestSimulationFramesMatchTheSnapshots(t *testing.T) {
	g, l, o := simCase(t)
	const every = 0.5
	snaps, res := snapshots(t, g, l, o, every)
	m, err := RecordSimulation(context.Background(), g, testprog.Shares{}, l, &o, &Options{EveryTime: every, Title: "share diffusion, simulated"})
	require.NoError(t, err)
	fr := m.Frames()
	require.Len(t, fr, len(snaps))
	require.Equal(t, res.Time, fr[len(fr)-1].Time)
	links := m.Links()
	down, lost, flying := 0, 0, 0
	for k, f := range fr {
		s := snaps[k]
		require.Equal(t, FlowsInFlight, f.Flows)
		require.Nil(t, f.Moved)
		if k < len(fr)-1 {
			require.Equal(t, float64(k)*every, f.Time, "frame %d", k)
		}
		require.Equal(t, s.Time, f.Time)
		require.Equal(t, []int64(s.Loads), []int64(f.Loads), "frame %d", k)
		require.Equal(t, s.Loads.Discrepancy(), f.Discrepancy)
		var want []int
		for v, d := range s.Down {
			if d {
				want = append(want, v)
			}
		}
		require.Equal(t, want, f.Down, "frame %d at %g", k, f.Time)
		// Each entry is the snapshot's count on that link direction.
		for _, c := range []struct {
			list []LinkFlow
			per  []int64
			sum  int64
		}{{f.InFlight, s.LinkInFlight, s.InFlight}, {f.Lost, s.LinkLost, s.Lost}} {
			var total int64
			for _, x := range c.list {
				require.NotZero(t, x.Tokens)
				u, w := links[x.Link][0], links[x.Link][1]
				if x.Tokens < 0 {
					u, w = w, u
				}
				require.Equal(t, abs(x.Tokens), c.per[g.EdgeIndex(u, w)], "frame %d link %d→%d", k, u, w)
				total += abs(x.Tokens)
			}
			require.Equal(t, c.sum, total, "frame %d", k)
		}
		down += len(f.Down)
		lost += len(f.Lost)
		flying += len(f.InFlight)
	}
	require.Positive(t, down)
	require.Positive(t, lost)
	require.Positive(t, flying)

	_, pics := decodeGIF(t, m)
	require.Len(t, pics, len(fr))
	s := newScene(m)
	crashedSeen := 0
	for k, pic := range pics {
		f := fr[k]
		isDown := make([]bool, g.Order())
		for _, v := range f.Down {
			isDown[v] = true
		}
		for v, x := range f.Loads {
			cx, cy := int(s.nx[v]), int(s.ny[v])
			if isDown[v] {
				// The cross at the centre, grey between its arms.
				require.Equal(t, uint8(cCross), pic.ColorIndexAt(cx, cy), "frame %d: crashed node %d", k, v)
				require.Equal(t, uint8(cDown), pic.ColorIndexAt(int(s.nx[v]+0.8*s.r), cy), "frame %d: crashed node %d", k, v)
				crashedSeen++
				continue
			}
			require.Equal(t, uint8(cScale+s.level(x)), pic.ColorIndexAt(cx, cy), "frame %d node %d load %d", k, v, x)
		}
		lostHere := map[int]bool{}
		for _, x := range f.Lost {
			lostHere[x.Link] = true
			lx, ly := s.lostAt(x.Link, x.Tokens)
			require.Equal(t, uint8(cLost), pic.ColorIndexAt(int(math.Floor(lx)), int(math.Floor(ly))), "frame %d: lost on link %d", k, x.Link)
		}
		// The middle of each arrow's shaft is the arrow colour (where no lost mark is).
		for _, x := range f.InFlight {
			if lostHere[x.Link] {
				continue
			}
			w := s.width(x.Tokens)
			x0, y0, x1, y1, ok := s.arrowOn(s.segs[x.Link][0], x.Tokens, w)
			require.True(t, ok)
			_, _, _, _, sx, sy := arrowHead(x0, y0, x1, y1, w)
			mx, my := (x0+sx)/2, (y0+sy)/2
			require.Equal(t, uint8(cArrow), pic.ColorIndexAt(int(math.Floor(mx)), int(math.Floor(my))), "frame %d: arrow on link %d", k, x.Link)
		}
		if k > 0 && !slicesEqual(f.Loads, fr[k-1].Loads) {
			require.NotEqual(t, pics[k-1].Pix, pic.Pix, "frame %d: the loads changed, the picture did not", k)
		}
	}
	require.Equal(t, down, crashedSeen)
	require.Equal(t, "t = 2.5  disc "+itoa64(fr[5].Discrepancy), frameText(m, 5))
	require.Contains(t, s.captionOf(m, 5), "down: 1")
}

func itoa64(x int64) string {
	if x < 0 {
		return "-" + itoa(int(-x))
	}
	return itoa(int(x))
}

// TestSimulationIntervalAndLimits: EveryTime 0 takes a round interval from the run's
// model time (MaxTime with a workload); a frame count over MaxFrames is refused
// naming the limit and the interval that fits; bad options and mixing Record and
// Observe are errors.
func TestSimulationIntervalAndLimits(t *testing.T) {
	ctx := context.Background()
	g, l, o := simCase(t)
	plain, err := async.Simulate(ctx, g, testprog.Shares{}, l, &o)
	require.NoError(t, err)
	m, err := RecordSimulation(ctx, g, testprog.Shares{}, l, &o, nil)
	require.NoError(t, err)
	fr := m.Frames()
	step := RoundInterval(plain.Time, DefaultTimeFrames)
	require.Equal(t, fr[1].Time, step)
	require.Equal(t, plain.Time, fr[len(fr)-1].Time)
	require.Equal(t, []int64(plain.Loads), []int64(fr[len(fr)-1].Loads))
	require.LessOrEqual(t, len(fr), DefaultTimeFrames+2)
	require.GreaterOrEqual(t, len(fr), DefaultTimeFrames/5, "a round interval is at most 2.5 times end/100")

	for _, c := range []struct {
		end    float64
		frames int
		want   float64
	}{{47, 100, 0.5}, {100, 100, 1}, {0, 100, 1}, {1234, 100, 20}, {3, 100, 0.05}, {101, 100, 2}, {math.Inf(1), 100, 1}, {5000, 0, 5000},
		{30, 100, 0.5}, {8, 1, 10}, {0.3, 1, 0.5}, {6, 1, 10}} {
		require.InDelta(t, c.want, RoundInterval(c.end, c.frames), c.want*1e-12, "RoundInterval(%g, %d)", c.end, c.frames)
	}
	// 0, 0.5, …, 99.5 and 100: 201 frames.
	require.NoError(t, CheckTimeFrames(100, 0.5, 201))
	err = CheckTimeFrames(100.2, 0.5, 201)
	require.ErrorIs(t, err, tokendist.ErrTooLarge)
	require.Contains(t, err.Error(), "makes 202 frames, more than MaxFrames = 201")
	require.Contains(t, err.Error(), "--every 1)")
	require.NoError(t, CheckTimeFrames(0, 1, 2))
	require.NoError(t, CheckTimeFrames(math.NaN(), 0.001, 2))
	require.NoError(t, CheckTimeFrames(10, 0, 2), "no interval, nothing to check")

	_, err = RecordSimulation(ctx, g, testprog.Shares{}, l, &o, &Options{EveryTime: 0.01, MaxFrames: 50})
	require.ErrorIs(t, err, tokendist.ErrTooLarge)
	require.True(t, strings.HasPrefix(err.Error(), "tokendist: "), err.Error())
	// The run's model time over 48 intervals, rounded up to 1, 2 or 5 times a power of 10.
	fit := RoundInterval(plain.Time, 48)
	require.Contains(t, err.Error(), "MaxFrames = 50; take a frame every "+fmtTime(fit)+" or more (tokendist animate --every "+fmtTime(fit)+")")
	// The Recorder itself stops a run that makes too many frames.
	r, err := NewRecorder(g, nil, &Options{EveryTime: 0.01, MaxFrames: 50})
	require.NoError(t, err)
	require.Equal(t, 0.01, r.ObserveEvery())
	require.Equal(t, 1.0, (*Recorder)(nil).ObserveEvery())
	oo := o
	oo.Observer, oo.ObserveEvery = r, r.ObserveEvery()
	res, err := async.Simulate(ctx, g, testprog.Shares{}, l, &oo)
	require.ErrorIs(t, err, tokendist.ErrTooLarge)
	require.Contains(t, err.Error(), "MaxFrames = 50")
	require.Equal(t, tokendist.StatusFailed, res.Status)
	require.Len(t, r.m.frames, 50, "frames up to the limit, not one more")
	require.Equal(t, 0.49, r.m.frames[49].Time)

	// With a workload the run ends at MaxTime: the interval is known before it.
	w, err := tokendist.NewPoissonArrivals(1, false)
	require.NoError(t, err)
	ow := o
	ow.Workload, ow.MaxTime = w, 30
	m, err = RecordSimulation(ctx, g, testprog.Shares{}, l, &ow, nil)
	require.NoError(t, err)
	fr = m.Frames()
	require.Equal(t, 0.5, fr[1].Time)
	require.Equal(t, 30.0, fr[len(fr)-1].Time)
	require.Len(t, fr, 61)
	last := &fr[len(fr)-1]
	require.Greater(t, last.Loads.Total()+inFlightTotal(last), l.Total(), "arrivals, and no completions")

	bad := o
	bad.Observer = async.ObserverFunc(func(*async.Snapshot) error { return nil })
	_, err = RecordSimulation(ctx, g, testprog.Shares{}, l, &bad, nil)
	require.ErrorIs(t, err, tokendist.ErrBadParameter)
	for _, e := range []float64{-1, math.NaN(), math.Inf(1)} {
		_, err = RecordSimulation(ctx, g, testprog.Shares{}, l, &o, &Options{EveryTime: e})
		require.ErrorIs(t, err, tokendist.ErrBadParameter)
		require.Contains(t, err.Error(), "EveryTime")
	}
	_, err = RecordSimulation(ctx, g, testprog.Shares{}, l[:3], &o, nil)
	require.ErrorIs(t, err, tokendist.ErrBadLoads, "a run error comes back as it is")

	// One Recorder, one run: Observe after Record and Record after Observe fail.
	r, err = NewRecorder(g, nil, nil)
	require.NoError(t, err)
	require.Equal(t, 1.0, r.ObserveEvery())
	snaps, _ := snapshots(t, g, l, o, 1)
	require.NoError(t, r.Observe(&snaps[0]))
	require.Error(t, r.Record(&tokendist.State{Loads: l}, tokendist.Sample{}))
	short := snaps[1]
	short.Loads = short.Loads[:4]
	require.ErrorIs(t, r.Observe(&short), tokendist.ErrBadParameter)
	require.Error(t, r.Observe(nil))
	_, err = r.Movie()
	require.NoError(t, err)
	require.Error(t, r.Observe(&snaps[1]), "Observe after Movie")
	r, err = NewRecorder(g, nil, nil)
	require.NoError(t, err)
	require.NoError(t, r.Record(&tokendist.State{Loads: l}, tokendist.Sample{}))
	require.Error(t, r.Observe(&snaps[0]))
	require.Equal(t, "in-flight", FlowsInFlight.String())
}

// TestSimulationSVG: a simulated run's SVG frame is well-formed, draws a crashed node
// grey with its cross, and labels the axis in model time.
func TestSimulationSVG(t *testing.T) {
	g, l, o := simCase(t)
	m, err := RecordSimulation(context.Background(), g, testprog.Shares{}, l, &o, &Options{EveryTime: 0.5})
	require.NoError(t, err)
	k := slices.IndexFunc(m.Frames(), func(f Frame) bool { return len(f.Down) > 0 && len(f.Lost) > 0 })
	if k < 0 {
		k = slices.IndexFunc(m.Frames(), func(f Frame) bool { return len(f.Down) > 0 })
	}
	require.Positive(t, k)
	var buf bytes.Buffer
	require.NoError(t, m.WriteSVG(&buf, k))
	svg := buf.String()
	require.Contains(t, svg, `fill="`+hex(cDown)+`"`)
	require.Contains(t, svg, `<path id="down"`)
	require.NotContains(t, svg, `id="down" fill="none" stroke="`+hex(cCross)+`" stroke-width="`+num(max(1, newScene(m).r/4))+`" d=""`)
	require.Contains(t, svg, ">"+frameText(m, k)+"<")
	require.Contains(t, svg, "0 time</text>")
	require.Contains(t, svg, ">down</text>")
}
