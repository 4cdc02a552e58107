package animate

import (
	"image/color"
	"math"
	"strconv"
)

// levels is the number of colours of the load scale.
const levels = 64

// Palette indices of the fixed GIF palette (palette); the load scale follows.
const (
	cWhite = iota
	cBlack
	cEdge
	cText
	cArrow
	cCurve
	cGain
	cLoss
	cAxis
	cDown  // a crashed node's fill
	cCross // the cross on a crashed node
	cLost  // the mark of a link that lost datagrams
	cScale = 16
)

// viridis stops, interpolated to levels colours.
var viridis = [][3]uint8{
	{0x44, 0x01, 0x54}, {0x48, 0x28, 0x78}, {0x3e, 0x49, 0x89}, {0x31, 0x68, 0x8e}, {0x26, 0x82, 0x8e},
	{0x1f, 0x9e, 0x89}, {0x35, 0xb7, 0x79}, {0x6e, 0xce, 0x58}, {0xb5, 0xde, 0x2b}, {0xfd, 0xe7, 0x25},
}

// palette is the fixed GIF palette (128 entries, the unused ones black).
var palette = func() color.Palette {
	p := make(color.Palette, 128)
	for i := range p {
		p[i] = color.RGBA{0, 0, 0, 255}
	}
	p[cWhite] = color.RGBA{255, 255, 255, 255}
	p[cEdge] = color.RGBA{0xc8, 0xc8, 0xc8, 255}
	p[cText] = color.RGBA{0x44, 0x44, 0x44, 255}
	p[cArrow] = color.RGBA{0xd6, 0x27, 0x28, 255}
	p[cCurve] = color.RGBA{0x1f, 0x77, 0xb4, 255}
	p[cGain] = color.RGBA{0xff, 0x7f, 0x0e, 255}
	p[cLoss] = color.RGBA{0x17, 0xbe, 0xcf, 255}
	p[cAxis] = color.RGBA{0x88, 0x88, 0x88, 255}
	p[cDown] = color.RGBA{0xb4, 0xb4, 0xb4, 255}
	p[cCross] = color.RGBA{0x30, 0x30, 0x30, 255}
	p[cLost] = color.RGBA{0xe6, 0x00, 0x7e, 255}
	for k := range levels {
		t := float64(k) / float64(levels-1) * float64(len(viridis)-1)
		i := min(int(t), len(viridis)-2)
		f := t - float64(i)
		var c [3]uint8
		for j := range 3 {
			c[j] = uint8(math.Round(float64(viridis[i][j])*(1-f) + float64(viridis[i+1][j])*f))
		}
		p[cScale+k] = color.RGBA{c[0], c[1], c[2], 255}
	}
	return p
}()

// hex returns palette entry i as #rrggbb.
func hex(i int) string {
	c := palette[i].(color.RGBA)
	const digits = "0123456789abcdef"
	b := []byte{'#', 0, 0, 0, 0, 0, 0}
	for j, x := range []uint8{c.R, c.G, c.B} {
		b[1+2*j], b[2+2*j] = digits[x>>4], digits[x&15]
	}
	return string(b)
}

// seg is one drawn piece of a link, oriented from the link's first end to its second;
// atA and atB say whether an end sits on a node (and is shortened by the radius).
type seg struct {
	ax, ay, bx, by float64
	atA, atB       bool
}

// rect is a pixel rectangle.
type rect struct{ x0, y0, x1, y1 float64 }

// scene is a movie's geometry in pixels and its scales, shared by every format.
type scene struct {
	w, h          int
	nx, ny        []float64
	r             float64
	segs          [][]seg
	net, bar, crv rect
	lo, hi        int64 // load scale
	maxFlow       int64
	maxDelta      int64
	maxDisc       int64
	first, last   float64 // steps (model times) of the first and last frame
	labels        bool
	flows         Flows  // what the frames after the first draw (the first frame's kind)
	sim           bool   // a simulated run: model time, in-flight arrows, crashes, losses
	down          []bool // scratch: the crashed nodes of the frame being drawn
}

