package animate

import (
	"bufio"
	"compress/lzw"
	"image"
	"image/color"
	"io"
	"math"
	"strconv"

	"github.com/tokendist/tokendist/internal/errs"
	"golang.org/x/image/font"
	"golang.org/x/image/font/basicfont"
	"golang.org/x/image/math/fixed"
)

// canvas draws into a paletted image.
type canvas struct{ img *image.Paletted }

func (c canvas) set(x, y int, i uint8) {
	if x >= 0 && y >= 0 && x < c.img.Rect.Dx() && y < c.img.Rect.Dy() {
		c.img.Pix[y*c.img.Stride+x] = i
	}
}

func (c canvas) fillRect(x0, y0, x1, y1 int, i uint8) {
	for y := max(y0, 0); y < min(y1, c.img.Rect.Dy()); y++ {
		row := c.img.Pix[y*c.img.Stride:]
		for x := max(x0, 0); x < min(x1, c.img.Rect.Dx()); x++ {
			row[x] = i
		}
	}
}

// disc fills the pixels whose centres are within radius r of (cx, cy) and, with
// r0 > 0, outside r0 (a ring).
func (c canvas) disc(cx, cy, r0, r float64, i uint8) {
	for y := int(math.Floor(cy - r)); y <= int(math.Ceil(cy+r)); y++ {
		for x := int(math.Floor(cx - r)); x <= int(math.Ceil(cx+r)); x++ {
			d := (float64(x)+0.5-cx)*(float64(x)+0.5-cx) + (float64(y)+0.5-cy)*(float64(y)+0.5-cy)
			if d <= r*r && (r0 <= 0 || d > r0*r0) {
				c.set(x, y, i)
			}
		}
	}
}

// line draws a segment of width w (pixels whose centres are within w/2 of it).
func (c canvas) line(x0, y0, x1, y1, w float64, i uint8) {
	h := max(w/2, 0.5)
	dx, dy := x1-x0, y1-y0
	l2 := dx*dx + dy*dy
	for y := int(math.Floor(min(y0, y1) - h)); y <= int(math.Ceil(max(y0, y1)+h)); y++ {
		for x := int(math.Floor(min(x0, x1) - h)); x <= int(math.Ceil(max(x0, x1)+h)); x++ {
			px, py := float64(x)+0.5, float64(y)+0.5
			t := 0.0
			if l2 > 0 {
				t = max(0, min(1, ((px-x0)*dx+(py-y0)*dy)/l2))
			}
			ex, ey := px-(x0+t*dx), py-(y0+t*dy)
			if ex*ex+ey*ey <= h*h {
				c.set(x, y, i)
			}
		}
	}
}

// triangle fills the triangle a, b, t.
func (c canvas) triangle(ax, ay, bx, by, tx, ty float64, i uint8) {
	edge := func(x0, y0, x1, y1, px, py float64) float64 { return (x1-x0)*(py-y0) - (y1-y0)*(px-x0) }
	area := edge(ax, ay, bx, by, tx, ty)
	if area == 0 {
		return
	}
	for y := int(math.Floor(min(ay, by, ty))); y <= int(math.Ceil(max(ay, by, ty))); y++ {
		for x := int(math.Floor(min(ax, bx, tx))); x <= int(math.Ceil(max(ax, bx, tx))); x++ {
			px, py := float64(x)+0.5, float64(y)+0.5
			e0, e1, e2 := edge(ax, ay, bx, by, px, py), edge(bx, by, tx, ty, px, py), edge(tx, ty, ax, ay, px, py)
			if (area > 0 && e0 >= 0 && e1 >= 0 && e2 >= 0) || (area < 0 && e0 <= 0 && e1 <= 0 && e2 <= 0) {
				c.set(x, y, i)
			}
		}
	}
}

// text writes s (ASCII, 7 × 13 pixels a character) with its baseline at y.
func (c canvas) text(x, y int, s string, i uint8) {
	d := font.Drawer{Dst: c.img, Src: image.NewUniform(palette[i]), Face: basicfont.Face7x13, Dot: fixed.P(x, y)}
	d.DrawString(s)
}

