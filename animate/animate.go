package animate

import (
	"context"
	"fmt"
	"math"

	"github.com/tokendist/tokendist"
	"github.com/tokendist/tokendist/internal/errs"
	"github.com/tokendist/tokendist/internal/nilcheck"
)

// Default limits of a Movie (Options.MaxNodes, MaxFrames, MaxBytes).
const (
	DefaultMaxNodes  = 5000     // nodes of the network
	DefaultMaxFrames = 2000     // frames of a movie
	DefaultMaxBytes  = 64 << 20 // bytes of one written GIF, page or SVG
)

// Default picture size in pixels (Options.Width, Height) and its bounds.
const (
	DefaultWidth  = 640  // pixels
	DefaultHeight = 560  // pixels
	MinSide       = 240  // the smallest Width or Height
	MaxSide       = 4096 // the largest Width or Height
)

// Layout names a way to place the nodes (Options.Layout).
type Layout string

// The layouts; the package documentation says how LayoutAuto chooses one.
const (
	LayoutAuto      Layout = ""
	LayoutCircle    Layout = "circle"
	LayoutLattice   Layout = "lattice"
	LayoutHypercube Layout = "hypercube"
	LayoutTree      Layout = "tree"
	LayoutForce     Layout = "force"
)

// Layouts lists the layouts an Options.Layout may name (LayoutAuto as "auto").
var Layouts = []Layout{"auto", LayoutCircle, LayoutLattice, LayoutHypercube, LayoutTree, LayoutForce}

// Flows says what a frame draws on the links (Frame.Flows).
type Flows int

const (
	// FlowsNone: the per-link flows are not known; the frame draws node load changes.
	FlowsNone Flows = iota
	// FlowsTree: exact net flows of a tree network (the unique flow of the changes).
	FlowsTree
	// FlowsMatching: exact flows of a balancer that moves along one known matching
	// per step.
	FlowsMatching
	// FlowsInFlight: a frame of a simulated run (Recorder.Observe); its arrows are the
	// tokens in flight on each link direction at the frame's time (Frame.InFlight).
	FlowsInFlight
)

// String returns "none", "tree", "matching" or "in-flight".
func (f Flows) String() string {
	switch f {
	case FlowsTree:
		return "tree"
	case FlowsMatching:
		return "matching"
	case FlowsInFlight:
		return "in-flight"
	}
	return "none"
}

// Options configures Record and NewRecorder. The zero value (or nil) means the
// defaults: a frame every step, the layout chosen from the network, 640 × 560 pixels,
// the default limits.
type Options struct {
	// Run holds the options of tokendist.Run for Record. Its SampleEvery and Recorder
	// must be zero (Record sets them), and Workload and Churn nil (a movie shows a fixed
	// total on fixed links). NewRecorder ignores it.
	Run tokendist.RunOptions
	// Every takes a frame every that many steps (0: 1), besides the first and last
	// step; negative is an error.
	Every int64
	// EveryTime is the model time between two frames of a simulated run
	// (Recorder.ObserveEvery, RecordSimulation): 0 means 1 for a Recorder, and for
	// RecordSimulation a round interval near a hundredth of the run's model time.
	// Negative, NaN or infinite is an error.
	EveryTime float64
	// Layout places the nodes; LayoutAuto (or "auto") chooses from the network. A
	// layout that does not fit the network (a lattice of a star) is an error.
	Layout Layout
	// Width and Height are the picture's size in pixels (0: DefaultWidth,
	// DefaultHeight), each in MinSide..MaxSide.
	Width, Height int
	// Title is written at the top left (ASCII is safest in a GIF).
	Title string
	// Delay is the time a GIF or HTML frame shows, in hundredths of a second (0: 10).
	Delay int
	// MaxNodes, MaxFrames and MaxBytes bound the movie (0: the defaults): the network's
	// order, the number of frames, and the bytes WriteGIF, WriteHTML or WriteSVG may
	// write. Negative is an error.
	MaxNodes, MaxFrames int
	MaxBytes            int64
}

