package tokendist

import (
	"bytes"
	"errors"
	"fmt"
	"html"
	"image/color"
	"strings"

	"golang.org/x/image/font/sfnt"
	"golang.org/x/image/math/fixed"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// outlineCanvas is an SVG canvas that draws text as filled glyph outlines instead of
// <text> elements naming a font. gonum/plot lays text out with the metrics of its
// embedded Liberation fonts; an SVG viewer without those fonts substitutes another
// family and the measured layout no longer fits (legend text struck through by the line
// samples, tick labels clipped). Outlines taken from the very font the layout was
// measured with render the same in every viewer, with no font installed.
//
// Each string becomes one <path> filled with textMarker, which finishSVG turns into
// class="tdtext" (and the default black fill), so tests and style sheets can find text.
type outlineCanvas struct {
	*vgsvg.Canvas
	buf   sfnt.Buffer
	texts []string // every string drawn, in order, for the SVG's <desc>
	err   error    // the first font error; FillString cannot return one
}

// textMarker is the fill colour the outline canvas gives text paths; finishSVG replaces
// it. No plot colour is this near-black.
var textMarker = color.NRGBA{R: 1, G: 2, B: 3, A: 255}

const textMarkerStyle = `style="fill:#010203"`

func newOutlineCanvas(w, h vg.Length) *outlineCanvas {
	return &outlineCanvas{Canvas: vgsvg.NewWith(vgsvg.UseWH(w, h))}
}

// FillString implements vg.Canvas: it fills the outlines of str's glyphs, laid out with
// the same advances and kerning as gonum/plot's font.Face.Width, with the baseline
// starting at pt.
func (c *outlineCanvas) FillString(f font.Face, pt vg.Point, str string) {
	if str == "" {
		return
	}
	c.texts = append(c.texts, str)
	path, err := c.outline(f, str)
	if err != nil {
		if c.err == nil {
			c.err = err
		}
		return
	}
	c.Push()
	c.Translate(pt)
	c.SetColor(textMarker)
	c.Fill(path)
	c.Pop()
}

// outline returns the glyph outlines of str in points, baseline at the origin, y up.
func (c *outlineCanvas) outline(f font.Face, str string) (vg.Path, error) {
	fnt := f.Face
	if fnt == nil {
		return nil, fmt.Errorf("tokendist: plot: no font face for %q", str)
	}
	upem := fixed.Int26_6(fnt.UnitsPerEm())
	// With ppem equal to the units per em, sfnt returns coordinates in font units.
	scale := f.Font.Size.Points() / float64(upem)
	pts := func(p fixed.Point26_6, x0 float64) vg.Point {
		return vg.Point{X: vg.Length(x0 + float64(p.X)*scale), Y: vg.Length(-float64(p.Y) * scale)}
	}
	var (
		path    vg.Path
		x       float64
		prev    sfnt.GlyphIndex
		hasPrev bool
		open    bool
	)
	for _, r := range str {
		idx, err := fnt.GlyphIndex(&c.buf, r)
		if err != nil {
			return nil, fmt.Errorf("tokendist: plot: glyph for %q: %w", r, err)
		}
		if hasPrev {
			kern, err := fnt.Kern(&c.buf, prev, idx, upem, 0)
			switch {
			case err == nil:
				x += float64(kern) * scale
			case errors.Is(err, sfnt.ErrNotFound):
			default:
				return nil, fmt.Errorf("tokendist: plot: kerning for %q: %w", r, err)
			}
		}
		segs, err := fnt.LoadGlyph(&c.buf, idx, upem, nil)
		if err != nil {
			return nil, fmt.Errorf("tokendist: plot: outline of %q: %w", r, err)
		}
		for _, s := range segs {
			switch s.Op {
			case sfnt.SegmentOpMoveTo:
				if open {
					path.Close()
				}
				path.Move(pts(s.Args[0], x))
				open = true
			case sfnt.SegmentOpLineTo:
				path.Line(pts(s.Args[0], x))
			case sfnt.SegmentOpQuadTo:
				path.QuadTo(pts(s.Args[0], x), pts(s.Args[1], x))
			case sfnt.SegmentOpCubeTo:
				path.CubeTo(pts(s.Args[0], x), pts(s.Args[1], x), pts(s.Args[2], x))
			}
		}
		if open {
			path.Close()
			open = false
		}
		adv, err := fnt.GlyphAdvance(&c.buf, idx, upem, 0)
		if err != nil {
			return nil, fmt.Errorf("tokendist: plot: advance of %q: %w", r, err)
		}
		x += float64(adv) * scale
		prev, hasPrev = idx, true
	}
	return path, nil
}

// finishSVG writes the canvas as an SVG document: it marks the text paths with
// class="tdtext" and adds a <title> and a <desc> listing every label in drawing order
// (title, x axis, y axis, legend), so the plot's words stay searchable and readable by
// screen readers although no <text> is drawn.
func (c *outlineCanvas) finishSVG(title string) ([]byte, error) {
	if c.err != nil {
		return nil, c.err
	}
	var raw bytes.Buffer
	if _, err := c.WriteTo(&raw); err != nil {
		return nil, fmt.Errorf("tokendist: plot: %w", err)
	}
	s := strings.ReplaceAll(raw.String(), textMarkerStyle, `class="tdtext"`)
	i := strings.Index(s, "<svg")
	j := -1
	if i >= 0 {
		j = strings.Index(s[i:], ">")
	}
	if j < 0 {
		return nil, errors.New("tokendist: plot: gonum/plot wrote no <svg> element")
	}
	j += i + 1
	var meta strings.Builder
	if title != "" {
		fmt.Fprintf(&meta, "\n<title>%s</title>", html.EscapeString(title))
	}
	fmt.Fprintf(&meta, "\n<desc>%s</desc>", html.EscapeString(strings.Join(c.texts, " | ")))
	return []byte(s[:j] + meta.String() + s[j:]), nil
}