// arrowHead returns the head of an arrow of width w ending at (x1, y1) from (x0, y0):
// its two base corners and the shaft's new end.
func arrowHead(x0, y0, x1, y1, w float64) (bx0, by0, bx1, by1, sx, sy float64) {
	dx, dy := x1-x0, y1-y0
	l := math.Hypot(dx, dy)
	dx, dy = dx/l, dy/l
	hl := min(max(2*w+3, 6), l)
	hw := max(w+2, 3.5)
	sx, sy = x1-dx*hl, y1-dy*hl
	return sx - dy*hw, sy + dx*hw, sx + dy*hw, sy - dx*hw, sx + dx*0.5, sy + dy*0.5
}

// base draws what every frame shares: links, legend, curve axes, title.
func (s *scene) base(m *Movie) *image.Paletted {
	img := image.NewPaletted(image.Rect(0, 0, s.w, s.h), palette)
	c := canvas{img}
	for _, sg := range s.segs {
		for _, g := range sg {
			c.line(g.ax, g.ay, g.bx, g.by, 1, cEdge)
		}
	}
	// Legend: the colour bar, highest load on top.
	b := s.bar
	for y := int(b.y0); y < int(b.y1); y++ {
		k := int(math.Round((b.y1 - 1 - float64(y)) / (b.y1 - 1 - b.y0) * (levels - 1)))
		c.fillRect(int(b.x0), y, int(b.x1), y+1, uint8(cScale+max(0, min(levels-1, k))))
	}
	c.text(int(b.x0)-4, int(b.y0)-8, "load", cText)
	c.text(int(b.x1)+4, int(b.y0)+9, strconv.FormatInt(s.hi, 10), cText)
	c.text(int(b.x1)+4, int(b.y1), strconv.FormatInt(s.lo, 10), cText)
	// The curve's axes.
	k := s.crv
	c.line(k.x0, k.y1, k.x1, k.y1, 1, cAxis)
	c.line(k.x0, k.y0, k.x0, k.y1, 1, cAxis)
	c.text(int(k.x0)-len(strconv.FormatInt(s.maxDisc, 10))*7-4, int(k.y0)+9, strconv.FormatInt(s.maxDisc, 10), cText)
	c.text(int(k.x0)-11, int(k.y1), "0", cText)
	c.text(int(k.x0)+4, int(k.y0)-4, "discrepancy", cText)
	last := s.fmtX(s.last)
	c.text(int(k.x1)-7*len(last), int(k.y1)+14, last, cText)
	c.text(int(k.x0), int(k.y1)+14, s.fmtX(s.first)+" "+s.axisName(), cText)
	c.text(8, 18, asciiOnly(s.shortTitle(m.title)), cBlack)
	if s.sim {
		// The legend of a simulated run: a crashed node, a lost-datagram mark.
		x, y := b.x0+6, b.y1+18
		c.crashed(x, y, 6, 3.5)
		c.text(int(b.x0)+15, int(y)+4, "down", cText)
		c.lostMark(x, y+16, 3.5)
		c.text(int(b.x0)+15, int(y)+20, "lost", cText)
	}
	return img
}

// crashed draws a crashed node of radius r at (cx, cy): grey, with a cross of half
// side h.
func (c canvas) crashed(cx, cy, r, h float64) {
	c.disc(cx, cy, 0, r, cDown)
	w := max(1, r/4)
	c.line(cx-h, cy-h, cx+h, cy+h, w, cCross)
	c.line(cx-h, cy+h, cx+h, cy-h, w, cCross)
}

// lostMark draws the mark of lost datagrams: a cross of half side h at (x, y).
func (c canvas) lostMark(x, y, h float64) {
	c.line(x-h, y-h, x+h, y+h, 2, cLost)
	c.line(x-h, y+h, x+h, y-h, 2, cLost)
}

