// Command ring reproduces Gao and Rosenberg, "On balancing computational load on rings of
// processors": growing binary trees and grids executed on the ring R_p under KS-BF and
// three other policies. It prints and plots the speedup against p for complete, random
// and adversarial trees and grids, answers the paper's open question (does KS-BF work
// well on randomly growing trees and grids?) with RunRingComparison, and runs the adaptive
// trapezoid-rule integration of section 1.3 as a growing tree.
//
//	go run ./examples/ring                 # about a minute on two cores
//	go run ./examples/ring -quick          # small sizes (CI)
//	go run ./examples/ring -out plots -seed 7 -pmax 128
package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"math/big"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/tokendist/tokendist"
	"github.com/tokendist/tokendist/plot"
)

// config holds the flags.
type config struct {
	out        string
	seed       uint64
	quick      bool
	pmax       int
	treeN      int // height of the complete tree
	gridN      int // side of the pyramidal grid
	seeds      int // random instances per family
	randDepth  int // depth cap of random trees
	randGridD  int // depth cap of random grids
	advM       int // length of the adversarial grid
	advH       int // levels of the adversarial trees
	quadPEs    int
	start      time.Time
	progressOK bool
}

func main() {
	c := &config{start: time.Now()}
	flag.StringVar(&c.out, "out", filepath.Join("out", "ring"), "output folder for CSV, JSON and SVG files")
	flag.Uint64Var(&c.seed, "seed", 1, "first seed of the random dags")
	flag.BoolVar(&c.quick, "quick", false, "tiny sizes (a few seconds)")
	flag.IntVar(&c.pmax, "pmax", 64, "largest ring size (powers of two from 1)")
	flag.IntVar(&c.treeN, "n", 20, "height of the complete tree T_n")
	flag.IntVar(&c.gridN, "grid", 1000, "side of the pyramidal grid G_n")
	flag.IntVar(&c.seeds, "seeds", 6, "random instances per random family")
	flag.Parse()
	c.randDepth, c.randGridD, c.advM, c.advH, c.quadPEs = 26, 500, 2000, 22, 16
	if c.quick {
		c.pmax, c.treeN, c.gridN, c.seeds = 16, 12, 80, 2
		c.randDepth, c.randGridD, c.advM, c.advH = 16, 60, 100, 12
	}
	if fi, err := os.Stderr.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
		c.progressOK = true
	}
	if err := run(c); err != nil {
		fmt.Fprintln(os.Stderr, "ring:", err)
		os.Exit(1)
	}
}

func run(c *config) error {
	if err := os.MkdirAll(c.out, 0o755); err != nil {
		return err
	}
	var ps []int
	for p := 1; p <= c.pmax; p *= 2 {
		ps = append(ps, p)
	}
	if err := speedups(c, ps); err != nil {
		return err
	}
	if err := belief(c); err != nil {
		return err
	}
	if err := quadrature(c); err != nil {
		return err
	}
	if err := workload(c); err != nil {
		return err
	}
	c.progress("")
	fmt.Printf("\nDone in %.1fs; files in %s/\n", time.Since(c.start).Seconds(), c.out)
	return nil
}

// progress prints a status line on a terminal.
func (c *config) progress(format string, args ...any) {
	if c.progressOK {
		fmt.Fprintf(os.Stderr, "\r\033[K"+format, args...)
	}
}

func table(header []string, rows [][]string) {
	w := tabwriter.NewWriter(os.Stdout, 2, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, strings.Join(header, "\t")+"\t")
	for _, r := range rows {
		fmt.Fprintln(w, strings.Join(r, "\t")+"\t")
	}
	w.Flush()
}

// family is one kind of growing dag; the adversarial ones depend on p.
type family struct {
	name, file string
	tree       func(p int, seed uint64) (tokendist.TreeDag, error)
	grid       func(p int, seed uint64) (tokendist.GridDag, error)
	random     bool
}

func log2(p int) int {
	l := 0
	for 1<<(l+1) <= p {
		l++
	}
	return l
}

