package tokendist_test

// The adversarial tables of the surfaces around the core (issue 27): the tokendist
// command and its files, the results database, merge and shards, the registry,
// workloads, churn, plots and user callbacks in sweeps. Every case runs in a child
// process like the core's (adversarial_test.go); its name is "S.<surface>/...", and
// TestAdversarial prints the counts per surface. A case that loses or duplicates stored
// data returns advLost, counted apart from other wrong results.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/tokendist/tokendist"
	"github.com/tokendist/tokendist/experiment"
	"github.com/tokendist/tokendist/plot"
	"github.com/tokendist/tokendist/registry"
)

// advLost marks stored data lost, duplicated or written where it must not be.
func advLost(format string, args ...any) error {
	return &advWrongError{"data loss: " + fmt.Sprintf(format, args...)}
}

// advHuge stands for strings.Repeat(unit, n) in a table, expanded by advExpand only when
// the case runs, so that building the table (in every child) stays cheap.
func advHuge(unit string, n int) string { return fmt.Sprintf("\x00huge:%d:%s", n, unit) }

func advExpand(s string) string {
	rest, ok := strings.CutPrefix(s, "\x00huge:")
	if !ok {
		return s
	}
	ns, unit, _ := strings.Cut(rest, ":")
	var n int
	fmt.Sscan(ns, &n)
	return strings.Repeat(unit, n)
}

// advExpectation of a command: it must succeed, must fail, or may do either cleanly.
type advExpectation int

const (
	advMustFail advExpectation = iota
	advMustSucceed
	advEither
)

// advProgress are the prefixes of the command's progress and summary lines on stderr.
var advProgress = []string{"tokendist: ", "sweep: ", "sweep ", "merge: ", "[", "\r"}

// advRunCmd runs the command in this (child) process with reg (nil: the default
// registry) and judges its exit status and stderr: every stderr line is prefixed (or a
// progress line), a failure's first error line is returned as the case's clean error,
// success returns nil, and an exit status against want is a wrong result.
func advRunCmd(reg *registry.Registry, want advExpectation, args ...string) (string, error) {
	if reg == nil {
		reg = registry.New()
	}
	var out, errb bytes.Buffer
	code := experiment.Main(reg, args, &out, &errb)
	first := ""
	for _, line := range strings.Split(errb.String(), "\n") {
		if line == "" {
			continue
		}
		ok := false
		for _, p := range advProgress {
			ok = ok || strings.HasPrefix(line, p)
		}
		if !ok {
			return out.String(), errors.New(line) // unprefixed
		}
		if len(line) > 2000 && !strings.Contains(line, "panicked") {
			return out.String(), errors.New(line) // the harness reports it as an over-long error
		}
		if first == "" && strings.HasPrefix(line, "tokendist: ") {
			first = line
		}
	}
	switch {
	case code == 0 && want == advMustFail:
		return out.String(), advWrong("exit 0 for a bad input (%v)", advArgs(args))
	case code != 0 && want == advMustSucceed:
		return out.String(), advWrong("exit %d for a good input (%v): %s", code, advArgs(args), advShort(errb.String()))
	case code != 0 && first == "":
		return out.String(), advWrong("exit %d without an error message", code)
	case code != 0:
		return out.String(), errors.New(first)
	}
	return out.String(), nil
}

func advArgs(args []string) string {
	s := strings.Join(args, " ")
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return s
}

// advDir makes a temporary directory for one case (the child removes it at exit).
func advDir() string {
	d, err := os.MkdirTemp("", "tdadv")
	if err != nil {
		panic(err)
	}
	return d
}

func advWrite(path, text string) string {
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		panic(err)
	}
	return path
}

// advBase is a small valid experiment of 4 runs (2 algorithms × 2 seeds).
const advBase = `name: adv
networks:
  - name: ring
    n: 8
loads:
  - name: point-mass
    tokens: 40
algorithms: [randomized-diffusion, rsw-diffusion]
stop:
  max_steps: 30
seeds: 2
`

// advCountRuns returns the runs stored at path and whether a key is stored twice.
func advCountRuns(path string) (int, error) {
	db, err := experiment.OpenDBReadOnly(path)
	if err != nil {
		return 0, err
	}
	defer db.Close()
	_, rows, err := db.Query("")
	if err != nil {
		return 0, err
	}
	seen := map[any]bool{}
	for _, r := range rows {
		if seen[r[0]] {
			return 0, advLost("key %v stored twice", r[0])
		}
		seen[r[0]] = true
	}
	return len(rows), nil
}

func advHash(path string) string {
	fi, err := os.Stat(path)
	if err != nil {
		return "missing"
	}
	if !fi.Mode().IsRegular() {
		return fi.Mode().String()
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "missing"
	}
	s := sha256.Sum256(b)
	return fmt.Sprintf("%x", s[:8])
}

// advSweepOK sweeps advBase (or text) into db and checks that want runs are stored.
func advSweepOK(reg *registry.Registry, dir, db, text string, want int, extra ...string) error {
	f := advWrite(filepath.Join(dir, "exp.yaml"), text)
	args := append([]string{"sweep", "--progress", "none", "--db", db}, extra...)
	if _, err := advRunCmd(reg, advMustSucceed, append(args, f)...); err != nil {
		return err
	}
	n, err := advCountRuns(db)
	if err != nil {
		return advLost("the sweep succeeded but its database %s cannot be read: %v", db, err)
	}
	if n != want {
		return advLost("%d runs stored in %s, want %d", n, db, want)
	}
	return nil
}

// advSurfaceCases returns the tables of every surface.
func advSurfaceCases() []advCase {
	var cs []advCase
	add := func(surface, name string, run func() error) {
		cs = append(cs, advCase{"S." + surface + "/" + name, run})
	}
	advCmdCases(add)
	advDBCases(add)
	advMergeCases(add)
	advMergePolicyCases(add)
	advShardCases(add)
	advRegistryCases(add)
	advWorkloadCases(add)
	advChurnCases(add)
	advPlotCases(add)
	advCallbackCases(add)
	return cs
}

// advFIFO makes a FIFO in dir (no case opens it for writing: a reader that waits for a
// writer hangs, which the harness reports).
func advFIFO(dir string) string {
	p := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		panic(err)
	}
	return p
}

// advSpecialFiles are paths that are not regular files, and files too large or odd.
func advSpecialFiles(dir string) map[string]func() string {
	return map[string]func() string{
		"dev-zero":    func() string { return "/dev/zero" },
		"dev-urandom": func() string { return "/dev/urandom" },
		"dev-null":    func() string { return "/dev/null" },
		"fifo":        func() string { return advFIFO(dir) },
		"directory":   func() string { return dir },
		"missing":     func() string { return filepath.Join(dir, "missing") },
		"empty":       func() string { return advWrite(filepath.Join(dir, "empty"), "") },
		"nul-bytes":   func() string { return advWrite(filepath.Join(dir, "nul"), strings.Repeat("\x00", 1<<16)) },
		"binary": func() string {
			return advWrite(filepath.Join(dir, "bin"), string(bytes.Repeat([]byte{0xff, 0xfe, 0x80, 0x0a}, 1<<14)))
		},
		"17MiB":     func() string { return advWrite(filepath.Join(dir, "big"), strings.Repeat("# comment\n", 17<<20/10)) },
		"long-path": func() string { return filepath.Join(dir, strings.Repeat("p", 5000)) },
		"1MiB-path": func() string { return strings.Repeat("/x", 1<<19) },
		"long-line": func() string { return advWrite(filepath.Join(dir, "line"), strings.Repeat("1", 3<<20)) },
	}
}

