// Command threshold reproduces the dimension-exchange results of Houle, Symvonis and
// Wood on larger sweeps than the tests: Theorem 5 (THRESHOLD-2 ends within the diameter,
// tight for distance loads), THRESHOLD-1 on trees (stable, ≤ ⌊n/2⌋, ≤ 1 on paths,
// ⌊n/2⌋ on stars), Theorem 18 (DISCREPANCY-1 within 2(Δ0 − 1)·χ·n steps) and the
// erratum on its local termination rule. It prints tables, writes every trace it plots
// as CSV and JSON, and SVG plots, into -out.
//
//	go run ./examples/threshold                 # a few seconds on two cores
//	go run ./examples/threshold -quick -out /tmp/t
//	go run ./examples/threshold -n 400 -seeds 40 -seed 3
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/tokendist/tokendist"
	"github.com/tokendist/tokendist/plot"
)

type config struct {
	n     int    // size of the largest random networks
	seeds int    // runs per family
	seed  uint64 // base seed
	out   string
	quick bool
}

func main() {
	var c config
	flag.IntVar(&c.n, "n", 400, "nodes of the largest random networks")
	flag.IntVar(&c.seeds, "seeds", 40, "runs per family")
	flag.Uint64Var(&c.seed, "seed", 1, "base seed")
	flag.StringVar(&c.out, "out", filepath.Join("out", "threshold"), "output folder")
	flag.BoolVar(&c.quick, "quick", false, "tiny sizes (a few seconds)")
	flag.Parse()
	if c.quick {
		c.n, c.seeds = 24, 3
	}
	if err := os.MkdirAll(c.out, 0o755); err != nil {
		fail(err)
	}
	start := time.Now()
	failed := false
	for _, part := range []func(config) (bool, error){theorem5, threshold1Trees, theorem18, terminationErratum} {
		ok, err := part(c)
		if err != nil {
			fail(err)
		}
		failed = failed || !ok
	}
	progress("")
	fmt.Printf("\nDone in %.1fs; output in %s/\n", time.Since(start).Seconds(), c.out)
	if failed {
		fmt.Println("Some bound did not hold: see the tables above.")
		os.Exit(1)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "threshold:", err)
	os.Exit(1)
}

// progress overwrites one status line on a terminal.
func progress(format string, args ...any) {
	if fi, err := os.Stderr.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
		fmt.Fprintf(os.Stderr, "\r\033[K"+format, args...)
	}
}

func table(title string, header []string, rows [][]string) {
	fmt.Printf("\n== %s\n", title)
	w := tabwriter.NewWriter(os.Stdout, 2, 0, 2, ' ', 0)
	fmt.Fprintln(w, "  "+strings.Join(header, "\t"))
	for _, r := range rows {
		fmt.Fprintln(w, "  "+strings.Join(r, "\t"))
	}
	w.Flush()
}

func yes(ok bool) string {
	if ok {
		return "yes"
	}
	return "NO"
}

// family is a named generator of test networks.
type family struct {
	name string
	make func(i int) (*tokendist.Graph, error)
}

func families(c config) []family {
	n := c.n
	side := 2
	for (side+1)*(side+1) <= n {
		side++
	}
	dim := 1
	for 1<<(dim+1) <= n {
		dim++
	}
	return []family{
		{"random tree", func(i int) (*tokendist.Graph, error) {
			return tokendist.RandomTree(n/2+i*n/(2*c.seeds), c.seed+uint64(i))
		}},
		{"random 3-regular", func(i int) (*tokendist.Graph, error) {
			return tokendist.RandomRegular(2*((n/2+i*n/(2*c.seeds))/2), 3, c.seed+uint64(i))
		}},
		{"ring", func(i int) (*tokendist.Graph, error) { return tokendist.Ring(n/4 + i) }},
		{"torus", func(i int) (*tokendist.Graph, error) { return tokendist.Torus(side-i%3, side) }},
		{"hypercube", func(i int) (*tokendist.Graph, error) { return tokendist.Hypercube(dim - i%3) }},
		{"binary tree", func(i int) (*tokendist.Graph, error) {
			return tokendist.KaryTree(tokendist.KaryShape{Height: dim - 1 - i%3, Arity: 2})
		}},
	}
}

