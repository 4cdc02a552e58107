package experiment

import (
	"container/heap"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/tokendist/tokendist"
	"github.com/tokendist/tokendist/registry"
)

// sizeBudget bounds the time newProgress spends sizing and probing the runs; classes
// left out are estimated from their work or the mean run, runs left out from the step
// budget of their class.
const sizeBudget = 10 * time.Second

// probeTime is about how long newProgress spends timing the steps of one class.
const probeTime = 100 * time.Millisecond

// probeDelta is the time that k steps must add to a 1-step run before the probe takes
// their time per step: well above the stalls of a shared machine (a few milliseconds).
const probeDelta = 0.02

// minFactorWall is the mean wall time of a class's runs below which its factor does not
// count towards the median and spread of the factors, when longer classes have run.
const minFactorWall = 0.05

// probeAheadShare bounds the time sizeAhead spends probing the classes the first
// sizing had no time for, as a share of the sweep's time so far; probeAheadTime bounds
// one such probe.
const (
	probeAheadShare = 0.1
	probeAheadTime  = time.Second
)

// sizeAheadTime bounds the time each progress tick spends sizing the next runs.
const sizeAheadTime = 20 * time.Millisecond

// maxSizedTau bounds the runs with Stop.Tau sized beyond one per class: each computes
// its network's λ_max into the registry's cache (64 networks), and sizing more runs
// than the cache holds would evict the values before their runs use them.
const maxSizedTau = 48

// costModel estimates the wall time of a sweep's remaining runs. Runs are grouped into
// classes that differ only by seed. Before the sweep, one run of each class is sized
// (n, m and the step budget B its stop rule fixes: Stop.MaxSteps or τ) and probed
// (probeRun): short runs give its setup time and time per step on this machine. Then
// the other runs are sized (sizeAhead), since B differs between seeds: τ depends on the
// spectrum of each seed's random network (2935 to 6761 steps over five Barabási–Albert
// networks of 1024 nodes, m = 3).
//
// A run's base cost is its class's probe, setup + (B − 1)·step, else its work
// (n + m)·B, else 1. A run's estimate is its base times a factor learnt from finished
// runs (factors): for a class with finished runs, their wall time over their base cost
// (with one pseudo-run at the factor of the other classes, so one odd run does not
// decide it); else, for a probed class, the median of the probed classes' factors
// weighted by wall time (the slow-down of parallel runs and of other load); for a class
// with work only, the rate of the algorithm's runs, else of all; else the mean finished
// run. remaining turns the estimates into the time left.
type costModel struct {
	class []int          // class of each run, by its index in todo
	steps []float64      // step budget of each run (0: not sized)
	done  []bool         // each run finished
	byKey map[string]int // run key → index in todo

	algo    []string  // algorithm name of each class
	peer    []int     // peer group of each class (peerKey): the classes that differ only in their network model
	nm      []float64 // n + m of each class (0: not sized)
	cSteps  []float64 // step budget of the class's first run (0: none)
	probed  []bool    // the class has a probe
	setup   []float64 // probe: wall seconds of the setup and first step
	perStep []float64 // probe: wall seconds of each further step

	sSum []float64 // per class: summed step budgets of its sized runs
	sCnt []int     // and their count

	reg   *registry.Registry // for sizeAhead (nil: no sizing)
	todo  []Run
	sized []bool // each run sized (or tried)
	tried []bool // each class sized and probed (or tried)

	begun      time.Time // when the model was made
	probeAhead float64   // seconds sizeAhead spent probing classes

	cObs, cBase []float64 // per class: summed wall seconds and base costs of finished runs
	cCnt        []int     // finished runs of each class

	algoObs, algoWork map[string]float64
	wObs, wWork       float64 // over finished runs of classes with work only
	allObs            float64
	allCnt            int
}

// classKey is the run's spec without its seed, as JSON.
func classKey(s registry.Spec) string {
	s.Seed = 0
	b, _ := json.Marshal(s)
	return string(b)
}

