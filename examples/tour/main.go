// Command tour runs every paper's algorithm on a sensible default network and workload,
// prints a compact table per paper (what ran, final discrepancy or completion time,
// steps, model time, tokens moved, the bound the paper proves and whether it held) and
// writes SVG plots into an output folder (default out/tour) that it names at the start
// and at the end.
//
//	go run ./examples/tour            # full tour, about a minute on two cores; plots in out/tour
//	                                  # (relative to the working directory; ignored by git)
//	go run ./examples/tour -quick     # small sizes (CI)
//	go run ./examples/tour -out plots -seed 7
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"
	"time"
)

// section is one paper's part of the tour; each lives in its own file and registers
// itself in init.
type section struct {
	order int
	title string
	run   func(t *tour) error
}

var sections []section

func register(s section) { sections = append(sections, s) }

// tour carries the flags and helpers every section uses.
type tour struct {
	seed   uint64
	quick  bool
	out    string
	plots  []string
	failed []string
}

// table prints rows under a header, aligned.
func (t *tour) table(header []string, rows [][]string) {
	w := tabwriter.NewWriter(os.Stdout, 2, 0, 2, ' ', 0)
	fmt.Fprintln(w, "  "+strings.Join(header, "\t"))
	for _, r := range rows {
		fmt.Fprintln(w, "  "+strings.Join(r, "\t"))
	}
	w.Flush()
}

// held formats a bound check and remembers failures for the final summary.
func (t *tour) held(what string, ok bool) string {
	if ok {
		return "yes"
	}
	t.failed = append(t.failed, what)
	return "NO"
}

// savePlot writes an SVG into the output folder.
func (t *tour) savePlot(name string, svg []byte, err error) error {
	if err != nil {
		return err
	}
	path := filepath.Join(t.out, name)
	if err := os.WriteFile(path, svg, 0o644); err != nil {
		return err
	}
	t.plots = append(t.plots, path)
	return nil
}

// progress prints a progress line that the next one overwrites (only on a terminal).
func (t *tour) progress(format string, args ...any) {
	if fi, err := os.Stderr.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
		fmt.Fprintf(os.Stderr, "\r\033[K"+format, args...)
	}
}

func (t *tour) progressDone() { t.progress("") }

func main() {
	t := &tour{}
	flag.Uint64Var(&t.seed, "seed", 1, "seed for every random choice")
	flag.BoolVar(&t.quick, "quick", false, "small sizes, for CI")
	flag.StringVar(&t.out, "out", filepath.Join("out", "tour"), "folder for the SVG plots")
	flag.Parse()
	if err := os.MkdirAll(t.out, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "tour:", err)
		os.Exit(1)
	}
	if abs, err := filepath.Abs(t.out); err == nil {
		t.out = abs
	}
	fmt.Printf("Plots go to %s\n", t.out)
	sort.Slice(sections, func(i, j int) bool { return sections[i].order < sections[j].order })
	start := time.Now()
	exit := 0
	for _, s := range sections {
		fmt.Printf("\n== %s\n", s.title)
		t0 := time.Now()
		if err := s.run(t); err != nil {
			fmt.Fprintf(os.Stderr, "tour: %s: %v\n", s.title, err)
			exit = 1
		}
		t.progressDone()
		fmt.Printf("  (%.1fs)\n", time.Since(t0).Seconds())
	}
	fmt.Printf("\nTour finished in %.1fs. %d plots in %s/\n", time.Since(start).Seconds(), len(t.plots), t.out)
	for _, p := range t.plots {
		fmt.Println("  ", p)
	}
	if len(t.failed) > 0 {
		fmt.Printf("Bounds that did not hold: %s\n", strings.Join(t.failed, "; "))
		exit = 1
	}
	os.Exit(exit)
}
