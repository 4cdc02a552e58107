package tokendist_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"os"
	"strings"

	"github.com/tokendist/tokendist/gen"

	"github.com/tokendist/tokendist"
	"github.com/tokendist/tokendist/plot"
)

// Hostile values shared by the table: the full lists with TOKENDIST_ADV=full (.ci/run),
// a cross-section otherwise (go test ./..., also under the race detector).
var (
	advFull   = os.Getenv("TOKENDIST_ADV") == "full"
	advInts   = advPick([]int{math.MinInt, -1, 0, 1, 2, 3, 31, 62, 63, 64, 1 << 20, math.MaxInt32, 1 << 31, 1 << 40, 1e12, math.MaxInt - 1, math.MaxInt}, 0, 1, 2, 6, 8, 12, 14, 16)
	advSmall  = []int{-1, 0, 1, 2, 5}
	advInt64s = advPick([]int64{math.MinInt64, -1, 0, 1, 1 << 31, 1 << 62, math.MaxInt64 - 1, math.MaxInt64}, 0, 2, 5, 7)
	advFloats = advPick([]float64{math.NaN(), math.Inf(1), math.Inf(-1), -1, 0, 0.5, 1, 1e308, -1e308, 5e-324}, 0, 1, 5, 7, 9)
)

// advPick returns all of vs with TOKENDIST_ADV=full, else the listed indices.
func advPick[T any](vs []T, keep ...int) []T {
	if advFull {
		return vs
	}
	out := make([]T, len(keep))
	for i, k := range keep {
		out[i] = vs[k]
	}
	return out
}

// advCheckGraph is the oracle of a generator: no error means a consistent graph.
func advCheckGraph(g *tokendist.Graph, err error) error {
	if err != nil {
		return err
	}
	if g == nil {
		return advWrong("nil graph without error")
	}
	deg := 0
	for v := 0; v < g.Order(); v++ {
		deg += len(g.Neighbors(v))
	}
	if deg != 2*g.Size() {
		return advWrong("degree sum %d, size %d", deg, g.Size())
	}
	return nil
}

// advCheckLoads: no error means valid loads with the given total (want < 0: any).
func advCheckLoads(l tokendist.Loads, err error, n int, want int64) error {
	if err != nil {
		return err
	}
	if n >= 0 && len(l) != n {
		return advWrong("%d loads, want %d", len(l), n)
	}
	total, verr := l.Validate()
	if verr != nil {
		return advWrong("returned invalid loads: %v", verr)
	}
	if want >= 0 && total != want {
		return advWrong("total %d, want %d", total, want)
	}
	return nil
}

// advNonNeg: no error means a non-negative integer result.
func advNonNeg(v int64, err error) error {
	if err != nil {
		return err
	}
	if v < 0 {
		return advWrong("negative result %d without error", v)
	}
	return nil
}

// advExact: no error means v == want (want computed exactly with big.Int).
func advExact(v int64, err error, want *big.Int) error {
	if err != nil {
		if want.IsInt64() && want.Sign() >= 0 && errors.Is(err, tokendist.ErrOverflow) {
			return advWrong("ErrOverflow for a result %v that fits", want)
		}
		return err
	}
	if !want.IsInt64() || want.Int64() != v {
		return advWrong("result %d, exact %v", v, want)
	}
	return nil
}

// Misbehaving networks.
type advNet struct {
	order int
	nb    func(v int) []int32
}

func (n advNet) Order() int              { return n.order }
func (n advNet) Neighbors(v int) []int32 { return n.nb(v) }

func advNets() map[string]tokendist.Network {
	var nilGraph *tokendist.Graph
	path, _ := tokendist.Path(4)
	return map[string]tokendist.Network{
		"nil":        nil,
		"typed-nil":  nilGraph,
		"huge":       advNet{1e12, func(v int) []int32 { return nil }},
		"maxint":     advNet{math.MaxInt, func(v int) []int32 { return nil }},
		"negative":   advNet{-5, func(v int) []int32 { return nil }},
		"empty":      advNet{0, func(v int) []int32 { return nil }},
		"outrange":   advNet{4, func(v int) []int32 { return []int32{int32(v + 7)} }},
		"negnb":      advNet{4, func(v int) []int32 { return []int32{-1} }},
		"selfloop":   advNet{3, func(v int) []int32 { return []int32{int32(v)} }},
		"asymmetric": advNet{3, func(v int) []int32 { return []int32{int32((v + 1) % 3)} }},
		"unsorted":   advNet{3, func(v int) []int32 { return []int32{int32((v + 2) % 3), int32((v + 1) % 3)} }},
		"dups":       advNet{2, func(v int) []int32 { return []int32{int32(1 - v), int32(1 - v)} }},
		"panicky":    advNet{4, func(v int) []int32 { panic("user network panic") }},
		"changing":   &advChanging{},
		"path4":      path,
	}
}

// advChanging returns a different neighbourhood on every call.
type advChanging struct{ calls int }

func (c *advChanging) Order() int { return 4 }
func (c *advChanging) Neighbors(v int) []int32 {
	c.calls++
	if c.calls%2 == 0 {
		return nil
	}
	return []int32{int32((v + 1) % 4)}
}

// advExpectPanic runs f, which must panic with want on the caller's goroutine.
func advExpectPanic(want any, f func() error) (err error) {
	defer func() {
		p := recover()
		if p == nil {
			if err == nil {
				err = advWrong("no panic, no error")
			}
			return
		}
		if p != want {
			err = advWrong("recovered %v, want %v", p, want)
			return
		}
		err = nil
	}()
	return f()
}

// advMayPanic runs f, which may panic with want on the caller's goroutine (if it calls
// the user's code) or return.
func advMayPanic(want any, f func() error) (err error) {
	defer func() {
		if p := recover(); p != nil && p != want {
			err = advWrong("recovered %v, want %v", p, want)
		}
	}()
	return f()
}

