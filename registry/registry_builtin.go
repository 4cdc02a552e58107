package registry

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/tokendist/tokendist"
	"github.com/tokendist/tokendist/internal/errs"
	"github.com/tokendist/tokendist/internal/files"

	"gonum.org/v1/gonum/graph/encoding/dot"
	"gonum.org/v1/gonum/graph/simple"
)

// The paper references of the registry's entries.
const (
	paperHoule     = "Houle, Symvonis, Wood (JPDC 2004)"
	paperGao       = "Gao, Rosenberg"
	paperPlaxton   = "Plaxton"
	paperBerenbink = "Berenbrink, Cooper, Friedetzky, Friedrich, Sauerwald"
	paperMargara   = "Margara, Pistocchi, Vassura"
)

func pInt(name string, def int64, doc string) Param {
	var d any
	if def != math.MinInt64 {
		d = def
	}
	return Param{Name: name, Type: ParamInt, Default: d, Doc: doc}
}

func pBool(name, doc string) Param {
	return Param{Name: name, Type: ParamBool, Default: false, Doc: doc}
}

func pStr(name, def, doc string, allowed ...string) Param {
	return Param{Name: name, Type: ParamString, Default: def, Doc: doc, Allowed: allowed}
}

const required = math.MinInt64

var seedParam = pInt("seed", -1, "generator seed; -1 derives it from the run's seed")

func must(err error) {
	if err != nil {
		panic(err) // only for the built-in entries, checked by the tests
	}
}

func registerBuiltins(r *Registry) {
	registerNetworks(r)
	registerLoads(r)
	registerAlgorithms(r)
	registerMetrics(r)
	registerDynamic(r)
}

