package tokendist

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"unsafe"

	"github.com/tokendist/tokendist/internal/rng"
)

// Workload adds tokens to and removes finished tokens from the loads between the steps of
// a run: the dynamic setting that Houle, Symvonis and Wood leave open (section 6, "Can
// the methods developed in this paper be applied in a dynamic setting?"). Attach one
// with RunOptions.Workload; the same mechanism serves every balancer, and balancers whose
// algorithm assumes a fixed total refuse it in Init with an error (see each balancer's
// doc comment).
//
// Rules: Run calls Init once per run, after the balancer's Init, and Apply after every
// step, once s.Steps counts that step (so the first call sees s.Steps == 1). Apply
// changes s.Loads in place and returns exactly the tokens it added (arrived) and removed
// (completed), both ≥ 0; Run checks at every sample and at the end that the total equals
// the initial total plus all arrivals minus all completions (the Conserves invariant),
// and fails with an *InvariantError otherwise. Apply never removes more than a node's
// load, never makes a total overflow, and does not allocate. Its random choices must
// depend only on (s.Seed, s.Steps) and the loads — the built-in workloads draw from
// their own internal/rng stream keyed by (seed, step, stream) — so a run is identical
// for any worker count. An Apply error stops the run like a Step error.
//
// The built-in workloads: NewPoissonArrivals, NewHotSpotArrivals, NewAdversary,
// NewTraceArrivals, NewService, and the modifiers NewBursts, NewWindow and
// NewCombinedWorkload (arrivals plus service).
type Workload interface {
	Init(s *State) error
	Apply(s *State) (arrived, completed int64, err error)
}

// streamed is implemented by the built-in random workloads: NewCombinedWorkload gives
// each component its own random stream.
type streamed interface{ setStream(int) }

// Stream numbers of the built-in workloads: negative, so they never meet the chunk
// streams (0, 1, 2, ...) of the parallel balancers.
const (
	streamArrivals = -1 - iota
	streamService
	streamStride = 8 // NewCombinedWorkload's component i uses stream −1 − stride·(i+1) − k
)

// maxArrivalsPerStep bounds the tokens one Apply may add (Poisson draws are capped
// there), so totals cannot overflow in any realistic run.
const maxArrivalsPerStep = 1 << 40

// Arrivals is a Poisson arrival process: after every step it draws N ~ Poisson(Λ)
// tokens and gives each to a node drawn uniformly from its target set (every node, or
// the hot-spot nodes). With Λ = λ·n over all n nodes this is exactly independent
// Poisson(λ) arrivals per node. Build it with NewPoissonArrivals or NewHotSpotArrivals. Apply
// costs O(1 + min(N, 8m)) for m target nodes, whatever the rate: when Λ ≥ 8m each
// target draws its own Poisson(Λ/m) count (the same distribution) instead of each token
// being placed. It does not allocate.
type Arrivals struct {
	rate    float64 // λ: per node if perNode, else per network
	perNode bool
	nodes   []int32 // hot spot; nil: every node
	stream  int
	lambda  float64 // Λ for the run
	n       int
	pcg     rand.PCG
	r       *rand.Rand
	pois    poisson
	name    string
	// split: Λ is at least splitFactor arrivals per target, so each target draws its
	// own Poisson(Λ/m) (the same distribution: a Poisson number of arrivals placed
	// uniformly is independent Poisson arrivals per target) in O(m) per step instead
	// of placing each token.
	split bool
	per   poisson
}

// splitFactor is the arrivals per target above which Arrivals draws per target.
const splitFactor = 8

// NewPoissonArrivals returns Poisson arrivals at rate λ = rate tokens per step, per node
// if perNode (each node independently Poisson(λ)) or for the whole network (Poisson(λ)
// tokens at uniformly random nodes). rate must be finite and ≥ 0. O(1).
func NewPoissonArrivals(rate float64, perNode bool) (*Arrivals, error) {
	if !(rate >= 0) || math.IsInf(rate, 0) {
		return nil, badParam("arrival rate %v is not a finite number ≥ 0", rate)
	}
	a := &Arrivals{rate: rate, perNode: perNode, stream: streamArrivals}
	if perNode {
		a.name = fmt.Sprintf("Poisson(%g/node)", rate)
	} else {
		a.name = fmt.Sprintf("Poisson(%g)", rate)
	}
	return a, nil
}