func (c *config) families() []family {
	return []family{
		{name: fmt.Sprintf("complete tree T_%d", c.treeN), file: "complete-tree",
			tree: func(int, uint64) (tokendist.TreeDag, error) { return tokendist.CompleteTree(c.treeN) }},
		{name: fmt.Sprintf("random tree (q=0.75, depth %d)", c.randDepth), file: "random-tree", random: true,
			tree: func(_ int, s uint64) (tokendist.TreeDag, error) { return tokendist.RandomTreeDag(0.75, c.randDepth, s) }},
		{name: fmt.Sprintf("adversarial tree (h=%d, w=log p)", c.advH), file: "adversarial-tree",
			tree: func(p int, _ uint64) (tokendist.TreeDag, error) { return tokendist.WCompleteTree(c.advH, log2(p)) }},
		{name: fmt.Sprintf("pyramidal grid G_%d", c.gridN), file: "pyramid-grid",
			grid: func(int, uint64) (tokendist.GridDag, error) { return tokendist.PyramidGrid(c.gridN) }},
		{name: fmt.Sprintf("random grid (q=0.9, depth %d)", c.randGridD), file: "random-grid", random: true,
			grid: func(_ int, s uint64) (tokendist.GridDag, error) { return tokendist.RandomGridDag(0.9, c.randGridD, s) }},
		{name: fmt.Sprintf("adversarial grid (i=0, j=1, m=%d)", c.advM), file: "adversarial-grid",
			grid: func(int, uint64) (tokendist.GridDag, error) { return tokendist.AdversarialGrid(0, 1, c.advM) }},
	}
}

// record is one run for the CSV/JSON output.
type record struct {
	Family string `json:"family"`
	Seed   uint64 `json:"seed"`
	tokendist.RingStats
}

// speedups runs every family under every policy for every p and plots speedup against p.
func speedups(c *config, ps []int) error {
	fmt.Println("== Speedup against ring size p (mean over instances; 'bound' = N / max(⌈N/p⌉, depth))")
	var all []record
	for _, f := range c.families() {
		seeds := []uint64{c.seed}
		if f.random {
			var err error
			if seeds, err = grownSeeds(c, f, ps[len(ps)-1]); err != nil {
				return err
			}
		}
		policies := tokendist.RingPolicies()
		speed := make([][]float64, len(policies)) // [policy][p]
		bound := make([]float64, len(ps))
		var tasks float64
		for pi, p := range ps {
			for k, pol := range policies {
				var sum, sumBound float64
				for _, seed := range seeds {
					c.progress("%s: p=%d %v seed %d", f.name, p, pol, seed)
					st, err := runOne(f, p, pol, seed)
					if err != nil {
						return err
					}
					all = append(all, record{f.name, seed, st})
					sum += st.Speedup
					sumBound += float64(st.Tasks) / float64(st.LowerBound)
					tasks = float64(st.Tasks)
				}
				speed[k] = append(speed[k], sum/float64(len(seeds)))
				bound[pi] = sumBound / float64(len(seeds))
			}
		}
		c.progress("")
		fmt.Printf("\n%s (N = %.0f%s)\n", f.name, tasks, map[bool]string{true: fmt.Sprintf(" for the last of %d instances", len(seeds)), false: ""}[f.random])
		header := []string{"p"}
		for _, pol := range policies {
			header = append(header, pol.String())
		}
		header = append(header, "bound")
		var rows [][]string
		for i, p := range ps {
			row := []string{strconv.Itoa(p)}
			for k := range policies {
				row = append(row, fmt.Sprintf("%.2f", speed[k][i]))
			}
			rows = append(rows, append(row, fmt.Sprintf("%.2f", bound[i])))
		}
		table(header, rows)
		var lines []plot.Line
		xs := make([]float64, len(ps))
		for i, p := range ps {
			xs[i] = float64(p)
		}
		for k, pol := range policies {
			lines = append(lines, plot.Line{Name: pol.String(), X: xs, Y: speed[k]})
		}
		lines = append(lines, plot.Line{Name: "best possible", X: xs, Y: bound})
		svg, err := plot.Lines(lines, &plot.Options{
			Title: "Speedup on R_p: " + f.name, XLabel: "p", YLabel: "speedup N/T", LogX: true, Points: true,
		})
		if err := save(c, "speedup-"+f.file+".svg", svg, err); err != nil {
			return err
		}
	}
	return writeRecords(c, all)
}

