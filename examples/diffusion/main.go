// Command diffusion reproduces Table 1 of Berenbrink, Cooper, Friedetzky, Friedrich and
// Sauerwald, "Randomized diffusion for indivisible loads", empirically: for hypercubes,
// 2-dimensional tori and random 4- and 8-regular graphs of several sizes it runs every scheme
// of the table (the randomized diffusion, RSW, FGS deterministic and randomized, FS
// random matchings) for τ(G, K) rounds from the same adversarial start over many seeds,
// prints the median and largest final discrepancy, whether loads went negative, and the
// fitted growth of each scheme against the orders the paper proves. It then plots the
// discrepancy and the deviation from the continuous process over time.
//
//	go run ./examples/diffusion              # default sizes, about a minute on two cores
//	go run ./examples/diffusion -quick       # small sizes (CI)
//	go run ./examples/diffusion -full        # larger sizes, and λ_max of the 1000×1000 torus
//
// Output (folder -out): table1.csv and table1.json (every row), negative.csv (the sparse
// start), trace_<network>.csv (discrepancy and deviation per round for every scheme),
// and SVG plots discrepancy_<network>.svg and deviation_<network>.svg.
package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/tokendist/tokendist"
	"github.com/tokendist/tokendist/plot"
)

// scheme is one column of Table 1.
type scheme struct {
	name string
	new  func(tokendist.Network) (tokendist.Balancer, error)
}

var schemes = []scheme{
	{"Randomized", func(n tokendist.Network) (tokendist.Balancer, error) { return tokendist.NewRandomizedDiffusion(n) }},
	{"RSW", func(n tokendist.Network) (tokendist.Balancer, error) { return tokendist.NewRSWDiffusion(n) }},
	{"FGS det", func(n tokendist.Network) (tokendist.Balancer, error) { return tokendist.NewFGSDeterministic(n) }},
	{"FGS rand", func(n tokendist.Network) (tokendist.Balancer, error) { return tokendist.NewFGSRandomized(n) }},
	{"FS", func(n tokendist.Network) (tokendist.Balancer, error) { return tokendist.NewRandomMatching(n) }},
}

// family is a graph class of Table 1 with its sizes and the x used for the trend fits.
type family struct {
	name  string
	sizes []int
	make  func(size int, seed uint64) (*tokendist.Graph, error)
	x     func(g *tokendist.Graph) float64 // the fit's variable
	label func(size int) string
	xname string
	// transitive families get Ψ_1 and Υ_2 from one node.
	transitive bool
	// predicted log-log slopes against x: randomized and RSW (NaN: no prediction).
	predRand, predRSW string
}

// row is one line of the table.
type row struct {
	Family      string    `json:"family"`
	Network     string    `json:"network"`
	N           int       `json:"n"`
	D           int       `json:"d"`
	LambdaMax   float64   `json:"lambda_max"`
	K           int64     `json:"K"`
	Tau         int64     `json:"tau"`
	Psi1        float64   `json:"psi1,omitempty"`
	Upsilon2    float64   `json:"upsilon2,omitempty"`
	Median      []float64 `json:"median"`
	Max         []int64   `json:"max"`
	NegRuns     []int     `json:"negative_runs"`
	MostNeg     []int64   `json:"most_negative"`
	Thm11Bound  float64   `json:"thm11_bound,omitempty"`
	Thm11Held   bool      `json:"thm11_held"`
	RSWBound    float64   `json:"rsw_bound,omitempty"`
	RSWHeld     bool      `json:"rsw_held"`
	Seconds     float64   `json:"seconds"`
	x           float64
	transitive  bool
	familyIndex int
}

type config struct {
	seed  uint64
	seeds int
	quick bool
	full  bool
	out   string
}

func main() {
	var c config
	flag.Uint64Var(&c.seed, "seed", 1, "base seed (graphs and runs)")
	flag.IntVar(&c.seeds, "seeds", 0, "runs per scheme and network (0: 15, 3 with -quick)")
	flag.BoolVar(&c.quick, "quick", false, "small sizes, a few seconds (CI)")
	flag.BoolVar(&c.full, "full", false, "larger sizes and the 1000×1000 torus spectrum")
	flag.StringVar(&c.out, "out", filepath.Join("out", "diffusion"), "output folder")
	flag.Parse()
	if c.seeds <= 0 {
		c.seeds = 15
		if c.quick {
			c.seeds = 3
		}
	}
	if err := run(c); err != nil {
		fmt.Fprintln(os.Stderr, "diffusion:", err)
		os.Exit(1)
	}
}

