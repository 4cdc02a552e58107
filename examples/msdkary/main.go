// Command msdkary computes the maximum stable discrepancy MSD(T_{h,k}) of the complete
// k-ary tree of height h under THRESHOLD-1 (Houle, Symvonis and Wood, JPDC 2004,
// section 4.5) for every arity 2 ≤ k ≤ maxk and every height h whose tree has at most
// maxnodes nodes, from the closed form of SG_1(T_{h,k}) with tokendist.KaryTreeMSD (a
// bitset breadth-first search over Z_n, 3n/8 bytes). It is the data of issue 18 and of
// docs/proofs/msd-kary.md: MSD(T_{h,k}) is the covering radius of Z_n, n = |T_{h,k}|,
// under the 2h generators ±(k^j − 1)/(k − 1), j = 1..h.
//
// Rows are appended to <out>/msdkary.csv as they finish (cheapest first), so a long run
// can be read while it works; at the end the table is printed, checked against the
// proved bounds of docs/proofs/msd-kary.md, and plotted (<out>/msdkary.svg: MSD/(k−1)
// against h; <out>/msdkary-ratio.svg: MSD/h against k for the largest h computed).
//
//	go run ./examples/msdkary -quick                     # n ≤ 2^16, seconds
//	go run ./examples/msdkary -maxnodes 2147483646 -workers 1   # the issue-18 range (hours; < 1 GB)
//	go run ./examples/msdkary -from examples/msdkary/testdata/msdkary-issue18.csv   # the rows computed for issue 18
package main

import (
	"bufio"
	"encoding/csv"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/tokendist/tokendist"
	"github.com/tokendist/tokendist/plot"
)

type config struct {
	maxK, maxNodes, workers int
	out, from               string
	quick                   bool
}

// row is one tree of the table.
type row struct {
	K, H, N int
	MSD     int
	Seconds float64
}

func main() {
	var cfg config
	var maxNodes float64
	flag.IntVar(&cfg.maxK, "maxk", 64, "largest arity k")
	flag.Float64Var(&maxNodes, "maxnodes", 1<<26, "node limit (at most 2^31 − 2; 3n/8 bytes of memory)")
	flag.IntVar(&cfg.workers, "workers", 0, "search goroutines (0: all cores)")
	flag.BoolVar(&cfg.quick, "quick", false, "small table (n ≤ 2^16), for CI")
	flag.StringVar(&cfg.out, "out", "msdkary-out", "output folder for the CSV and SVG files")
	flag.StringVar(&cfg.from, "from", "", "read the rows from this msdkary.csv (of an earlier, longer run) instead of computing them")
	flag.Parse()
	cfg.maxNodes = int(maxNodes)
	if cfg.quick {
		cfg.maxNodes = min(cfg.maxNodes, 1<<16)
	}
	if err := run(cfg, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "msdkary:", err)
		os.Exit(1)
	}
}

// plan lists the trees, cheapest first.
func plan(cfg config) ([]row, error) {
	if cfg.maxK < 2 || cfg.maxNodes < 1 {
		return nil, fmt.Errorf("need maxk ≥ 2 and maxnodes ≥ 1, got %d and %d", cfg.maxK, cfg.maxNodes)
	}
	var cases []row
	for k := 2; k <= cfg.maxK; k++ {
		for h := 1; ; h++ {
			n, err := tokendist.KaryTreeOrder(tokendist.KaryShape{Height: h, Arity: k})
			if err != nil || n > cfg.maxNodes {
				break
			}
			cases = append(cases, row{K: k, H: h, N: n})
		}
	}
	sort.SliceStable(cases, func(i, j int) bool {
		wi := float64(cases[i].N) * float64(cases[i].H) * float64(cases[i].H*(cases[i].K-1)+2)
		wj := float64(cases[j].N) * float64(cases[j].H) * float64(cases[j].H*(cases[j].K-1)+2)
		return wi < wj
	})
	return cases, nil
}

func run(cfg config, w io.Writer) error {
	if err := os.MkdirAll(cfg.out, 0o755); err != nil {
		return err
	}
	if cfg.from != "" {
		rows, err := readCSV(cfg.from)
		if err != nil {
			return err
		}
		return report(cfg, rows, w)
	}
	cases, err := plan(cfg)
	if err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(cfg.out, "msdkary.csv"))
	if err != nil {
		return err
	}
	defer f.Close()
	cw := csv.NewWriter(f)
	_ = cw.Write([]string{"k", "h", "n", "msd", "seconds"})
	cw.Flush()
	rows := make([]row, 0, len(cases))
	for _, c := range cases {
		t0 := time.Now()
		m, err := tokendist.KaryTreeMSD(tokendist.KaryShape{Height: c.H, Arity: c.K}, &tokendist.MSDOptions{Workers: cfg.workers})
		if err != nil {
			return err
		}
		c.MSD, c.Seconds = m, time.Since(t0).Seconds()
		rows = append(rows, c)
		_ = cw.Write([]string{strconv.Itoa(c.K), strconv.Itoa(c.H), strconv.Itoa(c.N), strconv.Itoa(c.MSD), strconv.FormatFloat(c.Seconds, 'f', 3, 64)})
		cw.Flush()
		if err := cw.Error(); err != nil {
			return err
		}
	}
	return report(cfg, rows, w)
}