// grownSeeds returns the first c.seeds seeds from c.seed on whose random dag grew to at
// least 64 tasks: a random dag may die out at once, and a one-task dag says nothing
// about balancing.
func grownSeeds(c *config, f family, p int) ([]uint64, error) {
	var seeds []uint64
	for s := c.seed; len(seeds) < c.seeds; s++ {
		st, err := runOne(f, p, tokendist.RingPolicyKSBF, s)
		if err != nil {
			return nil, err
		}
		if st.Tasks >= 64 {
			seeds = append(seeds, s)
		}
	}
	return seeds, nil
}

func runOne(f family, p int, pol tokendist.RingPolicy, seed uint64) (tokendist.RingStats, error) {
	opts := &tokendist.RingOptions{Policy: pol, NoSchedule: true}
	var b *tokendist.RingScheduler
	if f.tree != nil {
		dag, err := f.tree(p, seed)
		if err != nil {
			return tokendist.RingStats{}, err
		}
		if b, err = tokendist.NewRingTree(p, dag, opts); err != nil {
			return tokendist.RingStats{}, err
		}
	} else {
		dag, err := f.grid(p, seed)
		if err != nil {
			return tokendist.RingStats{}, err
		}
		if b, err = tokendist.NewRingGrid(p, dag, opts); err != nil {
			return tokendist.RingStats{}, err
		}
	}
	res, err := tokendist.RunRing(context.Background(), b, &tokendist.RunOptions{Seed: seed})
	if err != nil {
		return tokendist.RingStats{}, err
	}
	return res.Report.(tokendist.RingStats), nil
}

func save(c *config, name string, data []byte, err error) error {
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(c.out, name), data, 0o644)
}

