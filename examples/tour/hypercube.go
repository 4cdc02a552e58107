package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/tokendist/tokendist"
	"github.com/tokendist/tokendist/plot"
)

func init() {
	register(section{order: 40, title: "Hypercube and shuffle-exchange: Balance and NewMultiBalance (Plaxton)", run: hypercubeSection})
}

// hypercubeSection runs Plaxton's Balance algorithms on dimension order's worst case and
// on Lemma 2.4's Hamming-ball packing, NewMultiBalance on Theorem 3.2's condensed-ID input,
// and plots model time against the largest load m.
func hypercubeSection(t *tour) error {
	d, m := 12, int64(256)
	if t.quick {
		d, m = 6, 32
	}
	hc, err := tokendist.Hypercube(d)
	if err != nil {
		return err
	}
	se, err := tokendist.ShuffleExchange(d)
	if err != nil {
		return err
	}
	p := int64(1) << d
	worst, err := tokendist.DimensionOrderWorstLoads(d, m)
	if err != nil {
		return err
	}
	ball, err := tokendist.HammingBallLoads(d, m*p/2, m, int(p-1))
	if err != nil {
		return err
	}
	type run struct {
		name  string
		net   *tokendist.Graph
		input string
		loads tokendist.Loads
		make  func(tokendist.Network) (*tokendist.CubeBalancer, error)
	}
	dimOrder := func(n tokendist.Network) (*tokendist.CubeBalancer, error) {
		return tokendist.NewDimensionOrderBalance(n, nil)
	}
	recursion := func(n tokendist.Network) (*tokendist.CubeBalancer, error) {
		return tokendist.NewHypercubeBalance(n, nil)
	}
	minError := func(n tokendist.Network) (*tokendist.CubeBalancer, error) {
		return tokendist.NewHypercubeBalance(n, &tokendist.CubeOptions{MinError: true})
	}
	leighton := func(n tokendist.Network) (*tokendist.CubeBalancer, error) { return tokendist.NewLeightonBalance(n) }
	runs := []run{
		{"NewDimensionOrderBalance", hc, "dim-order worst", worst, dimOrder},
		{"NewHypercubeBalance", hc, "dim-order worst", worst, recursion},
		{"NewHypercubeBalance + Thm 2.4", hc, "dim-order worst", worst, minError},
		{"NewLeightonBalance", hc, "dim-order worst", worst, leighton},
		{"NewDimensionOrderBalance", se, "dim-order worst", worst, dimOrder},
		{"NewHypercubeBalance + Thm 2.4", hc, "Hamming ball", ball, minError},
		{"NewLeightonBalance", se, "Hamming ball", ball, leighton},
	}
	header := []string{"algorithm", "network", "input", "final disc.", "steps", "model time", "moved", "paper's bound", "held"}
	var rows [][]string
	for _, r := range runs {
		t.progress("hypercube: %s on %s", r.name, r.input)
		b, err := r.make(r.net)
		if err != nil {
			return err
		}
		res, err := tokendist.Run(context.Background(), r.net, r.loads, b, nil)
		if err != nil {
			return err
		}
		bound, ok, err := cubeBound(b, r.net, d, r.input == "Hamming ball", r.loads, res)
		if err != nil {
			return err
		}
		rows = append(rows, []string{r.name, netName(r.net, d), r.input, fmt.Sprint(res.Discrepancy()), fmt.Sprint(res.Steps),
			fmt.Sprint(res.Time), fmt.Sprint(res.Moved), bound, t.held(r.name+" on "+r.input, ok)})
	}
	// NewMultiBalance on the condensed-ID input: 8 groups.
	groups, err := tokendist.CondensedIDGroups(d, 3, 16)
	if err != nil {
		return err
	}
	total := make(tokendist.Loads, p)
	for _, grp := range groups {
		for v, x := range grp {
			total[v] += x
		}
	}
	mb, err := tokendist.NewMultiBalance(hc, groups, nil)
	if err != nil {
		return err
	}
	res, err := tokendist.Run(context.Background(), hc, total, mb, nil)
	if err != nil {
		return err
	}
	worstGroup := res.Report.(tokendist.MultiBalanceReport).MaxGroupDiscrepancy
	lb, err := tokendist.MultiBalanceLowerBound(groups, p/2)
	if err != nil {
		return err
	}
	ok := worstGroup <= int64(d) && res.Time >= lb
	rows = append(rows, []string{"NewMultiBalance (g = 8)", netName(hc, d), "condensed IDs", fmt.Sprintf("%d/group", worstGroup),
		fmt.Sprint(res.Steps), fmt.Sprint(res.Time), fmt.Sprint(res.Moved),
		fmt.Sprintf("group error ≤ %d, time ≥ %d (§3.2)", d, lb), t.held("NewMultiBalance", ok)})
	t.table(header, rows)
	return hypercubePlot(t, hc, d)
}