// NewHotSpotArrivals returns Poisson arrivals at rate tokens per step in total, all at the given
// nodes (each arrival at one of them, uniformly): a hot spot. It needs at least one node;
// Init checks that they exist. O(len(nodes)).
func NewHotSpotArrivals(rate float64, nodes ...int) (*Arrivals, error) {
	a, err := NewPoissonArrivals(rate, false)
	if err != nil {
		return nil, err
	}
	if len(nodes) == 0 {
		return nil, badParam("hot spot with no node")
	}
	a.nodes = make([]int32, len(nodes))
	for i, v := range nodes {
		if v < 0 || v > math.MaxInt32 {
			return nil, badParam("hot-spot node %d out of range", v)
		}
		a.nodes[i] = int32(v)
	}
	a.name = fmt.Sprintf("HotSpot(%g at %v)", rate, nodes)
	return a, nil
}

// String names the process, e.g. "Poisson(0.01/node)".
func (a *Arrivals) String() string { return a.name }

// Rate returns the expected arrivals per step on a network of n nodes, in O(1).
func (a *Arrivals) Rate(n int) float64 {
	if a.perNode {
		return a.rate * float64(n)
	}
	return a.rate
}

func (a *Arrivals) setStream(k int) { a.stream = k }

// Init checks the hot-spot nodes against the network and fixes Λ, in O(len(nodes)).
func (a *Arrivals) Init(s *State) error {
	a.n = len(s.Loads)
	for _, v := range a.nodes {
		if int(v) >= a.n {
			return badParam("hot-spot node %d out of range for %d nodes", v, a.n)
		}
	}
	if a.n == 0 && a.rate > 0 {
		return badParam("arrivals on an empty network")
	}
	a.lambda = a.Rate(a.n)
	if a.lambda > maxArrivalsPerStep/2 {
		return badParam("arrival rate %v per step exceeds %d", a.lambda, maxArrivalsPerStep/2)
	}
	if a.r == nil {
		a.r = rand.New(&a.pcg)
	}
	a.pois.setup(a.lambda)
	m := a.n
	if a.nodes != nil {
		m = len(a.nodes)
	}
	a.split = m > 1 && a.lambda >= splitFactor*float64(m)
	if a.split {
		a.per.setup(a.lambda / float64(m))
	}
	return nil
}

// Apply adds this step's arrivals.
func (a *Arrivals) Apply(s *State) (int64, int64, error) {
	if a.lambda == 0 {
		return 0, 0, nil
	}
	rng.Reseed(&a.pcg, s.Seed, s.Steps, a.stream)
	if a.split {
		var k int64
		if a.nodes != nil {
			for _, v := range a.nodes {
				c := a.per.draw(a.r)
				s.Loads[v] += c
				k += c
			}
		} else {
			for v := range a.n {
				c := a.per.draw(a.r)
				s.Loads[v] += c
				k += c
			}
		}
		return k, 0, nil
	}
	k := a.pois.draw(a.r)
	if len(a.nodes) == 1 {
		s.Loads[a.nodes[0]] += k
		return k, 0, nil
	}
	for i := int64(0); i < k; i++ {
		if a.nodes != nil {
			s.Loads[a.nodes[a.r.IntN(len(a.nodes))]]++
		} else {
			s.Loads[a.r.IntN(a.n)]++
		}
	}
	return k, 0, nil
}

// poisson samples Poisson(mu): inversion by multiplication for mu < 10, and Hörmann's
// transformed rejection PTRS ("The transformed rejection method for generating Poisson
// random variables", 1993) otherwise. Exact in distribution up to float64 rounding.
type poisson struct {
	mu, expm, slam, loglam, a, b, invalpha, vr float64
}

func (p *poisson) setup(mu float64) {
	*p = poisson{mu: mu, expm: math.Exp(-mu)}
	if mu >= 10 {
		p.slam = math.Sqrt(mu)
		p.loglam = math.Log(mu)
		p.b = 0.931 + 2.53*p.slam
		p.a = -0.059 + 0.02483*p.b
		p.invalpha = 1.1239 + 1.1328/(p.b-3.4)
		p.vr = 0.9277 - 3.6224/(p.b-2)
	}
}

