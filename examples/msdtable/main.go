// Command msdtable settles, far beyond the paper, Houle, Symvonis and Wood's conjecture
// (JPDC 2004, end of section 4.5) that the maximum stable discrepancy of the complete
// k-ary tree of height h under THRESHOLD-1 is ⌊(k-1)h/2⌋ or ⌊(k-1)h/2⌋ + 1. The paper
// confirmed it for binary trees with h ≤ 18 and for h, k ≤ 6.
//
// It computes MSD(T_{h,k}) for every complete binary tree with fewer than 2^31 nodes
// (h ≤ 30) and every complete k-ary tree with 3 ≤ k ≤ 16 and at most 2^28 nodes (and
// paths, k = 1, up to h = 64), from the closed form of SG_1(T_{h,k}) with
// tokendist.GapMSD: a bitset breadth-first search over Z_n that needs 3n/8 bytes, so the
// trees are never built. It prints the table, writes it as CSV, plots MSD against h,
// lists every case where the conjecture fails, checks the closed form against the
// graph-built SG_1 on the small trees, and times the search against the paper's
// O(n²·MSD) set building where that finishes.
//
//	go run ./examples/msdtable              # full table: about 1.5 minutes on two cores, < 1 GB
//	go run ./examples/msdtable -quick       # partial table (n ≤ 2^16), a few seconds
//	go run ./examples/msdtable -maxnodes 1e6 -maxbinary 24
package main

import (
	"encoding/csv"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/tokendist/tokendist"
	"github.com/tokendist/tokendist/plot"
)

type config struct {
	maxBinary int     // largest binary height (n = 2^(h+1) - 1 < 2^31: h ≤ 30)
	maxNodes  int     // node limit for k ≥ 3
	maxK      int     // largest k
	maxPath   int     // largest path height (k = 1)
	checkN    int     // closed form checked against the built tree up to this many nodes
	baseline  []int   // binary heights for the O(n²·MSD) comparison
	seed      uint64  // seed of the random tree in the comparison
	randomN   int     // size of that random tree
	workers   int     // search workers (0: all cores)
	quick     bool    // partial table
	out       string  // output folder
	interval  float64 // seconds between progress lines when stderr is not a terminal
}

// row is one tree of the table.
type row struct {
	K, H, N  int
	Gaps     int // |SG_1|
	MSD      int
	Lo       int // ⌊(k-1)h/2⌋
	Holds    bool
	Lemma17  int
	Theorem  int // Theorem 16's bound
	Seconds  float64
	workUnit float64
}

func main() {
	cfg := config{}
	var maxNodes float64
	flag.IntVar(&cfg.maxBinary, "maxbinary", 30, "largest height of the binary trees (30: 2^31 - 1 nodes)")
	flag.Float64Var(&maxNodes, "maxnodes", 1<<28, "node limit for the k-ary trees with k ≥ 3")
	flag.IntVar(&cfg.maxK, "maxk", 16, "largest arity k")
	flag.IntVar(&cfg.maxPath, "maxpath", 64, "largest height of the paths (k = 1)")
	flag.Uint64Var(&cfg.seed, "seed", 1, "seed of the random tree in the baseline comparison")
	flag.IntVar(&cfg.workers, "workers", 0, "search goroutines (0: all cores)")
	flag.BoolVar(&cfg.quick, "quick", false, "partial table (n ≤ 2^16), for CI")
	flag.StringVar(&cfg.out, "out", filepath.Join("out", "msdtable"), "output folder for the CSV and SVG files")
	flag.Parse()
	cfg.maxNodes = int(maxNodes)
	cfg.checkN, cfg.baseline, cfg.randomN, cfg.interval = 1<<17, []int{9, 10, 11, 12}, 3000, 2
	if cfg.quick {
		cfg.maxBinary, cfg.maxNodes, cfg.maxPath = min(cfg.maxBinary, 15), min(cfg.maxNodes, 1<<16), min(cfg.maxPath, 16)
		cfg.checkN, cfg.baseline, cfg.randomN = 1<<12, []int{7, 8}, 300
	}
	if err := run(cfg, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "msdtable:", err)
		os.Exit(1)
	}
}

