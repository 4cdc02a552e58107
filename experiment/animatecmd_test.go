package experiment

import (
	"bytes"
	"context"
	"fmt"
	"image/gif"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tokendist/tokendist/animate"
	"github.com/tokendist/tokendist/registry"
)

const animateFile = `networks:
  - name: kary-tree
    height: 3
  - name: torus
    sides: [6, 6]
loads:
  - name: point-mass
    tokens: 200
algorithms: [threshold-2]
stop:
  max_steps: 30
seeds: 1
`

// TestAnimateCommand draws runs of a file as GIF, HTML and SVG, selects runs by
// number, key and label, and refuses bad flags and specs over the limits with the
// limit named.
func TestAnimateCommand(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "a.yaml")
	require.NoError(t, os.WriteFile(file, []byte(animateFile), 0o644))

	gifOut := filepath.Join(dir, "run.gif")
	code, out, errs := runMain(t, "animate", file, "--out", gifOut)
	require.Equal(t, ExitOK, code, errs)
	require.Contains(t, errs, "animating run 0 of 2", "the first run by default, said so")
	require.Contains(t, out, "layout tree")
	b, err := os.ReadFile(gifOut)
	require.NoError(t, err)
	g, err := gif.DecodeAll(bytes.NewReader(b))
	require.NoError(t, err)
	require.Len(t, g.Image, 31, "steps 0..30, a frame each")

	code, out, errs = runMain(t, "animate", file, "--run", "torus", "--every", "3", "--out", gifOut)
	require.Equal(t, ExitOK, code, errs)
	require.Contains(t, out, "11 frames (steps 0..30), layout lattice")
	require.Empty(t, errs)

	htmlOut := filepath.Join(dir, "run.html")
	code, _, errs = runMain(t, "animate", file, "--run", "1", "--out", htmlOut)
	require.Equal(t, ExitOK, code, errs)
	page, err := os.ReadFile(htmlOut)
	require.NoError(t, err)
	require.Contains(t, string(page), `id="slider"`)
	require.Contains(t, string(page), "threshold-2 torus")

	_, runs, _, ok := (&command{}).readRunsQuiet(t, file)
	require.True(t, ok)
	svgOut := filepath.Join(dir, "run.svg")
	code, _, errs = runMain(t, "animate", file, "--run", runs[1].Key[:8], "--frame", "2", "--out", svgOut)
	require.Equal(t, ExitOK, code, errs)
	svg, err := os.ReadFile(svgOut)
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(string(svg), "<svg "))
	require.Contains(t, string(svg), "step 2 ")

	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"animate", file}, ExitUsage, "needs --out"},
		{[]string{"animate", file, "--out", "x.png"}, ExitUsage, "must be .gif, .html or .svg"},
		{[]string{"animate", file, "--out", gifOut, "--every", "0"}, ExitUsage, "--every 0"},
		{[]string{"animate", file, "--out", gifOut, "--run", "7"}, ExitUsage, "runs 0..1"},
		{[]string{"animate", file, "--out", gifOut, "--run", "threshold"}, ExitUsage, "matches 2 runs"},
		{[]string{"animate", file, "--out", gifOut, "--run", "nothing like it"}, ExitUsage, "matches no run"},
		{[]string{"animate", file, "--out", gifOut, "--layout", "spiral"}, ExitUsage, `layout "spiral"`},
		{[]string{"animate", file, "--out", svgOut, "--frame", "99"}, ExitFailed, "frame 99"},
		{[]string{"animate", file, "--out", filepath.Join(dir, "no", "such", "dir.gif")}, ExitFailed, "animate --out"},
	} {
		code, _, errs := runMain(t, c.args...)
		require.Equal(t, c.code, code, "%v: %s", c.args, errs)
		require.True(t, strings.HasPrefix(errs, "tokendist: "), errs)
		require.Contains(t, errs, c.want, c.args)
	}

	// Hostile specs: too many steps for the frame limit, too many nodes.
	hostile := filepath.Join(dir, "h.yaml")
	require.NoError(t, os.WriteFile(hostile, []byte(strings.Replace(animateFile, "max_steps: 30", "max_steps: 100000", 1)), 0o644))
	code, _, errs = runMain(t, "animate", hostile, "--out", gifOut)
	require.Equal(t, ExitUsage, code, errs)
	require.Contains(t, errs, "more than 2000")
	require.Contains(t, errs, "--every 51 or more")
	code, _, errs = runMain(t, "animate", hostile, "--every", "51", "--out", gifOut)
	require.Equal(t, ExitOK, code, errs)

	big := filepath.Join(dir, "big.yaml")
	require.NoError(t, os.WriteFile(big, []byte("networks:\n  - name: ring\n    n: 6000\nloads:\n  - name: point-mass\n    tokens: 10\nalgorithms: [randomized-diffusion]\nstop:\n  max_steps: 3\nseeds: 1\n"), 0o644))
	code, _, errs = runMain(t, "animate", big, "--out", gifOut)
	require.Equal(t, ExitUsage, code, errs)
	require.Contains(t, errs, "MaxNodes = 5000")

	// A run without a step bound stops at the frame limit, naming it.
	loose := filepath.Join(dir, "loose.yaml")
	require.NoError(t, os.WriteFile(loose, []byte("networks:\n  - name: ring\n    n: 8\nloads:\n  - name: point-mass\n    tokens: 100\nalgorithms: [threshold-2]\nstop:\n  no_stability: true\nseeds: 1\n"), 0o644))
	code, _, errs = runMain(t, "animate", loose, "--out", gifOut)
	require.Equal(t, ExitFailed, code, errs)
	require.Contains(t, errs, "MaxFrames = 2000")
	require.Contains(t, errs, "Every K")

	code, out, _ = runMain(t, "help", "animate")
	require.Equal(t, ExitOK, code)
	require.Contains(t, out, "--every K")
	code, out, _ = runMain(t, "--help")
	require.Equal(t, ExitOK, code)
	require.Contains(t, out, "tokendist animate FILE")
}