// advHostileYAML are experiment files, each a bad or borderline input.
func advHostileYAML() map[string]func() string {
	seeds300k := func() string {
		var b strings.Builder
		b.WriteString("seeds: [")
		for i := 0; i < 300000; i++ {
			if i > 0 {
				b.WriteString(",")
			}
			fmt.Fprint(&b, i)
		}
		b.WriteString("]\n")
		return b.String()
	}
	axis := func() string {
		return "networks:\n  - name: ring\n    n: [" + strings.TrimSuffix(strings.Repeat("8,", 1000000), ",") + "]\nloads:\n  - name: point-mass\n    tokens: 9\nalgorithms: [rsw-diffusion]\n"
	}
	bomb := "a: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\ne: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\nf: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]\ng: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f, *f]\nh: [*g, *g, *g, *g, *g, *g, *g, *g, *g, *g]\n"
	deep := func() string { return strings.Repeat("[", 100000) + strings.Repeat("]", 100000) }
	base := func(repl ...string) string {
		s := advBase
		for i := 0; i+1 < len(repl); i += 2 {
			s = strings.Replace(s, repl[i], repl[i+1], 1)
		}
		return s
	}
	return map[string]func() string{
		"million-seeds":   func() string { return base("seeds: 2", "seeds: 1000000") },
		"seeds-2^40":      func() string { return base("seeds: 2", "seeds: 1099511627776") },
		"seeds-negative":  func() string { return base("seeds: 2", "seeds: -1") },
		"seeds-300k-list": func() string { return base("seeds: 2\n", seeds300k()) },
		"seeds-repeated":  func() string { return base("seeds: 2", "seeds: [1, 1]") },
		"axis-1e6-equal":  axis,
		"grid-over-cap": func() string {
			return base("seeds: 2", "seeds: 1048576", "n: 8", "n: [8, 9, 10, 11, 12, 13, 14, 15, 16]")
		},
		"grid-product": func() string {
			return base("n: 8", "n: ["+strings.TrimSuffix(strings.Repeat("8,", 3000), ",")+"]", "tokens: 40", "tokens: ["+strings.TrimSuffix(strings.Repeat("40,", 3000), ",")+"]")
		},
		"yaml-bomb":      func() string { return bomb },
		"deep-nesting":   deep,
		"1MiB-name":      func() string { return base("name: adv", "name: "+strings.Repeat("n", 1<<20)) },
		"1MiB-key":       func() string { return strings.Repeat("k", 1<<20) + ": 1\n" + advBase },
		"1MiB-value":     func() string { return base("n: 8", "n: "+strings.Repeat("9", 1<<20)) },
		"1MiB-algorithm": func() string { return base("rsw-diffusion", strings.Repeat("a", 1<<20)) },
		"n-huge":         func() string { return base("n: 8", "n: 100000000000") },
		"n-maxint":       func() string { return base("n: 8", "n: 9223372036854775807") },
		"n-overflow":     func() string { return base("n: 8", "n: 99999999999999999999999") },
		"n-negative":     func() string { return base("n: 8", "n: -8") },
		"n-float":        func() string { return base("n: 8", "n: 8.5") },
		"n-nan":          func() string { return base("n: 8", "n: .nan") },
		"n-inf":          func() string { return base("n: 8", "n: .inf") },
		"n-string":       func() string { return base("n: 8", "n: eight") },
		"n-null":         func() string { return base("n: 8", "n: ~") },
		"n-mapping":      func() string { return base("n: 8", "n: {a: 1}") },
		"tokens-maxint":  func() string { return base("tokens: 40", "tokens: 9223372036854775807") },
		"max-steps-maxint": func() string {
			return base("max_steps: 30", "max_steps: 9223372036854775807", "[randomized-diffusion, rsw-diffusion]", "[threshold-2]")
		},
		"max-steps-negative": func() string { return base("max_steps: 30", "max_steps: -1") },
		"unknown-top-key":    func() string { return advBase + "bogus: 1\n" },
		"unknown-param":      func() string { return base("n: 8", "n: 8\n    bogus: 1") },
		"two-documents":      func() string { return advBase + "---\n" + advBase },
		"not-a-mapping":      func() string { return "- a\n- b\n" },
		"empty-lists":        func() string { return "networks: []\nloads: []\nalgorithms: []\n" },
		"tabs":               func() string { return strings.ReplaceAll(advBase, "  ", "\t") },
		"invalid-utf8":       func() string { return base("name: adv", "name: \xff\xfe") },
		"zip-mismatch": func() string {
			return base("n: 8", "n: [8, 9]", "tokens: 40", "tokens: [40, 41, 42]") + "zip: [[network.n, loads.tokens]]\n"
		},
		"zip-unknown":                func() string { return advBase + "zip: [[network.q, loads.r]]\n" },
		"record-trace":               func() string { return advBase + "record:\n  trace: true\n  sample_every: 1\n" },
		"sample-every-maxint":        func() string { return advBase + "record:\n  sample_every: 9223372036854775807\n" },
		"metrics-unknown":            func() string { return advBase + "record:\n  metrics: [nope]\n" },
		"workload-poisson-1e11":      func() string { return advBase + "workload:\n  name: poisson\n  rate: 1.0e11\n  per_node: false\n" },
		"workload-poisson-1e10-node": func() string { return advBase + "workload:\n  name: poisson\n  rate: 1.0e10\n" },
		"workload-rate-nan":          func() string { return advBase + "workload:\n  name: poisson\n  rate: .nan\n" },
		"workload-hotspot-bad":       func() string { return advBase + "workload:\n  name: hotspot\n  rate: 5\n  nodes: [100]\n" },
		"churn-bad":                  func() string { return advBase + "churn:\n  name: random-churn\n  fail: 2\n  recover: -1\n" },
		"steady-negative":            func() string { return advBase + "steady:\n  warm_up: -5\n" },
		"quick-bad":                  func() string { return advBase + "quick:\n  seeds: -1\n" },
		"edge-list-dev-zero": func() string {
			return strings.Replace(advBase, "  - name: ring\n    n: 8", "  - name: edge-list\n    file: /dev/zero", 1)
		},
		"dot-dev-urandom": func() string {
			return strings.Replace(advBase, "  - name: ring\n    n: 8", "  - name: dot\n    file: /dev/urandom", 1)
		},
		"trace-dev-zero": func() string { return advBase + "workload:\n  name: trace\n  file: /dev/zero\n" },
		"hypercube-24": func() string {
			return strings.Replace(advBase, "  - name: ring\n    n: 8", "  - name: hypercube\n    d: 24", 1)
		},
		"complete-1e5": func() string {
			return strings.Replace(advBase, "  - name: ring\n    n: 8", "  - name: complete\n    n: 100000", 1)
		},
		"tau-dense-4000": func() string {
			return strings.Replace(strings.Replace(advBase, "  - name: ring\n    n: 8", "  - name: random-regular\n    n: 4000\n    d: 3", 1), "max_steps: 30", "max_steps: 1\n  tau: true", 1) + "record:\n  metrics: [lambda_max]\n"
		},
	}
}

