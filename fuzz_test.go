package tokendist_test

import (
	"context"
	"errors"
	"math"
	"math/big"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/tokendist/tokendist"
)

// fndLimitNodes and fndLimitEnds are the documented representation limits: node IDs and
// edge-end indices fit in an int32.
const (
	fndLimitNodes = 1 << 31
	fndLimitEnds  = 1<<31 - 1
	// fndFuzzBudget bounds the graphs the fuzzer actually builds.
	fndFuzzBudget = 1 << 15
)

// fndGenCase is one generator call with the closed forms it must satisfy.
type fndGenCase struct {
	name      string
	build     func() (*tokendist.Graph, error)
	domain    bool    // parameters in the documented domain
	order     float64 // closed-form order (may be huge or +Inf)
	ends      float64 // closed-form upper bound on edge ends (2·size)
	exactEnds bool    // ends is exact (not just a bound)
	regular   int     // the degree of a regular family, or -1
	tree      bool
	notConn   bool // domain but no connected graph exists (RandomRegular d = 0, 1)
}

// fndKaryOrder returns (k^(h+1)-1)/(k-1), saturating above 2^62.
func fndKaryOrder(k, h int64) float64 {
	switch {
	case k < 1 || h < 0:
		return 0
	case k == 1:
		return float64(h) + 1
	}
	order, level := 1.0, 1.0
	for i := int64(0); i < h && order < 1<<62; i++ {
		level *= float64(k)
		order += level
	}
	return order
}

func fndGenFor(kind uint8, a, b, c int64, dims uint8, seed uint64) fndGenCase {
	fa, fb := float64(a), float64(b)
	switch kind % 11 {
	case 0:
		return fndGenCase{name: "Path", build: func() (*tokendist.Graph, error) { return tokendist.Path(int(a)) },
			domain: a >= 1, order: fa, ends: 2 * (fa - 1), exactEnds: true, regular: -1, tree: true}
	case 1:
		deg := 2 // Ring(1) is a single node and Ring(2) a single edge
		if a < 3 {
			deg = int(max(a, 1)) - 1
		}
		return fndGenCase{name: "Ring", build: func() (*tokendist.Graph, error) { return tokendist.Ring(int(a)) },
			domain: a >= 1, order: fa, ends: 2 * fa, exactEnds: a >= 3, regular: deg}
	case 2:
		return fndGenCase{name: "Star", build: func() (*tokendist.Graph, error) { return tokendist.Star(int(a)) },
			domain: a >= 1, order: fa, ends: 2 * (fa - 1), exactEnds: true, regular: -1, tree: true}
	case 3:
		return fndGenCase{name: "Complete", build: func() (*tokendist.Graph, error) { return tokendist.Complete(int(a)) },
			domain: a >= 1, order: fa, ends: fa * (fa - 1), exactEnds: true, regular: int(a - 1)}
	case 4:
		order := fndKaryOrder(a, b)
		return fndGenCase{name: "KaryTree", build: func() (*tokendist.Graph, error) {
			return tokendist.KaryTree(tokendist.KaryShape{Height: int(b), Arity: int(a)})
		},
			domain: a >= 1 && b >= 0, order: order, ends: 2 * (order - 1), exactEnds: true, regular: -1, tree: true}
	case 5:
		return fndGenCase{name: "RandomTree", build: func() (*tokendist.Graph, error) { return tokendist.RandomTree(int(a), seed) },
			domain: a >= 1, order: fa, ends: 2 * (fa - 1), exactEnds: true, regular: -1, tree: true}
	case 6:
		order := math.Ldexp(1, int(min(max(a, 0), 2000)))
		return fndGenCase{name: "Hypercube", build: func() (*tokendist.Graph, error) { return tokendist.Hypercube(int(a)) },
			domain: a >= 0, order: order, ends: fa * order, exactEnds: true, regular: int(a)}
	case 7:
		order := math.Ldexp(1, int(min(max(a, 0), 2000)))
		return fndGenCase{name: "ShuffleExchange", build: func() (*tokendist.Graph, error) { return tokendist.ShuffleExchange(int(a)) },
			domain: a >= 1, order: order, ends: 3 * order, regular: -1}
	case 8, 9:
		sides := []int64{a, b, c}[:dims%4]
		wrap := kind%11 == 8
		order, ends := 1.0, 0.0
		ok := len(sides) > 0
		for _, s := range sides {
			ok = ok && s >= 1
			order *= float64(s)
		}
		for _, s := range sides {
			switch {
			case s == 2:
				ends += order
			case s > 2 && wrap:
				ends += 2 * order
			case s > 2:
				ends += 2 * order / float64(s) * float64(s-1)
			}
		}
		is := make([]int, len(sides))
		for i, s := range sides {
			is[i] = int(s)
		}
		gc := fndGenCase{name: "Mesh", build: func() (*tokendist.Graph, error) { return tokendist.Mesh(is...) },
			domain: ok, order: order, ends: ends, exactEnds: true, regular: -1}
		if wrap {
			gc.name, gc.build = "Torus", func() (*tokendist.Graph, error) { return tokendist.Torus(is...) }
		}
		return gc
	default:
		n, d := a, b
		return fndGenCase{name: "RandomRegular", build: func() (*tokendist.Graph, error) { return tokendist.RandomRegular(int(n), int(d), seed) },
			domain: n >= 1 && d >= 0 && d < n && n*d%2 == 0, order: fa, ends: fa * fb, exactEnds: true, regular: int(d),
			notConn: (d == 0 && n > 1) || (d == 1 && n > 2)}
	}
}

