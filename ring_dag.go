package tokendist

import (
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strings"
)

// Growing tree-dags and grid-dags of Gao and Rosenberg, "On balancing computational load on
// rings of processors", section 1.3. A growth rule (TreeDag, GridDag) decides, for each
// executed task, whether it halts or spawns two children; RingScheduler executes the growing dag
// on a ring of processors.

// TreeMaxLevel is the deepest level a tree-dag node may have: node names are heap numbers
// in a uint64 below 2^63.
const TreeMaxLevel = 62

// TreeNode names a node of a binary tree-dag (section 1.3) by its heap number, as in the
// paper's Table 1: the root λ is 1 and the children of x are 2x (left, x0) and 2x+1
// (right, x1). The binary string of the node is the heap number's binary expansion
// without its leading 1, so breadth-first order (by level, then lexicographic) is the
// numeric order of heap numbers.
type TreeNode uint64

// TreeRoot is the root λ of every tree-dag.
const TreeRoot TreeNode = 1

// Level returns |x|, the length of the node's string (the root has level 0).
func (x TreeNode) Level() int { return bits.Len64(uint64(x)) - 1 }

// Weight returns Wgt(x), the number of 1s in the node's string (section 1.3).
func (x TreeNode) Weight() int { return bits.OnesCount64(uint64(x)) - 1 }

// Bits returns the node's string as an integer (the heap number without its leading 1).
func (x TreeNode) Bits() uint64 { return uint64(x) &^ (1 << uint(x.Level())) }

// Left returns the left child x0.
func (x TreeNode) Left() TreeNode { return 2 * x }

// Right returns the right child x1.
func (x TreeNode) Right() TreeNode { return 2*x + 1 }

// Parent returns the parent (the root's parent is 0, which names no node).
func (x TreeNode) Parent() TreeNode { return x / 2 }

// String returns the node's binary string ("λ" for the root).
func (x TreeNode) String() string {
	if x == 0 {
		return "TreeNode(0)"
	}
	l := x.Level()
	if l == 0 {
		return "λ"
	}
	var b strings.Builder
	for i := l - 1; i >= 0; i-- {
		b.WriteByte('0' + byte(x>>uint(i)&1))
	}
	return b.String()
}

// ParseTreeNode returns the node named by a binary string ("" or "λ" for the root). It
// costs O(len(s)).
func ParseTreeNode(s string) (TreeNode, error) {
	if s == "λ" {
		s = ""
	}
	if len(s) > TreeMaxLevel {
		return 0, badParam("tree node %s is deeper than level %d", quote([]byte(s)), TreeMaxLevel)
	}
	x := TreeRoot
	for i := 0; i < len(s); i++ {
		if s[i] != '0' && s[i] != '1' {
			return 0, badParam("tree node %s is not a binary string", quote([]byte(s)))
		}
		x = 2*x + TreeNode(s[i]-'0')
	}
	return x, nil
}

// GridNode is the node ⟨K, L⟩ of a two-dimensional grid-dag (section 1.3): its left child
// is ⟨K, L+1⟩ and its right child ⟨K+1, L⟩; its level is K+L. Breadth-first order is by
// level, then by K.
type GridNode struct {
	// K and L are the node's coordinates (right and left steps from the root ⟨0, 0⟩).
	K, L int
}

// Level returns K+L.
func (x GridNode) Level() int { return x.K + x.L }

// Left returns the left child ⟨K, L+1⟩.
func (x GridNode) Left() GridNode { return GridNode{x.K, x.L + 1} }

// Right returns the right child ⟨K+1, L⟩.
func (x GridNode) Right() GridNode { return GridNode{x.K + 1, x.L} }

// ID returns the node's rank in breadth-first order of the whole quadrant,
// (K+L)(K+L+1)/2 + K: the origin is 0 and the nodes of the pyramidal grid G_n are
// exactly the IDs below n(n+1)/2. Schedules name grid nodes by this ID.
//
// The rank is exact while it is below 2^64 (levels K+L up to about 6·10^9); beyond, it
// wraps modulo 2^64.
func (x GridNode) ID() uint64 {
	l := uint64(x.Level())
	return l*(l+1)/2 + uint64(x.K)
}