// peerKey is the run's spec without its seed and network model, as JSON: classes of
// one network, loads and algorithm under different fault models share their probes'
// error far more than classes of other networks do (a probe of the first steps misses
// what later steps cost in the same way), so a class without finished runs borrows its
// peers' factor before the whole sweep's.
func peerKey(s registry.Spec) string {
	s.NetworkModel = nil
	return classKey(s)
}

func newCostModel(reg *registry.Registry, todo []Run) *costModel {
	m := &costModel{byKey: map[string]int{}, algoObs: map[string]float64{}, algoWork: map[string]float64{}}
	ids, peers := map[string]int{}, map[string]int{}
	var rep []int // first run of each class
	for i, r := range todo {
		k := classKey(r.Spec)
		id, ok := ids[k]
		if !ok {
			id = len(rep)
			ids[k] = id
			rep = append(rep, i)
			m.algo = append(m.algo, r.Spec.Algorithm.Name)
			pk := peerKey(r.Spec)
			p, ok := peers[pk]
			if !ok {
				p = len(peers)
				peers[pk] = p
			}
			m.peer = append(m.peer, p)
		}
		m.class = append(m.class, id)
		m.byKey[r.Key] = i
	}
	nc := len(rep)
	m.steps = make([]float64, len(todo))
	m.done = make([]bool, len(todo))
	m.nm, m.cSteps = make([]float64, nc), make([]float64, nc)
	m.probed, m.setup, m.perStep = make([]bool, nc), make([]float64, nc), make([]float64, nc)
	m.cObs, m.cBase, m.cCnt = make([]float64, nc), make([]float64, nc), make([]int, nc)
	m.sSum, m.sCnt = make([]float64, nc), make([]int, nc)
	if reg == nil {
		return m
	}
	deadline := time.Now().Add(sizeBudget)
	m.reg, m.todo, m.sized, m.tried = reg, todo, make([]bool, len(todo)), make([]bool, nc)
	m.begun = time.Now()
	for _, i := range rep {
		if time.Now().After(deadline) {
			break
		}
		m.sizeClass(i, deadline)
	}
	m.sizeAhead(0, deadline)
	return m
}

// sizeClass sizes run i and probes its class (until deadline), the class's first try.
func (m *costModel) sizeClass(i int, deadline time.Time) {
	id := m.class[i]
	m.tried[id], m.sized[i] = true, true
	s := m.todo[i].Spec
	sz, err := m.reg.Size(s)
	if err != nil {
		return
	}
	m.nm[id] = float64(sz.N + sz.Edges)
	m.setSteps(i, sz.MaxSteps)
	m.cSteps[id] = float64(sz.MaxSteps)
	if sz.MaxSteps > 0 {
		m.setup[id], m.perStep[id], m.probed[id] = probeRun(m.reg, s, sz.MaxSteps, deadline)
	}
}

// setSteps records run i's step budget b.
func (m *costModel) setSteps(i int, b int64) {
	if b <= 0 {
		return
	}
	m.steps[i] = float64(b)
	m.sSum[m.class[i]] += float64(b)
	m.sCnt[m.class[i]]++
}

// sizeAhead sizes the runs from index next on that are not sized yet, in todo order
// (the order the workers take them), until deadline or maxSizedTau runs ahead of next
// with Stop.Tau: those compute λ_max into the registry's cache just before their runs
// read it there. Called before the sweep and then between progress lines, it keeps
// every run's own step budget known shortly before the run starts, at the cost of
// building each run's network once more.
func (m *costModel) sizeAhead(next int, deadline time.Time) {
	if m.reg == nil {
		return
	}
	// A class the first sizing had no time for is sized and probed here, the one of the
	// next run first, while the probes so far took at most probeAheadShare of the time
	// since the model was made (they share the machine with the workers).
	if m.probeAhead <= probeAheadShare*time.Since(m.begun).Seconds() {
		for i := next; i < len(m.todo); i++ {
			if m.done[i] || m.tried[m.class[i]] {
				continue
			}
			t0 := time.Now()
			m.sizeClass(i, t0.Add(probeAheadTime))
			m.probeAhead += time.Since(t0).Seconds()
			break
		}
	}
	tau := 0
	for i := next; i < len(m.todo) && time.Now().Before(deadline); i++ {
		r := m.todo[i]
		if r.Spec.Stop.Tau {
			if tau++; tau > maxSizedTau {
				return
			}
		}
		if m.sized[i] || m.done[i] || m.cSteps[m.class[i]] <= 0 {
			continue
		}
		m.sized[i] = true
		if sz, err := m.reg.Size(r.Spec); err == nil {
			m.setSteps(i, sz.MaxSteps)
		}
	}
}