// FuzzGenerators calls a generator with arbitrary parameters. Outside the documented
// domain, or beyond the int32 limits, it must return a "tokendist: " error (and no
// graph); inside, a simple connected graph with the closed-form order and size.
func FuzzGenerators(f *testing.F) {
	f.Add(uint8(0), int64(10), int64(0), int64(0), uint8(0), uint64(1))
	f.Add(uint8(1), int64(2), int64(0), int64(0), uint8(0), uint64(1))
	f.Add(uint8(3), int64(46342), int64(0), int64(0), uint8(0), uint64(1))
	f.Add(uint8(4), int64(3), int64(4), int64(0), uint8(0), uint64(1))
	f.Add(uint8(4), int64(1), int64(1<<40), int64(0), uint8(0), uint64(1))
	f.Add(uint8(5), int64(17), int64(0), int64(0), uint8(0), uint64(9))
	f.Add(uint8(6), int64(27), int64(0), int64(0), uint8(0), uint64(1))
	f.Add(uint8(7), int64(6), int64(0), int64(0), uint8(0), uint64(1))
	f.Add(uint8(8), int64(3), int64(2), int64(5), uint8(3), uint64(1))
	f.Add(uint8(9), int64(4), int64(1), int64(0), uint8(2), uint64(1))
	f.Add(uint8(10), int64(10), int64(3), int64(0), uint8(0), uint64(4))
	f.Add(uint8(10), int64(5), int64(4), int64(0), uint8(0), uint64(5))
	f.Add(uint8(10), int64(1), int64(2), int64(0), uint8(0), uint64(5))
	f.Fuzz(func(t *testing.T, kind uint8, a, b, c int64, dims uint8, seed uint64) {
		gc := fndGenFor(kind, a, b, c, dims, seed)
		tooBig := gc.order >= fndLimitNodes || gc.ends > fndLimitEnds
		if gc.domain && !tooBig && (gc.order > fndFuzzBudget || gc.ends > fndFuzzBudget) {
			return // valid but too large to build in a fuzz iteration
		}
		g, err := gc.build()
		if !gc.domain || tooBig || gc.notConn {
			if err == nil || g != nil {
				t.Fatalf("%s(%d, %d, %d; dims %d): accepted (%v, %v)", gc.name, a, b, c, dims, g, err)
			}
			if !strings.HasPrefix(err.Error(), "tokendist: ") {
				t.Fatalf("%s: error %q lacks the prefix", gc.name, err)
			}
			want := tokendist.ErrBadParameter
			if gc.domain && !tooBig && gc.notConn {
				want = tokendist.ErrNotConnected
			}
			if !errors.Is(err, want) {
				t.Fatalf("%s: error %q is not %q", gc.name, err, want)
			}
			return
		}
		if err != nil {
			t.Fatalf("%s(%d, %d, %d; dims %d): %v", gc.name, a, b, c, dims, err)
		}
		fndCheckSimple(t, g)
		if float64(g.Order()) != gc.order {
			t.Fatalf("%s: order %d, want %v", gc.name, g.Order(), gc.order)
		}
		if ends := float64(2 * g.Size()); ends > gc.ends || (gc.exactEnds && ends != gc.ends) {
			t.Fatalf("%s: %d edge ends, want %v (exact %v)", gc.name, 2*g.Size(), gc.ends, gc.exactEnds)
		}
		if !g.Connected() {
			t.Fatalf("%s: not connected", gc.name)
		}
		if gc.tree && !g.IsTree() {
			t.Fatalf("%s: not a tree", gc.name)
		}
		if gc.regular >= 0 && (!g.IsRegular() || g.MaxDegree() != gc.regular) {
			t.Fatalf("%s: degrees %d..%d, want %d-regular", gc.name, g.MinDegree(), g.MaxDegree(), gc.regular)
		}
	})
}