func families(c config) []family {
	hyper := []int{6, 8, 10, 12}
	torus := []int{8, 16, 32}
	rr := []int{1 << 8, 1 << 10, 1 << 12, 1 << 14}
	rr8 := []int{1 << 8, 1 << 10, 1 << 12}
	switch {
	case c.quick:
		hyper, torus, rr, rr8 = []int{4, 6, 8}, []int{6, 12}, []int{1 << 7, 1 << 9}, nil
	case c.full:
		hyper, torus, rr, rr8 = []int{6, 8, 10, 12, 14}, []int{8, 16, 32, 64}, []int{1 << 8, 1 << 10, 1 << 12, 1 << 14, 1 << 16}, []int{1 << 8, 1 << 10, 1 << 12, 1 << 14}
	}
	return []family{
		{name: "hypercube", sizes: hyper, transitive: true, xname: "d = log₂ n", label: func(d int) string { return fmt.Sprintf("Hypercube(%d)", d) },
			make: func(d int, _ uint64) (*tokendist.Graph, error) { return tokendist.Hypercube(d) },
			x:    func(g *tokendist.Graph) float64 { return float64(g.MaxDegree()) }, predRand: "≤ 1 (O(log n))", predRSW: "2 (Θ(log² n))"},
		{name: "torus", sizes: torus, transitive: true, xname: "side = n^{1/2}", label: func(s int) string { return fmt.Sprintf("Torus(%d,%d)", s, s) },
			make: func(s int, _ uint64) (*tokendist.Graph, error) { return tokendist.Torus(s, s) },
			x:    func(g *tokendist.Graph) float64 { return math.Sqrt(float64(g.Order())) }, predRand: "≈ 0 (O(√log n))", predRSW: "1 (Θ(n^{1/2}))"},
		{name: "random 4-regular", sizes: rr, xname: "log n", label: func(n int) string { return fmt.Sprintf("RandomRegular(%d,4)", n) },
			make: func(n int, seed uint64) (*tokendist.Graph, error) { return tokendist.RandomRegular(n, 4, seed) },
			x:    func(g *tokendist.Graph) float64 { return math.Log(float64(g.Order())) }, predRand: "≈ 0 (O(d log log n))", predRSW: "≤ 1 (O(d log n))"},
		{name: "random 8-regular", sizes: rr8, xname: "log n", label: func(n int) string { return fmt.Sprintf("RandomRegular(%d,8)", n) },
			make: func(n int, seed uint64) (*tokendist.Graph, error) { return tokendist.RandomRegular(n, 8, seed) },
			x:    func(g *tokendist.Graph) float64 { return math.Log(float64(g.Order())) }, predRand: "≈ 0 (O(d log log n))", predRSW: "≤ 1 (O(d log n))"},
	}
}

func run(c config) error {
	if err := os.MkdirAll(c.out, 0o755); err != nil {
		return err
	}
	start := time.Now()
	fams := families(c)
	var rows []row
	for fi, f := range fams {
		for _, size := range f.sizes {
			g, err := f.make(size, c.seed)
			if err != nil {
				return err
			}
			r, err := tableRow(c, f, g, f.label(size))
			if err != nil {
				return err
			}
			r.familyIndex = fi
			rows = append(rows, r)
		}
	}
	progress("")
	printTable(rows)
	printFits(fams, rows)
	if err := writeTable(c, rows); err != nil {
		return err
	}
	if err := negativeTable(c); err != nil {
		return err
	}
	if err := traces(c); err != nil {
		return err
	}
	if c.full {
		if err := bigTorus(); err != nil {
			return err
		}
	}
	fmt.Printf("\nDone in %.1fs; output in %s/\n", time.Since(start).Seconds(), c.out)
	return nil
}

// gradientStart is d·dist(v, v0) from a peripheral node v0: neighbours differ by at most
// d, so RSW never moves a token (its lower bound d·diam(G)); K = d·diam(G).
func gradientStart(g *tokendist.Graph) (tokendist.Loads, error) {
	v0, err := tokendist.Peripheral(g)
	if err != nil {
		return nil, err
	}
	l, err := tokendist.DistanceLoads(g, v0)
	if err != nil {
		return nil, err
	}
	for i := range l {
		l[i] *= int64(g.MaxDegree())
	}
	return l, nil
}