// probeRun times short runs of s to estimate the wall seconds of the whole run with its
// step budget: a run of 1 step (t1: the setup, network, loads, balancer and Init, and a
// step), then runs of 1 + k steps for k = 8, 32, 128 ... until they take probeDelta more
// than t1 or probeTime is spent (each timing the least of two runs), giving the time per step. It returns t1 as setup and the
// time per further step; a run that ends within the probe (k = budget − 1) gives the
// step time that makes setup + (budget − 1)·step its time. ok is false if a probe run
// fails or deadline passes.
func probeRun(reg *registry.Registry, s registry.Spec, budget int64, deadline time.Time) (setup, step float64, ok bool) {
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	run := func(steps int64) (float64, bool) {
		p := s
		p.Stop.MaxSteps = steps
		t0 := time.Now()
		out, err := reg.Run(ctx, p, &tokendist.RunOptions{Workers: 1})
		return time.Since(t0).Seconds(), err == nil && out.Result.Status != tokendist.StatusFailed
	}
	// best is the least of two timings of a run of the given steps: the probe shares
	// the machine with the sweep's workers, and a stall of a few milliseconds, times the
	// budget over k steps, would make a short run look like a long one.
	best := func(steps int64) (float64, bool) {
		a, ok := run(steps)
		if !ok {
			return 0, false
		}
		b, ok := run(steps)
		return min(a, b), ok
	}
	if _, ok := run(1); !ok {
		return 0, 0, false
	}
	if budget <= 1 {
		t1, ok := best(1)
		return t1, 0, ok
	}
	// The first run also fills the registry's per-network caches (λ_max, the peripheral
	// node), which the sweep's runs of the same network then share: time one step again,
	// so that the setup is not counted as the cost of the steps (nor subtracted from it).
	t1, ok := best(1)
	if !ok {
		return 0, 0, false
	}
	stop := time.Now().Add(probeTime)
	for k := int64(8); ; k *= 4 {
		k = min(k, budget-1)
		tk, ok := best(1 + k)
		if !ok {
			return 0, 0, false
		}
		if k == budget-1 || tk-t1 >= probeDelta || time.Now().After(stop) {
			return t1, max(tk-t1, 0) / float64(k), true
		}
	}
}

// runSteps is run i's step budget, or the mean of its class's sized runs when the run
// was not sized.
func (m *costModel) runSteps(i int) float64 {
	if m.steps[i] > 0 {
		return m.steps[i]
	}
	if id := m.class[i]; m.sCnt[id] > 0 {
		return m.sSum[id] / float64(m.sCnt[id])
	}
	return 0
}

// base is run i's base cost: its class's probe estimate, else its work, else 1.
func (m *costModel) base(i int) float64 {
	id := m.class[i]
	b := max(m.runSteps(i), 1)
	switch {
	case m.probed[id]:
		return max(m.setup[id]+m.perStep[id]*(b-1), 1e-6)
	case m.nm[id] > 0:
		return m.nm[id] * b
	}
	return 1
}

// skip records a finished run without learning from its wall time.
func (m *costModel) skip(r Record) {
	if i, ok := m.byKey[r.Run.Key]; ok {
		m.done[i] = true
	}
}

// finished records a finished run.
func (m *costModel) finished(r Record) {
	i, ok := m.byKey[r.Run.Key]
	if !ok || m.done[i] {
		return
	}
	m.done[i] = true
	id := m.class[i]
	w, b := r.Wall.Seconds(), m.base(i)
	m.cObs[id] += w
	m.cBase[id] += b
	m.cCnt[id]++
	m.allObs += w
	m.allCnt++
	switch {
	case m.probed[id]:
	case m.nm[id] > 0:
		m.algoObs[m.algo[id]] += w
		m.algoWork[m.algo[id]] += b
		m.wObs += w
		m.wWork += b
	}
}