// fndFuzzGraph builds a graph on 1 + data[0] % 12 nodes from the byte pairs of data.
func fndFuzzGraph(data []byte) *tokendist.Graph {
	if len(data) == 0 {
		data = []byte{0}
	}
	n := 1 + int(data[0])%12
	seen := map[[2]int]bool{}
	var edges [][2]int
	for i := 1; i+1 < len(data); i += 2 {
		u, v := int(data[i])%n, int(data[i+1])%n
		if u == v || seen[[2]int{min(u, v), max(u, v)}] {
			continue
		}
		seen[[2]int{min(u, v), max(u, v)}] = true
		edges = append(edges, [2]int{u, v})
	}
	return fndMust(tokendist.NewGraph(n, edges))
}

// fndEdgeAverage balances every edge in EdgeList order, one edge per step: the larger
// end sends ⌊diff/2⌋ tokens to the smaller. It keeps both invariants and is Periodic.
type fndEdgeAverage struct{ edges [][2]int }

func (b *fndEdgeAverage) Init(s *tokendist.State) error {
	g, err := tokendist.AsGraph(s.Net)
	if err != nil {
		return err
	}
	b.edges = g.EdgeList()
	return nil
}

func (b *fndEdgeAverage) Step(s *tokendist.State) error {
	s.Time++
	if len(b.edges) == 0 {
		return nil
	}
	e := b.edges[s.Steps%int64(len(b.edges))]
	u, v := e[0], e[1]
	if s.Loads[u] < s.Loads[v] {
		u, v = v, u
	}
	x := (s.Loads[u] - s.Loads[v]) / 2
	s.Loads[u] -= x
	s.Loads[v] += x
	s.Moved += x
	s.Messages++
	return nil
}

func (b *fndEdgeAverage) Period(s *tokendist.State) int64 { return int64(max(1, len(b.edges))) }

