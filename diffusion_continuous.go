package tokendist

import (
	"fmt"
	"math"
	"runtime"

	"github.com/tokendist/tokendist/internal/par"
)

// ContinuousDiffusion is the continuous (divisible-load) diffusion process of
// Berenbrink et al., section 2.2: ξ(t) = ξ(t−1)·P, that is
// ξ_i(t) = ξ_i(t−1) + Σ_{j∈N(i)} (ξ_j(t−1) − ξ_i(t−1))/(d+1), with d the maximum degree
// (the lazy walk on a non-regular network). Its loads are float64, so it is not a
// Balancer; step it directly, or let a Deviation recorder run it alongside a discrete
// scheme. A step costs O(n + m) and uses the available cores on large networks; each
// load is computed from a fixed-order sum, so results do not depend
// on the number of workers. Step does not allocate.
type ContinuousDiffusion struct {
	ln      *lazyNet
	x, y    []float64
	steps   int64
	grp     par.Group
	workers int
	stepFn  func(lo, hi int)
}

// NewContinuousDiffusion returns the continuous process on net started from the given
// loads (copied). It rejects a nil, empty or disconnected network, isolated nodes,
// loads of the wrong length and non-finite loads. It costs O(n + m).
func NewContinuousDiffusion(net Network, start []float64) (*ContinuousDiffusion, error) {
	ln, err := newLazyNet(net)
	if err != nil {
		return nil, err
	}
	n := ln.g.Order()
	c := &ContinuousDiffusion{ln: ln, x: make([]float64, n), y: make([]float64, n)}
	c.workers = ln.workers(runtime.GOMAXPROCS(0))
	c.stepFn = c.stepChunks
	return c, c.Reset(start)
}

// Reset restarts the process from the given loads (copied) at step 0. It costs O(n).
func (c *ContinuousDiffusion) Reset(start []float64) error {
	if len(start) != len(c.x) {
		return fmt.Errorf("%w: %d continuous loads for a network of %d nodes", ErrBadLoads, len(start), len(c.x))
	}
	for v, x := range start {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return fmt.Errorf("%w: continuous load %v at node %d is not finite", ErrBadLoads, x, v)
		}
	}
	copy(c.x, start)
	c.steps = 0
	return nil
}

// Step advances the process by one round. It costs O(n + m).
func (c *ContinuousDiffusion) Step() {
	c.grp.For(c.ln.chunks(), c.workers, c.stepFn)
	c.x, c.y = c.y, c.x
	c.steps++
}

func (c *ContinuousDiffusion) stepChunks(lo, hi int) {
	v0, _ := c.ln.chunkRange(lo)
	_, v1 := c.ln.chunkRange(hi - 1)
	lazyApply(c.ln, c.y, c.x, v0, v1)
}

// lazyApply sets dst[i] = (P·src)_i for the nodes i in [v0, v1).
func lazyApply(ln *lazyNet, dst, src []float64, v0, v1 int) {
	off, adj := ln.g.off, ln.g.adj
	D := float64(ln.d + 1)
	for i := v0; i < v1; i++ {
		s := float64(ln.d+1-(off[i+1]-off[i])) * src[i]
		for _, j := range adj[off[i]:off[i+1]] {
			s += src[j]
		}
		dst[i] = s / D
	}
}

// Loads returns the current loads; the slice is read-only and changes with Step.
func (c *ContinuousDiffusion) Loads() []float64 { return c.x }

// Steps returns the number of rounds taken since the start.
func (c *ContinuousDiffusion) Steps() int64 { return c.steps }

// Discrepancy returns max ξ − min ξ. It costs O(n).
func (c *ContinuousDiffusion) Discrepancy() float64 {
	mn, mx := c.x[0], c.x[0]
	for _, x := range c.x {
		mn, mx = math.Min(mn, x), math.Max(mx, x)
	}
	return mx - mn
}