// theorem5 runs THRESHOLD-2 from random loads and from the distance loads of a
// peripheral node.
func theorem5(c config) (bool, error) {
	var rows [][]string
	all := true
	var plotted []plot.Series
	for _, f := range families(c) {
		worstRatio, tight := 0.0, true
		for i := 0; i < c.seeds; i++ {
			progress("Theorem 5: %s %d/%d", f.name, i+1, c.seeds)
			g, err := f.make(i)
			if err != nil {
				return false, err
			}
			diam, err := g.Diameter()
			if err != nil {
				return false, err
			}
			loads, err := tokendist.RandomRange(g.Order(), 0, 1000, c.seed+uint64(i))
			if err != nil {
				return false, err
			}
			b, err := tokendist.NewThreshold2(g, nil)
			if err != nil {
				return false, err
			}
			r, err := tokendist.Run(context.Background(), g, loads, b, &tokendist.RunOptions{SampleEvery: int64(b.Colors())})
			if err != nil {
				return false, err
			}
			all = all && r.Status == tokendist.StatusStable && r.Discrepancy() <= int64(diam)
			worstRatio = max(worstRatio, float64(r.Discrepancy())/float64(max(diam, 1)))
			if i == 0 {
				plotted = append(plotted, plot.Series{Name: f.name, Trace: r.Trace})
			}
			p, err := tokendist.Peripheral(g)
			if err != nil {
				return false, err
			}
			dl, err := tokendist.DistanceLoads(g, p)
			if err != nil {
				return false, err
			}
			r, err = tokendist.Run(context.Background(), g, dl, b, nil)
			if err != nil {
				return false, err
			}
			tight = tight && r.Moved == 0 && r.Discrepancy() == int64(diam)
		}
		all = all && tight
		rows = append(rows, []string{f.name, fmt.Sprint(c.seeds), fmt.Sprintf("%.2f", worstRatio), yes(worstRatio <= 1), yes(tight)})
	}
	table("Theorem 5: THRESHOLD-2 ends with discrepancy ≤ diameter",
		[]string{"family", "runs", "max final/diameter", "bound held", "distance loads stable at the diameter"}, rows)
	return all, savePlot(c, "theorem5-threshold2", "THRESHOLD-2 from uniform 0..1000 loads", plotted)
}

// threshold1Trees runs THRESHOLD-1 on random trees, paths and stars.
func threshold1Trees(c config) (bool, error) {
	var rows [][]string
	all := true
	for _, kind := range []string{"random tree", "path", "star"} {
		worst, stable, runs := 0.0, true, 0
		bound := "⌊n/2⌋ (Lemma 13)"
		for i := 0; i < c.seeds; i++ {
			progress("THRESHOLD-1: %s %d/%d", kind, i+1, c.seeds)
			n := c.n/4 + i*c.n/(2*c.seeds) + 2
			var g *tokendist.Graph
			var err error
			switch kind {
			case "random tree":
				g, err = tokendist.RandomTree(n, c.seed+uint64(i))
			case "path":
				g, err = tokendist.Path(n)
				bound = "1 (§4.5)"
			case "star":
				g, err = tokendist.Star(n)
			}
			if err != nil {
				return false, err
			}
			loads, err := tokendist.RandomRange(n, 0, int64(3*n), c.seed+uint64(i))
			if err != nil {
				return false, err
			}
			b, err := tokendist.NewThreshold1(g, nil)
			if err != nil {
				return false, err
			}
			r, err := tokendist.Run(context.Background(), g, loads, b, nil)
			if err != nil {
				return false, err
			}
			runs++
			stable = stable && r.Status == tokendist.StatusStable
			limit := float64(n / 2)
			if kind == "path" {
				limit = 1
			}
			worst = max(worst, float64(r.Discrepancy())/limit)
		}
		ok := stable && worst <= 1
		all = all && ok
		rows = append(rows, []string{kind, fmt.Sprint(runs), bound, fmt.Sprintf("%.2f", worst), yes(stable), yes(ok)})
	}
	table("THRESHOLD-1 on trees: stable (Lemma 8) within the bound (Theorem 16's MSD bound: see msd.go)",
		[]string{"tree", "runs", "bound", "max final/bound", "all stable", "held"}, rows)
	return all, nil
}