// frame draws frame k of m over a copy of the base into img (same size).
func (s *scene) frame(m *Movie, k int, base, img *image.Paletted) {
	copy(img.Pix, base.Pix)
	c := canvas{img}
	f := m.frames[k]
	for _, mv := range s.arrowsOf(m, k) {
		w := s.width(mv.Tokens)
		for _, g := range s.segs[mv.Link] {
			x0, y0, x1, y1, ok := s.arrowOn(g, mv.Tokens, w)
			if !ok {
				continue
			}
			ax, ay, bx, by, sx, sy := arrowHead(x0, y0, x1, y1, w)
			c.line(x0, y0, sx, sy, w, cArrow)
			c.triangle(ax, ay, bx, by, x1, y1, cArrow)
		}
	}
	for _, l := range f.Lost {
		x, y := s.lostAt(l.Link, l.Tokens)
		c.lostMark(x, y, s.markSize())
	}
	down := s.downOf(&f)
	for v := range f.Loads {
		if down != nil && down[v] {
			c.crashed(s.nx[v], s.ny[v], s.r, s.crossSize())
			if s.labels {
				c.text(int(s.nx[v]+s.r*0.7)+1, int(s.ny[v]-s.r*0.7)-1, strconv.FormatInt(f.Loads[v], 10), cText)
			}
			continue
		}
		if k > 0 && f.Flows == FlowsNone {
			d := f.Loads[v] - m.frames[k-1].Loads[v]
			if rw := s.ring(d); rw > 0 {
				col := uint8(cGain)
				if d < 0 {
					col = cLoss
				}
				c.disc(s.nx[v], s.ny[v], s.r, s.r+rw, col)
			}
		}
		c.disc(s.nx[v], s.ny[v], 0, s.r, uint8(cScale+s.level(f.Loads[v])))
		if s.labels {
			c.text(int(s.nx[v]+s.r*0.7)+1, int(s.ny[v]-s.r*0.7)-1, strconv.FormatInt(f.Loads[v], 10), cText)
		}
	}
	// The curve so far, and the current point.
	px, py := s.curveXY(s.xOf(&m.frames[0]), m.frames[0].Discrepancy)
	for j := 1; j <= k; j++ {
		x, y := s.curveXY(s.xOf(&m.frames[j]), m.frames[j].Discrepancy)
		c.line(px, py, x, y, 1.5, cCurve)
		px, py = x, y
	}
	c.disc(px, py, 0, 3, cCurve)
	label := frameText(m, k)
	c.text(s.w-8-7*len(label), 18, label, cBlack)
	c.text(12, int(s.net.y1)+16, s.captionOf(m, k), cText)
}

// asciiOnly replaces the characters the GIF font lacks by '?'.
func asciiOnly(s string) string {
	b := []byte{}
	for _, r := range s {
		if r < 32 || r > 126 {
			r = '?'
		}
		b = append(b, byte(r))
	}
	return string(b)
}

// limitWriter fails once more than max bytes were written.
type limitWriter struct {
	w   io.Writer
	n   int64
	max int64
	err error
}

func (l *limitWriter) Write(p []byte) (int, error) {
	if l.err != nil {
		return 0, l.err
	}
	if l.n+int64(len(p)) > l.max {
		l.err = errs.TooLargeParam("animate: the output exceeds MaxBytes = %d bytes; sample less often with Every K (fewer frames), make the picture smaller, or raise MaxBytes", l.max)
		return 0, l.err
	}
	n, err := l.w.Write(p)
	l.n += int64(n)
	if err != nil {
		l.err = errs.Wrapf(err, "animate: writing")
	}
	return n, l.err
}

// blockWriter cuts the LZW stream into GIF data sub-blocks of up to 255 bytes.
type blockWriter struct {
	w   *bufio.Writer
	buf [256]byte
	n   int
}

func (b *blockWriter) Write(p []byte) (int, error) {
	for _, x := range p {
		b.buf[1+b.n] = x
		b.n++
		if b.n == 255 {
			b.flush()
		}
	}
	return len(p), nil
}

func (b *blockWriter) flush() {
	if b.n > 0 {
		b.buf[0] = byte(b.n)
		b.w.Write(b.buf[:1+b.n])
		b.n = 0
	}
}

