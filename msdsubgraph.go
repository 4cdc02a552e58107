package tokendist

// Subtree is the result of ConstructSubgraph.
type Subtree struct {
	// Nodes are the p nodes of the connected subtree α, ascending.
	Nodes []int
	// Leaf is the leaf α started from.
	Leaf int
	// Iterations counts the while-loop iterations (Lemma 14: at most ⌈log2 n⌉).
	Iterations int
}

// ConstructSubgraph runs algorithm CONSTRUCT SUBGRAPH of Houle, Symvonis and Wood
// (section 4.4, Lemma 14) for a gap p of a tree: starting from a leaf α = {l} and the
// candidate subtree β = V \ {l}, each iteration splits β at a centroid v (no component
// of β \ {v} has more than |β|/2 nodes, Kang and Ault) and either keeps the component
// next to α (Case 1), adds it to α (Case 2), or adds it, v and further components to α
// and keeps the component that would overshoot p (Case 3). It returns a connected
// subtree of exactly p nodes after at most ⌈log2 n⌉ iterations; Lemma 15 turns its
// boundary into a short sum of stable gaps, which bounds MSD (Theorem 16).
//
// The paper's Case 3 adds β_1, ..., β_i to α and then sets β ← β_i; the invariants of
// its proof need α ← α ∪ {v} ∪ β_1 ∪ ... ∪ β_{i-1}, which is what this does. The leaf is
// the smallest-numbered one and β_2, β_3, ... are taken in ascending order of v's
// neighbours. Each iteration costs O(|β|), so the whole run costs O(n). p must be in
// 1..n; the error wraps ErrNotTree for a non-tree.
func ConstructSubgraph(net Network, p int) (Subtree, error) {
	g, err := treeOf(net)
	if err != nil {
		return Subtree{}, err
	}
	n := g.Order()
	if p < 1 || p > n {
		return Subtree{}, badParam("ConstructSubgraph gap p = %d outside 1..%d", p, n)
	}
	c := newCentroidSplitter(g)
	return c.run(p), nil
}

// centroidSplitter holds CONSTRUCT SUBGRAPH's state: α, β (as a membership mark), the
// β end of the single α-β edge, and scratch for the searches over β.
type centroidSplitter struct {
	g      *Graph
	alpha  []bool
	beta   []bool
	parent []int32
	size   []int32
	order  []int32
}

func newCentroidSplitter(g *Graph) *centroidSplitter {
	n := g.Order()
	return &centroidSplitter{g: g, alpha: make([]bool, n), beta: make([]bool, n),
		parent: make([]int32, n), size: make([]int32, n), order: make([]int32, 0, n)}
}

func (c *centroidSplitter) run(p int) Subtree {
	g, n := c.g, c.g.Order()
	leaf := 0
	for v := 0; v < n; v++ {
		if g.Degree(v) <= 1 {
			leaf = v
			break
		}
	}
	res := Subtree{Leaf: leaf}
	c.alpha[leaf] = true
	for v := range c.beta {
		c.beta[v] = v != leaf
	}
	nAlpha, nBeta := 1, n-1
	attach := -1 // β's end of the α-β edge
	if n > 1 {
		attach = int(g.Neighbors(leaf)[0])
	}
	for nAlpha < p {
		res.Iterations++
		v := c.centroid(attach, nBeta)
		// c.order/c.parent/c.size now describe β rooted at v. β_1 is the component that
		// holds attach (empty when v = attach).
		b1 := 0
		var b1Root int32 = -1
		if v != attach {
			b1Root = c.childToward(v, attach)
			b1 = int(c.size[b1Root])
		}
		switch {
		case nAlpha+b1 > p: // Case 1: β ← β_1
			c.dropExcept(v, b1Root)
			nBeta = b1
		case nAlpha+b1 == p: // Case 2: α ← α ∪ β_1
			c.moveToAlpha(b1Root)
			nAlpha = p
		default: // Case 3
			if b1Root >= 0 {
				c.moveToAlpha(b1Root)
			}
			nAlpha += b1 + 1
			c.beta[v], c.alpha[v] = false, true
			keep := int32(-1)
			for _, u := range g.Neighbors(v) {
				if u == b1Root || !c.beta[u] {
					continue
				}
				switch s := int(c.size[u]); {
				case keep >= 0: // beyond β_i: discarded
					c.drop(u)
				case nAlpha+s > p: // β_i
					keep, nBeta = u, s
				default:
					c.moveToAlpha(u)
					nAlpha += s
				}
			}
			attach = int(keep)
		}
	}
	for v, in := range c.alpha {
		if in {
			res.Nodes = append(res.Nodes, v)
		}
	}
	return res
}

// centroid searches β from root, then returns a centroid v (a node whose largest
// component of β \ {v} is smallest) and re-roots the search at v so that c.size holds
// the sizes of v's branches.
func (c *centroidSplitter) centroid(root, nBeta int) int {
	c.search(root)
	best, bestC := root, nBeta
	for _, v := range c.order {
		worst := nBeta - int(c.size[v])
		for _, u := range c.g.Neighbors(int(v)) {
			if c.beta[u] && u != c.parent[v] {
				worst = max(worst, int(c.size[u]))
			}
		}
		if worst < bestC {
			best, bestC = int(v), worst
		}
	}
	c.search(best)
	return best
}

// search fills order, parent and size for β rooted at root (iteratively).
func (c *centroidSplitter) search(root int) {
	c.order = append(c.order[:0], int32(root))
	c.parent[root] = -1
	for h := 0; h < len(c.order); h++ {
		u := c.order[h]
		for _, v := range c.g.Neighbors(int(u)) {
			if c.beta[v] && v != c.parent[u] {
				c.parent[v] = u
				c.order = append(c.order, v)
			}
		}
	}
	for i := len(c.order) - 1; i >= 0; i-- {
		v := c.order[i]
		c.size[v] = 1
		for _, u := range c.g.Neighbors(int(v)) {
			if c.beta[u] && u != c.parent[v] {
				c.size[v] += c.size[u]
			}
		}
	}
}

// childToward returns the neighbour of root (the search root) on the path to x.
func (c *centroidSplitter) childToward(root, x int) int32 {
	v := int32(x)
	for c.parent[v] != int32(root) {
		v = c.parent[v]
	}
	return v
}

// dropExcept removes from β every node except the branch below keep (root's side
// included: root itself is dropped).
func (c *centroidSplitter) dropExcept(root int, keep int32) {
	c.beta[root] = false
	for _, u := range c.g.Neighbors(root) {
		if u != keep && c.beta[u] {
			c.drop(u)
		}
	}
}

// drop removes the branch below u (away from the search root) from β.
func (c *centroidSplitter) drop(u int32) { c.walkBranch(u, false) }

// moveToAlpha moves the branch below u from β to α.
func (c *centroidSplitter) moveToAlpha(u int32) { c.walkBranch(u, true) }

func (c *centroidSplitter) walkBranch(u int32, toAlpha bool) {
	stack := []int32{u}
	for len(stack) > 0 {
		x := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		c.beta[x] = false
		c.alpha[x] = toAlpha || c.alpha[x]
		for _, y := range c.g.Neighbors(int(x)) {
			if c.beta[y] && y != c.parent[x] {
				stack = append(stack, y)
			}
		}
	}
}