// factorStats is what factors learns besides the factors: how far they scatter.
type factorStats struct {
	spread     float64 // log standard deviation of the finished probed classes' factors (+Inf below 3)
	peerSpread float64 // the pooled log standard deviation within peer groups (+Inf below 2 degrees of freedom)
	peerDone   []int   // per peer group (peerGroup): its finished classes
}

// peerGroup is class id's peer group: its peerKey and whether it was probed (the
// factors of probed and unprobed classes turn different base costs into wall time).
func (m *costModel) peerGroup(id int) int {
	if m.probed[id] {
		return 2 * m.peer[id]
	}
	return 2*m.peer[id] + 1
}

// factors returns the factor that turns each class's base cost into wall seconds
// (0: no evidence): a class with finished runs its own (with one pseudo-run at the
// borrowed factor), else its peers' median (peerKey), else the whole sweep's. It also
// returns the spreads of the probed classes' factors, over the sweep and within peer
// groups (over the probed classes, and within groups over all).
func (m *costModel) factors() (f []float64, st factorStats) {
	f = make([]float64, len(m.algo))
	mean := 0.0
	if m.allCnt > 0 {
		mean = m.allObs / float64(m.allCnt)
	}
	// The factor of the probed classes is the median of their own factors, each
	// weighted by its finished runs' wall time: a probe thrown far off by a stall of the
	// machine sets its class's factor, not the others', and runs of milliseconds, whose
	// factors are mostly noise, weigh little.
	// Classes whose runs take less than minFactorWall are left out while others are
	// there: their factors measure the overhead of a run more than its steps.
	var pf, short []weighted
	byPeer := map[int][]weighted{} // the factors of each peer group's finished classes
	for id := range m.algo {
		if m.cCnt[id] > 0 {
			byPeer[m.peerGroup(id)] = append(byPeer[m.peerGroup(id)], weighted{m.cObs[id] / m.cBase[id], m.cObs[id]})
		}
		if m.probed[id] && m.cCnt[id] > 0 {
			v := weighted{m.cObs[id] / m.cBase[id], m.cObs[id]}
			if m.cObs[id] >= minFactorWall*float64(m.cCnt[id]) {
				pf = append(pf, v)
			} else {
				short = append(short, v)
			}
		}
	}
	if len(pf) == 0 {
		pf = short
	}
	pmed := quantile(pf, 0.5) // sorts pf
	peerMed := make(map[int]float64, len(byPeer))
	st.peerDone = make([]int, 2*len(m.peer)) // peer ids are < the number of classes
	// Within a peer group the factors scatter around the group's mean log factor;
	// pooled over the groups, with one degree of freedom lost per group.
	var wsq float64
	dof := 0
	for p, xs := range byPeer {
		peerMed[p] = quantile(xs, 0.5)
		st.peerDone[p] = len(xs)
		var mean float64
		for _, v := range xs {
			mean += math.Log(v.x)
		}
		mean /= float64(len(xs))
		for _, v := range xs {
			wsq += (math.Log(v.x) - mean) * (math.Log(v.x) - mean)
		}
		dof += len(xs) - 1
	}
	st.peerSpread = math.Inf(1)
	if dof >= 2 {
		st.peerSpread = math.Sqrt(wsq / float64(dof))
	}
	// The spread is the standard deviation of the logarithms of the factors,
	// unweighted: a class is a sample of how far probes miss, whatever its runs' length.
	spread := math.Inf(1)
	if n := len(pf); n >= 3 {
		var mean, sq float64
		for _, v := range pf {
			mean += math.Log(v.x)
		}
		mean /= float64(n)
		for _, v := range pf {
			sq += (math.Log(v.x) - mean) * (math.Log(v.x) - mean)
		}
		spread = math.Sqrt(sq / float64(n-1))
	}
	st.spread = spread
	for id := range m.algo {
		var g float64 // the factor of the other classes with the same kind of base
		switch {
		case peerMed[m.peerGroup(id)] > 0:
			g = peerMed[m.peerGroup(id)]
		case m.probed[id] && pmed > 0:
			g = pmed
		case !m.probed[id] && m.nm[id] > 0 && m.algoWork[m.algo[id]] > 0:
			g = m.algoObs[m.algo[id]] / m.algoWork[m.algo[id]]
		case !m.probed[id] && m.nm[id] > 0 && m.wWork > 0:
			g = m.wObs / m.wWork
		case !m.probed[id] && m.nm[id] == 0:
			g = mean
		}
		if m.cCnt[id] > 0 {
			if g > 0 { // one pseudo-run of the class's mean base at g
				pb := m.cBase[id] / float64(m.cCnt[id])
				f[id] = (m.cObs[id] + g*pb) / (m.cBase[id] + pb)
			} else {
				f[id] = m.cObs[id] / m.cBase[id]
			}
			continue
		}
		f[id] = g
	}
	return f, st
}

