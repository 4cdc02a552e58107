package tokendist

import (
	"fmt"
	"math/bits"
	"slices"
)

// TourArc is one real arc of the observer tour: the observer crosses the edge From-To,
// of colour Color, in the step at tour time Time (Time ≡ Color mod χ).
type TourArc struct {
	// From and To are the ends of the edge, in the direction the observer crosses it.
	From, To int32
	// Color is the edge's colour.
	Color int32
	// Time is the tour time of the step.
	Time int64
}

// ObserverTour is the observer tour of an edge-coloured tree (Houle, Symvonis and Wood,
// section 4.1, Definition 2): the cyclic walk of an observer that, at every step t,
// crosses the edge of colour t mod χ at its node if there is one and otherwise stays
// (a self-loop of T'). Started at node 0 at time 0, it returns there after χ·n steps
// (one phase), having crossed every edge once in each direction: the tour is Eulerian
// in T', whose self-loops fill the steps in which a node has no active edge. The tour
// is stored as its 2(n-1) real arcs with their times (the self-loops in between are
// implicit), so it costs O(n log Δ) time and about 70 bytes per node even when χ·n is
// large. From it, Gaps builds each colour's c-orderings in O(n). An ObserverTour is
// immutable.
type ObserverTour struct {
	ec   *EdgeColoring
	n    int
	chi  int
	off  []int     // the graph's CSR offsets
	ends []tourEnd // every node's edge ends sorted by colour, in CSR node ranges
	walk []int32   // the ends in tour order
	sg1  []int     // SG_1, by Observation 4
}

// tourEnd is one edge end x→nbr with its colour, the tour time of the departure along
// it, and the end the observer leaves nbr by next (the one after nbr→x in nbr's cyclic
// colour order) with that end's colour: the walk reads one struct per arc.
type tourEnd struct {
	nbr, col      int32
	succ, succCol int32
	dep           int64
}

// NewObserverTour builds the observer tour of the tree coloured by ec (section 4.1). The
// colouring's χ = ec.Colors() colours fix the step schedule: colour t mod χ is active at
// step t (for a single node, χ is taken as 1). It sorts every node's edges by colour and
// walks the tour once, which also checks that the graph is a tree, and reads SG_1 off the
// arc times (Observation 4): O(n log Δ) time and about 70 bytes per node; the error wraps
// ErrNotTree when ec's graph is not a tree.
func NewObserverTour(ec *EdgeColoring) (*ObserverTour, error) {
	if ec == nil {
		return nil, badParam("nil edge colouring")
	}
	g := ec.Graph()
	n, m2 := g.Order(), len(g.adj)
	if n == 0 || g.Size() != n-1 || (n > 1 && g.MinDegree() == 0) {
		return nil, requireTree(g)
	}
	t := &ObserverTour{ec: ec, n: n, chi: max(1, ec.Colors()), off: g.off, ends: make([]tourEnd, m2)}
	// Sort each node's ends by colour (colours at a node are distinct); sorted[i] is the
	// sorted position of CSR end i.
	sorted := make([]int32, m2)
	for u := 0; u < n; u++ {
		lo, hi := g.off[u], g.off[u+1]
		e := t.ends[lo:hi]
		for i := lo; i < hi; i++ {
			e[i-lo] = tourEnd{nbr: g.adj[i], col: ec.color[i], succ: int32(i)} // succ: CSR end, for now
		}
		slices.SortFunc(e, func(a, b tourEnd) int { return int(a.col - b.col) })
		for k := range e {
			sorted[e[k].succ] = int32(lo + k)
		}
	}
	// Walking u upwards, v's ends towards smaller nodes are met in ascending order, as v
	// lists them: the j-th such end of v is the reverse of the current end of u. The
	// successor of u→v is the end after v→u in v's cyclic order, and vice versa.
	cursor := make([]int32, n)
	twin := make([]int32, m2) // twin[k]: the reverse of sorted end k
	for u := 0; u < n; u++ {
		for i := g.off[u]; i < g.off[u+1]; i++ {
			if v := int(g.adj[i]); v > u {
				j := g.off[v] + int(cursor[v])
				cursor[v]++
				a, b := sorted[i], sorted[j]
				t.ends[a].succ, t.ends[b].succ = t.cyclicNext(v, b), t.cyclicNext(u, a)
				twin[a], twin[b] = b, a
			}
		}
	}
	for i := range t.ends {
		t.ends[i].succCol = t.ends[t.ends[i].succ].col
	}
	if !t.walkTour() {
		return nil, requireTree(g)
	}
	t.stableGaps(twin)
	return t, nil
}

// stableGaps reads SG_1 off the tour by Observation 4: from the arc x→y to the arc y→x
// the tour spends χ·|T(y, x)| steps.
func (t *ObserverTour) stableGaps(twin []int32) {
	n, chi, L := t.n, int64(t.chi), t.Len()
	in := make([]uint64, (n+63)/64)
	for k, r := range twin {
		d := (t.ends[r].dep - t.ends[k].dep + L) % L
		if d%chi != 0 || d == 0 {
			panic(fmt.Sprintf("tokendist: observer tour breaks Observation 4 at edge end %d", k))
		}
		p := int(d / chi)
		in[p>>6] |= 1 << (p & 63)
	}
	for w, x := range in {
		for ; x != 0; x &= x - 1 {
			t.sg1 = append(t.sg1, w<<6+bits.TrailingZeros64(x))
		}
	}
}

// StableGaps returns SG_1 of the tree, read off the tour by Observation 4 (a new slice,
// ascending); it equals the package function StableGaps. It costs O(|SG_1|).
func (t *ObserverTour) StableGaps() []int { return slices.Clone(t.sg1) }

