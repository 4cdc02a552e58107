// Command dynamic is the steady-state study of issue 16: how each balancer of the library
// behaves when work keeps arriving and finishing, and when links fail.
//
//   - Part A: Poisson arrivals at λ per node and service at μ per node, at load factors
//     ρ = λ/μ of 0.5, 0.9 and 0.99, on a tree, a ring, a torus, a hypercube and a random
//     regular graph: the time-average and 95th-percentile discrepancy after a warm-up.
//   - Part B: a hot spot (all arrivals at node 0) with service μ per node: the first
//     rate of a geometric sweep at which the load grows without bound (SteadyStats's
//     instability test), against the cut capacity μ + deg/χ of the dimension-exchange
//     schemes (one token per active link per step).
//   - Part C: the heaviest-node adversary at a total rate λ·n with μ = 1 per node, λ of
//     0.5 and 0.9 (the injection model of Anagnostopoulos, Kirsch and Upfal restricted to
//     its most concentrated form): stable or not.
//   - Part D: part A at ρ = 0.9 with random link churn.
//
// It prints tables and writes CSV files and SVG plots into -out.
//
//	go run ./examples/dynamic -quick -out /tmp/dyn   # under 30 s
//	go run ./examples/dynamic -out dynamic-out       # larger networks, longer windows
package main

import (
	"context"
	"encoding/csv"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/tokendist/tokendist"
	"github.com/tokendist/tokendist/plot"
)

type config struct {
	out           string
	quick         bool
	seed          uint64
	warm, measure int64
	hotWarm       int64
	hotMeasure    int64
	scale         int // log2 of the network sizes
}

type network struct {
	name string
	g    *tokendist.Graph
}

type algo struct {
	name  string
	build func(g *tokendist.Graph) (tokendist.Balancer, error)
	// capacity returns the tokens per step that can leave node v (one token per active
	// link per step), or 0 when the scheme has no such limit.
	capacity func(b tokendist.Balancer, v int) float64
}

func main() {
	var c config
	flag.StringVar(&c.out, "out", "dynamic-out", "output folder")
	flag.BoolVar(&c.quick, "quick", false, "small networks and short windows (under 30 s)")
	flag.Uint64Var(&c.seed, "seed", 1, "seed of every run")
	flag.Parse()
	c.scale, c.warm, c.measure, c.hotWarm, c.hotMeasure = 6, 5000, 20000, 4000, 12000
	if c.quick {
		c.scale, c.warm, c.measure, c.hotWarm, c.hotMeasure = 5, 800, 2400, 800, 2400
	}
	if err := os.MkdirAll(c.out, 0o755); err != nil {
		fail(err)
	}
	start := time.Now()
	nets, err := networks(c.scale, c.seed)
	if err != nil {
		fail(err)
	}
	algos := algorithms()
	refusals(nets)
	if err := partA(c, nets, algos); err != nil {
		fail(err)
	}
	if err := partB(c, nets, algos); err != nil {
		fail(err)
	}
	if err := partC(c, nets, algos); err != nil {
		fail(err)
	}
	if err := partD(c, nets, algos); err != nil {
		fail(err)
	}
	fmt.Printf("\nDone in %.1fs; output in %s/\n", time.Since(start).Seconds(), c.out)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "dynamic:", err)
	os.Exit(1)
}

func networks(scale int, seed uint64) ([]network, error) {
	n := 1 << scale
	tree, err := tokendist.KaryTree(tokendist.KaryShape{Height: scale - 1, Arity: 2})
	if err != nil {
		return nil, err
	}
	ring, err := tokendist.Ring(n)
	if err != nil {
		return nil, err
	}
	side := int(math.Round(math.Sqrt(float64(n))))
	torus, err := tokendist.Torus(side, side)
	if err != nil {
		return nil, err
	}
	cube, err := tokendist.Hypercube(scale)
	if err != nil {
		return nil, err
	}
	rr, err := tokendist.RandomRegular(n, 4, seed)
	if err != nil {
		return nil, err
	}
	return []network{
		{fmt.Sprintf("tree T(%d,2)", scale-1), tree},
		{fmt.Sprintf("ring %d", n), ring},
		{fmt.Sprintf("torus %dx%d", side, side), torus},
		{fmt.Sprintf("hypercube %d", scale), cube},
		{fmt.Sprintf("RR(%d,4)", n), rr},
	}, nil
}

// dimexCapacity is μ-free cut capacity of node v under a dimension-exchange scheme:
// deg(v)/χ tokens per step.
func dimexCapacity(b tokendist.Balancer, v int) float64 {
	switch d := b.(type) {
	case *tokendist.DimensionExchange:
		return float64(d.Graph().Degree(v)) / float64(d.Colors())
	case *tokendist.SpanningTree:
		return dimexCapacity(d.Inner(), v)
	}
	return 0
}

