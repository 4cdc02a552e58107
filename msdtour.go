package tokendist

import "fmt"

// TourArc is one real arc of the observer tour: the observer crosses the edge From-To,
// of colour Color, in the step at tour time Time (Time ≡ Color mod χ).
type TourArc struct {
	From, To int32
	Color    int32
	Time     int64
}

// ObserverTour is the observer tour of an edge-coloured tree (Houle, Symvonis and Wood,
// section 4.1, Definition 2): the cyclic walk of an observer that, at every step t,
// crosses the edge of colour t mod χ at its node if there is one and otherwise stays
// (a self-loop of T'). Started at node 0 at time 0, it returns there after χ·n steps
// (one phase), having crossed every edge once in each direction: the tour is Eulerian
// in T', whose self-loops fill the steps in which a node has no active edge. The tour
// is stored as its 2(n-1) real arcs with their times (the self-loops in between are
// implicit), so it costs O(n + χ) time and memory even when χ·n is large. From it, Gaps
// builds each colour's c-orderings in O(n). An ObserverTour is immutable.
type ObserverTour struct {
	ec    *EdgeColoring
	n     int
	chi   int
	off   []int   // the graph's CSR offsets
	nbr   []int32 // ends of each node sorted by colour: neighbour,
	col   []int32 // colour,
	dep   []int64 // and tour time of the departure along it
	arcs  []TourArc
	first int // node 0's first end in tour order
}

// NewObserverTour builds the observer tour of the tree coloured by ec (section 4.1). The
// colouring's χ = ec.Colors() colours fix the step schedule: colour t mod χ is active at
// step t (for a single node, χ is taken as 1). It costs O(n + χ); the error wraps
// ErrNotTree when ec's graph is not a tree.
func NewObserverTour(ec *EdgeColoring) (*ObserverTour, error) {
	if ec == nil {
		return nil, badParam("nil edge colouring")
	}
	g := ec.Graph()
	if err := requireTree(g); err != nil {
		return nil, err
	}
	n, m2 := g.Order(), len(g.adj)
	t := &ObserverTour{ec: ec, n: n, chi: max(1, ec.Colors()), off: g.off}
	// Counting sort of every node's ends by colour: bucket the ends by colour, then deal
	// them out node by node, colour by colour.
	byColor := make([]int, t.chi+1)
	for i := 0; i < m2; i++ {
		byColor[ec.color[i]+1]++
	}
	for c := 1; c <= t.chi; c++ {
		byColor[c] += byColor[c-1]
	}
	owner := make([]int32, m2)
	for u := 0; u < n; u++ {
		for i := g.off[u]; i < g.off[u+1]; i++ {
			owner[i] = int32(u)
		}
	}
	ends := make([]int32, m2) // CSR ends, ascending colour
	for i := 0; i < m2; i++ {
		c := ec.color[i]
		ends[byColor[c]] = int32(i)
		byColor[c]++
	}
	cursor := make([]int, n)
	sorted := make([]int32, m2) // sorted[i] = position of CSR end i in the sorted order
	t.nbr, t.col, t.dep = make([]int32, m2), make([]int32, m2), make([]int64, m2)
	for _, i := range ends {
		u := owner[i]
		k := g.off[u] + cursor[u]
		cursor[u]++
		sorted[i] = int32(k)
		t.nbr[k], t.col[k] = g.adj[i], ec.color[i]
	}
	// rev[k] is the sorted position of the reverse of sorted end k. Walking u upwards,
	// v's ends towards smaller nodes are met in ascending order, as v lists them.
	rev := make([]int32, m2)
	clear(cursor)
	for u := 0; u < n; u++ {
		for i := g.off[u]; i < g.off[u+1]; i++ {
			if v := int(g.adj[i]); v > u {
				j := g.off[v] + cursor[v]
				cursor[v]++
				rev[sorted[i]], rev[sorted[j]] = sorted[j], sorted[i]
			}
		}
	}
	t.walk(rev)
	return t, nil
}

