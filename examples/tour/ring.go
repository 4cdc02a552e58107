package main

import (
	"context"
	"fmt"
	"math"

	"github.com/tokendist/tokendist"
	"github.com/tokendist/tokendist/plot"
)

func init() {
	register(section{order: 30, title: "Gao & Rosenberg: KS-BF, growing trees and grids on a ring", run: ringSection})
}

// ringSection runs KS-BF (and one other policy) on complete, random and adversarial
// dags on R_8, checks Theorem 1.1's bounds and the exact time of Theorems 2.2/3.2, and
// plots speedup against p.
func ringSection(t *tour) error {
	const p = 8
	n, g, depth, h := 18, 600, 20, 20
	if t.quick {
		n, g, depth, h = 10, 40, 12, 12
	}
	ctx := context.Background()
	var res tokendist.Result
	sim := func(b *tokendist.RingScheduler, err error) (*tokendist.RingScheduler, error) {
		if err != nil {
			return nil, err
		}
		res, err = tokendist.RunRing(ctx, b, &tokendist.RunOptions{Seed: t.seed})
		return b, err
	}
	var rows [][]string
	add := func(what string, b *tokendist.RingScheduler, bound, held string) {
		st := res.Report.(tokendist.RingStats)
		rows = append(rows, []string{what, fmt.Sprint(st.Time), fmt.Sprint(res.Steps), fmt.Sprint(res.Time),
			fmt.Sprint(res.Moved), fmt.Sprintf("%.2f", st.Speedup), bound, held})
	}

	tree, _ := tokendist.CompleteTree(n)
	b, err := sim(tokendist.NewRingTree(p, tree, &tokendist.RingOptions{NoSchedule: true}))
	if err != nil {
		return err
	}
	tb, _ := tokendist.RingTreeBounds(n, p)
	st := res.Report.(tokendist.RingStats)
	add(fmt.Sprintf("KS-BF, T_%d", n), b, fmt.Sprintf("T ≤ %.0f (Thm 1.1a); T = %.0f (Thm 2.2)", tb.TimeBound, tb.Time),
		t.held("ring: Theorems 1.1(a), 2.2", float64(st.Time) <= tb.TimeBound && float64(st.Time) == tb.Time))

	grid, _ := tokendist.PyramidGrid(g)
	if b, err = sim(tokendist.NewRingGrid(p, grid, &tokendist.RingOptions{NoSchedule: true})); err != nil {
		return err
	}
	gb, _ := tokendist.RingGridBounds(g, p)
	st = res.Report.(tokendist.RingStats)
	add(fmt.Sprintf("KS-BF, G_%d", g), b, fmt.Sprintf("T ≤ %.0f (Thm 1.1b); T = %.0f (Thm 3.2)", gb.TimeBound, gb.Time),
		t.held("ring: Theorems 1.1(b), 3.2", float64(st.Time) <= gb.TimeBound && float64(st.Time) == gb.Time))

	rt, _ := tokendist.RandomTreeDag(0.75, depth, t.seed)
	for _, pol := range []tokendist.RingPolicy{tokendist.RingPolicyKSBF, tokendist.RingPolicyLessLoaded} {
		if b, err = sim(tokendist.NewRingTree(p, rt, &tokendist.RingOptions{Policy: pol, NoSchedule: true})); err != nil {
			return err
		}
		st = res.Report.(tokendist.RingStats)
		add(fmt.Sprintf("%v, random tree (q=0.75, depth %d)", pol, depth), b,
			fmt.Sprintf("none (open); T/LB = %.2f", float64(st.Time)/float64(st.LowerBound)), "-")
	}

	const w = 3 // log p
	wt, _ := tokendist.WCompleteTree(h, w)
	if b, err = sim(tokendist.NewRingTree(p, wt, &tokendist.RingOptions{NoSchedule: true})); err != nil {
		return err
	}
	busy := 0
	for _, x := range res.Report.(tokendist.RingStats).Work {
		if x > 0 {
			busy++
		}
	}
	add(fmt.Sprintf("KS-BF, %d-level 3-complete tree", h), b, fmt.Sprintf("work on log p + 1 = 4 PEs (got %d)", busy),
		t.held("ring: w-complete tree on log p + 1 PEs", busy == w+1))

	exact := 2.0 / 3
	q, _ := tokendist.NewQuadrature(math.Sqrt, 0, 1, 1e-9, 1e-7)
	if b, err = sim(tokendist.NewRingTree(p, q, &tokendist.RingOptions{NoSchedule: true})); err != nil {
		return err
	}
	val, err := q.Integral()
	if err != nil {
		return err
	}
	add("KS-BF, quadrature ∫_0^1 √x", b, fmt.Sprintf("|%.7f - 2/3| < 1e-4", val), t.held("ring: quadrature accuracy", math.Abs(val-exact) < 1e-4))

	t.table([]string{"what ran (R_8)", "completion time", "steps", "model time", "tasks moved", "speedup", "paper's bound", "held"}, rows)
	return ringPlot(t, tree, grid)
}

// ringPlot draws speedup against p for T_n and G_n under KS-BF and less-loaded.
func ringPlot(t *tour, tree tokendist.TreeDag, grid tokendist.GridDag) error {
	pmax := 64
	if t.quick {
		pmax = 8
	}
	var lines []plot.Line
	for _, pol := range []tokendist.RingPolicy{tokendist.RingPolicyKSBF, tokendist.RingPolicyLessLoaded} {
		for _, dag := range []string{"tree", "grid"} {
			line := plot.Line{Name: fmt.Sprintf("%v, %s", pol, dag)}
			for p := 1; p <= pmax; p *= 2 {
				t.progress("ring: %v on %s, p = %d", pol, dag, p)
				opts := &tokendist.RingOptions{Policy: pol, NoSchedule: true}
				var b *tokendist.RingScheduler
				var err error
				if dag == "tree" {
					b, err = tokendist.NewRingTree(p, tree, opts)
				} else {
					b, err = tokendist.NewRingGrid(p, grid, opts)
				}
				if err != nil {
					return err
				}
				rr, err := tokendist.RunRing(context.Background(), b, &tokendist.RunOptions{Seed: t.seed})
				if err != nil {
					return err
				}
				line.X = append(line.X, float64(p))
				line.Y = append(line.Y, rr.Report.(tokendist.RingStats).Speedup)
			}
			lines = append(lines, line)
		}
	}
	svg, err := plot.Lines(lines, &plot.Options{
		Title: "Speedup on R_p: complete tree and pyramidal grid", XLabel: "p", YLabel: "speedup", LogX: true, Points: true,
	})
	return t.savePlot("ring-speedup.svg", svg, err)
}
