package experiment

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/tokendist/tokendist"
	"github.com/tokendist/tokendist/animate"
	"github.com/tokendist/tokendist/internal/errs"
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

  --run SEL       the run: its number in the grid (0 first, as tokendist run lists them),
                  a prefix of its key, or text found in exactly one run's label
                  "ALGORITHM NETWORK LOADS seed S" (default: the first run)
  --every K       a frame every K steps (default 1)
  --out F         the output file (.gif, .html or .svg)
  --frame K       the frame of an .svg (default: the last)
  --layout L      auto (default), circle, lattice, hypercube, tree or force
  --quick         use the file's quick section

Limits: at most 5000 nodes, 2000 frames and 64 MiB of output; a run over a limit is
refused with the limit named: sample with --every K.

Exit status: 0 on success, 1 if the run or the writing failed, 2 for a bad file or flag.
`

func (c *command) animate(args []string) int {
	fs := c.flags("animate", animateManual)
	sel := fs.String("run", "", "the run: grid number, key prefix or label text")
	every := fs.Int64("every", 1, "a frame every K steps")
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
	case *every < 1:
		return c.fail(ExitUsage, errs.BadParam("animate: --every %d (want ≥ 1)", *every))
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
	if spec.NetworkModel != nil {
		return c.fail(ExitUsage, errs.BadParam("animate: run %d has a network_model (node programs in the event simulator); animate runs the synchronous stepper only", r.Index))
	}
	g, _, b, err := c.reg.Build(spec)
	if err != nil {
		return c.fail(ExitUsage, err)
	}
	opts := &animate.Options{Every: *every, Layout: animate.Layout(*layout), Title: runLabel(r)}
	rec, err := animate.NewRecorder(g, b, opts)
	if err != nil {
		return c.fail(ExitUsage, err)
	}
	if ms := spec.Stop.MaxSteps; ms > 0 && ms / *every + 2 > animate.DefaultMaxFrames {
		return c.fail(ExitUsage, errs.TooLargeParam("animate: max_steps %d at --every %d makes up to %d frames, more than %d; sample with --every %d or more",
			ms, *every, ms / *every + 2, animate.DefaultMaxFrames, (ms+animate.DefaultMaxFrames-3)/(animate.DefaultMaxFrames-2)))
	}
	// Sampling every step lets the recorder see each step's matching (dimension
	// exchange); it changes no load. The stored spec is not written anywhere.
	spec.SampleEvery = *every
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
	var buf bytes.Buffer
	switch format {
	case "gif":
		err = m.WriteGIF(&buf)
	case "html":
		err = m.WriteHTML(&buf)
	default:
		k := *frame
		if k < 0 {
			k = len(m.Frames()) - 1
		}
		err = m.WriteSVG(&buf, k)
	}
	if err == nil {
		err = os.WriteFile(*out, buf.Bytes(), 0o644)
		if err != nil {
			err = wrapf(err, "animate --out")
		}
	}
	if err != nil {
		return c.fail(ExitFailed, err)
	}
	fmt.Fprintf(c.stdout, "%s: %d frames (steps %d..%d), layout %s, %d bytes\n", *out, len(m.Frames()), m.Frames()[0].Step, m.Frames()[len(m.Frames())-1].Step, m.Layout(), buf.Len())
	return ExitOK
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
	if i, err := strconv.Atoi(sel); err == nil {
		if i < 0 || i >= len(runs) {
			return Run{}, errs.BadParam("animate: --run %d: the file has runs 0..%d", i, len(runs)-1)
		}
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
	if n := len(byKey) + len(byLabel); n > 1 {
		return Run{}, errs.BadParam("animate: --run %s matches %d runs (give its number, a longer key prefix or more of its label)", errs.Quote([]byte(sel)), n)
	}
	return Run{}, errs.BadParam("animate: --run %s matches no run (give its number 0..%d, a key prefix or text of its label)", errs.Quote([]byte(sel)), len(runs)-1)
}
