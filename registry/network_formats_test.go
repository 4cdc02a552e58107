package registry

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tokendist/tokendist/gen"

	"github.com/stretchr/testify/require"
	"github.com/tokendist/tokendist"
	"gonum.org/v1/gonum/graph/encoding/graph6"
)

// buildNetwork resolves and builds one network choice of the default registry.
func buildNetwork(t *testing.T, c Choice, seed uint64) (*tokendist.Graph, error) {
	t.Helper()
	reg := New()
	e, err := reg.Lookup(KindNetwork, c.Name)
	require.NoError(t, err)
	p, err := e.Resolve(c.Params)
	if err != nil {
		return nil, err
	}
	f, err := reg.Constructor(KindNetwork, c.Name)
	require.NoError(t, err)
	return f.(NetworkFunc)(p, seed)
}

// The Petersen graph's graph6 code, as nauty's and NetworkX's documentation give it:
// 10 nodes, 15 edges, 3-regular, diameter 2, girth 5.
const petersenGraph6 = "IheA@GUAo"

func TestGraph6(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "g.g6")
	// A header, a blank line, K4 ("C~"), the Petersen graph, and "Bg": n = 3 and
	// 'g' − 63 = 101000 in binary, the bits of (0,1), (0,2), (1,2): the path 0 − 1 − 2.
	require.NoError(t, os.WriteFile(file, []byte(">>graph6<<C~\n\n"+petersenGraph6+"\nBg\n"), 0o644))
	g, err := buildNetwork(t, ch("graph6", "file", file), 1)
	require.NoError(t, err)
	require.Equal(t, 4, g.Order())
	require.Equal(t, 6, g.Size())

	g, err = buildNetwork(t, ch("graph6", "file", file, "index", 1), 1)
	require.NoError(t, err)
	require.Equal(t, 10, g.Order())
	require.Equal(t, 15, g.Size())
	require.True(t, g.IsRegular())
	d, err := g.Diameter()
	require.NoError(t, err)
	require.Equal(t, 2, d)
	// Girth 5: no triangle and no 4-cycle (no two nodes share two neighbours).
	for u := range 10 {
		for v := u + 1; v < 10; v++ {
			common := 0
			for _, a := range g.Neighbors(u) {
				for _, b := range g.Neighbors(v) {
					if a == b {
						common++
					}
				}
			}
			require.LessOrEqual(t, common, 1, "nodes %d, %d", u, v)
		}
	}

	g, err = buildNetwork(t, ch("graph6", "file", file, "index", 2), 1)
	require.NoError(t, err)
	require.Equal(t, [][]int32{{1}, {0, 2}, {1}}, [][]int32{g.Neighbors(0), g.Neighbors(1), g.Neighbors(2)})

	// A graph written by the library itself reads back the same.
	h, err := tokendist.Hypercube(4)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(file, []byte(graph6Encode(h)+"\n"), 0o644))
	g, err = buildNetwork(t, ch("graph6", "file", file), 1)
	require.NoError(t, err)
	require.Equal(t, h, g)
}

// graph6Encode writes g in graph6 (n < 63), independently of gonum: the bits of the
// upper triangle, column by column, six to a byte, each byte plus 63.
func graph6Encode(g *tokendist.Graph) string {
	n := g.Order()
	var bits []bool
	for j := 1; j < n; j++ {
		for i := 0; i < j; i++ {
			bits = append(bits, g.HasEdge(i, j))
		}
	}
	out := []byte{byte(n + 63)}
	for k := 0; k < len(bits); k += 6 {
		var b byte
		for x := 0; x < 6; x++ {
			b <<= 1
			if k+x < len(bits) && bits[k+x] {
				b |= 1
			}
		}
		out = append(out, b+63)
	}
	return string(out)
}