func run(cfg config, stdout, stderr io.Writer) error {
	if err := os.MkdirAll(cfg.out, 0o755); err != nil {
		return err
	}
	cases, err := plan(cfg)
	if err != nil {
		return err
	}
	if cfg.quick {
		fmt.Fprintf(stdout, "PARTIAL TABLE (-quick): binary trees up to h = %d, k-ary trees up to %d nodes. Run without -quick for the full table.\n\n", cfg.maxBinary, cfg.maxNodes)
	}
	if err := checkClosedForm(cases, cfg.checkN, stdout); err != nil {
		return err
	}
	rows, err := compute(cases, cfg, newProgress(stderr, cfg.interval))
	if err != nil {
		return err
	}
	printTable(stdout, rows)
	if err := writeCSV(filepath.Join(cfg.out, "msdtable.csv"), rows); err != nil {
		return err
	}
	report(stdout, rows, cfg)
	if err := plotTable(cfg.out, rows); err != nil {
		return err
	}
	if err := compareBaseline(stdout, cfg); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "\nWrote %s, %s and %s.\n", filepath.Join(cfg.out, "msdtable.csv"),
		filepath.Join(cfg.out, "msd-vs-height.svg"), filepath.Join(cfg.out, "msd-excess.svg"))
	return nil
}

// plan lists the trees of the table, cheapest first, with an estimate of their work
// (|SG_1| · n/64 word operations per level, about ⌊(k-1)h/2⌋ + 1 levels).
func plan(cfg config) ([]row, error) {
	var cases []row
	add := func(k, h int) error {
		n, sg1, err := tokendist.KaryTreeStableGaps(tokendist.KaryShape{Height: h, Arity: k})
		if err != nil {
			return err
		}
		lo := (k - 1) * h / 2
		cases = append(cases, row{K: k, H: h, N: n, Gaps: len(sg1), Lo: lo,
			workUnit: float64(len(sg1))*float64(n)/64*float64(lo+2) + float64(n)})
		return nil
	}
	for h := 1; h <= cfg.maxPath; h++ {
		if err := add(1, h); err != nil {
			return nil, err
		}
	}
	for h := 1; h <= cfg.maxBinary; h++ {
		if err := add(2, h); err != nil {
			return nil, err
		}
	}
	for k := 3; k <= cfg.maxK; k++ {
		for h := 1; ; h++ {
			n, err := tokendist.KaryTreeOrder(tokendist.KaryShape{Height: h, Arity: k})
			if err != nil || n > cfg.maxNodes {
				break
			}
			if err := add(k, h); err != nil {
				return nil, err
			}
		}
	}
	sort.SliceStable(cases, func(i, j int) bool { return cases[i].workUnit < cases[j].workUnit })
	return cases, nil
}

// checkClosedForm compares the closed-form SG_1 with the one of the built tree.
func checkClosedForm(cases []row, maxN int, w io.Writer) error {
	checked := 0
	for _, c := range cases {
		if c.N > maxN {
			continue
		}
		g, err := tokendist.KaryTree(tokendist.KaryShape{Height: c.H, Arity: c.K})
		if err != nil {
			return err
		}
		built, err := tokendist.StableGaps(g)
		if err != nil {
			return err
		}
		_, closed, err := tokendist.KaryTreeStableGaps(tokendist.KaryShape{Height: c.H, Arity: c.K})
		if err != nil {
			return err
		}
		if !slices.Equal(built, closed) {
			return fmt.Errorf("closed-form SG_1 of T_{%d,%d} differs from the built tree's: %v vs %v", c.H, c.K, closed, built)
		}
		checked++
	}
	fmt.Fprintf(w, "Closed-form SG_1(T_{h,k}) equals the graph-built SG_1 on all %d trees with at most %d nodes.\n\n", checked, maxN)
	return nil
}

