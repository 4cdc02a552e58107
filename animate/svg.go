package animate

import (
	"bufio"
	"encoding/json"
	"html"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/tokendist/tokendist/internal/errs"
)

// num formats a pixel coordinate with one decimal.
func num(x float64) string { return strconv.FormatFloat(x, 'f', 1, 64) }

// arrowPaths returns frame k's arrows as SVG path data and stroke widths.
func (s *scene) arrowPaths(m *Movie, k int) [][2]string {
	var out [][2]string
	for _, mv := range s.arrowsOf(m, k) {
		w := s.width(mv.Tokens)
		for _, g := range s.segs[mv.Link] {
			x0, y0, x1, y1, ok := s.arrowOn(g, mv.Tokens, w)
			if !ok {
				continue
			}
			// The marker's head is 3 stroke widths long with its tip at the path's end
			// plus 0.6 of a width: end the path that much earlier.
			dx, dy := x1-x0, y1-y0
			back := 0.6 * w / max(math.Hypot(dx, dy), 1e-9)
			out = append(out, [2]string{"M" + num(x0) + " " + num(y0) + "L" + num(x1-dx*back) + " " + num(y1-dy*back), num(w)})
		}
	}
	return out
}

// rings returns frame k's node changes as (node, ring width, colour) in node-change
// frames.
func (s *scene) rings(m *Movie, k int) [][3]string {
	f := m.frames[k]
	if k == 0 || f.Flows != FlowsNone {
		return nil
	}
	var out [][3]string
	for v, x := range f.Loads {
		d := x - m.frames[k-1].Loads[v]
		if rw := s.ring(d); rw > 0 {
			col := hex(cGain)
			if d < 0 {
				col = hex(cLoss)
			}
			out = append(out, [3]string{strconv.Itoa(v), num(rw), col})
		}
	}
	return out
}

// frameText is the step counter (model time) of frame k.
func frameText(m *Movie, k int) string {
	f := m.frames[k]
	if m.sim {
		return "t = " + fmtTime(f.Time) + "  disc " + strconv.FormatInt(f.Discrepancy, 10)
	}
	return "step " + strconv.FormatInt(f.Step, 10) + "  disc " + strconv.FormatInt(f.Discrepancy, 10)
}

// crossPath is the SVG path data of the crosses on frame k's crashed nodes.
func (s *scene) crossPath(m *Movie, k int) string {
	var b strings.Builder
	h := s.crossSize()
	for _, v := range m.frames[k].Down {
		x, y := s.nx[v], s.ny[v]
		b.WriteString("M" + num(x-h) + " " + num(y-h) + "L" + num(x+h) + " " + num(y+h) + "M" + num(x-h) + " " + num(y+h) + "L" + num(x+h) + " " + num(y-h))
	}
	return b.String()
}

// lostPath is the SVG path data of frame k's lost-datagram marks.
func (s *scene) lostPath(m *Movie, k int) string {
	var b strings.Builder
	h := s.markSize()
	for _, l := range m.frames[k].Lost {
		x, y := s.lostAt(l.Link, l.Tokens)
		b.WriteString("M" + num(x-h) + " " + num(y-h) + "L" + num(x+h) + " " + num(y+h) + "M" + num(x-h) + " " + num(y+h) + "L" + num(x+h) + " " + num(y-h))
	}
	return b.String()
}

// captionOf is the caption of frame k.
func (s *scene) captionOf(m *Movie, k int) string {
	f := m.frames[k]
	switch {
	case m.sim:
		return "in flight: " + strconv.FormatInt(inFlightTotal(&f), 10) + " (arrows, max " + strconv.FormatInt(s.maxFlow, 10) +
			")  lost: " + strconv.FormatInt(lostTotal(&f), 10) + "  down: " + strconv.Itoa(len(f.Down))
	case k == 0:
		return s.caption()
	case f.Flows == FlowsNone:
		return captionNone
	}
	return "arrows: net tokens per link since last frame (max " + strconv.FormatInt(s.maxFlow, 10) + ")"
}