// newScene computes m's geometry and scales in O(n + m + frames · n).
func newScene(m *Movie) *scene {
	o := m.opts
	s := &scene{w: o.Width, h: o.Height}
	W, H := float64(o.Width), float64(o.Height)
	s.net = rect{12, 30, W - 96, H - 150}
	s.bar = rect{W - 78, 40, W - 64, H - 160}
	s.crv = rect{48, H - 106, W - 16, H - 22}
	n := m.g.Order()
	s.nx, s.ny = make([]float64, n), make([]float64, n)
	side := min(s.net.x1-s.net.x0, s.net.y1-s.net.y0)
	ox := s.net.x0 + (s.net.x1-s.net.x0-side)/2
	oy := s.net.y0 + (s.net.y1-s.net.y0-side)/2
	pad := 14.0
	if m.layout == LayoutLattice {
		pad = max(pad, side*0.07) // room for the wrap-around stubs
	}
	for v, p := range m.pos {
		s.nx[v] = ox + pad + p.x*(side-2*pad)
		s.ny[v] = oy + pad + p.y*(side-2*pad)
	}
	// Radius: a third of the shortest drawn link (median for the force layout), within
	// 1.5..12 pixels.
	var lens []float64
	for i, e := range m.links {
		if m.wrap[i] {
			continue
		}
		lens = append(lens, math.Hypot(s.nx[e[0]]-s.nx[e[1]], s.ny[e[0]]-s.ny[e[1]]))
	}
	s.r = 12
	if len(lens) > 0 {
		ref := lens[0]
		if m.layout == LayoutForce {
			ref = median(lens)
		} else {
			for _, l := range lens {
				ref = min(ref, l)
			}
		}
		s.r = max(1.5, min(12, ref/3))
	}
	s.labels = n <= 40 && s.r >= 6
	s.segs = make([][]seg, len(m.links))
	for i, e := range m.links {
		u, v := e[0], e[1]
		if !m.wrap[i] {
			s.segs[i] = []seg{{s.nx[u], s.ny[u], s.nx[v], s.ny[v], true, true}}
			continue
		}
		// A wrap-around link of the lattice leaves the grid at u's side and enters it
		// again at v's: two stubs, pointing outwards from u and inwards to v.
		dx, dy := s.nx[v]-s.nx[u], s.ny[v]-s.ny[u]
		l := math.Hypot(dx, dy)
		stub := max(3*s.r, 10.0)
		ux, uy := -dx/l*stub, -dy/l*stub
		s.segs[i] = []seg{{s.nx[u], s.ny[u], s.nx[u] + ux, s.ny[u] + uy, true, false}, {s.nx[v] - ux, s.ny[v] - uy, s.nx[v], s.ny[v], false, true}}
	}
	s.lo, s.hi = math.MaxInt64, math.MinInt64
	for k, f := range m.frames {
		for _, x := range f.Loads {
			s.lo, s.hi = min(s.lo, x), max(s.hi, x)
		}
		for _, mv := range f.Moved {
			s.maxFlow = max(s.maxFlow, abs(mv.Tokens))
		}
		for _, mv := range f.InFlight {
			s.maxFlow = max(s.maxFlow, abs(mv.Tokens))
		}
		if k > 0 && f.Flows == FlowsNone {
			for v, x := range f.Loads {
				s.maxDelta = max(s.maxDelta, abs(x-m.frames[k-1].Loads[v]))
			}
		}
		s.maxDisc = max(s.maxDisc, f.Discrepancy)
	}
	s.sim = m.sim
	s.first, s.last = s.xOf(&m.frames[0]), s.xOf(&m.frames[len(m.frames)-1])
	switch {
	case m.sim:
		s.flows = FlowsInFlight
		s.down = make([]bool, n)
	case len(m.frames) > 1:
		s.flows = m.frames[1].Flows
	case m.g.IsTree():
		s.flows = FlowsTree
	}
	return s
}

