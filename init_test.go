package tokendist

import (
	"context"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// initCase is one built-in balancer with a network and loads it accepts.
type initCase struct {
	name  string
	net   func() (*Graph, error)
	loads func(n int) Loads
	build func(g *Graph) (Balancer, error)
}

// initCases returns every constructor of the package, each with a network it accepts.
func initCases() []initCase {
	tree := func() (*Graph, error) { return RandomTree(12, 3) }
	cube := func() (*Graph, error) { return Hypercube(3) }
	torus := func() (*Graph, error) { return Torus(4, 4) }
	ring := func() (*Graph, error) { return Ring(4) }
	spread := func(n int) Loads { l, _ := RandomRange(n, 0, 40, 5); return l }
	root := func(n int) Loads { l, _ := PointMass(n, 1, 0); return l }
	return []initCase{
		{"THRESHOLD-1", tree, spread, func(g *Graph) (Balancer, error) { return NewThreshold1(g, nil) }},
		{"THRESHOLD-2", tree, spread, func(g *Graph) (Balancer, error) { return NewThreshold2(g, nil) }},
		{"user protocol", tree, spread, func(g *Graph) (Balancer, error) {
			return NewDimensionExchange(g, nil, ProtocolFunc(func(_ int64, _, _ int, a, b int64) int64 { return (a - b) / 2 }))
		}},
		{"DISCREPANCY-1", tree, spread, func(g *Graph) (Balancer, error) { return NewDiscrepancy1(g, nil, nil) }},
		{"DISCREPANCY-1 convergecast", tree, spread, func(g *Graph) (Balancer, error) {
			return NewDiscrepancy1(g, nil, &Discrepancy1Options{Nodes: 20, Convergecast: true})
		}},
		{"SpanningTree(THRESHOLD-1)", torus, spread, func(g *Graph) (Balancer, error) {
			return NewSpanningTree(g, AutoRoot, func(t *Graph) (Balancer, error) { return NewThreshold1(t, nil) })
		}},
		{"SpanningTree(DISCREPANCY-1)", torus, spread, func(g *Graph) (Balancer, error) {
			return NewSpanningTree(g, 0, func(t *Graph) (Balancer, error) { return NewDiscrepancy1(t, nil, nil) })
		}},
		{"Funcs", tree, spread, func(*Graph) (Balancer, error) {
			return &Funcs{Name: "idle", StepFunc: func(s *State) error { s.Time++; return nil }}, nil
		}},
		{"RingTree", ring, root, func(g *Graph) (Balancer, error) {
			dag, err := CompleteTree(4)
			if err != nil {
				return nil, err
			}
			return NewRingTree(g.Order(), dag, nil)
		}},
		{"RingGrid", ring, root, func(g *Graph) (Balancer, error) {
			dag, err := PyramidGrid(4)
			if err != nil {
				return nil, err
			}
			return NewRingGrid(g.Order(), dag, &RingOptions{Policy: RingPolicyLessLoaded})
		}},
		{"PerfectTree", tree, spread, func(g *Graph) (Balancer, error) { return NewPerfectTree(g, nil) }},
		{"PerfectTree literal", tree, spread, func(g *Graph) (Balancer, error) {
			return NewPerfectTree(g, &PerfectTreeOptions{Literal: true})
		}},
		{"RSW", torus, spread, func(g *Graph) (Balancer, error) { return NewRSWDiffusion(g) }},
		{"FGSDeterministic", torus, spread, func(g *Graph) (Balancer, error) { return NewFGSDeterministic(g) }},
		{"FGSRandomized", torus, spread, func(g *Graph) (Balancer, error) { return NewFGSRandomized(g) }},
		{"RandomMatching", torus, spread, func(g *Graph) (Balancer, error) { return NewRandomMatching(g) }},
		{"RandomizedDiffusion", torus, spread, func(g *Graph) (Balancer, error) { return NewRandomizedDiffusion(g) }},
		{"DimensionOrderBalance", cube, spread, func(g *Graph) (Balancer, error) { return NewDimensionOrderBalance(g, nil) }},
		{"HypercubeBalance", cube, spread, func(g *Graph) (Balancer, error) { return NewHypercubeBalance(g, nil) }},
		{"HypercubeBalance min error", cube, spread, func(g *Graph) (Balancer, error) {
			return NewHypercubeBalance(g, &CubeOptions{MinError: true})
		}},
		{"LeightonBalance", cube, spread, func(g *Graph) (Balancer, error) { return NewLeightonBalance(g) }},
		{"MultiBalance", cube, spread, func(g *Graph) (Balancer, error) {
			return NewMultiBalance(g, []Loads{spread(g.Order())}, nil)
		}},
	}
}

// stepNoPanic calls f and turns a panic into an error, so that one case's panic names
// the case instead of ending the test binary.
func stepNoPanic(f func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	return f()
}

// TestStepBeforeInit: Step (and the fused round) on a State that Init has not prepared
// returns an error wrapping ErrNotInitialized that names the balancer, for every
// built-in balancer: before any Init, after Init for another load count, and after Init
// for another network. After Init on the State, Step works.
func TestStepBeforeInit(t *testing.T) {
	for _, c := range initCases() {
		t.Run(c.name, func(t *testing.T) {
			g, err := c.net()
			require.NoError(t, err)
			b, err := c.build(g)
			require.NoError(t, err)
			name := BalancerName(b)
			wantNotInit := func(when string, err error) {
				t.Helper()
				require.True(t, errors.Is(err, ErrNotInitialized), "%s: Step %s: got %v, want an error wrapping ErrNotInitialized", name, when, err)
				msg := err.Error()
				require.True(t, strings.HasPrefix(msg, "tokendist: "), "%s: Step %s: error %q does not start with the prefix and name the balancer", name, when, msg)
				require.True(t, strings.Contains(msg, name), "%s: Step %s: error %q does not start with the prefix and name the balancer", name, when, msg)
			}
			fresh := func() *State {
				return &State{Net: g, Loads: c.loads(g.Order()), Workers: 2, Seed: 1, Rand: rand.New(rand.NewPCG(1, 2))}
			}
			steps := []func(s *State) error{b.Step}
			if r, ok := b.(rounder); ok {
				steps = append(steps, func(s *State) error { _, err := r.round(s); return err })
			}
			for _, step := range steps {
				s := fresh()
				wantNotInit("before Init", stepNoPanic(func() error { return step(s) }))
			}
			in, ok := b.(Initializer)
			require.True(t, ok, "%s implements no Initializer", name)
			s := fresh()
			require.NoError(t, in.Init(s))
			short := *s
			short.Loads = s.Loads[:len(s.Loads)-1]
			wantNotInit("with fewer loads than Init saw", stepNoPanic(func() error { return b.Step(&short) }))
			other, err := c.net() // an equal network, but not the one Init prepared
			require.NoError(t, err)
			moved := *s
			moved.Net = other
			wantNotInit("on another network", stepNoPanic(func() error { return b.Step(&moved) }))
			require.NoError(t, stepNoPanic(func() error { return b.Step(s) }), "%s: Step after Init", name)
		})
	}
}

// TestConcurrentRun: a balancer value already inside one Run makes a second Run return
// an error wrapping ErrConcurrentUse that names it, while another value runs; the value
// is free again once the first Run has returned.
func TestConcurrentRun(t *testing.T) {
	g, err := Path(4)
	require.NoError(t, err)
	loads := Loads{4, 0, 0, 0}
	entered, release := make(chan struct{}, 1), make(chan struct{})
	blocking := &Funcs{Name: "blocker", StepFunc: func(s *State) error {
		if s.Steps == 0 {
			select {
			case entered <- struct{}{}:
			default:
			}
			<-release // closed once the second Run has been refused
		}
		s.Time++
		return nil
	}}
	type outcome struct {
		r   Result
		err error
	}
	first := make(chan outcome, 1)
	go func() {
		r, err := Run(context.Background(), g, loads, blocking, &RunOptions{MaxSteps: 3, Workers: 1})
		first <- outcome{r, err}
	}()
	timeout := time.After(30 * time.Second)
	select {
	case <-entered:
	case <-timeout:
		require.FailNow(t, "the first Run never reached its Step")
	}
	r, err := Run(context.Background(), g, loads, blocking, &RunOptions{MaxSteps: 3})
	require.True(t, errors.Is(err, ErrConcurrentUse), "second Run of the same value: %v, want an error wrapping ErrConcurrentUse naming blocker", err)
	require.True(t, strings.HasPrefix(err.Error(), "tokendist: "), "second Run of the same value: %v, want an error wrapping ErrConcurrentUse naming blocker", err)
	require.True(t, strings.Contains(err.Error(), "blocker"), "second Run of the same value: %v, want an error wrapping ErrConcurrentUse naming blocker", err)
	require.Equal(t, StatusFailed, r.Status, "second Run's result %+v, want StatusFailed for blocker after 0 steps", r)
	require.Equal(t, "blocker", r.Balancer, "second Run's result %+v, want StatusFailed for blocker after 0 steps", r)
	require.Equal(t, int64(0), r.Steps, "second Run's result %+v, want StatusFailed for blocker after 0 steps", r)
	idle := &Funcs{Name: "idle", StepFunc: func(s *State) error { s.Time++; return nil }}
	_, err = Run(context.Background(), g, loads, idle, &RunOptions{MaxSteps: 3})
	require.NoError(t, err, "another value must run meanwhile")
	close(release)
	select {
	case o := <-first:
		require.NoError(t, o.err, "first Run: %v after %d steps", o.err, o.r.Steps)
		require.Equal(t, int64(3), o.r.Steps, "first Run: %v after %d steps", o.err, o.r.Steps)
	case <-timeout:
		require.FailNow(t, "the first Run did not finish")
	}
	_, err = Run(context.Background(), g, loads, blocking, &RunOptions{MaxSteps: 1})
	require.NoError(t, err, "the value must be free after the first Run returned")
}

// TestRunPoolOnlyForWorkers: a run with one worker starts no pool goroutines; a run with
// more holds GOMAXPROCS − 1 helpers for its duration.
func TestRunPoolOnlyForWorkers(t *testing.T) {
	g, err := Path(4)
	require.NoError(t, err)
	for _, workers := range []int{1, 2} {
		if workers > runtime.GOMAXPROCS(0) {
			continue
		}
		before := runtime.NumGoroutine()
		during := 0
		f := &Funcs{Name: "count", StepFunc: func(s *State) error {
			during = runtime.NumGoroutine()
			s.Time++
			return nil
		}}
		_, err := Run(context.Background(), g, Loads{1, 2, 3, 4}, f, &RunOptions{MaxSteps: 1, Workers: workers})
		require.NoError(t, err)
		helpers := during - before
		switch {
		case workers == 1 && helpers > 0:
			t.Errorf("one worker: %d goroutines more during the run", helpers)
		case workers > 1 && helpers < runtime.GOMAXPROCS(0)-1:
			t.Errorf("%d workers: %d goroutines more during the run, want GOMAXPROCS − 1 = %d", workers, helpers, runtime.GOMAXPROCS(0)-1)
		}
	}
}

// TestStepBeforeInitCoversEveryBalancer: every exported type of the package with a
// Step(*State) error method (or an unexported embedded one) is built by initCases, so a
// new balancer cannot skip TestStepBeforeInit.
func TestStepBeforeInitCoversEveryBalancer(t *testing.T) {
	built := map[string]bool{}
	for _, c := range initCases() {
		g, err := c.net()
		require.NoError(t, err)
		b, err := c.build(g)
		require.NoError(t, err)
		built[reflect.TypeOf(b).Elem().Name()] = true
	}
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	fset := token.NewFileSet()
	stepper := map[string]bool{} // types with a Step(s *State) error method
	embeds := map[string][]string{}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		require.NoError(t, err)
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil || d.Name.Name != "Step" || len(d.Type.Params.List) != 1 || d.Type.Results == nil {
					continue
				}
				if star, ok := d.Recv.List[0].Type.(*ast.StarExpr); ok {
					if id, ok := star.X.(*ast.Ident); ok {
						stepper[id.Name] = true
					}
				}
			case *ast.GenDecl:
				for _, sp := range d.Specs {
					ts, ok := sp.(*ast.TypeSpec)
					if !ok {
						continue
					}
					if st, ok := ts.Type.(*ast.StructType); ok {
						for _, fl := range st.Fields.List {
							if id, ok := fl.Type.(*ast.Ident); ok && len(fl.Names) == 0 {
								embeds[ts.Name.Name] = append(embeds[ts.Name.Name], id.Name)
							}
						}
					}
				}
			}
		}
	}
	for typ, inner := range embeds {
		for _, e := range inner {
			if stepper[e] {
				stepper[typ] = true
			}
		}
	}
	for typ := range stepper {
		if ast.IsExported(typ) && !built[typ] {
			t.Errorf("balancer type %s has no case in initCases", typ)
		}
	}
	require.GreaterOrEqual(t, len(stepper), 10, "found only %d balancer types; the scan is broken", len(stepper))
}

