package experiment

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tokendist/tokendist/internal/chromiumtest"
)

// htmlChecker is put at the start of the page's <head> for the test: it records every
// error event (a failed resource raises one on its element) and, once the page has
// loaded, writes a JSON report into the DOM: the figures, how many rendered (an SVG at
// least 100 × 50 px on screen, with drawn content and every glyph <use> resolved to an
// outline with a box), the resources the page fetched, and the errors.
const htmlChecker = `<script>
window.__errs = [];
window.addEventListener('error', function (e) {
  var t = e.target || {};
  window.__errs.push(String(e.message || t.src || t.href || t.tagName || 'error'));
}, true);
window.addEventListener('load', function () {
  var out = {figures: 0, rendered: 0, glyphs: 0, bad: [], resources: [], errors: window.__errs};
  performance.getEntriesByType('resource').forEach(function (r) { out.resources.push(r.name); });
  document.querySelectorAll('figure').forEach(function (f, i) {
    out.figures++;
    var svg = f.querySelector('svg');
    if (!svg) { out.bad.push(i + ': no svg'); return; }
    var r = svg.getBoundingClientRect(), b = svg.getBBox();
    var uses = svg.querySelectorAll('use'), broken = 0;
    uses.forEach(function (u) {
      var ref = document.getElementById((u.getAttribute('xlink:href') || u.getAttribute('href') || '').slice(1));
      var bb = u.getBBox();
      if (!ref || !ref.closest('svg') || ref.closest('svg') !== svg || bb.width <= 0 || bb.height <= 0) broken++;
    });
    out.glyphs += uses.length;
    if (r.width >= 100 && r.height >= 50 && b.width > 0 && b.height > 0 && uses.length > 0 && broken === 0) out.rendered++;
    else out.bad.push(i + ': ' + r.width + 'x' + r.height + ' bbox ' + b.width + 'x' + b.height + ' uses ' + uses.length + ' broken ' + broken);
  });
  var pre = document.createElement('pre');
  pre.id = 'tdcheck';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
});
</script>
`

// TestHTMLReportInChromium opens the HTML report in real headless Chromium (Debian's
// chromium package, /usr/bin/chromium, installed in CI by scripts/install-chromium.sh)
// and checks that every figure rendered, every glyph of its text resolved, and that the
// page fetched nothing and raised no error. It skips without chromium.
func TestHTMLReportInChromium(t *testing.T) {
	bin := chromiumtest.Find(t)
	db, _ := fixtureDB(t)
	dir := t.TempDir()
	page := filepath.Join(dir, "report.html")
	code, _, errs := runMain(t, "report", "--db", db, "--format", "html", "--out", page)
	require.Equal(t, ExitOK, code, errs)
	b, err := os.ReadFile(page)
	require.NoError(t, err)
	checkHTMLStatic(t, string(b), 3)
	figures := strings.Count(string(b), "<figure")

	// The page with the checker, which the report itself does not carry.
	out := chromiumtest.Open(t, bin, dir, "checked.html", string(b), htmlChecker, "--virtual-time-budget=10000", "--dump-dom")
	var rep struct {
		Figures, Rendered, Glyphs int
		Bad, Resources, Errors    []string
	}
	chromiumtest.Report(t, out, &rep)
	t.Logf("chromium: %d of %d figures rendered, %d glyphs, %d resources fetched, %d errors", rep.Rendered, rep.Figures, rep.Glyphs, len(rep.Resources), len(rep.Errors))
	require.Equal(t, figures, rep.Figures)
	require.Equal(t, figures, rep.Rendered, "figures that did not render: %v", rep.Bad)
	require.Empty(t, rep.Resources, "the page fetched resources")
	require.Empty(t, rep.Errors, "the page raised errors")
	require.Positive(t, rep.Glyphs)
}
