package animate

import (
	"bytes"
	"context"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tokendist/tokendist"
	"github.com/tokendist/tokendist/internal/chromiumtest"
	"github.com/tokendist/tokendist/internal/testprog"
)

// pageChecker records errors (error events and console.error) and, once the page has
// loaded, moves the slider to the last frame as a user would (value and an input
// event) and writes a report into the DOM: the resources fetched, the errors, and the
// node fills before and after.
const pageChecker = `<script>
window.__errs = [];
window.addEventListener('error', function (e) {
  var t = e.target || {};
  window.__errs.push(String(e.message || t.src || t.href || t.tagName || 'error'));
}, true);
(function () { var ce = console.error; console.error = function () { window.__errs.push('console: ' + Array.prototype.join.call(arguments, ' ')); ce.apply(console, arguments); }; })();
window.addEventListener('load', function () {
  var out = {resources: [], errors: window.__errs, before: '', after: '', step: '', arrows: 0, frames: 0};
  performance.getEntriesByType('resource').forEach(function (r) { out.resources.push(r.name); });
  var fills = function () { return Array.prototype.map.call(document.querySelectorAll('#nodes circle'), function (c) { return c.getAttribute('fill'); }).join(' '); };
  out.before = fills();
  var sl = document.getElementById('slider');
  out.frames = +sl.max + 1;
  sl.value = SLIDE; sl.dispatchEvent(new Event('input'));
  out.after = fills();
  out.step = document.getElementById('step').textContent;
  out.arrows = document.querySelectorAll('#arrows path').length;
  var dn = document.getElementById('down'), ls = document.getElementById('lost');
  out.down = dn ? dn.getAttribute('d') : '';
  out.lost = ls ? ls.getAttribute('d') : '';
  out.cap = document.getElementById('cap').textContent;
  var pre = document.createElement('pre');
  pre.id = 'tdcheck';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
});
</script>
`

// TestHTMLPageInChromium opens the page of a THRESHOLD-2 movie in real headless
// Chromium (Debian's chromium, /usr/bin/chromium; scripts/install-chromium.sh installs
// it in CI): no errors, no requests, the slider changes the node colours and the step
// counter, and screenshots at two slider positions differ. It skips without chromium.
func TestHTMLPageInChromium(t *testing.T) {
	bin := chromiumtest.Find(t)
	tor, err := tokendist.Torus(6, 6)
	require.NoError(t, err)
	ec, err := tokendist.TorusColoring(6, 6)
	require.NoError(t, err)
	b, err := tokendist.NewThreshold2(tor, ec)
	require.NoError(t, err)
	l, err := tokendist.PointMass(36, 300, 8)
	require.NoError(t, err)
	m, err := Record(context.Background(), tor, l, b, &Options{Title: "THRESHOLD-2 on a 6 × 6 torus", Run: tokendist.RunOptions{MaxSteps: 24}})
	require.NoError(t, err)
	var buf bytes.Buffer
	require.NoError(t, m.WriteHTML(&buf))
	page := buf.String()
	require.NotContains(t, page, "http://www.w3.org/1999/xlink")
	for _, bad := range []string{"src=", "href=\"http", "@import", "url(http", "fetch(", "XMLHttpRequest"} {
		require.NotContains(t, page, bad)
	}
	dir := t.TempDir()
	last := len(m.Frames()) - 1
	run := func(slide int, extra ...string) string {
		name := "page" + strings.Repeat("x", slide%7) + ".html"
		checker := strings.Replace(pageChecker, "SLIDE", itoa(slide), 1)
		return chromiumtest.Open(t, bin, dir, name, page, checker, append([]string{"--virtual-time-budget=5000", "--window-size=700,720"}, extra...)...)
	}
	out := run(last, "--dump-dom")
	var rep struct {
		Resources, Errors []string
		Before, After     string
		Step              string
		Arrows, Frames    int
	}
	chromiumtest.Report(t, out, &rep)
	t.Logf("chromium: %d frames, %d resources fetched, %d errors, last frame %q with %d arrows", rep.Frames, len(rep.Resources), len(rep.Errors), rep.Step, rep.Arrows)
	require.Empty(t, rep.Resources, "the page fetched resources")
	require.Empty(t, rep.Errors, "the page raised errors")
	require.Equal(t, len(m.Frames()), rep.Frames)
	require.NotEqual(t, rep.Before, rep.After, "the slider did not change the node colours")
	require.Equal(t, frameText(m, last), strings.ReplaceAll(rep.Step, "\u00a0", " "))
	// The fills after the slide are the last frame's colours.
	s := newScene(m)
	fills := strings.Fields(rep.After)
	require.Len(t, fills, 36)
	for v, x := range m.Frames()[last].Loads {
		require.Equal(t, hex(cScale+s.level(x)), fills[v], "node %d", v)
	}

	// Screenshots at two slider positions differ where the picture changed.
	shot := func(slide int) []byte {
		name := filepath.Join(dir, "shot"+itoa(slide)+".png")
		run(slide, "--screenshot="+name)
		b, err := os.ReadFile(name)
		require.NoError(t, err)
		_, err = png.Decode(bytes.NewReader(b))
		require.NoError(t, err)
		if d := os.Getenv("ANIMATE_SHOTS"); d != "" {
			require.NoError(t, os.WriteFile(filepath.Join(d, "html-slider-"+itoa(slide)+".png"), b, 0o644))
		}
		return b
	}
	first, lastShot := shot(0), shot(last)
	require.NotEqual(t, first, lastShot, "screenshots at slider 0 and %d are the same", last)
}