// FuzzRun runs balancers on random small graphs with random loads and options. Bad
// loads must be rejected with ErrBadLoads, a counter that would wrap with ErrOverflow
// (only possible for huge totals); otherwise the run must succeed, conserve
// tokens, keep loads non-negative, respect the step budget and target, produce a
// consistent trace, leave the caller's loads alone, and be deterministic.
func FuzzRun(f *testing.F) {
	f.Add([]byte{5, 0, 1, 1, 2, 2, 3, 3, 4}, []byte{10, 0, 0, 0, 7}, int64(0), uint16(50), uint8(1), int64(-1), uint64(1), uint8(0))
	f.Add([]byte{11, 0, 5, 5, 9, 1, 2}, []byte{255, 255, 3}, int64(1<<40), uint16(500), uint8(0), int64(3), uint64(2), uint8(1))
	f.Add([]byte{0}, []byte{9}, int64(0), uint16(3), uint8(2), int64(0), uint64(3), uint8(0))
	f.Add([]byte{3, 0, 1, 1, 2}, []byte{1, 2, 3}, int64(math.MaxInt64), uint16(10), uint8(1), int64(-1), uint64(4), uint8(1))
	f.Add([]byte{3, 0, 1, 1, 2}, []byte{1, 2, 3}, int64(-5), uint16(10), uint8(1), int64(-1), uint64(4), uint8(0))
	f.Fuzz(func(t *testing.T, graph, loadBytes []byte, extra int64, maxSteps uint16, every uint8, target int64, seed uint64, which uint8) {
		g := fndFuzzGraph(graph)
		loads := make(tokendist.Loads, g.Order())
		for i := range loads {
			if i < len(loadBytes) {
				loads[i] = int64(loadBytes[i])
			}
		}
		loads[0] += extra / 2
		loads[len(loads)-1] += extra - extra/2
		orig := loads.Clone()
		total, verr := loads.Validate()
		// A non-Periodic balancer for odd which, so the stability rule is also off.
		var mk func() tokendist.Balancer
		if which%2 == 0 {
			mk = func() tokendist.Balancer { return &fndEdgeAverage{} }
		} else {
			mk = func() tokendist.Balancer { return &fndRandomWalker{} }
		}
		opts := &tokendist.RunOptions{MaxSteps: 1 + int64(maxSteps%2000), SampleEvery: int64(every), Seed: seed,
			UseTarget: target >= 0, TargetDiscrepancy: target}
		r, err := tokendist.Run(context.Background(), g, loads, mk(), opts)
		if !slices.Equal(orig, loads) {
			t.Fatalf("Run changed the caller's loads")
		}
		if verr != nil {
			if !errors.Is(err, tokendist.ErrBadLoads) || r.Status != tokendist.StatusFailed {
				t.Fatalf("bad loads %v: err %v, status %v", loads, err, r.Status)
			}
			return
		}
		budget := opts.MaxSteps
		if errors.Is(err, tokendist.ErrOverflow) {
			// Run refuses a step that would wrap a counter. Moved grows by at most the
			// total per step, so only a huge total may overflow within the budget.
			if total <= math.MaxInt64/budget || r.Moved < 0 || r.Time < 0 || r.Messages < 0 {
				t.Fatalf("overflow with total %d in at most %d steps (moved %d, time %d): %v", total, budget, r.Moved, r.Time, err)
			}
			return
		}
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
		switch {
		case r.Steps > budget:
			t.Fatalf("%d steps, budget %d", r.Steps, budget)
		case r.Status == tokendist.StatusMaxSteps && r.Steps != budget:
			t.Fatalf("MaxSteps after %d steps, budget %d", r.Steps, budget)
		case r.Status == tokendist.StatusTarget && r.Discrepancy() > target:
			t.Fatalf("Target with discrepancy %d > %d", r.Discrepancy(), target)
		case r.Status != tokendist.StatusTarget && r.Status != tokendist.StatusStable && opts.UseTarget && r.Discrepancy() <= target:
			t.Fatalf("status %v though the target %d is met (%d)", r.Status, target, r.Discrepancy())
		case r.Status == tokendist.StatusFailed || r.Status == tokendist.StatusNotStarted || r.Status == tokendist.StatusCanceled:
			t.Fatalf("status %v", r.Status)
		}
		got, err := r.Loads.Validate()
		if err != nil || got != total {
			t.Fatalf("final loads %v: total %d (want %d), %v", r.Loads, got, total, err)
		}
		if len(r.Trace) == 0 || r.Trace[0].Step != 0 || r.Trace[len(r.Trace)-1].Step != r.Steps {
			t.Fatalf("trace steps %v, %d steps", fndSteps(r.Trace), r.Steps)
		}
		for k, smp := range r.Trace {
			if k > 0 && k < len(r.Trace)-1 && (every == 0 || smp.Step != int64(k)*int64(every)) {
				t.Fatalf("sample %d at step %d, SampleEvery %d", k, smp.Step, every)
			}
			if smp.Discrepancy != smp.Max-smp.Min || smp.Min < 0 || smp.Negative != 0 {
				t.Fatalf("bad sample %+v", smp)
			}
		}
		last := r.Trace[len(r.Trace)-1]
		if last.Potential != r.Loads.Potential() || last.Max != r.Loads.Max() || last.Moved != r.Moved || last.Time != r.Time {
			t.Fatalf("last sample %+v does not match the result %v", last, r)
		}
		again, err := tokendist.Run(context.Background(), g, loads, mk(), opts)
		if err != nil || !reflect.DeepEqual(r, again) {
			t.Fatalf("not deterministic: %v / %v (%v)", r, again, err)
		}
	})
}

