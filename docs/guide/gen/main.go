// Command gen draws the figures of the user's guide (docs/guide/img): a plot (*.svg) and
// an animation (*-run.gif, animations.go) per paper, and the animation of a simulated run
// that docs/async.md shows (async-run.gif). Every run is seeded, so the files
// are the same on every machine:
//
//	go run ./docs/guide/gen                    # from the repository root
//	go run ./docs/guide/gen -out /tmp/img      # somewhere else
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/tokendist/tokendist"
	"github.com/tokendist/tokendist/plot"
)

func main() {
	out := flag.String("out", filepath.Join("docs", "guide", "img"), "directory for the SVG and GIF files")
	flag.Parse()
	if err := run(*out); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

// plots lists the guide's figures, plots and animations: file name and the function
// drawing it.
var plots = []struct {
	file string
	draw func() ([]byte, error)
}{
	{"houle.svg", houle},
	{"gao-rosenberg.svg", gaoRosenberg},
	{"plaxton.svg", plaxton},
	{"berenbrink.svg", berenbrink},
	{"margara.svg", margara},
	{"houle-run.gif", gifOf(houleRun)},
	{"gao-rosenberg-run.gif", gifOf(gaoRosenbergRun)},
	{"plaxton-run.gif", gifOf(plaxtonRun)},
	{"berenbrink-run.gif", gifOf(berenbrinkRun)},
	{"margara-run.gif", gifOf(margaraRun)},
	{"async-run.gif", gifOf(asyncRun)},
}

func run(out string) error {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	for _, p := range plots {
		svg, err := p.draw()
		if err != nil {
			return fmt.Errorf("%s: %w", p.file, err)
		}
		if err := os.WriteFile(filepath.Join(out, p.file), svg, 0o644); err != nil {
			return err
		}
		fmt.Println("wrote", filepath.Join(out, p.file))
	}
	return nil
}

// houle: discrepancy against steps of THRESHOLD-2, THRESHOLD-1 and DISCREPANCY-1 on a
// random 40-node tree with random loads.
func houle() ([]byte, error) {
	g, err := tokendist.RandomTree(40, 7)
	if err != nil {
		return nil, err
	}
	loads, err := tokendist.RandomRange(g.Order(), 0, 60, 7)
	if err != nil {
		return nil, err
	}
	t2, err := tokendist.NewThreshold2(g, nil)
	if err != nil {
		return nil, err
	}
	t1, err := tokendist.NewThreshold1(g, nil)
	if err != nil {
		return nil, err
	}
	d1, err := tokendist.NewDiscrepancy1(g, nil, nil)
	if err != nil {
		return nil, err
	}
	var series []plot.Series
	for _, b := range []tokendist.Balancer{t2, t1, d1} {
		opts := &tokendist.RunOptions{SampleEvery: 1, MaxSteps: 20000}
		if b == tokendist.Balancer(d1) {
			opts.NoStability = true
		}
		r, err := tokendist.Run(context.Background(), g, loads, b, opts)
		if err != nil {
			return nil, err
		}
		series = append(series, plot.Series{Name: fmt.Sprintf("%s (%v, %d)", r.Balancer, r.Status, r.Discrepancy()), Trace: r.Trace})
	}
	return plot.Traces(series, &plot.Options{Title: "Dimension exchange on RandomTree(40, seed 7), loads 0..60"})
}

// gaoRosenberg: completion time / ring lower bound against p for KS-BF and less-loaded on
// random trees (q = 0.6, depth 16), 30 instances that grew to ≥ 64 tasks.
func gaoRosenberg() ([]byte, error) {
	var seeds []uint64
	for s := uint64(1); len(seeds) < 30; s++ {
		dag, err := tokendist.RandomTreeDag(0.6, 16, s)
		if err != nil {
			return nil, err
		}
		b, err := tokendist.NewRingTree(1, dag, &tokendist.RingOptions{NoSchedule: true})
		if err != nil {
			return nil, err
		}
		res, err := tokendist.RunRing(context.Background(), b, nil)
		if err != nil {
			return nil, err
		}
		if res.Report.(tokendist.RingStats).Tasks >= 64 {
			seeds = append(seeds, s)
		}
	}
	ps := []int{2, 4, 8, 16, 32, 64}
	rows, err := tokendist.RunRingComparison(context.Background(), tokendist.RingExperiment{
		Name: "tree q=0.6 depth 16",
		Tree: func(s uint64) (tokendist.TreeDag, error) { return tokendist.RandomTreeDag(0.6, 16, s) },
		P:    ps, Seeds: seeds,
		Policies: []tokendist.RingPolicy{tokendist.RingPolicyKSBF, tokendist.RingPolicyLessLoaded},
	})
	if err != nil {
		return nil, err
	}
	lines := []plot.Line{
		{Name: "KS-BF: T / max(⌈N/p⌉, depth)"},
		{Name: "KS-BF: T / ring lower bound"},
		{Name: "less-loaded: T / ring lower bound"},
	}
	for _, r := range rows {
		x := float64(r.P)
		if r.Policy == tokendist.RingPolicyKSBF {
			lines[0].X, lines[0].Y = append(lines[0].X, x), append(lines[0].Y, r.OverLowerBound)
			lines[1].X, lines[1].Y = append(lines[1].X, x), append(lines[1].Y, r.OverRingLowerBound)
		} else {
			lines[2].X, lines[2].Y = append(lines[2].X, x), append(lines[2].Y, r.OverRingLowerBound)
		}
	}
	return plot.Lines(lines, &plot.Options{
		Title:  "Random trees (q = 0.6, depth 16), mean of 30 instances",
		XLabel: "ring size p", YLabel: "time / lower bound", LogX: true, Points: true,
	})
}

// plaxton: error against model time for dimension order and the recursion on dimension
// order's worst case, Hypercube(10), m = 256.
func plaxton() ([]byte, error) {
	g, err := tokendist.Hypercube(10)
	if err != nil {
		return nil, err
	}
	loads, err := tokendist.DimensionOrderWorstLoads(10, 256)
	if err != nil {
		return nil, err
	}
	var lines []plot.Line
	for _, alg := range []struct {
		name string
		mk   func() (*tokendist.CubeBalancer, error)
	}{
		{"dimension order", func() (*tokendist.CubeBalancer, error) { return tokendist.NewDimensionOrderBalance(g, nil) }},
		{"recursion (section 2.3)", func() (*tokendist.CubeBalancer, error) { return tokendist.NewHypercubeBalance(g, nil) }},
	} {
		b, err := alg.mk()
		if err != nil {
			return nil, err
		}
		r, err := tokendist.Run(context.Background(), g, loads, b, &tokendist.RunOptions{SampleEvery: 1})
		if err != nil {
			return nil, err
		}
		ln := plot.Line{Name: alg.name}
		for _, s := range r.Trace {
			ln.X = append(ln.X, float64(s.Time))
			ln.Y = append(ln.Y, float64(s.Discrepancy))
		}
		lines = append(lines, ln)
	}
	return plot.Lines(lines, &plot.Options{
		Title:  "Hypercube(10), DimensionOrderWorstLoads(10, 256)",
		XLabel: "model time", YLabel: "error (max − min)", Points: true,
	})
}

// berenbrink: discrepancy against rounds for randomized diffusion and RSW from a point
// mass of 10 000 tokens on Hypercube(8).
func berenbrink() ([]byte, error) {
	g, err := tokendist.Hypercube(8)
	if err != nil {
		return nil, err
	}
	start, err := tokendist.PointMass(g.Order(), 10000, 0)
	if err != nil {
		return nil, err
	}
	rd, err := tokendist.NewRandomizedDiffusion(g)
	if err != nil {
		return nil, err
	}
	rsw, err := tokendist.NewRSWDiffusion(g)
	if err != nil {
		return nil, err
	}
	var series []plot.Series
	for _, b := range []tokendist.Balancer{rd, rsw} {
		r, err := tokendist.Run(context.Background(), g, start, b, &tokendist.RunOptions{MaxSteps: 300, SampleEvery: 1, Seed: 1, NoStability: true})
		if err != nil {
			return nil, err
		}
		series = append(series, plot.Series{Name: r.Balancer, Trace: r.Trace})
	}
	lines := make([]plot.Line, len(series))
	for i, s := range series {
		x, y := s.Trace.Discrepancies()
		lines[i] = plot.Line{Name: s.Name, X: x, Y: y}
	}
	return plot.Lines(lines, &plot.Options{
		Title:  "Hypercube(8), 10 000 tokens on node 0",
		XLabel: "round", YLabel: "discrepancy", LogY: true,
	})
}

// margara: discrepancy against time of the perfect-tree protocol on random trees of 60
// nodes, unit and random delays.
func margara() ([]byte, error) {
	g, err := tokendist.RandomTree(60, 3)
	if err != nil {
		return nil, err
	}
	loads, err := tokendist.RandomRange(g.Order(), 0, 20, 3)
	if err != nil {
		return nil, err
	}
	var series []plot.Series
	for _, d := range []struct {
		name   string
		policy tokendist.Delays
	}{{"unit delays", nil}, {"random delays ≤ 4", nil}} {
		pol := d.policy
		if d.name == "unit delays" {
			pol, err = tokendist.NewUnitDelays()
			if err != nil {
				return nil, err
			}
		} else if pol == nil {
			pol, err = tokendist.NewRandomDelays(4)
			if err != nil {
				return nil, err
			}
		}
		b, err := tokendist.NewPerfectTree(g, &tokendist.PerfectTreeOptions{Delays: pol})
		if err != nil {
			return nil, err
		}
		r, err := tokendist.Run(context.Background(), g, loads, b, &tokendist.RunOptions{SampleEvery: 1, Seed: 3, NoStability: true})
		if err != nil {
			return nil, err
		}
		series = append(series, plot.Series{Name: fmt.Sprintf("%s (%v, final %d)", d.name, r.Status, r.Discrepancy()), Trace: r.Trace})
	}
	return plot.Traces(series, &plot.Options{Title: "Perfect distribution, RandomTree(60), loads 0..20"})
}