func registerNetworks(r *Registry) {
	size := func(name, doc string, f func(n int) (*tokendist.Graph, error)) {
		must(r.RegisterNetwork(Entry{Name: name, Doc: doc, Params: []Param{pInt("n", required, "number of nodes")}},
			func(p Params, _ uint64) (*tokendist.Graph, error) {
				n, err := p.Int("n")
				if err != nil {
					return nil, err
				}
				return f(n)
			}))
	}
	size("path", "the path P_n (tokendist.Path)", tokendist.Path)
	size("ring", "the cycle R_n (tokendist.Ring; the ring of Gao–Rosenberg)", tokendist.Ring)
	size("star", "the star K_{1,n-1} (tokendist.Star)", tokendist.Star)
	size("complete", "the complete graph K_n (tokendist.Complete)", tokendist.Complete)
	dim := func(name, doc, paper string, f func(d int) (*tokendist.Graph, error)) {
		must(r.RegisterNetwork(Entry{Name: name, Doc: doc, Paper: paper, Params: []Param{pInt("d", required, "dimension (2^d nodes)")}},
			func(p Params, _ uint64) (*tokendist.Graph, error) {
				d, err := p.Int("d")
				if err != nil {
					return nil, err
				}
				return f(d)
			}))
	}
	dim("hypercube", "the d-dimensional hypercube (tokendist.Hypercube)", paperPlaxton+", section 2", tokendist.Hypercube)
	dim("shuffle-exchange", "the d-dimensional shuffle-exchange (tokendist.ShuffleExchange)", paperPlaxton+", section 2.2", tokendist.ShuffleExchange)
	must(r.RegisterNetwork(Entry{Name: "kary-tree", Doc: "the complete k-ary tree T_{h,k} of height h (tokendist.KaryTree)", Paper: paperHoule + ", section 4",
		Params: []Param{pInt("height", required, "height h (levels − 1)"), pInt("arity", 2, "children per inner node k")}},
		func(p Params, _ uint64) (*tokendist.Graph, error) {
			h, err := p.Int("height")
			if err != nil {
				return nil, err
			}
			k, err := p.Int("arity")
			if err != nil {
				return nil, err
			}
			return tokendist.KaryTree(tokendist.KaryShape{Height: h, Arity: k})
		}))
	must(r.RegisterNetwork(Entry{Name: "random-tree", Doc: "a uniform random labelled tree on n nodes (tokendist.RandomTree)",
		Params: []Param{pInt("n", required, "number of nodes"), seedParam}},
		func(p Params, seed uint64) (*tokendist.Graph, error) {
			n, err := p.Int("n")
			if err != nil {
				return nil, err
			}
			return tokendist.RandomTree(n, p.Seed(seed))
		}))
	must(r.RegisterNetwork(Entry{Name: "random-regular", Doc: "a random d-regular graph on n nodes (tokendist.RandomRegular)", Paper: paperBerenbink + ", Table 1",
		Params: []Param{pInt("n", required, "number of nodes"), pInt("d", required, "degree"), seedParam}},
		func(p Params, seed uint64) (*tokendist.Graph, error) {
			n, err := p.Int("n")
			if err != nil {
				return nil, err
			}
			d, err := p.Int("d")
			if err != nil {
				return nil, err
			}
			return tokendist.RandomRegular(n, d, p.Seed(seed))
		}))
	sides := func(name, doc string, f func(s ...int) (*tokendist.Graph, error)) {
		must(r.RegisterNetwork(Entry{Name: name, Doc: doc, Paper: paperBerenbink + ", Table 1",
			Params: []Param{{Name: "sides", Type: ParamInts, Doc: "side lengths, one per dimension"}}},
			func(p Params, _ uint64) (*tokendist.Graph, error) {
				s, err := p.Ints("sides")
				if err != nil {
					return nil, err
				}
				return f(s...)
			}))
	}
	sides("torus", "the torus with the given sides (tokendist.Torus)", tokendist.Torus)
	sides("mesh", "the mesh (grid without wrap-around) with the given sides (tokendist.Mesh)", tokendist.Mesh)
	must(r.RegisterNetwork(Entry{Name: "edge-list", Doc: "a network read from a text file of lines \"u v\" (nodes 0..n-1; '#' starts a comment)",
		Params: []Param{{Name: "file", Type: ParamString, Doc: "path of the edge-list file"}, pInt("n", 0, "number of nodes (0: one more than the largest node)")}},
		func(p Params, _ uint64) (*tokendist.Graph, error) {
			f, err := p.Str("file")
			if err != nil {
				return nil, err
			}
			n, err := p.Int("n")
			if err != nil {
				return nil, err
			}
			return readEdgeList(f, n)
		}))
	must(r.RegisterNetwork(Entry{Name: "dot", Doc: "a network read from a Graphviz DOT file (undirected graph; nodes numbered in order of appearance)",
		Params: []Param{{Name: "file", Type: ParamString, Doc: "path of the DOT file"}}},
		func(p Params, _ uint64) (*tokendist.Graph, error) {
			f, err := p.Str("file")
			if err != nil {
				return nil, err
			}
			return readDOT(f)
		}))
	registerNetworkFamilies(r)
}

// maxFileNodes bounds the nodes of a network read from a file (int32 CSR indices).
const maxFileNodes = 1 << 30

func readEdgeList(path string, n int) (*tokendist.Graph, error) {
	fh, err := openFile(path, "edge list", edgeListFactor)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	return parseEdgeList(fh, files.Name(path), n)
}

// parseEdgeList reads an edge list from r (name names it in errors): lines "u v", '#'
// starts a comment; n = 0 takes the largest node + 1. Lines are at most 1 MiB and the
// edges within the memory budget.
func parseEdgeList(r io.Reader, name string, n int) (*tokendist.Graph, error) {
	var edges [][2]int
	maxNode := -1
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	line := 0
	for sc.Scan() {
		line++
		t := sc.Text()
		if i := strings.IndexByte(t, '#'); i >= 0 {
			t = t[:i]
		}
		f := strings.Fields(t)
		if len(f) == 0 {
			continue
		}
		if len(f) != 2 {
			return nil, errs.BadParam("edge list %s:%d: want two node numbers, got %s", name, line, errs.Quote([]byte(t)))
		}
		var e [2]int
		for i := range f {
			v, err := strconv.Atoi(f[i])
			if err != nil || v < 0 || v >= maxFileNodes {
				return nil, errs.BadParam("edge list %s:%d: bad node %s (want 0..%d)", name, line, errs.Quote([]byte(f[i])), maxFileNodes-1)
			}
			e[i] = v
			maxNode = max(maxNode, v)
		}
		if len(edges) == cap(edges) {
			if err := errs.CheckAlloc("edge list "+name, int64(3*len(edges)+16), 16); err != nil {
				return nil, err
			}
		}
		edges = append(edges, e)
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, errs.BadParam("edge list %s:%d: a line longer than %d bytes", name, line+1, 1<<20)
		}
		return nil, errs.Wrapf(err, "edge list %s", name)
	}
	if n == 0 {
		n = maxNode + 1
	}
	if maxNode >= n {
		return nil, errs.BadParam("edge list %s: node %d but n = %d", name, maxNode, n)
	}
	return tokendist.NewGraph(n, edges)
}