func advCmdCases(add func(surface, name string, run func() error)) {
	// Hostile experiment files through run and sweep. Good ones must succeed; the
	// others must fail cleanly, promptly and within the memory cap.
	good := map[string]bool{"tabs": false, "record-trace": true, "axis-1e6-equal": false, "seeds-300k-list": false,
		"million-seeds": false, "grid-product": false, "workload-poisson-1e11": true, "workload-poisson-1e10-node": true, "sample-every-maxint": true,
		"max-steps-maxint": true, "tokens-maxint": false, "1MiB-name": false, "tau-dense-4000": false}
	for name, mkText := range advHostileYAML() {
		for _, cmd := range []string{"run", "sweep"} {
			want := advMustFail
			if ok, listed := good[name]; listed {
				want = advEither
				if ok {
					want = advMustSucceed
				}
			}
			if cmd == "sweep" && (name == "seeds-300k-list" || name == "million-seeds") {
				want = advEither // a large grid may sweep or be refused for the budget; never hang
			}
			add("cmd", fmt.Sprintf("%s-file/%s", cmd, name), func() error {
				dir := advDir()
				defer os.RemoveAll(dir)
				f := advWrite(filepath.Join(dir, "exp.yaml"), mkText())
				args := []string{cmd, "--workers", "2", f}
				if cmd == "sweep" {
					args = []string{cmd, "--progress", "none", "--workers", "2", "--db", filepath.Join(dir, "r.db"), f}
				}
				if name == "seeds-300k-list" || name == "million-seeds" || name == "axis-1e6-equal" {
					// Parse and size the grid only: a shard of one run.
					if cmd == "run" {
						_, err := experiment.ReadFile(f, registry.New(), false)
						return err
					}
					args = append(args[:len(args)-1], "--shard", "0/1000000", f)
				}
				_, err := advRunCmd(nil, want, args...)
				return err
			})
		}
	}
	// Experiment files that are not regular files, or are too large.
	for name := range advSpecialFiles("") {
		for _, cmd := range []string{"run", "sweep"} {
			add("cmd", fmt.Sprintf("%s-path/%s", cmd, name), func() error {
				dir := advDir()
				defer os.RemoveAll(dir)
				p := advSpecialFiles(dir)[name]()
				args := []string{cmd, p}
				if cmd == "sweep" {
					args = []string{cmd, "--progress", "none", "--db", filepath.Join(dir, "r.db"), p}
				}
				_, err := advRunCmd(nil, advMustFail, args...)
				return err
			})
		}
	}
	// Network and trace files named by an experiment.
	netFiles := map[string]func() string{
		"ok":           func() string { return "0 1\n1 2\n2 3\n3 0\n" },
		"self-loop":    func() string { return "0 0\n0 1\n" },
		"negative":     func() string { return "0 -1\n" },
		"huge-node":    func() string { return "0 4000000000\n" },
		"node-2^30":    func() string { return "0 1073741823\n" },
		"three-fields": func() string { return "0 1 2\n" },
		"garbage":      func() string { return "zz yy\n" },
		"long-line":    func() string { return strings.Repeat("1", 2<<20) + " 2\n" },
		"many-edges":   func() string { return strings.Repeat("0 1\n", 1<<20) },
		"disconnected": func() string { return "0 1\n2 3\n" },
		"comment-only": func() string { return "# nothing\n" },
		"nul":          func() string { return "0\x001\n" },
		"1MiB-token":   func() string { return strings.Repeat("9", 1<<20) + " 1\n" },
		"star-1e5":     func() string { return advStarEdges(100000) },
	}
	for name, mkText := range netFiles {
		add("cmd", "edge-list/"+name, func() error {
			dir := advDir()
			defer os.RemoveAll(dir)
			p := advWrite(filepath.Join(dir, "net.txt"), mkText())
			f := advWrite(filepath.Join(dir, "exp.yaml"), strings.Replace(advBase, "  - name: ring\n    n: 8", "  - name: edge-list\n    file: "+p, 1))
			want := advMustFail
			if name == "ok" || name == "star-1e5" {
				want = advEither
			}
			_, err := advRunCmd(nil, want, "run", f)
			return err
		})
	}
	dotFiles := map[string]func() string{
		"ok":         func() string { return "graph { 0 -- 1; 1 -- 2; 2 -- 3; 3 -- 0 }" },
		"self-loop":  func() string { return "graph { a -- a; a -- b }" },
		"digraph":    func() string { return "digraph { a -> b; b -> a }" },
		"garbage":    func() string { return "graph { " },
		"1MiB-id":    func() string { return "graph { " + strings.Repeat("a", 1<<20) + " -- b }" },
		"star-1e5":   func() string { return advDOTStar(100000) },
		"star-1e4":   func() string { return advDOTStar(10000) },
		"html-label": func() string { return "graph { a [label=<<b>x</b>>]; a -- b }" },
		"deep-subgraphs": func() string {
			return "graph { " + strings.Repeat("subgraph { ", 5000) + "a -- b" + strings.Repeat(" }", 5000) + " }"
		},
	}
	for name, mkText := range dotFiles {
		add("cmd", "dot/"+name, func() error {
			dir := advDir()
			defer os.RemoveAll(dir)
			p := advWrite(filepath.Join(dir, "net.dot"), mkText())
			f := advWrite(filepath.Join(dir, "exp.yaml"), strings.Replace(advBase, "  - name: ring\n    n: 8", "  - name: dot\n    file: "+p, 1))
			want := advMustFail
			if name == "ok" || name == "html-label" || name == "star-1e4" || name == "star-1e5" || name == "digraph" || name == "deep-subgraphs" {
				want = advEither
			}
			_, err := advRunCmd(nil, want, "run", f)
			return err
		})
	}
	formatFiles := map[string]map[string]func() string{
		"graph6": {
			"ok":               func() string { return ">>graph6<<IheA@GUAo\n" },
			"second":           func() string { return "C~\nBg\n" },
			"disconnect":       func() string { return "C?\n" },
			"bad-byte":         func() string { return "C\x01\n" },
			"short":            func() string { return "C~~~~\n" },
			"order-2^36":       func() string { return "~~~~~~~~\n" },
			"order-cut":        func() string { return "~~\n" },
			"order-4032-short": func() string { return "~?~?" + strings.Repeat("?", 10) + "\n" },
			"1MiB-line":        func() string { return strings.Repeat("~", 1<<20) + "\n" },
			"complete-62":      func() string { return "}" + strings.Repeat("~", 316) + "\n" },
		},
		"graphml": {
			"ok": func() string {
				return `<graphml><graph edgedefault="undirected"><node id="a"/><node id="b"/><node id="c"/><edge source="a" target="b"/><edge source="b" target="c"/></graph></graphml>`
			},
			"directed":   func() string { return `<graphml><graph edgedefault="directed"><node id="a"/></graph></graphml>` },
			"undeclared": func() string { return `<graphml><graph><node id="a"/><edge source="a" target="b"/></graph></graphml>` },
			"self-loop":  func() string { return `<graphml><graph><node id="a"/><edge source="a" target="a"/></graph></graphml>` },
			"unclosed":   func() string { return `<graphml><graph><node id="a">` },
			"no-graph":   func() string { return `<graphml/>` },
			"1MiB-id": func() string {
				return `<graphml><graph><node id="` + strings.Repeat("a", 1<<20) + `"/></graph></graphml>`
			},
			"deep-nesting": func() string { return strings.Repeat("<x>", 100000) + strings.Repeat("</x>", 100000) },
			"entity-bomb": func() string {
				return `<?xml version="1.0"?><!DOCTYPE g [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]><graphml><graph><node id="&b;"/></graph></graphml>`
			},
			"star-1e5": func() string {
				var b strings.Builder
				b.WriteString(`<graphml><graph><node id="0"/>`)
				for i := 1; i < 100000; i++ {
					fmt.Fprintf(&b, `<node id="%d"/><edge source="0" target="%d"/>`, i, i)
				}
				b.WriteString(`</graph></graphml>`)
				return b.String()
			},
		},
	}
	for kind, table := range formatFiles {
		for name, mkText := range table {
			add("cmd", kind+"/"+name, func() error {
				dir := advDir()
				defer os.RemoveAll(dir)
				p := advWrite(filepath.Join(dir, "net."+kind), mkText())
				f := advWrite(filepath.Join(dir, "exp.yaml"), strings.Replace(advBase, "  - name: ring\n    n: 8", "  - name: "+kind+"\n    file: "+p, 1))
				want := advMustFail
				if name == "ok" || name == "second" || name == "complete-62" || name == "star-1e5" || name == "1MiB-id" { // a one-node graph with a long id is valid
					want = advEither
				}
				_, err := advRunCmd(nil, want, "run", f)
				return err
			})
		}
	}
	for name := range advSpecialFiles("") {
		for _, kind := range []string{"edge-list", "dot", "trace", "graph6", "graphml"} {
			if name == "empty" || name == "missing" && kind == "trace" {
				continue
			}
			add("cmd", fmt.Sprintf("%s-path/%s", kind, name), func() error {
				dir := advDir()
				defer os.RemoveAll(dir)
				p := advSpecialFiles(dir)[name]()
				text := strings.Replace(advBase, "  - name: ring\n    n: 8", "  - name: "+kind+"\n    file: \""+p+"\"", 1)
				if kind == "trace" {
					text = advBase + "workload:\n  name: trace\n  file: \"" + p + "\"\n"
				}
				f := advWrite(filepath.Join(dir, "exp.yaml"), text)
				_, err := advRunCmd(nil, advMustFail, "run", f)
				return err
			})
		}
	}
	traceFiles := map[string]func() string{
		"ok":         func() string { return "step,node,count\n1,0,5\n2,3,7\n" },
		"node-range": func() string { return "1,100,5\n" },
		"count-huge": func() string { return "1,0,9223372036854775807\n" },
		"step-zero":  func() string { return "0,0,1\n" },
		"garbage":    func() string { return "a,b,c\n" },
		"rows-1e6":   func() string { return strings.Repeat("1,0,1\n", 1000000) },
		"step-2^62":  func() string { return "1,0,1099511627776\n" + strings.Repeat("1,1,1099511627776\n", 5000) },
		"quote-bomb": func() string { return "\"" + strings.Repeat("x", 2<<20) },
	}
	for name, mkText := range traceFiles {
		add("cmd", "trace-file/"+name, func() error {
			dir := advDir()
			defer os.RemoveAll(dir)
			p := advWrite(filepath.Join(dir, "t.csv"), mkText())
			f := advWrite(filepath.Join(dir, "exp.yaml"), advBase+"workload:\n  name: trace\n  file: "+p+"\n")
			want := advMustFail
			if name == "ok" || name == "rows-1e6" || name == "step-2^62" {
				want = advEither
			}
			_, err := advRunCmd(nil, want, "run", f)
			return err
		})
	}
	// Flags and arguments.
	flagCases := map[string]struct {
		want advExpectation
		args []string
	}{
		"workers-3e6":        {advMustFail, []string{"sweep", "--workers", "3000000", "FILE"}},
		"workers-negative":   {advMustFail, []string{"sweep", "--workers", "-1", "FILE"}},
		"workers-huge-run":   {advMustFail, []string{"run", "--workers", "3000000", "FILE"}},
		"workers-overflow":   {advMustFail, []string{"run", "--workers", "99999999999999999999", "FILE"}},
		"unknown-flag":       {advMustFail, []string{"sweep", "--bogus", "FILE"}},
		"unknown-flag-long":  {advMustFail, []string{"run", advHuge("x", 1<<20), "FILE"}},
		"bad-format":         {advMustFail, []string{"run", "--format", "xml", "FILE"}},
		"bad-progress":       {advMustFail, []string{"sweep", "--progress", "sideways", "FILE"}},
		"bad-shard":          {advMustFail, []string{"sweep", "--shard", "5/3", "FILE"}},
		"shard-overflow":     {advMustFail, []string{"sweep", "--shard", "0/99999999999999999999", "FILE"}},
		"shard-huge":         {advEither, []string{"sweep", "--shard", "0/9223372036854775807", "FILE"}},
		"every-negative":     {advEither, []string{"sweep", "--every", "-5s", "FILE"}},
		"two-files":          {advMustFail, []string{"run", "FILE", "FILE"}},
		"no-file":            {advMustFail, []string{"sweep"}},
		"unknown-command":    {advMustFail, []string{"frobnicate"}},
		"huge-command":       {advMustFail, []string{advHuge("c", 1<<20)}},
		"help":               {advMustSucceed, []string{"help", "sweep"}},
		"list":               {advMustSucceed, []string{"list"}},
		"list-json":          {advMustSucceed, []string{"list", "--json"}},
		"list-bad-kind":      {advMustFail, []string{"list", "nope"}},
		"report-no-db":       {advMustFail, []string{"report"}},
		"plot-no-out":        {advMustFail, []string{"plot", "--db", "DB"}},
		"merge-no-into":      {advMustFail, []string{"merge", "DB"}},
		"merge-bad-conflict": {advMustFail, []string{"merge", "--on-conflict", "maybe", "--into", "DIR/o.db", "DB"}},
		"run-ok":             {advMustSucceed, []string{"run", "FILE"}},
		"run-trace-dir":      {advMustSucceed, []string{"run", "--trace-dir", "DIR/traces", "FILE"}},
		"run-trace-dir-file": {advMustFail, []string{"run", "--trace-dir", "FILE", "FILE"}},
		"run-trace-dir-full": {advMustFail, []string{"run", "--trace-dir", "/dev/full", "FILE"}},
		"run-plot-dev-full":  {advMustFail, []string{"run", "--plot", "/dev/full", "FILE"}},
		"plot-out-dev-full":  {advMustFail, []string{"plot", "--db", "DB", "--out", "/dev/full"}},
		"plot-title-1MiB":    {advMustSucceed, []string{"plot", "--db", "DB", "--out", "DIR/p.svg", "--title", advHuge("t", 1<<20)}},
		"plot-bad-column":    {advMustFail, []string{"plot", "--db", "DB", "--out", "DIR/p.svg", "--y", "nope"}},
		"report-ok":          {advMustSucceed, []string{"report", "--db", "DB"}},
		"report-summary":     {advMustSucceed, []string{"report", "--db", "DB", "--summary", "--format", "jsonl"}},
		"report-bad-where":   {advMustFail, []string{"report", "--db", "DB", "--where", "nope nope"}},
		"report-where-drop":  {advEither, []string{"report", "--db", "DB", "--where", "1=1; DROP TABLE runs"}},
	}
	for name, fc := range flagCases {
		add("cmd", "flags/"+name, func() error {
			dir := advDir()
			defer os.RemoveAll(dir)
			f := advWrite(filepath.Join(dir, "exp.yaml"), advBase)
			db := filepath.Join(dir, "r.db")
			if err := advSweepOK(nil, dir, db, advBase, 4); err != nil {
				return err
			}
			args := make([]string, len(fc.args))
			for i, a := range fc.args {
				a = advExpand(a)
				if name == "unknown-flag-long" && i == 1 {
					a = "--" + a
				}
				a = strings.ReplaceAll(a, "FILE", f)
				a = strings.ReplaceAll(a, "DB", db)
				args[i] = strings.ReplaceAll(a, "DIR", dir)
			}
			if args[0] == "sweep" {
				args = append([]string{"sweep", "--db", filepath.Join(dir, "s.db")}, args[1:]...)
			}
			out, err := advRunCmd(nil, fc.want, args...)
			if err != nil {
				return err
			}
			if name == "report-ok" && strings.Count(out, "\n") != 5 {
				return advWrong("report printed %d lines for 4 runs", strings.Count(out, "\n"))
			}
			if name == "run-trace-dir" {
				ents, err := os.ReadDir(filepath.Join(dir, "traces"))
				if err != nil || len(ents) != 4 {
					return advWrong("trace dir holds %d files, want 4 (%v)", len(ents), err)
				}
			}
			// The database the command read is intact.
			if n, err := advCountRuns(db); err != nil || n != 4 {
				return advLost("the database holds %d runs after %s (%v)", n, name, err)
			}
			return nil
		})
	}
}

func advStarEdges(n int) string {
	var b strings.Builder
	for v := 1; v < n; v++ {
		fmt.Fprintf(&b, "0 %d\n", v)
	}
	return b.String()
}

func advDOTStar(n int) string {
	var b strings.Builder
	b.WriteString("graph {\n")
	for v := 1; v < n; v++ {
		fmt.Fprintf(&b, "c -- n%d\n", v)
	}
	b.WriteString("}\n")
	return b.String()
}

