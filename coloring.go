package tokendist

import (
	"errors"
	"fmt"
)

// ErrInvalidColoring reports an edge colouring that is not a proper colouring of
// exactly the given network.
var ErrInvalidColoring = errors.New("tokendist: invalid edge colouring")

// EdgeColoring is a proper edge colouring of a graph: every edge has a colour in
// 0..Colors()-1 and the edges at any node have distinct colours, so each colour class is
// a matching. It stores the colour of every edge end (indexed like the graph's CSR
// adjacency, see Graph.EdgeIndex) and each colour's matching as a flat array of pairs
// u0, v0, u1, v1, ... with u < v in ascending order, the form the dimension-exchange
// stepper walks. An EdgeColoring is immutable and safe for concurrent readers.
type EdgeColoring struct {
	g     *Graph
	color []int32   // colour of edge end i
	chi   int       // number of colours
	match [][]int32 // match[c] = flat pairs of colour c
}

// NewEdgeColoring builds a colouring of g from colourOf(u, v), called once per edge with
// u < v, and validates it: colours must be in 0..chi-1 for some chi and proper, else the
// error wraps ErrInvalidColoring and names the offending edge. The number of colours is
// one more than the largest colour used.
func NewEdgeColoring(g *Graph, colorOf func(u, v int) int) (*EdgeColoring, error) {
	if g == nil {
		return nil, ErrNilNetwork
	}
	color := make([]int32, len(g.adj))
	for u := 0; u < g.Order(); u++ {
		for i, v := range g.Neighbors(u) {
			if int(v) > u {
				c := colorOf(u, int(v))
				if c < 0 || c > 1<<30 {
					return nil, fmt.Errorf("%w: edge (%d, %d) has colour %d", ErrInvalidColoring, u, v, c)
				}
				color[g.off[u]+i] = int32(c)
				color[g.EdgeIndex(int(v), u)] = int32(c)
			}
		}
	}
	return newColoring(g, color)
}

// newColoring validates per-end colours and builds the matchings.
func newColoring(g *Graph, color []int32) (*EdgeColoring, error) {
	chi := 0
	for _, c := range color {
		chi = max(chi, int(c)+1)
	}
	seen := make([]int32, chi) // seen[c] = 1 + last node that had colour c at an end
	for u := 0; u < g.Order(); u++ {
		for i, v := range g.Neighbors(u) {
			c := color[g.off[u]+i]
			if c < 0 {
				return nil, fmt.Errorf("%w: edge (%d, %d) has colour %d", ErrInvalidColoring, u, v, c)
			}
			if color[g.EdgeIndex(int(v), u)] != c {
				return nil, fmt.Errorf("%w: edge (%d, %d) has two colours", ErrInvalidColoring, u, v)
			}
			if seen[c] == int32(u)+1 {
				return nil, fmt.Errorf("%w: two edges at node %d have colour %d", ErrInvalidColoring, u, c)
			}
			seen[c] = int32(u) + 1
		}
	}
	count := make([]int, chi)
	for _, c := range color {
		count[c]++
	}
	match := make([][]int32, chi)
	for c := range match {
		match[c] = make([]int32, 0, count[c]) // count[c] = 2·edges = pair entries
	}
	for u := 0; u < g.Order(); u++ {
		for i, v := range g.Neighbors(u) {
			if int(v) > u {
				c := color[g.off[u]+i]
				match[c] = append(match[c], int32(u), v)
			}
		}
	}
	return &EdgeColoring{g: g, color: color, chi: chi, match: match}, nil
}

// Graph returns the coloured graph.
func (ec *EdgeColoring) Graph() *Graph { return ec.g }

// Colors returns the number of colours χ.
func (ec *EdgeColoring) Colors() int { return ec.chi }

// Color returns the colour of edge (u, v), or -1 if u and v are not adjacent.
func (ec *EdgeColoring) Color(u, v int) int {
	if u < 0 || u >= ec.g.Order() {
		return -1
	}
	i := ec.g.EdgeIndex(u, v)
	if i < 0 {
		return -1
	}
	return int(ec.color[i])
}

// EndColor returns the colour of edge end i (0 ≤ i < 2·Size()), in CSR order.
func (ec *EdgeColoring) EndColor(i int) int { return int(ec.color[i]) }

// Matching returns colour c's edges as flat pairs u0, v0, u1, v1, ... (u < v, ascending).
// The slice is read-only.
func (ec *EdgeColoring) Matching(c int) []int32 { return ec.match[c] }

// Validate checks that ec is a proper colouring of exactly net (same nodes and edges),
// returning an error wrapping ErrInvalidColoring otherwise.
func (ec *EdgeColoring) Validate(net Network) error {
	g, err := AsGraph(net)
	if err != nil {
		return err
	}
	if g != ec.g {
		if g.Order() != ec.g.Order() || g.Size() != ec.g.Size() {
			return fmt.Errorf("%w: colouring of a graph with %d nodes and %d edges used on one with %d nodes and %d edges",
				ErrInvalidColoring, ec.g.Order(), ec.g.Size(), g.Order(), g.Size())
		}
		for u := 0; u < g.Order(); u++ {
			a, b := g.Neighbors(u), ec.g.Neighbors(u)
			for i := range a {
				if i >= len(b) || a[i] != b[i] {
					return fmt.Errorf("%w: the network's edges at node %d differ from the coloured graph's", ErrInvalidColoring, u)
				}
			}
		}
	}
	_, err = newColoring(ec.g, ec.color)
	return err
}