// GridNodeOf returns the grid node with breadth-first rank id (the inverse of ID). It
// costs O(1).
func GridNodeOf(id uint64) GridNode {
	// tri(l) = l(l+1)/2 in 128 bits: l reaches 6·10^9 for ids near 2^64, where the
	// 64-bit product overflows.
	tri := func(l uint64) (hi, lo uint64) {
		hi, lo = bits.Mul64(l, l+1)
		return hi >> 1, lo>>1 | hi<<63
	}
	above := func(l uint64) bool { // tri(l) > id
		hi, lo := tri(l)
		return hi != 0 || lo > id
	}
	l := uint64((math.Sqrt(8*float64(id)+1) - 1) / 2)
	for l > 0 && above(l) {
		l--
	}
	for !above(l + 1) {
		l++
	}
	_, t := tri(l) // ≤ id, so its high word is 0
	k := id - t
	return GridNode{K: int(k), L: int(l - k)}
}

// String returns "⟨K,L⟩".
func (x GridNode) String() string { return fmt.Sprintf("⟨%d,%d⟩", x.K, x.L) }

// TreeDag is a growth rule for binary tree-dags (section 1.3): when node x is executed,
// Spawns reports whether it spawns its two children x0 and x1 (true) or halts (false).
//
// RingScheduler calls Spawns exactly once per executed node, in execution order, from one
// goroutine, so a rule may keep state (Quadrature records its leaves); a rule with
// per-run state also implements Resetter. A node at level TreeMaxLevel must not spawn.
type TreeDag interface {
	Spawns(x TreeNode) bool
}

// GridDag is a growth rule for two-dimensional grid-dags (section 1.3). Spawns reports
// whether node x spawns its two task-arcs, to ⟨K, L+1⟩ and ⟨K+1, L⟩. It must be a pure
// function, true only for nodes of the grid (nodes that some spawning parent creates):
// the simulator also asks it about a child's other potential parent to decide at spawn
// time whether the arc is unary (the child has one parent and is active at once) or
// binary (the child waits, inactive, until its second parent has executed). A rule that
// says a node spawns although nobody creates it leaves its children waiting forever,
// which the simulation reports as ErrBadDag.
type GridDag interface {
	Spawns(x GridNode) bool
}

// Resetter is implemented by growth rules with per-run state; RingScheduler.Init calls Reset
// before every run.
type Resetter interface {
	Reset()
}

// TreeDagFunc adapts a function to TreeDag (a user-supplied growth rule).
type TreeDagFunc func(x TreeNode) bool

// Spawns calls f.
func (f TreeDagFunc) Spawns(x TreeNode) bool { return f(x) }

// GridDagFunc adapts a pure function to GridDag (a user-supplied growth rule).
type GridDagFunc func(x GridNode) bool

// Spawns calls f.
func (f GridDagFunc) Spawns(x GridNode) bool { return f(x) }

// completeTree is T_n.
type completeTree struct{ n int }

// CompleteTree returns the growth rule of the height-n complete binary tree-dag T_n
// (section 1.3): every node of level < n-1 spawns, so the dag has the 2^n - 1 strings of
// length < n. It needs 1 ≤ n ≤ TreeMaxLevel+1. It costs O(1), and so does every Spawns.
func CompleteTree(n int) (TreeDag, error) {
	if n < 1 || n > TreeMaxLevel+1 {
		return nil, badParam("CompleteTree height n = %d outside 1..%d", n, TreeMaxLevel+1)
	}
	return completeTree{n}, nil
}

func (t completeTree) Spawns(x TreeNode) bool { return x.Level() < t.n-1 }
func (t completeTree) String() string         { return fmt.Sprintf("T_%d", t.n) }

// wCompleteTree is the h-level w-complete tree-dag.
type wCompleteTree struct{ h, w int }