func writeRecords(c *config, all []record) error {
	f, err := os.Create(filepath.Join(c.out, "speedups.csv"))
	if err != nil {
		return err
	}
	w := csv.NewWriter(f)
	w.Write([]string{"family", "seed", "policy", "p", "tasks", "depth", "time", "lower_bound", "speedup", "efficiency", "idle", "moved", "max_work"})
	for _, r := range all {
		maxWork := int64(0)
		for _, x := range r.Work {
			maxWork = max(maxWork, x)
		}
		w.Write([]string{r.Family, fmt.Sprint(r.Seed), r.Policy.String(), fmt.Sprint(r.P), fmt.Sprint(r.Tasks), fmt.Sprint(r.Depth),
			fmt.Sprint(r.Time), fmt.Sprint(r.LowerBound), fmt.Sprintf("%.4f", r.Speedup), fmt.Sprintf("%.4f", r.Efficiency),
			fmt.Sprint(r.Idle), fmt.Sprint(r.Moved), fmt.Sprint(maxWork)})
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	data, err := json.MarshalIndent(all, "", " ")
	return save(c, "speedups.json", data, err)
}

// belief answers the paper's open question with RunRingComparison: on random trees and grids
// of growing size, how close does KS-BF come to an optimal schedule, and how does it
// compare with the other policies? The optimum is bracketed: at least the ring-aware
// RingScheduleLowerBound, at most the best policy's time.
func belief(c *config) error {
	fmt.Println("\n== Does KS-BF work well on randomly growing trees and grids? (section 1.3's open question)")
	fmt.Println("time / ring lower bound (RingScheduleLowerBound: max(⌈N/p⌉, depth) plus the ring's start-up), mean over the instances that grew.")
	fmt.Println("An optimal schedule lies between that bound and the best policy, so a policy's time/optimum lies in [time/best policy, time/bound].")
	type fam struct {
		name string
		tree func(uint64) (tokendist.TreeDag, error)
		grid func(uint64) (tokendist.GridDag, error)
	}
	var fams []fam
	treeDepths, gridDepths, ps := []int{16, 32, 63}, []int{100, 400}, []int{4, 16, 64}
	if c.quick {
		treeDepths, gridDepths, ps = []int{12, 20}, []int{40}, []int{4, 16}
	}
	for _, d := range treeDepths {
		// q = 0.6 keeps the expected size about 1.2^depth: deep trees of modest size.
		fams = append(fams, fam{name: fmt.Sprintf("tree q=0.6 depth %d", d),
			tree: func(s uint64) (tokendist.TreeDag, error) { return tokendist.RandomTreeDag(0.6, d, s) }})
	}
	for _, d := range gridDepths {
		fams = append(fams, fam{name: fmt.Sprintf("grid q=0.9 depth %d", d),
			grid: func(s uint64) (tokendist.GridDag, error) { return tokendist.RandomGridDag(0.9, d, s) }})
	}
	var seeds []uint64
	for s := 0; s < 4*c.seeds; s++ {
		seeds = append(seeds, c.seed+uint64(s))
	}
	header := []string{"family", "p", "runs", "mean N"}
	for _, pol := range tokendist.RingPolicies() {
		header = append(header, pol.String())
	}
	header = append(header, "KS-BF time/optimum in", "KS-BF worst", "KS-BF best?")
	var rows [][]string
	var all []tokendist.RingComparison
	cases, near, best := 0, 0, 0
	var verdict []string
	for _, f := range fams {
		c.progress("RunRingComparison: %s", f.name)
		res, err := tokendist.RunRingComparison(context.Background(), tokendist.RingExperiment{
			Name: f.name, Tree: f.tree, Grid: f.grid, P: ps, Seeds: seeds, MinTasks: 64,
		})
		if err != nil {
			return err
		}
		all = append(all, res...)
		for i := 0; i < len(res); i += 4 {
			ks := res[i]
			row := []string{f.name, strconv.Itoa(ks.P), strconv.Itoa(ks.Runs), fmt.Sprintf("%.0f", ks.Tasks)}
			isBest := true
			for _, r := range res[i : i+4] {
				row = append(row, fmt.Sprintf("%.2f", r.OverRingLowerBound))
				if r.OverBestPolicy < ks.OverBestPolicy-1e-9 {
					isBest = false
				}
			}
			rows = append(rows, append(row, fmt.Sprintf("[%.2f, %.2f]", ks.OverBestPolicy, ks.OverRingLowerBound),
				fmt.Sprintf("%.2f", ks.WorstOverRingLowerBound), map[bool]string{true: "yes", false: "no"}[isBest]))
			cases++
			if ks.OverRingLowerBound <= 1.1 {
				near++
			}
			if isBest {
				best++
			}
		}
		line := f.name + ": KS-BF time/optimum in"
		for i := 0; i < len(res); i += 4 {
			line += fmt.Sprintf(" [%.2f, %.2f] (p=%d)", res[i].OverBestPolicy, res[i].OverRingLowerBound, res[i].P)
		}
		verdict = append(verdict, line)
	}
	c.progress("")
	table(header, rows)
	fmt.Printf("Answer from these runs: KS-BF is within 10%% of the ring lower bound (so within 10%% of optimal) in %d of %d cases and the best of the four policies (least mean time/best) in %d.\n", near, cases, best)
	for _, v := range verdict {
		fmt.Println("  " + v)
	}
	data, err := json.MarshalIndent(all, "", " ")
	return save(c, "belief.json", data, err)
}

// quadrature runs the adaptive trapezoid rule of section 1.3 on a function with a sharp
// peak, under every policy.
func quadrature(c *config) error {
	const a, b, eps = 0.0, 1.0, 1e-3
	f := func(x float64) float64 { return 1 / (eps + (x-0.3)*(x-0.3)) }
	exact := (math.Atan((b-0.3)/math.Sqrt(eps)) - math.Atan((a-0.3)/math.Sqrt(eps))) / math.Sqrt(eps)
	acc := 1e-7
	if c.quick {
		acc = 1e-4
	}
	q, err := tokendist.NewQuadrature(f, a, b, 1e-9, acc)
	if err != nil {
		return err
	}
	fmt.Printf("\n== Adaptive trapezoid rule (section 1.3): ∫_0^1 dx/(10^-3 + (x-0.3)^2) = %.9f, accuracy threshold %g, R_%d\n", exact, acc, c.quadPEs)
	header := []string{"policy", "integral", "error", "tasks", "depth", "time", "speedup", "efficiency"}
	var rows [][]string
	var recs []tokendist.RingStats
	for _, pol := range tokendist.RingPolicies() {
		r, err := tokendist.NewRingTree(c.quadPEs, q, &tokendist.RingOptions{Policy: pol, NoSchedule: true})
		if err != nil {
			return err
		}
		res, err := tokendist.RunRing(context.Background(), r, &tokendist.RunOptions{Seed: c.seed})
		if err != nil {
			return err
		}
		val, err := q.Integral()
		if err != nil {
			return err
		}
		st := res.Report.(tokendist.RingStats)
		recs = append(recs, st)
		rows = append(rows, []string{pol.String(), fmt.Sprintf("%.9f", val), fmt.Sprintf("%.2e", val-exact),
			fmt.Sprint(st.Tasks), fmt.Sprint(st.Depth), fmt.Sprint(st.Time), fmt.Sprintf("%.2f", st.Speedup), fmt.Sprintf("%.2f", st.Efficiency)})
	}
	table(header, rows)
	data, err := json.MarshalIndent(recs, "", " ")
	return save(c, "quadrature.json", data, err)
}

// workload plots the KS work profile of T_n (Theorem 2.1, exact with math/big) against
// n for the largest p: how far the busiest PE is from the ideal (2^n-1)/p, next to the
// corrected deviation bound and the completion time, showing how large n must be before
// KS balances a complete tree (the α_p^n term of Theorem 1.1 dominates until then).
func workload(c *config) error {
	p := c.pmax
	fmt.Printf("\n== KS work profile of T_n on R_%d (exact, Theorem 2.1): relative deviation max_i |W_i(n) - ideal| / ideal\n", p)
	alpha, err := tokendist.RingAlpha(p)
	if err != nil {
		return err
	}
	var xs, rel, bound []float64
	var rows [][]string
	for n := 4; n <= 12000; n = n*3/2 + 1 {
		w, err := tokendist.RingWork(n, p)
		if err != nil {
			return err
		}
		// ideal = (2^n - 1)/p as a big.Float; deviations and time relative to it.
		ideal := new(big.Float).SetInt(new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), uint(n)), big.NewInt(1)))
		ideal.Quo(ideal, big.NewFloat(float64(p)))
		worst, time := 0.0, 0.0
		for i, wi := range w {
			x := new(big.Float).SetInt(wi)
			d, _ := new(big.Float).Quo(new(big.Float).Sub(x, ideal), ideal).Float64()
			worst = math.Max(worst, math.Abs(d))
			if wi.Sign() > 0 {
				t, _ := new(big.Float).Quo(new(big.Float).Add(x, big.NewFloat(float64(i))), ideal).Float64()
				time = math.Max(time, t)
			}
		}
		// Corrected bound (1-1/p)(α^n + 1) relative to the ideal, ≈ (p-1)((α/2)^n + 2^-n).
		b := float64(p-1) * (math.Pow(alpha/2, float64(n)) + math.Pow(0.5, float64(n)))
		xs, rel, bound = append(xs, float64(n)), append(rel, worst), append(bound, b)
		rows = append(rows, []string{strconv.Itoa(n), fmt.Sprintf("%.3g", worst), fmt.Sprintf("%.3g", b), fmt.Sprintf("%.4g", time)})
		if b < 1e-6 {
			break // balanced to within a millionth
		}
	}
	table([]string{"n", "max relative deviation", "corrected bound", "time / ideal"}, rows)
	svg, err := plot.Lines([]plot.Line{
		{Name: "max deviation", X: xs, Y: rel},
		{Name: "corrected bound", X: xs, Y: bound},
	}, &plot.Options{Title: fmt.Sprintf("KS balance of T_n on R_%d", p), XLabel: "n", YLabel: "max_i |W_i - ideal| / ideal", LogY: true, LogX: true})
	return save(c, "workload.svg", svg, err)
}