// valueBlocker is a balancer passed by value: its Step blocks on release in the run with
// seed 1.
type valueBlocker struct{ entered, release chan struct{} }

func (v valueBlocker) Step(s *State) error {
	if s.Seed == 1 && s.Steps == 0 {
		v.entered <- struct{}{}
		<-v.release
	}
	s.Time++
	return nil
}

// TestConcurrentRunOfValues: two equal balancer values are two copies, not one balancer
// used twice, so Run does not refuse the second while the first runs.
func TestConcurrentRunOfValues(t *testing.T) {
	g, err := Path(4)
	require.NoError(t, err)
	loads := Loads{4, 0, 0, 0}
	b := valueBlocker{entered: make(chan struct{}, 1), release: make(chan struct{})}
	first := make(chan error, 1)
	go func() {
		_, err := Run(context.Background(), g, loads, b, &RunOptions{MaxSteps: 2, Seed: 1, Workers: 1})
		first <- err
	}()
	select {
	case <-b.entered:
	case <-time.After(30 * time.Second):
		require.FailNow(t, "the first Run never reached its Step")
	}
	_, err = Run(context.Background(), g, loads, b, &RunOptions{MaxSteps: 2, Seed: 2, Workers: 1})
	close(b.release)
	require.NoError(t, err, "a second copy of a value balancer was refused")
	select {
	case err := <-first:
		require.NoError(t, err, "first Run")
	case <-time.After(30 * time.Second):
		require.FailNow(t, "the first Run did not finish")
	}
}