// DeviationSample compares a discrete scheme with the continuous process at one step.
type DeviationSample struct {
	// Step is the run's step (round) at the sample.
	Step int64 `json:"step"`
	// Deviation is max_k |X_k(t) − ξ_k(t)|, the quantity Berenbrink et al. bound
	// (Theorem 1.1 bounds it after τ(G, K) rounds; section 2.3, eq. (2.7)).
	Deviation float64 `json:"deviation"`
	// Discrepancy is the discrete scheme's discrepancy max X − min X.
	Discrepancy int64 `json:"discrepancy"`
	// Continuous is the continuous process's discrepancy max ξ − min ξ.
	Continuous float64 `json:"continuous"`
}

// Deviation is a Recorder that runs the continuous process (ContinuousDiffusion) from
// the discrete run's initial loads and, at every sample Run takes, advances it to the
// run's step and records the deviation max_k |X_k(t) − ξ_k(t)| (Berenbrink et al.,
// section 2.3). Plugging in as a Recorder keeps the discrete scheme on Run's one loop
// (any Balancer, Run's stop rules, trace and invariant checks), and the continuous
// process only advances when Run samples, so RunOptions.SampleEvery sets the
// resolution (SampleEvery 1 samples every round):
//
//	dev, err := NewDeviation(net, loads)
//	res, err := Run(ctx, net, loads, b, &RunOptions{SampleEvery: 1, Recorder: dev})
//	samples := dev.Samples()
//
// Comparing RandomMatching with it shows how far a matching scheme is from diffusion,
// not from its own continuous process.
//
// Each sample costs O(n) plus O(n + m) per continuous round it advances. A Deviation
// serves one run at a time; a new run (a sample at step 0) restarts it.
type Deviation struct {
	cont    *ContinuousDiffusion
	start   Loads
	fstart  []float64
	samples []DeviationSample
	// Next, if not nil, receives every sample after the deviation is recorded.
	Next Recorder
}

// NewDeviation returns a Deviation recorder for runs on net from the given loads. It
// rejects what NewContinuousDiffusion rejects and invalid loads (see Loads.Validate). It
// costs O(n + m) time and memory.
func NewDeviation(net Network, start Loads) (*Deviation, error) {
	if _, err := start.Validate(); err != nil {
		return nil, err
	}
	f := make([]float64, len(start))
	for v, x := range start {
		f[v] = float64(x)
	}
	cont, err := NewContinuousDiffusion(net, f)
	if err != nil {
		return nil, err
	}
	return &Deviation{cont: cont, start: start.Clone(), fstart: f}, nil
}

// Record advances the continuous process to s.Steps and records the deviation. It costs
// O(n + m) per round the continuous process advances.
func (r *Deviation) Record(s *State, smp Sample) error {
	if s.Steps == 0 {
		if len(s.Loads) != len(r.start) {
			return fmt.Errorf("%w: run has %d loads, the deviation recorder %d", ErrBadLoads, len(s.Loads), len(r.start))
		}
		for v, x := range s.Loads {
			if x != r.start[v] {
				return fmt.Errorf("%w: run starts with load %d at node %d, the deviation recorder with %d", ErrBadLoads, x, v, r.start[v])
			}
		}
		if err := r.cont.Reset(r.fstart); err != nil {
			return err
		}
		r.samples = r.samples[:0]
	}
	if s.Steps < r.cont.Steps() {
		return badParam("deviation recorder is at step %d, the run at step %d", r.cont.Steps(), s.Steps)
	}
	for r.cont.Steps() < s.Steps {
		r.cont.Step()
	}
	dev := 0.0
	for k, x := range r.cont.Loads() {
		dev = math.Max(dev, math.Abs(float64(s.Loads[k])-x))
	}
	r.samples = append(r.samples, DeviationSample{Step: s.Steps, Deviation: dev, Discrepancy: smp.Discrepancy, Continuous: r.cont.Discrepancy()})
	if r.Next != nil {
		return r.Next.Record(s, smp)
	}
	return nil
}

// Samples returns the samples recorded in the current run (read-only).
func (r *Deviation) Samples() []DeviationSample { return r.samples }

// Continuous returns the continuous process the recorder runs.
func (r *Deviation) Continuous() *ContinuousDiffusion { return r.cont }