func algorithms() []algo {
	return []algo{
		{"none", func(*tokendist.Graph) (tokendist.Balancer, error) {
			return &tokendist.Funcs{Name: "none", StepFunc: func(s *tokendist.State) error { s.Time++; return nil }}, nil
		}, nil},
		{"THRESHOLD-1", func(g *tokendist.Graph) (tokendist.Balancer, error) {
			if g.IsTree() {
				return tokendist.NewThreshold1(g, nil)
			}
			return tokendist.NewSpanningTree(g, 0, func(t *tokendist.Graph) (tokendist.Balancer, error) { return tokendist.NewThreshold1(t, nil) })
		}, dimexCapacity},
		{"THRESHOLD-2", func(g *tokendist.Graph) (tokendist.Balancer, error) { return tokendist.NewThreshold2(g, nil) }, dimexCapacity},
		{"RSW", func(g *tokendist.Graph) (tokendist.Balancer, error) { return tokendist.NewRSWDiffusion(g) }, nil},
		{"FGSDeterministic", func(g *tokendist.Graph) (tokendist.Balancer, error) { return tokendist.NewFGSDeterministic(g) }, nil},
		{"FGSRandomized", func(g *tokendist.Graph) (tokendist.Balancer, error) { return tokendist.NewFGSRandomized(g) }, nil},
		{"RandomMatching", func(g *tokendist.Graph) (tokendist.Balancer, error) { return tokendist.NewRandomMatching(g) }, nil},
		{"RandomizedDiffusion", func(g *tokendist.Graph) (tokendist.Balancer, error) { return tokendist.NewRandomizedDiffusion(g) }, nil},
	}
}

// refusals prints which balancers refuse a workload, and their errors.
func refusals(nets []network) {
	tree, cube := nets[0].g, nets[3].g
	a, _ := tokendist.NewPoissonArrivals(0.1, true)
	rows := [][]string{}
	try := func(name string, g *tokendist.Graph, start tokendist.Loads, b tokendist.Balancer, err error) {
		if err != nil {
			rows = append(rows, []string{name, "build: " + err.Error()})
			return
		}
		_, err = tokendist.Run(context.Background(), g, start, b, &tokendist.RunOptions{MaxSteps: 10, Workload: a})
		msg := "runs"
		if err != nil {
			msg = err.Error()
		}
		rows = append(rows, []string{name, msg})
	}
	zero := func(g *tokendist.Graph) tokendist.Loads { return make(tokendist.Loads, g.Order()) }
	d1, err := tokendist.NewDiscrepancy1(tree, nil, &tokendist.Discrepancy1Options{Nodes: tree.Order()})
	try("DISCREPANCY-1", tree, zero(tree), d1, err)
	pt, err := tokendist.NewPerfectTree(tree, nil)
	try("PerfectTree", tree, zero(tree), pt, err)
	hb, err := tokendist.NewHypercubeBalance(cube, nil)
	try("HypercubeBalance", cube, zero(cube), hb, err)
	mb, err := tokendist.NewMultiBalance(cube, []tokendist.Loads{zero(cube)}, nil)
	try("MultiBalance", cube, zero(cube), mb, err)
	ring, _ := tokendist.Ring(8)
	dag, _ := tokendist.CompleteTree(5)
	rs, err := tokendist.NewRingTree(8, dag, nil)
	root, _ := tokendist.PointMass(8, 1, 0)
	try("RingScheduler", ring, root, rs, err)
	table("Balancers that assume a fixed total, under Poisson arrivals", []string{"balancer", "Run's answer"}, rows)
}

type steadyRow struct {
	net, algo string
	rho       float64
	st        tokendist.SteadyStats
}

func run(g *tokendist.Graph, b tokendist.Balancer, w tokendist.Workload, churn tokendist.Churn, seed uint64, warm, measure int64) (tokendist.SteadyStats, error) {
	res, err := tokendist.Run(context.Background(), g, make(tokendist.Loads, g.Order()), b, &tokendist.RunOptions{
		MaxSteps: warm + measure, Seed: seed, Workers: 1, Workload: w, Churn: churn,
		Steady: &tokendist.SteadyOptions{WarmUp: warm},
	})
	if err != nil {
		return tokendist.SteadyStats{}, err
	}
	return *res.Steady, nil
}

func poissonService(lambda, mu float64) (tokendist.Workload, error) {
	a, err := tokendist.NewPoissonArrivals(lambda, true)
	if err != nil {
		return nil, err
	}
	sv, err := tokendist.NewService(mu)
	if err != nil {
		return nil, err
	}
	return tokendist.NewCombinedWorkload(a, sv)
}