// readCSV reads the rows of an earlier run.
func readCSV(path string) ([]row, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		return nil, err
	}
	var rows []row
	for _, r := range recs[1:] {
		var v [4]int
		for i := range v {
			if v[i], err = strconv.Atoi(r[i]); err != nil {
				return nil, fmt.Errorf("%s: %w", path, err)
			}
		}
		sec, _ := strconv.ParseFloat(r[4], 64)
		rows = append(rows, row{K: v[0], H: v[1], N: v[2], MSD: v[3], Seconds: sec})
	}
	return rows, nil
}

// largeK is the observed large-arity law of docs/proofs/msd-kary.md (Conjecture 1):
// MSD(T_{h,k}) = ⌊((k−2)h + 4 + [h odd])/2⌋ for h ≥ 2 and k ≥ 2h − 5 (h = 1: ⌈k/2⌉).
func largeK(k, h int) int {
	if h == 1 {
		return (k + 1) / 2
	}
	return ((k-2)*h + 4 + h%2) / 2
}

// report prints, checks and plots the rows.
func report(cfg config, rows []row, w io.Writer) error {
	sort.Slice(rows, func(i, j int) bool {
		if rows[i].K != rows[j].K {
			return rows[i].K < rows[j].K
		}
		return rows[i].H < rows[j].H
	})
	bw := bufio.NewWriter(w)
	defer bw.Flush()
	if cfg.quick {
		fmt.Fprintf(bw, "PARTIAL TABLE (-quick): trees with at most %d nodes.\n\n", cfg.maxNodes)
	}
	tw := tabwriter.NewWriter(bw, 2, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "k\th\tn\tMSD\tlower bound\tupper bound\t⌊(k-1)h/2⌋\tlarge-k law\tseconds\t")
	bad, inRegime, lawHolds := 0, 0, 0
	for _, r := range rows {
		lo, hi := lowerBound(r.K, r.H), upperBound(r.K, r.H)
		if r.MSD < lo || r.MSD > hi {
			bad++
		}
		law := largeK(r.K, r.H)
		if r.K >= 2*r.H-5 {
			inRegime++
			if law == r.MSD {
				lawHolds++
			}
		}
		fmt.Fprintf(tw, "%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%.3f\t\n", r.K, r.H, r.N, r.MSD, lo, hi, (r.K-1)*r.H/2, law, r.Seconds)
	}
	tw.Flush()
	fmt.Fprintf(bw, "\n%d trees; the bounds of docs/proofs/msd-kary.md fail on %d of them.\n", len(rows), bad)
	fmt.Fprintf(bw, "Large-k law ⌊((k−2)h + 4 + [h odd])/2⌋ (h ≥ 2; ⌈k/2⌉ for h = 1) on the %d trees with k ≥ 2h − 5: holds on %d.\n", inRegime, lawHolds)
	if bad > 0 {
		return fmt.Errorf("%d trees violate the proved bounds", bad)
	}
	return writePlot(cfg.out, rows)
}

// upperBound is the proved upper bound of docs/proofs/msd-kary.md (Lemma 17).
func upperBound(k, h int) int { return msdUpper(k, h) }

// lowerBound is the proved lower bound of docs/proofs/msd-kary.md (Proposition 3).
func lowerBound(k, h int) int { return msdLower(k, h) }

// plot draws MSD/(k−1) against h for some arities, and MSD/h against k.
func writePlot(out string, rows []row) error {
	byK := map[int]*plot.Line{}
	var ks []int
	for _, r := range rows {
		l := byK[r.K]
		if l == nil {
			l = &plot.Line{Name: fmt.Sprintf("k = %d", r.K)}
			byK[r.K] = l
			ks = append(ks, r.K)
		}
		l.X, l.Y = append(l.X, float64(r.H)), append(l.Y, float64(r.MSD)/float64(r.K-1))
	}
	sort.Ints(ks)
	var lines []plot.Line
	for _, k := range ks {
		if k <= 4 || k == 8 || k == 16 || k == 32 || k == 64 {
			lines = append(lines, *byK[k])
		}
	}
	svg, err := plot.Lines(lines, &plot.Options{Title: "MSD(T_{h,k}) / (k−1) against h", XLabel: "height h", YLabel: "MSD / (k−1)", Points: true})
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(out, "msdkary.svg"), svg, 0o644); err != nil {
		return err
	}
	// MSD/((k−1)h) at the largest height computed for each k.
	ratio := plot.Line{Name: "MSD / ((k−1)h), largest h"}
	for _, k := range ks {
		l := byK[k]
		i := len(l.X) - 1
		ratio.X, ratio.Y = append(ratio.X, float64(k)), append(ratio.Y, l.Y[i]/l.X[i])
	}
	svg, err = plot.Lines([]plot.Line{ratio}, &plot.Options{Title: "MSD(T_{h,k}) / ((k−1)h) at the largest h computed", XLabel: "arity k", YLabel: "MSD / ((k−1)h)", Points: true})
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(out, "msdkary-ratio.svg"), svg, 0o644)
}
