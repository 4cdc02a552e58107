package experiment

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/tokendist/tokendist"
	"github.com/tokendist/tokendist/animate"
	"github.com/tokendist/tokendist/async"
	"github.com/tokendist/tokendist/internal/errs"
	"github.com/tokendist/tokendist/registry"
)

const animateManual = `Usage: tokendist animate [flags] FILE --out run.gif|run.html|run.svg

Runs one run of the experiment FILE and draws it: the network in a layout that fits its
family (ring as a circle, mesh and torus as a lattice, hypercube, tree from its centre,
anything else force-directed), each node's load as a colour, the tokens moved on each
link since the previous frame as an arrow whose width is the count (exact on trees and
for dimension exchange; elsewhere each node's change is drawn as a ring instead), a step
counter and the discrepancy curve growing beneath. The format follows --out's extension:
.gif (animated), .html (one self-contained page with play/pause and a step slider) or
.svg (one frame, --frame).

A run with a network_model (node programs in the event simulator) is drawn in model
time: frames at equal model-time intervals, the time as the counter ("t = 12.5") and on
the curve's axis, crashed nodes grey with a cross (their persisted loads as labels), the
tokens in flight on each link direction as arrows whose width is the count, and a mark
on each link that lost datagrams since the previous frame (the counts in the caption).

  --run SEL       the run: its number in the grid (0 first, as tokendist run lists them),
                  a prefix of its key, or text found in exactly one run's label
                  "ALGORITHM NETWORK LOADS seed S" (default: the first run)
  --every K       a frame every K steps (default 1); in a network_model run, every K
                  units of model time, K > 0 (default: 1, 2 or 5 times a power of ten
                  near a hundredth of the run's model time, which a first run of the
                  simulation measures unless the run has a workload, which ends it at
                  max_time)
  --out F         the output file (.gif, .html or .svg)
  --frame K       the frame of an .svg (default: the last)
  --layout L      auto (default), circle, lattice, hypercube, tree or force
  --quick         use the file's quick section

Limits: at most 5000 nodes, 2000 frames and 64 MiB of output; a run over a limit is
refused with the limit named: sample with --every K (the message names the K that fits
when the run's length is known).

Exit status: 0 on success, 1 if the run or the writing failed, 2 for a bad file or flag.
`

