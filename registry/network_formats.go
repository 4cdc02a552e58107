package registry

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/tokendist/tokendist/gen"

	"github.com/tokendist/tokendist"
	"github.com/tokendist/tokendist/internal/errs"
	"github.com/tokendist/tokendist/internal/files"
)

// readGraph6 reads the graph on line index (0-based, blank lines and ">>graph6<<" headers
// skipped) of a graph6 file (McKay's format, as nauty, NetworkX and House of Graphs
// write it). It costs O(n²), the size of the code.
func readGraph6(path string, index int) (*tokendist.Graph, error) {
	name := files.Name(path)
	if index < 0 {
		return nil, errs.BadParam("graph6 file %s: index %d is negative", name, index)
	}
	data, err := readFile(path, "graph6 file", graph6Factor)
	if err != nil {
		return nil, err
	}
	k := 0
	for lineNo, line := range bytes.Split(data, []byte("\n")) {
		line = bytes.TrimSpace(bytes.TrimPrefix(bytes.TrimSpace(line), []byte(">>graph6<<")))
		if len(line) == 0 {
			continue
		}
		if k < index {
			k++
			continue
		}
		g, err := decodeGraph6(line)
		if err != nil {
			return nil, wrapf(err, "graph6 file %s:%d: code %s", name, lineNo+1, errs.Quote(line))
		}
		return g, nil
	}
	if k == 0 && index == 0 {
		return nil, errs.BadParam("graph6 file %s holds no graph", name)
	}
	return nil, errs.BadParam("graph6 file %s holds %d graphs, index %d is out of range", name, k, index)
}

// decodeGraph6 decodes one graph6 code: the order n in 1, 4 or 8 bytes, then the upper
// triangle of the adjacency matrix, column by column (x(0,1), x(0,2), x(1,2), ...), six
// bits to a byte, each byte plus 63.
func decodeGraph6(code []byte) (*tokendist.Graph, error) {
	for i, c := range code {
		if c < 63 || c > 126 {
			return nil, errs.BadParam("byte %d is %#x, outside 63..126", i, c)
		}
	}
	var n int64
	var rest []byte
	switch {
	case code[0] < 126:
		n, rest = int64(code[0]-63), code[1:]
	case len(code) >= 4 && code[1] < 126:
		n, rest = int64(code[1]-63)<<12|int64(code[2]-63)<<6|int64(code[3]-63), code[4:]
	case len(code) >= 8 && code[1] == 126:
		for _, c := range code[2:8] {
			n = n<<6 | int64(c-63)
		}
		rest = code[8:]
	default:
		return nil, errs.BadParam("the order is cut short")
	}
	if n >= maxFileNodes {
		return nil, errs.BadParam("order %d exceeds the limit %d", n, maxFileNodes-1)
	}
	bits := n * (n - 1) / 2
	if want := (bits + 5) / 6; int64(len(rest)) != want {
		return nil, errs.BadParam("n = %d needs %d bytes of edges, got %d", n, want, len(rest))
	}
	var pairs [][2]int
	i, j := 0, 1
	for _, c := range rest {
		for b := 5; b >= 0 && j < int(n); b-- {
			if (c-63)>>b&1 == 1 {
				pairs = append(pairs, [2]int{i, j})
			}
			if i++; i == j {
				i, j = 0, j+1
			}
		}
	}
	return tokendist.NewGraph(int(n), pairs)
}

// readGraphML reads the first graph of a GraphML file: nodes are numbered 0..n-1 in
// the order their <node> elements appear, and every <edge> joins two declared nodes.
// Data keys and attributes other than id, source and target are ignored; a graph with
// edgedefault="directed", a hyperedge, a self-loop or a repeated edge is refused (the
// library's networks are simple and undirected). It costs O(n + m) time after the file
// is read.
func readGraphML(path string) (*tokendist.Graph, error) {
	data, err := readFile(path, "GraphML file", graphMLFactor)
	if err != nil {
		return nil, err
	}
	bad := func(format string, args ...any) error {
		return errs.BadParam("GraphML file %s: "+format, append([]any{files.Name(path)}, args...)...)
	}
	attr := func(e xml.StartElement, name string) (string, bool) {
		for _, a := range e.Attr {
			if a.Name.Local == name {
				return a.Value, true
			}
		}
		return "", false
	}
	dec := xml.NewDecoder(bytes.NewReader(data))
	ids := map[string]int{}
	var edges [][2]int
	var sources, targets []string
	depth, graphDepth := 0, -1
	done := false
	for !done {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, bad("%s", shortMessage(err.Error()))
		}
		switch t := tok.(type) {
		case xml.StartElement:
			depth++
			switch t.Name.Local {
			case "graph":
				if graphDepth >= 0 {
					return nil, bad("nested graphs are not supported")
				}
				graphDepth = depth
				if d, _ := attr(t, "edgedefault"); d == "directed" {
					return nil, bad(`edgedefault="directed": the library's networks are undirected`)
				}
			case "node":
				if graphDepth < 0 || depth != graphDepth+1 {
					continue // a node of a nested port or outside the graph
				}
				id, ok := attr(t, "id")
				if !ok {
					return nil, bad("a node has no id")
				}
				if _, dup := ids[id]; dup {
					return nil, bad("node id %s is declared twice", errs.Quote([]byte(id)))
				}
				if len(ids) >= maxFileNodes {
					return nil, bad("more than %d nodes", maxFileNodes)
				}
				ids[id] = len(ids)
			case "edge":
				if graphDepth < 0 {
					continue
				}
				s, ok1 := attr(t, "source")
				d, ok2 := attr(t, "target")
				if !ok1 || !ok2 {
					return nil, bad("an edge lacks its source or target")
				}
				if dir, _ := attr(t, "directed"); dir == "true" {
					return nil, bad("edge %s–%s is directed: the library's networks are undirected", errs.Quote([]byte(s)), errs.Quote([]byte(d)))
				}
				sources, targets = append(sources, s), append(targets, d)
			case "hyperedge":
				return nil, bad("hyperedges are not supported")
			}
		case xml.EndElement:
			if t.Name.Local == "graph" && depth == graphDepth {
				done = true // only the first graph
			}
			depth--
		}
	}
	if graphDepth < 0 {
		return nil, bad("no <graph> element")
	}
	// Edges may come before the nodes they join: resolve them at the end.
	for i := range sources {
		u, ok := ids[sources[i]]
		if !ok {
			return nil, bad("edge %d names the undeclared node %s", i, errs.Quote([]byte(sources[i])))
		}
		v, ok := ids[targets[i]]
		if !ok {
			return nil, bad("edge %d names the undeclared node %s", i, errs.Quote([]byte(targets[i])))
		}
		edges = append(edges, [2]int{u, v})
	}
	g, err := tokendist.NewGraph(len(ids), edges)
	if err != nil {
		return nil, wrapf(err, "GraphML file %s", files.Name(path))
	}
	return g, nil
}

