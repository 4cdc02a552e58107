// Command hypercube measures Plaxton's Balance and NewMultiBalance algorithms on the
// hypercube and the shuffle-exchange ("Load balancing on the hypercube and
// shuffle-exchange", STAN-CS-89-1281) against the paper's lower and upper bounds.
//
// For every dimension d and largest load m it runs dimension order, the recursive
// NewHypercubeBalance (with and without Theorem 2.4's minimum-error post-processing),
// Leighton's algorithm and the shuffle-exchange versions on three inputs: Lemma 2.4's
// Hamming-ball packing, the dimension-order worst case and random loads. It prints a
// table, writes balance.csv / balance.json, multibalance.csv, a trace of one run
// (trace.csv, trace.json) and SVG plots into -out.
//
//	go run ./examples/hypercube                 # d = 4..16, m up to 4096: seconds
//	go run ./examples/hypercube -quick          # tiny sizes (CI)
//	go run ./examples/hypercube -dmax 16 -ms 16,256,4096 -out plots
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
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/tokendist/tokendist"
	"github.com/tokendist/tokendist/plot"
)

// row is one measured run.
type row struct {
	Input     string `json:"input"`
	Network   string `json:"network"`
	Algorithm string `json:"algorithm"`
	D         int    `json:"d"`
	M         int64  `json:"m"`
	N         int64  `json:"n"`
	Error     int64  `json:"error"`
	Time      int64  `json:"time"`
	Select    int64  `json:"select"`
	Balance   int64  `json:"balance"`
	Shuffle   int64  `json:"shuffle"`
	Post      int64  `json:"post"`
	Moved     int64  `json:"moved"`
	Lower     int64  `json:"lower_bound"`
	Upper     int64  `json:"upper_bound"`
	Held      bool   `json:"held"`
}

type config struct {
	dmin, dmax int
	ms         []int64
	seed       uint64
	out        string
	quick      bool
}

func main() {
	var c config
	var ms string
	flag.IntVar(&c.dmin, "dmin", 4, "smallest dimension")
	flag.IntVar(&c.dmax, "dmax", 16, "largest dimension")
	flag.StringVar(&ms, "ms", "4,16,64,256,1024,4096", "largest loads m, comma-separated")
	flag.Uint64Var(&c.seed, "seed", 1, "seed of the random inputs")
	flag.StringVar(&c.out, "out", filepath.Join("out", "hypercube"), "output folder")
	flag.BoolVar(&c.quick, "quick", false, "tiny sizes, for CI")
	flag.Parse()
	if c.quick {
		c.dmin, c.dmax, ms = 2, 6, "4,16,64"
	}
	for _, f := range strings.Split(ms, ",") {
		m, err := strconv.ParseInt(strings.TrimSpace(f), 10, 64)
		if err != nil || m < 1 {
			fail(fmt.Errorf("bad -ms entry %q", f))
		}
		c.ms = append(c.ms, m)
	}
	if c.dmin < 2 || c.dmax < c.dmin || c.dmax > 20 {
		fail(fmt.Errorf("need 2 ≤ dmin ≤ dmax ≤ 20, got %d, %d", c.dmin, c.dmax))
	}
	if err := os.MkdirAll(c.out, 0o755); err != nil {
		fail(err)
	}
	start := time.Now()
	rows, err := balanceSweep(c)
	if err != nil {
		fail(err)
	}
	if err := writeRows(c.out, rows); err != nil {
		fail(err)
	}
	if err := balancePlots(c, rows); err != nil {
		fail(err)
	}
	if err := multiSweep(c); err != nil {
		fail(err)
	}
	if err := traceRun(c); err != nil {
		fail(err)
	}
	progress("")
	bad := 0
	for _, r := range rows {
		if !r.Held {
			bad++
		}
	}
	fmt.Printf("\n%d runs in %.1fs, %d bound violations; output in %s/\n", len(rows), time.Since(start).Seconds(), bad, c.out)
	if bad > 0 {
		os.Exit(1)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "hypercube:", err)
	os.Exit(1)
}

// progress overwrites one status line on stderr when it is a terminal.
func progress(format string, args ...any) {
	if fi, err := os.Stderr.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
		fmt.Fprintf(os.Stderr, "\r\033[K"+format, args...)
	}
}