func advDBCases(add func(surface, name string, run func() error)) {
	// Database paths with the characters an SQLite URI gives a meaning: the data go to
	// the file named, nowhere else.
	for _, name := range []string{"a#b.db", "a%b.db", "a?b.db", "a%3Fb.db", "a?mode=ro.db", "file:x.db", ":memory:", "a b.db", "ü∂.db", "a?_pragma=journal_mode(DELETE)#x.db", "%00.db", "a&b=c.db"} {
		add("db", "path/"+name, func() error {
			dir := advDir()
			defer os.RemoveAll(dir)
			db := filepath.Join(dir, name)
			if err := advSweepOK(nil, dir, db, advBase, 4); err != nil {
				return err
			}
			ents, _ := os.ReadDir(dir)
			for _, e := range ents {
				if n := e.Name(); n != "exp.yaml" && n != name && n != name+"-wal" && n != name+"-shm" {
					return advLost("the sweep wrote %q besides %q", n, name)
				}
			}
			// Resume: nothing runs twice.
			if err := advSweepOK(nil, dir, db, advBase, 4); err != nil {
				return err
			}
			_, err := advRunCmd(nil, advMustSucceed, "report", "--db", db)
			return err
		})
	}
	// Database files that are not databases, or are damaged: every command refuses
	// them and leaves them as they were.
	mk := map[string]func(dir string) string{
		"directory": func(dir string) string { return dir },
		"fifo":      advFIFO,
		"dev-null":  func(string) string { return "/dev/null" },
		"dev-zero":  func(string) string { return "/dev/zero" },
		"text":      func(dir string) string { return advWrite(filepath.Join(dir, "t.db"), "hello, not a database\n") },
		"other-program": func(dir string) string {
			p := filepath.Join(dir, "other.db")
			s, err := sql.Open("sqlite", p)
			if err != nil {
				panic(err)
			}
			if _, err := s.Exec(`CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT); INSERT INTO customers VALUES (1, 'a')`); err != nil {
				panic(err)
			}
			s.Close()
			return p
		},
		"wrong-schema": func(dir string) string {
			p := filepath.Join(dir, "w.db")
			s, _ := sql.Open("sqlite", p)
			s.Exec(`CREATE TABLE meta (k TEXT PRIMARY KEY, v TEXT NOT NULL); INSERT INTO meta VALUES ('schema', '99')`)
			s.Close()
			return p
		},
		"1MiB-path": func(dir string) string { return filepath.Join(dir, strings.Repeat("d", 1<<20)) },
	}
	for _, off := range []int64{0, 16, 28, 100, 4096, 4200, 8192, 9000, 12288, -100} {
		mk[fmt.Sprintf("flipped-%d", off)] = func(dir string) string { return advDamaged(dir, off, false) }
	}
	for _, cut := range []int64{4000, 6000, 10000} {
		mk[fmt.Sprintf("truncated-%d", cut)] = func(dir string) string { return advDamaged(dir, cut, true) }
	}
	for name, f := range mk {
		for _, cmd := range []string{"sweep", "report", "plot", "merge-src", "merge-into"} {
			add("db", fmt.Sprintf("bad-%s/%s", cmd, name), func() error {
				dir := advDir()
				defer os.RemoveAll(dir)
				p := f(dir)
				before := advHash(p)
				exp := advWrite(filepath.Join(dir, "exp.yaml"), advBase)
				var args []string
				switch cmd {
				case "sweep":
					args = []string{"sweep", "--progress", "none", "--db", p, exp}
				case "report":
					args = []string{"report", "--db", p}
				case "plot":
					args = []string{"plot", "--db", p, "--out", filepath.Join(dir, "p.svg")}
				case "merge-src":
					args = []string{"merge", "--into", filepath.Join(dir, "out.db"), p}
				case "merge-into":
					good := filepath.Join(dir, "good.db")
					if err := advSweepOK(nil, dir, good, advBase, 4); err != nil {
						return err
					}
					args = []string{"merge", "--into", p, good}
				}
				want := advMustFail
				if strings.HasPrefix(name, "flipped-") || strings.HasPrefix(name, "truncated-") {
					// A flipped byte inside a stored value is undetectable by design (SQLite
					// checks structure, not contents): such a file may be used; one that
					// SQLite finds damaged must be refused.
					want = advEither
				}
				_, err := advRunCmd(nil, want, args...)
				if err == nil && want == advEither {
					return nil
				}
				if after := advHash(p); after != before {
					return advLost("%s changed the file it refused (%s → %s)", cmd, before, after)
				}
				if cmd == "merge-src" {
					if _, serr := os.Stat(filepath.Join(dir, "out.db")); serr == nil {
						return advLost("a failed merge left its target behind")
					}
				}
				return err
			})
		}
	}
	// Non-finite metrics are stored (as absent, flagged), never lose a row.
	for _, v := range []float64{math.NaN(), math.Inf(1), math.Inf(-1), math.Copysign(0, -1), math.MaxFloat64, 5e-324} {
		add("db", fmt.Sprintf("metric/%v", v), func() error {
			dir := advDir()
			defer os.RemoveAll(dir)
			reg := advCallbackRegistry("metric", func() float64 { return v })
			db := filepath.Join(dir, "r.db")
			text := strings.Replace(advBase, "algorithms: [randomized-diffusion, rsw-diffusion]", "algorithms: [randomized-diffusion]", 1) + "record:\n  metrics: [adv]\n"
			if err := advSweepOK(reg, dir, db, text, 2); err != nil {
				return err
			}
			d, err := experiment.OpenDBReadOnly(db)
			if err != nil {
				return err
			}
			defer d.Close()
			cols, rows, err := d.Query("")
			if err != nil {
				return err
			}
			for _, r := range rows {
				var key, metrics string
				for i, c := range cols {
					switch c {
					case "key":
						key = fmt.Sprint(r[i])
					case "metrics":
						metrics = fmt.Sprint(r[i])
					}
				}
				nf, err := d.NonFinite(key)
				if err != nil {
					return err
				}
				finite := !math.IsNaN(v) && !math.IsInf(v, 0)
				switch {
				case finite && (len(nf) != 0 || !strings.Contains(metrics, `"adv"`)):
					return advWrong("finite metric %v stored as %s, flags %v", v, metrics, nf)
				case !finite && (strings.Contains(metrics, `"adv"`) || nf["adv"] == ""):
					return advWrong("metric %v stored as %s, flags %v", v, metrics, nf)
				case !finite && nf["adv"] != fmt.Sprintf("%+v", v) && !(math.IsNaN(v) && nf["adv"] == "NaN"):
					return advWrong("metric %v flagged %q", v, nf["adv"])
				}
			}
			return nil
		})
	}
}

// advDamaged returns a copy of a good results database with a byte flipped at off (from
// the end when negative) or truncated to off bytes.
func advDamaged(dir string, off int64, truncate bool) string {
	p := filepath.Join(dir, "damaged.db")
	if err := advSweepOK(nil, dir, p, advBase+"record:\n  trace: true\n  sample_every: 1\n", 4); err != nil {
		panic(err)
	}
	os.Remove(p + "-wal")
	os.Remove(p + "-shm")
	b, err := os.ReadFile(p)
	if err != nil {
		panic(err)
	}
	if truncate {
		b = b[:min(int64(len(b)), off)]
	} else {
		if off < 0 {
			off += int64(len(b))
		}
		off = min(off, int64(len(b)-1))
		for i := off; i < min(off+8, int64(len(b))); i++ {
			b[i] ^= 0x5a
		}
	}
	return advWrite(p, string(b))
}

func advMergeCases(add func(surface, name string, run func() error)) {
	type setup struct {
		srcs func(dir string) []string
		into string
		want advExpectation
		flag string
		// check runs after the merge; nil: only the target's run count, wantRuns.
		wantRuns int
	}
	good := func(dir, name, text string) string {
		p := filepath.Join(dir, name)
		if err := advSweepOK(nil, dir, p, text, strings.Count(text, "seeds: 2")*4); err != nil {
			panic(err)
		}
		return p
	}
	other := strings.Replace(advBase, "tokens: 40", "tokens: 41", 1)
	conflict := func(dir string) []string {
		a := good(dir, "a.db", advBase)
		b := good(dir, "b.db", advBase)
		s, _ := sql.Open("sqlite", b)
		s.Exec(`UPDATE runs SET discrepancy = discrepancy + 1`)
		s.Close()
		return []string{a, b}
	}
	cases := map[string]setup{
		"two-disjoint":     {func(d string) []string { return []string{good(d, "a.db", advBase), good(d, "b.db", other)} }, "out.db", advMustSucceed, "", 8},
		"same-twice":       {func(d string) []string { a := good(d, "a.db", advBase); return []string{a, a} }, "out.db", advMustSucceed, "", 4},
		"overlap":          {func(d string) []string { return []string{good(d, "a.db", advBase), good(d, "b.db", advBase)} }, "out.db", advMustSucceed, "", 4},
		"conflict-fail":    {conflict, "out.db", advMustFail, "", -1},
		"conflict-keep":    {conflict, "out.db", advMustSucceed, "keep", 4},
		"conflict-replace": {conflict, "out.db", advMustSucceed, "replace", 4},
		"src-is-target":    {func(d string) []string { return []string{good(d, "out.db", advBase)} }, "out.db", advMustFail, "", 4},
		"src-symlink-target": {func(d string) []string {
			t := good(d, "out.db", advBase)
			l := filepath.Join(d, "link.db")
			os.Symlink(t, l)
			return []string{l}
		}, "out.db", advMustFail, "", 4},
		"src-empty-file": {func(d string) []string { return []string{advWrite(filepath.Join(d, "e.db"), "")} }, "out.db", advMustFail, "", -1},
		"src-missing":    {func(d string) []string { return []string{filepath.Join(d, "none.db")} }, "out.db", advMustFail, "", -1},
		"good-then-bad": {func(d string) []string {
			return []string{good(d, "a.db", advBase), advWrite(filepath.Join(d, "t.db"), "text")}
		}, "out.db", advMustFail, "", -1},
		"bad-then-good": {func(d string) []string {
			return []string{advWrite(filepath.Join(d, "t.db"), "text"), good(d, "a.db", advBase)}
		}, "out.db", advMustFail, "", -1},
		"into-existing":  {func(d string) []string { good(d, "out.db", other); return []string{good(d, "a.db", advBase)} }, "out.db", advMustSucceed, "", 8},
		"into-hash-path": {func(d string) []string { return []string{good(d, "a.db", advBase)} }, "o#u?t%.db", advMustSucceed, "", 4},
		"src-hash-path":  {func(d string) []string { return []string{good(d, "a#?%.db", advBase)} }, "out.db", advMustSucceed, "", 4},
		"many-sources":   {func(d string) []string { a := good(d, "a.db", advBase); return []string{a, a, a, a, a, a, a, a, a, a} }, "out.db", advMustSucceed, "", 4},
		"traces":         {func(d string) []string { return []string{good(d, "a.db", advBase+"record:\n  trace: true\n")} }, "out.db", advMustSucceed, "", 4},
	}
	for name, c := range cases {
		add("merge", name, func() error {
			dir := advDir()
			defer os.RemoveAll(dir)
			srcs := c.srcs(dir)
			hashes := make([]string, len(srcs))
			for i, s := range srcs {
				hashes[i] = advHash(s)
			}
			into := filepath.Join(dir, c.into)
			_, existed := os.Stat(into)
			args := []string{"merge", "--into", into}
			if c.flag != "" {
				args = append(args, "--on-conflict", c.flag)
			}
			_, err := advRunCmd(nil, c.want, append(args, srcs...)...)
			for i, s := range srcs {
				if advHash(s) != hashes[i] && s != into && !strings.Contains(name, "target") {
					return advLost("merge changed its source %s", filepath.Base(s))
				}
			}
			if err != nil {
				if existed != nil {
					if _, serr := os.Stat(into); serr == nil {
						return advLost("a failed merge left the target it created")
					}
				}
				if c.wantRuns >= 0 {
					if n, cerr := advCountRuns(into); cerr != nil || n != c.wantRuns {
						return advLost("target holds %d runs after a refused merge, want %d (%v)", n, c.wantRuns, cerr)
					}
				}
				return err
			}
			n, cerr := advCountRuns(into)
			if cerr != nil {
				return cerr
			}
			if n != c.wantRuns {
				return advLost("target holds %d runs, want %d", n, c.wantRuns)
			}
			if strings.HasPrefix(name, "conflict-") {
				// keep: the first source's rows; replace: the second's.
				want := map[string]string{"conflict-keep": "a.db", "conflict-replace": "b.db"}[name]
				a, _ := advDump(into)
				b, _ := advDump(filepath.Join(dir, want))
				if a != b {
					return advWrong("--on-conflict %s did not keep the rows of %s", c.flag, want)
				}
			}
			// Idempotent: merging again adds nothing.
			if _, err := advRunCmd(nil, advMustSucceed, append(args, srcs...)...); err != nil && !strings.HasPrefix(name, "conflict") {
				return err
			}
			if n2, _ := advCountRuns(into); n2 != n {
				return advLost("merging again changed the runs from %d to %d", n, n2)
			}
			return nil
		})
	}
}