// readRunsQuiet reads file's runs as the commands do.
func (c *command) readRunsQuiet(t *testing.T, file string) (*File, []Run, int, bool) {
	t.Helper()
	var errb bytes.Buffer
	c.stderr = &errb
	c.reg = registry.New()
	f, runs, code, ok := c.readRuns("animate", []string{file}, false)
	require.True(t, ok, errb.String())
	return f, runs, code, ok
}

const animateSimFile = `networks:
  - name: torus
    sides: [4, 4]
loads:
  - name: point-mass
    tokens: 400
algorithms: [randomized-diffusion]
stop:
  max_steps: 12
seeds: 1
network_model:
  delay: {kind: uniform, min: 0.5, max: 2}
  loss: 0.1
  crashes:
    - {node: 5, at: 2.5, down_for: 4}
`

// TestAnimateCommandSimulatedRun draws a network_model run in model time as GIF, HTML
// and SVG: the default interval is a round hundredth of the run's model time (which
// the sweep's own run of the spec reports as async_time), --every is model time, the
// crashed node is in the frames while it is down, and a frame count over the limit is
// refused naming the --every that fits.
func TestAnimateCommandSimulatedRun(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "sim.yaml")
	require.NoError(t, os.WriteFile(file, []byte(animateSimFile), 0o644))
	_, runs, _, ok := (&command{}).readRunsQuiet(t, file)
	require.True(t, ok)
	require.Len(t, runs, 1)
	res, err := registry.Default().Run(context.Background(), runs[0].Spec, nil)
	require.NoError(t, err)
	end := res.Metrics["async_time"]
	require.Positive(t, res.Metrics["async_lost"])
	require.Greater(t, end, 6.5, "the run outlasts the crash")
	every := animate.RoundInterval(end, animate.DefaultTimeFrames)

	gifOut := filepath.Join(dir, "sim.gif")
	code, out, errs := runMain(t, "animate", file, "--out", gifOut)
	require.Equal(t, ExitOK, code, errs)
	frames := int(math.Ceil(end/every)) + 1
	require.Contains(t, out, fmt.Sprintf("%d frames (t = 0..%s every %s), layout lattice", frames,
		strconv.FormatFloat(end, 'g', 6, 64), strconv.FormatFloat(every, 'g', 6, 64)))
	b, err := os.ReadFile(gifOut)
	require.NoError(t, err)
	g, err := gif.DecodeAll(bytes.NewReader(b))
	require.NoError(t, err)
	require.Len(t, g.Image, frames)

	code, out, errs = runMain(t, "animate", file, "--every", "0.5", "--out", gifOut)
	require.Equal(t, ExitOK, code, errs)
	require.Contains(t, out, fmt.Sprintf("%d frames (t = 0..", int(math.Ceil(end/0.5))+1))
	require.Contains(t, out, "every 0.5)")

	htmlOut := filepath.Join(dir, "sim.html")
	code, _, errs = runMain(t, "animate", file, "--every", "0.5", "--out", htmlOut)
	require.Equal(t, ExitOK, code, errs)
	page, err := os.ReadFile(htmlOut)
	require.NoError(t, err)
	require.Contains(t, string(page), `id="slider"`)
	require.Contains(t, string(page), `id="down"`)
	require.Contains(t, string(page), "randomized-diffusion torus")
	require.Contains(t, string(page), `"t":"t = 3  disc `, "the frame at model time 3 (node 5 down)")

	// Frame 6 at --every 0.5 is t = 3, while node 5 is down: its cross is drawn.
	svgOut := filepath.Join(dir, "sim.svg")
	code, _, errs = runMain(t, "animate", file, "--every", "0.5", "--frame", "6", "--out", svgOut)
	require.Equal(t, ExitOK, code, errs)
	svg, err := os.ReadFile(svgOut)
	require.NoError(t, err)
	require.Contains(t, string(svg), "t = 3  disc ")
	require.Regexp(t, `<path id="down" [^>]* d="M[0-9]`, string(svg))
	code, _, errs = runMain(t, "animate", file, "--every", "0.5", "--frame", "0", "--out", svgOut)
	require.Equal(t, ExitOK, code, errs)
	svg, err = os.ReadFile(svgOut)
	require.NoError(t, err)
	require.Regexp(t, `<path id="down" [^>]* d=""`, string(svg), "no node is down at t = 0")

	for _, c := range []struct {
		every, want string
	}{{"0", "--every 0 (want a model time > 0"}, {"-1", "--every -1"}, {"x", `--every "x"`}, {"Inf", "--every Inf"}} {
		code, _, errs := runMain(t, "animate", file, "--every", c.every, "--out", gifOut)
		require.Equal(t, ExitUsage, code, errs)
		require.True(t, strings.HasPrefix(errs, "tokendist: "), errs)
		require.Contains(t, errs, c.want)
	}
	// Too many frames: refused naming the limit and the --every that fits.
	fit := animate.RoundInterval(end, animate.DefaultMaxFrames-2)
	code, _, errs = runMain(t, "animate", file, "--every", "0.001", "--out", gifOut)
	require.Equal(t, ExitUsage, code, errs)
	require.Contains(t, errs, "MaxFrames = 2000")
	require.Contains(t, errs, "--every "+strconv.FormatFloat(fit, 'g', -1, 64)+")")
	code, _, errs = runMain(t, "animate", file, "--every", strconv.FormatFloat(fit, 'g', -1, 64), "--out", gifOut)
	require.Equal(t, ExitOK, code, errs)

	// With a workload the run ends at max_time: the default interval is a hundredth of it.
	wl := filepath.Join(dir, "wl.yaml")
	require.NoError(t, os.WriteFile(wl, []byte(strings.Replace(animateSimFile, "  loss: 0.1\n", "  loss: 0.1\n  max_time: 20\n", 1)+"workload: [{name: poisson, rate: 0.5}]\n"), 0o644))
	code, out, errs = runMain(t, "animate", wl, "--out", gifOut)
	require.Equal(t, ExitOK, code, errs)
	require.Contains(t, out, "101 frames (t = 0..20 every 0.2)")

	// Too many nodes: refused before any simulation.
	big := filepath.Join(dir, "big.yaml")
	require.NoError(t, os.WriteFile(big, []byte(strings.Replace(animateSimFile, "sides: [4, 4]", "sides: [80, 80]", 1)), 0o644))
	code, _, errs = runMain(t, "animate", big, "--out", gifOut)
	require.Equal(t, ExitUsage, code, errs)
	require.Contains(t, errs, "6400 nodes, more than MaxNodes = 5000")
}