// weighted is a value with a weight.
type weighted struct{ x, w float64 }

// quantile returns the q-quantile of the values in xs by weight (the least x with at
// least q of the weight at or below it; 0 for none), sorting xs. O(len(xs) log len(xs)).
func quantile(xs []weighted, q float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	sort.Slice(xs, func(i, j int) bool { return xs[i].x < xs[j].x })
	var tot float64
	for _, v := range xs {
		tot += v.w
	}
	var acc float64
	for _, v := range xs {
		acc += v.w
		if acc >= q*tot {
			return v.x
		}
	}
	return xs[len(xs)-1].x
}

// runEstimate returns the estimated wall seconds of run i under the factors f.
func (m *costModel) runEstimate(i int, f []float64) float64 {
	return m.base(i) * f[m.class[i]]
}

// runningRun is a run in progress: its index in todo and seconds since it started.
type runningRun struct {
	i       int
	elapsed float64
	beside  bool // started while sizeRuns probed: slowed by the probes
}

// remaining returns the estimated wall seconds until the sweep ends: the factor of
// each class is at least the time so far over the base cost of any of its runs in
// progress, the runs in progress finish their estimated time (at least a tenth of the
// time they have run already, when they overrun it), and the runs not started, next
// in todo order from index next, go to whichever of the workers is free first. ok is
// false while the model is estimating: no run has finished, or the runs whose class
// has no finished run could put it off by more than a factor of 2. Those runs are of
// two parts: the runs of classes with a finished peer (peerKey), a share u₁ of the
// estimate, and the others, a share u₂; it is estimating while u₁·(x₁ − 1) + u₂·(x₂ −
// 1) > 1, with x = exp(2.5·σ·√(1/k + 1.57/n)): for the first part σ the log spread
// within peer groups and n the fewest finished peers of its classes, for the second σ
// the log spread of the factors of the n ≥ 3 finished classes (+Inf below 3), and k
// the effective number of classes the part is spread over; and while a run of a class
// not sized yet is left (sizeAhead sizes and probes them). It costs O(R log W + C)
// for R runs left, W workers and C classes.
func (m *costModel) remaining(running []runningRun, next, workers int) (secs float64, ok bool) {
	if m.allCnt == 0 {
		return 0, false
	}
	f, st := m.factors()
	// A run in progress for longer than its estimate shows that its class's factor is
	// at least its time so far over its base cost (probes of the first steps from a
	// point mass miss what later steps cost on a network the load spreads over slowly).
	// A run started beside the probes is left out: they slowed it.
	for _, r := range running {
		if r.beside {
			continue
		}
		id := m.class[r.i]
		f[id] = max(f[id], r.elapsed/m.base(r.i))
	}
	var unowned, total float64
	uc := make([]float64, len(m.algo)) // per class without finished runs: its estimate
	free := make(minHeap, 0, max(workers, len(running)))
	for _, r := range running {
		e := m.runEstimate(r.i, f)
		rem := max(e-r.elapsed, r.elapsed/10)
		free = append(free, rem)
		total += rem
		if m.cCnt[m.class[r.i]] == 0 {
			unowned += rem
			uc[m.class[r.i]] += rem
		}
	}
	for len(free) < workers {
		free = append(free, 0)
	}
	heap.Init(&free)
	for i := next; i < len(m.class); i++ {
		if m.done[i] {
			continue
		}
		e := m.runEstimate(i, f)
		total += e
		if m.cCnt[m.class[i]] == 0 {
			unowned += e
			uc[m.class[i]] += e
		}
		free[0] += e
		heap.Fix(&free, 0)
	}
	for _, t := range free {
		secs = max(secs, t)
	}
	// The runs of classes without finished runs are estimated at the median factor. If
	// a class's factor differs from it as the finished classes' factors do (log standard
	// deviation σ over n classes, each class independent of the others), the unowned
	// part, spread over classes as if over k of equal shares, is off by a log error of
	// about σ·√(1/k + 1.57/n) (the second term: the median's own error). At 2.5 times
	// that (x; the margin stands for the assumption of independent classes), the whole
	// is off by at most 1 + u·(x − 1), u the unowned share of the estimate.
	if unowned == 0 {
		return secs, true
	}
	// The two parts: classes with a finished peer (their factor is their peers'), and
	// the others (the sweep's).
	var sum, sq [2]float64
	nPeer := math.MaxInt
	for id, e := range uc {
		if e == 0 {
			continue
		}
		if m.tried != nil && !m.tried[id] {
			// Not sized yet: its estimate is the mean wall time of a run, which says
			// nothing about this class.
			return secs, false
		}
		part := 1
		if d := st.peerDone[m.peerGroup(id)]; d > 0 {
			part = 0
			nPeer = min(nPeer, d)
		}
		sum[part] += e
		sq[part] += e * e
	}
	n := 0
	for id := range m.algo {
		if m.probed[id] && m.cCnt[id] > 0 {
			n++
		}
	}
	spreads, ns := [2]float64{st.peerSpread, st.spread}, [2]int{nPeer, max(n, 1)}
	var off float64
	for part := range 2 {
		if sum[part] == 0 {
			continue
		}
		k := sum[part] * sum[part] / sq[part]
		x := math.Exp(2.5 * spreads[part] * math.Sqrt(1/k+1.57/float64(ns[part])))
		off += sum[part] / total * (x - 1)
	}
	return secs, off <= 1
}