// taggedRing is a Network passed by value whose type is comparable but whose tag field
// holds a slice: == on two such interface values panics.
type taggedRing struct {
	g   *Graph
	tag any
}

func (r taggedRing) Order() int              { return r.g.Order() }
func (r taggedRing) Neighbors(v int) []int32 { return r.g.Neighbors(v) }

// TestInitGuardValueNetwork: the Step-before-Init guard never compares two networks
// that == cannot compare; a run on such a network goes through.
func TestInitGuardValueNetwork(t *testing.T) {
	g, err := Ring(8)
	require.NoError(t, err)
	net := taggedRing{g: g, tag: []int{1, 2, 3}}
	loads, err := PointMass(8, 80, 0)
	require.NoError(t, err)
	for _, build := range []func() (Balancer, error){
		func() (Balancer, error) { return NewRandomizedDiffusion(net) },
		func() (Balancer, error) { return NewRandomMatching(net) },
		func() (Balancer, error) { return NewRSWDiffusion(net) },
	} {
		b, err := build()
		require.NoError(t, err)
		res, err := Run(context.Background(), net, loads, b, &RunOptions{MaxSteps: 20, Seed: 1})
		require.NoError(t, err, "%v", BalancerName(b))
		require.Equal(t, int64(80), res.Loads.Total())
	}
}