// advMergePolicyCases: every conflict policy on disjoint, overlapping and conflicting
// sources, with the expected rows computed from the sources themselves.
func advMergePolicyCases(add func(surface, name string, run func() error)) {
	other := strings.Replace(advBase, "tokens: 40", "tokens: 41", 1)
	for _, policy := range []string{"fail", "keep", "replace"} {
		for _, shape := range []string{"disjoint", "overlap", "conflict-one", "conflict-all", "nonfinite", "three-way"} {
			add("merge", fmt.Sprintf("policy-%s/%s", policy, shape), func() error {
				dir := advDir()
				defer os.RemoveAll(dir)
				mk := func(name, text string, reg *registry.Registry, want int) string {
					p := filepath.Join(dir, name)
					if err := advSweepOK(reg, dir, p, text, want); err != nil {
						panic(err)
					}
					return p
				}
				bump := func(p, where string) {
					s, err := sql.Open("sqlite", p)
					if err != nil {
						panic(err)
					}
					defer s.Close()
					if _, err := s.Exec(`UPDATE runs SET moved = moved + 1 WHERE ` + where); err != nil {
						panic(err)
					}
				}
				var srcs []string
				wantRuns, conflict := 0, false
				switch shape {
				case "disjoint":
					srcs, wantRuns = []string{mk("a.db", advBase, nil, 4), mk("b.db", other, nil, 4)}, 8
				case "overlap":
					srcs, wantRuns = []string{mk("a.db", advBase, nil, 4), mk("b.db", advBase, nil, 4)}, 4
				case "conflict-one", "conflict-all":
					a, b := mk("a.db", advBase, nil, 4), mk("b.db", advBase, nil, 4)
					where := "seed = 1 AND algorithm_name = 'rsw-diffusion'"
					if shape == "conflict-all" {
						where = "1 = 1"
					}
					bump(b, where)
					srcs, wantRuns, conflict = []string{a, b}, 4, true
				case "three-way":
					a, b, c := mk("a.db", advBase, nil, 4), mk("b.db", advBase, nil, 4), mk("c.db", other, nil, 4)
					bump(b, "seed = 2")
					srcs, wantRuns, conflict = []string{a, c, b}, 8, true
				case "nonfinite":
					reg := advCallbackRegistry("metric", func() float64 { return math.NaN() })
					text := strings.Replace(advBase, "algorithms: [randomized-diffusion, rsw-diffusion]", "algorithms: [randomized-diffusion]", 1) + "record:\n  metrics: [adv]\n"
					srcs, wantRuns = []string{mk("a.db", text, reg, 2)}, 2
				}
				into := filepath.Join(dir, "out.db")
				want := advMustSucceed
				if conflict && policy == "fail" {
					want = advMustFail
				}
				_, err := advRunCmd(nil, want, append([]string{"merge", "--on-conflict", policy, "--into", into}, srcs...)...)
				if err != nil {
					if _, serr := os.Stat(into); serr == nil {
						return advLost("a refused merge left its target")
					}
					return err
				}
				n, err := advCountRuns(into)
				if err != nil || n != wantRuns {
					return advLost("%d runs after the merge, want %d (%v)", n, wantRuns, err)
				}
				if conflict {
					// keep: every row is the first source's that has its key; replace:
					// the last one's.
					order := srcs
					if policy == "replace" {
						order = []string{srcs[len(srcs)-1]}
						for i := len(srcs) - 2; i >= 0; i-- {
							order = append(order, srcs[i])
						}
					}
					got, _ := advDump(into)
					for _, line := range strings.Split(got, "\n") {
						if !strings.HasPrefix(line, "key=") {
							continue
						}
						key, _, _ := strings.Cut(line, ";")
						for _, src := range order {
							d, _ := advDump(src)
							if strings.Contains(d, key+";") {
								if !strings.Contains(d, line) {
									return advWrong("--on-conflict %s kept a row of another source for %s", policy, key)
								}
								break
							}
						}
					}
				}
				if shape == "nonfinite" {
					got, _ := advDump(into)
					if strings.Count(got, "nonfinite ") != 2 {
						return advLost("the non-finite flags were not merged: %d of 2", strings.Count(got, "nonfinite "))
					}
				}
				return nil
			})
		}
	}
}

func advDump(path string) (string, error) {
	db, err := experiment.OpenDBReadOnly(path)
	if err != nil {
		return "", err
	}
	defer db.Close()
	d, err := db.Dump()
	return strings.Join(d, "\n"), err
}

func advShardCases(add func(surface, name string, run func() error)) {
	// Slurm arrays: every task of a valid array (with or without a step) gets a distinct
	// shard, and the shards cover 0..n-1; an array that is not a range with a step, or
	// a task outside it, is refused.
	type arr struct{ lo, hi, step int }
	for _, a := range []arr{{0, 0, 1}, {0, 9, 1}, {1, 10, 1}, {0, 10, 2}, {0, 11, 2}, {5, 17, 3}, {3, 3, 7}, {0, 100, 10}, {2, 1000, 7}, {0, 1 << 20, 1 << 10}} {
		for _, withCount := range []bool{false, true} {
			add("shards", fmt.Sprintf("slurm/%d-%d:%d/count=%v", a.lo, a.hi, a.step, withCount), func() error {
				n := (a.hi-a.lo)/a.step + 1
				seen := make([]bool, n)
				for id := a.lo; id <= a.hi; id += a.step {
					env := map[string]string{"SLURM_ARRAY_TASK_ID": fmt.Sprint(id), "SLURM_ARRAY_TASK_MIN": fmt.Sprint(a.lo), "SLURM_ARRAY_TASK_MAX": fmt.Sprint(a.hi)}
					if a.step != 1 {
						env["SLURM_ARRAY_TASK_STEP"] = fmt.Sprint(a.step)
					}
					if withCount {
						env["SLURM_ARRAY_TASK_COUNT"] = fmt.Sprint(n)
					}
					s, ok, err := experiment.ShardFromEnv(func(k string) string { return env[k] }, 0)
					if err != nil || !ok {
						return advWrong("task %d of a valid array: %v", id, err)
					}
					if s.Count != n || s.Index < 0 || s.Index >= n || seen[s.Index] {
						return advLost("task %d got shard %d/%d (want each of 0..%d once)", id, s.Index, s.Count, n-1)
					}
					seen[s.Index] = true
				}
				for i, ok := range seen {
					if !ok {
						return advLost("shard %d of %d is run by no task", i, n)
					}
				}
				// Ids between the steps, and outside, are refused.
				for _, id := range []int{a.lo - 1, a.hi + a.step, a.lo + 1} {
					if a.step == 1 && id == a.lo+1 && a.hi > a.lo {
						continue
					}
					env := map[string]string{"SLURM_ARRAY_TASK_ID": fmt.Sprint(id), "SLURM_ARRAY_TASK_MIN": fmt.Sprint(a.lo), "SLURM_ARRAY_TASK_MAX": fmt.Sprint(a.hi), "SLURM_ARRAY_TASK_STEP": fmt.Sprint(a.step)}
					if _, _, err := experiment.ShardFromEnv(func(k string) string { return env[k] }, 0); err == nil {
						return advWrong("task %d outside %d-%d:%d accepted", id, a.lo, a.hi, a.step)
					}
				}
				return nil
			})
		}
	}
	bad := map[string]map[string]string{
		"list-1,3,7":      {"SLURM_ARRAY_TASK_ID": "3", "SLURM_ARRAY_TASK_MIN": "1", "SLURM_ARRAY_TASK_MAX": "7", "SLURM_ARRAY_TASK_COUNT": "3"},
		"step-0":          {"SLURM_ARRAY_TASK_ID": "0", "SLURM_ARRAY_TASK_MAX": "10", "SLURM_ARRAY_TASK_STEP": "0"},
		"step-negative":   {"SLURM_ARRAY_TASK_ID": "0", "SLURM_ARRAY_TASK_MAX": "10", "SLURM_ARRAY_TASK_STEP": "-2"},
		"step-text":       {"SLURM_ARRAY_TASK_ID": "0", "SLURM_ARRAY_TASK_MAX": "10", "SLURM_ARRAY_TASK_STEP": "two"},
		"id-text":         {"SLURM_ARRAY_TASK_ID": "x", "SLURM_ARRAY_TASK_COUNT": "3"},
		"id-1MiB":         {"SLURM_ARRAY_TASK_ID": advHuge("9", 1<<20), "SLURM_ARRAY_TASK_COUNT": "3"},
		"id-maxint":       {"SLURM_ARRAY_TASK_ID": "9223372036854775807", "SLURM_ARRAY_TASK_COUNT": "3"},
		"min-maxint":      {"SLURM_ARRAY_TASK_ID": "0", "SLURM_ARRAY_TASK_MIN": "9223372036854775807", "SLURM_ARRAY_TASK_MAX": "0"},
		"max-below-min":   {"SLURM_ARRAY_TASK_ID": "5", "SLURM_ARRAY_TASK_MIN": "5", "SLURM_ARRAY_TASK_MAX": "2"},
		"no-count":        {"SLURM_ARRAY_TASK_ID": "0"},
		"count-0":         {"SLURM_ARRAY_TASK_ID": "0", "SLURM_ARRAY_TASK_COUNT": "0"},
		"count-negative":  {"SLURM_ARRAY_TASK_ID": "0", "SLURM_ARRAY_TASK_COUNT": "-3"},
		"id-beyond-count": {"SLURM_ARRAY_TASK_ID": "3", "SLURM_ARRAY_TASK_COUNT": "3"},
		"max-wraps":       {"SLURM_ARRAY_TASK_ID": "0", "SLURM_ARRAY_TASK_MIN": "-9223372036854775807", "SLURM_ARRAY_TASK_MAX": "9223372036854775807"},
		"k8s-no-count":    {"JOB_COMPLETION_INDEX": "0"},
		"k8s-negative":    {"JOB_COMPLETION_INDEX": "-1", "TOKENDIST_SHARDS": "4"},
		"k8s-beyond":      {"JOB_COMPLETION_INDEX": "4", "TOKENDIST_SHARDS": "4"},
		"k8s-text":        {"JOB_COMPLETION_INDEX": "0", "TOKENDIST_SHARDS": "four"},
	}
	for name, env := range bad {
		add("shards", "bad-env/"+name, func() error {
			_, ok, err := experiment.ShardFromEnv(func(k string) string { return advExpand(env[k]) }, 0)
			if err == nil {
				return advWrong("accepted (ok=%v)", ok)
			}
			return err
		})
	}
	for _, s := range []string{"", "/", "0/0", "-1/4", "4/4", "1/-1", "a/b", "0/1/2", " 0 / 2 ", "0/9223372036854775807", "0/99999999999999999999", advHuge("1", 1<<20), "0x1/4", "1.5/4", "0/1", "3/4"} {
		add("shards", fmt.Sprintf("parse/%.40q", s), func() error {
			s := advExpand(s)
			sh, err := experiment.ParseShard(s)
			if err != nil {
				return err
			}
			if sh.Count < 1 || sh.Index < 0 || sh.Index >= sh.Count {
				return advWrong("ParseShard(%.40q) = %+v", s, sh)
			}
			return nil
		})
	}
	// A sharded sweep through the environment, shards merged: every run once.
	for _, step := range []int{1, 2, 3} {
		add("shards", fmt.Sprintf("sweep-merge/step-%d", step), func() error {
			dir := advDir()
			defer os.RemoveAll(dir)
			text := strings.Replace(advBase, "seeds: 2", "seeds: 5", 1) // 10 runs
			f := advWrite(filepath.Join(dir, "exp.yaml"), text)
			var dbs []string
			for id := 0; id <= 6*step; id += step {
				os.Setenv("SLURM_ARRAY_TASK_ID", fmt.Sprint(id))
				os.Setenv("SLURM_ARRAY_TASK_MIN", "0")
				os.Setenv("SLURM_ARRAY_TASK_MAX", fmt.Sprint(6*step))
				os.Setenv("SLURM_ARRAY_TASK_STEP", fmt.Sprint(step))
				db := filepath.Join(dir, fmt.Sprintf("s%d.db", id))
				if _, err := advRunCmd(nil, advMustSucceed, "sweep", "--progress", "none", "--db", db, f); err != nil {
					return err
				}
				dbs = append(dbs, db)
			}
			out := filepath.Join(dir, "all.db")
			if _, err := advRunCmd(nil, advMustSucceed, append([]string{"merge", "--into", out}, dbs...)...); err != nil {
				return err
			}
			if n, err := advCountRuns(out); err != nil || n != 10 {
				return advLost("%d of 10 runs after merging the shards (%v)", n, err)
			}
			return nil
		})
	}
}