// minHeap is a min-heap of worker free times.
type minHeap []float64

func (h minHeap) Len() int           { return len(h) }
func (h minHeap) Less(i, j int) bool { return h[i] < h[j] }
func (h minHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *minHeap) Push(x any)        { *h = append(*h, x.(float64)) }
func (h *minHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// progress draws a bar on a terminal or prints plain lines periodically: runs done of
// the total, failures, elapsed time and the ETA of the cost model. begin may be called
// from the workers; the other methods from one goroutine.
type progress struct {
	w        io.Writer
	term     bool
	every    time.Duration
	total    int
	skipped  int
	done     int
	failed   int
	workers  int
	cost     *costModel
	start    time.Time
	lastLine time.Time

	mu      sync.Mutex
	started map[string]time.Time // runs in progress: start time by key
	begun   int                  // runs started, a prefix of todo in dispatch order
}

// newProgressShell returns the progress display without its cost model, so that the
// workers can report starts (begin) while sizeRuns sizes and probes.
func newProgressShell(o SweepOptions, todo []Run, skipped, workers int) *progress {
	p := &progress{w: o.Progress, term: o.Terminal, every: o.Every, total: len(todo), skipped: skipped, workers: max(workers, 1), start: time.Now(),
		started: map[string]time.Time{}}
	if p.every <= 0 {
		p.every = 10 * time.Second
	}
	p.lastLine = p.start
	return p
}

// sizeRuns builds the cost model (sizing and probing the runs, at most sizeBudget) and
// prints the count of runs to do.
func (p *progress) sizeRuns(reg *registry.Registry, todo []Run) {
	if p.w == nil {
		return
	}
	if reg != nil && len(todo) > 0 {
		fmt.Fprintf(p.w, "sweep: sizing and timing each kind of run for the ETA (at most %s)\n", sizeBudget)
	}
	p.cost = newCostModel(reg, todo)
	fmt.Fprintf(p.w, "sweep: %d runs to do, %d already in the database\n", len(todo), p.skipped)
	p.start = time.Now() // sizing the runs is not part of their ETA
	p.lastLine = p.start
}

func newProgress(o SweepOptions, reg *registry.Registry, todo []Run, skipped, workers int) *progress {
	p := newProgressShell(o, todo, skipped, workers)
	p.sizeRuns(reg, todo)
	return p
}

// begin records that a worker started the run with key k. Safe for concurrent use.
func (p *progress) begin(k string) {
	if p == nil {
		return
	}
	p.mu.Lock()
	p.started[k] = time.Now()
	p.begun++
	p.mu.Unlock()
}

// add records finished runs. A run that spent more than a quarter of its time while
// sizeRuns probed (the workers start at once) counts as done but not as evidence: the
// probes slowed it, and its class's factor would overstate the runs that follow.
func (p *progress) add(recs []Record, failed int) {
	p.done += len(recs)
	p.failed = failed
	p.mu.Lock()
	slowed := make([]bool, len(recs))
	for j, r := range recs {
		if t0, ok := p.started[r.Run.Key]; ok && p.start.Sub(t0) > r.Wall/4 {
			slowed[j] = true
		}
		delete(p.started, r.Run.Key)
	}
	p.mu.Unlock()
	if p.cost != nil {
		for j, r := range recs {
			if slowed[j] {
				p.cost.skip(r)
			} else {
				p.cost.finished(r)
			}
		}
	}
}

// eta returns the estimated time left (costModel.remaining), "estimating" while the
// model lacks evidence, "?" without a model.
func (p *progress) eta() string {
	if p.cost == nil {
		return "?"
	}
	now := time.Now()
	p.mu.Lock()
	var running []runningRun
	for k, t := range p.started {
		if i, ok := p.cost.byKey[k]; ok && !p.cost.done[i] {
			running = append(running, runningRun{i, now.Sub(t).Seconds(), t.Before(p.start)})
		}
	}
	next := p.begun
	p.mu.Unlock()
	left, ok := p.cost.remaining(running, next, p.workers)
	if !ok {
		return "estimating"
	}
	return time.Duration(left * float64(time.Second)).Round(time.Second).String()
}

func (p *progress) tick() {
	if p.w == nil {
		return
	}
	if p.cost != nil {
		p.mu.Lock()
		next := p.begun
		p.mu.Unlock()
		p.cost.sizeAhead(next, time.Now().Add(sizeAheadTime))
	}
	el := time.Since(p.start).Round(time.Second)
	if p.term {
		const width = 30
		fill := 0
		if p.total > 0 {
			fill = width * p.done / p.total
		}
		fmt.Fprintf(p.w, "\r[%s%s] %d/%d runs %5.1f%%, %d failed, elapsed %s, ETA %s ", strings.Repeat("#", fill), strings.Repeat(" ", width-fill),
			p.done, p.total, pct(p.done, p.total), p.failed, el, p.eta())
		return
	}
	if time.Since(p.lastLine) >= p.every {
		p.lastLine = time.Now()
		fmt.Fprintf(p.w, "sweep: %d/%d runs (%.1f%%), %d failed, elapsed %s, ETA %s\n", p.done, p.total, pct(p.done, p.total), p.failed, el, p.eta())
	}
}

func pct(a, b int) float64 {
	if b == 0 {
		return 100
	}
	return 100 * float64(a) / float64(b)
}

func (p *progress) finish(st SweepStats) {
	if p.w == nil {
		return
	}
	if p.term {
		p.tick()
		fmt.Fprintln(p.w)
	}
	fmt.Fprintf(p.w, "sweep: %d runs done (%d failed), %d skipped, %d total, in %s\n", st.Ran, st.Failed, st.Skipped, st.Total, st.Wall.Round(time.Millisecond))
}

// isTerminal reports whether f is a character device.
func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// defaultDB returns sweep's default database for the experiment file without its
// extension, base: base.db, base.quick.db with quick (quick runs never share a
// database with full ones), and .shard-{i}-of-{n} before .db when sharded.
func defaultDB(base string, quick, sharded bool) string {
	if quick {
		base += ".quick"
	}
	if sharded {
		base += ".shard-{i}-of-{n}"
	}
	return base + ".db"
}