// writeSVG writes the SVG of frame k (with ids for the page's script).
func (s *scene) writeSVG(w *bufio.Writer, m *Movie, k int) {
	f := m.frames[k]
	W, H := strconv.Itoa(s.w), strconv.Itoa(s.h)
	w.WriteString(`<svg xmlns="http://www.w3.org/2000/svg" id="movie" width="` + W + `" height="` + H + `" viewBox="0 0 ` + W + ` ` + H + `" font-family="monospace" font-size="11">` + "\n")
	w.WriteString(`<defs><marker id="ah" viewBox="0 0 10 10" refX="8" refY="5" markerWidth="3" markerHeight="3" orient="auto"><path d="M0,0L10,5L0,10z" fill="` + hex(cArrow) + `"/></marker>`)
	w.WriteString(`<linearGradient id="scale" x1="0" y1="1" x2="0" y2="0">`)
	for i := 0; i < levels; i += 7 {
		w.WriteString(`<stop offset="` + strconv.FormatFloat(float64(i)/float64(levels-1), 'f', 3, 64) + `" stop-color="` + hex(cScale+i) + `"/>`)
	}
	w.WriteString(`<stop offset="1" stop-color="` + hex(cScale+levels-1) + `"/></linearGradient></defs>` + "\n")
	w.WriteString(`<rect width="` + W + `" height="` + H + `" fill="#fff"/>` + "\n")
	w.WriteString(`<text x="8" y="18" font-size="13">` + html.EscapeString(s.shortTitle(m.title)) + `</text>`)
	w.WriteString(`<text id="step" x="` + strconv.Itoa(s.w-8) + `" y="18" text-anchor="end" font-size="13">` + frameText(m, k) + "</text>\n")
	w.WriteString(`<path stroke="` + hex(cEdge) + `" fill="none" d="`)
	for _, sg := range s.segs {
		for _, g := range sg {
			w.WriteString("M" + num(g.ax) + " " + num(g.ay) + "L" + num(g.bx) + " " + num(g.by))
		}
	}
	w.WriteString("\"/>\n" + `<g id="arrows" stroke="` + hex(cArrow) + `" fill="none">`)
	for _, a := range s.arrowPaths(m, k) {
		w.WriteString(`<path d="` + a[0] + `" stroke-width="` + a[1] + `" marker-end="url(#ah)"/>`)
	}
	w.WriteString("</g>\n" + `<g id="rings" fill="none">`)
	for _, r := range s.rings(m, k) {
		v, _ := strconv.Atoi(r[0])
		rw, _ := strconv.ParseFloat(r[1], 64)
		w.WriteString(`<circle cx="` + num(s.nx[v]) + `" cy="` + num(s.ny[v]) + `" r="` + num(s.r+rw/2) + `" stroke-width="` + r[1] + `" stroke="` + r[2] + `"/>`)
	}
	w.WriteString("</g>\n<g id=\"nodes\">")
	rs := num(s.r)
	down := s.downOf(&f)
	for v, x := range f.Loads {
		fill := hex(cScale + s.level(x))
		if down != nil && down[v] {
			fill = hex(cDown)
		}
		w.WriteString(`<circle cx="` + num(s.nx[v]) + `" cy="` + num(s.ny[v]) + `" r="` + rs + `" fill="` + fill + `"/>`)
	}
	w.WriteString("</g>\n")
	if s.sim {
		w.WriteString(`<path id="down" fill="none" stroke="` + hex(cCross) + `" stroke-width="` + num(max(1, s.r/4)) + `" d="` + s.crossPath(m, k) + "\"/>\n")
		w.WriteString(`<path id="lost" fill="none" stroke="` + hex(cLost) + `" stroke-width="2" d="` + s.lostPath(m, k) + "\"/>\n")
	}
	w.WriteString("<g id=\"labels\" fill=\"" + hex(cText) + "\">")
	if s.labels {
		for v, x := range f.Loads {
			w.WriteString(`<text x="` + num(s.nx[v]+s.r*0.7+1) + `" y="` + num(s.ny[v]-s.r*0.7-1) + `">` + strconv.FormatInt(x, 10) + `</text>`)
		}
	}
	w.WriteString("</g>\n")
	b := s.bar
	w.WriteString(`<rect x="` + num(b.x0) + `" y="` + num(b.y0) + `" width="` + num(b.x1-b.x0) + `" height="` + num(b.y1-b.y0) + `" fill="url(#scale)"/>`)
	w.WriteString(`<g fill="` + hex(cText) + `"><text x="` + num(b.x0-4) + `" y="` + num(b.y0-8) + `">load</text>`)
	w.WriteString(`<text x="` + num(b.x1+4) + `" y="` + num(b.y0+9) + `">` + strconv.FormatInt(s.hi, 10) + `</text>`)
	w.WriteString(`<text x="` + num(b.x1+4) + `" y="` + num(b.y1) + `">` + strconv.FormatInt(s.lo, 10) + "</text>\n")
	c := s.crv
	w.WriteString(`<text x="` + num(c.x0-4) + `" y="` + num(c.y0+9) + `" text-anchor="end">` + strconv.FormatInt(s.maxDisc, 10) + `</text>`)
	w.WriteString(`<text x="` + num(c.x0-4) + `" y="` + num(c.y1) + `" text-anchor="end">0</text>`)
	w.WriteString(`<text x="` + num(c.x0+4) + `" y="` + num(c.y0-4) + `">discrepancy</text>`)
	w.WriteString(`<text x="` + num(c.x0) + `" y="` + num(c.y1+14) + `">` + s.fmtX(s.first) + ` ` + s.axisName() + `</text>`)
	w.WriteString(`<text x="` + num(c.x1) + `" y="` + num(c.y1+14) + `" text-anchor="end">` + s.fmtX(s.last) + `</text>`)
	if s.sim {
		// The legend of a simulated run: a crashed node, a lost-datagram mark.
		x, y := b.x0+6, b.y1+18
		w.WriteString(`<circle r="6" cx="` + num(x) + `" cy="` + num(y) + `" fill="` + hex(cDown) + `"/>`)
		w.WriteString(`<path fill="none" stroke="` + hex(cCross) + `" stroke-width="1.5" d="M` + num(x-3.5) + " " + num(y-3.5) + "l7 7m0 -7l-7 7\"/>")
		w.WriteString(`<path fill="none" stroke="` + hex(cLost) + `" stroke-width="2" d="M` + num(x-3.5) + " " + num(y+12.5) + "l7 7m0 -7l-7 7\"/>")
		w.WriteString(`<text x="` + num(b.x0+15) + `" y="` + num(y+4) + `">down</text><text x="` + num(b.x0+15) + `" y="` + num(y+20) + "\">lost</text>\n")
	}
	w.WriteString(`<text id="cap" x="12" y="` + num(s.net.y1+16) + `">` + html.EscapeString(s.captionOf(m, k)) + "</text></g>\n")
	w.WriteString(`<path stroke="` + hex(cAxis) + `" fill="none" d="M` + num(c.x0) + " " + num(c.y0) + "L" + num(c.x0) + " " + num(c.y1) + "L" + num(c.x1) + " " + num(c.y1) + "\"/>\n")
	pts := s.curvePoints(m)
	w.WriteString(`<polyline id="curve" fill="none" stroke="` + hex(cCurve) + `" stroke-width="1.5" points="` + strings.Join(pts[:k+1], " ") + `"/>`)
	x, y, _ := strings.Cut(pts[k], ",")
	w.WriteString(`<circle id="dot" r="3" fill="` + hex(cCurve) + `" cx="` + x + `" cy="` + y + `"/>` + "\n</svg>\n")
}

