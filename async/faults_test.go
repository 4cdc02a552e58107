package async

import (
	"context"
	"errors"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"regexp"
	"slices"
	"strconv"
	"testing"

	"github.com/tokendist/tokendist/node"

	"github.com/tokendist/tokendist"
	"github.com/tokendist/tokendist/faults"
)

// faultCase is one run of the property tests: a network, a program, and a fault model
// drawn from the seed.
type faultCase struct {
	name     string
	g        *tokendist.Graph
	progs    node.Programs
	loads    tokendist.Loads
	opts     Options
	want     tokendist.Loads // the synchronous result (nil with a workload)
	moved    int64
	messages int64
	brk      broken // a deliberately broken handoff (0: the correct one)
}

// The fault kinds the property tests draw; every case has at least one.
const (
	faultLoss = 1 << iota
	faultDup
	faultReorder
	faultDelay
	faultCrashIdle
	faultCrashBeforePersist
	faultCrashBeforeSend
	faultCrashRate
	faultSpeeds
	faultWorkload
	faultKinds = iota
)

func makeFaultCase(t testing.TB, seed uint64, kinds int) faultCase {
	r := rand.New(rand.NewPCG(seed, 99))
	var c faultCase
	const R = 6
	var err error
	switch seed % 3 {
	case 0:
		n := 8 + 2*r.IntN(4)
		c.g, err = tokendist.Ring(n)
		c.progs = pairPrograms{n}
		c.loads = randomLoads(n, seed, 200)
		c.want, c.moved, c.messages = syncPair(c.loads, R)
		c.name = fmt.Sprintf("pair ring %d", n)
	case 1:
		c.g, err = tokendist.RandomRegular(12+2*r.IntN(5), 3, seed)
		c.name = "share regular"
	default:
		c.g, err = tokendist.Torus(3, 3+r.IntN(3))
		c.name = "share torus"
	}
	if err != nil {
		t.Fatal(err)
	}
	if c.progs == nil {
		c.progs = sharePrograms{}
		c.loads = randomLoads(c.g.Order(), seed, 200)
		c.want, c.moved, c.messages = syncShare(c.g, c.loads, R)
	}
	n := c.g.Order()
	m := &c.opts.Faults
	c.opts.Seed, c.opts.Rounds = seed, R
	c.opts.MaxTime = 20000
	if kinds&faultLoss != 0 {
		m.Loss = 0.05 + 0.3*r.Float64()
	}
	if kinds&faultDup != 0 {
		m.Duplicate = 0.05 + 0.4*r.Float64()
	}
	if kinds&faultReorder != 0 {
		m.Reorder = 0.05 + 0.4*r.Float64()
	}
	if kinds&faultDelay != 0 {
		switch r.IntN(4) {
		case 0:
			m.Delay = faults.Uniform(0.1, 3)
		case 1:
			m.Delay = faults.Exponential(0.1, 1.5)
		case 2:
			m.Delay = faults.Pareto(0.5, 1.2)
		default:
			m.LinkDelay = func(u, v int) faults.Delay { return faults.Uniform(0.2, float64(1+(u*7+v)%5)) }
		}
	}
	for _, p := range []struct {
		kind  int
		point faults.CrashPoint
	}{{faultCrashIdle, faults.CrashIdle}, {faultCrashBeforePersist, faults.CrashBeforePersist}, {faultCrashBeforeSend, faults.CrashBeforeSend}} {
		if kinds&p.kind != 0 {
			for range 1 + r.IntN(6) {
				m.Crashes = append(m.Crashes, faults.Crash{Node: r.IntN(n), At: 8 * r.Float64(), DownFor: 3 * r.Float64(), Point: p.point})
			}
		}
	}
	if kinds&faultCrashRate != 0 {
		m.CrashRate = 0.002 + 0.02*r.Float64()
		m.DownTime = faults.Exponential(0, 2)
	}
	if kinds&faultSpeeds != 0 {
		m.TickInterval = make([]float64, n)
		for v := range m.TickInterval {
			m.TickInterval[v] = 0.5 + 2*r.Float64()
		}
		m.Drift = 0.2 * r.Float64()
	}
	if kinds&faultWorkload != 0 {
		a, err := tokendist.NewPoissonArrivals(3, false)
		if err != nil {
			t.Fatal(err)
		}
		s, err := tokendist.NewService(0.2)
		if err != nil {
			t.Fatal(err)
		}
		c.opts.Workload, err = tokendist.NewCombinedWorkload(a, s)
		if err != nil {
			t.Fatal(err)
		}
		c.opts.WorkloadEvery = 0.5 + r.Float64()
		c.opts.MaxTime = 60
		c.want = nil
	}
	c.opts.CheckEvery = 1 + int64(r.IntN(50))
	return c
}