func TestGraphML(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
		return p
	}
	// As NetworkX's write_graphml writes a 4-cycle with a data key; an edge names a node
	// declared after it.
	good := write("c4.graphml", `<?xml version='1.0' encoding='utf-8'?>
<graphml xmlns="http://graphml.graphdrawing.org/xmlns">
  <key id="d0" for="node" attr.name="label" attr.type="string"/>
  <graph edgedefault="undirected">
    <node id="a"><data key="d0">first</data></node>
    <node id="b"/>
    <node id="c"/>
    <edge source="a" target="b"/>
    <edge source="b" target="c"/>
    <edge source="c" target="d"/>
    <node id="d"/>
    <edge source="d" target="a"/>
  </graph>
  <graph edgedefault="undirected"><node id="x"/></graph>
</graphml>`)
	g, err := buildNetwork(t, ch("graphml", "file", good), 1)
	require.NoError(t, err)
	require.Equal(t, 4, g.Order())
	require.Equal(t, [][]int32{{1, 3}, {0, 2}, {1, 3}, {0, 2}}, [][]int32{g.Neighbors(0), g.Neighbors(1), g.Neighbors(2), g.Neighbors(3)})

	for _, tc := range []struct{ name, text, want string }{
		{"directed", `<graphml><graph edgedefault="directed"><node id="a"/></graph></graphml>`, `edgedefault="directed"`},
		{"directed edge", `<graphml><graph><node id="a"/><node id="b"/><edge source="a" target="b" directed="true"/></graph></graphml>`, "is directed"},
		{"undeclared", `<graphml><graph><node id="a"/><edge source="a" target="zz"/></graph></graphml>`, `undeclared node "zz"`},
		{"duplicate node", `<graphml><graph><node id="a"/><node id="a"/></graph></graphml>`, `"a" is declared twice`},
		{"no id", `<graphml><graph><node/></graph></graphml>`, "no id"},
		{"no target", `<graphml><graph><node id="a"/><edge source="a"/></graph></graphml>`, "lacks its source or target"},
		{"loop", `<graphml><graph><node id="a"/><edge source="a" target="a"/></graph></graphml>`, "GraphML file"},
		{"repeat", `<graphml><graph><node id="a"/><node id="b"/><edge source="a" target="b"/><edge source="b" target="a"/></graph></graphml>`, "GraphML file"},
		{"hyperedge", `<graphml><graph><node id="a"/><hyperedge/></graph></graphml>`, "hyperedges"},
		{"no graph", `<graphml></graphml>`, "no <graph>"},
		{"not xml", `<graphml><graph>`, "GraphML file"},
		{"long id", `<graphml><graph><node id="a"/><edge source="a" target="` + strings.Repeat("x", 5000) + `"/></graph></graphml>`, "(5000 bytes)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, err := buildNetwork(t, ch("graphml", "file", write(tc.name+".graphml", tc.text)), 1)
			require.Nil(t, g)
			require.Error(t, err)
			require.True(t, errors.Is(err, tokendist.ErrBadParameter), "%v", err)
			require.Regexp(t, "^tokendist: ", err.Error())
			require.Contains(t, err.Error(), tc.want)
			require.Less(t, len(err.Error()), 400)
		})
	}
}

// The decoder agrees with gonum's graph6 encoder on random graphs of every order form:
// one byte (n < 63), four bytes (63 ≤ n < 258048) and the edge bytes' padding.
func TestGraph6AgainstGonum(t *testing.T) {
	for _, n := range []int{1, 2, 3, 7, 62, 63, 64, 100, 300} {
		for seed := range uint64(3) {
			p := 0.5
			if n > 10 {
				p = 8 / float64(n)
			}
			g, err := gen.ErdosRenyi(n, max(p, 0.06), seed)
			require.NoError(t, err)
			code := graph6.Encode(g)
			got, err := decodeGraph6([]byte(code))
			require.NoError(t, err)
			require.Equal(t, g, got, "n = %d, seed %d", n, seed)
		}
	}
	// The eight-byte order form (n ≥ 258048) is refused beyond the node limit before
	// anything is allocated.
	_, err := decodeGraph6([]byte("~~" + strings.Repeat("~", 6)))
	require.ErrorContains(t, err, "exceeds the limit")
	_, err = decodeGraph6([]byte("~~??"))
	require.ErrorContains(t, err, "cut short")
	_, err = decodeGraph6([]byte("A\x01"))
	require.ErrorContains(t, err, "byte 1 is 0x1, outside 63..126")
}

func TestGraph6Errors(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "g.g6")
	require.NoError(t, os.WriteFile(file, []byte("C~\n"), 0o644))
	empty := filepath.Join(dir, "empty.g6")
	require.NoError(t, os.WriteFile(empty, []byte("\n\n"), 0o644))
	bad := filepath.Join(dir, "bad.g6")
	require.NoError(t, os.WriteFile(bad, []byte("C~~~~\n"), 0o644))
	for _, tc := range []struct {
		c    Choice
		want string
	}{
		{ch("graph6", "file", file, "index", 1), "holds 1 graphs, index 1 is out of range"},
		{ch("graph6", "file", file, "index", -1), "index -1 is negative"},
		{ch("graph6", "file", empty), "holds no graph"},
		{ch("graph6", "file", bad), `code "C~~~~": bad parameter: n = 4 needs 1 bytes of edges, got 4`},
	} {
		g, err := buildNetwork(t, tc.c, 1)
		require.Nil(t, g)
		require.Error(t, err)
		require.Regexp(t, "^tokendist: ", err.Error())
		require.Contains(t, err.Error(), tc.want)
	}
	_, err := buildNetwork(t, ch("graph6", "file", filepath.Join(dir, "missing")), 1)
	require.ErrorIs(t, err, os.ErrNotExist)
}

