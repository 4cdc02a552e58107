package plot

import (
	"bytes"
	"errors"
	"fmt"
	"html"
	"image/color"
	"math"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

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
// Each glyph is filled with textMarker; finishSVG turns it into a <use> of the glyph's
// outline, defined once, with class="tdtext" (and the default black fill), so tests and
// style sheets can find text.
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
	str = truncText(str)
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
	for _, g := range path {
		c.Push()
		c.Translate(vg.Point{X: g.x})
		c.Fill(g.path)
		c.Pop()
	}
	c.Pop()
}

// maxTextRunes bounds every text a plot draws (title, axis labels, legend names): a
// longer one is cut and ends with "…". No readable plot has longer labels, and each
// drawn character costs a glyph outline.
const maxTextRunes = 200

// truncText cuts s to maxTextRunes runes (the last one "…"), and replaces invalid UTF-8
// and control characters (a newline would break the layout) by spaces.
func truncText(s string) string {
	if len(s) <= maxTextRunes && utf8.ValidString(s) && !strings.ContainsFunc(s, unicode.IsControl) {
		return s
	}
	long := utf8.RuneCountInString(s) > maxTextRunes
	var b strings.Builder
	n := 0
	for _, r := range s {
		if long && n == maxTextRunes-1 {
			b.WriteRune('…')
			return b.String()
		}
		if r == utf8.RuneError || unicode.IsControl(r) {
			r = ' '
		}
		b.WriteRune(r)
		n++
	}
	return b.String()
}

// glyphOutline is one glyph's outline at the origin and its x offset in the string.
type glyphOutline struct {
	x    vg.Length
	path vg.Path
}

// outline returns the outlines of str's glyphs in points, each with its origin at the
// baseline, y up, and its offset along the baseline; blank glyphs are left out.
func (c *outlineCanvas) outline(f font.Face, str string) ([]glyphOutline, error) {
	fnt := f.Face
	if fnt == nil {
		return nil, fmt.Errorf("tokendist: plot: no font face for %q", str)
	}
	upem := fixed.Int26_6(fnt.UnitsPerEm())
	// With ppem equal to the units per em, sfnt returns coordinates in font units.
	scale := f.Font.Size.Points() / float64(upem)
	pts := func(p fixed.Point26_6) vg.Point {
		return vg.Point{X: vg.Length(float64(p.X) * scale), Y: vg.Length(-float64(p.Y) * scale)}
	}
	var (
		out     []glyphOutline
		x       float64
		prev    sfnt.GlyphIndex
		hasPrev bool
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
		var path vg.Path
		for i, s := range segs {
			switch s.Op {
			case sfnt.SegmentOpMoveTo:
				if i > 0 {
					path.Close()
				}
				path.Move(pts(s.Args[0]))
			case sfnt.SegmentOpLineTo:
				path.Line(pts(s.Args[0]))
			case sfnt.SegmentOpQuadTo:
				path.QuadTo(pts(s.Args[0]), pts(s.Args[1]))
			case sfnt.SegmentOpCubeTo:
				path.CubeTo(pts(s.Args[0]), pts(s.Args[1]), pts(s.Args[2]))
			}
		}
		if len(path) > 0 {
			path.Close()
			out = append(out, glyphOutline{x: vg.Length(x), path: path})
		}
		adv, err := fnt.GlyphAdvance(&c.buf, idx, upem, 0)
		if err != nil {
			return nil, fmt.Errorf("tokendist: plot: advance of %q: %w", r, err)
		}
		x += float64(adv) * scale
		prev, hasPrev = idx, true
	}
	return out, nil
}

// glyphUse matches one glyph as the outline canvas makes vgsvg write it: its offset
// and its path data.
var glyphUse = regexp.MustCompile(`<g transform="translate\(([^,]+), 0\)">\s*<path d="([^"]*)" ` + textMarkerStyle + ` />\s*</g>`)

// svgNumber matches a decimal number in path data.
var svgNumber = regexp.MustCompile(`-?[0-9]+\.[0-9]+`)

// finishSVG writes the canvas as an SVG document: it draws each glyph as a <use> of
// its outline, defined once in <defs>, marked class="tdtext", and adds a <title> and a <desc> listing every label in drawing order
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
	// Each distinct glyph outline is defined once (coordinates rounded to 0.01 pt) and
	// drawn with <use>.
	ids := map[string]string{}
	var defs strings.Builder
	s := glyphUse.ReplaceAllStringFunc(raw.String(), func(m string) string {
		sub := glyphUse.FindStringSubmatch(m)
		id, ok := ids[sub[2]]
		if !ok {
			id = "g" + strconv.Itoa(len(ids))
			ids[sub[2]] = id
			d := svgNumber.ReplaceAllStringFunc(sub[2], func(n string) string {
				v, _ := strconv.ParseFloat(n, 64)
				return strconv.FormatFloat(math.Round(v*100)/100, 'f', -1, 64)
			})
			fmt.Fprintf(&defs, "<path id=\"%s\" d=\"%s\"/>\n", id, d)
		}
		return `<use xlink:href="#` + id + `" x="` + sub[1] + `" class="tdtext"/>`
	})
	s = strings.ReplaceAll(s, textMarkerStyle, `class="tdtext"`) // none expected
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
	if defs.Len() > 0 {
		fmt.Fprintf(&meta, "\n<defs>\n%s</defs>", defs.String())
	}
	return []byte(s[:j] + meta.String() + s[j:]), nil
}