// theorem18 runs DISCREPANCY-1 on random trees and compares the steps to discrepancy ≤ 1
// with 2(Δ0 − 1)·χ·n.
func theorem18(c config) (bool, error) {
	var rows [][]string
	all := true
	var ratio plot.Line
	ratio.Name = "steps / 2(Δ0−1)χn"
	var example []plot.Series
	for i := 0; i < c.seeds; i++ {
		progress("Theorem 18: %d/%d", i+1, c.seeds)
		n := c.n/4 + i*c.n/(2*c.seeds) + 2
		g, err := tokendist.RandomTree(n, c.seed+uint64(i))
		if err != nil {
			return false, err
		}
		loads, err := tokendist.RandomRange(n, 0, int64(2*n), c.seed+uint64(i))
		if err != nil {
			return false, err
		}
		b, err := tokendist.NewDiscrepancy1(g, nil, nil)
		if err != nil {
			return false, err
		}
		r, err := tokendist.Run(context.Background(), g, loads, b, &tokendist.RunOptions{UseTarget: true, TargetDiscrepancy: 1, SampleEvery: int64(b.Colors())})
		if err != nil {
			return false, err
		}
		d0 := loads.Discrepancy()
		bound := max(1, 2*(d0-1)*int64(b.Colors())*int64(n))
		ok := r.Status == tokendist.StatusTarget && r.Steps <= bound
		all = all && ok
		ratio.X = append(ratio.X, float64(n))
		ratio.Y = append(ratio.Y, float64(r.Steps)/float64(bound))
		if i == 0 {
			example = append(example, plot.Series{Name: "DISCREPANCY-1", Trace: r.Trace})
			for _, mk := range []func(*tokendist.Graph, *tokendist.EdgeColoring) (*tokendist.DimensionExchange, error){tokendist.NewThreshold1, tokendist.NewThreshold2} {
				t, err := mk(g, b.Coloring())
				if err != nil {
					return false, err
				}
				rt, err := tokendist.Run(context.Background(), g, loads, t, &tokendist.RunOptions{SampleEvery: int64(b.Colors())})
				if err != nil {
					return false, err
				}
				example = append(example, plot.Series{Name: t.String(), Trace: rt.Trace})
			}
		}
		if i < 6 || i == c.seeds-1 {
			rows = append(rows, []string{fmt.Sprint(n), fmt.Sprint(g.MaxDegree()), fmt.Sprint(d0), fmt.Sprint(r.Steps), fmt.Sprint(bound), yes(ok)})
		}
	}
	table("Theorem 18: DISCREPANCY-1 reaches discrepancy ≤ 1 within 2(Δ0 − 1)·χ·n steps (random trees)",
		[]string{"n", "Δ = χ", "Δ0", "steps", "bound", "held"}, rows)
	svg, err := plot.Lines([]plot.Line{ratio}, &plot.Options{
		Title: "DISCREPANCY-1: steps to discrepancy ≤ 1 over Theorem 18's bound", XLabel: "n", YLabel: "ratio", Points: true})
	if err == nil {
		err = os.WriteFile(filepath.Join(c.out, "theorem18-ratio.svg"), svg, 0o644)
	}
	if err != nil {
		return false, err
	}
	return all, savePlot(c, "random-tree-protocols", "THRESHOLD-1, THRESHOLD-2 and DISCREPANCY-1 on a random tree", example)
}

// terminationErratum counts, on random trees, how often the paper's per-node termination
// rule fires while the discrepancy is still ≥ 2, and how often the corrected (all nodes
// in the same cycle) rule does.
func terminationErratum(c config) (bool, error) {
	perNode, global, runs, nodeRuns := 0, 0, 0, 0
	for i := 0; i < 100*c.seeds; i++ {
		progress("termination rule: %d/%d", i+1, 100*c.seeds)
		n := 3 + i%12
		g, err := tokendist.RandomTree(n, c.seed+uint64(i))
		if err != nil {
			return false, err
		}
		loads, err := tokendist.RandomRange(n, 0, 60, c.seed+uint64(i))
		if err != nil {
			return false, err
		}
		b, err := tokendist.NewDiscrepancy1(g, nil, nil)
		if err != nil {
			return false, err
		}
		cycle := int64(2 * b.Colors() * n)
		after := map[int64]int64{}
		rec := tokendist.RecorderFunc(func(s *tokendist.State, smp tokendist.Sample) error {
			after[s.Steps/cycle] = smp.Discrepancy
			return nil
		})
		r, err := tokendist.Run(context.Background(), g, loads, b, &tokendist.RunOptions{NoStability: true, SampleEvery: cycle, Recorder: rec})
		if err != nil {
			return false, err
		}
		runs++
		if r.Status != tokendist.StatusDone || r.Discrepancy() > 1 {
			global++
		}
		for _, k := range r.Report.(tokendist.Discrepancy1Report).Decisions {
			nodeRuns++
			if k > 0 && after[k] > 1 {
				perNode++
			}
		}
	}
	table("DISCREPANCY-1's termination rule (Houle et al., end of section 5; see docs/errata.md, H1)",
		[]string{"rule", "runs", "fired with discrepancy ≥ 2"},
		[][]string{
			{"per node: localMax(v) unchanged over two cycles (paper)", fmt.Sprintf("%d node-runs", nodeRuns), fmt.Sprint(perNode)},
			{"every node in the same cycle (Done)", fmt.Sprintf("%d runs", runs), fmt.Sprint(global)},
		})
	return global == 0, nil
}

// savePlot writes the discrepancy traces as SVG, CSV and JSON.
func savePlot(c config, name, title string, series []plot.Series) error {
	svg, err := plot.Traces(series, &plot.Options{Title: title})
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(c.out, name+".svg"), svg, 0o644); err != nil {
		return err
	}
	for _, s := range series {
		base := filepath.Join(c.out, name+"-"+strings.ReplaceAll(strings.ToLower(s.Name), " ", "-"))
		for ext, write := range map[string]func(*os.File) error{
			".csv":  func(f *os.File) error { return s.Trace.WriteCSV(f) },
			".json": func(f *os.File) error { return s.Trace.WriteJSON(f) },
		} {
			f, err := os.Create(base + ext)
			if err != nil {
				return err
			}
			if err := write(f); err != nil {
				f.Close()
				return err
			}
			if err := f.Close(); err != nil {
				return err
			}
		}
	}
	return nil
}