// Frame is one picture of a Movie. A frame of a simulated run (Recorder.Observe) has
// Flows FlowsInFlight and the fields Time, Down, InFlight and Lost; Moved is then nil.
type Frame struct {
	// Step is the run's step count at the frame (in a simulated run: the events
	// handled).
	Step int64
	// Time is the model time of a simulated run's frame (0 in a stepper run).
	Time float64
	// Down lists the nodes that are crashed at the frame, ascending (simulated runs).
	Down []int
	// InFlight lists, in a simulated run, the tokens in data datagrams in flight on
	// each link direction at the frame, one entry per direction that has any
	// (Tokens > 0: from Links()[i][0] to Links()[i][1]; < 0: the other way).
	InFlight []LinkFlow
	// Lost lists, in a simulated run, the datagrams lost on each link direction since
	// the previous frame (Tokens counts datagrams, signed by direction as in InFlight).
	Lost []LinkFlow
	// Loads are the loads at the frame (read-only).
	Loads tokendist.Loads
	// Discrepancy is Loads' discrepancy.
	Discrepancy int64
	// Flows says what the frame's arrows are (FlowsNone: no arrows, node changes).
	Flows Flows
	// Moved lists the links with a nonzero net flow since the previous frame, as
	// (link index, tokens from Links()[i][0] to Links()[i][1], negative for the other
	// way); nil when Flows is FlowsNone.
	Moved []LinkFlow
}

// LinkFlow is a count on link Link (an index of Movie.Links) from its first end to
// its second (negative: the other way): in Frame.Moved the net number of tokens that
// crossed it, in Frame.InFlight the tokens on their way, in Frame.Lost the datagrams
// lost.
type LinkFlow struct {
	Link   int
	Tokens int64
}

// Movie is a recorded run: the network, its layout and the frames. It is immutable
// once returned, and safe for concurrent writers.
type Movie struct {
	opts   Options
	g      *tokendist.Graph
	layout Layout
	pos    []point
	links  [][2]int
	wrap   []bool // links drawn as two stubs leaving the lattice
	frames []Frame
	title  string
	sim    bool // frames of a simulated run, in model time
}

// Layout returns the layout used, never LayoutAuto, in O(1).
func (m *Movie) Layout() Layout { return m.layout }

// Frames returns the frames in order (read-only), in O(1).
func (m *Movie) Frames() []Frame { return m.frames }

// Links returns the network's links as pairs (u, v), u < v, in the order of
// tokendist.Graph.EdgeList (read-only), in O(1).
func (m *Movie) Links() [][2]int { return m.links }

// Position returns node v's place in the layout, in [0, 1] × [0, 1] (y down), in O(1).
// It panics if v is not a node, as a slice index does.
func (m *Movie) Position(v int) (x, y float64) { return m.pos[v].x, m.pos[v].y }

// matcher is a balancer that moves tokens along the edges of colour ActiveColor(t) of
// its colouring at step t (DimensionExchange, Discrepancy1).
type matcher interface {
	Coloring() *tokendist.EdgeColoring
	ActiveColor(t int64) int
}

// Recorder builds a Movie from the samples of a run: pass it as RunOptions.Recorder
// (SampleEvery 1 for exact matching flows, any for trees), then call Movie. In a run
// with a Workload, a frame whose total changed, or whose changes the active matching
// does not explain, draws node changes (FlowsNone) instead of arrows. One Recorder
// records one run; it is not safe for concurrent use.
type Recorder struct {
	m       *Movie
	b       matcher
	endLink []int32 // edge end (CSR index) → link
	tree    bool
	order   []int32 // BFS order of the tree from node 0
	parent  []int32 // edge end of the link above each node of the tree (unused at the root)
	par     []int32 // parent node
	prev    []int64 // loads at the last sample
	frame   []int64 // loads at the last frame
	acc     []int64 // matching flows since the last frame, per link
	delta   []int64 // scratch
	last    int64   // step of the last sample
	started bool
	pending bool // samples since the last frame
	known   bool // every step since the last frame had known matching flows
	done    bool
	sim     bool // fed by Observe (a simulated run), not Record
	over    bool // Observe refused a frame over MaxFrames
}