const mu = 0.5

var rhos = []float64{0.5, 0.9, 0.99}

func partA(c config, nets []network, algos []algo) error {
	var all []steadyRow
	for _, nw := range nets {
		var lines []plot.Line
		for _, al := range algos {
			ln := plot.Line{Name: al.name}
			for _, rho := range rhos {
				b, err := al.build(nw.g)
				if err != nil {
					return err
				}
				w, err := poissonService(rho*mu, mu)
				if err != nil {
					return err
				}
				st, err := run(nw.g, b, w, nil, c.seed, c.warm, c.measure)
				if err != nil {
					return fmt.Errorf("%s on %s: %w", al.name, nw.name, err)
				}
				all = append(all, steadyRow{nw.name, al.name, rho, st})
				ln.X, ln.Y = append(ln.X, rho), append(ln.Y, st.MeanDiscrepancy)
			}
			lines = append(lines, ln)
		}
		if err := writePlot(c, "steady-"+slug(nw.name), lines, &plot.Options{
			Title: "Steady-state discrepancy on " + nw.name, XLabel: "ρ = λ/μ", YLabel: "mean discrepancy", LogY: true, Points: true}); err != nil {
			return err
		}
	}
	rows := [][]string{}
	csvRows := [][]string{{"network", "algorithm", "rho", "mean_discrepancy", "p95_discrepancy", "mean_max", "p95_max", "mean_total", "moved_per_arrival", "unstable"}}
	for _, r := range all {
		rows = append(rows, []string{r.net, r.algo, fmt.Sprint(r.rho), fmt.Sprintf("%.1f", r.st.MeanDiscrepancy), fmt.Sprint(r.st.P95Discrepancy),
			fmt.Sprintf("%.1f", r.st.MeanMax), fmt.Sprintf("%.2f", r.st.MovedPerArrival), unstable(r.st)})
		csvRows = append(csvRows, []string{r.net, r.algo, fmt.Sprint(r.rho), fmt.Sprint(r.st.MeanDiscrepancy), fmt.Sprint(r.st.P95Discrepancy),
			fmt.Sprint(r.st.MeanMax), fmt.Sprint(r.st.P95Max), fmt.Sprint(r.st.MeanTotal), fmt.Sprint(r.st.MovedPerArrival), fmt.Sprint(r.st.Unstable)})
	}
	table(fmt.Sprintf("A. Steady state under Poisson arrivals λ = ρμ per node and service μ = %g per node (warm-up %d, window %d steps)", mu, c.warm, c.measure),
		[]string{"network", "algorithm", "ρ", "mean disc", "p95 disc", "mean max", "moved/arrival", "stable?"}, rows)
	return writeCSV(c, "steady.csv", csvRows)
}

func unstable(st tokendist.SteadyStats) string {
	if st.Unstable {
		return fmt.Sprintf("UNSTABLE (+%.2f/step)", st.Growth)
	}
	return "stable"
}

// hotRates is the sweep of hot-spot rates: 0.25·√2^k up to the network's service capacity n·μ.
func hotRates(n int) []float64 {
	var rs []float64
	for r := 0.25; r < float64(n)*mu; r *= math.Sqrt2 {
		rs = append(rs, math.Round(r*1000)/1000)
	}
	return rs
}