func readDOT(path string) (*tokendist.Graph, error) {
	data, err := readFile(path, "DOT file", dotFactor)
	if err != nil {
		return nil, err
	}
	return parseDOT(data, files.Name(path))
}

// parseDOT builds the network of a DOT document (name names it in errors); a panic of
// gonum's parser or builder is reported as an error.
func parseDOT(data []byte, name string) (g *tokendist.Graph, err error) {
	dst := simple.NewUndirectedGraph()
	defer func() {
		// gonum's builders panic on some malformed inputs (self-loops); report them.
		if p := recover(); p != nil {
			g, err = nil, errs.BadParam("DOT file %s: %s", name, errs.Quote([]byte(fmt.Sprint(p))))
		}
	}()
	if err := dot.Unmarshal(data, dst); err != nil {
		return nil, errs.BadParam("DOT file %s: %s", name, errs.Quote([]byte(err.Error())))
	}
	g, _, err = tokendist.FromGonum(dst)
	return g, err
}

func registerLoads(r *Registry) {
	tokens := pInt("tokens", required, "total number of tokens")
	must(r.RegisterLoads(Entry{Name: "point-mass", Doc: "all tokens on one node (tokendist.PointMass)",
		Params: []Param{tokens, pInt("node", 0, "the node holding them")}},
		func(g *tokendist.Graph, p Params, _ uint64) (tokendist.Loads, error) {
			t, err := p.Int64("tokens")
			if err != nil {
				return nil, err
			}
			v, err := p.Int("node")
			if err != nil {
				return nil, err
			}
			return tokendist.PointMass(g.Order(), t, v)
		}))
	must(r.RegisterLoads(Entry{Name: "uniform-random", Doc: "each token on a uniformly random node (tokendist.UniformRandom)",
		Params: []Param{tokens, seedParam}},
		func(g *tokendist.Graph, p Params, seed uint64) (tokendist.Loads, error) {
			t, err := p.Int64("tokens")
			if err != nil {
				return nil, err
			}
			return tokendist.UniformRandom(g.Order(), t, p.Seed(seed))
		}))
	must(r.RegisterLoads(Entry{Name: "random-range", Doc: "each node's load uniform in [lo, hi] (tokendist.RandomRange)",
		Params: []Param{pInt("lo", 0, "smallest load"), pInt("hi", required, "largest load"), seedParam}},
		func(g *tokendist.Graph, p Params, seed uint64) (tokendist.Loads, error) {
			lo, err := p.Int64("lo")
			if err != nil {
				return nil, err
			}
			hi, err := p.Int64("hi")
			if err != nil {
				return nil, err
			}
			return tokendist.RandomRange(g.Order(), lo, hi, p.Seed(seed))
		}))
	must(r.RegisterLoads(Entry{Name: "distance", Doc: "each node holds scale × its distance from a node (tokendist.DistanceLoads); scale 0 is the maximum degree d, Table 1's gradient start d·dist, on which RSW moves nothing",
		Paper:  paperBerenbink + ", Table 1",
		Params: []Param{pInt("node", -1, "the source node; -1: a peripheral node (tokendist.Peripheral)"), pInt("scale", 1, "tokens per unit of distance; 0: the maximum degree")}},
		func(g *tokendist.Graph, p Params, _ uint64) (tokendist.Loads, error) {
			v, err := p.Int("node")
			if err != nil {
				return nil, err
			}
			scale, err := p.Int64("scale")
			if err != nil {
				return nil, err
			}
			if scale < 0 || scale > 1<<32 {
				return nil, errs.BadParam("scale %d (want 0..2^32)", scale)
			}
			if scale == 0 {
				scale = int64(g.MaxDegree())
			}
			if v == -1 {
				if v, err = r.peripheral(g); err != nil { // once per network (O(n·m))
					return nil, err
				}
			}
			l, err := tokendist.DistanceLoads(g, v)
			if err != nil {
				return nil, err
			}
			for i := range l {
				l[i] *= scale
			}
			return l, nil
		}))
	must(r.RegisterLoads(Entry{Name: "constant", Doc: "every node holds the same load, plus extra tokens on node 0",
		Params: []Param{pInt("per_node", required, "tokens per node"), pInt("extra", 0, "additional tokens on node 0")}},
		func(g *tokendist.Graph, p Params, _ uint64) (tokendist.Loads, error) {
			k, err := p.Int64("per_node")
			if err != nil {
				return nil, err
			}
			x, err := p.Int64("extra")
			if err != nil {
				return nil, err
			}
			l := make(tokendist.Loads, g.Order())
			for i := range l {
				l[i] = k
			}
			if len(l) > 0 {
				l[0] += x
			}
			if _, err := l.Validate(); err != nil {
				return nil, err
			}
			return l, nil
		}))
	must(r.RegisterLoads(Entry{Name: "explicit", Doc: "the loads listed, one per node",
		Params: []Param{{Name: "values", Type: ParamInts, Doc: "load of node 0, 1, ..."}}},
		func(g *tokendist.Graph, p Params, _ uint64) (tokendist.Loads, error) {
			v, err := p.get("values")
			if err != nil {
				return nil, err
			}
			l := tokendist.Loads(append([]int64(nil), v.([]int64)...))
			if len(l) != g.Order() {
				return nil, fmt.Errorf("%w: %d values for a network of %d nodes", tokendist.ErrBadLoads, len(l), g.Order())
			}
			if _, err := l.Validate(); err != nil {
				return nil, err
			}
			return l, nil
		}))
	must(r.RegisterLoads(Entry{Name: "dimension-order-worst", Doc: "the worst case of dimension-order Balance on tokendist.Hypercube(d), m tokens per loaded node (tokendist.DimensionOrderWorstLoads)",
		Paper: paperPlaxton + ", section 2.3", Params: []Param{pInt("m", required, "tokens per loaded processor")}},
		func(g *tokendist.Graph, p Params, _ uint64) (tokendist.Loads, error) {
			m, err := p.Int64("m")
			if err != nil {
				return nil, err
			}
			d, err := regLog2Order(g)
			if err != nil {
				return nil, err
			}
			return tokendist.DimensionOrderWorstLoads(d, m)
		}))
}