// compute runs the searches, reporting progress with an ETA.
func compute(cases []row, cfg config, pr *progress) ([]row, error) {
	total := 0.0
	for _, c := range cases {
		total += c.workUnit
	}
	pr.start(total)
	rows := make([]row, 0, len(cases))
	for i, c := range cases {
		_, sg1, err := tokendist.KaryTreeStableGaps(tokendist.KaryShape{Height: c.H, Arity: c.K})
		if err != nil {
			return nil, err
		}
		t0 := time.Now()
		opts := &tokendist.MSDOptions{Workers: cfg.workers, Progress: func(level, reached int) {
			pr.level(i+1, len(cases), c, level, reached)
		}}
		msd, err := tokendist.GapMSD(c.N, sg1, opts)
		if err != nil {
			return nil, err
		}
		c.Seconds = time.Since(t0).Seconds()
		c.MSD = msd
		c.Holds = msd == c.Lo || msd == c.Lo+1
		if c.Lemma17, err = tokendist.KaryTreeBound(tokendist.KaryShape{Height: c.H, Arity: c.K}); err != nil {
			return nil, err
		}
		D := c.K + 1 // the maximum degree of T_{h,k}: the root has k children, inner nodes k+1 neighbours
		if c.H == 1 {
			D = c.K
		}
		b, err := tokendist.Threshold1Bound(c.N, D)
		if err != nil {
			return nil, err
		}
		c.Theorem = b.Bound
		rows = append(rows, c)
		pr.done(c.workUnit)
	}
	pr.finish()
	sort.Slice(rows, func(i, j int) bool {
		if rows[i].K != rows[j].K {
			return rows[i].K < rows[j].K
		}
		return rows[i].H < rows[j].H
	})
	return rows, nil
}

func printTable(w io.Writer, rows []row) {
	tw := tabwriter.NewWriter(w, 2, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "k\th\tn\t|SG_1|\tMSD\t⌊(k-1)h/2⌋\tconjecture\tLemma 17\tTheorem 16\tseconds\t")
	for _, r := range rows {
		fmt.Fprintf(tw, "%d\t%d\t%d\t%d\t%d\t%d\t%s\t%d\t%d\t%.3f\t\n", r.K, r.H, r.N, r.Gaps, r.MSD, r.Lo,
			map[bool]string{true: "holds", false: "FAILS"}[r.Holds], r.Lemma17, r.Theorem, r.Seconds)
	}
	tw.Flush()
}