func partB(c config, nets []network, algos []algo) error {
	rows := [][]string{}
	csvRows := [][]string{{"network", "algorithm", "rate", "mean_max", "mean_discrepancy", "growth", "unstable"}}
	for _, nw := range nets {
		var lines []plot.Line
		for _, al := range algos {
			ln := plot.Line{Name: al.name}
			first, lastStable := math.NaN(), math.NaN()
			predicted, pred := "", math.NaN()
			for _, rate := range hotRates(nw.g.Order()) {
				b, err := al.build(nw.g)
				if err != nil {
					return err
				}
				if al.capacity != nil && predicted == "" {
					pred = mu + al.capacity(b, 0)
					predicted = fmt.Sprintf("%.3g", pred)
				}
				h, err := tokendist.NewHotSpotArrivals(rate, 0)
				if err != nil {
					return err
				}
				sv, _ := tokendist.NewService(mu)
				w, _ := tokendist.NewCombinedWorkload(h, sv)
				st, err := run(nw.g, b, w, nil, c.seed, c.hotWarm, c.hotMeasure)
				if err != nil {
					return fmt.Errorf("%s on %s: %w", al.name, nw.name, err)
				}
				csvRows = append(csvRows, []string{nw.name, al.name, fmt.Sprint(rate), fmt.Sprint(st.MeanMax), fmt.Sprint(st.MeanDiscrepancy), fmt.Sprint(st.Growth), fmt.Sprint(st.Unstable)})
				ln.X, ln.Y = append(ln.X, rate), append(ln.Y, st.MeanMax)
				if st.Unstable {
					first = rate
					break
				}
				lastStable = rate
			}
			lines = append(lines, ln)
			verdict := "-"
			switch {
			case predicted == "":
				predicted = "-"
			case (math.IsNaN(lastStable) || lastStable < pred) && !math.IsNaN(first) && pred <= first:
				verdict = "held"
			default:
				verdict = "FAILED"
			}
			rows = append(rows, []string{nw.name, al.name, fmtRate(lastStable), fmtRate(first), predicted, verdict, fmt.Sprintf("%.3g", float64(nw.g.Order())*mu)})
		}
		if err := writePlot(c, "hotspot-"+slug(nw.name), lines, &plot.Options{
			Title: "Hot spot at node 0 on " + nw.name + fmt.Sprintf(" (μ = %g per node)", mu), XLabel: "hot-spot rate (tokens per step)", YLabel: "mean max load",
			LogX: true, LogY: true, Points: true}); err != nil {
			return err
		}
	}
	table(fmt.Sprintf("B. Hot spot at node 0 with service μ = %g per node: last stable and first unstable rate of the sweep ×√2 (warm-up %d, window %d)", mu, c.hotWarm, c.hotMeasure),
		[]string{"network", "algorithm", "last stable", "first unstable", "cut capacity μ+deg/χ", "in bracket?", "service capacity nμ"}, rows)
	return writeCSV(c, "hotspot.csv", csvRows)
}

func fmtRate(r float64) string {
	if math.IsNaN(r) {
		return "none"
	}
	return fmt.Sprintf("%.3g", r)
}

func partC(c config, nets []network, algos []algo) error {
	rows := [][]string{}
	for _, nw := range nets {
		for _, al := range algos {
			row := []string{nw.name, al.name}
			for _, lambda := range []float64{0.5, 0.9} {
				b, err := al.build(nw.g)
				if err != nil {
					return err
				}
				adv, _ := tokendist.NewAdversary(lambda * float64(nw.g.Order()))
				sv, _ := tokendist.NewService(1)
				w, _ := tokendist.NewCombinedWorkload(adv, sv)
				st, err := run(nw.g, b, w, nil, c.seed, c.hotWarm, c.hotMeasure)
				if err != nil {
					return fmt.Errorf("%s on %s: %w", al.name, nw.name, err)
				}
				row = append(row, fmt.Sprintf("%s, max %.0f", unstable(st), st.MeanMax))
			}
			rows = append(rows, row)
		}
	}
	table("C. Heaviest-node adversary at total rate λn, service μ = 1 per node", []string{"network", "algorithm", "λ = 0.5", "λ = 0.9"}, rows)
	return nil
}

func partD(c config, nets []network, algos []algo) error {
	rows := [][]string{}
	for _, nw := range nets {
		for _, al := range algos {
			if al.name == "THRESHOLD-1" && !nw.g.IsTree() {
				continue // the spanning-tree form refuses churn
			}
			row := []string{nw.name, al.name}
			for _, churn := range []bool{false, true} {
				b, err := al.build(nw.g)
				if err != nil {
					return err
				}
				w, _ := poissonService(0.9*mu, mu)
				var ch tokendist.Churn
				if churn {
					ch, _ = tokendist.NewRandomLinkChurn(0.1, 0.1)
				}
				st, err := run(nw.g, b, w, ch, c.seed, c.warm, c.measure)
				if err != nil {
					return fmt.Errorf("%s on %s: %w", al.name, nw.name, err)
				}
				row = append(row, fmt.Sprintf("%.1f (%s)", st.MeanDiscrepancy, unstable(st)))
			}
			rows = append(rows, row)
		}
	}
	table("D. Mean steady discrepancy at ρ = 0.9 without and with random churn (fail 0.1, recover 0.1: half the links down)", []string{"network", "algorithm", "no churn", "churn"}, rows)
	return nil
}

func writePlot(c config, name string, lines []plot.Line, o *plot.Options) error {
	svg, err := plot.Lines(lines, o)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(c.out, name+".svg"), svg, 0o644)
}

func writeCSV(c config, name string, rows [][]string) error {
	f, err := os.Create(filepath.Join(c.out, name))
	if err != nil {
		return err
	}
	w := csv.NewWriter(f)
	if err := w.WriteAll(rows); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func slug(s string) string {
	r := strings.NewReplacer(" ", "-", "(", "", ")", "", ",", "-")
	return strings.ToLower(r.Replace(s))
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