// inputs returns the three inputs for dimension d and largest load m.
func inputs(d int, m int64, seed uint64) (map[string]tokendist.Loads, error) {
	p := int64(1) << d
	ball, err := tokendist.HammingBallLoads(d, m*p/2, m, int(p-1))
	if err != nil {
		return nil, err
	}
	worst, err := tokendist.DimensionOrderWorstLoads(d, m)
	if err != nil {
		return nil, err
	}
	random, err := tokendist.RandomRange(int(p), 0, m, seed)
	if err != nil {
		return nil, err
	}
	return map[string]tokendist.Loads{"ball": ball, "worst": worst, "random": random}, nil
}

type algorithm struct {
	name string
	se   bool
	make func(net tokendist.Network) (*tokendist.CubeBalancer, error)
}

var algorithms = []algorithm{
	{"DimensionOrder", false, func(n tokendist.Network) (*tokendist.CubeBalancer, error) {
		return tokendist.NewDimensionOrderBalance(n, nil)
	}},
	{"NewHypercubeBalance", false, func(n tokendist.Network) (*tokendist.CubeBalancer, error) {
		return tokendist.NewHypercubeBalance(n, nil)
	}},
	{"NewHypercubeBalance+MinError", false, func(n tokendist.Network) (*tokendist.CubeBalancer, error) {
		return tokendist.NewHypercubeBalance(n, &tokendist.CubeOptions{MinError: true})
	}},
	{"Leighton", false, func(n tokendist.Network) (*tokendist.CubeBalancer, error) { return tokendist.NewLeightonBalance(n) }},
	{"SE DimensionOrder", true, func(n tokendist.Network) (*tokendist.CubeBalancer, error) {
		return tokendist.NewDimensionOrderBalance(n, nil)
	}},
	{"SE DimensionOrder+MinError", true, func(n tokendist.Network) (*tokendist.CubeBalancer, error) {
		return tokendist.NewDimensionOrderBalance(n, &tokendist.CubeOptions{MinError: true})
	}},
	{"SE Leighton", true, func(n tokendist.Network) (*tokendist.CubeBalancer, error) { return tokendist.NewLeightonBalance(n) }},
}

// balanceSweep runs every algorithm on every input and checks the bounds.
func balanceSweep(c config) ([]row, error) {
	var rows []row
	ctx := context.Background()
	for d := c.dmin; d <= c.dmax; d++ {
		hc, err := tokendist.Hypercube(d)
		if err != nil {
			return nil, err
		}
		se, err := tokendist.ShuffleExchange(d)
		if err != nil {
			return nil, err
		}
		for _, m := range c.ms {
			in, err := inputs(d, m, c.seed)
			if err != nil {
				return nil, err
			}
			for _, name := range []string{"ball", "worst", "random"} {
				loads := in[name]
				for _, a := range algorithms {
					if strings.Contains(a.name, "Leighton") && m<<d > 1<<22 {
						continue // O(m·p) phases: skip the largest
					}
					progress("balance d=%d m=%d %s %s", d, m, name, a.name)
					net := hc
					if a.se {
						net = se
					}
					b, err := a.make(net)
					if err != nil {
						return nil, err
					}
					res, err := tokendist.Run(ctx, net, loads, b, nil)
					if err != nil {
						return nil, err
					}
					r, err := measure(a, b, net, res, name, d, loads)
					if err != nil {
						return nil, err
					}
					rows = append(rows, r)
				}
			}
		}
	}
	printRows(c, rows)
	return rows, nil
}

// measure fills a row and checks the paper's bounds: the final error (≤ log p, or
// minimal), the explicit upper bound on the time, and Lemma 2.1's lower bound on the
// Hamming-ball input of the hypercube.
func measure(a algorithm, b *tokendist.CubeBalancer, net *tokendist.Graph, res tokendist.Result, input string, d int, loads tokendist.Loads) (row, error) {
	t, _ := res.Report.(tokendist.CubeTimes)
	n, m, p := loads.Total(), loads.Max(), 1<<d
	r := row{Input: input, Network: "hypercube", Algorithm: a.name, D: d, M: m, N: n,
		Error: res.Discrepancy(), Time: res.Time, Select: t.Select, Balance: t.Balance,
		Shuffle: t.Shuffle, Post: t.Reduce + t.Route, Moved: res.Moved}
	if a.se {
		r.Network = "shuffle-exchange"
	}
	leastErr, err := tokendist.MinimumError(n, p)
	if err != nil {
		return r, err
	}
	minErr := strings.Contains(a.name, "MinError") || strings.Contains(a.name, "Leighton")
	r.Held = r.Error <= int64(d)
	if minErr {
		r.Held = r.Error == leastErr
	}
	switch {
	case strings.Contains(a.name, "Leighton"):
		r.Upper, err = tokendist.LeightonTime(net, m)
		r.Held = r.Held && r.Time == r.Upper
	case strings.Contains(a.name, "NewHypercubeBalance"):
		r.Upper, err = tokendist.HypercubeBalanceTimeBound(d, m)
		r.Held = r.Held && t.Select+t.Balance <= r.Upper
	default:
		r.Upper, err = tokendist.DimensionOrderTimeBound(net, m)
		r.Held = r.Held && t.Balance+t.Shuffle <= r.Upper
	}
	if err != nil {
		return r, err
	}
	if input == "ball" && !a.se && n > 0 {
		r.Lower, err = tokendist.BalanceLowerBound(d, n, m, max(r.Error, leastErr))
		if err != nil {
			return r, err
		}
		r.Held = r.Held && r.Time >= r.Lower
	}
	return r, nil
}