// WCompleteTree returns the growth rule of the h-level w-complete binary tree-dag, the
// paper's bad case for KS (section 1.3, "Trees"): the largest full tree-dag whose nodes
// are strings of length < h and weight ≤ w. A node spawns when its level is < h-1 and its
// weight is < w. (The paper's node set, all such strings, is not full: x of weight w has
// x0 but not x1; its count Θ(h^w) for w = log p matches this full tree.) Under KS the work
// lands on the w+1 PEs 0..w (Lemma 1.1(a)). It needs 1 ≤ h ≤ TreeMaxLevel+1, w ≥ 0. It
// costs O(1), and so does every Spawns.
func WCompleteTree(h, w int) (TreeDag, error) {
	if h < 1 || h > TreeMaxLevel+1 {
		return nil, badParam("WCompleteTree levels h = %d outside 1..%d", h, TreeMaxLevel+1)
	}
	if w < 0 {
		return nil, badParam("WCompleteTree weight w = %d is negative", w)
	}
	return wCompleteTree{h, w}, nil
}

func (t wCompleteTree) Spawns(x TreeNode) bool { return x.Level() < t.h-1 && x.Weight() < t.w }
func (t wCompleteTree) String() string         { return fmt.Sprintf("T_%d(w≤%d)", t.h, t.w) }