func advRegistryCases(add func(surface, name string, run func() error)) {
	huge := advHuge("z", 1<<20)
	names := map[string]string{"empty": "", "huge": huge, "unicode": "ünï", "nul": "a\x00b", "newline": "a\nb", "prefix": "tokendist: ring"}
	for _, kind := range []registry.Kind{registry.KindNetwork, registry.KindLoads, registry.KindAlgorithm, registry.KindMetric, registry.KindWorkload, registry.KindChurn, "bogus"} {
		for nn, name := range names {
			add("registry", fmt.Sprintf("lookup/%s/%s", kind, nn), func() error {
				name := advExpand(name)
				_, err := registry.New().Lookup(kind, name)
				if err == nil {
					return advWrong("found %q", name)
				}
				if len(err.Error()) > 2000 {
					return advWrong("error of %d bytes echoes the name", len(err.Error()))
				}
				return err
			})
		}
	}
	values := map[string]any{"string-huge": huge, "nan": math.NaN(), "inf": math.Inf(1), "maxint": int64(math.MaxInt64), "minint": int64(math.MinInt64),
		"negative": -5, "zero": 0, "list": []any{1, 2}, "map": map[string]any{"a": 1}, "nil": nil, "bool": true, "float-frac": 2.5, "float-huge": 1e300}
	for _, entry := range []struct {
		kind  registry.Kind
		name  string
		param string
	}{{registry.KindNetwork, "ring", "n"}, {registry.KindNetwork, "hypercube", "d"}, {registry.KindNetwork, "complete", "n"}, {registry.KindNetwork, "random-regular", "d"},
		{registry.KindNetwork, "edge-list", "file"}, {registry.KindNetwork, "torus", "sides"}, {registry.KindLoads, "point-mass", "tokens"}, {registry.KindLoads, "explicit", "loads"},
		{registry.KindAlgorithm, "multi-balance", "groups"}, {registry.KindWorkload, "poisson", "rate"}, {registry.KindWorkload, "hotspot", "nodes"}, {registry.KindChurn, "random-churn", "fail"}} {
		for vn, v := range values {
			add("registry", fmt.Sprintf("param/%s/%s=%s", entry.name, entry.param, vn), func() error {
				reg := registry.New()
				s := registry.Spec{Network: registry.Choice{Name: "ring", Params: registry.Params{"n": 8}}, Loads: registry.Choice{Name: "point-mass", Params: registry.Params{"tokens": 40}},
					Algorithm: registry.Choice{Name: "rsw-diffusion"}, Stop: registry.StopRule{MaxSteps: 20}}
				if vs, ok := v.(string); ok {
					v = advExpand(vs)
				}
				c := registry.Choice{Name: entry.name, Params: registry.Params{entry.param: v}}
				switch entry.kind {
				case registry.KindNetwork:
					s.Network = c
				case registry.KindLoads:
					s.Loads = c
				case registry.KindAlgorithm:
					s.Algorithm = c
				case registry.KindWorkload:
					if entry.name == "hotspot" {
						c.Params["rate"] = 1.0
					}
					s.Workload = []registry.Choice{c}
				case registry.KindChurn:
					c.Params["recover"] = 0.5
					s.Churn = &c
				}
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				res, err := reg.Run(ctx, s, nil)
				if err != nil {
					if len(err.Error()) > 2000 {
						return advWrong("error of %d bytes", len(err.Error()))
					}
					return err
				}
				if res.Result.Status == tokendist.StatusFailed {
					return advWrong("failed status without error")
				}
				if res.Total != res.Result.Loads.Total()-res.Result.Arrived+res.Result.Completed {
					return advWrong("tokens not conserved: %d initial, %d final", res.Total, res.Result.Loads.Total())
				}
				return nil
			})
		}
	}
	add("registry", "lambda-dense-4000", func() error {
		g, err := tokendist.RandomRegular(4000, 3, 1)
		if err != nil {
			return err
		}
		_, err = tokendist.LambdaMax(g, &tokendist.SpectralOptions{Method: tokendist.SpectralDense})
		if err == nil {
			return advWrong("a dense 4000-node eigenproblem (384 MB) ran under a 256 MiB budget")
		}
		return err
	})
	regs := map[string]func(r *registry.Registry) error{
		"nil-network":   func(r *registry.Registry) error { return r.RegisterNetwork(registry.Entry{Name: "x"}, nil) },
		"nil-algorithm": func(r *registry.Registry) error { return r.RegisterAlgorithm(registry.Entry{Name: "x"}, nil) },
		"empty-name": func(r *registry.Registry) error {
			return r.RegisterNetwork(registry.Entry{}, func(registry.Params, uint64) (*tokendist.Graph, error) { return nil, nil })
		},
		"dup-param": func(r *registry.Registry) error {
			return r.RegisterMetric(registry.Entry{Name: "m", Params: []registry.Param{{Name: "a"}, {Name: "a"}}}, func(registry.MetricInput) (float64, error) { return 0, nil })
		},
		"bad-default": func(r *registry.Registry) error {
			return r.RegisterMetric(registry.Entry{Name: "m", Params: []registry.Param{{Name: "a", Type: registry.ParamInt, Default: "x"}}}, func(registry.MetricInput) (float64, error) { return 0, nil })
		},
		"huge-param-name": func(r *registry.Registry) error {
			return r.RegisterMetric(registry.Entry{Name: "m", Params: []registry.Param{{Name: advExpand(huge), Type: 99}}}, func(registry.MetricInput) (float64, error) { return 0, nil })
		},
		"other-nil": func(r *registry.Registry) error {
			return r.RegisterOther(registry.KindWorkload, registry.Entry{Name: "w"}, nil)
		},
		"nil-graph-built": func(r *registry.Registry) error {
			if err := r.RegisterNetwork(registry.Entry{Name: "nilnet"}, func(registry.Params, uint64) (*tokendist.Graph, error) { return nil, nil }); err != nil {
				return advWrong("register: %v", err)
			}
			_, err := r.Run(context.Background(), registry.Spec{Network: registry.Choice{Name: "nilnet"}, Loads: registry.Choice{Name: "point-mass", Params: registry.Params{"tokens": 1}}, Algorithm: registry.Choice{Name: "rsw-diffusion"}}, nil)
			return err
		},
		"wrong-other-type": func(r *registry.Registry) error {
			if err := r.RegisterOther(registry.KindWorkload, registry.Entry{Name: "w"}, 42); err != nil {
				return advWrong("register: %v", err)
			}
			_, _, err := r.BuildDynamic(registry.Spec{Workload: []registry.Choice{{Name: "w"}}})
			return err
		},
		"run-options-set": func(r *registry.Registry) error {
			_, err := r.Run(context.Background(), registry.Spec{Network: registry.Choice{Name: "ring", Params: registry.Params{"n": 4}}, Loads: registry.Choice{Name: "point-mass", Params: registry.Params{"tokens": 1}}, Algorithm: registry.Choice{Name: "rsw-diffusion"}},
				&tokendist.RunOptions{MaxSteps: 5})
			return err
		},
	}
	for name, f := range regs {
		add("registry", "register/"+name, func() error {
			err := f(registry.New())
			if err == nil {
				return advWrong("accepted")
			}
			return err
		})
	}
}

