package tokendist

import (
	"fmt"
	"slices"

	"gonum.org/v1/gonum/graph"
	"gonum.org/v1/gonum/graph/simple"
)

// Graph implements gonum's graph.Undirected with node IDs 0..n-1, so gonum's path,
// community, spectral and traversal packages run on it directly.
var _ graph.Undirected = (*Graph)(nil)

// Node returns the node with the given ID, or nil if it does not exist (gonum graph.Graph).
func (g *Graph) Node(id int64) graph.Node {
	if id < 0 || id >= int64(g.Order()) {
		return nil
	}
	return simple.Node(id)
}

// Nodes returns all nodes in ascending ID order (gonum graph.Graph).
func (g *Graph) Nodes() graph.Nodes {
	return &rangeNodes{next: 0, end: int64(g.Order())}
}

// From returns the neighbours of node id in ascending order (gonum graph.Graph).
func (g *Graph) From(id int64) graph.Nodes {
	if id < 0 || id >= int64(g.Order()) {
		return graph.Empty
	}
	return &listNodes{list: g.Neighbors(int(id)), pos: -1}
}

// HasEdgeBetween reports whether nodes xid and yid are adjacent (gonum graph.Graph).
func (g *Graph) HasEdgeBetween(xid, yid int64) bool {
	if xid < 0 || yid < 0 || xid >= int64(g.Order()) || yid >= int64(g.Order()) {
		return false
	}
	return g.HasEdge(int(xid), int(yid))
}

// Edge returns the edge from uid to vid, or nil if there is none (gonum graph.Graph).
func (g *Graph) Edge(uid, vid int64) graph.Edge {
	if !g.HasEdgeBetween(uid, vid) {
		return nil
	}
	return simple.Edge{F: simple.Node(uid), T: simple.Node(vid)}
}

// EdgeBetween returns the edge between xid and yid, or nil (gonum graph.Undirected).
func (g *Graph) EdgeBetween(xid, yid int64) graph.Edge { return g.Edge(xid, yid) }

// rangeNodes iterates over the IDs next..end-1.
type rangeNodes struct {
	next, end int64
	cur       int64
}

func (it *rangeNodes) Next() bool {
	if it.next >= it.end {
		return false
	}
	it.cur = it.next
	it.next++
	return true
}
func (it *rangeNodes) Len() int { return int(it.end - it.next) }
func (it *rangeNodes) Reset()   { it.next = 0 }
func (it *rangeNodes) Node() graph.Node {
	if it.next == 0 || it.cur >= it.end {
		return nil
	}
	return simple.Node(it.cur)
}

// listNodes iterates over an adjacency list.
type listNodes struct {
	list []int32
	pos  int
}

func (it *listNodes) Next() bool {
	if it.pos+1 >= len(it.list) {
		it.pos = len(it.list)
		return false
	}
	it.pos++
	return true
}
func (it *listNodes) Len() int { return max(0, len(it.list)-it.pos-1) }
func (it *listNodes) Reset()   { it.pos = -1 }
func (it *listNodes) Node() graph.Node {
	if it.pos < 0 || it.pos >= len(it.list) {
		return nil
	}
	return simple.Node(it.list[it.pos])
}

// FromGonum converts any gonum undirected graph to a *Graph. Nodes are relabelled
// densely in ascending order of their gonum IDs: node i of the result is ids[i] in g.
// Self-loops are rejected (the package works on simple graphs).
func FromGonum(g graph.Undirected) (*Graph, []int64, error) {
	if g == nil {
		return nil, nil, ErrNilNetwork
	}
	ids := make([]int64, 0)
	for it := g.Nodes(); it.Next(); {
		ids = append(ids, it.Node().ID())
	}
	slices.Sort(ids)
	if len(ids) >= maxNodes {
		return nil, nil, badParam("gonum graph with %d nodes exceeds the int32 node limit", len(ids))
	}
	index := make(map[int64]int32, len(ids))
	for i, id := range ids {
		index[id] = int32(i)
	}
	var pairs []int32
	for i, id := range ids {
		for it := g.From(id); it.Next(); {
			j, ok := index[it.Node().ID()]
			if !ok {
				return nil, nil, badParam("gonum graph has an edge to unknown node %d", it.Node().ID())
			}
			if int(j) == i {
				return nil, nil, fmt.Errorf("%w: self-loop at gonum node %d", ErrBadParameter, id)
			}
			if int(j) > i {
				pairs = append(pairs, int32(i), j)
			}
		}
	}
	out, err := fromPairs(len(ids), pairs, false)
	return out, ids, err
}