// cyclicNext returns the sorted end after k in node x's cyclic colour order.
func (t *ObserverTour) cyclicNext(x int, k int32) int32 {
	if int(k)+1 == t.off[x+1] {
		return int32(t.off[x])
	}
	return k + 1
}

// walkTour follows the tour from node 0 at time 0: after crossing an arc of colour c into
// y the observer waits at y until the colour of y's next edge in cyclic colour order. It
// reports false when the walk closes before it has used every edge end, which happens
// exactly when the graph (with n-1 edges) is not a tree.
func (t *ObserverTour) walkTour() bool {
	if t.n == 1 {
		return true
	}
	chi := int64(t.chi)
	first := int32(t.off[0]) // node 0's smallest colour
	e := first
	tau := int64(t.ends[e].col)
	t.walk = make([]int32, len(t.ends))
	for i := range t.walk {
		if i > 0 && e == first {
			return false
		}
		end := &t.ends[e]
		end.dep = tau
		t.walk[i] = e
		wait := int64(end.succCol) - int64(end.col) - 1 // steps at the next node, mod χ
		if wait < 0 {
			wait += chi
		}
		tau += 1 + wait
		e = end.succ
	}
	if e != first || tau != chi*int64(t.n)+int64(t.ends[first].col) {
		panic(fmt.Sprintf("tokendist: observer tour of a tree did not close: at end %d, time %d", e, tau))
	}
	return true
}

// Colors returns χ, the number of steps in a round.
func (t *ObserverTour) Colors() int { return t.chi }

// Len returns the length χ·n of the tour in steps (arcs of T', self-loops included): one
// phase (Definition 3).
func (t *ObserverTour) Len() int64 { return int64(t.chi) * int64(t.n) }

// Arcs returns the tour's 2(n-1) real arcs in tour order, starting with the first edge
// crossed from node 0 after time 0, in a new slice. It costs O(n).
func (t *ObserverTour) Arcs() []TourArc {
	arcs := make([]TourArc, len(t.walk))
	x := int32(0)
	for i, e := range t.walk {
		end := t.ends[e]
		arcs[i] = TourArc{From: x, To: end.nbr, Color: end.col, Time: end.dep}
		x = end.nbr
	}
	return arcs
}

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
	lo, hi := 0, len(t.walk) // first arc with time ≥ tau
	for lo < hi {
		mid := (lo + hi) / 2
		if t.ends[t.walk[mid]].dep < tau {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	if lo == 0 {
		return 0
	}
	return int(t.ends[t.walk[lo-1]].nbr)
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
	gp := &Gaps{color: c, pos: make([]int32, n), order: make([]int32, n), sg1: t.sg1}
	for i := range gp.order {
		gp.order[i] = -1
	}
	for x := 0; x < n; x++ {
		tau := int64(c)
		if lo, hi := t.off[x], t.off[x+1]; lo < hi {
			e := lo
			for e < hi && int(t.ends[e].col) < c {
				e++
			}
			if e == hi {
				e = lo
			}
			tau = t.ends[e].dep - (int64(t.ends[e].col)-int64(c)+chi)%chi
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
	sg1   []int   // SG_1, shared with the tour
	pos   []int32 // position of each node in the c-ordering starting at order[0]
	order []int32
}

// Color returns the colour c.
func (gp *Gaps) Color() int { return gp.color }

// Gap returns gap_c(v, w) in 0..n-1: the number of rounds after which the observer that
// starts at v stands where the observer of w started. It costs O(1).
// It returns -1 if v or w is not a node (it never panics).
func (gp *Gaps) Gap(v, w int) int {
	if v < 0 || v >= len(gp.pos) || w < 0 || w >= len(gp.pos) {
		return -1
	}
	d := int(gp.pos[w]) - int(gp.pos[v])
	if d < 0 {
		d += len(gp.pos)
	}
	return d
}

// Observer returns obs(v) after k rounds of a c-phase: the node at position k (mod n)
// of the c-ordering starting at v. It costs O(1).
// It returns -1 if v is not a node (it never panics).
func (gp *Gaps) Observer(v, k int) int {
	n := len(gp.pos)
	if v < 0 || v >= n {
		return -1
	}
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
// It panics if v is not a node, as a slice index does.
func (gp *Gaps) Ordering(v int) []int {
	n := len(gp.pos)
	out := make([]int, n)
	for k := range out {
		out[k] = gp.Observer(v, k)
	}
	return out
}

// Stable reports whether loads are stable under THRESHOLD-1 at a time ≡ c (mod χ) by
// Lemma 10: every pair of nodes whose gap is in SG_1(T) differs by at most one token. By
// Theorem 11 this is equivalent to |load(v) - load(w)| ≤ stability(gap_c(v, w)) for all
// pairs, and to one c-phase of THRESHOLD-1 leaving the loads unchanged. It costs
// O(n·|SG_1|).
func (gp *Gaps) Stable(loads Loads) (bool, error) {
	n := len(gp.pos)
	if len(loads) != n {
		return false, fmt.Errorf("%w: %d loads for a tree of %d nodes", ErrBadLoads, len(loads), n)
	}
	for i := 0; i < n; i++ {
		a := loads[gp.order[i]]
		for _, p := range gp.sg1 {
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
// stable distribution has. It costs the tour (NewObserverTour) and one stability search
// (GapStabilities): under a second for a random tree with 10^6 nodes.
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
	stab, err := GapStabilities(n, t.sg1, nil)
	if err != nil {
		return nil, err
	}
	l := make(Loads, n)
	for v := range l {
		l[v] = int64(stab[gp.Gap(s, v)])
	}
	return l, nil
}
