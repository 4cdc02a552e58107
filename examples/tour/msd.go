package main

import (
	"context"
	"fmt"

	"github.com/tokendist/tokendist"
	"github.com/tokendist/tokendist/plot"
)

func init() {
	register(section{order: 20, title: "Observer tours and maximum stable discrepancy of THRESHOLD-1 (Houle, Symvonis, Wood, section 4)", run: msdSection})
}

// msdSection computes MSD(T) for a few trees, runs THRESHOLD-1 from the worst stable
// distribution of Theorem 12 (it must stay put with discrepancy MSD) and from random
// loads (it must end at most MSD ≤ Theorem 16's bound apart), and plots the runs.
func msdSection(t *tour) error {
	starN, pathN, bh, th, randN := 33, 64, 9, 6, 1000
	if t.quick {
		starN, pathN, bh, th, randN = 9, 16, 4, 3, 60
	}
	type tree struct {
		name string
		g    *tokendist.Graph
		err  error
	}
	var trees []tree
	add := func(name string, g *tokendist.Graph, err error) { trees = append(trees, tree{name, g, err}) }
	g, err := tokendist.Star(starN)
	add(fmt.Sprintf("star(n=%d)", starN), g, err)
	g, err = tokendist.Path(pathN)
	add(fmt.Sprintf("path(n=%d)", pathN), g, err)
	g, err = tokendist.KaryTree(tokendist.KaryShape{Height: bh, Arity: 2})
	add(fmt.Sprintf("kary-tree(height=%d, arity=2)", bh), g, err)
	g, err = tokendist.KaryTree(tokendist.KaryShape{Height: th, Arity: 3})
	add(fmt.Sprintf("kary-tree(height=%d, arity=3)", th), g, err)
	g, err = tokendist.RandomTree(randN, t.seed)
	add(fmt.Sprintf("random-tree(n=%d)", randN), g, err)

	var rows [][]string
	var lines []plot.Line
	for _, tr := range trees {
		if tr.err != nil {
			return tr.err
		}
		t.progress("THRESHOLD-1 on %s", tr.name)
		msd, err := tokendist.MSD(tr.g)
		if err != nil {
			return err
		}
		bound, err := tokendist.Threshold1Bound(tr.g.Order(), tr.g.MaxDegree())
		if err != nil {
			return err
		}
		ec, err := tokendist.BipartiteColoring(tr.g)
		if err != nil {
			return err
		}
		worst, err := tokendist.WorstStableLoads(ec, 0, 0)
		if err != nil {
			return err
		}
		random, err := tokendist.RandomRange(tr.g.Order(), 0, 200, t.seed)
		if err != nil {
			return err
		}
		for _, start := range []struct {
			name  string
			loads tokendist.Loads
			worst bool
		}{{"worst stable (Thm 12)", worst, true}, {"uniform 0..200", random, false}} {
			th1, err := tokendist.NewThreshold1(tr.g, ec)
			if err != nil {
				return err
			}
			res, err := tokendist.Run(context.Background(), tr.g, start.loads, th1, &tokendist.RunOptions{SampleEvery: int64(ec.Colors() * tr.g.Order())})
			if err != nil {
				return err
			}
			d := int(res.Discrepancy())
			ok := res.Status == tokendist.StatusStable && d <= msd && msd <= bound.Bound
			what := fmt.Sprintf("MSD %d ≤ Thm 16 %d", msd, bound.Bound)
			if start.worst { // Theorem 12: stable from the start, discrepancy MSD
				ok = ok && d == msd && res.Steps == int64(ec.Colors()*tr.g.Order())
				what = fmt.Sprintf("stays at MSD %d", msd)
			}
			rows = append(rows, []string{tr.name, start.name, res.Status.String(), fmt.Sprint(d), fmt.Sprint(res.Steps),
				fmt.Sprint(res.Time), fmt.Sprint(res.Moved), what, t.held(tr.name+" "+start.name, ok)})
			if !start.worst {
				x, y := res.Trace.Discrepancies()
				phase := float64(ec.Colors() * tr.g.Order())
				for i := range x {
					x[i] /= phase
				}
				lines = append(lines, plot.Line{Name: fmt.Sprintf("%s (MSD %d)", tr.name, msd), X: x, Y: y})
			}
		}
	}
	t.table([]string{"network", "start", "status", "final disc.", "steps", "time", "moved", "bound (Thm 12 / 16)", "held"}, rows)

	// Beyond the paper: its conjecture MSD(T_{h,k}) ≥ ⌊(k-1)h/2⌋ fails first at T_{6,7}.
	msd67, err := tokendist.KaryTreeMSD(tokendist.KaryShape{Height: 6, Arity: 7}, nil)
	if err != nil {
		return err
	}
	fmt.Printf("  MSD(T_{6,7}) = %d (137,257 nodes, from the closed form of SG_1): the conjectured range is {18, 19}; see examples/msdtable.\n", msd67)

	svg, err := plot.Lines(lines, &plot.Options{Title: "THRESHOLD-1 from uniform 0..200 loads", XLabel: "phases (χ·n steps)", YLabel: "discrepancy"})
	return t.savePlot("msd-threshold1.svg", svg, err)
}