// printRows prints the runs at the largest dimension, one line per input and algorithm.
func printRows(c config, rows []row) {
	progress("")
	fmt.Printf("Balance on Hypercube(%d) and ShuffleExchange(%d) (all dimensions in balance.csv)\n", c.dmax, c.dmax)
	w := tabwriter.NewWriter(os.Stdout, 2, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "input\tm\talgorithm\terror\ttime\tselect\tbalance\tshuffle\tpost\tlower\tupper\theld\t")
	for _, r := range rows {
		if r.D != c.dmax {
			continue
		}
		fmt.Fprintf(w, "%s\t%d\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%v\t\n", r.Input, r.M, r.Algorithm,
			r.Error, r.Time, r.Select, r.Balance, r.Shuffle, r.Post, r.Lower, r.Upper, r.Held)
	}
	w.Flush()
}

func writeRows(out string, rows []row) error {
	f, err := os.Create(filepath.Join(out, "balance.csv"))
	if err != nil {
		return err
	}
	defer f.Close()
	cw := csv.NewWriter(f)
	cw.Write([]string{"input", "network", "algorithm", "d", "m", "n", "error", "time", "select", "balance", "shuffle", "post", "moved", "lower_bound", "upper_bound", "held"})
	for _, r := range rows {
		i := func(x int64) string { return strconv.FormatInt(x, 10) }
		cw.Write([]string{r.Input, r.Network, r.Algorithm, strconv.Itoa(r.D), i(r.M), i(r.N), i(r.Error), i(r.Time),
			i(r.Select), i(r.Balance), i(r.Shuffle), i(r.Post), i(r.Moved), i(r.Lower), i(r.Upper), strconv.FormatBool(r.Held)})
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return err
	}
	j, err := os.Create(filepath.Join(out, "balance.json"))
	if err != nil {
		return err
	}
	defer j.Close()
	enc := json.NewEncoder(j)
	enc.SetIndent("", " ")
	return enc.Encode(rows)
}

func savePlot(out, name string, svg []byte, err error) error {
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(out, name), svg, 0o644)
}

// pick returns (x, time) of the rows that match, in order.
func pick(rows []row, keep func(row) bool, x func(row) float64, y func(row) float64) plot.Line {
	var l plot.Line
	for _, r := range rows {
		if keep(r) {
			l.X = append(l.X, x(r))
			l.Y = append(l.Y, y(r))
		}
	}
	return l
}