// curvePoints returns every frame's point of the discrepancy curve as "x,y".
func (s *scene) curvePoints(m *Movie) []string {
	out := make([]string, len(m.frames))
	for k, f := range m.frames {
		x, y := s.curveXY(s.xOf(&f), f.Discrepancy)
		out[k] = num(x) + "," + num(y)
	}
	return out
}

// WriteSVG writes frame k as a standalone SVG picture (the GIF's drawing, with the
// text as the viewer's monospace font). It costs O(n + m + frames) time and output.
// Output beyond Options.MaxBytes fails with an error wrapping tokendist.ErrTooLarge; a
// k outside 0..len(Frames())-1 is an error naming it.
func (m *Movie) WriteSVG(w io.Writer, k int) error {
	if m == nil || len(m.frames) == 0 {
		return errs.BadParam("animate: WriteSVG of an empty movie")
	}
	if k < 0 || k >= len(m.frames) {
		return errs.BadParam("animate: frame %d of a movie of %d frames", k, len(m.frames))
	}
	lw := &limitWriter{w: w, max: m.opts.MaxBytes}
	bw := bufio.NewWriter(lw)
	newScene(m).writeSVG(bw, m, k)
	return flush(bw, lw)
}

func flush(bw *bufio.Writer, lw *limitWriter) error {
	if err := bw.Flush(); err != nil {
		if lw.err != nil {
			return lw.err
		}
		return errs.Wrapf(err, "animate: writing")
	}
	return nil
}

