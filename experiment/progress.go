package experiment

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/tokendist/tokendist"
	"github.com/tokendist/tokendist/registry"
)

// sizeBudget bounds the time newProgress spends sizing and probing the classes of
// runs; classes left out are estimated from their work or the mean run.
const sizeBudget = 10 * time.Second

// probeTime is about how long newProgress spends timing the steps of one class.
const probeTime = 50 * time.Millisecond

// costModel estimates the wall time of a sweep's remaining runs. Runs are grouped into
// classes that differ only by seed. Before the sweep, one run of each class is sized
// (n, m and the step budget B its stop rule fixes: Stop.MaxSteps or τ) and probed
// (probeRun): short runs give its setup time and time per step on this machine, so the
// class's estimate is the setup plus B steps. Runs differ in cost by more than
// (n + m)·B says (a setup that searches the whole network, memory locality), which a
// probe sees and a formula does not.
//
// During the sweep, a class with finished runs is estimated by their mean wall time;
// another by its probe estimate times the ratio of the finished runs' wall time to
// their probe estimates (the slow-down of parallel runs and of other load); a class
// that could not be probed (no fixed budget, or the time for probing ran out) by its
// work (n + m)·B (B = n when the balancer's own budget applies) at the wall time per
// unit of work of the finished runs of its algorithm, else of all; else by the mean
// finished run.
type costModel struct {
	class     []int          // class of each run, by its index in todo
	byKey     map[string]int // run key → index in todo
	algo      []string       // algorithm name of each class
	work      []float64      // work of each class (0: not sized)
	probe     []float64      // probe estimate of each class's wall seconds (0: none)
	left      []int          // runs of each class not finished
	sum       []float64      // summed wall seconds of each class's finished runs
	cnt       []int          // finished runs of each class
	algoWall  map[string]float64
	algoWork  map[string]float64
	wall, wrk float64 // over every finished run with work
	pWall     float64 // wall seconds of the finished runs with a probe estimate
	pEst      float64 // and their probe estimates
	allWall   float64
	allCnt    int
}

// classKey is the run's spec without its seed, as JSON.
func classKey(s registry.Spec) string {
	s.Seed = 0
	b, _ := json.Marshal(s)
	return string(b)
}

func newCostModel(reg *registry.Registry, todo []Run) *costModel {
	m := &costModel{byKey: map[string]int{}, algoWall: map[string]float64{}, algoWork: map[string]float64{}}
	ids := map[string]int{}
	var rep []registry.Spec
	for i, r := range todo {
		k := classKey(r.Spec)
		id, ok := ids[k]
		if !ok {
			id = len(rep)
			ids[k] = id
			rep = append(rep, r.Spec)
			m.algo = append(m.algo, r.Spec.Algorithm.Name)
			m.left = append(m.left, 0)
		}
		m.class = append(m.class, id)
		m.byKey[r.Key] = i
		m.left[id]++
	}
	m.work = make([]float64, len(rep))
	m.probe = make([]float64, len(rep))
	m.sum = make([]float64, len(rep))
	m.cnt = make([]int, len(rep))
	if reg == nil {
		return m
	}
	deadline := time.Now().Add(sizeBudget)
	for id, s := range rep {
		if time.Now().After(deadline) {
			break
		}
		sz, err := reg.Size(s)
		if err != nil {
			continue
		}
		b := float64(sz.MaxSteps)
		if b <= 0 {
			b = float64(sz.N)
		}
		m.work[id] = float64(sz.N+sz.Edges) * max(b, 1)
		if sz.MaxSteps > 0 {
			m.probe[id] = probeRun(reg, s, sz.MaxSteps, deadline)
		}
	}
	return m
}