// FuzzAsGraph converts arbitrary adjacency lists: AsGraph must either reject them with
// a "tokendist: " error or return a graph with exactly those lists.
func FuzzAsGraph(f *testing.F) {
	f.Add([]byte{3, 2, 1, 2, 2, 0, 2, 2, 0, 1})
	f.Add([]byte{3, 1, 2, 0, 1, 1})
	f.Add([]byte{4, 2, 1, 3, 2, 0, 2, 2, 1, 3, 2, 1, 2})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 {
			return
		}
		n := int(data[0]) % 10
		lists := make([][]int32, n)
		pos := 1
		for v := 0; v < n && pos < len(data); v++ {
			k := int(data[pos]) % 6
			pos++
			for i := 0; i < k && pos < len(data); i++ {
				lists[v] = append(lists[v], int32(int8(data[pos])))
				pos++
			}
		}
		g, err := tokendist.AsGraph(fndListNet(lists...))
		valid := true
		for u, nb := range lists {
			for i, v := range nb {
				if v < 0 || int(v) >= n || int(v) == u || (i > 0 && nb[i-1] >= v) || !slices.Contains(lists[v], int32(u)) {
					valid = false
				}
			}
		}
		if !valid {
			if err == nil || g != nil || !strings.HasPrefix(err.Error(), "tokendist: ") || !errors.Is(err, tokendist.ErrBadParameter) {
				t.Fatalf("%v accepted or badly rejected: %v", lists, err)
			}
			return
		}
		if err != nil {
			t.Fatalf("%v rejected: %v", lists, err)
		}
		for v := range lists {
			if !slices.Equal(lists[v], g.Neighbors(v)) && len(lists[v])+len(g.Neighbors(v)) > 0 {
				t.Fatalf("node %d: %v, want %v", v, g.Neighbors(v), lists[v])
			}
		}
		fndCheckSimple(t, g)
	})
}

// FuzzUint128Text decodes arbitrary text: either an error, or a value whose decimal
// form is the canonical form of the input.
func FuzzUint128Text(f *testing.F) {
	for _, s := range []string{"0", "18446744073709551616", "340282366920938463463374607431768211455", "-1", "+7", "007", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var u tokendist.Uint128
		err := u.UnmarshalText([]byte(s))
		b, ok := new(big.Int).SetString(s, 10)
		valid := ok && b.Sign() >= 0 && b.BitLen() <= 128 && len(s) <= 256 // documented length limit
		if !valid {
			if err == nil {
				t.Fatalf("%q accepted as %v", s, u)
			}
			if !strings.HasPrefix(err.Error(), "tokendist: ") || len(err.Error()) > 300 {
				t.Fatalf("error %q: no prefix or too long", err)
			}
			return
		}
		if err != nil {
			t.Fatalf("%q rejected: %v", s, err)
		}
		if u.String() != b.String() {
			t.Fatalf("%q decoded as %v", s, u)
		}
	})
}