// balancePlots draws time against m at the largest d, time against d at the largest m,
// and the recursion's time over the paper's m·√log p + log² p.
func balancePlots(c config, rows []row) error {
	time := func(r row) float64 { return float64(r.Time) }
	mOf := func(r row) float64 { return float64(r.M) }
	dOf := func(r row) float64 { return float64(r.D) }
	mMax := c.ms[len(c.ms)-1]
	for _, input := range []string{"ball", "worst"} {
		var lines []plot.Line
		for _, a := range []string{"DimensionOrder", "NewHypercubeBalance", "NewHypercubeBalance+MinError", "Leighton", "SE DimensionOrder"} {
			l := pick(rows, func(r row) bool { return r.Input == input && r.D == c.dmax && r.Algorithm == a }, mOf, time)
			l.Name = a
			lines = append(lines, l)
		}
		upper := pick(rows, func(r row) bool { return r.Input == input && r.D == c.dmax && r.Algorithm == "NewHypercubeBalance" },
			mOf, func(r row) float64 { return float64(r.Upper) })
		upper.Name = "NewHypercubeBalance upper bound"
		lines = append(lines, upper)
		if input == "ball" {
			lower := pick(rows, func(r row) bool {
				return r.Input == input && r.D == c.dmax && r.Algorithm == "NewHypercubeBalance+MinError"
			},
				mOf, func(r row) float64 { return float64(r.Lower) })
			lower.Name = "Lemma 2.1 lower bound (min error)"
			lines = append(lines, lower)
		}
		svg, err := plot.Lines(lines, &plot.Options{
			Title:  fmt.Sprintf("Balance on Hypercube(%d), %s input", c.dmax, input),
			XLabel: "largest load m", YLabel: "model time", LogX: true, LogY: true, Points: true})
		if err := savePlot(c.out, "time-vs-m-"+input+".svg", svg, err); err != nil {
			return err
		}
		lines = nil
		for _, a := range []string{"DimensionOrder", "NewHypercubeBalance", "SE DimensionOrder"} {
			l := pick(rows, func(r row) bool { return r.Input == input && r.M == mMax && r.Algorithm == a }, dOf, time)
			l.Name = a
			lines = append(lines, l)
		}
		shape := pick(rows, func(r row) bool { return r.Input == input && r.M == mMax && r.Algorithm == "NewHypercubeBalance" },
			dOf, func(r row) float64 { d := float64(r.D); return float64(r.M)*math.Sqrt(d) + d*d })
		shape.Name = "m·√d + d² (Theorem 2.4's shape)"
		lines = append(lines, shape)
		svg, err = plot.Lines(lines, &plot.Options{
			Title:  fmt.Sprintf("Balance with m = %d, %s input", mMax, input),
			XLabel: "dimension d = log p", YLabel: "model time", Points: true})
		if err := savePlot(c.out, "time-vs-d-"+input+".svg", svg, err); err != nil {
			return err
		}
	}
	var lines []plot.Line
	for _, m := range c.ms {
		l := pick(rows, func(r row) bool { return r.Input == "worst" && r.M == m && r.Algorithm == "NewHypercubeBalance" },
			dOf, func(r row) float64 { d := float64(r.D); return float64(r.Time) / (float64(r.M)*math.Sqrt(d) + d*d) })
		l.Name = fmt.Sprintf("m = %d", m)
		lines = append(lines, l)
	}
	svg, err := plot.Lines(lines, &plot.Options{
		Title:  "NewHypercubeBalance time / (m·√log p + log² p), dimension-order worst case",
		XLabel: "dimension d", YLabel: "ratio", Points: true})
	return savePlot(c.out, "recursion-ratio.svg", svg, err)
}

