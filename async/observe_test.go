package async

import (
	"context"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/tokendist/tokendist"
	"github.com/tokendist/tokendist/faults"
	"github.com/tokendist/tokendist/registry"
)

// snapCopy is what a test keeps of a Snapshot (the simulator reuses its slices).
type snapCopy struct {
	Snapshot
}

func keep(s *Snapshot) snapCopy {
	c := *s
	c.Loads = slices.Clone(s.Loads)
	c.Down = slices.Clone(s.Down)
	c.LinkInFlight = slices.Clone(s.LinkInFlight)
	c.LinkLost = slices.Clone(s.LinkLost)
	return snapCopy{c}
}

// observed runs c with an Observer every `every` time units and returns the result
// and the snapshots.
func observed(t *testing.T, c faultCase, every float64) (Result, []snapCopy, error) {
	t.Helper()
	var snaps []snapCopy
	o := c.opts
	o.Observer = ObserverFunc(func(s *Snapshot) error {
		snaps = append(snaps, keep(s))
		return nil
	})
	o.ObserveEvery = every
	res, err := Simulate(context.Background(), c.g, c.progs, c.loads, &o)
	return res, snaps, err
}

// checkSnapshots asserts the snapshot invariants of a run that ended without error:
// conservation at each, the per-link in-flight tokens adding up to the ledger's
// total, the lost datagrams adding up to Result.Lost, the times 0, every, 2·every, …
// and the final one at Result.Time with the final loads.
func checkSnapshots(t *testing.T, name string, g *tokendist.Graph, res Result, snaps []snapCopy, every float64) {
	t.Helper()
	if len(snaps) < 2 {
		t.Fatalf("%s: %d snapshots", name, len(snaps))
	}
	var lost int64
	for k, s := range snaps {
		if len(s.Loads) != g.Order() || len(s.Down) != g.Order() || len(s.LinkInFlight) != 2*g.Size() || len(s.LinkLost) != 2*g.Size() {
			t.Fatalf("%s: snapshot %d: slice lengths %d %d %d %d", name, k, len(s.Loads), len(s.Down), len(s.LinkInFlight), len(s.LinkLost))
		}
		var fl, ll int64
		for e, x := range s.LinkInFlight {
			if x < 0 {
				t.Fatalf("%s: snapshot %d: link end %d has %d tokens in flight", name, k, e, x)
			}
			fl += x
		}
		for _, x := range s.LinkLost {
			ll += x
		}
		if fl != s.InFlight || ll != s.Lost {
			t.Fatalf("%s: snapshot %d at %g: links hold %d tokens in flight (total %d), lost %d (total %d)", name, k, s.Time, fl, s.InFlight, ll, s.Lost)
		}
		if s.Undelivered < 0 || (s.InFlight > 0 && s.Undelivered == 0) {
			t.Fatalf("%s: snapshot %d: %d tokens in %d datagrams", name, k, s.InFlight, s.Undelivered)
		}
		if got, want := s.Loads.Total()+s.InFlight, s.Initial+s.Arrived-s.Completed; got != want {
			t.Fatalf("%s: snapshot %d at %g: Σ loads %d + in flight %d = %d ≠ initial %d + arrived %d − completed %d",
				name, k, s.Time, s.Loads.Total(), s.InFlight, got, s.Initial, s.Arrived, s.Completed)
		}
		lost += s.Lost
		switch {
		case k == 0:
			if s.Time != 0 || s.Final {
				t.Fatalf("%s: first snapshot at %g (final %v)", name, s.Time, s.Final)
			}
		case k == len(snaps)-1:
			if !s.Final || s.Time != res.Time || s.Events != res.Events {
				t.Fatalf("%s: last snapshot at %g after %d events (final %v), run ended at %g after %d", name, s.Time, s.Events, s.Final, res.Time, res.Events)
			}
			if !slices.Equal(s.Loads, res.Loads) || s.InFlight != res.InFlight || s.Crashes != res.Crashes || s.Restarts != res.Restarts {
				t.Fatalf("%s: last snapshot %v (in flight %d) ≠ result %v (in flight %d)", name, s.Loads, s.InFlight, res.Loads, res.InFlight)
			}
		default:
			if s.Final || s.Time != float64(k)*every || s.Time >= res.Time || s.Events < snaps[k-1].Events {
				t.Fatalf("%s: snapshot %d at %g after %d events (final %v), want %g before %g", name, k, s.Time, s.Events, s.Final, float64(k)*every, res.Time)
			}
		}
	}
	if lost != res.Lost {
		t.Fatalf("%s: the snapshots lost %d datagrams, the result %d", name, lost, res.Lost)
	}
}