// pageFrame is one frame in the page's data: colour levels, labels, arrows, rings.
type pageFrame struct {
	C []int       `json:"c"`
	L []int64     `json:"l,omitempty"`
	A [][2]string `json:"a,omitempty"`
	R [][3]string `json:"r,omitempty"`
	T string      `json:"t"`
	P string      `json:"p"`
	D string      `json:"d,omitempty"` // crosses on crashed nodes (simulated runs)
	X string      `json:"x,omitempty"` // lost-datagram marks (simulated runs)
}

// pageScript shows frame k of the page's data in the SVG; play/pause and the slider.
const pageScript = `(function () {
  var D = JSON.parse(document.getElementById('data').textContent);
  var svg = document.getElementById('movie'), nodes = svg.querySelectorAll('#nodes circle'),
    labels = svg.querySelectorAll('#labels text'), sl = document.getElementById('slider'),
    btn = document.getElementById('play'), timer = null, cur = 0;
  function show(k) {
    var f = D.frames[k], v, s = '';
    for (v = 0; v < nodes.length; v++) nodes[v].setAttribute('fill', D.pal[f.c[v]]);
    for (v = 0; f.l && v < labels.length; v++) labels[v].textContent = f.l[v];
    (f.a || []).forEach(function (a) { s += '<path d="' + a[0] + '" stroke-width="' + a[1] + '" marker-end="url(#ah)"/>'; });
    document.getElementById('arrows').innerHTML = s;
    s = '';
    (f.r || []).forEach(function (r) { var c = nodes[+r[0]];
      s += '<circle cx="' + c.getAttribute('cx') + '" cy="' + c.getAttribute('cy') + '" r="' + (D.r + r[1] / 2) + '" stroke-width="' + r[1] + '" stroke="' + r[2] + '"/>'; });
    document.getElementById('rings').innerHTML = s;
    var dn = document.getElementById('down'), ls = document.getElementById('lost');
    if (dn) dn.setAttribute('d', f.d || '');
    if (ls) ls.setAttribute('d', f.x || '');
    document.getElementById('curve').setAttribute('points', D.curve.slice(0, k + 1).join(' '));
    var p = D.curve[k].split(','), dot = document.getElementById('dot');
    dot.setAttribute('cx', p[0]); dot.setAttribute('cy', p[1]);
    document.getElementById('step').textContent = f.t;
    document.getElementById('cap').textContent = f.p;
    sl.value = k; cur = k;
  }
  sl.addEventListener('input', function () { show(+sl.value); });
  btn.addEventListener('click', function () {
    if (timer) { clearInterval(timer); timer = null; btn.textContent = 'play'; return; }
    if (cur >= D.frames.length - 1) show(0);
    btn.textContent = 'pause';
    timer = setInterval(function () {
      if (cur >= D.frames.length - 1) { clearInterval(timer); timer = null; btn.textContent = 'play'; return; }
      show(cur + 1);
    }, D.delay);
  });
  show(0);
})();
`