// mix64 is SplitMix64's finaliser, a bijective hash used to draw a node's coin.
func mix64(z uint64) uint64 {
	z += 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// coin returns a uniform number in [0, 1) determined by (seed, a, b).
func coin(seed, a, b uint64) float64 {
	return float64(mix64(mix64(seed^0x72696e67)^mix64(a)^mix64(b+0x51))>>11) * 0x1p-53
}

// randomTree spawns each node independently with probability q.
type randomTree struct {
	q     float64
	depth int
	seed  uint64
}

// RandomTreeDag returns a random growth rule (section 1.3's "randomly growing" trees):
// each node of level < depth-1 spawns with probability q, independently. The coin of node
// x depends only on (seed, x), never on the schedule, so every policy executes the same
// tree. It needs q in [0, 1] and 1 ≤ depth ≤ TreeMaxLevel+1. It costs O(1), and so does
// every Spawns.
func RandomTreeDag(q float64, depth int, seed uint64) (TreeDag, error) {
	if !(q >= 0 && q <= 1) {
		return nil, badParam("RandomTreeDag spawn probability q = %v outside [0, 1]", q)
	}
	if depth < 1 || depth > TreeMaxLevel+1 {
		return nil, badParam("RandomTreeDag depth = %d outside 1..%d", depth, TreeMaxLevel+1)
	}
	return randomTree{q, depth, seed}, nil
}

func (t randomTree) Spawns(x TreeNode) bool {
	return x.Level() < t.depth-1 && coin(t.seed, uint64(x), 0) < t.q
}

func (t randomTree) String() string {
	return fmt.Sprintf("random tree(q=%g, depth=%d, seed=%d)", t.q, t.depth, t.seed)
}

// pyramidGrid is G_n.
type pyramidGrid struct{ n int }

// PyramidGrid returns the growth rule of the side-n pyramidal grid-dag G_n (section 1.3):
// the n(n+1)/2 nodes ⟨k, l⟩ with k + l < n; a node spawns when k + l < n-1. It needs
// 1 ≤ n < 2^31. It costs O(1), and so does every Spawns.
func PyramidGrid(n int) (GridDag, error) {
	if n < 1 || n >= math.MaxInt32 {
		return nil, badParam("PyramidGrid side n = %d outside 1..2^31-2", n)
	}
	return pyramidGrid{n}, nil
}

func (g pyramidGrid) Spawns(x GridNode) bool {
	return x.K >= 0 && x.L >= 0 && x.Level() < g.n-1
}
func (g pyramidGrid) String() string { return fmt.Sprintf("G_%d", g.n) }

// adversarialGrid is the closure of section 1.3's bad grid family.
type adversarialGrid struct{ i, j, m int }

// AdversarialGrid returns the paper's bad grid family (section 1.3, "Grids"), the node set
// {i, j} × {0..m-1} ∪ {0..m-1} × {0} with i ≡ 0 and j ≡ 1 (mod p), made full: a node of
// that set spawns when one of its children is in the set, and the siblings this forces
// (⟨k, 1⟩ beside the column, ⟨i+1, l⟩ and ⟨j+1, l⟩ beside the rows) are sinks. (The
// paper's set itself is not full, so it is not a grid-dag.) It needs 0 ≤ i, j < m, i ≠
// j. It costs O(1), and so does every Spawns.
func AdversarialGrid(i, j, m int) (GridDag, error) {
	if m < 1 || m >= math.MaxInt32/2 {
		return nil, badParam("AdversarialGrid length m = %d outside 1..2^30", m)
	}
	if i < 0 || j < 0 || i >= m || j >= m || i == j {
		return nil, badParam("AdversarialGrid rows i = %d, j = %d must be distinct and in 0..%d", i, j, m-1)
	}
	return adversarialGrid{i, j, m}, nil
}

// in reports whether x is in the paper's node set.
func (g adversarialGrid) in(k, l int) bool {
	if k < 0 || l < 0 || k >= g.m || l >= g.m {
		return false
	}
	return l == 0 || k == g.i || k == g.j
}

func (g adversarialGrid) Spawns(x GridNode) bool {
	return g.in(x.K, x.L) && (g.in(x.K, x.L+1) || g.in(x.K+1, x.L))
}

func (g adversarialGrid) String() string {
	return fmt.Sprintf("adversarial grid(i=%d, j=%d, m=%d)", g.i, g.j, g.m)
}

// GridMaxRandomDepth bounds RandomGridDag's depth (its existence table has depth²/2 bits).
const GridMaxRandomDepth = 1 << 14

// randomGrid holds, for every node of level < depth-1, whether it exists and spawns.
type randomGrid struct {
	q     float64
	depth int
	seed  uint64
	spawn []uint64 // bitset indexed by GridNode.ID
}

// RandomGridDag returns a random growth rule for grids: each node of level < depth-1
// spawns with probability q, independently (its coin depends only on (seed, k, l)). So
// that the rule is pure and true only for nodes that exist, the constructor computes, by
// dynamic programming over the levels, which nodes are created (O(depth²) time,
// depth²/16 bytes). It needs q in [0, 1] and 1 ≤ depth ≤ GridMaxRandomDepth.
func RandomGridDag(q float64, depth int, seed uint64) (GridDag, error) {
	if !(q >= 0 && q <= 1) {
		return nil, badParam("RandomGridDag spawn probability q = %v outside [0, 1]", q)
	}
	if depth < 1 || depth > GridMaxRandomDepth {
		return nil, badParam("RandomGridDag depth = %d outside 1..%d", depth, GridMaxRandomDepth)
	}
	g := &randomGrid{q: q, depth: depth, seed: seed}
	cells := uint64(depth) * uint64(depth-1) / 2 // nodes of level < depth-1
	g.spawn = make([]uint64, (cells+63)/64)
	for l := 0; l < depth-1; l++ {
		for k := 0; k <= l; k++ {
			x := GridNode{k, l - k}
			exists := l == 0 || g.Spawns(GridNode{k, x.L - 1}) || g.Spawns(GridNode{k - 1, x.L})
			if exists && coin(seed, uint64(k), uint64(x.L)) < q {
				id := x.ID()
				g.spawn[id/64] |= 1 << (id % 64)
			}
		}
	}
	return g, nil
}

func (g *randomGrid) Spawns(x GridNode) bool {
	if x.K < 0 || x.L < 0 || x.Level() >= g.depth-1 {
		return false
	}
	id := x.ID()
	return g.spawn[id/64]>>(id%64)&1 == 1
}

func (g *randomGrid) String() string {
	return fmt.Sprintf("random grid(q=%g, depth=%d, seed=%d)", g.q, g.depth, g.seed)
}

// Quadrature is the adaptive trapezoid-rule integration of section 1.3 as a tree-dag
// growth rule: node x is the sub-interval [c, d] of [a, b] reached by halving along x's
// string (0 = left half). Executing x evaluates the trapezoid T on [c, d]; it halts with T
// when (d-c)/2 < Resolution, or when the two half-trapezoids T′ + T″ differ from T by
// less than Accuracy; otherwise it spawns the two halves. After a run, Integral returns
// the sum of the halted tasks' trapezoids, which does not depend on the schedule.
type Quadrature struct {
	f                    func(float64) float64
	a, b                 float64
	resolution, accuracy float64
	leaves               []quadLeaf
	err                  error
}

type quadLeaf struct {
	x    TreeNode
	area float64
}

// NewQuadrature returns the adaptive trapezoid rule for f on [a, b] (section 1.3) with the
// given resolution and accuracy thresholds. It needs a < b finite, thresholds ≥ 0 and
// not both 0 (otherwise the rule may never stop). It costs O(1); every Spawns evaluates
// f a constant number of times.
func NewQuadrature(f func(float64) float64, a, b, resolution, accuracy float64) (*Quadrature, error) {
	switch {
	case f == nil:
		return nil, badParam("Quadrature needs a function, got nil")
	case !(a < b) || math.IsInf(a, 0) || math.IsInf(b, 0):
		return nil, badParam("Quadrature interval [%v, %v] is not a finite interval with a < b", a, b)
	case !(resolution >= 0) || !(accuracy >= 0) || math.IsInf(resolution, 0) || math.IsInf(accuracy, 0):
		return nil, badParam("Quadrature thresholds resolution = %v, accuracy = %v must be finite and ≥ 0", resolution, accuracy)
	case resolution == 0 && accuracy == 0:
		return nil, badParam("Quadrature needs resolution > 0 or accuracy > 0")
	}
	return &Quadrature{f: f, a: a, b: b, resolution: resolution, accuracy: accuracy}, nil
}

// Interval returns the sub-interval [c, d] of node x.
func (q *Quadrature) Interval(x TreeNode) (c, d float64) {
	l := x.Level()
	w := q.b - q.a
	bitsX := x.Bits()
	c = q.a + math.Ldexp(w*float64(bitsX), -l)
	d = q.a + math.Ldexp(w*float64(bitsX+1), -l)
	return c, d
}

// Spawns executes task x (steps 1-5 of section 1.3) and records its area if it halts.
func (q *Quadrature) Spawns(x TreeNode) bool {
	c, d := q.Interval(x)
	fc, fd := q.f(c), q.f(d)
	t := (d - c) * (fc + fd) / 2
	if (d-c)/2 < q.resolution {
		q.leaves = append(q.leaves, quadLeaf{x, t})
		return false
	}
	m := (c + d) / 2
	fm := q.f(m)
	t1, t2 := (m-c)*(fc+fm)/2, (d-m)*(fm+fd)/2
	if math.Abs(t1+t2-t) < q.accuracy {
		q.leaves = append(q.leaves, quadLeaf{x, t})
		return false
	}
	if math.IsNaN(t1 + t2 - t) {
		if q.err == nil {
			q.err = badParam("Quadrature: f is not finite on [%v, %v]", c, d)
		}
		q.leaves = append(q.leaves, quadLeaf{x, t})
		return false
	}
	return true
}

// Reset forgets the leaves of the previous run (RingScheduler.Init calls it).
func (q *Quadrature) Reset() {
	q.leaves = q.leaves[:0]
	q.err = nil
}

// Integral returns the integral computed by the last run: the trapezoids of the halted
// tasks, summed left to right with Neumaier's compensated summation, so the result is
// the same for every policy and ring size. It returns an error if f was not finite on
// some sub-interval. It costs O(L log L) for L halted tasks.
func (q *Quadrature) Integral() (float64, error) {
	leaves := slices.Clone(q.leaves)
	slices.SortFunc(leaves, func(u, v quadLeaf) int {
		pu := u.x.Bits() << uint(TreeMaxLevel-u.x.Level())
		pv := v.x.Bits() << uint(TreeMaxLevel-v.x.Level())
		switch {
		case pu < pv:
			return -1
		case pu > pv:
			return 1
		}
		return 0
	})
	var sum, comp float64
	for _, l := range leaves {
		t := sum + l.area
		if math.Abs(sum) >= math.Abs(l.area) {
			comp += (sum - t) + l.area
		} else {
			comp += (l.area - t) + sum
		}
		sum = t
	}
	return sum + comp, q.err
}

// Leaves returns the number of halted tasks of the last run.
func (q *Quadrature) Leaves() int { return len(q.leaves) }

// String describes the integration problem.
func (q *Quadrature) String() string {
	return fmt.Sprintf("quadrature on [%g, %g] (resolution %g, accuracy %g)", q.a, q.b, q.resolution, q.accuracy)
}