func (c *command) animate(args []string) int {
	fs := c.flags("animate", animateManual)
	sel := fs.String("run", "", "the run: grid number, key prefix or label text")
	everyArg := fs.String("every", "", "a frame every K steps (network_model runs: K units of model time)")
	out := fs.String("out", "", "output file: .gif, .html or .svg")
	frame := fs.Int("frame", -1, "the frame of an .svg (-1: the last)")
	layout := fs.String("layout", "auto", "auto, circle, lattice, hypercube, tree or force")
	quick := fs.Bool("quick", false, "use the file's quick section")
	pos, code, ok := c.parse(fs, args)
	if !ok {
		return code
	}
	format := strings.ToLower(strings.TrimPrefix(filepath.Ext(*out), "."))
	switch {
	case *out == "":
		return c.fail(ExitUsage, errs.BadParam("animate needs --out FILE (.gif, .html or .svg)"))
	case format != "gif" && format != "html" && format != "svg":
		return c.fail(ExitUsage, errs.BadParam("animate: --out %s: the extension must be .gif, .html or .svg", errs.Quote([]byte(*out))))
	}
	_, runs, code, ok := c.readRuns("animate", pos, *quick)
	if !ok {
		return code
	}
	r, err := selectRun(runs, *sel)
	if err != nil {
		return c.fail(ExitUsage, err)
	}
	if len(runs) > 1 && *sel == "" {
		fmt.Fprintf(c.stderr, "tokendist: animating run 0 of %d (%s); choose another with --run\n", len(runs), runLabel(r))
	}
	spec, err := c.reg.Canonical(r.Spec)
	if err != nil {
		return c.fail(ExitUsage, err)
	}
	g, _, b, err := c.reg.Build(spec)
	if err != nil {
		return c.fail(ExitUsage, err)
	}
	opts := &animate.Options{Layout: animate.Layout(*layout), Title: runLabel(r)}
	if spec.NetworkModel != nil {
		every := 0.0
		if *everyArg != "" {
			every, err = strconv.ParseFloat(*everyArg, 64)
			if err != nil || !(every > 0) || math.IsInf(every, 0) {
				return c.fail(ExitUsage, errs.BadParam("animate: --every %s (want a model time > 0 for a network_model run)", flagValue(*everyArg)))
			}
		}
		return c.animateSim(spec, g, opts, every, format, *out, *frame)
	}
	every := int64(1)
	if *everyArg != "" {
		every, err = strconv.ParseInt(*everyArg, 10, 64)
		if err != nil || every < 1 {
			return c.fail(ExitUsage, errs.BadParam("animate: --every %s (want a whole number of steps ≥ 1)", flagValue(*everyArg)))
		}
	}
	opts.Every = every
	rec, err := animate.NewRecorder(g, b, opts)
	if err != nil {
		return c.fail(ExitUsage, err)
	}
	if ms := spec.Stop.MaxSteps; ms > 0 && ms/every+2 > animate.DefaultMaxFrames {
		return c.fail(ExitUsage, errs.TooLargeParam("animate: max_steps %d at --every %d makes up to %d frames, more than %d; sample with --every %d or more",
			ms, every, ms/every+2, animate.DefaultMaxFrames, (ms+animate.DefaultMaxFrames-3)/(animate.DefaultMaxFrames-2)))
	}
	// Sampling every step lets the recorder see each step's matching (dimension
	// exchange); it changes no load. The stored spec is not written anywhere.
	spec.SampleEvery = every
	if _, matching := b.(interface{ ActiveColor(int64) int }); matching {
		spec.SampleEvery = 1
	}
	fl := newInflight()
	ctx, stop := c.interrupts("animate", fl)
	defer stop()
	if _, err := c.reg.Run(ctx, spec, &tokendist.RunOptions{Recorder: rec, Workers: 1}); err != nil {
		return c.fail(ExitFailed, err)
	}
	m, err := rec.Movie()
	if err != nil {
		return c.fail(ExitFailed, err)
	}
	return c.writeMovie(m, format, *out, *frame, fmt.Sprintf("steps %d..%d", m.Frames()[0].Step, m.Frames()[len(m.Frames())-1].Step))
}

// animateSim draws the run of spec, which has a network_model, in model time: a frame
// every `every` time units (0: animate.RoundInterval of the run's model time, from a
// first run unless a workload makes it max_time). It runs the spec through the
// registry, as sweep does, with the Recorder observing the simulation.
func (c *command) animateSim(spec registry.Spec, g *tokendist.Graph, opts *animate.Options, every float64, format, out string, frame int) int {
	if _, err := animate.NewRecorder(g, nil, opts); err != nil { // the node limit, the layout
		return c.fail(ExitUsage, err)
	}
	fl := newInflight()
	ctx, stop := c.interrupts("animate", fl)
	defer stop()
	// end is the run's model time when it is known before the observed run.
	end := math.NaN()
	if len(spec.Workload) > 0 {
		end = spec.NetworkModel.MaxTime
		if end == 0 {
			end = async.DefaultMaxTime
		}
	}
	measure := func() (float64, error) {
		res, err := c.reg.Run(ctx, spec, &tokendist.RunOptions{Workers: 1})
		return res.Metrics["async_time"], err
	}
	if every == 0 {
		if math.IsNaN(end) {
			t, err := measure()
			if err != nil {
				return c.fail(ExitFailed, err)
			}
			end = t
		}
		every = animate.RoundInterval(end, animate.DefaultTimeFrames)
	}
	if err := animate.CheckTimeFrames(end, every, animate.DefaultMaxFrames); err != nil {
		return c.fail(ExitUsage, err)
	}
	opts.EveryTime = every
	rec, err := animate.NewRecorder(g, nil, opts)
	if err != nil {
		return c.fail(ExitUsage, err)
	}
	if _, err := c.reg.Run(ctx, spec, &tokendist.RunOptions{Recorder: rec, Workers: 1}); err != nil {
		if errors.Is(err, tokendist.ErrTooLarge) && math.IsNaN(end) {
			// Too many frames: the run's model time names the --every that fits.
			if t, err2 := measure(); err2 == nil {
				if err2 = animate.CheckTimeFrames(t, every, animate.DefaultMaxFrames); err2 != nil {
					return c.fail(ExitUsage, err2)
				}
			}
		}
		return c.fail(ExitFailed, err)
	}
	m, err := rec.Movie()
	if err != nil {
		return c.fail(ExitFailed, err)
	}
	fr := m.Frames()
	return c.writeMovie(m, format, out, frame, fmt.Sprintf("t = %s..%s every %s",
		strconv.FormatFloat(fr[0].Time, 'g', 6, 64), strconv.FormatFloat(fr[len(fr)-1].Time, 'g', 6, 64), strconv.FormatFloat(every, 'g', 6, 64)))
}