// TestSelectRunNumericKeyPrefix: a number in range is a run's number; a number out of
// range that is a key prefix (keys are hexadecimal, so some start with decimal digits)
// selects that run; one that is neither names the range.
func TestSelectRunNumericKeyPrefix(t *testing.T) {
	runs := []Run{{Key: "9937396200ab"}, {Key: "ab99373962cd"}, {Key: "5555aaaa"}}
	r, err := selectRun(runs, "99373962")
	require.NoError(t, err)
	require.Equal(t, "9937396200ab", r.Key)
	r, err = selectRun(runs, "1")
	require.NoError(t, err)
	require.Equal(t, "ab99373962cd", r.Key)
	r, err = selectRun(runs, "5555")
	require.NoError(t, err)
	require.Equal(t, "5555aaaa", r.Key)
	_, err = selectRun(runs, "7")
	require.ErrorContains(t, err, "--run 7: the file has runs 0..2")
	_, err = selectRun(runs, "-1")
	require.ErrorContains(t, err, "--run -1: the file has runs 0..2")
}

// animateNetworks are the networks TestAnimateEveryAlgorithm tries, in order, for an
// algorithm: the first it accepts is drawn (the ring for KS-BF, the hypercube for
// Balance, a tree for the perfect-tree protocol and the tree algorithms).
var animateNetworks = []string{
	"name: torus\n    sides: [4, 4]",
	"name: hypercube\n    d: 3",
	"name: kary-tree\n    height: 3",
	"name: ring\n    n: 8",
	"name: complete\n    n: 6",
}