// walk follows the tour from node 0 at time 0: after crossing an arc of colour c into y
// the observer waits at y until the colour of y's next edge in cyclic colour order.
func (t *ObserverTour) walk(rev []int32) {
	if t.n == 1 {
		return
	}
	chi := int64(t.chi)
	e := t.off[0] // node 0's smallest colour
	t.first = e
	tau := int64(t.col[e])
	t.arcs = make([]TourArc, 0, len(t.nbr))
	x := int32(0)
	for range len(t.nbr) {
		c := int64(t.col[e])
		y := t.nbr[e]
		t.dep[e] = tau
		t.arcs = append(t.arcs, TourArc{From: x, To: y, Color: int32(c), Time: tau})
		r := int(rev[e])
		next := r + 1
		if next == t.off[y+1] {
			next = t.off[y]
		}
		tau += 1 + (int64(t.col[next])-c-1+chi)%chi
		x, e = y, next
	}
	if x != 0 || e != t.first || tau != chi*int64(t.n)+int64(t.col[t.first]) {
		panic(fmt.Sprintf("tokendist: observer tour did not close: at node %d, time %d", x, tau))
	}
}

// Colors returns χ, the number of steps in a round.
func (t *ObserverTour) Colors() int { return t.chi }

// Len returns the length χ·n of the tour in steps (arcs of T', self-loops included): one
// phase (Definition 3).
func (t *ObserverTour) Len() int64 { return int64(t.chi) * int64(t.n) }

// Arcs returns the tour's 2(n-1) real arcs in tour order, starting with the first edge
// crossed from node 0 after time 0. The slice is read-only.
func (t *ObserverTour) Arcs() []TourArc { return t.arcs }