// probeRun times short runs of s to estimate the wall seconds of the whole run with its
// step budget: a run of 1 step (t1: the setup, network, loads, balancer and Init, and a
// step), then runs of 1 + k steps for k = 8, 32, 128 ... until they take 5 ms more than
// t1 or probeTime is spent, giving the time per step; the estimate is t1 plus budget − 1
// steps. A run that ends within the probe is timed as it is. It returns 0 if a probe
// run fails or deadline passes.
func probeRun(reg *registry.Registry, s registry.Spec, budget int64, deadline time.Time) float64 {
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	run := func(steps int64) (float64, bool) {
		p := s
		p.Stop.MaxSteps = steps
		t0 := time.Now()
		out, err := reg.Run(ctx, p, &tokendist.RunOptions{Workers: 1})
		return time.Since(t0).Seconds(), err == nil && out.Result.Status != tokendist.StatusFailed
	}
	t1, ok := run(1)
	if !ok {
		return 0
	}
	if budget <= 1 {
		return t1
	}
	// The first run also fills the registry's per-network caches (λ_max, the peripheral
	// node), which the sweep's runs of the same network then share: time one step again,
	// so that the setup is not counted as the cost of the steps (nor subtracted from it).
	if t1, ok = run(1); !ok {
		return 0
	}
	stop := time.Now().Add(probeTime)
	for k := int64(8); ; k *= 4 {
		k = min(k, budget-1)
		tk, ok := run(1 + k)
		if !ok {
			return 0
		}
		if k == budget-1 {
			return tk
		}
		if tk-t1 >= 0.005 || time.Now().After(stop) {
			return t1 + max(tk-t1, 0)/float64(k)*float64(budget-1)
		}
	}
}

// finished records a finished run.
func (m *costModel) finished(r Record) {
	i, ok := m.byKey[r.Run.Key]
	if !ok {
		return
	}
	id := m.class[i]
	w := r.Wall.Seconds()
	m.left[id]--
	m.sum[id] += w
	m.cnt[id]++
	m.allWall += w
	m.allCnt++
	if m.work[id] > 0 {
		m.algoWall[m.algo[id]] += w
		m.algoWork[m.algo[id]] += m.work[id]
		m.wall += w
		m.wrk += m.work[id]
	}
	if m.probe[id] > 0 {
		m.pWall += w
		m.pEst += m.probe[id]
	}
}

// remaining returns the estimated wall seconds of the runs not finished (summed over
// runs) and of the longest one, or ok false before any run finished.
func (m *costModel) remaining() (sum, longest float64, ok bool) {
	if m.allCnt == 0 {
		return 0, 0, false
	}
	mean := m.allWall / float64(m.allCnt)
	calib := 1.0
	if m.pEst > 0 {
		calib = m.pWall / m.pEst
	}
	for id, left := range m.left {
		if left <= 0 {
			continue
		}
		var e float64
		switch {
		case m.cnt[id] > 0:
			e = m.sum[id] / float64(m.cnt[id])
		case m.probe[id] > 0:
			e = m.probe[id] * calib
		case m.work[id] > 0 && m.algoWork[m.algo[id]] > 0:
			e = m.work[id] * m.algoWall[m.algo[id]] / m.algoWork[m.algo[id]]
		case m.work[id] > 0 && m.wrk > 0:
			e = m.work[id] * m.wall / m.wrk
		default:
			e = mean
		}
		sum += float64(left) * e
		longest = max(longest, e)
	}
	return sum, longest, true
}

// progress draws a bar on a terminal or prints plain lines periodically: runs done of
// the total, failures, elapsed time and the ETA of the cost model.
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
}

func newProgress(o SweepOptions, reg *registry.Registry, todo []Run, skipped, workers int) *progress {
	p := &progress{w: o.Progress, term: o.Terminal, every: o.Every, total: len(todo), skipped: skipped, workers: max(workers, 1), start: time.Now()}
	if p.every <= 0 {
		p.every = 10 * time.Second
	}
	p.lastLine = p.start
	if p.w != nil {
		if reg != nil && len(todo) > 0 {
			fmt.Fprintf(p.w, "sweep: sizing and timing each kind of run for the ETA (about %s)\n", sizeBudget)
		}
		p.cost = newCostModel(reg, todo)
		fmt.Fprintf(p.w, "sweep: %d runs to do, %d already in the database\n", len(todo), skipped)
		p.start = time.Now() // sizing the runs is not part of their ETA
		p.lastLine = p.start
	}
	return p
}

func (p *progress) add(recs []Record, failed int) {
	p.done += len(recs)
	p.failed = failed
	if p.cost != nil {
		for _, r := range recs {
			p.cost.finished(r)
		}
	}
}

// eta returns the estimated time left: the estimated wall time of the remaining runs
// shared among the workers, and at least the longest remaining run's; "?" before the
// first run finishes.
func (p *progress) eta() string {
	if p.cost == nil {
		return "?"
	}
	sum, longest, ok := p.cost.remaining()
	if !ok {
		return "?"
	}
	left := max(sum/float64(min(p.workers, max(p.total-p.done, 1))), longest)
	return time.Duration(left * float64(time.Second)).Round(time.Second).String()
}

func (p *progress) tick() {
	if p.w == nil {
		return
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
