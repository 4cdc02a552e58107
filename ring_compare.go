package tokendist

import (
	"context"
	"math"
	"runtime"

	"github.com/tokendist/tokendist/internal/par"
)

// RingExperiment describes a comparison of ring policies on a family of growing dags, the
// question section 1.3 leaves open: does KS-BF balance randomly growing trees and grids
// well? Set exactly one of Tree and Grid.
type RingExperiment struct {
	// Name labels the family in the result rows.
	Name string
	// Tree builds the family's tree-dag for a seed (for example RandomTreeDag).
	Tree func(seed uint64) (TreeDag, error)
	// Grid builds the family's grid-dag for a seed (for example RandomGridDag).
	Grid func(seed uint64) (GridDag, error)
	// P lists the ring sizes (at least one).
	P []int
	// Policies lists the policies to compare (nil: RingPolicies()).
	Policies []RingPolicy
	// Seeds lists the instances (nil: just seed 1). Seed s builds one dag and also seeds
	// the runs on it (the random-neighbour policy's choices).
	Seeds []uint64
	// MaxTasks is the task budget of each run (0: DefaultRingMaxTasks).
	MaxTasks int64
	// MinTasks skips the instances with fewer tasks (a random dag that died out early),
	// so that the rows describe the dags that grew; skipped instances are not in Runs.
	MinTasks int64
	// Workers bounds the instances run at the same time (0: GOMAXPROCS). The results do
	// not depend on it. Tree and Grid are called one seed at a time, but the dags they
	// return run concurrently, so they must not share state (pure rules may be shared).
	Workers int
}

// RingComparison is one policy on one ring size, over all instances of a family.
type RingComparison struct {
	// Family is RingExperiment.Name, Policy the policy and P the ring size of the row.
	Family string     `json:"family"`
	Policy RingPolicy `json:"policy"`
	P      int        `json:"p"`
	// Runs is the number of instances (seeds).
	Runs int `json:"runs"`
	// Tasks and Time are the mean dag size N and completion time T.
	Tasks float64 `json:"tasks"`
	Time  float64 `json:"time"`
	// Speedup and Efficiency are the means of N/T and N/(pT).
	Speedup    float64 `json:"speedup"`
	Efficiency float64 `json:"efficiency"`
	// OverLowerBound is the mean of T / max(⌈N/p⌉, depth) and WorstOverLowerBound its
	// maximum over the instances. That bound ignores the ring's start-up, so it can be far
	// below the optimum: a ratio above 1 is not a distance from the optimum.
	OverLowerBound      float64 `json:"over_lower_bound"`
	WorstOverLowerBound float64 `json:"worst_over_lower_bound"`
	// OverRingLowerBound is the mean of T / RingStats.RingLowerBound (the ring-aware
	// RingScheduleLowerBound) and WorstOverRingLowerBound its maximum: upper ends of the
	// policy's distance from an optimal schedule (T/optimum is at most this).
	OverRingLowerBound      float64 `json:"over_ring_lower_bound"`
	WorstOverRingLowerBound float64 `json:"worst_over_ring_lower_bound"`
	// OverBestPolicy is the mean of T / (the least T of the compared policies on the same
	// instance and ring) and WorstOverBestPolicy its maximum: lower ends of the policy's
	// distance from an optimal schedule (the best policy's time is an upper bound on the
	// optimum). So the mean of T/optimum lies in [OverBestPolicy, OverRingLowerBound].
	OverBestPolicy      float64 `json:"over_best_policy"`
	WorstOverBestPolicy float64 `json:"worst_over_best_policy"`
	// Excess is the mean of max(0, T - N/p - p)/(N/p): the time beyond the paper's
	// target N/p + p (section 1.3) relative to the ideal N/p; 0 when the target is met.
	Excess float64 `json:"excess"`
}