// checkFaultCase runs the case and returns an error when it breaks a property:
// conservation (the simulator's checks, and the result's own sum), no negative load, and
// without a workload the synchronous loads, Moved and Messages exactly (no token lost or
// doubled, every message delivered exactly once).
func checkFaultCase(c faultCase) (Result, error) {
	var res Result
	var err error
	if c.brk != 0 {
		res, err = simulateBroken(c.g, c.progs, c.loads, &c.opts, c.brk)
	} else {
		res, err = Simulate(context.Background(), c.g, c.progs, c.loads, &c.opts)
	}
	if err != nil {
		return res, err
	}
	var sum, initial int64
	for v, x := range res.Loads {
		if x < 0 {
			return res, fmt.Errorf("node %d ends with load %d", v, x)
		}
		sum += x
	}
	for _, x := range c.loads {
		initial += x
	}
	if sum+res.InFlight != initial+res.Arrived-res.Completed {
		return res, fmt.Errorf("Σ loads %d + in flight %d ≠ %d + %d − %d", sum, res.InFlight, initial, res.Arrived, res.Completed)
	}
	if c.want == nil {
		if res.Status != tokendist.StatusMaxSteps {
			return res, fmt.Errorf("status %v with a workload", res.Status)
		}
		return res, nil
	}
	if res.Status != tokendist.StatusDone || res.InFlight != 0 || res.Undelivered != 0 {
		return res, fmt.Errorf("status %v, %d tokens in flight", res.Status, res.InFlight)
	}
	if !slices.Equal(res.Loads, c.want) || res.Moved != c.moved || res.Messages != c.messages {
		return res, fmt.Errorf("loads %v moved %d messages %d, synchronous %v moved %d messages %d",
			res.Loads, res.Moved, res.Messages, c.want, c.moved, c.messages)
	}
	return res, nil
}

// faultSeeds is the number of seeds per fault kind (and for the mixes).
func faultSeeds() int {
	if testing.Short() {
		return 12
	}
	return 40
}

// TestFaultsConserve: every fault kind alone, and random mixes of all of them, over
// many seeds: conservation exact at every event, no negative load, and (without a
// workload) the synchronous result exactly.
func TestFaultsConserve(t *testing.T) {
	var crashes, retrans, dups, lost int64
	var kindCrashes [faultKinds + 1]int64
	for kind := range faultKinds + 1 {
		for i := range faultSeeds() {
			seed := uint64(kind*1000 + i)
			kinds := 1 << kind
			if kind == faultKinds { // a mix of everything but the workload, then everything
				kinds = int(rand.New(rand.NewPCG(seed, 1)).Uint32())&(1<<faultKinds-1) | faultCrashBeforePersist | faultLoss
				if i%2 == 0 {
					kinds &^= faultWorkload
				}
			}
			c := makeFaultCase(t, seed, kinds)
			res, err := checkFaultCase(c)
			if err != nil {
				t.Fatalf("%s, kinds %#x, seed %d: %v", c.name, kinds, seed, err)
			}
			crashes += res.Crashes
			kindCrashes[kind] += res.Crashes
			retrans += res.Retransmissions
			dups += res.Duplicates
			lost += res.Lost
		}
	}
	for _, k := range []int{faultCrashIdle, faultCrashBeforePersist, faultCrashBeforeSend, faultCrashRate} {
		kind := bits.TrailingZeros(uint(k))
		if kindCrashes[kind] == 0 {
			t.Errorf("fault kind %#x: no crash happened", k)
		}
	}
	if crashes == 0 || retrans == 0 || dups == 0 || lost == 0 {
		t.Fatalf("faults not exercised: %d crashes, %d retransmissions, %d duplicates, %d lost", crashes, retrans, dups, lost)
	}
	t.Logf("%d crashes, %d retransmissions, %d duplicates dropped, %d datagrams lost", crashes, retrans, dups, lost)
}