func writeCSV(path string, rows []row) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := csv.NewWriter(f)
	_ = w.Write([]string{"k", "h", "n", "sg1_size", "msd", "conj_lo", "conj_hi", "conjecture_holds", "lemma17_bound", "theorem16_bound", "seconds"})
	for _, r := range rows {
		_ = w.Write([]string{strconv.Itoa(r.K), strconv.Itoa(r.H), strconv.Itoa(r.N), strconv.Itoa(r.Gaps),
			strconv.Itoa(r.MSD), strconv.Itoa(r.Lo), strconv.Itoa(r.Lo + 1), strconv.FormatBool(r.Holds),
			strconv.Itoa(r.Lemma17), strconv.Itoa(r.Theorem), strconv.FormatFloat(r.Seconds, 'f', 4, 64)})
	}
	w.Flush()
	if err := w.Error(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// report summarises the conjecture, the bounds and the excess MSD - ⌊(k-1)h/2⌋.
func report(w io.Writer, rows []row, cfg config) {
	var fails []string
	boundViolations := 0
	excess := map[int]int{}
	for _, r := range rows {
		if !r.Holds {
			fails = append(fails, fmt.Sprintf("T_{%d,%d} (n = %d): MSD = %d, conjecture says %d or %d", r.H, r.K, r.N, r.MSD, r.Lo, r.Lo+1))
		}
		if r.MSD > r.Lemma17 || r.MSD > r.Theorem {
			boundViolations++
		}
		excess[r.MSD-r.Lo]++
	}
	fmt.Fprintf(w, "\n%d trees: binary h ≤ %d, k = 3..%d with n ≤ %d, paths h ≤ %d.\n", len(rows), cfg.maxBinary, cfg.maxK, cfg.maxNodes, cfg.maxPath)
	var ex []string
	keys := mapsKeys(excess)
	sort.Ints(keys)
	for _, d := range keys {
		ex = append(ex, fmt.Sprintf("%d: %d trees", d, excess[d]))
	}
	fmt.Fprintf(w, "MSD - ⌊(k-1)h/2⌋ over the table: %s.\n", strings.Join(ex, ", "))
	fmt.Fprintf(w, "Lemma 17 and Theorem 16 violated: %d times.\n", boundViolations)
	if len(fails) == 0 {
		fmt.Fprintf(w, "The conjecture MSD(T_{h,k}) ∈ {⌊(k-1)h/2⌋, ⌊(k-1)h/2⌋ + 1} holds for every tree of the table.\n")
		return
	}
	fmt.Fprintf(w, "The conjecture FAILS for %d trees:\n", len(fails))
	for _, f := range fails {
		fmt.Fprintln(w, "  ", f)
	}
}

func mapsKeys(m map[int]int) []int {
	var ks []int
	for k := range m {
		ks = append(ks, k)
	}
	return ks
}

func plotTable(out string, rows []row) error {
	byK := map[int]*[2]plot.Line{}
	var ks []int
	for _, r := range rows {
		if r.K == 1 {
			continue
		}
		l := byK[r.K]
		if l == nil {
			name := fmt.Sprintf("k = %d", r.K)
			l = &[2]plot.Line{{Name: name}, {Name: name}}
			byK[r.K] = l
			ks = append(ks, r.K)
		}
		l[0].X, l[0].Y = append(l[0].X, float64(r.H)), append(l[0].Y, float64(r.MSD)/float64(r.K-1))
		l[1].X, l[1].Y = append(l[1].X, float64(r.H)), append(l[1].Y, float64(r.MSD-r.Lo))
	}
	sort.Ints(ks)
	var norm, exc []plot.Line
	for _, k := range ks {
		if k <= 6 || k%4 == 0 {
			norm = append(norm, byK[k][0])
			exc = append(exc, byK[k][1])
		}
	}
	var half plot.Line
	half.Name = "h/2"
	for h := 0; h <= 30; h++ {
		half.X, half.Y = append(half.X, float64(h)), append(half.Y, float64(h)/2)
	}
	norm = append(norm, half)
	svg, err := plot.Lines(norm, &plot.Options{Title: "MSD(T_{h,k}) / (k-1) against h", XLabel: "height h", YLabel: "MSD / (k-1)", Points: true})
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(out, "msd-vs-height.svg"), svg, 0o644); err != nil {
		return err
	}
	svg, err = plot.Lines(exc, &plot.Options{Title: "MSD(T_{h,k}) - ⌊(k-1)h/2⌋ (conjecture: 0 or 1)", XLabel: "height h", YLabel: "excess", Points: true})
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(out, "msd-excess.svg"), svg, 0o644)
}

// paperMSD is the procedure at the end of the paper's section 4.3: SG_i from SG_{i-1}
// by equation (4), testing every pair (p, q) of Z_n, O(n²) per level.
func paperMSD(n int, sg1 []int) int {
	if n == 1 {
		return 0
	}
	in1 := make([]bool, n)
	for _, p := range sg1 {
		in1[p] = true
	}
	cur := slices.Clone(in1)
	for i := 1; ; i++ {
		full := true
		for p := 1; p < n; p++ {
			full = full && cur[p]
		}
		if full {
			return i
		}
		nxt := slices.Clone(cur)
		for p := 0; p < n; p++ {
			for q := 0; q < n; q++ {
				if cur[p] && in1[q] {
					nxt[(p+q)%n] = true
				}
			}
		}
		cur = nxt
	}
}