func advTable() []advCase {
	var cs []advCase
	seen := map[string]int{}
	add := func(name string, run func() error) {
		if seen[name]++; seen[name] > 1 {
			name = fmt.Sprintf("%s#%d", name, seen[name])
		}
		cs = append(cs, advCase{name, run})
	}
	ctx := context.Background()

	// Generators over hostile sizes.
	gens := map[string]func(n int) (*tokendist.Graph, error){
		"Path": tokendist.Path, "Ring": tokendist.Ring, "Star": tokendist.Star, "Complete": tokendist.Complete,
		"Hypercube": tokendist.Hypercube, "ShuffleExchange": tokendist.ShuffleExchange,
		"RandomTree":     func(n int) (*tokendist.Graph, error) { return tokendist.RandomTree(n, 1) },
		"RandomRegular":  func(n int) (*tokendist.Graph, error) { return tokendist.RandomRegular(n, 3, 1) },
		"RandomRegularD": func(n int) (*tokendist.Graph, error) { return tokendist.RandomRegular(100, n, 1) },
		"Torus2":         func(n int) (*tokendist.Graph, error) { return tokendist.Torus(n, n) },
		"Mesh2":          func(n int) (*tokendist.Graph, error) { return tokendist.Mesh(n, 3) },
		"KaryH": func(n int) (*tokendist.Graph, error) {
			return tokendist.KaryTree(tokendist.KaryShape{Height: n, Arity: 2})
		},
		"KaryK": func(n int) (*tokendist.Graph, error) {
			return tokendist.KaryTree(tokendist.KaryShape{Height: 2, Arity: n})
		},
		"NewGraph":   func(n int) (*tokendist.Graph, error) { return tokendist.NewGraph(n, [][2]int{{0, 1}}) },
		"ErdosRenyi": func(n int) (*tokendist.Graph, error) { return gen.ErdosRenyi(n, 0.5, 1) },
		"ErdosRenyiSparse": func(n int) (*tokendist.Graph, error) {
			return gen.ErdosRenyi(n, min(1, 3*math.Log(float64(max(n, 2)))/float64(max(n, 1))), 1)
		},
		"BarabasiAlbert":  func(n int) (*tokendist.Graph, error) { return gen.BarabasiAlbert(n, 3, 1) },
		"BarabasiAlbertM": func(n int) (*tokendist.Graph, error) { return gen.BarabasiAlbert(100, n, 1) },
		"WattsStrogatz":   func(n int) (*tokendist.Graph, error) { return gen.WattsStrogatz(n, 4, 0.1, 1) },
		"WattsStrogatzK":  func(n int) (*tokendist.Graph, error) { return gen.WattsStrogatz(100, n, 0.1, 1) },
		"RandomGeometric": func(n int) (*tokendist.Graph, error) { return gen.RandomGeometric(n, 0.3, 1) },
	}
	for _, f := range advFloats {
		add(fmt.Sprintf("gen/ErdosRenyi(p=%v)", f), func() error { return advCheckGraph(gen.ErdosRenyi(100, f, 1)) })
		add(fmt.Sprintf("gen/WattsStrogatz(beta=%v)", f), func() error { return advCheckGraph(gen.WattsStrogatz(100, 4, f, 1)) })
		add(fmt.Sprintf("gen/RandomGeometric(r=%v)", f), func() error { return advCheckGraph(gen.RandomGeometric(100, f, 1)) })
	}
	for name, f := range gens {
		for _, n := range advInts {
			add(fmt.Sprintf("gen/%s(%d)", name, n), func() error { return advCheckGraph(f(n)) })
		}
	}
	add("gen/Torus(many)", func() error { return advCheckGraph(tokendist.Torus(1<<16, 1<<16, 1<<16)) })
	add("gen/Mesh(overflow)", func() error { return advCheckGraph(tokendist.Mesh(1<<32, 1<<32, 1<<32)) })
	add("gen/NewGraph(bad edge)", func() error { return advCheckGraph(tokendist.NewGraph(3, [][2]int{{0, math.MaxInt}})) })

	// Networks: every entry point that takes one.
	for nname, net := range advNets() {
		nets := map[string]func() error{
			"AsGraph": func() error { return advCheckGraph(tokendist.AsGraph(net)) },
			"Run": func() error {
				_, err := tokendist.Run(ctx, net, make(tokendist.Loads, 4), &tokendist.Funcs{StepFunc: func(*tokendist.State) error { return nil }}, nil)
				return err
			},
			"Diffusion":      func() error { _, err := tokendist.NewRandomizedDiffusion(net); return err },
			"RSW":            func() error { _, err := tokendist.NewRSWDiffusion(net); return err },
			"FGSD":           func() error { _, err := tokendist.NewFGSDeterministic(net); return err },
			"RandomMatching": func() error { _, err := tokendist.NewRandomMatching(net); return err },
			"LambdaMax":      func() error { _, err := tokendist.LambdaMax(net, nil); return err },
			"Transition":     func() error { _, err := tokendist.TransitionMatrix(net); return err },
			"MSD":            func() error { _, err := tokendist.MSD(net); return err },
			"Stabilities":    func() error { _, err := tokendist.Stabilities(net); return err },
			"StableGaps":     func() error { _, err := tokendist.StableGaps(net); return err },
			"Fringe":         func() error { _, err := tokendist.Fringe(net, []int{0}); return err },
			"MinFringe":      func() error { _, _, err := tokendist.MinFringe(net, 1); return err },
			"Peripheral":     func() error { _, err := tokendist.Peripheral(net); return err },
			"DistanceLoads":  func() error { _, err := tokendist.DistanceLoads(net, 0); return err },
			"LeightonTime":   func() error { _, err := tokendist.LeightonTime(net, 5); return err },
			"DimOrderBound":  func() error { _, err := tokendist.DimensionOrderTimeBound(net, 5); return err },
			"Subgraph":       func() error { _, err := tokendist.ConstructSubgraph(net, 1); return err },
			"Divergence":     func() error { _, err := tokendist.LocalDivergence(net, 0.1, nil); return err },
			"DimOrder":       func() error { _, err := tokendist.NewDimensionOrderBalance(net, nil); return err },
			"HBalance":       func() error { _, err := tokendist.NewHypercubeBalance(net, nil); return err },
			"Leighton":       func() error { _, err := tokendist.NewLeightonBalance(net); return err },
			"Multi":          func() error { _, err := tokendist.NewMultiBalance(net, nil, nil); return err },
			"Continuous":     func() error { _, err := tokendist.NewContinuousDiffusion(net, nil); return err },
			"Deviation":      func() error { _, err := tokendist.NewDeviation(net, nil); return err },
			"Run+Deviation": func() error {
				_, _, err := runDeviation(ctx, net, make(tokendist.Loads, 4), &tokendist.Funcs{StepFunc: func(*tokendist.State) error { return nil }}, nil)
				return err
			},
		}
		for fname, f := range nets {
			name := "net/" + fname + "/" + nname
			if nname == "panicky" {
				add(name, func() error { return advMayPanic("user network panic", f) })
				continue
			}
			add(name, f)
		}
	}

	// Loads builders.
	for _, n := range advInts {
		for _, tok := range []int64{-1, 0, 7, math.MaxInt64} {
			add(fmt.Sprintf("loads/PointMass(%d,%d)", n, tok), func() error {
				l, err := tokendist.PointMass(n, tok, 0)
				return advCheckLoads(l, err, n, tok)
			})
			add(fmt.Sprintf("loads/UniformRandom(%d,%d)", n, tok), func() error {
				l, err := tokendist.UniformRandom(n, tok, 1)
				return advCheckLoads(l, err, n, tok)
			})
		}
		add(fmt.Sprintf("loads/PointMass(3,1,%d)", n), func() error {
			l, err := tokendist.PointMass(3, 1, n)
			return advCheckLoads(l, err, 3, 1)
		})
		add(fmt.Sprintf("loads/RandomRange(%d)", n), func() error {
			l, err := tokendist.RandomRange(n, 0, 10, 1)
			return advCheckLoads(l, err, n, -1)
		})
		add(fmt.Sprintf("loads/DimensionOrderWorstLoads(%d)", n), func() error {
			l, err := tokendist.DimensionOrderWorstLoads(n, 3)
			return advCheckLoads(l, err, -1, -1)
		})
		add(fmt.Sprintf("loads/HammingBallLoads(%d)", n), func() error {
			l, err := tokendist.HammingBallLoads(n, 10, 3, 0)
			return advCheckLoads(l, err, -1, 10)
		})
		add(fmt.Sprintf("loads/PackedLoads(%d)", n), func() error {
			l, err := tokendist.PackedLoads(n, []int{0, 1}, 5, 3)
			return advCheckLoads(l, err, n, 5)
		})
	}
	for _, m := range advInt64s {
		add(fmt.Sprintf("loads/RandomRange(4,0,%d)", m), func() error {
			l, err := tokendist.RandomRange(4, 0, m, 1)
			return advCheckLoads(l, err, 4, -1)
		})
		add(fmt.Sprintf("loads/RandomRange(4,%d,%d)", m, m), func() error {
			l, err := tokendist.RandomRange(4, m, m, 1)
			return advCheckLoads(l, err, 4, -1)
		})
		add(fmt.Sprintf("loads/DimensionOrderWorstLoads(10,%d)", m), func() error {
			l, err := tokendist.DimensionOrderWorstLoads(10, m)
			return advCheckLoads(l, err, -1, -1)
		})
		add(fmt.Sprintf("loads/HammingBallLoads(4,%d,%d)", m, m), func() error {
			l, err := tokendist.HammingBallLoads(4, m, m, 0)
			return advCheckLoads(l, err, 16, m)
		})
		add(fmt.Sprintf("loads/HammingBallLoads(4,%d,1)", m), func() error {
			l, err := tokendist.HammingBallLoads(4, m, 1, 0)
			return advCheckLoads(l, err, 16, m)
		})
		add(fmt.Sprintf("loads/PackedLoads(4,%d,%d)", m, m), func() error {
			l, err := tokendist.PackedLoads(4, []int{0, 1, 2, 3}, m, m)
			return advCheckLoads(l, err, 4, m)
		})
		add(fmt.Sprintf("loads/CondensedIDGroups(4,1,%d)", m), func() error {
			gs, err := tokendist.CondensedIDGroups(4, 1, m)
			if err != nil {
				return err
			}
			var all tokendist.Loads
			for _, g := range gs {
				all = append(all, g...)
			}
			return advCheckLoads(all, nil, -1, -1)
		})
	}
	for _, d := range advPick([]int{-1, 0, 1, 10, 30, 31, 62, 63, 64, 1 << 20}, 0, 4, 6, 9) {
		for _, r := range advPick([]int{-1, 0, 1, 30, 63}, 0, 2, 3) {
			add(fmt.Sprintf("loads/CondensedIDGroups(%d,%d)", d, r), func() error {
				_, err := tokendist.CondensedIDGroups(d, r, 1)
				return err
			})
		}
	}

	// Bounds and closed forms, with exact oracles where there is one.
	kary := func(h, k int) *big.Int { // (k^(h+1) − 1)/(k − 1)
		if k == 1 {
			return big.NewInt(int64(h) + 1)
		}
		K := big.NewInt(int64(k))
		p := new(big.Int).Exp(K, big.NewInt(int64(h)+1), nil)
		p.Sub(p, big.NewInt(1))
		return p.Quo(p, big.NewInt(int64(k)-1))
	}
	for _, h := range advPick([]int{-1, 0, 1, 2, 30, 62, 63, 64, 1000, math.MaxInt}, 0, 1, 3, 5, 9) {
		for _, k := range advPick([]int{-1, 0, 1, 2, 3, 1 << 31, math.MaxInt}, 0, 2, 4, 6) {
			sh := tokendist.KaryShape{Height: h, Arity: k}
			add(fmt.Sprintf("bound/KaryTreeOrder(%d,%d)", h, k), func() error {
				v, err := tokendist.KaryTreeOrder(sh)
				if h < 0 || k < 1 || (h > 100 && k > 1) || h > 1<<20 {
					if err == nil && v < 0 {
						return advWrong("negative %d", v)
					}
					return err
				}
				return advExact(int64(v), err, kary(h, k))
			})
			add(fmt.Sprintf("bound/KaryTreeBound(%d,%d)", h, k), func() error { v, err := tokendist.KaryTreeBound(sh); return advNonNeg(int64(v), err) })
			add(fmt.Sprintf("bound/KaryTreeStableGaps(%d,%d)", h, k), func() error { _, _, err := tokendist.KaryTreeStableGaps(sh); return err })
		}
	}
	for _, d := range advPick([]int{-1, 0, 1, 10, 30, 62, 63, 64, 1 << 20, math.MaxInt}, 0, 3, 5, 6, 9) {
		for _, m := range advInt64s {
			add(fmt.Sprintf("bound/HypercubeBalanceTimeBound(%d,%d)", d, m), func() error { return advNonNeg(tokendist.HypercubeBalanceTimeBound(d, m)) })
			add(fmt.Sprintf("bound/MaxTotalDiscrepancy(%d,%d)", d, m), func() error { return advNonNeg(tokendist.MaxTotalDiscrepancy(d, m, m)) })
			add(fmt.Sprintf("bound/BalanceLowerBound(%d,%d)", d, m), func() error { return advNonNeg(tokendist.BalanceLowerBound(d, m, 1, 0)) })
			add(fmt.Sprintf("bound/HypercubeFringe(%d,%d)", d, m), func() error { return advNonNeg(tokendist.HypercubeFringe(d, m)) })
			add(fmt.Sprintf("bound/HammingBallShape(%d,%d)", d, m), func() error { _, y, err := tokendist.HammingBallShape(d, m); return advNonNeg(y, err) })
		}
		for _, r := range advPick([]int{-1, 0, 1, 31, 32, 62, 64, math.MaxInt}, 0, 2, 4, 7) {
			add(fmt.Sprintf("bound/HammingBallSize(%d,%d)", d, r), func() error {
				v, err := tokendist.HammingBallSize(d, r)
				if d < 0 || r < 0 || d > 64 {
					return advNonNeg(v, err)
				}
				want := new(big.Int)
				for i := 0; i <= min(r, d); i++ {
					want.Add(want, new(big.Int).Binomial(int64(d), int64(i)))
				}
				return advExact(v, err, want)
			})
			add(fmt.Sprintf("bound/HammingBall(%d,%d)", d, r), func() error { _, err := tokendist.HammingBall(d, r, 0); return err })
		}
		add(fmt.Sprintf("bound/HypercubePsi1(%d)", d), func() error {
			v, err := tokendist.HypercubePsi1(d)
			if err == nil && (math.IsNaN(v) || v < 0) {
				return advWrong("psi %v", v)
			}
			return err
		})
		add(fmt.Sprintf("bound/HypercubeSpectrum(%d)", d), func() error { _, err := tokendist.HypercubeSpectrum(d); return err })
		add(fmt.Sprintf("bound/HypercubeColoring(%d)", d), func() error { _, err := tokendist.HypercubeColoring(d); return err })
		add(fmt.Sprintf("bound/Shuffle(5,%d)", d), func() error {
			_, err1 := tokendist.Shuffle(5, d)
			_, err2 := tokendist.Unshuffle(5, d)
			if (err1 == nil) != (d >= 3 && d <= 62) || (err1 == nil) != (err2 == nil) {
				return advWrong("Shuffle(5, %d): %v; Unshuffle(5, %d): %v", d, err1, d, err2)
			}
			return errors.Join(err1, err2)
		})
	}
	cube, _ := tokendist.Hypercube(4)
	for _, m := range advInt64s {
		add(fmt.Sprintf("bound/LeightonTime(%d)", m), func() error { return advNonNeg(tokendist.LeightonTime(cube, m)) })
		add(fmt.Sprintf("bound/DimensionOrderTimeBound(%d)", m), func() error { return advNonNeg(tokendist.DimensionOrderTimeBound(cube, m)) })
		add(fmt.Sprintf("bound/PairTime(%d)", m), func() error {
			v, err := tokendist.PairTime(m, 0)
			if err == nil && v < 0 {
				return advWrong("PairTime(%d, 0) = %d", m, v)
			}
			return err
		})
		add(fmt.Sprintf("bound/MinimumError(%d)", m), func() error {
			v, err := tokendist.MinimumError(m, 3)
			want := int64(0)
			if m%3 != 0 {
				want = 1
			}
			if (err == nil) != (m >= 0) || (err == nil && v != want) {
				return advWrong("MinimumError(%d, 3) = %d, %v", m, v, err)
			}
			return err
		})
		for _, n := range []int{-1, 0, 1, 10, math.MaxInt} {
			add(fmt.Sprintf("bound/BalancingTime(%d,%d)", n, m), func() error { return advNonNeg(tokendist.BalancingTime(0.5, n, m)) })
		}
		add(fmt.Sprintf("bound/OptimalPerfectMoves(%d)", m), func() error {
			g, _ := tokendist.Path(3)
			return advNonNeg(tokendist.OptimalPerfectMoves(g, tokendist.Loads{m, 0, 0}))
		})
		add(fmt.Sprintf("bound/OptimalPerfectMoves2(%d)", m), func() error {
			g, _ := tokendist.Path(3)
			return advNonNeg(tokendist.OptimalPerfectMoves(g, tokendist.Loads{m / 2, 0, m / 2}))
		})
	}
	for _, f := range advFloats {
		add(fmt.Sprintf("bound/BalancingTime(lambda=%v)", f), func() error { return advNonNeg(tokendist.BalancingTime(f, 10, 100)) })
		add(fmt.Sprintf("spectral/Tol=%v", f), func() error {
			g, _ := tokendist.Path(10)
			_, err := tokendist.LambdaMax(g, &tokendist.SpectralOptions{Tol: f})
			return err
		})
		add(fmt.Sprintf("spectral/Divergence(tol=%v)", f), func() error {
			g, _ := tokendist.Path(10)
			_, err := tokendist.LocalDivergence(g, f, nil)
			return err
		})
		add(fmt.Sprintf("spectral/DivergenceLambda(%v)", f), func() error {
			g, _ := tokendist.Path(10)
			_, err := tokendist.LocalDivergence(g, 0.1, &tokendist.DivergenceOptions{LambdaMax: f})
			return err
		})
		add(fmt.Sprintf("ring/RandomTreeDag(q=%v)", f), func() error { _, err := tokendist.RandomTreeDag(f, 10, 1); return err })
		add(fmt.Sprintf("ring/RandomGridDag(q=%v)", f), func() error { _, err := tokendist.RandomGridDag(f, 10, 1); return err })
		add(fmt.Sprintf("ring/Quadrature(%v)", f), func() error {
			_, err := tokendist.NewQuadrature(math.Sin, 0, f, f, f)
			return err
		})
		add(fmt.Sprintf("plot/Lines(%v)", f), func() error {
			_, err := plot.Lines([]plot.Line{{Name: "x", X: []float64{f, -f, 0}, Y: []float64{1, f, 2}}}, nil)
			return err
		})
		add(fmt.Sprintf("plot/LinesLog(%v)", f), func() error {
			_, err := plot.Lines([]plot.Line{{Name: "x", X: []float64{f, 1}, Y: []float64{f, 2}}}, &plot.Options{LogX: true, LogY: true})
			return err
		})
		add(fmt.Sprintf("plot/Size(%v)", f), func() error {
			_, err := plot.Lines([]plot.Line{{Name: "x", X: []float64{0, 1}, Y: []float64{0, 2}}}, &plot.Options{Width: f, Height: f})
			return err
		})
	}
	add("plot/Lines(±1.7e308)", func() error {
		_, err := plot.Lines([]plot.Line{{Name: "x", X: []float64{-1.7e308, 1.7e308}, Y: []float64{-1.7e308, 1.7e308}}}, nil)
		return err
	})
	add("plot/Lines(tiny range)", func() error {
		_, err := plot.Lines([]plot.Line{{Name: "x", X: []float64{1, math.Nextafter(1, 2)}, Y: []float64{1e-300, 1e-300}}}, nil)
		return err
	})
	add("plot/Lines(1e6 lines)", func() error {
		lines := make([]plot.Line, 1e6)
		_, err := plot.Lines(lines, nil)
		return err
	})

	// Ring closed forms.
	for _, n := range advPick([]int{-1, 0, 1, 10, 62, 63, 1 << 20, math.MaxInt}, 0, 3, 5, 6, 7) {
		for _, p := range advPick([]int{-1, 0, 1, 3, 1 << 20, 1e12, math.MaxInt}, 0, 3, 4, 5, 6) {
			add(fmt.Sprintf("ring/RingWork(%d,%d)", n, p), func() error { _, err := tokendist.RingWork(n, p); return err })
			add(fmt.Sprintf("ring/RingWorkDFT(%d,%d)", n, p), func() error { _, err := tokendist.RingWorkDFT(n, p); return err })
			add(fmt.Sprintf("ring/RingGridWork(%d,%d)", n, p), func() error { _, err := tokendist.RingGridWork(n, p); return err })
			add(fmt.Sprintf("ring/RingTreeBounds(%d,%d)", n, p), func() error { _, err := tokendist.RingTreeBounds(n, p); return err })
			add(fmt.Sprintf("ring/RingGridBounds(%d,%d)", n, p), func() error { _, err := tokendist.RingGridBounds(n, p); return err })
			add(fmt.Sprintf("ring/RingTreeTau(%d,%d)", n, p), func() error {
				return advNonNeg(tokendist.RingTreeTau(tokendist.TreeNode(uint64(n)), p))
			})
			add(fmt.Sprintf("ring/RingGridTau(%d,%d)", n, p), func() error {
				return advNonNeg(tokendist.RingGridTau(tokendist.GridNode{K: n, L: n}, p))
			})
		}
		add(fmt.Sprintf("ring/RingAlpha(%d)", n), func() error { _, err := tokendist.RingAlpha(n); return err })
		add(fmt.Sprintf("ring/CompleteTree(%d)", n), func() error { _, err := tokendist.CompleteTree(n); return err })
		add(fmt.Sprintf("ring/PyramidGrid(%d)", n), func() error { _, err := tokendist.PyramidGrid(n); return err })
		add(fmt.Sprintf("ring/WCompleteTree(%d)", n), func() error { _, err := tokendist.WCompleteTree(n, n); return err })
		add(fmt.Sprintf("ring/AdversarialGrid(%d)", n), func() error { _, err := tokendist.AdversarialGrid(n, n, n); return err })
		add(fmt.Sprintf("ring/NewRingTree(%d)", n), func() error {
			dag, _ := tokendist.CompleteTree(3)
			_, err := tokendist.NewRingTree(n, dag, nil)
			return err
		})
	}
	for _, id := range []uint64{0, 1, 1 << 62, 1 << 63, math.MaxUint64} {
		add(fmt.Sprintf("ring/GridNodeOf(%d)", id), func() error {
			x := tokendist.GridNodeOf(id)
			if x.K < 0 || x.L < 0 {
				return advWrong("GridNodeOf(%d) = %v", id, x)
			}
			return nil
		})
		add(fmt.Sprintf("ring/TreeNode(%d)", id), func() error {
			x := tokendist.TreeNode(id)
			_, _, _, _ = x.Level(), x.Weight(), x.String(), x.Bits()
			return nil
		})
	}
	add("ring/ParseTreeNode(100KB)", func() error {
		return advShortErr(func(b []byte) error { _, err := tokendist.ParseTreeNode(string(b)); return err })
	})
	add("ring/RunRing(nil)", func() error { _, err := tokendist.RunRing(ctx, nil, nil); return err })
	add("ring/RunRing(nil ctx)", func() error {
		dag, _ := tokendist.CompleteTree(3)
		b, _ := tokendist.NewRingTree(3, dag, nil)
		//lint:ignore SA1012 nil context on purpose
		_, err := tokendist.RunRing(nil, b, nil) //nolint:staticcheck
		return err
	})
	add("ring/Comparison(panic rule)", func() error {
		return advExpectPanic("rule panic", func() error {
			_, err := tokendist.RunRingComparison(ctx, tokendist.RingExperiment{
				Name: "p", P: []int{3}, Seeds: []uint64{1, 2, 3, 4, 5, 6, 7, 8},
				Tree: func(seed uint64) (tokendist.TreeDag, error) {
					return tokendist.TreeDagFunc(func(x tokendist.TreeNode) bool {
						if x.Level() > 3 {
							panic("rule panic")
						}
						return true
					}), nil
				},
			})
			return err
		})
	})
	add("ring/Comparison(nil dag)", func() error {
		_, err := tokendist.RunRingComparison(ctx, tokendist.RingExperiment{Name: "p", P: []int{3},
			Tree: func(seed uint64) (tokendist.TreeDag, error) { return nil, nil }})
		return err
	})
	add("ring/Comparison(unprefixed)", func() error {
		_, err := tokendist.RunRingComparison(ctx, tokendist.RingExperiment{Name: "p", P: []int{3},
			Tree: func(seed uint64) (tokendist.TreeDag, error) { return nil, errors.New("user error") }})
		return err
	})
	add("ring/Comparison(nil ctx)", func() error {
		//lint:ignore SA1012 nil context on purpose
		_, err := tokendist.RunRingComparison(nil, tokendist.RingExperiment{Name: "p", P: []int{3}, //nolint:staticcheck
			Tree: func(seed uint64) (tokendist.TreeDag, error) { return tokendist.CompleteTree(3) }})
		return err
	})

	// Run with misbehaving balancers, recorders and options.
	g8, _ := tokendist.Path(8)
	l8 := tokendist.Loads{8, 0, 0, 0, 0, 0, 0, 0}
	funcs := map[string]*tokendist.Funcs{
		"grow":      {StepFunc: func(s *tokendist.State) error { s.Loads = append(s.Loads, 1); return nil }},
		"shrink":    {StepFunc: func(s *tokendist.State) error { s.Loads = s.Loads[:len(s.Loads)-1]; return nil }},
		"nil-loads": {StepFunc: func(s *tokendist.State) error { s.Loads = nil; return nil }},
		"grow-period": {StepFunc: func(s *tokendist.State) error { s.Loads = append(s.Loads, 0); return nil },
			PeriodFunc: func(*tokendist.State) int64 { return 1 }},
		"shrink-period": {StepFunc: func(s *tokendist.State) error { s.Loads = s.Loads[:1]; return nil },
			PeriodFunc: func(*tokendist.State) int64 { return 1 }},
		"init-grow": {InitFunc: func(s *tokendist.State) error { s.Loads = append(s.Loads, 0); return nil },
			StepFunc: func(s *tokendist.State) error { return nil }},
		"steal":        {StepFunc: func(s *tokendist.State) error { s.Loads[0]--; return nil }},
		"negative":     {StepFunc: func(s *tokendist.State) error { s.Loads[0] -= 9; s.Loads[1] += 9; return nil }},
		"moved-wrap":   {StepFunc: func(s *tokendist.State) error { s.Moved += math.MaxInt64 / 2; return nil }},
		"time-wrap":    {StepFunc: func(s *tokendist.State) error { s.Time += math.MaxInt64 / 3; return nil }},
		"time-neg":     {StepFunc: func(s *tokendist.State) error { s.Time = -1; return nil }},
		"msgs-wrap":    {StepFunc: func(s *tokendist.State) error { s.Messages += math.MaxInt64 / 2; return nil }},
		"err":          {StepFunc: func(s *tokendist.State) error { return errors.New("user step error") }},
		"init-err":     {InitFunc: func(s *tokendist.State) error { return errors.New("user init error") }, StepFunc: func(*tokendist.State) error { return nil }},
		"nil-step":     {},
		"period-huge":  {StepFunc: func(*tokendist.State) error { return nil }, PeriodFunc: func(*tokendist.State) int64 { return math.MaxInt64 }},
		"period-neg":   {StepFunc: func(*tokendist.State) error { return nil }, PeriodFunc: func(*tokendist.State) int64 { return -5 }},
		"expected-bad": {StepFunc: func(*tokendist.State) error { return nil }, ExpectedTotalFunc: func(*tokendist.State) int64 { return -1 }},
		"net-nil":      {StepFunc: func(s *tokendist.State) error { s.Net = nil; return nil }},
		"rand-nil":     {StepFunc: func(s *tokendist.State) error { s.Rand = nil; return nil }},
	}
	for name, f := range funcs {
		for _, period := range []bool{false, true} {
			add(fmt.Sprintf("run/%s/stability=%v", name, period), func() error {
				res, err := tokendist.Run(ctx, g8, l8, f, &tokendist.RunOptions{MaxSteps: 5, NoStability: !period, SampleEvery: 1})
				if err == nil && name != "period-huge" && name != "period-neg" && name != "rand-nil" && name != "net-nil" {
					return advWrong("no error: %v", res)
				}
				if err != nil && res.Status != tokendist.StatusFailed {
					return advWrong("status %v with error %v", res.Status, err)
				}
				if err != nil && (res.Moved < 0 || res.Time < 0 || res.Messages < 0) && name != "time-neg" {
					return advWrong("negative counters %v", res)
				}
				return err
			})
		}
	}
	add("run/panic-step", func() error {
		return advExpectPanic("step panic", func() error {
			_, err := tokendist.Run(ctx, g8, l8, &tokendist.Funcs{StepFunc: func(*tokendist.State) error { panic("step panic") }}, nil)
			return err
		})
	})
	var nilFuncs *tokendist.Funcs
	var nilDE *tokendist.DimensionExchange
	var nilCube *tokendist.CubeBalancer
	var nilRS *tokendist.RingScheduler
	var nilPT *tokendist.PerfectTree
	var nilRD *tokendist.RandomizedDiffusion
	for name, b := range map[string]tokendist.Balancer{"Funcs": nilFuncs, "DimensionExchange": nilDE, "CubeBalancer": nilCube, "RingScheduler": nilRS, "PerfectTree": nilPT, "RandomizedDiffusion": nilRD, "nil": nil} {
		add("run/typed-nil/"+name, func() error { _, err := tokendist.Run(ctx, g8, l8, b, nil); return err })
		add("run/typed-nil-dev/"+name, func() error { _, _, err := runDeviation(ctx, g8, l8, b, nil); return err })
	}
	okB := &tokendist.Funcs{StepFunc: func(*tokendist.State) error { return nil }}
	//lint:ignore SA1012 nil context on purpose
	add("run/nil-ctx", func() error { _, err := tokendist.Run(nil, g8, l8, okB, nil); return err }) //nolint:staticcheck
	add("run/nil-ctx-dev", func() error {
		b, _ := tokendist.NewRandomizedDiffusion(g8)
		//lint:ignore SA1012 nil context on purpose
		_, _, err := runDeviation(nil, g8, l8, b, nil) //nolint:staticcheck
		return err
	})
	add("run/nil-ctx-perfect", func() error {
		//lint:ignore SA1012 nil context on purpose
		_, err := runPT(nil, g8, l8, nil, 0) //nolint:staticcheck
		return err
	})
	add("run/nil-ctx-perfect-conc", func() error {
		//lint:ignore SA1012 nil context on purpose
		_, err := runPTGoroutines(nil, g8, l8, nil, 0) //nolint:staticcheck
		return err
	})
	add("run/recorder-unprefixed", func() error {
		_, err := tokendist.Run(ctx, g8, l8, okB, &tokendist.RunOptions{MaxSteps: 3, Recorder: tokendist.RecorderFunc(func(*tokendist.State, tokendist.Sample) error { return errors.New("user recorder") })})
		return err
	})
	add("run/recorder-panic", func() error {
		return advExpectPanic("rec panic", func() error {
			_, err := tokendist.Run(ctx, g8, l8, okB, &tokendist.RunOptions{MaxSteps: 3, Recorder: tokendist.RecorderFunc(func(*tokendist.State, tokendist.Sample) error { panic("rec panic") })})
			return err
		})
	})
	for _, v := range advInt64s {
		add(fmt.Sprintf("run/MaxSteps=%d", v), func() error {
			_, err := tokendist.Run(ctx, g8, l8, okB, &tokendist.RunOptions{MaxSteps: v, UseTarget: true, TargetDiscrepancy: 100})
			return err
		})
		add(fmt.Sprintf("run/SampleEvery=%d", v), func() error {
			_, err := tokendist.Run(ctx, g8, l8, okB, &tokendist.RunOptions{MaxSteps: 10, SampleEvery: v})
			return err
		})
		add(fmt.Sprintf("run/Workers=%d", v), func() error {
			b, _ := tokendist.NewRandomizedDiffusion(g8)
			_, err := tokendist.Run(ctx, g8, l8, b, &tokendist.RunOptions{MaxSteps: 10, Workers: int(v)})
			return err
		})
		add(fmt.Sprintf("run/loads=%d", v), func() error {
			b, _ := tokendist.NewRandomizedDiffusion(g8)
			res, err := tokendist.Run(ctx, g8, tokendist.Loads{v, v, 0, 0, 0, 0, 0, 0}, b, &tokendist.RunOptions{MaxSteps: 50})
			if err == nil && res.Loads.Total() != 2*v {
				return advWrong("total %d", res.Loads.Total())
			}
			return err
		})
	}
	// Long runs with near-MaxInt64 loads: counters must not wrap.
	for _, name := range []string{"Diffusion", "RSW", "DimOrder", "Threshold2"} {
		add("run/counters/"+name, func() error {
			var b tokendist.Balancer
			var net tokendist.Network
			var err error
			switch name {
			case "Diffusion":
				net, _ = tokendist.Path(2)
				b, err = tokendist.NewRandomizedDiffusion(net)
			case "RSW":
				net, _ = tokendist.Path(2)
				b, err = tokendist.NewRSWDiffusion(net)
			case "DimOrder":
				net, _ = tokendist.Hypercube(1)
				b, err = tokendist.NewDimensionOrderBalance(net, nil)
			case "Threshold2":
				g, _ := tokendist.Path(2)
				ec, _ := tokendist.BipartiteColoring(g)
				net = g
				b, err = tokendist.NewThreshold2(g, ec)
			}
			if err != nil {
				return err
			}
			// A balancer that swaps the two loads every step moves ~MaxInt64 tokens.
			swap := &tokendist.Funcs{StepFunc: func(s *tokendist.State) error {
				s.Loads[0], s.Loads[1] = s.Loads[1], s.Loads[0]
				s.Moved += max(s.Loads[0], s.Loads[1])
				s.Time++
				return nil
			}}
			for _, bb := range []tokendist.Balancer{b, swap} {
				res, err := tokendist.Run(ctx, net, tokendist.Loads{math.MaxInt64, 0}, bb, &tokendist.RunOptions{MaxSteps: 8, NoStability: true})
				if res.Moved < 0 || res.Time < 0 {
					return advWrong("%s: counters wrapped: %v", tokendist.BalancerName(bb), res)
				}
				if err != nil {
					return err
				}
			}
			return nil
		})
	}

	// Dimension exchange and colourings.
	add("dimex/NewEdgeColoring(nil func)", func() error { _, err := tokendist.NewEdgeColoring(g8, nil); return err })
	add("dimex/NewEdgeColoring(nil graph)", func() error { _, err := tokendist.NewEdgeColoring(nil, func(u, v int) int { return 0 }); return err })
	add("dimex/NewEdgeColoring(huge colour)", func() error {
		_, err := tokendist.NewEdgeColoring(g8, func(u, v int) int { return math.MaxInt })
		return err
	})
	add("dimex/NewEdgeColoring(negative)", func() error { _, err := tokendist.NewEdgeColoring(g8, func(u, v int) int { return -1 }); return err })
	add("dimex/NewEdgeColoring(panic)", func() error {
		return advExpectPanic("colour panic", func() error {
			_, err := tokendist.NewEdgeColoring(g8, func(u, v int) int { panic("colour panic") })
			return err
		})
	})
	add("dimex/NewDimensionExchange(nil)", func() error { _, err := tokendist.NewDimensionExchange(nil, nil, nil); return err })
	add("dimex/NewDimensionExchange(nil protocol)", func() error {
		ec, _ := tokendist.BipartiteColoring(g8)
		_, err := tokendist.NewDimensionExchange(g8, ec, nil)
		return err
	})
	add("dimex/NewDimensionExchange(nil ProtocolFunc)", func() error {
		ec, _ := tokendist.BipartiteColoring(g8)
		var pf tokendist.ProtocolFunc
		_, err := tokendist.NewDimensionExchange(g8, ec, pf)
		return err
	})
	add("dimex/coloring of other graph", func() error {
		g9, _ := tokendist.Path(9)
		ec, _ := tokendist.BipartiteColoring(g9)
		_, err := tokendist.NewThreshold2(g8, ec)
		return err
	})
	for _, n := range advSmall {
		add(fmt.Sprintf("dimex/Discrepancy1(n=%d)", n), func() error {
			ec, _ := tokendist.BipartiteColoring(g8)
			_, err := tokendist.NewDiscrepancy1(g8, ec, &tokendist.Discrepancy1Options{Nodes: n})
			return err
		})
	}
	for _, n := range advInts {
		add(fmt.Sprintf("dimex/RingColoring(%d)", n), func() error { _, err := tokendist.RingColoring(n); return err })
		add(fmt.Sprintf("dimex/TorusColoring(%d)", n), func() error { _, err := tokendist.TorusColoring(n, n); return err })
		add(fmt.Sprintf("dimex/MeshColoring(%d)", n), func() error { _, err := tokendist.MeshColoring(n, 2); return err })
		add(fmt.Sprintf("msd/Threshold1Bound(%d)", n), func() error { _, err := tokendist.Threshold1Bound(n, n); return err })
		add(fmt.Sprintf("msd/GapMSD(%d)", n), func() error { _, err := tokendist.GapMSD(n, []int{1, 1}, nil); return err })
		add(fmt.Sprintf("msd/WorstStableLoads(%d)", n), func() error {
			ec, _ := tokendist.BipartiteColoring(g8)
			_, err := tokendist.WorstStableLoads(ec, n, n)
			return err
		})
		add(fmt.Sprintf("msd/StableGapsAt(%d)", n), func() error { _, err := tokendist.StableGapsAt(g8, n); return err })
		add(fmt.Sprintf("msd/ConstructSubgraph(%d)", n), func() error { _, err := tokendist.ConstructSubgraph(g8, n); return err })
		add(fmt.Sprintf("spectral/TorusSpectrum(%d)", n), func() error { _, err := tokendist.TorusSpectrum(n, n); return err })
		add(fmt.Sprintf("spectral/MaxIter(%d)", n), func() error {
			_, err := tokendist.LambdaMax(g8, &tokendist.SpectralOptions{Method: tokendist.SpectralLanczos, MaxIter: n})
			return err
		})
		add(fmt.Sprintf("delays/Random(%d)", n), func() error { _, err := tokendist.NewRandomDelays(int64(n)); return err })
		add(fmt.Sprintf("delays/Reverse(%d)", n), func() error { _, err := tokendist.NewReverseDelays(int64(n)); return err })
		add(fmt.Sprintf("delays/SlowLink(%d)", n), func() error { _, err := tokendist.NewSlowLinkDelays(int64(n)); return err })
	}
	add("msd/GapMSD(nil progress panic)", func() error {
		return advExpectPanic("progress panic", func() error {
			_, err := tokendist.GapMSD(40, []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, &tokendist.MSDOptions{Progress: func(level, reached int) { panic("progress panic") }})
			return err
		})
	})
	add("spectral/Lanczos(Path3000,MaxIter1)", func() error {
		g, _ := tokendist.Path(3000)
		sp, err := tokendist.LambdaMax(g, &tokendist.SpectralOptions{Method: tokendist.SpectralLanczos, MaxIter: 1})
		if err == nil {
			// true λ_2 = (1 + 2cos(π/3000))/3
			want := (1 + 2*math.Cos(math.Pi/3000)) / 3
			if math.Abs(sp.Lambda2-want) > sp.Bound2 {
				return advWrong("λ_2 %v ± %v, true %v", sp.Lambda2, sp.Bound2, want)
			}
		}
		return err
	})
	// A panicking protocol on a matching of 2^15+ edges, then reuse.
	add("dimex/panic-protocol-reuse", func() error {
		g, _ := tokendist.Path(1<<17 + 1)
		ec, _ := tokendist.BipartiteColoring(g)
		boom := true
		p := tokendist.ProtocolFunc(func(t int64, u, v int, lu, lv int64) int64 {
			if boom && u == 1<<16 {
				panic("protocol panic")
			}
			return (lu - lv) / 2
		})
		d, err := tokendist.NewDimensionExchange(g, ec, p)
		if err != nil {
			return err
		}
		loads, _ := tokendist.RandomRange(g.Order(), 0, 100, 3)
		if err := advExpectPanic("protocol panic", func() error {
			_, err := tokendist.Run(ctx, g, loads, d, &tokendist.RunOptions{MaxSteps: 4})
			return err
		}); err != nil {
			return err
		}
		boom = false
		got, err := tokendist.Run(ctx, g, loads, d, &tokendist.RunOptions{MaxSteps: 4})
		if err != nil {
			return err
		}
		fresh, _ := tokendist.NewDimensionExchange(g, ec, p)
		want, err := tokendist.Run(ctx, g, loads, fresh, &tokendist.RunOptions{MaxSteps: 4})
		if err != nil {
			return err
		}
		for v := range want.Loads {
			if got.Loads[v] != want.Loads[v] {
				return advWrong("reused balancer: load %d at node %d, fresh %d", got.Loads[v], v, want.Loads[v])
			}
		}
		return nil
	})
	add("dimex/SpanningTree(nil build)", func() error { _, err := tokendist.NewSpanningTree(g8, 0, nil); return err })
	add("dimex/SpanningTree(unprefixed)", func() error {
		_, err := tokendist.NewSpanningTree(g8, 0, func(*tokendist.Graph) (tokendist.Balancer, error) { return nil, errors.New("user build") })
		return err
	})
	add("dimex/SpanningTree(nil balancer)", func() error {
		_, err := tokendist.NewSpanningTree(g8, 0, func(*tokendist.Graph) (tokendist.Balancer, error) { return nil, nil })
		return err
	})
	for _, root := range []int{-2, -1, 8, math.MaxInt} {
		add(fmt.Sprintf("dimex/SpanningTree(root=%d)", root), func() error {
			_, err := tokendist.NewSpanningTree(g8, root, func(t *tokendist.Graph) (tokendist.Balancer, error) {
				ec, _ := tokendist.BipartiteColoring(t)
				return tokendist.NewThreshold2(t, ec)
			})
			return err
		})
	}

	// Multi-balance and cubes.
	add("cube/Multi(nil groups)", func() error { _, err := tokendist.NewMultiBalance(cube, nil, nil); return err })
	add("cube/Multi(short group)", func() error { _, err := tokendist.NewMultiBalance(cube, []tokendist.Loads{{1}}, nil); return err })
	add("cube/Multi(overflow)", func() error {
		a, b := make(tokendist.Loads, 16), make(tokendist.Loads, 16)
		a[0], b[0] = math.MaxInt64, math.MaxInt64
		_, err := tokendist.NewMultiBalance(cube, []tokendist.Loads{a, b}, nil)
		return err
	})
	add("cube/MultiDiscrepancies(ragged)", func() error { _, err := tokendist.MultiDiscrepancies([]tokendist.Loads{{1, 2}, {1}}); return err })
	add("cube/MultiLowerBound(ragged)", func() error {
		_, err := tokendist.MultiBalanceLowerBound([]tokendist.Loads{{1, 2}, {1}}, 0)
		return err
	})
	add("cube/DimensionDiscrepancies(3)", func() error { _, err := tokendist.DimensionDiscrepancies(tokendist.Loads{1, 2, 3}); return err })
	add("cube/DimensionDiscrepancies(big)", func() error {
		_, err := tokendist.DimensionDiscrepancies(tokendist.Loads{math.MaxInt64, 0, math.MaxInt64, 0})
		return err
	})
	add("cube/Fringe(bad set)", func() error { _, err := tokendist.Fringe(cube, []int{-1, 99}); return err })
	add("cube/MinFringe(huge)", func() error { _, _, err := tokendist.MinFringe(cube, math.MaxInt); return err })

	// Perfect tree.
	add("perfect/OptimalPerfectMoves(nil)", func() error { _, err := tokendist.OptimalPerfectMoves(nil, nil); return err })
	add("perfect/NewPerfectTree(nil delays typed)", func() error {
		_, err := tokendist.NewPerfectTree(g8, &tokendist.PerfectTreeOptions{Delays: advBadDelays{}})
		if err != nil {
			return err
		}
		_, err = runPT(ctx, g8, l8, &tokendist.PerfectTreeOptions{Delays: advBadDelays{}}, 0)
		return err
	})
	add("perfect/Run(big total)", func() error {
		_, err := runPT(ctx, g8, tokendist.Loads{math.MaxInt64, 0, 0, 0, 0, 0, 0, 0}, nil, 0)
		return err
	})
	add("perfect/RunConcurrent(big total)", func() error {
		_, err := runPTGoroutines(ctx, g8, tokendist.Loads{math.MaxInt64, 0, 0, 0, 0, 0, 0, 0}, nil, 0)
		return err
	})

	// Decoders and I/O.
	add("io/Uint128.UnmarshalText(100KB)", func() error {
		return advShortErr(func(b []byte) error { var u tokendist.Uint128; return u.UnmarshalText(b) })
	})
	add("io/Status.UnmarshalText(100KB)", func() error {
		return advShortErr(func(b []byte) error { var s tokendist.Status; return s.UnmarshalText(b) })
	})
	add("io/Uint128.UnmarshalText(2^128)", func() error {
		var u tokendist.Uint128
		return u.UnmarshalText([]byte("340282366920938463463374607431768211456"))
	})
	add("io/Uint128.UnmarshalText(-1)", func() error { var u tokendist.Uint128; return u.UnmarshalText([]byte("-1")) })
	add("io/Result JSON (bad)", func() error {
		var r tokendist.Result
		if err := json.Unmarshal([]byte(`{"status":"Nope","loads":[1]}`), &r); err != nil {
			if !strings.Contains(err.Error(), "tokendist: ") {
				return advWrong("JSON error lacks the library's text: %v", err)
			}
		}
		return nil
	})
	add("io/WriteCSV(failing writer)", func() error {
		res, _ := tokendist.Run(ctx, g8, l8, okB, &tokendist.RunOptions{MaxSteps: 3, SampleEvery: 1})
		return res.Trace.WriteCSV(advFailWriter{})
	})
	add("io/WriteJSON(failing writer)", func() error {
		res, _ := tokendist.Run(ctx, g8, l8, okB, &tokendist.RunOptions{MaxSteps: 3, SampleEvery: 1})
		return res.Trace.WriteJSON(advFailWriter{})
	})
	add("io/FromGonum(nil)", func() error { _, _, err := tokendist.FromGonum(nil); return err })
	cs = append(cs, advSurfaceCases()...)
	return cs
}

// advShortErr feeds 100 KB of garbage to a decoder and checks the error text is short.
func advShortErr(decode func([]byte) error) error {
	b := []byte(strings.Repeat("x", 100<<10))
	err := decode(b)
	if err == nil {
		return advWrong("accepted 100 KB of garbage")
	}
	if len(err.Error()) > 500 {
		return advWrong("error text of %d bytes echoes the input", len(err.Error()))
	}
	return err
}

type advFailWriter struct{}

func (advFailWriter) Write([]byte) (int, error) { return 0, errors.New("user writer failed") }

// advBadDelays returns negative and huge delays.
type advBadDelays struct{}

func (advBadDelays) Reset(n int, seed uint64) {}
func (advBadDelays) Delay(now int64, from, to int, seq int64) int64 {
	if seq%2 == 0 {
		return -1
	}
	return math.MaxInt64
}
