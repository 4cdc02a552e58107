package async

import (
	"context"
	"os"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/tokendist/tokendist/node"

	"github.com/tokendist/tokendist"
)

// benchNodes is the order of the scale benchmark: ASYNC_BENCH_NODES, or 10^6.
func benchNodes() int {
	if s := os.Getenv("ASYNC_BENCH_NODES"); s != "" {
		if n, err := strconv.Atoi(s); err == nil && n > 0 {
			return n
		}
	}
	return 1_000_000
}

// benchRounds is the number of rounds of the scale benchmark: ASYNC_BENCH_ROUNDS, or 3.
func benchRounds() int64 {
	if s := os.Getenv("ASYNC_BENCH_ROUNDS"); s != "" {
		if n, err := strconv.ParseInt(s, 10, 64); err == nil && n > 0 {
			return n
		}
	}
	return 3
}

// floor pushes and pops events through the simulator's heap, doing nothing else: pending
// events are kept in the heap (the simulator's typical backlog) while events events pass.
func floor(pending int, events int64) time.Duration {
	var q eventHeap
	q.h = make([]event, 0, pending+1)
	for i := range pending {
		q.push(1, nodeKey(i, classArrival, i%4), int64(i))
	}
	start := time.Now()
	var sink int64
	for range events {
		e := q.pop()
		sink += e.ref
		q.push(e.t+1, e.key, e.ref)
	}
	d := time.Since(start)
	if sink == 42 {
		println()
	}
	return d
}

// BenchmarkScale runs the share diffusion for 3 rounds on a 10^6-node torus (1000 ×
// 1000) in the simulator with unit delays, then the plain event-loop floor with the
// same number of events and a backlog of one event per edge end, and reports events per
// second of both, their ratio, bytes per node (live heap at the end of the run, the
// graph excluded) and allocations per event.
//
//	go test ./async -run '^$' -bench Scale -benchtime=1x
func BenchmarkScale(b *testing.B) {
	n := benchNodes()
	side := 1
	for side*side < n {
		side++
	}
	g, err := tokendist.Torus(side, side)
	if err != nil {
		b.Fatal(err)
	}
	n = g.Order()
	loads := make(tokendist.Loads, n)
	for v := range loads {
		loads[v] = int64(v % 1000)
	}
	var base, live runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&base)
	progs := probePrograms{probe: func() {
		runtime.GC()
		runtime.ReadMemStats(&live)
	}}
	for b.Loop() {
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		start := time.Now()
		res, err := Simulate(context.Background(), g, progs, loads, &Options{Rounds: benchRounds()})
		d := time.Since(start)
		runtime.ReadMemStats(&m1)
		if err != nil || res.Status != tokendist.StatusDone {
			b.Fatal(res.Status, err)
		}
		fl := floor(4*n, res.Events)
		simRate := float64(res.Events) / d.Seconds()
		floorRate := float64(res.Events) / fl.Seconds()
		b.ReportMetric(simRate, "events/s")
		b.ReportMetric(floorRate, "floor-events/s")
		b.ReportMetric(floorRate/simRate, "floor/sim")
		b.ReportMetric(float64(live.HeapAlloc-base.HeapAlloc)/float64(n), "bytes/node")
		b.ReportMetric(float64(m1.Mallocs-m0.Mallocs)/float64(res.Events), "allocs/event")
		b.Logf("%d nodes: %d events in %v (%.3g/s); floor %v (%.3g/s); live heap %d MB",
			n, res.Events, d, simRate, fl, floorRate, (live.HeapAlloc-base.HeapAlloc)>>20)
	}
}

// probePrograms are sharePrograms whose node 0 calls probe once, when its program
// becomes idle at its last delivery: the live heap is then the running simulator's.
type probePrograms struct{ probe func() }

func (pp probePrograms) Program(v int) (node.Program, error) {
	if v == 0 {
		return &probeProgram{shareProgram: &shareProgram{}, probe: pp.probe}, nil
	}
	return &shareProgram{}, nil
}

type probeProgram struct {
	*shareProgram
	probe func()
}

func (p *probeProgram) Receive(c *node.Context, port int, m node.Message) error {
	err := p.shareProgram.Receive(c, port, m)
	if p.probe != nil && p.Idle() {
		p.probe()
		p.probe = nil
	}
	return err
}