// writeMovie writes m to out in format (an .svg: frame, -1 for the last) and reports
// it, span saying which steps or times the frames cover.
func (c *command) writeMovie(m *animate.Movie, format, out string, frame int, span string) int {
	var buf bytes.Buffer
	var err error
	switch format {
	case "gif":
		err = m.WriteGIF(&buf)
	case "html":
		err = m.WriteHTML(&buf)
	default:
		k := frame
		if k < 0 {
			k = len(m.Frames()) - 1
		}
		err = m.WriteSVG(&buf, k)
	}
	if err == nil {
		err = os.WriteFile(out, buf.Bytes(), 0o644)
		if err != nil {
			err = wrapf(err, "animate --out")
		}
	}
	if err != nil {
		return c.fail(ExitFailed, err)
	}
	fmt.Fprintf(c.stdout, "%s: %d frames (%s), layout %s, %d bytes\n", out, len(m.Frames()), span, m.Layout(), buf.Len())
	return ExitOK
}

// flagValue shows a flag's value in an error: as given when it is a number, else
// quoted.
func flagValue(v string) string {
	if _, err := strconv.ParseFloat(v, 64); err == nil {
		return v
	}
	return errs.Quote([]byte(v))
}

// runLabel names a run as --run's label text matches it.
func runLabel(r Run) string {
	return r.Algorithm + " " + r.Network + " " + r.Loads + " seed " + strconv.FormatUint(r.Spec.Seed, 10)
}

// selectRun picks the run named by sel (see animate's manual); an empty sel is the
// first run. O(runs).
func selectRun(runs []Run, sel string) (Run, error) {
	if len(runs) == 0 {
		return Run{}, errs.BadParam("animate: the file has no runs")
	}
	if sel == "" {
		return runs[0], nil
	}
	// A number in range is a run's number; one out of range may still be a key prefix
	// (keys are hexadecimal: one in 40 starts with 8 decimal digits).
	i, numErr := strconv.Atoi(sel)
	if numErr == nil && i >= 0 && i < len(runs) {
		return runs[i], nil
	}
	var byKey, byLabel []Run
	for _, r := range runs {
		if len(sel) >= 4 && strings.HasPrefix(r.Key, sel) {
			byKey = append(byKey, r)
		}
		if strings.Contains(runLabel(r), sel) {
			byLabel = append(byLabel, r)
		}
	}
	for _, m := range [][]Run{byKey, byLabel} {
		if len(m) == 1 {
			return m[0], nil
		}
	}
	if numErr == nil && len(byKey)+len(byLabel) == 0 {
		return Run{}, errs.BadParam("animate: --run %d: the file has runs 0..%d", i, len(runs)-1)
	}
	if n := len(byKey) + len(byLabel); n > 1 {
		return Run{}, errs.BadParam("animate: --run %s matches %d runs (give its number, a longer key prefix or more of its label)", errs.Quote([]byte(sel)), n)
	}
	return Run{}, errs.BadParam("animate: --run %s matches no run (give its number 0..%d, a key prefix or text of its label)", errs.Quote([]byte(sel)), len(runs)-1)
}