// NewRecorder returns a Recorder for runs on net. b, which may be nil, is asked only
// whether it moves along a known matching (see the package documentation). It
// validates opts (the error names the value), checks the node limit and computes the
// layout: O(n + m) for every layout but LayoutForce, O(U · (n log n + m)) for it with
// U ≤ 100 updates.
func NewRecorder(net tokendist.Network, b tokendist.Balancer, opts *Options) (*Recorder, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if err := o.resolve(); err != nil {
		return nil, err
	}
	if nilcheck.IsNil(net) {
		return nil, fmt.Errorf("%w (%T)", tokendist.ErrNilNetwork, net)
	}
	if n := net.Order(); n > o.MaxNodes {
		return nil, errs.TooLargeParam("animate: the network has %d nodes, more than MaxNodes = %d (raise Options.MaxNodes, or animate a smaller network)", n, o.MaxNodes)
	}
	g, err := tokendist.AsGraph(net)
	if err != nil {
		return nil, err
	}
	if g.Order() == 0 {
		return nil, errs.BadParam("animate: a network without nodes")
	}
	m := &Movie{opts: o, g: g, links: g.EdgeList(), title: o.Title}
	if err := m.place(o.Layout); err != nil {
		return nil, err
	}
	r := &Recorder{m: m, tree: g.IsTree()}
	n := g.Order()
	r.endLink = make([]int32, 2*g.Size())
	for i, e := range m.links {
		r.endLink[g.EdgeIndex(e[0], e[1])] = int32(i)
		r.endLink[g.EdgeIndex(e[1], e[0])] = int32(i)
	}
	if mt, ok := b.(matcher); ok && !r.tree { // on a tree the loads give the flows
		if ec := safeColoring(mt); ec != nil && ec.Graph() != nil && ec.Graph().Order() == n && ec.Graph().Size() == g.Size() {
			r.b = mt
		}
	}
	if r.tree {
		r.order, r.par, r.parent = treeOrder(g)
	}
	r.delta = make([]int64, n)
	r.acc = make([]int64, len(m.links))
	return r, nil
}

// safeColoring returns mt's colouring, or nil if mt is a typed nil that panics.
func safeColoring(mt matcher) (ec *tokendist.EdgeColoring) {
	defer func() {
		if recover() != nil {
			ec = nil
		}
	}()
	return mt.Coloring()
}

// treeOrder returns a BFS order of tree g from node 0, each node's parent and the edge
// end of the link to it (unused at the root). O(n).
func treeOrder(g *tokendist.Graph) (order, par, parentEnd []int32) {
	n := g.Order()
	order = make([]int32, 0, n)
	par = make([]int32, n)
	parentEnd = make([]int32, n)
	for i := range par {
		par[i] = -2
	}
	par[0] = 0 // the root: visited (its parent and parent end are never read)
	order = append(order, 0)
	for i := 0; i < len(order); i++ {
		u := int(order[i])
		for _, w := range g.Neighbors(u) {
			if par[w] == -2 {
				par[w] = int32(u)
				parentEnd[w] = int32(g.EdgeIndex(u, int(w)))
				order = append(order, w)
			}
		}
	}
	return order, par, parentEnd
}

// resolve fills in the defaults and validates o.
func (o *Options) resolve() error {
	switch {
	case o.Every < 0:
		return errs.BadParam("animate: Every %d is negative", o.Every)
	case o.Width != 0 && (o.Width < MinSide || o.Width > MaxSide):
		return errs.BadParam("animate: Width %d is outside %d..%d", o.Width, MinSide, MaxSide)
	case o.Height != 0 && (o.Height < MinSide || o.Height > MaxSide):
		return errs.BadParam("animate: Height %d is outside %d..%d", o.Height, MinSide, MaxSide)
	case o.Delay < 0:
		return errs.BadParam("animate: Delay %d is negative", o.Delay)
	case o.MaxNodes < 0:
		return errs.BadParam("animate: MaxNodes %d is negative", o.MaxNodes)
	case o.MaxFrames < 0:
		return errs.BadParam("animate: MaxFrames %d is negative", o.MaxFrames)
	case o.MaxBytes < 0:
		return errs.BadParam("animate: MaxBytes %d is negative", o.MaxBytes)
	case math.IsNaN(o.EveryTime) || math.IsInf(o.EveryTime, 0) || o.EveryTime < 0:
		return errs.BadParam("animate: EveryTime %v is not a time ≥ 0", o.EveryTime)
	}
	if o.Layout == "auto" {
		o.Layout = LayoutAuto
	}
	known := false
	for _, l := range Layouts {
		known = known || l == o.Layout
	}
	if !known && o.Layout != LayoutAuto {
		return errs.BadParam("animate: layout %s (allowed: auto, circle, lattice, hypercube, tree, force)", errs.Quote([]byte(o.Layout)))
	}
	o.Every = max(o.Every, 1)
	if o.Width == 0 {
		o.Width = DefaultWidth
	}
	if o.Height == 0 {
		o.Height = DefaultHeight
	}
	if o.Delay == 0 {
		o.Delay = 10
	}
	if o.MaxNodes == 0 {
		o.MaxNodes = DefaultMaxNodes
	}
	if o.MaxFrames == 0 {
		o.MaxFrames = DefaultMaxFrames
	}
	if o.MaxBytes == 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	return nil
}