func (p *poisson) draw(r *rand.Rand) int64 {
	if p.mu <= 0 {
		return 0
	}
	if p.mu < 10 {
		k, prod := int64(0), r.Float64()
		for prod > p.expm {
			k++
			prod *= r.Float64()
		}
		return k
	}
	for {
		u := r.Float64() - 0.5
		v := r.Float64()
		us := 0.5 - math.Abs(u)
		k := math.Floor((2*p.a/us+p.b)*u + p.mu + 0.43)
		if us >= 0.07 && v <= p.vr {
			return min(int64(k), maxArrivalsPerStep)
		}
		if k < 0 || (us < 0.013 && v > us) {
			continue
		}
		lg, _ := math.Lgamma(k + 1)
		if math.Log(v)+math.Log(p.invalpha)-math.Log(p.a/(us*us)+p.b) <= -p.mu+k*p.loglam-lg {
			return min(int64(k), maxArrivalsPerStep)
		}
	}
}

// Adversary adds tokens at the currently heaviest node (the lowest-numbered one on a
// tie) at a long-run rate of rate tokens per step: ⌊rate·t⌋ − ⌊rate·(t−1)⌋ tokens after
// step t, so it is deterministic. It models the adversarial injection of Muthukrishnan
// and Rajaraman (SPAA 1998) in its simplest, most concentrated form. Apply costs O(n)
// (a scan for the heaviest node) and does not allocate.
type Adversary struct{ rate float64 }

// NewAdversary returns the heaviest-node adversary at rate tokens per step (finite, ≥ 0).
func NewAdversary(rate float64) (*Adversary, error) {
	if !(rate >= 0) || rate > maxArrivalsPerStep/2 {
		return nil, badParam("adversary rate %v is not a number in [0, %d]", rate, maxArrivalsPerStep/2)
	}
	return &Adversary{rate: rate}, nil
}

// String names the adversary.
func (a *Adversary) String() string { return fmt.Sprintf("Adversary(%g)", a.rate) }

// Init does nothing: the adversary keeps no state.
func (a *Adversary) Init(*State) error { return nil }

// Apply adds this step's tokens at the heaviest node.
func (a *Adversary) Apply(s *State) (int64, int64, error) {
	t := float64(s.Steps)
	k := int64(math.Floor(a.rate*t) - math.Floor(a.rate*(t-1)))
	if k <= 0 || len(s.Loads) == 0 {
		return 0, 0, nil
	}
	best := 0
	for v, x := range s.Loads {
		if x > s.Loads[best] {
			best = v
		}
	}
	s.Loads[best] += k
	return k, 0, nil
}

// TraceArrivals replays arrivals from a trace: rows (step, node, count) add count tokens
// at node after step. Build it with NewTraceArrivals. Apply costs O(1 + rows of the
// step) and does not allocate.
type TraceArrivals struct {
	rows []traceRow
	next int
}

type traceRow struct {
	step  int64
	node  int32
	count int64
}

// NewTraceArrivals reads a CSV trace of arrivals: one row per (step, node, count), with
// step ≥ 1, node ≥ 0 and 0 ≤ count ≤ 2^40, an optional header row "step,node,count",
// rows in any order (several rows may name the same step and node). Errors name the
// offending line. It costs O(r log r) for r rows; Init checks the nodes.
func NewTraceArrivals(r io.Reader) (*TraceArrivals, error) {
	if r == nil {
		return nil, badParam("nil trace reader")
	}
	cr := csv.NewReader(&recordLimitReader{r: r})
	cr.FieldsPerRecord = 3
	cr.TrimLeadingSpace = true
	t := &TraceArrivals{}
	for line := 1; ; line++ {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, wrapf(err, "arrival trace")
		}
		if line == 1 && strings.EqualFold(strings.TrimSpace(rec[0]), "step") {
			continue
		}
		var v [3]int64
		for i, f := range rec {
			if v[i], err = strconv.ParseInt(strings.TrimSpace(f), 10, 64); err != nil {
				return nil, badParam("arrival trace line %d: field %d %s is not an integer", line, i+1, quote([]byte(f)))
			}
		}
		if v[0] < 1 || v[1] < 0 || v[1] > math.MaxInt32 || v[2] < 0 || v[2] > maxArrivalsPerStep {
			return nil, badParam("arrival trace line %d: (step %d, node %d, count %d) out of range", line, v[0], v[1], v[2])
		}
		if len(t.rows) == cap(t.rows) {
			if err := checkAlloc(fmt.Sprintf("arrival trace line %d: the rows", line), int64(3*len(t.rows)+16), int64(unsafe.Sizeof(traceRow{}))); err != nil {
				return nil, err
			}
		}
		t.rows = append(t.rows, traceRow{v[0], int32(v[1]), v[2]})
	}
	sort.SliceStable(t.rows, func(i, j int) bool { return t.rows[i].step < t.rows[j].step })
	return t, nil
}