// WriteHTML writes the movie as one self-contained HTML page: the SVG of the first
// frame, the frames as JSON data, a play/pause button and a step slider driven by a
// short inline script. The page makes no network requests and uses no external fonts
// or scripts. It costs O(frames · (n + arrows) + m) time and output. Output beyond
// Options.MaxBytes fails with an error wrapping tokendist.ErrTooLarge (the output is
// then cut short).
func (m *Movie) WriteHTML(w io.Writer) error {
	if m == nil || len(m.frames) == 0 {
		return errs.BadParam("animate: WriteHTML of an empty movie")
	}
	lw := &limitWriter{w: w, max: m.opts.MaxBytes}
	bw := bufio.NewWriter(lw)
	s := newScene(m)
	title := m.title
	if title == "" {
		title = "tokendist animation"
	}
	bw.WriteString("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>" + html.EscapeString(title) + "</title>\n")
	bw.WriteString("<style>body{font-family:sans-serif;margin:1em}figure{margin:0}#controls{margin:.5em 0}#slider{width:" + strconv.Itoa(s.w-120) + "px;vertical-align:middle}</style></head><body>\n<figure>\n")
	s.writeSVG(bw, m, 0)
	bw.WriteString("</figure>\n<div id=\"controls\"><button id=\"play\" type=\"button\">play</button> <input id=\"slider\" type=\"range\" min=\"0\" max=\"" + strconv.Itoa(len(m.frames)-1) + "\" value=\"0\" aria-label=\"frame\"></div>\n")
	bw.WriteString("<script type=\"application/json\" id=\"data\">")
	if lw.err != nil {
		return lw.err
	}
	pal := make([]string, levels+1)
	for i := range levels {
		pal[i] = hex(cScale + i)
	}
	pal[levels] = hex(cDown) // a crashed node's fill
	enc := json.NewEncoder(bw)
	// The data, written frame by frame so that memory stays O(n + m).
	head, _ := json.Marshal(map[string]any{"pal": pal, "r": s.r, "delay": m.opts.Delay * 10, "curve": s.curvePoints(m)})
	bw.Write(head[:len(head)-1])
	bw.WriteString(`,"frames":[`)
	for k, f := range m.frames {
		if k > 0 {
			bw.WriteByte(',')
		}
		pf := pageFrame{C: make([]int, len(f.Loads)), A: s.arrowPaths(m, k), R: s.rings(m, k), T: frameText(m, k), P: s.captionOf(m, k)}
		for v, x := range f.Loads {
			pf.C[v] = s.level(x)
		}
		for _, v := range f.Down {
			pf.C[v] = levels
		}
		if s.sim {
			pf.D, pf.X = s.crossPath(m, k), s.lostPath(m, k)
		}
		if s.labels {
			pf.L = f.Loads
		}
		if err := enc.Encode(pf); err != nil {
			if lw.err != nil {
				return lw.err
			}
			return errs.Wrapf(err, "animate: encoding frame %d", k)
		}
		if lw.err != nil {
			return lw.err
		}
	}
	bw.WriteString("]}</script>\n<script>\n" + pageScript + "</script>\n</body></html>\n")
	return flush(bw, lw)
}