func advWorkloadCases(add func(surface, name string, run func() error)) {
	ring, _ := tokendist.Ring(64)
	runWith := func(w tokendist.Workload, steps int64, start tokendist.Loads) error {
		b, err := tokendist.NewRSWDiffusion(ring)
		if err != nil {
			return err
		}
		if start == nil {
			start = make(tokendist.Loads, 64)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		res, err := tokendist.Run(ctx, ring, start, b, &tokendist.RunOptions{MaxSteps: steps, Workload: w, NoStability: true, Seed: 3})
		for v, x := range res.Loads {
			if x < 0 {
				return advWrong("node %d holds %d (a wrapped load) in the result (err %v)", v, x, err)
			}
		}
		if err != nil {
			return err
		}
		if got, want := res.Loads.Total(), start.Total()+res.Arrived-res.Completed; got != want {
			return advWrong("total %d, initial + arrived − completed = %d", got, want)
		}
		return nil
	}
	for _, rate := range []float64{0, 1e-300, 0.5, 10, 1e6, 1e10, 1e11, 5e11, 1e12, math.MaxFloat64, math.NaN(), math.Inf(1), -1} {
		for _, perNode := range []bool{false, true} {
			add("workloads", fmt.Sprintf("poisson/%g/per-node=%v", rate, perNode), func() error {
				w, err := tokendist.NewPoissonArrivals(rate, perNode)
				if err != nil {
					return err
				}
				start := time.Now()
				if err := runWith(w, 50, nil); err != nil {
					return err
				}
				if d := time.Since(start); d > 5*time.Second {
					return advWrong("50 steps took %v", d)
				}
				return nil
			})
		}
		add("workloads", fmt.Sprintf("hotspot/%g", rate), func() error {
			w, err := tokendist.NewHotSpotArrivals(rate, 0, 5, 5, 63)
			if err != nil {
				return err
			}
			return runWith(w, 50, nil)
		})
		add("workloads", fmt.Sprintf("adversary/%g", rate), func() error {
			w, err := tokendist.NewAdversary(rate)
			if err != nil {
				return err
			}
			return runWith(w, 50, nil)
		})
		add("workloads", fmt.Sprintf("service/%g", rate), func() error {
			w, err := tokendist.NewService(rate)
			if err != nil {
				return err
			}
			l := make(tokendist.Loads, 64)
			l[0] = 1 << 40
			return runWith(w, 50, l)
		})
	}
	// A Poisson rate of 1e10 per step is fast and honours cancellation.
	add("workloads", "poisson-1e10-cancel", func() error {
		w, err := tokendist.NewPoissonArrivals(1e10, false)
		if err != nil {
			return err
		}
		b, _ := tokendist.NewRSWDiffusion(ring)
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		start := time.Now()
		_, err = tokendist.Run(ctx, ring, make(tokendist.Loads, 64), b, &tokendist.RunOptions{MaxSteps: 1 << 40, Workload: w, NoStability: true})
		if d := time.Since(start); d > 2*time.Second {
			return advWrong("cancelled after 50ms, returned after %v", d)
		}
		return err
	})
	// Arrivals near the top of int64: the overflow error, never a wrapped load.
	for _, top := range []int64{math.MaxInt64, math.MaxInt64 - 1, math.MaxInt64 - 1<<40, 1 << 62, math.MaxInt64 / 2} {
		add("workloads", fmt.Sprintf("trace-near-max/%d", top), func() error {
			w, err := tokendist.NewTraceArrivals(strings.NewReader("1,0,1099511627776\n1,1,1099511627776\n2,0,1099511627776\n"))
			if err != nil {
				return err
			}
			l := make(tokendist.Loads, 64)
			l[0] = top
			return runWith(w, 5, l)
		})
		add("workloads", fmt.Sprintf("poisson-near-max/%d", top), func() error {
			w, err := tokendist.NewPoissonArrivals(1e9, true)
			if err != nil {
				return err
			}
			l := make(tokendist.Loads, 64)
			l[3] = top
			return runWith(w, 5, l)
		})
	}
	traces := map[string]io.Reader{
		"endless-rows":    &advRepeatReader{line: []byte("1,0,1\n")},
		"endless-garbage": &advRepeatReader{line: []byte("xxxxxxxx")},
		"endless-quote":   io.MultiReader(strings.NewReader("\""), &advRepeatReader{line: []byte("x")}),
		"huge-field":      nil, // built when the case runs
		"failing":         io.MultiReader(strings.NewReader("1,0,1\n"), advErrReader{}),
		"nil":             nil,
	}
	for name, r := range traces {
		if name == "huge-field" {
			r = &advLazyReader{mk: func() io.Reader { return strings.NewReader(strings.Repeat("9", 5<<20) + ",0,1\n") }}
		}
		add("workloads", "trace-reader/"+name, func() error {
			_, err := tokendist.NewTraceArrivals(r)
			if err == nil {
				return advWrong("accepted")
			}
			return err
		})
		add("workloads", "trace-csv-reader/"+name, func() error {
			rr := r
			if rr != nil && name == "endless-rows" {
				rr = io.MultiReader(strings.NewReader("step,time,discrepancy,max,min,potential,moved,messages,negative\n"), &advRepeatReader{line: []byte("1,1,1,1,1,1,1,1,1\n")})
			}
			_, err := tokendist.ReadTraceCSV(rr)
			if err == nil {
				return advWrong("accepted")
			}
			return err
		})
	}
	add("workloads", "combined-none", func() error {
		_, err := tokendist.NewCombinedWorkload()
		return err
	})
	add("workloads", "combined-nil", func() error {
		_, err := tokendist.NewCombinedWorkload(nil, nil)
		return err
	})
	for name, w := range map[string]tokendist.Workload{"negative-arrivals": advWorkload{in: -1}, "huge": advWorkload{in: math.MaxInt64, add: math.MaxInt64}, "lying": advWorkload{in: 5, add: 3},
		"panics": advWorkload{panics: true}, "shrinks": advWorkload{shrink: true}} {
		add("workloads", "user/"+name, func() error {
			return advMayPanic("user workload panic", func() error { return runWith(w, 5, nil) })
		})
	}
}

// advRepeatReader repeats line forever.
type advRepeatReader struct {
	line []byte
	off  int
}

func (r *advRepeatReader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		c := copy(p[n:], r.line[r.off:])
		n += c
		r.off = (r.off + c) % len(r.line)
	}
	return n, nil
}

type advErrReader struct{}

func (advErrReader) Read([]byte) (int, error) { return 0, errors.New("tokendist: test reader failed") }

// advWorkload is a misbehaving user workload.
type advWorkload struct {
	in, add int64
	panics  bool
	shrink  bool
}

func (w advWorkload) Init(*tokendist.State) error { return nil }
func (w advWorkload) Apply(s *tokendist.State) (int64, int64, error) {
	if w.panics {
		panic("user workload panic")
	}
	if w.shrink {
		s.Loads = s.Loads[:1]
		return 0, 0, nil
	}
	s.Loads[0] += w.add
	return w.in, 0, nil
}

func advChurnCases(add func(surface, name string, run func() error)) {
	ring, _ := tokendist.Ring(16)
	runWith := func(c tokendist.Churn, alg string) error {
		var b tokendist.Balancer
		var err error
		switch alg {
		case "rsw":
			b, err = tokendist.NewRSWDiffusion(ring)
		case "threshold2":
			b, err = tokendist.NewThreshold2(ring, nil)
		case "matching":
			b, err = tokendist.NewRandomMatching(ring)
		}
		if err != nil {
			return err
		}
		l := make(tokendist.Loads, 16)
		l[0] = 1000
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		res, err := tokendist.Run(ctx, ring, l, b, &tokendist.RunOptions{MaxSteps: 40, Churn: c, NoStability: true, SampleEvery: 1})
		if err != nil {
			return err
		}
		if res.Loads.Total() != 1000 {
			return advWrong("total %d after churn, want 1000", res.Loads.Total())
		}
		return nil
	}
	for _, p := range []float64{math.NaN(), -0.1, 0, 0.3, 1, 1.1, math.Inf(1)} {
		for _, q := range []float64{0, 0.5, 1, 2} {
			for _, alg := range []string{"rsw", "threshold2", "matching"} {
				add("churn", fmt.Sprintf("random/%g-%g/%s", p, q, alg), func() error {
					c, err := tokendist.NewRandomLinkChurn(p, q)
					if err != nil {
						return err
					}
					return runWith(c, alg)
				})
			}
		}
	}
	events := map[string][]tokendist.LinkEvent{
		"ok":         {{Step: 1, U: 0, V: 1}, {Step: 5, U: 0, V: 1, Up: true}},
		"not-a-link": {{Step: 1, U: 0, V: 5}},
		"negative":   {{Step: -1, U: 0, V: 1}},
		"node-range": {{Step: 1, U: 0, V: 1 << 40}},
		"huge-step":  {{Step: math.MaxInt64, U: 0, V: 1}},
		"all-down":   advAllDown(16),
		"none":       nil,
	}
	for name, ev := range events {
		for _, alg := range []string{"rsw", "threshold2", "matching"} {
			add("churn", fmt.Sprintf("schedule/%s/%s", name, alg), func() error {
				c, err := tokendist.NewScheduledLinkChurn(ev)
				if err != nil {
					return err
				}
				return runWith(c, alg)
			})
		}
	}
	for _, mode := range []string{"shrink", "grow", "replace", "negative", "too-many", "panic", "error"} {
		for _, alg := range []string{"rsw", "threshold2", "matching"} {
			add("churn", fmt.Sprintf("user/%s/%s", mode, alg), func() error {
				if mode == "panic" {
					// Run re-raises a user panic on the caller's goroutine.
					return advExpectPanic("user churn panic", func() error { return runWith(&advChurn{mode: mode}, alg) })
				}
				err := runWith(&advChurn{mode: mode}, alg)
				if err == nil && mode != "error" {
					return advWrong("a churn that %ss was accepted", mode)
				}
				return err
			})
		}
	}
	add("churn", "schedule-huge", func() error {
		ev := make([]tokendist.LinkEvent, 12<<20) // 384 MiB, over the child's budget
		_, err := tokendist.NewScheduledLinkChurn(ev)
		if err == nil {
			return advWrong("a schedule over the memory budget was copied")
		}
		return err
	})
}