// cubeBound states the paper's bound for the run and whether it held: error ≤ log p and
// the explicit upper bound (section 2.3) for the error-log p algorithms; minimum error
// and the exact time for Leighton's algorithm; minimum error and, on the Hamming ball,
// Lemma 2.1's lower bound, elsewhere the upper bound plus the post-processing's
// 2R·(1 + log p) (R = one all-reduce), for Theorem 2.4's pipeline.
func cubeBound(b *tokendist.CubeBalancer, net *tokendist.Graph, d int, onBall bool, loads tokendist.Loads, res tokendist.Result) (string, bool, error) {
	n, m, p := loads.Total(), loads.Max(), 1<<d
	xi := res.Discrepancy()
	minErr, err := tokendist.MinimumError(n, p)
	if err != nil {
		return "", false, err
	}
	times, _ := res.Report.(tokendist.CubeTimes)
	switch {
	case strings.HasPrefix(b.String(), "NewLeightonBalance"):
		want, err := tokendist.LeightonTime(net, m)
		return fmt.Sprintf("error %d, time = (2m+1)·log p = %d", minErr, want), xi == minErr && res.Time == want, err
	case times.Reduce > 0 && onBall:
		lb, err := tokendist.BalanceLowerBound(d, n, m, minErr)
		return fmt.Sprintf("error %d, time ≥ %d (Lemma 2.1)", minErr, lb), xi == minErr && res.Time >= lb, err
	case times.Reduce > 0:
		ub, err := tokendist.HypercubeBalanceTimeBound(d, m)
		ub += 2 * int64(d) * int64(1+d)
		return fmt.Sprintf("error %d, time ≤ %d (Thm 2.4)", minErr, ub), xi == minErr && res.Time <= ub, err
	case times.Select > 0:
		ub, err := tokendist.HypercubeBalanceTimeBound(d, m)
		return fmt.Sprintf("error ≤ %d, time ≤ %d (§2.3)", d, ub), xi <= int64(d) && res.Time <= ub, err
	default:
		ub, err := tokendist.DimensionOrderTimeBound(net, m)
		return fmt.Sprintf("error ≤ %d, time ≤ %d", d, ub), xi <= int64(d) && res.Time <= ub, err
	}
}

func netName(g *tokendist.Graph, d int) string {
	if g.MaxDegree() == d {
		return fmt.Sprintf("Hypercube(%d)", d)
	}
	return fmt.Sprintf("ShuffleExchange(%d)", d)
}

// hypercubePlot draws model time against m on dimension order's worst case.
func hypercubePlot(t *tour, g *tokendist.Graph, d int) error {
	ms := []int64{16, 64, 256, 1024, 4096}
	if t.quick {
		ms = []int64{4, 16, 64}
	}
	lines := []plot.Line{{Name: "NewDimensionOrderBalance"}, {Name: "NewHypercubeBalance"}, {Name: "NewHypercubeBalance upper bound"}}
	for _, m := range ms {
		loads, err := tokendist.DimensionOrderWorstLoads(d, m)
		if err != nil {
			return err
		}
		for i, mk := range []func(tokendist.Network, *tokendist.CubeOptions) (*tokendist.CubeBalancer, error){
			tokendist.NewDimensionOrderBalance, tokendist.NewHypercubeBalance,
		} {
			b, err := mk(g, nil)
			if err != nil {
				return err
			}
			res, err := tokendist.Run(context.Background(), g, loads, b, nil)
			if err != nil {
				return err
			}
			lines[i].X, lines[i].Y = append(lines[i].X, float64(m)), append(lines[i].Y, float64(res.Time))
		}
		ub, err := tokendist.HypercubeBalanceTimeBound(d, m)
		if err != nil {
			return err
		}
		lines[2].X, lines[2].Y = append(lines[2].X, float64(m)), append(lines[2].Y, float64(ub))
	}
	svg, err := plot.Lines(lines, &plot.Options{
		Title:  fmt.Sprintf("Hypercube(%d): model time on dimension order's worst case", d),
		XLabel: "largest load m", YLabel: "model time", LogX: true, LogY: true, Points: true})
	return t.savePlot("hypercube-time-vs-m.svg", svg, err)
}