// TestAnimateEveryAlgorithm: tokendist animate writes a GIF and an HTML page of a run
// of every algorithm of the default registry, with its default parameters, on the
// first network of animateNetworks it accepts: the GIF decodes, with more than one
// frame, and the page is self-contained SVG (package animate's tests check that the
// frames show the loads).
func TestAnimateEveryAlgorithm(t *testing.T) {
	entries := registry.Default().Entries(registry.KindAlgorithm)
	require.GreaterOrEqual(t, len(entries), 10)
	dir := t.TempDir()
	for _, e := range entries {
		drawn := ""
		var tried []string
		for i, netSpec := range animateNetworks {
			file := filepath.Join(dir, fmt.Sprintf("%s-%d.yaml", e.Name, i))
			text := fmt.Sprintf("networks:\n  - %s\nloads:\n  - name: uniform-random\n    tokens: 64\nalgorithms: [%s]\nstop:\n  max_steps: 12\n  no_stability: true\nseeds: 1\n", netSpec, e.Name)
			if e.Name == "ring" { // Gao and Rosenberg's dag grows from one task on node 0
				text = strings.Replace(text, "name: uniform-random\n    tokens: 64", "name: point-mass\n    tokens: 1", 1)
			}
			require.NoError(t, os.WriteFile(file, []byte(text), 0o644))
			gifOut := filepath.Join(dir, e.Name+".gif")
			code, _, errs := runMain(t, "animate", file, "--out", gifOut)
			if code != ExitOK {
				tried = append(tried, errs)
				continue
			}
			b, err := os.ReadFile(gifOut)
			require.NoError(t, err)
			g, err := gif.DecodeAll(bytes.NewReader(b))
			require.NoError(t, err, e.Name)
			require.Greater(t, len(g.Image), 1, e.Name)
			htmlOut := filepath.Join(dir, e.Name+".html")
			code, _, errs = runMain(t, "animate", file, "--out", htmlOut)
			require.Equal(t, ExitOK, code, "%s: %s", e.Name, errs)
			page, err := os.ReadFile(htmlOut)
			require.NoError(t, err)
			require.Contains(t, string(page), "<svg", e.Name)
			require.NotContains(t, string(page), "http://cdn", e.Name)
			drawn = strings.SplitN(netSpec, "\n", 2)[0]
			break
		}
		require.NotEmpty(t, drawn, "%s: no network of animateNetworks was animated:\n%s", e.Name, strings.Join(tried, "\n"))
		t.Logf("%s: %s", e.Name, drawn)
	}
}
