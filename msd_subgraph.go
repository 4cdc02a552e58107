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

// centroidSplitter holds CONSTRUCT SUBGRAPH's state: α and β as membership marks and
// scratch for the search over β.
type centroidSplitter struct {
	g        *Graph
	alpha    []bool
	beta     []bool
	parent   []int32 // towards the search root
	size     []int32 // nodes below, in the search tree
	maxChild []int32 // largest branch below
	order    []int32
	stack    []int32
}

func newCentroidSplitter(g *Graph) *centroidSplitter {
	n := g.Order()
	return &centroidSplitter{g: g, alpha: make([]bool, n), beta: make([]bool, n), parent: make([]int32, n),
		size: make([]int32, n), maxChild: make([]int32, n), order: make([]int32, 0, n)}
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
	attach := -1 // β's end of the single α-β edge
	if n > 1 {
		attach = int(g.Neighbors(leaf)[0])
	}
	for nAlpha < p {
		res.Iterations++
		// Search β from attach: the branch of a centroid v towards attach is β_1 (empty
		// when v = attach); the others hang below v.
		v := c.centroid(attach, nBeta)
		c.beta[v] = false // splits β into the components of β \ {v}
		b1Root, b1 := int32(-1), 0
		if v != attach {
			b1Root, b1 = c.parent[v], nBeta-int(c.size[v])
		}
		switch {
		case nAlpha+b1 > p: // Case 1: β ← β_1
			for _, u := range g.Neighbors(v) {
				if c.beta[u] && u != b1Root {
					c.walkBranch(u, false)
				}
			}
			nBeta = b1
		case nAlpha+b1 == p: // Case 2: α ← α ∪ β_1
			c.walkBranch(b1Root, true)
			nAlpha = p
		default: // Case 3: α ← α ∪ β_1 ∪ {v} ∪ β_2 ∪ ... ∪ β_{i-1}, β ← β_i
			if b1Root >= 0 {
				c.walkBranch(b1Root, true)
			}
			c.alpha[v] = true
			nAlpha += b1 + 1
			keep := int32(-1)
			for _, u := range g.Neighbors(v) {
				if !c.beta[u] {
					continue
				}
				switch s := int(c.size[u]); {
				case keep >= 0: // beyond β_i: discarded
					c.walkBranch(u, false)
				case nAlpha+s > p:
					keep, nBeta = u, s
				default:
					c.walkBranch(u, true)
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

// centroid searches β from root and returns a centroid: a node v whose largest
// component of β \ {v} (the part towards root, nBeta - size[v], or a branch below v) is
// smallest. By Kang and Ault it has at most nBeta/2 nodes.
func (c *centroidSplitter) centroid(root, nBeta int) int {
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
	for _, v := range c.order {
		c.size[v], c.maxChild[v] = 1, 0
	}
	best, bestC := root, nBeta
	for i := len(c.order) - 1; i >= 0; i-- {
		v := c.order[i]
		if worst := max(nBeta-int(c.size[v]), int(c.maxChild[v])); worst < bestC {
			best, bestC = int(v), worst
		}
		if p := c.parent[v]; p >= 0 {
			c.size[p] += c.size[v]
			c.maxChild[p] = max(c.maxChild[p], c.size[v])
		}
	}
	return best
}

// walkBranch removes from β the component of β that contains u (v, its separator, is
// already out of β) and adds it to α when toAlpha.
func (c *centroidSplitter) walkBranch(u int32, toAlpha bool) {
	c.stack = append(c.stack[:0], u)
	c.beta[u] = false
	for len(c.stack) > 0 {
		x := c.stack[len(c.stack)-1]
		c.stack = c.stack[:len(c.stack)-1]
		c.alpha[x] = toAlpha
		for _, y := range c.g.Neighbors(int(x)) {
			if c.beta[y] {
				c.beta[y] = false
				c.stack = append(c.stack, y)
			}
		}
	}
}
