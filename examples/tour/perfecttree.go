package main

import (
	"context"
	"fmt"
	"math"

	"github.com/tokendist/tokendist"
	"github.com/tokendist/tokendist/plot"
)

func init() {
	register(section{order: 60, title: "Perfect token distribution on anonymous asynchronous trees (Margara, Pistocchi, Vassura)", run: perfectTreeSection})
}

// perfectTreeSection runs the three-phase protocol on a random tree under three delay
// policies of the simulated runtime and on the concurrent runtime, and checks the
// theorems and the bounds: time ≤ 3·D·(T+d) under unit delays (the corrected form of
// the paper's O(T·D)), and moves ≤ optimum + 2·height·(T mod N).
func perfectTreeSection(t *tour) error {
	n := 1000
	if t.quick {
		n = 100
	}
	g, err := tokendist.RandomTree(n, t.seed)
	if err != nil {
		return err
	}
	loads, err := tokendist.RandomRange(n, 0, 20, t.seed)
	if err != nil {
		return err
	}
	diam, _ := g.Diameter()
	d := int64(g.MaxDegree())
	random, _ := tokendist.NewRandomDelays(5)
	unit, _ := tokendist.NewUnitDelays()
	serial, _ := tokendist.NewSerialDelays()
	type run struct {
		name   string
		policy tokendist.Delays
	}
	runs := []run{{"simulated, unit delays", unit}, {"simulated, random delays 1..5", random},
		{"simulated, serial (most recent last)", serial}, {"concurrent (goroutines)", nil}}
	var rows [][]string
	var lines []plot.Line
	ctx := context.Background()
	for _, rn := range runs {
		t.progress("perfect tree: %s", rn.name)
		b, err := tokendist.NewPerfectTree(g, &tokendist.PerfectTreeOptions{Delays: rn.policy, Goroutines: rn.policy == nil})
		if err != nil {
			return err
		}
		res, err := tokendist.Run(ctx, g, loads, b, &tokendist.RunOptions{MaxSteps: math.MaxInt64, SampleEvery: 50, Seed: t.seed})
		if err != nil {
			return err
		}
		r, steps := res.Report.(tokendist.PerfectTreeReport), res.Steps
		if rn.policy != nil {
			x, y := res.Trace.Discrepancies()
			for i, s := range res.Trace {
				x[i] = float64(s.Time)
			}
			lines = append(lines, plot.Line{Name: fmt.Sprint(rn.policy), X: x, Y: y})
		} else {
			steps = r.Time
		}
		ok := r.CheckTheorems(g) == nil
		bound := fmt.Sprintf("Thm 1-3; moves ≤ opt + 2D(T mod N) = %d", r.OptimalMoves+2*int64(diam)*r.Extra)
		ok = ok && r.TotalMoves() <= r.OptimalMoves+2*int64(diam)*r.Extra
		if rn.policy != nil && fmt.Sprint(rn.policy) == "unit" {
			limit := 3 * int64(diam) * (r.T + d)
			bound += fmt.Sprintf("; time ≤ 3D(T+d) = %d", limit)
			ok = ok && r.Time <= limit
		}
		rows = append(rows, []string{rn.name, fmt.Sprint(res.Loads.Discrepancy()), fmt.Sprint(steps), fmt.Sprint(r.Time),
			fmt.Sprint(r.TotalMoves()), fmt.Sprintf("%.2f", r.Ratio), fmt.Sprint(r.Root), bound, t.held("perfect tree "+rn.name, ok)})
	}
	fmt.Printf("  RandomTree(%d), loads 0..20 (T = %d, D = %d, Δ = %d); time of the concurrent run is logical (Lamport)\n",
		n, loads.Total(), diam, d)
	t.table([]string{"runtime", "final disc.", "steps", "model time", "moved", "moves/opt", "root", "paper's bound", "held"}, rows)
	svg, err := plot.Lines(lines, &plot.Options{Title: fmt.Sprintf("Perfect tree distribution on random-tree(n=%d)", n),
		XLabel: "time", YLabel: "discrepancy", LogY: true})
	return t.savePlot("perfecttree-discrepancy.svg", svg, err)
}