// Record receives one sample of the run (tokendist.Recorder). The first sample is the
// first frame; later ones add their flows to the pending frame, which becomes a frame
// when the step is a multiple of Options.Every. More frames than Options.MaxFrames is
// an error wrapping tokendist.ErrTooLarge (which stops the run). It costs O(n) per
// call, plus O(n) to copy the loads of a frame.
func (r *Recorder) Record(s *tokendist.State, smp tokendist.Sample) error {
	if r == nil || s == nil {
		return errs.BadParam("animate: Record on a nil Recorder or State")
	}
	if r.done {
		return errs.BadParam("animate: Record after Movie")
	}
	if r.sim {
		return errs.BadParam("animate: Record after Observe (a Recorder records one run)")
	}
	n := r.m.g.Order()
	if len(s.Loads) != n {
		return errs.BadParam("animate: %d loads for a network of %d nodes", len(s.Loads), n)
	}
	if !r.started {
		r.started, r.known = true, true
		r.prev = append([]int64(nil), s.Loads...)
		r.last = s.Steps
		return r.emit(s.Steps, smp.Discrepancy)
	}
	steps := s.Steps - r.last
	if steps <= 0 {
		return nil
	}
	if r.b != nil {
		r.known = r.known && steps == 1 && r.matchFlows(s.Loads, s.Steps-1)
	}
	copy(r.prev, s.Loads)
	r.last = s.Steps
	r.pending = true
	if s.Steps%r.m.opts.Every == 0 {
		return r.emit(s.Steps, smp.Discrepancy)
	}
	return nil
}

// matchFlows adds the flows of step t (whose result is loads) along the active
// matching to r.acc and reports whether the loads changed only on matched links, each
// by opposite amounts. O(n).
func (r *Recorder) matchFlows(loads []int64, t int64) bool {
	ec := r.b.Coloring()
	pairs := ec.Matching(r.b.ActiveColor(t))
	g := r.m.g
	var matched, all int64
	for v, x := range loads {
		all += abs(x - r.prev[v])
	}
	for i := 0; i < len(pairs); i += 2 { // flat pairs: an even length
		u, v := int(pairs[i]), int(pairs[i+1])
		du, dv := loads[u]-r.prev[u], loads[v]-r.prev[v]
		if du+dv != 0 {
			return false
		}
		matched += abs(du) + abs(dv)
		e := g.EdgeIndex(u, v)
		if e < 0 {
			return false
		}
		l := r.endLink[e]
		if u < v {
			r.acc[l] += dv
		} else {
			r.acc[l] -= dv
		}
	}
	return matched == all
}

// emit appends the frame of the current loads (r.prev).
func (r *Recorder) emit(step, disc int64) error {
	m := r.m
	if len(m.frames) >= m.opts.MaxFrames {
		return errs.TooLargeParam("animate: more than MaxFrames = %d frames (step %d at Every = %d); sample less often with Every K (a frame every K steps) or raise MaxFrames", m.opts.MaxFrames, step, m.opts.Every)
	}
	f := Frame{Step: step, Loads: append(tokendist.Loads(nil), r.prev...), Discrepancy: disc}
	if len(m.frames) > 0 {
		switch {
		case r.tree:
			if moved, ok := r.treeFlows(f.Loads); ok {
				f.Flows, f.Moved = FlowsTree, moved
			}
		case r.b != nil && r.known:
			f.Flows = FlowsMatching
			for l, x := range r.acc {
				if x != 0 {
					f.Moved = append(f.Moved, LinkFlow{Link: l, Tokens: x})
				}
			}
		}
	}
	clear(r.acc)
	r.known, r.pending = true, false
	r.frame = f.Loads
	m.frames = append(m.frames, f)
	return nil
}