func regLog2Order(g *tokendist.Graph) (int, error) {
	n := g.Order()
	d := 0
	for 1<<d < n {
		d++
	}
	if 1<<d != n {
		return 0, errs.BadParam("a network of %d nodes is not of order 2^d", n)
	}
	return d, nil
}

var coloringParam = pStr("coloring", "default", "edge colouring: default (bipartite if possible), bipartite (König, Δ colours), misra-gries (≤ Δ+1)",
	"default", "bipartite", "misra-gries")

func coloringOf(g *tokendist.Graph, p Params) (*tokendist.EdgeColoring, error) {
	c, err := p.Str("coloring")
	if err != nil {
		return nil, err
	}
	switch c {
	case "bipartite":
		return tokendist.BipartiteColoring(g)
	case "misra-gries":
		return tokendist.MisraGriesColoring(g)
	}
	return nil, nil // the constructors' default
}

func registerAlgorithms(r *Registry) {
	houle := func(name, doc, section, treeDoc string, build func(g *tokendist.Graph, ec *tokendist.EdgeColoring, p Params) (tokendist.Balancer, error), extra ...Param) {
		must(r.RegisterAlgorithm(Entry{Name: name, Doc: doc, Paper: paperHoule + ", " + section,
			Params: append([]Param{coloringParam, pBool("spanning_tree", "run on the breadth-first spanning tree rooted at a centre (tokendist.NewSpanningTree); "+treeDoc)}, extra...)},
			func(g *tokendist.Graph, _ tokendist.Loads, p Params) (tokendist.Balancer, error) {
				st, err := p.Bool("spanning_tree")
				if err != nil {
					return nil, err
				}
				if st {
					return tokendist.NewSpanningTree(g, tokendist.AutoRoot, func(t *tokendist.Graph) (tokendist.Balancer, error) {
						ec, err := coloringOf(t, p)
						if err != nil {
							return nil, err
						}
						return build(t, ec, p)
					})
				}
				ec, err := coloringOf(g, p)
				if err != nil {
					return nil, err
				}
				return build(g, ec, p)
			}))
	}
	houle("threshold-1", "THRESHOLD-1 dimension exchange (tokendist.NewThreshold1)", "section 3", "needed for THRESHOLD-1 on non-trees",
		func(g *tokendist.Graph, ec *tokendist.EdgeColoring, _ Params) (tokendist.Balancer, error) {
			return tokendist.NewThreshold1(g, ec)
		})
	houle("threshold-2", "THRESHOLD-2 (tokendist.NewThreshold2)", "section 2", "optional: THRESHOLD-2 runs on any connected graph (its bound is then the tree's diameter)",
		func(g *tokendist.Graph, ec *tokendist.EdgeColoring, _ Params) (tokendist.Balancer, error) {
			return tokendist.NewThreshold2(g, ec)
		})
	houle("discrepancy-1", "DISCREPANCY-1: THRESHOLD-1 with localMax phases, final discrepancy ≤ 1 on trees (tokendist.NewDiscrepancy1)", "section 5", "needed for DISCREPANCY-1 on non-trees",
		func(g *tokendist.Graph, ec *tokendist.EdgeColoring, p Params) (tokendist.Balancer, error) {
			n, err := p.Int("n")
			if err != nil {
				return nil, err
			}
			return tokendist.NewDiscrepancy1(g, ec, &tokendist.Discrepancy1Options{Nodes: n})
		}, pInt("n", 0, "the node count every node knows (0: the tree's order)"))

	cube := func(name, doc, section string, f func(net tokendist.Network, opts *tokendist.CubeOptions) (*tokendist.CubeBalancer, error)) {
		must(r.RegisterAlgorithm(Entry{Name: name, Doc: doc, Paper: paperPlaxton + ", " + section,
			Params: []Param{pBool("min_error", "append Theorem 2.4's minimum-error post-processing")}},
			func(g *tokendist.Graph, _ tokendist.Loads, p Params) (tokendist.Balancer, error) {
				me, err := p.Bool("min_error")
				if err != nil {
					return nil, err
				}
				return f(g, &tokendist.CubeOptions{MinError: me})
			}))
	}
	cube("hypercube-balance", "Balance with the dimension choice of section 2.3, error ≤ log p (tokendist.NewHypercubeBalance)", "section 2.3", tokendist.NewHypercubeBalance)
	cube("dimension-order-balance", "Balance across dimensions 0..d-1 in order (tokendist.NewDimensionOrderBalance)", "section 2.2", tokendist.NewDimensionOrderBalance)
	must(r.RegisterAlgorithm(Entry{Name: "leighton-balance", Doc: "Leighton's minimum-error balance (tokendist.NewLeightonBalance)", Paper: paperPlaxton + ", section 2.1"},
		func(g *tokendist.Graph, _ tokendist.Loads, _ Params) (tokendist.Balancer, error) {
			return tokendist.NewLeightonBalance(g)
		}))
	must(r.RegisterAlgorithm(Entry{Name: "multi-balance", Doc: "MultiBalance of g token groups: node v's load is split into groups, group j getting ⌊(load+g−1−j)/g⌋ (tokendist.NewMultiBalance)",
		Paper:  paperPlaxton + ", section 3",
		Params: []Param{pInt("groups", 2, "number of token groups g"), pBool("ascending", "dimensions in ascending order (section 3.3)"), pBool("min_error", "minimum-error post-processing per group")}},
		func(g *tokendist.Graph, l tokendist.Loads, p Params) (tokendist.Balancer, error) {
			k, err := p.Int("groups")
			if err != nil {
				return nil, err
			}
			if k < 1 || k > 1<<16 {
				return nil, errs.BadParam("groups %d (want 1..65536)", k)
			}
			asc, err := p.Bool("ascending")
			if err != nil {
				return nil, err
			}
			me, err := p.Bool("min_error")
			if err != nil {
				return nil, err
			}
			groups := make([]tokendist.Loads, k)
			for j := range groups {
				groups[j] = make(tokendist.Loads, len(l))
				for v, x := range l {
					groups[j][v] = (x + int64(k-1-j)) / int64(k)
				}
			}
			return tokendist.NewMultiBalance(g, groups, &tokendist.MultiOptions{Ascending: asc, MinError: me})
		}))

	diff := func(name, doc, section string, f func(net tokendist.Network) (tokendist.Balancer, error)) {
		must(r.RegisterAlgorithm(Entry{Name: name, Doc: doc, Paper: paperBerenbink + ", " + section},
			func(g *tokendist.Graph, _ tokendist.Loads, _ Params) (tokendist.Balancer, error) { return f(g) }))
	}
	diff("randomized-diffusion", "randomized diffusion: integral flows, remainders sent to random neighbours (tokendist.NewRandomizedDiffusion)", "section 2.1",
		func(n tokendist.Network) (tokendist.Balancer, error) { return tokendist.NewRandomizedDiffusion(n) })
	diff("rsw-diffusion", "Rabani–Sinclair–Wanka rounded-down diffusion (tokendist.NewRSWDiffusion)", "Table 1",
		func(n tokendist.Network) (tokendist.Balancer, error) { return tokendist.NewRSWDiffusion(n) })
	diff("fgs-deterministic", "Friedrich–Gairing–Sauerwald deterministic rounding; may go negative (tokendist.NewFGSDeterministic)", "Table 1",
		func(n tokendist.Network) (tokendist.Balancer, error) { return tokendist.NewFGSDeterministic(n) })
	diff("fgs-randomized", "Friedrich–Gairing–Sauerwald randomized rounding; may go negative (tokendist.NewFGSRandomized)", "Table 1",
		func(n tokendist.Network) (tokendist.Balancer, error) { return tokendist.NewFGSRandomized(n) })
	diff("random-matching", "Friedrich–Sauerwald random matchings (tokendist.NewRandomMatching)", "Table 1",
		func(n tokendist.Network) (tokendist.Balancer, error) { return tokendist.NewRandomMatching(n) })

	must(r.RegisterAlgorithm(Entry{Name: "perfect-tree", Doc: "the anonymous asynchronous perfect-distribution protocol, simulated (tokendist.NewPerfectTree)", Paper: paperMargara,
		Params: []Param{
			pStr("delays", "unit", "delay policy", "unit", "serial", "random", "reverse", "slow-link"),
			pInt("delay", 4, "parameter of the delay policy: random's maximum, reverse's window, slow-link's delay"),
			pBool("shuffle_ports", "number each node's ports in a random order"),
			pBool("literal", "run the printed pseudo-code without the erratum's fix"),
			pBool("batch", "carry each run of tokens down a link as one event (PerfectTreeOptions.Batch: same moves, other times)"),
		}},
		func(g *tokendist.Graph, _ tokendist.Loads, p Params) (tokendist.Balancer, error) {
			name, err := p.Str("delays")
			if err != nil {
				return nil, err
			}
			d, err := p.Int64("delay")
			if err != nil {
				return nil, err
			}
			var dp tokendist.Delays
			switch name {
			case "serial":
				dp, err = tokendist.NewSerialDelays()
			case "random":
				dp, err = tokendist.NewRandomDelays(d)
			case "reverse":
				dp, err = tokendist.NewReverseDelays(d)
			case "slow-link":
				dp, err = tokendist.NewSlowLinkDelays(d)
			default:
				dp, err = tokendist.NewUnitDelays()
			}
			if err != nil {
				return nil, err
			}
			sp, err := p.Bool("shuffle_ports")
			if err != nil {
				return nil, err
			}
			lit, err := p.Bool("literal")
			if err != nil {
				return nil, err
			}
			batch, err := p.Bool("batch")
			if err != nil {
				return nil, err
			}
			return tokendist.NewPerfectTree(g, &tokendist.PerfectTreeOptions{Delays: dp, ShufflePorts: sp, Literal: lit, Batch: batch})
		}))

	must(r.RegisterAlgorithm(Entry{Name: "ring", Doc: "a growing tree- or grid-dag on the ring R_p (network ring, n = p; loads point-mass tokens 1 on node 0) (tokendist.NewRingTree, tokendist.NewRingGrid)",
		Paper: paperGao + ", sections 1.3–3",
		Params: []Param{
			pStr("policy", "ks-bf", "where right children go", "ks-bf", "keep-all", "less-loaded", "random-neighbour"),
			pStr("dag", "complete-tree", "the growing computation", "complete-tree", "w-complete-tree", "random-tree", "pyramid-grid", "random-grid"),
			pInt("size", 10, "height of a tree-dag, side of the pyramid grid, depth of a random dag"),
			pInt("w", 2, "weight bound of w-complete-tree"),
			{Name: "q", Type: ParamFloat, Default: 0.5, Doc: "spawn probability of the random dags"},
			pInt("dag_seed", 1, "seed of the random dags"),
		}},
		func(g *tokendist.Graph, l tokendist.Loads, p Params) (tokendist.Balancer, error) {
			pol, _ := p.Str("policy")
			dag, _ := p.Str("dag")
			size, err := p.Int("size")
			if err != nil {
				return nil, err
			}
			w, err := p.Int("w")
			if err != nil {
				return nil, err
			}
			q, err := p.Float("q")
			if err != nil {
				return nil, err
			}
			ds, err := p.Int64("dag_seed")
			if err != nil {
				return nil, err
			}
			if l.Total() != 1 || l[0] != 1 {
				return nil, fmt.Errorf("%w: the ring algorithm starts from one task on PE 0 (loads point-mass, tokens 1, node 0)", tokendist.ErrBadLoads)
			}
			opts := &tokendist.RingOptions{NoSchedule: true}
			for i, name := range []string{"ks-bf", "keep-all", "less-loaded", "random-neighbour"} {
				if name == pol {
					opts.Policy = tokendist.RingPolicies()[i]
				}
			}
			switch dag {
			case "complete-tree", "w-complete-tree", "random-tree":
				var t tokendist.TreeDag
				switch dag {
				case "complete-tree":
					t, err = tokendist.CompleteTree(size)
				case "w-complete-tree":
					t, err = tokendist.WCompleteTree(size, w)
				default:
					t, err = tokendist.RandomTreeDag(q, size, uint64(ds))
				}
				if err != nil {
					return nil, err
				}
				return onRing(g, l)(tokendist.NewRingTree(g.Order(), t, opts))
			}
			var gd tokendist.GridDag
			if dag == "pyramid-grid" {
				gd, err = tokendist.PyramidGrid(size)
			} else {
				gd, err = tokendist.RandomGridDag(q, size, uint64(ds))
			}
			if err != nil {
				return nil, err
			}
			return onRing(g, l)(tokendist.NewRingGrid(g.Order(), gd, opts))
		}))
}