// xOf is frame f's place on the curve's axis: its step, or its model time.
func (s *scene) xOf(f *Frame) float64 {
	if s.sim {
		return f.Time
	}
	return float64(f.Step)
}

// fmtX formats a step, or a model time with at most 6 significant digits.
func (s *scene) fmtX(x float64) string {
	if s.sim {
		return fmtTime(x)
	}
	return strconv.FormatInt(int64(x), 10)
}

// fmtTime formats model time t with at most 6 significant digits, without an exponent
// (12.5, 0.3, 1048576).
func fmtTime(t float64) string {
	r, _ := strconv.ParseFloat(strconv.FormatFloat(t, 'g', 6, 64), 64)
	return strconv.FormatFloat(r, 'f', -1, 64)
}

// arrowsOf returns the arrows of frame k: the tokens in flight of a simulated run's
// frame, else the flows of a frame after the first that has them.
func (s *scene) arrowsOf(m *Movie, k int) []LinkFlow {
	f := &m.frames[k]
	switch {
	case f.Flows == FlowsInFlight:
		return f.InFlight
	case k > 0 && f.Flows != FlowsNone:
		return f.Moved
	}
	return nil
}

// downOf marks frame f's crashed nodes in s.down (cleared first) and returns it; nil
// in a stepper run's movie. O(n).
func (s *scene) downOf(f *Frame) []bool {
	if s.down == nil {
		return nil
	}
	clear(s.down)
	for _, v := range f.Down {
		s.down[v] = true
	}
	return s.down
}

// arrowOn is arrow, moved sideways in a simulated run's frame by half its width w and
// a pixel to the right of the way the tokens go, so that the two directions of a link
// are drawn side by side.
func (s *scene) arrowOn(g seg, t int64, w float64) (x0, y0, x1, y1 float64, ok bool) {
	x0, y0, x1, y1, ok = s.arrow(g, t)
	if !ok || !s.sim {
		return x0, y0, x1, y1, ok
	}
	dx, dy := x1-x0, y1-y0
	l := math.Hypot(dx, dy)
	off := w/2 + 1
	nx, ny := -dy/l*off, dx/l*off
	return x0 + nx, y0 + ny, x1 + nx, y1 + ny, true
}

// lostAt is the centre of the mark of datagrams lost on link l in direction t (t > 0:
// from its first end): the middle of its first drawn piece, moved 4 pixels to the
// right of that direction.
func (s *scene) lostAt(l int, t int64) (x, y float64) {
	g := s.segs[l][0]
	x, y = (g.ax+g.bx)/2, (g.ay+g.by)/2
	dx, dy := g.bx-g.ax, g.by-g.ay
	if t < 0 {
		dx, dy = -dx, -dy
	}
	if d := math.Hypot(dx, dy); d > 0 {
		x, y = x-dy/d*4, y+dx/d*4
	}
	return x, y
}

// markSize is half the side of a lost-datagram mark.
func (s *scene) markSize() float64 { return max(3, min(s.r*0.6, 6)) }

// crossSize is half the side of the cross on a crashed node.
func (s *scene) crossSize() float64 { return max(1, s.r*0.6) }

// axisName names the curve's horizontal axis.
func (s *scene) axisName() string {
	if s.sim {
		return "time"
	}
	return "step"
}

// lostTotal is the number of datagrams frame f lost.
func lostTotal(f *Frame) int64 {
	var n int64
	for _, l := range f.Lost {
		n += abs(l.Tokens)
	}
	return n
}

// inFlightTotal is the number of tokens in flight at frame f.
func inFlightTotal(f *Frame) int64 {
	var n int64
	for _, l := range f.InFlight {
		n += abs(l.Tokens)
	}
	return n
}

func median(x []float64) float64 {
	c := append([]float64(nil), x...)
	// Insertion into a sorted copy would be O(m²); a selection by sorting is enough.
	sortFloats(c)
	return c[len(c)/2]
}

