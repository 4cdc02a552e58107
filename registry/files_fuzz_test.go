package registry

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tokendist/tokendist"
)

// checkReaderResult is the oracle of the network file readers: an error starts with
// the prefix once and quotes at most a short part of the input; a graph is consistent
// (the degrees sum to twice the edges, every neighbour a node).
func checkReaderResult(t *testing.T, g *tokendist.Graph, err error) {
	if err != nil {
		msg := err.Error()
		require.True(t, strings.HasPrefix(msg, "tokendist: "), "unprefixed: %.200s", msg)
		require.Equal(t, 1, strings.Count(msg, "tokendist: "), "prefix twice: %.200s", msg)
		require.Less(t, len(msg), 1000, "error echoes the input: %.200s", msg)
		return
	}
	require.NotNil(t, g)
	deg := 0
	for v := 0; v < g.Order(); v++ {
		for _, w := range g.Neighbors(v) {
			require.True(t, int(w) >= 0 && int(w) < g.Order() && int(w) != v, "bad neighbour %d of %d", w, v)
			require.GreaterOrEqual(t, g.EdgeIndex(int(w), v), 0, "edge %d-%d one way only", v, w)
		}
		deg += len(g.Neighbors(v))
	}
	require.Equal(t, 2*g.Size(), deg)
}

// FuzzEdgeList feeds mutated edge lists to the edge-list reader.
func FuzzEdgeList(f *testing.F) {
	for _, s := range []string{"0 1\n1 2\n2 0\n", "# c\n0 1 # x\n\n3 4\n", "0 0\n", "0 -1\n", "1 2 3\n", "0 1073741823\n", "a b\n", "0\t1\r\n1 2", strings.Repeat("0 1\n", 100)} {
		f.Add([]byte(s), 0)
	}
	f.Add([]byte("0 1\n"), 5)
	f.Fuzz(func(t *testing.T, data []byte, n int) {
		if n < 0 || n > 1<<16 {
			n = 0
		}
		g, err := parseEdgeList(bytes.NewReader(data), "fuzz.txt", n)
		if err == nil && n > 0 {
			require.Equal(t, n, g.Order())
		}
		if err != nil && errors.Is(err, tokendist.ErrTooLarge) {
			return
		}
		checkReaderResult(t, g, err)
	})
}

// FuzzDOT feeds mutated DOT documents to the DOT reader.
func FuzzDOT(f *testing.F) {
	for _, s := range []string{"graph { a -- b; b -- c }", "graph { a -- a }", "digraph { a -> b }", "graph { subgraph { a -- b } c -- a }", "graph { a [label=\"x\"]; a -- b -- c -- a }", "strict graph { 1 -- 2; 2 -- 1 }", "graph {", ""} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		g, err := parseDOT(data, "fuzz.dot")
		checkReaderResult(t, g, err)
	})
}