// TestBrokenHandoffCaught runs the property tests with a deliberately broken handoff
// and asserts that they catch it: some runs fail with a *ConservationError.
func TestBrokenHandoffCaught(t *testing.T) {
	for _, b := range []struct {
		name  string
		brk   broken
		kinds int
	}{
		{"ack before persist", brokenAckBeforePersist, faultCrashBeforePersist | faultDelay},
		{"send before persist", brokenSendBeforePersist, faultCrashBeforePersist | faultDelay},
		{"no dedup", brokenNoDedup, faultDup},
	} {
		caught, conservation := 0, 0
		runs := 2 * faultSeeds()
		for i := range runs {
			c := makeFaultCase(t, uint64(i), b.kinds)
			c.brk = b.brk
			_, err := checkFaultCase(c)
			if err != nil {
				caught++
				var ce *ConservationError
				if errors.As(err, &ce) {
					conservation++
				}
			}
		}
		t.Logf("%s: %d of %d runs caught, %d by a *ConservationError", b.name, caught, runs, conservation)
		if conservation == 0 {
			t.Errorf("%s: the property tests did not catch the broken handoff", b.name)
		}
	}
}

// TestConservationMessages: the numbers in the conservation errors the broken handoffs
// provoke say what happened. An acknowledgement beyond what the peer delivered names
// the lost datagrams as the ones after the peer's last delivery up to the
// acknowledged one; a delivery the peer never logged names a log range that starts at
// sequence number 1 or later.
func TestConservationMessages(t *testing.T) {
	ackRe := regexp.MustCompile(`received ack (\d+) from node \d+, which has delivered only (\d+): the tokens of (\d+)\.\.(\d+) are lost`)
	logRe := regexp.MustCompile(`delivered datagram (\d+) \(-?\d+ tokens\) from node \d+, whose persisted log holds (-?\d+)\.\.(-?\d+)`)
	atoi := func(s string) int64 { x, _ := strconv.ParseInt(s, 10, 64); return x }
	var acks, logs int
	for _, b := range []broken{brokenAckBeforePersist, brokenSendBeforePersist, brokenNoDedup} {
		for i := range 40 {
			c := makeFaultCase(t, uint64(i), faultCrashBeforePersist|faultDelay|faultDup)
			c.brk = b
			_, err := checkFaultCase(c)
			if err == nil {
				continue
			}
			if m := ackRe.FindStringSubmatch(err.Error()); m != nil {
				acks++
				ack, delivered, from, to := atoi(m[1]), atoi(m[2]), atoi(m[3]), atoi(m[4])
				if from != delivered+1 || to != ack || ack <= delivered {
					t.Errorf("%v seed %d: %v", b, i, err)
				}
			}
			if m := logRe.FindStringSubmatch(err.Error()); m != nil {
				logs++
				if from := atoi(m[2]); from < 1 {
					t.Errorf("%v seed %d: log range from %d: %v", b, i, from, err)
				}
			}
		}
	}
	if acks == 0 || logs == 0 {
		t.Errorf("the broken handoffs provoked %d ack and %d log errors; want both", acks, logs)
	}
}