// Both readers open files under the registry's policy: a device or a directory is
// refused before anything is read.
func TestNetworkFormatsRefuseNonRegular(t *testing.T) {
	for _, name := range []string{"graph6", "graphml"} {
		for _, path := range []string{"/dev/zero", t.TempDir()} {
			g, err := buildNetwork(t, ch(name, "file", path), 1)
			require.Nil(t, g)
			require.ErrorContains(t, err, "not a regular file", "%s %s", name, path)
			require.Regexp(t, "^tokendist: ", err.Error())
		}
	}
}

// The random families build through the registry with their parameters and a seed
// derived from the run's.
func TestRegistryRandomFamilies(t *testing.T) {
	for _, tc := range []struct {
		c    Choice
		want func(seed uint64) (*tokendist.Graph, error)
	}{
		{ch("erdos-renyi", "n", 60, "p", 0.15), func(s uint64) (*tokendist.Graph, error) { return gen.ErdosRenyi(60, 0.15, s) }},
		{ch("barabasi-albert", "n", 60, "m", 2), func(s uint64) (*tokendist.Graph, error) { return gen.BarabasiAlbert(60, 2, s) }},
		{ch("watts-strogatz", "n", 60, "k", 4, "beta", 0.2), func(s uint64) (*tokendist.Graph, error) { return gen.WattsStrogatz(60, 4, 0.2, s) }},
		{ch("random-geometric", "n", 60, "radius", 0.3), func(s uint64) (*tokendist.Graph, error) { return gen.RandomGeometric(60, 0.3, s) }},
		{ch("watts-strogatz", "n", 60, "k", 4, "beta", 0.2, "seed", 9), func(uint64) (*tokendist.Graph, error) { return gen.WattsStrogatz(60, 4, 0.2, 9) }},
	} {
		got, err := buildNetwork(t, tc.c, 5)
		require.NoError(t, err)
		want, err := tc.want(5)
		require.NoError(t, err)
		require.Equal(t, want, got, "%v", tc.c)
	}
	_, err := buildNetwork(t, ch("erdos-renyi", "n", 60), 1)
	require.ErrorContains(t, err, "p")
	_, err = buildNetwork(t, ch("erdos-renyi", "n", 60, "p", "high"), 1)
	require.ErrorContains(t, err, "parameter p: want float")
}

// FuzzNetworkFormats feeds arbitrary bytes to the graph6 and GraphML readers: they
// return a simple graph or an error that starts with the prefix, and never panic.
func FuzzNetworkFormats(f *testing.F) {
	f.Add([]byte(petersenGraph6), true)
	f.Add([]byte(">>graph6<<C~\nBg\n"), true)
	f.Add([]byte(`<graphml><graph edgedefault="undirected"><node id="a"/><node id="b"/><edge source="a" target="b"/></graph></graphml>`), false)
	f.Add([]byte(`<graphml><graph><node id="a"><port name="p"><node id="q"/></port></node></graph></graphml>`), false)
	f.Fuzz(func(t *testing.T, data []byte, g6 bool) {
		if len(data) > 1<<16 {
			return
		}
		path := filepath.Join(t.TempDir(), "g")
		require.NoError(t, os.WriteFile(path, data, 0o644))
		var g *tokendist.Graph
		var err error
		if g6 {
			g, err = readGraph6(path, 0)
		} else {
			g, err = readGraphML(path)
		}
		if err != nil {
			require.Nil(t, g)
			require.Regexp(t, "^tokendist: ", err.Error())
			require.Less(t, len(err.Error()), 1000, "error too long")
			return
		}
		for v := range g.Order() {
			nb := g.Neighbors(v)
			for i, w := range nb {
				require.NotEqual(t, int32(v), w)
				require.True(t, i == 0 || nb[i-1] < w)
				require.True(t, g.HasEdge(int(w), v))
			}
		}
	})
}
