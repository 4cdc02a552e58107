package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/tokendist/tokendist"
	"github.com/tokendist/tokendist/plot"
)

func init() {
	register(section{order: 10, title: "Dimension exchange on trees: THRESHOLD-1, THRESHOLD-2, DISCREPANCY-1 (Houle, Symvonis, Wood)", run: dimexSection})
}

// dimexSection runs the three protocols of Houle et al. on a star, a path and a complete
// binary tree, each from the workload that is hardest for one of them, and plots the
// discrepancy over time.
func dimexSection(t *tour) error {
	starN, pathN, height := 33, 64, 9
	if t.quick {
		starN, pathN, height = 9, 16, 4
	}
	star, err := tokendist.Star(starN)
	if err != nil {
		return err
	}
	path, err := tokendist.Path(pathN)
	if err != nil {
		return err
	}
	tree, err := tokendist.KaryTree(tokendist.KaryShape{Height: height, Arity: 2})
	if err != nil {
		return err
	}
	type workload struct {
		name, loadsName string
		g               *tokendist.Graph
		loads           func(ec *tokendist.EdgeColoring) (tokendist.Loads, error)
	}
	work := []workload{
		{fmt.Sprintf("star(n=%d)", starN), "worst stable + 100 (Thm 12)", star, func(ec *tokendist.EdgeColoring) (tokendist.Loads, error) {
			return worstStablePlus(ec, 100)
		}},
		{fmt.Sprintf("path(n=%d)", pathN), "distance loads", path, func(*tokendist.EdgeColoring) (tokendist.Loads, error) {
			return tokendist.DistanceLoads(path, 0)
		}},
		{fmt.Sprintf("kary-tree(height=%d, arity=2)", height), "uniform 0..200", tree, func(*tokendist.EdgeColoring) (tokendist.Loads, error) {
			return tokendist.RandomRange(tree.Order(), 0, 200, t.seed)
		}},
	}
	var rows [][]string
	for _, w := range work {
		t.progress("dimension exchange on %s", w.name)
		ec, err := tokendist.BipartiteColoring(w.g)
		if err != nil {
			return err
		}
		loads, err := w.loads(ec)
		if err != nil {
			return err
		}
		diam, err := w.g.Diameter()
		if err != nil {
			return err
		}
		n := int64(w.g.Order())
		chi := int64(ec.Colors())
		d0 := loads.Discrepancy()
		var series []plot.Series
		for _, proto := range []string{"THRESHOLD-2", "THRESHOLD-1", "DISCREPANCY-1"} {
			var b tokendist.Balancer
			var bound string
			var limit int64
			switch proto {
			case "THRESHOLD-2":
				b, err = tokendist.NewThreshold2(w.g, ec)
				bound, limit = fmt.Sprintf("≤ diameter %d (Thm 5)", diam), int64(diam)
			case "THRESHOLD-1":
				b, err = tokendist.NewThreshold1(w.g, ec)
				bound, limit = fmt.Sprintf("≤ ⌊n/2⌋ = %d (Lem 13)", n/2), n/2
				if w.g.MaxDegree() <= 2 {
					bound, limit = "≤ 1 on a path (§4.5)", 1
				}
			case "DISCREPANCY-1":
				b, err = tokendist.NewDiscrepancy1(w.g, ec, nil)
				bound, limit = fmt.Sprintf("≤ 1 within 2(Δ0−1)χn = %d steps (Thm 18)", max(0, 2*(d0-1)*chi*n)), 1
			}
			if err != nil {
				return err
			}
			opts := &tokendist.RunOptions{SampleEvery: chi, Seed: t.seed}
			if proto == "DISCREPANCY-1" {
				opts.NoStability = true // stop by the termination rule
			}
			r, err := tokendist.Run(context.Background(), w.g, loads, b, opts)
			if err != nil {
				return err
			}
			ok := r.Discrepancy() <= limit
			if proto == "DISCREPANCY-1" {
				// Steps until discrepancy ≤ 1, by a second run that stops there.
				b2, _ := tokendist.NewDiscrepancy1(w.g, ec, nil)
				r2, err := tokendist.Run(context.Background(), w.g, loads, b2, &tokendist.RunOptions{UseTarget: true, TargetDiscrepancy: 1})
				if err != nil {
					return err
				}
				ok = ok && r2.Status == tokendist.StatusTarget && r2.Steps <= max(0, 2*(d0-1)*chi*n)
				bound += fmt.Sprintf(": %d", r2.Steps)
			}
			rows = append(rows, []string{w.name, w.loadsName, proto, fmt.Sprint(d0), fmt.Sprint(r.Discrepancy()), r.Status.String(),
				fmt.Sprint(r.Steps), fmt.Sprint(r.Time), fmt.Sprint(r.Moved), bound, t.held(proto+" on "+w.name, ok)})
			series = append(series, plot.Series{Name: proto, Trace: r.Trace})
		}
		svg, err := plot.Lines(extendedLines(series), &plot.Options{
			Title: fmt.Sprintf("%s, %s (χ = %d)", w.name, w.loadsName, chi), XLabel: "step", YLabel: "discrepancy"})
		if err := t.savePlot(fmt.Sprintf("dimex-%s.svg", fileName(w.name)), svg, err); err != nil {
			return err
		}
	}
	t.table([]string{"network", "loads", "protocol", "initial", "final", "status", "steps", "time", "moved", "paper's bound", "held"}, rows)
	return nil
}

// worstStablePlus returns the worst THRESHOLD-1-stable distribution of Theorem 12's
// proof (discrepancy MSD; ⌊n/2⌋ on a star, section 4.5), raised by base tokens per node,
// which keeps it stable: Theorem 11's condition is on load differences.
func worstStablePlus(ec *tokendist.EdgeColoring, base int64) (tokendist.Loads, error) {
	loads, err := tokendist.WorstStableLoads(ec, 0, 0)
	for v := range loads {
		loads[v] += base
	}
	return loads, err
}

// extendedLines turns traces into plot lines, drawing a run that stopped early (a
// stable distribution) flat up to the longest run's last step.
func extendedLines(series []plot.Series) []plot.Line {
	var end float64
	for _, s := range series {
		end = max(end, float64(s.Trace[len(s.Trace)-1].Step))
	}
	lines := make([]plot.Line, len(series))
	for i, s := range series {
		x, y := s.Trace.Discrepancies()
		if last := len(x) - 1; x[last] < end {
			x, y = append(x, end), append(y, y[last])
		}
		lines[i] = plot.Line{Name: s.Name, X: x, Y: y}
	}
	return lines
}

// fileName keeps the letters and digits of a network name, the other runs as one '-':
// "kary-tree(height=4, arity=2)" gives "kary-tree-height-4-arity-2".
func fileName(s string) string {
	out := make([]rune, 0, len(s))
	for _, r := range s {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			out = append(out, r)
		} else if len(out) > 0 && out[len(out)-1] != '-' {
			out = append(out, '-')
		}
	}
	return strings.TrimSuffix(string(out), "-")
}
