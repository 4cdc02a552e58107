// Command scalingplot draws docs/scaling.svg from the output of BenchmarkScaling:
//
//	go test -run XXX -bench Scaling -benchtime 1x . > docs/scaling.txt
//	go run ./internal/cmd/scalingplot docs/scaling.txt docs/scaling.svg
package main

import (
	"bufio"
	"log"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/tokendist/tokendist/plot"
)

// Command scalingplot reads `go test -bench Scaling` output from the file named by its
// first argument and writes the SVG named by its second (docs/scaling.svg): CPU time per node and round, and
// live bytes per node, against n.
func main() {
	if len(os.Args) != 3 {
		log.Fatal("usage: go run ./internal/cmd/scalingplot BENCH-OUTPUT.txt OUT.svg")
	}
	in, out := os.Args[1], os.Args[2]
	f, err := os.Open(in)
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	re := regexp.MustCompile(`^BenchmarkScaling/(\w+)/n=(\d+)`)
	type pt struct{ n, v float64 }
	series := map[string][]pt{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		m := re.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		n, _ := strconv.ParseFloat(m[2], 64)
		fields := strings.Fields(sc.Text())
		for i := 1; i+1 < len(fields); i++ {
			v, err := strconv.ParseFloat(fields[i], 64)
			if err != nil {
				continue
			}
			switch fields[i+1] {
			case "cpu-ns/node":
				series[m[1]+" (CPU ns per node)"] = append(series[m[1]+" (CPU ns per node)"], pt{n, v})
			case "B/node":
				series[m[1]+" (bytes per node)"] = append(series[m[1]+" (bytes per node)"], pt{n, v})
			}
		}
	}
	if len(series) == 0 {
		log.Fatalf("%s: no BenchmarkScaling lines", in)
	}
	names := make([]string, 0, len(series))
	for k := range series {
		names = append(names, k)
	}
	sort.Strings(names)
	var lines []plot.Line
	for _, k := range names {
		pts := series[k]
		sort.Slice(pts, func(i, j int) bool { return pts[i].n < pts[j].n })
		var ln plot.Line
		ln.Name = k
		for _, p := range pts {
			ln.X, ln.Y = append(ln.X, p.n), append(ln.Y, p.v)
		}
		lines = append(lines, ln)
	}
	svg, err := plot.Lines(lines, &plot.Options{
		Title:  "One round, one worker: CPU time and memory per node",
		XLabel: "nodes n", YLabel: "ns per node / bytes per node",
		LogX: true, LogY: true, Points: true,
		Width: 18, Height: 11,
	})
	if err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(out, svg, 0o644); err != nil {
		log.Fatal(err)
	}
}