// compareBaseline times GapMSD against paperMSD on trees where the latter finishes.
func compareBaseline(w io.Writer, cfg config) error {
	type tc struct {
		name string
		g    *tokendist.Graph
	}
	var trees []tc
	for _, h := range cfg.baseline {
		g, err := tokendist.KaryTree(tokendist.KaryShape{Height: h, Arity: 2})
		if err != nil {
			return err
		}
		trees = append(trees, tc{fmt.Sprintf("T_{%d,2}", h), g})
	}
	g, err := tokendist.RandomTree(cfg.randomN, cfg.seed)
	if err != nil {
		return err
	}
	trees = append(trees, tc{fmt.Sprintf("RandomTree(%d, seed %d)", cfg.randomN, cfg.seed), g})
	fmt.Fprintln(w, "\nBitset search against the paper's O(n²·MSD) set building (one run each):")
	tw := tabwriter.NewWriter(w, 2, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "tree\tn\tMSD\tbitset search\tpaper O(n²·MSD)\tratio\t")
	for _, t := range trees {
		sg1, err := tokendist.StableGaps(t.g)
		if err != nil {
			return err
		}
		n := t.g.Order()
		t0 := time.Now()
		fast, err := tokendist.GapMSD(n, sg1, &tokendist.MSDOptions{Workers: cfg.workers})
		if err != nil {
			return err
		}
		d1 := time.Since(t0)
		t0 = time.Now()
		slow := paperMSD(n, sg1)
		d2 := time.Since(t0)
		if fast != slow {
			return fmt.Errorf("%s: bitset search gives MSD %d, the paper's procedure %d", t.name, fast, slow)
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%v\t%v\t%.0f×\t\n", t.name, n, fast, d1.Round(time.Microsecond), d2.Round(time.Microsecond), d2.Seconds()/d1.Seconds())
	}
	return tw.Flush()
}

// progress prints the search's progress with an ETA on stderr: overwritten lines on a
// terminal, otherwise one line every interval seconds.
type progress struct {
	w        io.Writer
	tty      bool
	interval time.Duration
	t0       time.Time
	last     time.Time
	total    float64
	doneWork float64
}

func newProgress(w io.Writer, interval float64) *progress {
	p := &progress{w: w, interval: time.Duration(interval * float64(time.Second))}
	if f, ok := w.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			p.tty = true
			p.interval = 200 * time.Millisecond
		}
	}
	return p
}

func (p *progress) start(total float64) {
	p.t0, p.last, p.total = time.Now(), time.Now(), total
}

func (p *progress) level(i, of int, c row, level, reached int) {
	if time.Since(p.last) < p.interval {
		return
	}
	p.last = time.Now()
	frac := float64(reached) / float64(c.N)
	done := p.doneWork + frac*c.workUnit
	el := time.Since(p.t0)
	eta := "?"
	if done > 0 {
		eta = time.Duration(float64(el) * (p.total - done) / done).Round(time.Second).String()
	}
	line := fmt.Sprintf("[%d/%d] T_{%d,%d} n=%d: level %d, %.1f%% of Z_n reached | %.1f%% of the work, elapsed %v, ETA %s",
		i, of, c.H, c.K, c.N, level, 100*frac, 100*done/p.total, el.Round(time.Second), eta)
	if p.tty {
		fmt.Fprintf(p.w, "\r\033[K%s", line)
	} else {
		fmt.Fprintln(p.w, line)
	}
}

func (p *progress) done(work float64) { p.doneWork += work }

func (p *progress) finish() {
	if p.tty {
		fmt.Fprint(p.w, "\r\033[K")
	}
	fmt.Fprintf(p.w, "searches finished in %v\n", time.Since(p.t0).Round(time.Millisecond))
}