// registerNetworkFamilies registers the random families of network science and the
// graph6 and GraphML file formats.
func registerNetworkFamilies(r *Registry) {
	n := pInt("n", required, "number of nodes")
	pFloat := func(name, doc string) Param { return Param{Name: name, Type: ParamFloat, Doc: doc} }
	family := func(e Entry, build func(p Params, n int, seed uint64) (*tokendist.Graph, error)) {
		e.Params = append(append([]Param{n}, e.Params...), seedParam)
		must(r.RegisterNetwork(e, func(p Params, seed uint64) (*tokendist.Graph, error) {
			n, err := p.Int("n")
			if err != nil {
				return nil, err
			}
			return build(p, n, p.Seed(seed))
		}))
	}
	family(Entry{Name: "erdos-renyi", Doc: "a connected G(n, p) random graph, redrawn until connected (gen.ErdosRenyi)",
		Params: []Param{pFloat("p", "edge probability; above ln(n)/n for connectivity")}},
		func(p Params, n int, seed uint64) (*tokendist.Graph, error) {
			prob, err := p.Float("p")
			if err != nil {
				return nil, err
			}
			return gen.ErdosRenyi(n, prob, seed)
		})
	family(Entry{Name: "barabasi-albert", Doc: "a Barabási–Albert preferential-attachment graph (gen.BarabasiAlbert)",
		Params: []Param{pInt("m", required, "edges from each new node")}},
		func(p Params, n int, seed uint64) (*tokendist.Graph, error) {
			m, err := p.Int("m")
			if err != nil {
				return nil, err
			}
			return gen.BarabasiAlbert(n, m, seed)
		})
	family(Entry{Name: "watts-strogatz", Doc: "a connected Watts–Strogatz small-world graph (gen.WattsStrogatz)",
		Params: []Param{pInt("k", required, "lattice degree (even)"), pFloat("beta", "rewiring probability in [0, 1]")}},
		func(p Params, n int, seed uint64) (*tokendist.Graph, error) {
			k, err := p.Int("k")
			if err != nil {
				return nil, err
			}
			beta, err := p.Float("beta")
			if err != nil {
				return nil, err
			}
			return gen.WattsStrogatz(n, k, beta, seed)
		})
	family(Entry{Name: "random-geometric", Doc: "a connected random geometric graph in the unit square (gen.RandomGeometric)",
		Params: []Param{pFloat("radius", "connection radius; above sqrt(ln n/(π n)) for connectivity")}},
		func(p Params, n int, seed uint64) (*tokendist.Graph, error) {
			radius, err := p.Float("radius")
			if err != nil {
				return nil, err
			}
			return gen.RandomGeometric(n, radius, seed)
		})
	file := Param{Name: "file", Type: ParamString, Doc: "path of the file"}
	must(r.RegisterNetwork(Entry{Name: "graph6", Doc: "a network read from a graph6 file (nauty, NetworkX, House of Graphs; one graph per line)",
		Params: []Param{file, pInt("index", 0, "which graph of the file (0-based line, blank lines skipped)")}},
		func(p Params, _ uint64) (*tokendist.Graph, error) {
			f, err := p.Str("file")
			if err != nil {
				return nil, err
			}
			i, err := p.Int("index")
			if err != nil {
				return nil, err
			}
			return readGraph6(f, i)
		}))
	must(r.RegisterNetwork(Entry{Name: "graphml", Doc: "a network read from a GraphML file (undirected; nodes numbered in order of appearance)",
		Params: []Param{file}},
		func(p Params, _ uint64) (*tokendist.Graph, error) {
			f, err := p.Str("file")
			if err != nil {
				return nil, err
			}
			return readGraphML(f)
		}))
}

// shortMessage keeps the first 200 bytes of a decoder's error message, which may quote
// an arbitrarily long token of the file (FuzzNetworkFormats found a 4 KB element name).
func shortMessage(s string) string {
	const n = 200
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + fmt.Sprintf("... (%d bytes)", len(s))
}