// treeFlows returns the net flows of a tree between the last frame's loads and now:
// the flow into a node's subtree over the link above it is the subtree's change. It
// reports false when the total changed (tokens arrived or left: no flow explains
// that). O(n).
func (r *Recorder) treeFlows(now []int64) ([]LinkFlow, bool) {
	d := r.delta
	for v := range d {
		d[v] = now[v] - r.frame[v]
	}
	var out []LinkFlow
	for i := len(r.order) - 1; i > 0; i-- {
		v := r.order[i]
		p := r.par[v]
		if x := d[v]; x != 0 {
			l := int(r.endLink[r.parent[v]])
			if int(p) < int(v) { // tokens from p to v: from the link's first end
				out = append(out, LinkFlow{Link: l, Tokens: x})
			} else {
				out = append(out, LinkFlow{Link: l, Tokens: -x})
			}
			d[p] += x
		}
	}
	if d[r.order[0]] != 0 {
		return nil, false
	}
	return out, true
}

// Movie ends the recording (a pending frame of the last steps is added) and returns
// the movie; it is an error before the first sample. Later calls return the same
// movie. O(n).
func (r *Recorder) Movie() (*Movie, error) {
	if r == nil || !r.started {
		return nil, errs.BadParam("animate: Movie before the first sample")
	}
	if !r.done && r.pending {
		if err := r.emit(r.last, tokendist.Loads(r.prev).Discrepancy()); err != nil {
			return nil, err
		}
	}
	r.done = true
	return r.m, nil
}

// Record runs b on net from loads with tokendist.Run and opts.Run, and returns the
// movie of the run; with a Run error it returns nil and the error (which names the
// balancer and step; a frame limit names the limit). It samples every step when b
// moves along a known matching on a network that is not a tree (to know the flows),
// else every Options.Every steps. It refuses, before running, a node count over
// MaxNodes and a MaxSteps whose frames would exceed MaxFrames. Cost: Run's, plus
// NewRecorder's, plus O(n) per sample.
func Record(ctx context.Context, net tokendist.Network, loads tokendist.Loads, b tokendist.Balancer, opts *Options) (*Movie, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	switch {
	case o.Run.SampleEvery != 0:
		return nil, errs.BadParam("animate: Options.Run.SampleEvery %d is set (Record samples; use Options.Every)", o.Run.SampleEvery)
	case o.Run.Recorder != nil:
		return nil, errs.BadParam("animate: Options.Run.Recorder is set (use NewRecorder inside your own run)")
	case o.Run.Workload != nil || o.Run.Churn != nil:
		return nil, errs.BadParam("animate: Options.Run has a Workload or Churn (a movie shows a fixed total on fixed links)")
	}
	r, err := NewRecorder(net, b, &o)
	if err != nil {
		return nil, err
	}
	every := r.m.opts.Every
	if ms := o.Run.MaxSteps; ms > 0 && ms/every+2 > int64(r.m.opts.MaxFrames) {
		return nil, errs.TooLargeParam("animate: MaxSteps %d at Every = %d makes up to %d frames, more than MaxFrames = %d; sample with Every %d or more",
			ms, every, ms/every+2, r.m.opts.MaxFrames, (ms+int64(r.m.opts.MaxFrames)-3)/int64(max(r.m.opts.MaxFrames-2, 1)))
	}
	ro := o.Run
	ro.Recorder = r
	ro.SampleEvery = every
	if r.b != nil {
		ro.SampleEvery = 1
	}
	if _, err := tokendist.Run(ctx, net, loads, b, &ro); err != nil {
		return nil, err
	}
	return r.Movie()
}

func abs(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

// String describes the movie, such as "Movie(n=16, 41 frames, layout lattice)".
func (m *Movie) String() string {
	return fmt.Sprintf("Movie(n=%d, %d frames, layout %s)", m.g.Order(), len(m.frames), m.layout)
}