// multiSweep runs NewMultiBalance on Theorem 3.2's condensed-ID input for g = 2^r groups.
func multiSweep(c config) error {
	f, err := os.Create(filepath.Join(c.out, "multibalance.csv"))
	if err != nil {
		return err
	}
	defer f.Close()
	cw := csv.NewWriter(f)
	cw.Write([]string{"d", "g", "n_per_p", "algorithm", "max_group_error", "time", "select", "balance", "shuffle", "post", "lower_bound", "theorem_3_1_shape"})
	fmt.Printf("\nMultiBalance on Theorem 3.2's condensed-ID input (n/p = 64)\n")
	w := tabwriter.NewWriter(os.Stdout, 2, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "d\tg\talgorithm\tmax error\ttime\tselect\tbalance\tlower\t(n/p)√(log g log p)+g log²p\t")
	ctx := context.Background()
	lines := map[string]*plot.Line{}
	var order []string
	d := c.dmax
	for r := 1; r <= min(d, 6); r++ {
		groups, err := tokendist.CondensedIDGroups(d, r, 64)
		if err != nil {
			return err
		}
		g := len(groups)
		total := make(tokendist.Loads, 1<<d)
		for _, grp := range groups {
			for v, x := range grp {
				total[v] += x
			}
		}
		lb, err := tokendist.MultiBalanceLowerBound(groups, int64(1<<d)/2)
		if err != nil {
			return err
		}
		shape := 64*math.Sqrt(float64(r)*float64(d)) + float64(g*d*d)
		for _, v := range []struct {
			name string
			se   bool
			opts tokendist.MultiOptions
		}{{"recursive", false, tokendist.MultiOptions{}}, {"ascending", false, tokendist.MultiOptions{Ascending: true}},
			{"recursive+MinError", false, tokendist.MultiOptions{MinError: true}}, {"SE ascending", true, tokendist.MultiOptions{}}} {
			progress("multibalance d=%d g=%d %s", d, g, v.name)
			var net *tokendist.Graph
			if v.se {
				net, err = tokendist.ShuffleExchange(d)
			} else {
				net, err = tokendist.Hypercube(d)
			}
			if err != nil {
				return err
			}
			b, err := tokendist.NewMultiBalance(net, groups, &v.opts)
			if err != nil {
				return err
			}
			res, err := tokendist.Run(ctx, net, total, b, nil)
			if err != nil {
				return err
			}
			rep, _ := res.Report.(tokendist.MultiBalanceReport)
			worst, t := rep.MaxGroupDiscrepancy, rep.Times
			rowLB := lb
			if v.se {
				rowLB = 0 // section 3.2's argument is for the hypercube
			}
			fmt.Fprintf(w, "%d\t%d\t%s\t%d\t%d\t%d\t%d\t%d\t%.0f\t\n", d, g, v.name, worst, res.Time, t.Select, t.Balance, rowLB, shape)
			cw.Write([]string{strconv.Itoa(d), strconv.Itoa(g), "64", v.name, fmt.Sprint(worst), fmt.Sprint(res.Time),
				fmt.Sprint(t.Select), fmt.Sprint(t.Balance), fmt.Sprint(t.Shuffle), fmt.Sprint(t.Reduce + t.Route), fmt.Sprint(rowLB), fmt.Sprintf("%.1f", shape)})
			if lines[v.name] == nil {
				lines[v.name] = &plot.Line{Name: v.name}
				order = append(order, v.name)
			}
			lines[v.name].X = append(lines[v.name].X, float64(g))
			lines[v.name].Y = append(lines[v.name].Y, float64(res.Time))
		}
		if lines["lower bound"] == nil {
			lines["lower bound"] = &plot.Line{Name: "section 3.2 lower bound"}
			order = append(order, "lower bound")
		}
		lines["lower bound"].X = append(lines["lower bound"].X, float64(g))
		lines["lower bound"].Y = append(lines["lower bound"].Y, float64(lb))
	}
	progress("")
	w.Flush()
	cw.Flush()
	if err := cw.Error(); err != nil {
		return err
	}
	var ls []plot.Line
	for _, name := range order {
		ls = append(ls, *lines[name])
	}
	svg, err := plot.Lines(ls, &plot.Options{
		Title:  fmt.Sprintf("NewMultiBalance on Hypercube(%d), condensed-ID input, n/p = 64", d),
		XLabel: "groups g", YLabel: "model time", LogX: true, LogY: true, Points: true})
	return savePlot(c.out, "multibalance.svg", svg, err)
}

// traceRun records one run of NewHypercubeBalance with minimum error step by step and
// plots its discrepancy against model time.
func traceRun(c config) error {
	d, m := c.dmax, c.ms[len(c.ms)-1]
	g, err := tokendist.Hypercube(d)
	if err != nil {
		return err
	}
	loads, err := tokendist.DimensionOrderWorstLoads(d, m)
	if err != nil {
		return err
	}
	var lines []plot.Line
	for _, mk := range []func() (*tokendist.CubeBalancer, error){
		func() (*tokendist.CubeBalancer, error) {
			return tokendist.NewDimensionOrderBalance(g, &tokendist.CubeOptions{MinError: true})
		},
		func() (*tokendist.CubeBalancer, error) {
			return tokendist.NewHypercubeBalance(g, &tokendist.CubeOptions{MinError: true})
		},
	} {
		b, err := mk()
		if err != nil {
			return err
		}
		res, err := tokendist.Run(context.Background(), g, loads, b, &tokendist.RunOptions{SampleEvery: 1})
		if err != nil {
			return err
		}
		l := plot.Line{Name: b.String()}
		for _, s := range res.Trace {
			l.X = append(l.X, float64(s.Time))
			l.Y = append(l.Y, float64(s.Discrepancy))
		}
		lines = append(lines, l)
		if strings.HasPrefix(b.String(), "NewHypercubeBalance") {
			if err := writeTrace(c.out, res.Trace); err != nil {
				return err
			}
		}
	}
	svg, err := plot.Lines(lines, &plot.Options{
		Title:  fmt.Sprintf("Discrepancy against model time, Hypercube(%d), dimension-order worst case, m = %d", d, m),
		XLabel: "model time", YLabel: "discrepancy", LogY: true, Points: true})
	return savePlot(c.out, "trace.svg", svg, err)
}

func writeTrace(out string, tr tokendist.Trace) error {
	f, err := os.Create(filepath.Join(out, "trace.csv"))
	if err != nil {
		return err
	}
	defer f.Close()
	if err := tr.WriteCSV(f); err != nil {
		return err
	}
	j, err := os.Create(filepath.Join(out, "trace.json"))
	if err != nil {
		return err
	}
	defer j.Close()
	return tr.WriteJSON(j)
}