// String names the trace.
func (t *TraceArrivals) String() string { return fmt.Sprintf("Trace(%d rows)", len(t.rows)) }

// Init checks the nodes against the network and rewinds the trace, in O(r).
func (t *TraceArrivals) Init(s *State) error {
	for _, r := range t.rows {
		if int(r.node) >= len(s.Loads) {
			return badParam("arrival trace names node %d of a network of %d nodes", r.node, len(s.Loads))
		}
	}
	t.next = 0
	return nil
}

// Apply adds the rows of step s.Steps.
func (t *TraceArrivals) Apply(s *State) (int64, int64, error) {
	var k int64
	for t.next < len(t.rows) && t.rows[t.next].step < s.Steps {
		t.next++
	}
	end := t.next
	for ; end < len(t.rows) && t.rows[end].step == s.Steps; end++ {
		if k += t.rows[end].count; k > 1<<62 {
			return 0, 0, overflow("arrival trace: step %d adds more than 2^62 tokens", s.Steps)
		}
	}
	for ; t.next < end; t.next++ {
		r := t.rows[t.next]
		s.Loads[r.node] += r.count
	}
	return k, 0, nil
}

// Service completes tokens at a service rate μ per node: after every step, each node
// completes ⌊μ⌋ tokens plus one more with probability μ − ⌊μ⌋ (independently), but never
// more than its load — the discrete-time analogue of one server per node. With Poisson
// arrivals at λ per node, ρ = λ/μ is the load factor. Apply costs O(n) when μ ≥ 1 and
// O(1 + μ·n) expected otherwise (the nodes that get the extra completion are found by
// geometric skips), and does not allocate.
type Service struct {
	rate   float64
	whole  int64
	frac   float64
	logq   float64
	stream int
	pcg    rand.PCG
	r      *rand.Rand
}

// NewService returns completions at rate tokens per node per step (finite, ≥ 0).
func NewService(rate float64) (*Service, error) {
	if !(rate >= 0) || rate > maxArrivalsPerStep/2 {
		return nil, badParam("service rate %v is not a number in [0, %d]", rate, maxArrivalsPerStep/2)
	}
	w := math.Floor(rate)
	sv := &Service{rate: rate, whole: int64(w), frac: rate - w, stream: streamService}
	sv.logq = math.Log1p(-sv.frac)
	return sv, nil
}

// String names the service.
func (sv *Service) String() string { return fmt.Sprintf("Service(%g/node)", sv.rate) }

// Rate returns μ.
func (sv *Service) Rate() float64 { return sv.rate }

func (sv *Service) setStream(k int) { sv.stream = k }

// Init prepares the random source.
func (sv *Service) Init(*State) error {
	if sv.r == nil {
		sv.r = rand.New(&sv.pcg)
	}
	return nil
}

// Apply completes this step's tokens.
func (sv *Service) Apply(s *State) (int64, int64, error) {
	var done int64
	loads := s.Loads
	if sv.whole > 0 {
		for v, x := range loads {
			c := min(max(x, 0), sv.whole)
			loads[v] = x - c
			done += c
		}
	}
	if sv.frac == 0 {
		return 0, done, nil
	}
	rng.Reseed(&sv.pcg, s.Seed, s.Steps, sv.stream)
	n := len(loads)
	for v := sv.skip(-1); v < n; v = sv.skip(v) {
		if loads[v] > 0 {
			loads[v]--
			done++
		}
	}
	return 0, done, nil
}

// skip returns the next node after v that gets an extra completion: the gap is
// geometric with success probability frac.
func (sv *Service) skip(v int) int {
	u := 1 - sv.r.Float64() // (0, 1]
	g := math.Floor(math.Log(u) / sv.logq)
	if g >= float64(math.MaxInt32) {
		return math.MaxInt
	}
	return v + 1 + int(g)
}

// Bursts switches a workload on and off: it applies w during on steps, then nothing
// during off steps, repeating (steps 1..on are on). Build it with NewBursts. Apply costs
// w's Apply in on steps and O(1) otherwise.
type Bursts struct {
	w       Workload
	on, off int64
}

