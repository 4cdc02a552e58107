package main

import (
	"context"
	"fmt"
	"math"

	"github.com/tokendist/tokendist"
	"github.com/tokendist/tokendist/plot"
)

func init() {
	register(section{order: 50, title: "Randomized diffusion for indivisible loads (Berenbrink, Cooper, Friedetzky, Friedrich, Sauerwald)", run: diffusionSection})
}

// diffusionSection runs the five schemes of the paper's Table 1 for τ(G, K) rounds from
// the RSW-stable gradient start on a hypercube, a torus and a random 4-regular graph,
// with the explicit bounds: Theorem 1.1(1) (w.h.p.) for the randomized scheme and
// 2Ψ_1 + 1 (eq. 2.7 with rounding errors below 1) for RSW and FGS.
func diffusionSection(t *tour) error {
	type net struct {
		name       string
		g          *tokendist.Graph
		transitive bool
	}
	h, tor, rr := 8, 16, 512
	if t.quick {
		h, tor, rr = 6, 8, 128
	}
	hc, err := tokendist.Hypercube(h)
	if err != nil {
		return err
	}
	to, err := tokendist.Torus(tor, tor)
	if err != nil {
		return err
	}
	rg, err := tokendist.RandomRegular(rr, 4, t.seed)
	if err != nil {
		return err
	}
	nets := []net{
		{fmt.Sprintf("Hypercube(%d)", h), hc, true},
		{fmt.Sprintf("torus(sides=%d×%d)", tor, tor), to, true},
		{fmt.Sprintf("RandomRegular(%d,4)", rr), rg, false},
	}
	type scheme struct {
		name string
		new  func(tokendist.Network) (tokendist.Balancer, error)
	}
	schemes := []scheme{
		{"RandomizedDiffusion", func(n tokendist.Network) (tokendist.Balancer, error) { return tokendist.NewRandomizedDiffusion(n) }},
		{"RSW", func(n tokendist.Network) (tokendist.Balancer, error) { return tokendist.NewRSWDiffusion(n) }},
		{"FGSDeterministic", func(n tokendist.Network) (tokendist.Balancer, error) { return tokendist.NewFGSDeterministic(n) }},
		{"FGSRandomized", func(n tokendist.Network) (tokendist.Balancer, error) { return tokendist.NewFGSRandomized(n) }},
		{"RandomMatching (FS)", func(n tokendist.Network) (tokendist.Balancer, error) { return tokendist.NewRandomMatching(n) }},
	}
	var rows [][]string
	var series []plot.Series
	for _, nw := range nets {
		g := nw.g
		v0, err := tokendist.Peripheral(g)
		if err != nil {
			return err
		}
		start, err := tokendist.DistanceLoads(g, v0)
		if err != nil {
			return err
		}
		d := g.MaxDegree()
		for i := range start {
			start[i] *= int64(d)
		}
		sp, err := tokendist.LambdaMax(g, nil)
		if err != nil {
			return err
		}
		tau, err := tokendist.BalancingTime(sp.LambdaMax, g.Order(), start.Discrepancy())
		if err != nil {
			return err
		}
		var dopts *tokendist.DivergenceOptions
		if nw.transitive {
			dopts = &tokendist.DivergenceOptions{Nodes: []int{0}}
		}
		t.progress("%s: local divergence", nw.name)
		dv, err := tokendist.LocalDivergence(g, 1e-6, dopts)
		if err != nil {
			return err
		}
		for _, sc := range schemes {
			t.progress("%s: %s for τ = %d rounds", nw.name, sc.name, tau)
			b, err := sc.new(g)
			if err != nil {
				return err
			}
			r, err := tokendist.Run(context.Background(), g, start, b, &tokendist.RunOptions{MaxSteps: tau, Seed: t.seed, SampleEvery: max(1, tau/200)})
			if err != nil {
				return err
			}
			disc := r.Discrepancy()
			bound, held := "-", "-"
			switch sc.name {
			case "RandomizedDiffusion":
				// Theorem 1.1(1), the proof's constants: ≤ 2Υ_2·√(32 d ln n) + 2 w.h.p.
				b := 2*dv.Upsilon2*math.Sqrt(32*float64(d)*math.Log(float64(g.Order()))) + 2
				bound, held = fmt.Sprintf("Thm 1.1(1): %.0f", b), t.held(nw.name+" "+sc.name, float64(disc) <= b)
			case "RandomMatching (FS)":
			default:
				b := 2*dv.Psi1 + 1
				bound, held = fmt.Sprintf("2Ψ₁+1: %.0f", b), t.held(nw.name+" "+sc.name, float64(disc) <= b)
			}
			neg := ""
			if r.NegativeSteps > 0 {
				neg = fmt.Sprintf(" (negative in %d rounds, lowest %d)", r.NegativeSteps, r.MostNegative)
			}
			rows = append(rows, []string{nw.name, sc.name, fmt.Sprint(start.Discrepancy()), fmt.Sprint(disc) + neg,
				fmt.Sprint(r.Steps), fmt.Sprint(r.Time), fmt.Sprint(r.Moved), bound, held})
			if g == to {
				series = append(series, plot.Series{Name: sc.name, Trace: r.Trace})
			}
		}
	}
	t.progressDone()
	t.table([]string{"network", "scheme", "start K", "final discrepancy", "steps (τ)", "time", "moved", "bound", "held"}, rows)
	fmt.Println("  Start: d·dist(v, v0), stable under RSW (its lower bound d·diam). Moved counts tokens sent as each scheme")
	fmt.Println("  specifies: RandomizedDiffusion sends ⌊X/(d+1)⌋ both ways along every link; the others send net flows.")
	svg, err := plot.Traces(series, &plot.Options{Title: fmt.Sprintf("Table 1 schemes on torus(sides=%d×%d), gradient start", tor, tor)})
	return t.savePlot("diffusion_torus.svg", svg, err)
}