// onRing returns a check that the scheduler accepts g as its ring R_p, so that the
// algorithm refuses another network when it is built, not when it is run.
func onRing(g *tokendist.Graph, l tokendist.Loads) func(*tokendist.RingScheduler, error) (tokendist.Balancer, error) {
	return func(b *tokendist.RingScheduler, err error) (tokendist.Balancer, error) {
		if err != nil {
			return nil, err
		}
		if err := b.Init(&tokendist.State{Net: g, Loads: l.Clone()}); err != nil {
			return nil, err
		}
		return b, nil
	}
}

func registerMetrics(r *Registry) {
	metric := func(name, doc, paper string, f MetricFunc) {
		must(r.RegisterMetric(Entry{Name: name, Doc: doc, Paper: paper}, f))
	}
	metric("msd", "maximum stable discrepancy of THRESHOLD-1 on the network (tokendist.MSD; exponential search, small trees only)", paperHoule+", section 4",
		func(m MetricInput) (float64, error) {
			v, err := tokendist.MSD(m.Net)
			return float64(v), err
		})
	metric("threshold1_bound", "Theorem 16's bound on THRESHOLD-1's final discrepancy (tokendist.Threshold1Bound)", paperHoule+", Theorem 16",
		func(m MetricInput) (float64, error) {
			b, err := tokendist.Threshold1Bound(m.Net.Order(), m.Net.MaxDegree())
			return float64(b.Bound), err
		})
	metric("log2_n", "log2 of the number of nodes (Plaxton's error bound log p)", paperPlaxton+", Lemma 2.3",
		func(m MetricInput) (float64, error) { return math.Log2(float64(m.Net.Order())), nil })
	metric("minimum_error", "the least achievable error for the total on p processors (tokendist.MinimumError)", paperPlaxton+", section 2.1",
		func(m MetricInput) (float64, error) {
			v, err := tokendist.MinimumError(m.Loads.Total(), m.Net.Order())
			return float64(v), err
		})
	metric("group_discrepancy", "the largest final discrepancy of one token group (MultiBalance only)", paperPlaxton+", section 3",
		func(m MetricInput) (float64, error) {
			rep, ok := m.Result.Report.(tokendist.MultiBalanceReport)
			if !ok {
				return 0, fmt.Errorf("%w: group_discrepancy needs multi-balance, not %s", ErrNotApplicable, tokendist.BalancerName(m.Balancer))
			}
			return float64(rep.MaxGroupDiscrepancy), nil
		})
	metric("lambda_max", "λ_max of the network's diffusion matrix (tokendist.LambdaMax)", paperBerenbink+", Lemma 2.2",
		func(m MetricInput) (float64, error) {
			s, err := r.lambdaMax(m.Net)
			return s.LambdaMax, err
		})
	metric("optimal_moves", "the fewest token moves of any perfect distribution from the initial loads (tokendist.OptimalPerfectMoves; trees)", paperMargara,
		func(m MetricInput) (float64, error) {
			if !m.Net.IsTree() {
				return 0, fmt.Errorf("%w: optimal_moves needs a tree", ErrNotApplicable)
			}
			v, err := tokendist.OptimalPerfectMoves(m.Net, m.Loads)
			return float64(v), err
		})
	metric("moves_ratio", "the run's token moves divided by optimal_moves (1 when both are 0)", paperMargara,
		func(m MetricInput) (float64, error) {
			if !m.Net.IsTree() {
				return 0, fmt.Errorf("%w: moves_ratio needs a tree", ErrNotApplicable)
			}
			v, err := tokendist.OptimalPerfectMoves(m.Net, m.Loads)
			if err != nil {
				return 0, err
			}
			if v == 0 {
				if m.Result.Moved == 0 {
					return 1, nil
				}
				return math.Inf(1), nil
			}
			return float64(m.Result.Moved) / float64(v), nil
		})
	ring := func(name, doc string, f func(s tokendist.RingStats) float64) {
		metric(name, doc, paperGao, func(m MetricInput) (float64, error) {
			st, ok := m.Result.Report.(tokendist.RingStats)
			if !ok {
				return 0, fmt.Errorf("%w: %s needs the ring algorithm, not %s", ErrNotApplicable, name, tokendist.BalancerName(m.Balancer))
			}
			return f(st), nil
		})
	}
	ring("ring_tasks", "tasks executed (tokendist.RingStats.Tasks)", func(s tokendist.RingStats) float64 { return float64(s.Tasks) })
	ring("ring_time", "completion time in steps (tokendist.RingStats.Time)", func(s tokendist.RingStats) float64 { return float64(s.Time) })
	ring("ring_speedup", "tasks / completion time (tokendist.RingStats.Speedup)", func(s tokendist.RingStats) float64 { return s.Speedup })
	ring("ring_efficiency", "speedup / p (tokendist.RingStats.Efficiency)", func(s tokendist.RingStats) float64 { return s.Efficiency })
	ring("ring_lower_bound", "the completion-time lower bound max(depth, ⌈tasks/p⌉) (tokendist.RingStats.LowerBound)", func(s tokendist.RingStats) float64 { return float64(s.LowerBound) })
}