// RunRingComparison runs every policy on every ring size for every instance of the family and
// returns one row per (ring size, policy), in the order of e.P and e.Policies. It costs
// one simulation per (seed, p, policy), without recording schedules; instances run in
// parallel (e.Workers), the rows of one instance one after the other, so a stateful rule
// (Quadrature) is reset between them. A panic in e.Tree, e.Grid or a dag's growth rule,
// on whichever goroutine it happens, is re-raised on the caller's goroutine after the
// other instances stopped; no goroutine outlives the call.
func RunRingComparison(ctx context.Context, e RingExperiment) ([]RingComparison, error) {
	if ctx == nil {
		return nil, errNilContext
	}
	if (e.Tree == nil) == (e.Grid == nil) {
		return nil, badParam("RingExperiment %q needs exactly one of Tree and Grid", e.Name)
	}
	if len(e.P) == 0 {
		return nil, badParam("RingExperiment %q lists no ring size P", e.Name)
	}
	policies, seeds := e.Policies, e.Seeds
	if policies == nil {
		policies = RingPolicies()
	}
	if seeds == nil {
		seeds = []uint64{1}
	}
	rows := make([]RingComparison, 0, len(e.P)*len(policies))
	for _, p := range e.P {
		for _, pol := range policies {
			rows = append(rows, RingComparison{Family: e.Name, Policy: pol, P: p})
		}
	}
	trees, grids := make([]TreeDag, len(seeds)), make([]GridDag, len(seeds))
	for k, seed := range seeds {
		var err error
		if e.Tree != nil {
			trees[k], err = e.Tree(seed)
		} else {
			grids[k], err = e.Grid(seed)
		}
		if err != nil {
			return nil, wrapf(err, "RingExperiment %q, seed %d", e.Name, seed)
		}
	}
	// Instances run in parallel, each writing only its own slots; the aggregation below
	// goes in seed order, so the result does not depend on the workers.
	stats := make([][]RingStats, len(seeds))
	errs := make([]error, len(seeds))
	workers := e.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	par.Acquire()
	defer par.Release()
	var g par.Group
	g.For(len(seeds), min(workers, len(seeds)), func(lo, hi int) {
		for k := lo; k < hi; k++ {
			stats[k], errs[k] = compareInstance(ctx, e, rows, trees[k], grids[k], seeds[k])
		}
	})
	for k, err := range errs {
		if err != nil {
			return nil, wrapf(err, "RingExperiment %q, seed %d", e.Name, seeds[k])
		}
	}
	best := make(map[int]int64, len(e.P))
	for _, st := range stats {
		if st == nil {
			continue // skipped: fewer than MinTasks tasks
		}
		clear(best)
		for r := range rows {
			if t, ok := best[rows[r].P]; !ok || st[r].Time < t {
				best[rows[r].P] = st[r].Time
			}
		}
		for r := range rows {
			rows[r].add(st[r], best[rows[r].P])
		}
	}
	for r := range rows {
		rows[r].finish()
	}
	return rows, nil
}

// compareInstance runs one instance for every row; it returns nil stats if the instance
// has fewer than e.MinTasks tasks.
func compareInstance(ctx context.Context, e RingExperiment, rows []RingComparison, tree TreeDag, grid GridDag, seed uint64) ([]RingStats, error) {
	stats := make([]RingStats, len(rows))
	for r, row := range rows {
		opts := &RingOptions{Policy: row.Policy, MaxTasks: e.MaxTasks, NoSchedule: true}
		var b *RingScheduler
		var err error
		if tree != nil {
			b, err = NewRingTree(row.P, tree, opts)
		} else {
			b, err = NewRingGrid(row.P, grid, opts)
		}
		if err != nil {
			return nil, err
		}
		if _, err := RunRing(ctx, b, &RunOptions{Seed: seed}); err != nil {
			return nil, err
		}
		stats[r] = b.stats()
		if stats[r].Tasks < e.MinTasks {
			return nil, nil
		}
	}
	return stats, nil
}

// add accumulates one run's statistics (sums; finish turns them into means); best is the
// least time of the compared policies on the same instance and ring.
func (c *RingComparison) add(st RingStats, best int64) {
	c.Runs++
	n, t, p := float64(st.Tasks), float64(st.Time), float64(st.P)
	c.Tasks += n
	c.Time += t
	c.Speedup += st.Speedup
	c.Efficiency += st.Efficiency
	lb := t / float64(st.LowerBound)
	c.OverLowerBound += lb
	c.WorstOverLowerBound = math.Max(c.WorstOverLowerBound, lb)
	rlb := t / float64(st.RingLowerBound)
	c.OverRingLowerBound += rlb
	c.WorstOverRingLowerBound = math.Max(c.WorstOverRingLowerBound, rlb)
	ob := t / float64(best)
	c.OverBestPolicy += ob
	c.WorstOverBestPolicy = math.Max(c.WorstOverBestPolicy, ob)
	c.Excess += math.Max(0, t-n/p-p) / (n / p)
}

func (c *RingComparison) finish() {
	if c.Runs == 0 {
		return
	}
	k := float64(c.Runs)
	c.Tasks /= k
	c.Time /= k
	c.Speedup /= k
	c.Efficiency /= k
	c.OverLowerBound /= k
	c.OverRingLowerBound /= k
	c.OverBestPolicy /= k
	c.Excess /= k
}