// TestObserverSnapshotsConserve: over every fault kind and mixes, the snapshots
// conserve tokens, add up, and observing does not change the run.
func TestObserverSnapshotsConserve(t *testing.T) {
	var lost, crashed, inFlight int64
	for kind := range faultKinds + 1 {
		for i := range faultSeeds() / 4 {
			seed := uint64(kind*1000 + i)
			kinds := 1 << kind
			if kind == faultKinds {
				kinds = faultLoss | faultCrashRate | faultDelay | faultDup | faultWorkload
			}
			c := makeFaultCase(t, seed, kinds)
			plain, err := Simulate(context.Background(), c.g, c.progs, c.loads, &c.opts)
			if err != nil {
				t.Fatalf("%s seed %d: %v", c.name, seed, err)
			}
			every := []float64{0.5, 1, 0.3, 2.5}[i%4]
			res, snaps, err := observed(t, c, every)
			if err != nil {
				t.Fatalf("%s seed %d: %v", c.name, seed, err)
			}
			if !reflect.DeepEqual(plain, res) {
				t.Fatalf("%s seed %d: observing changed the run:\n%+v\n%+v", c.name, seed, plain, res)
			}
			name := fmt.Sprintf("%s kinds %#x seed %d", c.name, kinds, seed)
			checkSnapshots(t, name, c.g, res, snaps, every)
			lost += res.Lost
			for _, s := range snaps {
				inFlight += s.InFlight
				for _, d := range s.Down {
					if d {
						crashed++
					}
				}
			}
		}
	}
	if lost == 0 || crashed == 0 || inFlight == 0 {
		t.Fatalf("not exercised: %d lost, %d down node snapshots, %d tokens in flight", lost, crashed, inFlight)
	}
}

// TestObserverSeesCrashedNodes: with scheduled crashes (at an idle point, so the node
// goes down at once) a node is down in exactly the snapshots at times in
// [At, At + DownFor), and the datagrams lost without network loss are those sent to a
// down node, on the links into it.
func TestObserverSeesCrashedNodes(t *testing.T) {
	g, err := tokendist.Torus(4, 4)
	if err != nil {
		t.Fatal(err)
	}
	loads := randomLoads(g.Order(), 7, 300)
	crashes := []faults.Crash{
		{Node: 5, At: 2.3, DownFor: 3.1},
		{Node: 10, At: 3, DownFor: 2},    // on the snapshot grid: down at 3, up at 5
		{Node: 5, At: 9.5, DownFor: 1.5}, // the same node again
	}
	opts := Options{Rounds: 12, Faults: faults.Model{Crashes: crashes}}
	c := faultCase{name: "torus crashes", g: g, progs: sharePrograms{}, loads: loads, opts: opts}
	const every = 0.25
	res, snaps, err := observed(t, c, every)
	if err != nil {
		t.Fatal(err)
	}
	checkSnapshots(t, c.name, g, res, snaps, every)
	if res.Crashes != 3 || res.Restarts != 3 {
		t.Fatalf("%d crashes, %d restarts", res.Crashes, res.Restarts)
	}
	if res.Time <= 11 {
		t.Fatalf("the run ended at %g, before the last restart", res.Time)
	}
	downAt := func(v int, t float64) bool {
		for _, c := range crashes {
			if c.Node == v && c.At <= t && t < c.At+c.DownFor {
				return true
			}
		}
		return false
	}
	seen := 0
	for _, s := range snaps {
		for v, d := range s.Down {
			if d != downAt(v, s.Time) {
				t.Fatalf("snapshot at %g: node %d down %v", s.Time, v, d)
			}
			if d {
				seen++
			}
		}
		for v := range g.Order() {
			for p, w := range g.Neighbors(v) {
				if n := s.LinkLost[g.Offset(v)+p]; n > 0 && int(w) != 5 && int(w) != 10 {
					t.Fatalf("snapshot at %g: %d datagrams lost from %d to %d, which never crashed", s.Time, n, v, w)
				}
			}
		}
	}
	// On the grid of 0.25: node 5 is down at 2.5..5.25 (12 snapshots) and 9.5..10.75
	// (6), node 10 at 3..4.75 (8).
	t.Logf("%d snapshots to time %g, %d of a down node, %d datagrams lost", len(snaps), res.Time, seen, res.Lost)
	if seen != 12+6+8 || res.Lost == 0 {
		t.Fatalf("%d down node snapshots, %d lost", seen, res.Lost)
	}
}