// At returns the node where the observer that starts at node 0 at time 0 stands at tour
// time tau (taken mod Len). It costs O(log n).
func (t *ObserverTour) At(tau int64) int {
	if t.n == 1 {
		return 0
	}
	tau %= t.Len()
	if tau < 0 {
		tau += t.Len()
	}
	// The last arc crossed before time tau (arc at time s moves the observer at s+1).
	lo, hi := 0, len(t.arcs) // first arc with Time ≥ tau
	for lo < hi {
		mid := (lo + hi) / 2
		if t.arcs[mid].Time < tau {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	if lo == 0 {
		return 0
	}
	return int(t.arcs[lo-1].To)
}

// Gaps returns the c-orderings and gaps for colour c (section 4.1): the observer that
// starts at v at a time ≡ c (mod χ) visits the n nodes once each at the starts of the n
// rounds of the phase; that sequence is the c-ordering starting at v, and gap_c(v, w)
// is the position of w in it. The state (x, c) lies on the visit to x that leaves by
// x's first edge of colour ≥ c (cyclically), χ·pos steps into the tour, which gives
// every node's position in O(n). c must be in 0..χ-1.
func (t *ObserverTour) Gaps(c int) (*Gaps, error) {
	if c < 0 || c >= t.chi {
		return nil, badParam("colour %d outside 0..%d", c, t.chi-1)
	}
	n, chi, L := t.n, int64(t.chi), t.Len()
	gp := &Gaps{color: c, pos: make([]int32, n), order: make([]int32, n)}
	for i := range gp.order {
		gp.order[i] = -1
	}
	for x := 0; x < n; x++ {
		tau := int64(c)
		if lo, hi := t.off[x], t.off[x+1]; lo < hi {
			e := lo
			for e < hi && int(t.col[e]) < c {
				e++
			}
			if e == hi {
				e = lo
			}
			tau = t.dep[e] - (int64(t.col[e])-int64(c)+chi)%chi
			if tau < 0 {
				tau += L
			}
		}
		p := tau / chi
		if gp.order[p] >= 0 {
			panic(fmt.Sprintf("tokendist: nodes %d and %d share position %d of the %d-ordering", gp.order[p], x, p, c))
		}
		gp.pos[x], gp.order[p] = int32(p), int32(x)
	}
	return gp, nil
}

// Gaps holds the c-orderings of one colour c of an observer tour (Houle, Symvonis and
// Wood, section 4.1): gap_c(v, w) for every pair in O(1) after the O(n) set-up of
// ObserverTour.Gaps, with gap_c(v, x) + gap_c(x, w) ≡ gap_c(v, w) (mod n), equation
// (3). It is immutable.
type Gaps struct {
	color int
	pos   []int32 // position of each node in the c-ordering starting at order[0]
	order []int32
}

// Color returns the colour c.
func (gp *Gaps) Color() int { return gp.color }

// Gap returns gap_c(v, w) in 0..n-1: the number of rounds after which the observer that
// starts at v stands where the observer of w started. It costs O(1).
func (gp *Gaps) Gap(v, w int) int {
	d := int(gp.pos[w]) - int(gp.pos[v])
	if d < 0 {
		d += len(gp.pos)
	}
	return d
}

// Observer returns obs(v) after k rounds of a c-phase: the node at position k (mod n)
// of the c-ordering starting at v. It costs O(1).
func (gp *Gaps) Observer(v, k int) int {
	n := len(gp.pos)
	k %= n
	if k < 0 {
		k += n
	}
	p := int(gp.pos[v]) + k
	if p >= n {
		p -= n
	}
	return int(gp.order[p])
}

// Ordering returns the c-ordering starting at v: the nodes obs(v) visits at the starts
// of the n rounds of a c-phase. It costs O(n).
func (gp *Gaps) Ordering(v int) []int {
	n := len(gp.pos)
	out := make([]int, n)
	for k := range out {
		out[k] = gp.Observer(v, k)
	}
	return out
}

// Stable reports whether loads are stable under THRESHOLD-1 at a time ≡ c (mod χ) by
// Lemma 10: every pair of nodes whose gap is in sg1 = SG_1(T) (StableGaps) differs by at
// most one token. By Theorem 11 this is equivalent to |load(v) - load(w)| ≤
// stability(gap_c(v, w)) for all pairs. It costs O(n·|SG_1|).
func (gp *Gaps) Stable(loads Loads, sg1 []int) (bool, error) {
	n := len(gp.pos)
	if len(loads) != n {
		return false, fmt.Errorf("%w: %d loads for a tree of %d nodes", ErrBadLoads, len(loads), n)
	}
	for _, p := range sg1 {
		if p < 1 || p >= n {
			return false, badParam("gap %d outside 1..%d", p, n-1)
		}
	}
	for i := 0; i < n; i++ {
		a := loads[gp.order[i]]
		for _, p := range sg1 {
			j := i + p
			if j >= n {
				j -= n
			}
			if d := a - loads[gp.order[j]]; d > 1 || d < -1 {
				return false, nil
			}
		}
	}
	return true, nil
}

// WorstStableLoads returns the stable distribution of the proof of Theorem 12 (section
// 4.3) for the colouring ec, colour c and node s: load(s) = 0 and load(v) =
// stability(gap_c(s, v)). It is stable under THRESHOLD-1 at every time ≡ c (mod χ)
// (one c-phase leaves it unchanged) and its discrepancy is MSD(T), the largest any
// stable distribution has. It costs one stability search (Stabilities) plus O(n).
func WorstStableLoads(ec *EdgeColoring, c, s int) (Loads, error) {
	t, err := NewObserverTour(ec)
	if err != nil {
		return nil, err
	}
	n := t.n
	if s < 0 || s >= n {
		return nil, badParam("node s = %d outside 0..%d", s, n-1)
	}
	gp, err := t.Gaps(c)
	if err != nil {
		return nil, err
	}
	stab, err := Stabilities(ec.Graph())
	if err != nil {
		return nil, err
	}
	l := make(Loads, n)
	for v := range l {
		l[v] = int64(stab[gp.Gap(s, v)])
	}
	return l, nil
}