func advAllDown(n int) []tokendist.LinkEvent {
	var ev []tokendist.LinkEvent
	for v := 0; v < n; v++ {
		ev = append(ev, tokendist.LinkEvent{Step: 0, U: v, V: (v + 1) % n})
	}
	return ev
}

type advChurn struct {
	mode  string
	calls int
}

func (c *advChurn) Init(*tokendist.State) error { return nil }
func (c *advChurn) Apply(s *tokendist.State) (int, error) {
	c.calls++
	switch c.mode {
	case "shrink":
		s.Live = s.Live[:len(s.Live)/2]
	case "grow":
		s.Live = append(s.Live, true, true)
	case "replace":
		s.Live = make([]bool, len(s.Live))
	case "negative":
		return -1, nil
	case "too-many":
		return len(s.Live), nil
	case "panic":
		panic("user churn panic")
	case "error":
		if c.calls > 3 {
			return 0, errors.New("user churn error")
		}
	}
	return 0, nil
}

func advPlotCases(add func(surface, name string, run func() error)) {
	texts := map[string]string{"1MiB": advHuge("t", 1<<20), "10MiB-unicode": "10MiB-unicode", "control": strings.Repeat("\n\t\x00", 1000), "invalid-utf8": strings.Repeat("\xff", 5000),
		"markup": strings.Repeat("<script>&amp;</svg>", 500), "empty": "", "rtl": strings.Repeat("\u202e", 3000)}
	for name, s := range texts {
		for _, where := range []string{"title", "xlabel", "ylabel", "line"} {
			add("plots", fmt.Sprintf("text/%s/%s", where, name), func() error {
				s := advExpand(s)
				if s == "10MiB-unicode" {
					s = strings.Repeat("é", 5<<20)
				}
				o := &plot.Options{}
				ln := plot.Line{Name: "a", X: []float64{0, 1, 2}, Y: []float64{3, 1, 2}}
				switch where {
				case "title":
					o.Title = s
				case "xlabel":
					o.XLabel = s
				case "ylabel":
					o.YLabel = s
				case "line":
					ln.Name = s
				}
				start := time.Now()
				svg, err := plot.Lines([]plot.Line{ln}, o)
				if err != nil {
					return err
				}
				if d := time.Since(start); d > 10*time.Second {
					return advWrong("took %v", d)
				}
				if len(svg) > 2<<20 {
					return advWrong("an SVG of %d bytes", len(svg))
				}
				if !bytes.Contains(svg, []byte("</svg>")) {
					return advWrong("no closing </svg>")
				}
				return nil
			})
		}
	}
	vals := map[string][]float64{"nan": {math.NaN(), 1}, "inf": {math.Inf(1), 1}, "huge": {1e308, -1e308}, "tiny": {5e-324, 0}, "same": {1, 1}, "empty": {}, "one": {7}}
	for name, v := range vals {
		for _, logy := range []bool{false, true} {
			add("plots", fmt.Sprintf("values/%s/log=%v", name, logy), func() error {
				x := make([]float64, len(v))
				for i := range x {
					x[i] = float64(i)
				}
				svg, err := plot.Lines([]plot.Line{{Name: "v", X: x, Y: v}}, &plot.Options{LogY: logy})
				if err != nil {
					return err
				}
				if !bytes.Contains(svg, []byte("</svg>")) {
					return advWrong("no closing </svg>")
				}
				return nil
			})
		}
	}
	add("plots", "many-lines", func() error {
		lines := make([]plot.Line, 2000)
		for i := range lines {
			lines[i] = plot.Line{Name: fmt.Sprint(i), X: []float64{0, 1}, Y: []float64{float64(i), 1}}
		}
		_, err := plot.Lines(lines, nil)
		return err
	})
	add("plots", "points-over-budget", func() error {
		x := make([]float64, 1<<21)
		_, err := plot.Lines([]plot.Line{{Name: "big", X: x, Y: x}}, nil)
		return err
	})
}

// advCallbackRegistry returns a registry whose algorithm "adv", metric "adv", workload
// "adv" and churn "adv" misbehave at the point named: "constructor", "step", "metric",
// "workload", "churn" (panic), or "metric" with value returning the metric's value.
func advCallbackRegistry(point string, value func() float64) *registry.Registry {
	reg := registry.New()
	c, _ := reg.Constructor(registry.KindAlgorithm, "randomized-diffusion")
	inner := c.(registry.AlgorithmFunc)
	e, _ := reg.Lookup(registry.KindAlgorithm, "randomized-diffusion")
	defaults, _ := e.Resolve(nil)
	must := func(err error) {
		if err != nil {
			panic(err)
		}
	}
	must(reg.RegisterAlgorithm(registry.Entry{Name: "adv"}, func(g *tokendist.Graph, l tokendist.Loads, p registry.Params) (tokendist.Balancer, error) {
		switch point {
		case "constructor":
			panic("user constructor panic")
		case "nil-balancer":
			return nil, nil
		case "typed-nil":
			var d *tokendist.DimensionExchange
			return d, nil
		}
		b, err := inner(g, l, defaults)
		if err != nil {
			return nil, err
		}
		return &advBalancer{Balancer: b, point: point}, nil
	}))
	must(reg.RegisterMetric(registry.Entry{Name: "adv"}, func(registry.MetricInput) (float64, error) {
		switch point {
		case "metric-panic":
			panic("user metric panic")
		case "metric-error":
			return 0, errors.New("user metric error")
		}
		if value != nil {
			return value(), nil
		}
		return 1, nil
	}))
	must(reg.RegisterNetwork(registry.Entry{Name: "adv"}, func(registry.Params, uint64) (*tokendist.Graph, error) {
		if point == "network" {
			panic("user network panic")
		}
		return tokendist.Ring(8)
	}))
	must(reg.RegisterOther(registry.KindWorkload, registry.Entry{Name: "adv"}, registry.WorkloadFunc(func(registry.Params) (tokendist.Workload, error) {
		if point == "workload-constructor" {
			panic("user workload constructor panic")
		}
		return advWorkload{panics: point == "workload"}, nil
	})))
	must(reg.RegisterOther(registry.KindChurn, registry.Entry{Name: "adv"}, registry.ChurnFunc(func(registry.Params) (tokendist.Churn, error) {
		return &advChurn{mode: map[bool]string{true: "panic", false: ""}[point == "churn"]}, nil
	})))
	return reg
}

// advBalancer wraps a balancer and misbehaves in Step.
type advBalancer struct {
	tokendist.Balancer
	point string
	steps int
}

func (b *advBalancer) Init(s *tokendist.State) error {
	if in, ok := b.Balancer.(tokendist.Initializer); ok {
		return in.Init(s)
	}
	return nil
}

func (b *advBalancer) Step(s *tokendist.State) error {
	b.steps++
	switch b.point {
	case "step":
		if b.steps == 3 {
			panic("user step panic")
		}
	case "step-error":
		if b.steps == 3 {
			return errors.New("user step error")
		}
	case "step-slow":
		select {
		case <-time.After(time.Millisecond):
		case <-s.Context.Done():
			return s.Context.Err()
		}
	case "step-nil-panic":
		var none []int
		_ = none[b.steps] // a runtime error panic: index out of range
	}
	return b.Balancer.Step(s)
}

func advCallbackCases(add func(surface, name string, run func() error)) {
	text := func(extra string) string {
		s := strings.Replace(advBase, "algorithms: [randomized-diffusion, rsw-diffusion]", "algorithms: [adv, rsw-diffusion]", 1)
		return s + extra
	}
	points := map[string]struct {
		extra  string
		failed int // runs stored as failed (of 4)
	}{
		"constructor":          {"", 2},
		"nil-balancer":         {"", 2},
		"typed-nil":            {"", 2},
		"step":                 {"", 2},
		"step-nil-panic":       {"", 2},
		"step-error":           {"", 2},
		"metric-panic":         {"record:\n  metrics: [adv]\n", 4},
		"metric-error":         {"record:\n  metrics: [adv]\n", 4},
		"workload":             {"workload: adv\n", 4},
		"workload-constructor": {"workload: adv\n", -1},
		"churn":                {"churn: adv\n", 4},
		"network":              {"", 4},
		"step-slow":            {"", 0},
	}
	for point, p := range points {
		for _, cmd := range []string{"sweep", "run", "library"} {
			add("callbacks", fmt.Sprintf("%s/%s", cmd, point), func() error {
				dir := advDir()
				defer os.RemoveAll(dir)
				reg := advCallbackRegistry(point, nil)
				t := text(p.extra)
				if point == "network" {
					t = strings.Replace(t, "  - name: ring\n    n: 8", "  - name: adv", 1)
				}
				f := advWrite(filepath.Join(dir, "exp.yaml"), t)
				want := advMustFail
				if p.failed == 0 {
					want = advMustSucceed
				}
				db := filepath.Join(dir, "r.db")
				switch cmd {
				case "run":
					_, err := advRunCmd(reg, want, "run", f)
					return err
				case "sweep":
					_, err := advRunCmd(reg, want, "sweep", "--progress", "none", "--db", db, f)
					if p.failed < 0 {
						return err
					}
					// Every run is stored once, the failures with their error.
					n, cerr := advCountRuns(db)
					if cerr != nil || n != 4 {
						return advLost("%d of 4 runs stored (%v)", n, cerr)
					}
					return err
				}
				file, err := experiment.ReadFile(f, reg, false)
				if err != nil {
					return err
				}
				runs, err := file.Specs()
				if err != nil {
					return err
				}
				d, err := experiment.OpenDB(db)
				if err != nil {
					return err
				}
				defer d.Close()
				st, err := experiment.Sweep(context.Background(), reg, runs, d, experiment.SweepOptions{Workers: 2})
				if err != nil {
					return err
				}
				if st.Ran != 4 || st.Failed != p.failed {
					return advWrong("%d runs, %d failed; want 4 and %d", st.Ran, st.Failed, p.failed)
				}
				if strings.Contains(point, "panic") || point == "step" || point == "constructor" {
					_, rows, err := d.Query("status = 'Failed'")
					if err != nil {
						return err
					}
					for _, r := range rows {
						msg := fmt.Sprint(r[16])
						if !strings.Contains(msg, "panicked") || !strings.Contains(msg, "goroutine") {
							return advWrong("a panicking run stored without its panic and stack: %.200s", msg)
						}
					}
				}
				if st.Failed > 0 {
					return fmt.Errorf("tokendist: %d runs failed as expected", st.Failed)
				}
				return nil
			})
		}
	}
}

// advLazyReader builds its reader at the first Read.
type advLazyReader struct {
	mk func() io.Reader
	r  io.Reader
}

func (l *advLazyReader) Read(p []byte) (int, error) {
	if l.r == nil {
		l.r = l.mk()
	}
	return l.r.Read(p)
}