// TestObserverErrorsAndPanics: an observer's error or panic fails the run (naming
// the time), is not called again, and leaves no final snapshot; a canceled context
// seen between snapshots cancels the run; a bad ObserveEvery is refused naming it; a
// nil Observer ignores ObserveEvery's default.
func TestObserverErrorsAndPanics(t *testing.T) {
	g, _ := tokendist.Ring(8)
	loads := randomLoads(8, 3, 100)
	run := func(ctx context.Context, obs Observer, every float64) (Result, error) {
		return Simulate(ctx, g, sharePrograms{}, loads, &Options{Rounds: 10, Observer: obs, ObserveEvery: every})
	}
	stop := errors.New("stop here")
	calls := 0
	res, err := run(context.Background(), ObserverFunc(func(s *Snapshot) error {
		calls++
		if s.Time == 3 {
			return stop
		}
		return nil
	}), 1)
	if !errors.Is(err, stop) || res.Status != tokendist.StatusFailed || calls != 4 {
		t.Fatalf("status %v, %d calls, err %v", res.Status, calls, err)
	}
	if !strings.HasPrefix(err.Error(), "tokendist: async: Options.Observer at time 3: ") {
		t.Fatalf("error %q", err)
	}
	calls = 0
	res, err = run(context.Background(), ObserverFunc(func(s *Snapshot) error {
		calls++
		if s.Time == 2 {
			panic(fmt.Sprintf("observer failure at %g", s.Time))
		}
		return nil
	}), 0.5)
	if err == nil || res.Status != tokendist.StatusFailed || calls != 5 {
		t.Fatalf("status %v, %d calls, err %v", res.Status, calls, err)
	}
	if err.Error() != "tokendist: async: Options.Observer panicked at time 2: observer failure at 2" {
		t.Fatalf("error %q", err)
	}
	// A panic at the start and one in the final snapshot are recovered too.
	for _, final := range []bool{false, true} {
		res, err = run(context.Background(), ObserverFunc(func(s *Snapshot) error {
			if s.Final == final && (final || s.Time == 0) {
				panic("boom")
			}
			return nil
		}), 1)
		if err == nil || !strings.Contains(err.Error(), "panicked") || res.Status != tokendist.StatusFailed {
			t.Fatalf("final %v: status %v, err %v", final, res.Status, err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	finals := 0
	res, err = run(ctx, ObserverFunc(func(s *Snapshot) error {
		if s.Final {
			finals++
		}
		if s.Time == 1 {
			cancel()
		}
		return nil
	}), 0.001)
	if !errors.Is(err, context.Canceled) || res.Status != tokendist.StatusCanceled || finals != 0 {
		t.Fatalf("status %v, %d final snapshots, err %v", res.Status, finals, err)
	}
	for _, bad := range []float64{-1, math.NaN(), math.Inf(1)} {
		_, err := run(context.Background(), ObserverFunc(func(*Snapshot) error { return nil }), bad)
		if !errors.Is(err, tokendist.ErrBadParameter) || !strings.Contains(err.Error(), fmt.Sprintf("ObserveEvery %v", bad)) {
			t.Fatalf("ObserveEvery %v: %v", bad, err)
		}
	}
	res, err = run(context.Background(), nil, 0.5)
	if err != nil || res.Status != tokendist.StatusDone {
		t.Fatalf("no observer: %v %v", res.Status, err)
	}
}

// TestObserverStopsAtMaxTime: a run stopped by MaxTime has its periodic snapshots
// before MaxTime and the final one at MaxTime.
func TestObserverStopsAtMaxTime(t *testing.T) {
	g, _ := tokendist.Ring(6)
	c := faultCase{name: "ring to MaxTime", g: g, progs: sharePrograms{}, loads: randomLoads(6, 1, 100),
		opts: Options{Rounds: 1000, MaxTime: 7}}
	res, snaps, err := observed(t, c, 1)
	if err != nil || res.Status != tokendist.StatusMaxSteps {
		t.Fatal(res.Status, err)
	}
	checkSnapshots(t, c.name, g, res, snaps, 1)
	if len(snaps) != 8 || snaps[7].Time != 7 {
		t.Fatalf("%d snapshots, the last at %g", len(snaps), snaps[len(snaps)-1].Time)
	}
}

// observingRecorder is a tokendist.Recorder that also observes simulated runs.
type observingRecorder struct {
	every float64
	times []float64
}

func (r *observingRecorder) Record(*tokendist.State, tokendist.Sample) error { return nil }
func (r *observingRecorder) Observe(s *Snapshot) error {
	r.times = append(r.times, s.Time)
	return nil
}
func (r *observingRecorder) ObserveEvery() float64 { return r.every }

// TestRegistryRecorderObserves: registry.Run passes its Recorder to the simulator,
// which observes the run with it at the recorder's interval.
func TestRegistryRecorderObserves(t *testing.T) {
	reg := registry.Default()
	spec := registry.Spec{Network: registry.Choice{Name: "ring", Params: registry.Params{"n": 8}},
		Loads:     registry.Choice{Name: "point-mass", Params: registry.Params{"tokens": 40}},
		Algorithm: registry.Choice{Name: "randomized-diffusion"}, Stop: registry.StopRule{MaxSteps: 6},
		NetworkModel: &registry.NetworkModel{}}
	rec := &observingRecorder{every: 0.5}
	out, err := reg.Run(context.Background(), spec, &tokendist.RunOptions{Recorder: rec})
	if err != nil {
		t.Fatal(err)
	}
	end := out.Metrics["async_time"]
	if len(rec.times) < 3 || rec.times[0] != 0 || rec.times[1] != 0.5 || rec.times[len(rec.times)-1] != end {
		t.Fatalf("snapshots at %v, run ended at %g", rec.times, end)
	}
	if want := int(math.Ceil(end/0.5)) + 1; len(rec.times) != want {
		t.Fatalf("%d snapshots over %g time units at 0.5, want %d", len(rec.times), end, want)
	}
}