// NewBursts returns w switched on for on steps and off for off steps, repeatedly; on ≥ 1
// and off ≥ 0.
func NewBursts(w Workload, on, off int64) (*Bursts, error) {
	if w == nil {
		return nil, badParam("nil workload")
	}
	if on < 1 || off < 0 {
		return nil, badParam("bursts on %d, off %d: need on ≥ 1 and off ≥ 0", on, off)
	}
	return &Bursts{w: w, on: on, off: off}, nil
}

// String names the bursts.
func (b *Bursts) String() string {
	return fmt.Sprintf("Bursts(%v, on %d, off %d)", workloadName(b.w), b.on, b.off)
}

// Init initialises w.
func (b *Bursts) Init(s *State) error { return b.w.Init(s) }

// Apply applies w in an on step.
func (b *Bursts) Apply(s *State) (int64, int64, error) {
	if (s.Steps-1)%(b.on+b.off) >= b.on {
		return 0, 0, nil
	}
	return b.w.Apply(s)
}

func (b *Bursts) setStream(k int) {
	if st, ok := b.w.(streamed); ok {
		st.setStream(k)
	}
}

// Window applies a workload only after steps from..until (inclusive); until 0 means no
// end. Build it with NewWindow.
type Window struct {
	w           Workload
	from, until int64
}

// NewWindow returns w restricted to the steps from..until (from ≥ 1; until ≥ from, or 0
// for no end).
func NewWindow(w Workload, from, until int64) (*Window, error) {
	if w == nil {
		return nil, badParam("nil workload")
	}
	if from < 1 || (until != 0 && until < from) {
		return nil, badParam("window from %d until %d: need 1 ≤ from ≤ until (or until 0)", from, until)
	}
	return &Window{w: w, from: from, until: until}, nil
}

// String names the window.
func (w *Window) String() string {
	return fmt.Sprintf("Window(%v, %d..%d)", workloadName(w.w), w.from, w.until)
}

// Init initialises the inner workload.
func (w *Window) Init(s *State) error { return w.w.Init(s) }

// Apply applies the inner workload inside the window.
func (w *Window) Apply(s *State) (int64, int64, error) {
	if s.Steps < w.from || (w.until != 0 && s.Steps > w.until) {
		return 0, 0, nil
	}
	return w.w.Apply(s)
}

func (w *Window) setStream(k int) {
	if st, ok := w.w.(streamed); ok {
		st.setStream(k)
	}
}

// CombinedWorkload applies several workloads in order after every step (for example
// arrivals, then service). Build it with NewCombinedWorkload, which gives each built-in
// random component its own stream, so two components never share random draws.
type CombinedWorkload struct{ parts []Workload }

// NewCombinedWorkload returns the workloads applied in the given order. It needs at
// least one, none nil. O(len(ws)).
func NewCombinedWorkload(ws ...Workload) (*CombinedWorkload, error) {
	if len(ws) == 0 {
		return nil, badParam("no workload to combine")
	}
	c := &CombinedWorkload{parts: make([]Workload, len(ws))}
	for i, w := range ws {
		if w == nil {
			return nil, badParam("workload %d is nil", i)
		}
		c.parts[i] = w
		if st, ok := w.(streamed); ok {
			st.setStream(-1 - streamStride*(i+1))
		}
	}
	return c, nil
}

// String names the parts joined by " + ".
func (c *CombinedWorkload) String() string {
	names := make([]string, len(c.parts))
	for i, w := range c.parts {
		names[i] = workloadName(w)
	}
	return strings.Join(names, " + ")
}

// Parts returns the components in order.
func (c *CombinedWorkload) Parts() []Workload { return append([]Workload(nil), c.parts...) }

// Init initialises every part.
func (c *CombinedWorkload) Init(s *State) error {
	for _, w := range c.parts {
		if err := w.Init(s); err != nil {
			return err
		}
	}
	return nil
}

// Apply applies every part in order and adds up their counts.
func (c *CombinedWorkload) Apply(s *State) (int64, int64, error) {
	var in, out int64
	for _, w := range c.parts {
		a, d, err := w.Apply(s)
		if err != nil {
			return in, out, err
		}
		in, out = in+a, out+d
	}
	return in, out, nil
}

// workloadName names a workload by its String method or its Go type.
func workloadName(w Workload) string {
	if s, ok := w.(fmt.Stringer); ok {
		return s.String()
	}
	return fmt.Sprintf("%T", w)
}