// TestSimulationHTMLPageInChromium opens the page of a simulated run (crashes, loss,
// delays) in headless Chromium: no errors, no requests; the slider moved to a frame
// with a crashed node and lost datagrams shows that frame's model time, its crashed
// node grey with a cross, its lost-datagram marks, its arrows and its caption, and
// the other nodes in the colours of their loads.
func TestSimulationHTMLPageInChromium(t *testing.T) {
	bin := chromiumtest.Find(t)
	g, l, o := simCase(t)
	m, err := RecordSimulation(context.Background(), g, testprog.Shares{}, l, &o, &Options{EveryTime: 0.5, Title: "share diffusion, simulated"})
	require.NoError(t, err)
	k := -1
	for i, f := range m.Frames() {
		if len(f.Down) > 0 && len(f.Lost) > 0 && len(f.InFlight) > 0 {
			k = i
			break
		}
	}
	require.Positive(t, k, "no frame with a crashed node, a loss and tokens in flight")
	var buf bytes.Buffer
	require.NoError(t, m.WriteHTML(&buf))
	page := buf.String()
	for _, bad := range []string{"src=", "href=\"http", "@import", "url(http", "fetch(", "XMLHttpRequest"} {
		require.NotContains(t, page, bad)
	}
	dir := t.TempDir()
	checker := strings.Replace(pageChecker, "SLIDE", itoa(k), 1)
	out := chromiumtest.Open(t, bin, dir, "sim.html", page, checker, "--virtual-time-budget=5000", "--window-size=700,720", "--dump-dom")
	var rep struct {
		Resources, Errors        []string
		Before, After, Step, Cap string
		Down, Lost               string
		Arrows, Frames           int
	}
	chromiumtest.Report(t, out, &rep)
	t.Logf("chromium: %d frames, %d resources, %d errors, frame %d %q: %d arrows, caption %q", rep.Frames, len(rep.Resources), len(rep.Errors), k, rep.Step, rep.Arrows, rep.Cap)
	require.Empty(t, rep.Resources, "the page fetched resources")
	require.Empty(t, rep.Errors, "the page raised errors")
	require.Equal(t, len(m.Frames()), rep.Frames)
	s := newScene(m)
	require.Equal(t, frameText(m, k), strings.ReplaceAll(rep.Step, "\u00a0", " "))
	require.Equal(t, s.captionOf(m, k), rep.Cap)
	require.Equal(t, s.crossPath(m, k), rep.Down)
	require.NotEmpty(t, rep.Down)
	require.Equal(t, s.lostPath(m, k), rep.Lost)
	require.NotEmpty(t, rep.Lost)
	require.Equal(t, len(s.arrowPaths(m, k)), rep.Arrows)
	f := m.Frames()[k]
	fills := strings.Fields(rep.After)
	require.Len(t, fills, g.Order())
	isDown := map[int]bool{}
	for _, v := range f.Down {
		isDown[v] = true
	}
	for v, x := range f.Loads {
		want := hex(cScale + s.level(x))
		if isDown[v] {
			want = hex(cDown)
		}
		require.Equal(t, want, fills[v], "node %d", v)
	}
}

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	s := ""
	for ; i > 0; i /= 10 {
		s = string(rune('0'+i%10)) + s
	}
	return s
}