// sortFloats sorts x ascending (heapsort: O(m log m), no allocation).
func sortFloats(x []float64) {
	n := len(x)
	down := func(i, n int) {
		for {
			c := 2*i + 1
			if c >= n {
				return
			}
			if c+1 < n && x[c+1] > x[c] {
				c++
			}
			if x[i] >= x[c] {
				return
			}
			x[i], x[c] = x[c], x[i]
			i = c
		}
	}
	for i := n/2 - 1; i >= 0; i-- {
		down(i, n)
	}
	for e := n - 1; e > 0; e-- {
		x[0], x[e] = x[e], x[0]
		down(0, e)
	}
}

// level is load x's colour on the scale, 0..levels-1.
func (s *scene) level(x int64) int {
	if s.hi <= s.lo {
		return levels / 2
	}
	return int(math.Round(float64(x-s.lo) * float64(levels-1) / float64(s.hi-s.lo)))
}

// width is the stroke width of an arrow carrying t tokens: 1.5 up to a maximum that
// fits the node size, in proportion to t / maxFlow.
func (s *scene) width(t int64) float64 {
	wmax := max(2.5, min(2*s.r, 9))
	if s.maxFlow <= 0 {
		return 1.5
	}
	return 1.5 + (wmax-1.5)*float64(abs(t))/float64(s.maxFlow)
}

// ring is the ring width of a node load change d (node changes mode): up to 3 pixels.
func (s *scene) ring(d int64) float64 {
	if s.maxDelta <= 0 || d == 0 {
		return 0
	}
	return 1 + 2*float64(abs(d))/float64(s.maxDelta)
}

// arrow returns the shaft from (x0, y0) to (x1, y1) and the head's tip of the arrow
// on segment g for t tokens (t > 0: from the link's first end to its second), shortened
// at the ends that sit on nodes; ok is false when nothing is left to draw.
func (s *scene) arrow(g seg, t int64) (x0, y0, x1, y1 float64, ok bool) {
	ax, ay, bx, by, atA, atB := g.ax, g.ay, g.bx, g.by, g.atA, g.atB
	if t < 0 {
		ax, ay, bx, by, atA, atB = bx, by, ax, ay, atB, atA
	}
	dx, dy := bx-ax, by-ay
	l := math.Hypot(dx, dy)
	if l == 0 {
		return 0, 0, 0, 0, false
	}
	dx, dy = dx/l, dy/l
	gap := min(s.r+1, 0.3*l) // on short links part of the arrow stays visible
	if atA {
		ax, ay = ax+dx*gap, ay+dy*gap
	}
	if atB {
		bx, by = bx-dx*gap, by-dy*gap
	}
	if (bx-ax)*dx+(by-ay)*dy <= 1 {
		return 0, 0, 0, 0, false
	}
	return ax, ay, bx, by, true
}

// curveXY maps (step or model time, discrepancy) into the curve's box.
func (s *scene) curveXY(step float64, disc int64) (float64, float64) {
	span := s.last - s.first
	if !(span > 0) {
		span = 1
	}
	top := float64(max(s.maxDisc, 1))
	x := s.crv.x0 + (step-s.first)/span*(s.crv.x1-s.crv.x0)
	y := s.crv.y1 - float64(disc)/top*(s.crv.y1-s.crv.y0)
	return x, y
}

// shortTitle is the title cut to fit left of the step counter.
func (s *scene) shortTitle(t string) string {
	r := []rune(t)
	if n := max((s.w-190)/8, 4); len(r) > n {
		return string(r[:n-3]) + "..."
	}
	return t
}

// caption says what the marks on links or nodes mean, in ASCII.
func (s *scene) caption() string {
	if s.flows == FlowsNone {
		return captionNone
	}
	if s.sim {
		return "arrows: tokens in flight per link direction (width to scale)"
	}
	return "arrows: net tokens per link since last frame (width to scale)"
}

// captionNone is the caption of a frame that draws node changes.
const captionNone = "rings: tokens gained (orange) or lost (cyan); link flows unknown"