// runSeeds runs b's scheme for tau rounds from start for every seed, on all cores.
func runSeeds(c config, g *tokendist.Graph, sc scheme, start tokendist.Loads, tau int64) ([]tokendist.Result, error) {
	res := make([]tokendist.Result, c.seeds)
	errs := make([]error, c.seeds)
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for i := 0; i < c.seeds; i++ {
		wg.Add(1)
		sem <- struct{}{}
		go func(i int) {
			defer wg.Done()
			defer func() { <-sem }()
			b, err := sc.new(g)
			if err != nil {
				errs[i] = err
				return
			}
			res[i], errs[i] = tokendist.Run(context.Background(), g, start, b,
				&tokendist.RunOptions{MaxSteps: tau, Seed: c.seed*1000 + uint64(i), Workers: 1})
		}(i)
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return res, nil
}

func tableRow(c config, f family, g *tokendist.Graph, label string) (row, error) {
	t0 := time.Now()
	start, err := gradientStart(g)
	if err != nil {
		return row{}, err
	}
	sp, err := tokendist.LambdaMax(g, nil)
	if err != nil {
		return row{}, err
	}
	K := start.Discrepancy()
	tau, err := tokendist.BalancingTime(sp.LambdaMax, g.Order(), K)
	if err != nil {
		return row{}, err
	}
	r := row{Family: f.name, Network: label, N: g.Order(), D: g.MaxDegree(), LambdaMax: sp.LambdaMax,
		K: K, Tau: tau, x: f.x(g), transitive: f.transitive}
	// Ψ_1 and Υ_2 from one node on vertex-transitive networks, or every node on small ones.
	var dopts *tokendist.DivergenceOptions
	if f.transitive {
		dopts = &tokendist.DivergenceOptions{Nodes: []int{0}}
	}
	if f.transitive || g.Order() <= 1024 {
		progress("%s: local divergence", g)
		dv, err := tokendist.LocalDivergence(g, 1e-6, dopts)
		if err != nil {
			return row{}, err
		}
		r.Psi1, r.Upsilon2 = dv.Psi1, dv.Upsilon2
	}
	for i, sc := range schemes {
		progress("%s n=%d: %s × %d seeds, τ = %d rounds", f.name, g.Order(), sc.name, c.seeds, tau)
		res, err := runSeeds(c, g, sc, start, tau)
		if err != nil {
			return row{}, err
		}
		var ds []float64
		mx, neg, most := int64(0), 0, int64(0)
		for _, rr := range res {
			d := rr.Discrepancy()
			ds = append(ds, float64(d))
			mx = max(mx, d)
			if rr.NegativeSteps > 0 {
				neg++
			}
			most = min(most, rr.MostNegative)
		}
		sort.Float64s(ds)
		r.Median = append(r.Median, median(ds))
		r.Max = append(r.Max, mx)
		r.NegRuns = append(r.NegRuns, neg)
		r.MostNeg = append(r.MostNeg, most)
		if i == 0 && r.Upsilon2 > 0 {
			// Theorem 1.1(1) with the proof's constants: discrepancy ≤ 2Υ_2·√(32 d ln n) + 2
			// with probability ≥ 1 − 2/n.
			r.Thm11Bound = 2*r.Upsilon2*math.Sqrt(32*float64(r.D)*math.Log(float64(r.N))) + 2
			r.Thm11Held = float64(mx) <= r.Thm11Bound
		}
		if i == 1 && r.Psi1 > 0 {
			// RSW: every node is within Ψ_1 of the continuous process (eq. 2.7, rounding
			// errors below 1), whose discrepancy is ≤ 1 after τ rounds.
			r.RSWBound = 2*r.Psi1 + 1
			r.RSWHeld = float64(mx) <= r.RSWBound
		}
	}
	r.Seconds = time.Since(t0).Seconds()
	return r, nil
}

func median(sorted []float64) float64 {
	n := len(sorted)
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}

func printTable(rows []row) {
	fmt.Println("Table 1, empirically: final discrepancy after τ(G, K) rounds from the RSW-stable gradient start")
	fmt.Println("(K = d·diam). Cells: median/max over the seeds; '!' marks runs whose loads went negative.")
	w := tabwriter.NewWriter(os.Stdout, 2, 0, 2, ' ', 0)
	head := []string{"network", "n", "λ_max", "K", "τ"}
	for _, sc := range schemes {
		head = append(head, sc.name)
	}
	head = append(head, "Thm 1.1(1) bound", "held", "RSW ≤ 2Ψ_1+1", "held")
	fmt.Fprintln(w, strings.Join(head, "\t"))
	for _, r := range rows {
		cells := []string{r.Network, fmt.Sprint(r.N), fmt.Sprintf("%.6f", r.LambdaMax), fmt.Sprint(r.K), fmt.Sprint(r.Tau)}
		for i := range schemes {
			cell := fmt.Sprintf("%g/%d", r.Median[i], r.Max[i])
			if r.NegRuns[i] > 0 {
				cell += fmt.Sprintf(" !%d(%d)", r.NegRuns[i], r.MostNeg[i])
			}
			cells = append(cells, cell)
		}
		cells = append(cells, bound(r.Thm11Bound), held(r.Thm11Bound, r.Thm11Held), bound(r.RSWBound), held(r.RSWBound, r.RSWHeld))
		fmt.Fprintln(w, strings.Join(cells, "\t"))
	}
	w.Flush()
}

func bound(b float64) string {
	if b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f", b)
}

func held(b float64, ok bool) string {
	switch {
	case b == 0:
		return "-"
	case ok:
		return "yes"
	}
	return "NO"
}

// slope fits log y = a + b·log x by least squares.
func slope(x, y []float64) float64 {
	var sx, sy, sxx, sxy float64
	for i := range x {
		lx, ly := math.Log(x[i]), math.Log(math.Max(y[i], 0.5))
		sx, sy, sxx, sxy = sx+lx, sy+ly, sxx+lx*lx, sxy+lx*ly
	}
	n := float64(len(x))
	return (n*sxy - sx*sy) / (n*sxx - sx*sx)
}

func printFits(fams []family, rows []row) {
	fmt.Println("\nFitted growth: log-log slope of the median final discrepancy against the family's size variable")
	w := tabwriter.NewWriter(os.Stdout, 2, 0, 2, ' ', 0)
	head := []string{"family", "x"}
	for _, sc := range schemes {
		head = append(head, sc.name)
	}
	head = append(head, "paper: randomized", "paper: RSW")
	fmt.Fprintln(w, strings.Join(head, "\t"))
	for fi, f := range fams {
		var xs []float64
		ys := make([][]float64, len(schemes))
		for _, r := range rows {
			if r.familyIndex != fi {
				continue
			}
			xs = append(xs, r.x)
			for i := range schemes {
				ys[i] = append(ys[i], r.Median[i])
			}
		}
		if len(xs) < 2 {
			continue
		}
		cells := []string{f.name, f.xname}
		for i := range schemes {
			cells = append(cells, fmt.Sprintf("%.2f", slope(xs, ys[i])))
		}
		cells = append(cells, f.predRand, f.predRSW)
		fmt.Fprintln(w, strings.Join(cells, "\t"))
	}
	w.Flush()
	fmt.Println("(On hypercubes the randomized scheme ends near d for even d and near d/2 for odd d; compare like parities.)")
}

func writeTable(c config, rows []row) error {
	f, err := os.Create(filepath.Join(c.out, "table1.csv"))
	if err != nil {
		return err
	}
	defer f.Close()
	cw := csv.NewWriter(f)
	head := []string{"family", "network", "n", "d", "lambda_max", "K", "tau", "psi1", "upsilon2"}
	for _, sc := range schemes {
		head = append(head, sc.name+" median", sc.name+" max", sc.name+" negative runs", sc.name+" most negative")
	}
	if err := cw.Write(head); err != nil {
		return err
	}
	for _, r := range rows {
		rec := []string{r.Family, r.Network, fmt.Sprint(r.N), fmt.Sprint(r.D), fmt.Sprint(r.LambdaMax), fmt.Sprint(r.K),
			fmt.Sprint(r.Tau), fmt.Sprint(r.Psi1), fmt.Sprint(r.Upsilon2)}
		for i := range schemes {
			rec = append(rec, fmt.Sprint(r.Median[i]), fmt.Sprint(r.Max[i]), fmt.Sprint(r.NegRuns[i]), fmt.Sprint(r.MostNeg[i]))
		}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return err
	}
	js, err := json.MarshalIndent(rows, "", " ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(c.out, "table1.json"), js, 0o644)
}

// negativeTable runs the schemes from a sparse start (every node 0 or 1 token, one node
// with n tokens): the start where edge-based rounding drives small loads negative.
func negativeTable(c config) error {
	fmt.Println("\nNegative loads (Table 1's last row), sparse start: loads 0 or 1, plus n tokens on node 0; τ(G, K) rounds")
	nets := []struct {
		name string
		make func() (*tokendist.Graph, error)
	}{
		{"Hypercube(8)", func() (*tokendist.Graph, error) { return tokendist.Hypercube(8) }},
		{"Torus(16,16)", func() (*tokendist.Graph, error) { return tokendist.Torus(16, 16) }},
		{"RandomRegular(256,4)", func() (*tokendist.Graph, error) { return tokendist.RandomRegular(256, 4, c.seed) }},
	}
	if c.quick {
		nets = nets[:2]
	}
	f, err := os.Create(filepath.Join(c.out, "negative.csv"))
	if err != nil {
		return err
	}
	defer f.Close()
	cw := csv.NewWriter(f)
	_ = cw.Write([]string{"network", "scheme", "runs", "negative runs", "negative steps (mean)", "most negative", "median discrepancy"})
	w := tabwriter.NewWriter(os.Stdout, 2, 0, 2, ' ', 0)
	fmt.Fprintln(w, "network\tscheme\tnegative runs\tnegative steps (mean)\tmost negative\tmedian discrepancy")
	for _, nw := range nets {
		g, err := nw.make()
		if err != nil {
			return err
		}
		start, err := tokendist.RandomRange(g.Order(), 0, 1, c.seed)
		if err != nil {
			return err
		}
		start[0] = int64(g.Order())
		sp, err := tokendist.LambdaMax(g, nil)
		if err != nil {
			return err
		}
		tau, err := tokendist.BalancingTime(sp.LambdaMax, g.Order(), start.Discrepancy())
		if err != nil {
			return err
		}
		for _, sc := range schemes {
			progress("negative loads: %s on %v", sc.name, g)
			res, err := runSeeds(c, g, sc, start, tau)
			if err != nil {
				return err
			}
			neg, steps, most := 0, int64(0), int64(0)
			var ds []float64
			for _, r := range res {
				if r.NegativeSteps > 0 {
					neg++
				}
				steps += r.NegativeSteps
				most = min(most, r.MostNegative)
				ds = append(ds, float64(r.Discrepancy()))
			}
			sort.Float64s(ds)
			cells := []string{nw.name, sc.name, fmt.Sprintf("%d/%d", neg, len(res)),
				fmt.Sprintf("%.1f", float64(steps)/float64(len(res))), fmt.Sprint(most), fmt.Sprint(median(ds))}
			fmt.Fprintln(w, strings.Join(cells, "\t"))
			_ = cw.Write(append([]string{nw.name, sc.name, fmt.Sprint(len(res)), fmt.Sprint(neg)}, cells[3:]...))
		}
	}
	progress("")
	w.Flush()
	cw.Flush()
	return cw.Error()
}

// traces runs every scheme once with Compare on one network per family and plots the
// discrepancy and the deviation from the continuous process over time.
func traces(c config) error {
	nets := []struct {
		name string
		make func() (*tokendist.Graph, error)
	}{
		{"hypercube", func() (*tokendist.Graph, error) { return tokendist.Hypercube(10) }},
		{"torus", func() (*tokendist.Graph, error) { return tokendist.Torus(32, 32) }},
		{"random4regular", func() (*tokendist.Graph, error) { return tokendist.RandomRegular(4096, 4, c.seed) }},
	}
	labels := []string{"Hypercube(10)", "Torus(32,32)", "RandomRegular(4096,4)"}
	if c.quick {
		nets[0].make = func() (*tokendist.Graph, error) { return tokendist.Hypercube(7) }
		nets[1].make = func() (*tokendist.Graph, error) { return tokendist.Torus(12, 12) }
		nets[2].make = func() (*tokendist.Graph, error) { return tokendist.RandomRegular(256, 4, c.seed) }
		labels = []string{"Hypercube(7)", "Torus(12,12)", "RandomRegular(256,4)"}
	}
	fmt.Println("\nDeviation from the continuous process, max over rounds of max_k |X_k(t) − ξ_k(t)| (one run each):")
	w := tabwriter.NewWriter(os.Stdout, 2, 0, 2, ' ', 0)
	head := []string{"network", "τ"}
	for _, sc := range schemes {
		head = append(head, sc.name)
	}
	fmt.Fprintln(w, strings.Join(head, "\t"))
	for ni, nw := range nets {
		g, err := nw.make()
		if err != nil {
			return err
		}
		start, err := gradientStart(g)
		if err != nil {
			return err
		}
		sp, err := tokendist.LambdaMax(g, nil)
		if err != nil {
			return err
		}
		tau, err := tokendist.BalancingTime(sp.LambdaMax, g.Order(), start.Discrepancy())
		if err != nil {
			return err
		}
		every := max(1, tau/300)
		var disc, dev []plot.Line
		cells := []string{labels[ni], fmt.Sprint(tau)}
		f, err := os.Create(filepath.Join(c.out, "trace_"+nw.name+".csv"))
		if err != nil {
			return err
		}
		cw := csv.NewWriter(f)
		_ = cw.Write([]string{"scheme", "step", "discrepancy", "deviation", "continuous discrepancy"})
		for _, sc := range schemes {
			progress("trace: %s on %v", sc.name, g)
			b, err := sc.new(g)
			if err != nil {
				return err
			}
			rec, err := tokendist.NewDeviation(g, start)
			if err != nil {
				return err
			}
			if _, err := tokendist.Run(context.Background(), g, start, b, &tokendist.RunOptions{MaxSteps: tau, SampleEvery: every, Seed: c.seed, Recorder: rec}); err != nil {
				return err
			}
			samples := rec.Samples()
			var x, yd, yv []float64
			worst := 0.0
			for _, s := range samples {
				x = append(x, float64(s.Step))
				yd = append(yd, float64(s.Discrepancy))
				yv = append(yv, s.Deviation)
				worst = math.Max(worst, s.Deviation)
				_ = cw.Write([]string{sc.name, fmt.Sprint(s.Step), fmt.Sprint(s.Discrepancy), fmt.Sprint(s.Deviation), fmt.Sprint(s.Continuous)})
			}
			disc = append(disc, plot.Line{Name: sc.name, X: x, Y: yd})
			dev = append(dev, plot.Line{Name: sc.name, X: x, Y: yv})
			cells = append(cells, fmt.Sprintf("%.2f", worst))
		}
		cw.Flush()
		f.Close()
		if err := cw.Error(); err != nil {
			return err
		}
		fmt.Fprintln(w, strings.Join(cells, "\t"))
		for _, p := range []struct {
			file, y string
			lines   []plot.Line
		}{{"discrepancy_" + nw.name + ".svg", "discrepancy", disc}, {"deviation_" + nw.name + ".svg", "max_k |X_k − ξ_k|", dev}} {
			svg, err := plot.Lines(p.lines, &plot.Options{Title: fmt.Sprintf("%s on %s (gradient start)", p.y, labels[ni]),
				XLabel: "round", YLabel: p.y, LogY: true})
			if err != nil {
				return err
			}
			if err := os.WriteFile(filepath.Join(c.out, p.file), svg, 0o644); err != nil {
				return err
			}
		}
	}
	progress("")
	w.Flush()
	return nil
}

// bigTorus times LambdaMax on the 1000×1000 torus and checks it against the closed form.
func bigTorus() error {
	g, err := tokendist.Torus(1000, 1000)
	if err != nil {
		return err
	}
	progress("λ_max of the 1000×1000 torus (Lanczos)")
	t0 := time.Now()
	sp, err := tokendist.LambdaMax(g, nil)
	if err != nil {
		return err
	}
	el := time.Since(t0)
	progress("")
	cf, err := tokendist.TorusSpectrum(1000, 1000)
	if err != nil {
		return err
	}
	fmt.Printf("\nLambdaMax(Torus(1000,1000)): λ_2 = %.15f (closed form %.15f, |diff| %.1e), %d Lanczos iterations, %.1fs\n",
		sp.Lambda2, cf.Lambda2, math.Abs(sp.Lambda2-cf.Lambda2), sp.Iterations, el.Seconds())
	return nil
}

// progress shows a transient status line on a terminal.
func progress(format string, args ...any) {
	if fi, err := os.Stderr.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
		fmt.Fprintf(os.Stderr, "\r\033[K"+format, args...)
	}
}