// WriteGIF writes the movie as an animated GIF (GIF89a, looping, the fixed palette of
// 128 colours, Options.Delay per frame, the last frame held three times as long). Each
// frame after the first stores only the rectangle that changed. It costs O(frames ·
// (W·H + n·r² + m·r·ℓ)) time for a W × H picture, node radius r and drawn link length
// ℓ, and O(W·H) memory; the frames are streamed. Output beyond Options.MaxBytes fails
// with an error wrapping tokendist.ErrTooLarge (the output is then cut short).
func (m *Movie) WriteGIF(w io.Writer) error {
	if m == nil || len(m.frames) == 0 {
		return errs.BadParam("animate: WriteGIF of an empty movie")
	}
	lw := &limitWriter{w: w, max: m.opts.MaxBytes}
	bw := bufio.NewWriter(lw)
	s := newScene(m)
	base := s.base(m)
	cur := image.NewPaletted(base.Rect, palette)
	prev := image.NewPaletted(base.Rect, palette)
	// Header, logical screen (global colour table of 2^7 entries), colours, loop.
	W, H := s.w, s.h
	bw.WriteString("GIF89a")
	bw.Write([]byte{byte(W), byte(W >> 8), byte(H), byte(H >> 8), 0x80 | 6<<4 | 6, 0, 0})
	for i, p := range palette {
		c := p.(color.RGBA)
		if !m.sim && i >= cDown && i <= cLost {
			// Unused in a stepper run's movie: black, as before simulated runs were drawn,
			// so that its GIF stays byte for byte what it was.
			c = color.RGBA{0, 0, 0, 255}
		}
		bw.Write([]byte{c.R, c.G, c.B})
	}
	bw.Write([]byte{0x21, 0xff, 11})
	bw.WriteString("NETSCAPE2.0")
	bw.Write([]byte{3, 1, 0, 0, 0})
	for k := range m.frames {
		s.frame(m, k, base, cur)
		r := cur.Rect
		if k > 0 {
			r = changed(prev, cur)
			if r.Empty() {
				r = image.Rect(0, 0, 1, 1)
			}
		}
		delay := m.opts.Delay
		if k == len(m.frames)-1 {
			delay *= 3
		}
		bw.Write([]byte{0x21, 0xf9, 4, 1 << 2, byte(delay), byte(delay >> 8), 0, 0})
		bw.Write([]byte{0x2c, byte(r.Min.X), byte(r.Min.X >> 8), byte(r.Min.Y), byte(r.Min.Y >> 8),
			byte(r.Dx()), byte(r.Dx() >> 8), byte(r.Dy()), byte(r.Dy() >> 8), 0})
		bw.WriteByte(7) // LZW minimum code size: 7 bits for 128 colours
		blocks := &blockWriter{w: bw}
		lz := lzw.NewWriter(blocks, lzw.LSB, 7)
		for y := r.Min.Y; y < r.Max.Y; y++ {
			lz.Write(cur.Pix[y*cur.Stride+r.Min.X : y*cur.Stride+r.Max.X])
		}
		lz.Close()
		blocks.flush()
		bw.WriteByte(0)
		if lw.err != nil {
			return lw.err
		}
		prev, cur = cur, prev
	}
	bw.WriteByte(0x3b)
	if err := bw.Flush(); err != nil {
		if lw.err != nil {
			return lw.err
		}
		return errs.Wrapf(err, "animate: writing the GIF")
	}
	return nil
}

// changed returns the bounding box of the pixels that differ between a and b.
func changed(a, b *image.Paletted) image.Rectangle {
	r := image.Rectangle{}
	W, H := a.Rect.Dx(), a.Rect.Dy()
	for y := range H {
		ra, rb := a.Pix[y*a.Stride:y*a.Stride+W], b.Pix[y*b.Stride:y*b.Stride+W]
		if string(ra) == string(rb) {
			continue
		}
		x0 := 0
		for ra[x0] == rb[x0] {
			x0++
		}
		x1 := W
		for ra[x1-1] == rb[x1-1] {
			x1--
		}
		r = r.Union(image.Rect(x0, y, x1, y+1))
	}
	return r
}

// Image draws frame k as an image with the GIF's palette, in O(W·H + n·r² + m·r·ℓ).
// It panics unless 0 ≤ k < len(Frames()), as a slice index does.
func (m *Movie) Image(k int) *image.Paletted {
	_ = m.frames[k]
	s := newScene(m)
	base := s.base(m)
	img := image.NewPaletted(base.Rect, palette)
	s.frame(m, k, base, img)
	return img
}
