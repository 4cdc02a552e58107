package animate

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"image"
	"image/gif"
	"io"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tokendist/tokendist"
)

// composite replays the decoded GIF's frames (each a changed rectangle drawn over the
// previous picture) and returns the full picture after each, as palette indices.
func composite(t *testing.T, g *gif.GIF) []*image.Paletted {
	t.Helper()
	full := image.Rect(0, 0, g.Config.Width, g.Config.Height)
	cur := image.NewPaletted(full, palette)
	var out []*image.Paletted
	for _, f := range g.Image {
		b := f.Bounds()
		require.True(t, b.In(full), "frame %v outside %v", b, full)
		for y := b.Min.Y; y < b.Max.Y; y++ {
			copy(cur.Pix[y*cur.Stride+b.Min.X:y*cur.Stride+b.Max.X], f.Pix[f.PixOffset(b.Min.X, y):f.PixOffset(b.Max.X, y)])
		}
		c := image.NewPaletted(full, palette)
		copy(c.Pix, cur.Pix)
		out = append(out, c)
	}
	return out
}

func decodeGIF(t *testing.T, m *Movie) (*gif.GIF, []*image.Paletted) {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, m.WriteGIF(&buf))
	g, err := gif.DecodeAll(&buf)
	require.NoError(t, err)
	return g, composite(t, g)
}

func treeMovie(t *testing.T, opts *Options) *Movie {
	t.Helper()
	tree, err := tokendist.KaryTree(tokendist.KaryShape{Height: 3, Arity: 2})
	require.NoError(t, err)
	b, err := tokendist.NewThreshold1(tree, nil)
	require.NoError(t, err)
	l, err := tokendist.PointMass(tree.Order(), 40, 7)
	require.NoError(t, err)
	m, err := Record(context.Background(), tree, l, b, opts)
	require.NoError(t, err)
	return m
}

func TestGIFDecodesWithOneFramePerStepAndNodeColoursOfTheLoads(t *testing.T) {
	for _, every := range []int64{1, 4} {
		m := treeMovie(t, &Options{Every: every, Title: "THRESHOLD-1"})
		fr := m.Frames()
		res := lastStep(fr)
		// The frames: step 0, every multiple of Every, and the last step.
		want := int(res/every) + 1
		if res%every != 0 {
			want++
		}
		require.Len(t, fr, want)
		for k := 1; k < len(fr); k++ {
			require.True(t, fr[k].Step == fr[k-1].Step+every || (k == len(fr)-1 && fr[k].Step > fr[k-1].Step), "frame %d at step %d after %d", k, fr[k].Step, fr[k-1].Step)
		}
		g, pics := decodeGIF(t, m)
		require.Len(t, g.Image, len(fr), "one GIF frame per movie frame")
		require.Equal(t, DefaultWidth, g.Config.Width)
		require.Equal(t, DefaultHeight, g.Config.Height)
		s := newScene(m)
		differ := 0
		for k, pic := range pics {
			for v, x := range fr[k].Loads {
				got := pic.ColorIndexAt(int(s.nx[v]), int(s.ny[v]))
				require.Equal(t, uint8(cScale+s.level(x)), got, "frame %d node %d load %d", k, v, x)
			}
			if k > 0 && !slicesEqual(fr[k].Loads, fr[k-1].Loads) {
				require.NotEqual(t, pics[k-1].Pix, pic.Pix, "frame %d: the loads changed, the picture did not", k)
				differ++
			}
		}
		require.Positive(t, differ)
		// The scale's ends are the run's extreme loads: the point mass is the top colour.
		require.Equal(t, uint8(cScale+levels-1), pics[0].ColorIndexAt(int(s.nx[7]), int(s.ny[7])))
		require.Equal(t, uint8(cScale), pics[0].ColorIndexAt(int(s.nx[0]), int(s.ny[0])))
	}
}

func lastStep(fr []Frame) int64 { return fr[len(fr)-1].Step }

func slicesEqual(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// checkFlows asserts that every frame's flows explain its load changes exactly.
func checkFlows(t *testing.T, m *Movie, want Flows) {
	t.Helper()
	fr := m.Frames()
	moved := 0
	for k := 1; k < len(fr); k++ {
		require.Equal(t, want, fr[k].Flows, "frame %d", k)
		in := make([]int64, len(fr[k].Loads))
		for _, mv := range fr[k].Moved {
			require.NotZero(t, mv.Tokens)
			e := m.Links()[mv.Link]
			in[e[0]] -= mv.Tokens
			in[e[1]] += mv.Tokens
			moved++
		}
		for v := range in {
			require.Equal(t, fr[k].Loads[v]-fr[k-1].Loads[v], in[v], "frame %d node %d: flows do not explain the change", k, v)
		}
	}
	require.Positive(t, moved)
}

func TestFlowsOfATreeAndOfAMatchingExplainTheLoads(t *testing.T) {
	m := treeMovie(t, &Options{Every: 3})
	require.Equal(t, LayoutTree, m.Layout())
	checkFlows(t, m, FlowsTree)
	// The first move leaves the point mass at node 7 towards its parent.
	f := m.Frames()[1]
	require.NotEmpty(t, f.Moved)
	e := m.Links()[f.Moved[0].Link]
	from := e[0]
	if f.Moved[0].Tokens < 0 {
		from = e[1]
	}
	require.Equal(t, 7, from)

	tor, err := tokendist.Torus(6, 6)
	require.NoError(t, err)
	ec, err := tokendist.TorusColoring(6, 6)
	require.NoError(t, err)
	th2, err := tokendist.NewThreshold2(tor, ec)
	require.NoError(t, err)
	l, err := tokendist.PointMass(tor.Order(), 500, 14)
	require.NoError(t, err)
	m, err = Record(context.Background(), tor, l, th2, &Options{Every: 3, Run: tokendist.RunOptions{MaxSteps: 40}})
	require.NoError(t, err)
	require.Equal(t, LayoutLattice, m.Layout())
	checkFlows(t, m, FlowsMatching)

	// Randomized diffusion on a torus: flows unknown, node changes only.
	rd, err := tokendist.NewRandomizedDiffusion(tor)
	require.NoError(t, err)
	m, err = Record(context.Background(), tor, l, rd, &Options{Run: tokendist.RunOptions{MaxSteps: 10, Seed: 3}})
	require.NoError(t, err)
	for k, f := range m.Frames() {
		require.Equal(t, FlowsNone, f.Flows, "frame %d", k)
		require.Nil(t, f.Moved)
	}
	// Its frames draw rings: some pixel of a ring colour around a node that changed.
	_, pics := decodeGIF(t, m)
	s := newScene(m)
	fr := m.Frames()
	rings := 0
	for v := range fr[1].Loads {
		d := fr[1].Loads[v] - fr[0].Loads[v]
		if d == 0 {
			continue
		}
		col := uint8(cGain)
		if d < 0 {
			col = cLoss
		}
		x, y := int(s.nx[v]+s.r+s.ring(d)/2+0.5), int(s.ny[v])
		if pics[1].ColorIndexAt(x, y) == col || pics[1].ColorIndexAt(x-1, y) == col {
			rings++
		}
	}
	require.Positive(t, rings)
}

func TestLayoutsFollowTheStructure(t *testing.T) {
	ring, _ := tokendist.Ring(12)
	tor, _ := tokendist.Torus(5, 7)
	mesh, _ := tokendist.Mesh(4, 6)
	path, _ := tokendist.Path(9)
	cube, _ := tokendist.Hypercube(5)
	tree, _ := tokendist.KaryTree(tokendist.KaryShape{Height: 3, Arity: 3})
	star, _ := tokendist.Star(9)
	ring3, _ := tokendist.Ring(3)
	mesh25, _ := tokendist.Mesh(2, 5) // a side of 2: no link is a wrap-around
	mesh52, _ := tokendist.Mesh(5, 2)
	rr, err := tokendist.RandomRegular(30, 3, 1)
	require.NoError(t, err)
	for _, c := range []struct {
		net   *tokendist.Graph
		want  Layout
		wraps int
	}{{ring, LayoutCircle, 0}, {tor, LayoutLattice, 5 + 7}, {mesh, LayoutLattice, 0}, {path, LayoutLattice, 0},
		{cube, LayoutHypercube, 0}, {tree, LayoutTree, 0}, {star, LayoutTree, 0}, {rr, LayoutForce, 0},
		{mesh25, LayoutLattice, 0}, {mesh52, LayoutLattice, 0}, {ring3, LayoutCircle, 0}} {
		r, err := NewRecorder(c.net, nil, nil)
		require.NoError(t, err, c.net.String())
		m := r.m
		require.Equal(t, c.want, m.Layout(), c.net.String())
		wraps := 0
		for _, w := range m.wrap {
			if w {
				wraps++
			}
		}
		require.Equal(t, c.wraps, wraps, c.net.String())
		seen := map[[2]int64]bool{}
		for v := range c.net.Order() {
			x, y := m.Position(v)
			require.True(t, x >= 0 && x <= 1 && y >= 0 && y <= 1, "%s node %d at (%g, %g)", c.net, v, x, y)
			key := [2]int64{int64(math.Round(x * 1e6)), int64(math.Round(y * 1e6))}
			if c.want != LayoutForce {
				require.False(t, seen[key], "%s: node %d on another node", c.net, v)
			}
			seen[key] = true
		}
	}
	// A named layout that does not fit is an error; one that fits is used.
	for _, c := range []struct {
		net *tokendist.Graph
		l   Layout
	}{{star, LayoutCircle}, {star, LayoutLattice}, {tor, LayoutTree}, {tree, LayoutHypercube}} {
		_, err := NewRecorder(c.net, nil, &Options{Layout: c.l})
		require.ErrorIs(t, err, tokendist.ErrBadParameter)
		require.Contains(t, err.Error(), "layout "+string(c.l))
	}
	r, err := NewRecorder(tor, nil, &Options{Layout: LayoutForce})
	require.NoError(t, err)
	require.Equal(t, LayoutForce, r.m.Layout())
	r, err = NewRecorder(ring, nil, &Options{Layout: "auto"})
	require.NoError(t, err)
	require.Equal(t, LayoutCircle, r.m.Layout())
}

func TestLimitsAndBadOptionsAreRefusedNamingTheValue(t *testing.T) {
	ctx := context.Background()
	tor, _ := tokendist.Torus(10, 10)
	l, _ := tokendist.PointMass(100, 1000, 0)
	rd := func() tokendist.Balancer { b, _ := tokendist.NewRandomizedDiffusion(tor); return b }
	tooLarge := func(err error, words ...string) {
		t.Helper()
		require.ErrorIs(t, err, tokendist.ErrTooLarge)
		require.True(t, strings.HasPrefix(err.Error(), "tokendist: "), err.Error())
		for _, w := range words {
			require.Contains(t, err.Error(), w)
		}
	}
	_, err := Record(ctx, tor, l, rd(), &Options{MaxNodes: 99})
	tooLarge(err, "MaxNodes = 99", "100 nodes")
	_, err = Record(ctx, tor, l, rd(), &Options{MaxFrames: 50, Run: tokendist.RunOptions{MaxSteps: 1000}})
	tooLarge(err, "MaxFrames = 50", "Every 21")
	// With Every 21 the same run fits.
	m, err := Record(ctx, tor, l, rd(), &Options{MaxFrames: 50, Every: 21, Run: tokendist.RunOptions{MaxSteps: 1000}})
	require.NoError(t, err)
	require.LessOrEqual(t, len(m.Frames()), 50)
	// A run without a step bound is stopped when it reaches the limit.
	_, err = Record(ctx, tor, l, rd(), &Options{MaxFrames: 5})
	tooLarge(err, "MaxFrames = 5", "Every K")
	m, err = Record(ctx, tor, l, rd(), &Options{MaxBytes: 2000, Run: tokendist.RunOptions{MaxSteps: 20}})
	require.NoError(t, err)
	var buf bytes.Buffer
	tooLarge(m.WriteGIF(&buf), "MaxBytes = 2000", "Every K")
	require.LessOrEqual(t, buf.Len(), 2000)
	buf.Reset()
	tooLarge(m.WriteHTML(&buf), "MaxBytes = 2000")
	buf.Reset()
	tooLarge(m.WriteSVG(&buf, 0), "MaxBytes = 2000")

	bad := []struct {
		o    Options
		want string
	}{
		{Options{Every: -1}, "Every -1"}, {Options{Width: 100}, "Width 100"}, {Options{Height: 5000}, "Height 5000"},
		{Options{Layout: "spiral"}, `layout "spiral"`}, {Options{MaxBytes: -1}, "MaxBytes -1"}, {Options{Delay: -2}, "Delay -2"},
		{Options{Run: tokendist.RunOptions{SampleEvery: 3}}, "SampleEvery 3"},
		{Options{Run: tokendist.RunOptions{Recorder: tokendist.RecorderFunc(func(*tokendist.State, tokendist.Sample) error { return nil })}}, "Recorder"},
	}
	for _, c := range bad {
		_, err := Record(ctx, tor, l, rd(), &c.o)
		require.ErrorIs(t, err, tokendist.ErrBadParameter, c.want)
		require.Contains(t, err.Error(), c.want)
		require.True(t, strings.HasPrefix(err.Error(), "tokendist: "))
	}
	_, err = Record(ctx, nil, l, rd(), nil)
	require.ErrorIs(t, err, tokendist.ErrNilNetwork)
	// A run error comes back as it is.
	_, err = Record(ctx, tor, l[:5], rd(), nil)
	require.ErrorIs(t, err, tokendist.ErrBadLoads)
	m, err = Record(ctx, tor, l, rd(), &Options{Run: tokendist.RunOptions{MaxSteps: 3}})
	require.NoError(t, err)
	require.Error(t, m.WriteSVG(&buf, 4))
	require.Error(t, m.WriteSVG(&buf, -1))
	var r *Recorder
	_, err = r.Movie()
	require.Error(t, err)
	require.Error(t, r.Record(nil, tokendist.Sample{}))
}

func TestRecorderInsideACallersRun(t *testing.T) {
	tree, _ := tokendist.KaryTree(tokendist.KaryShape{Height: 2, Arity: 3})
	b, _ := tokendist.NewThreshold2(tree, nil)
	l, _ := tokendist.PointMass(tree.Order(), 30, 5)
	r, err := NewRecorder(tree, b, &Options{Every: 2})
	require.NoError(t, err)
	_, err = r.Movie()
	require.Error(t, err, "Movie before the first sample")
	res, err := tokendist.Run(context.Background(), tree, l, b, &tokendist.RunOptions{Recorder: r, SampleEvery: 2, MaxSteps: 15})
	require.NoError(t, err)
	m, err := r.Movie()
	require.NoError(t, err)
	fr := m.Frames()
	require.Equal(t, res.Steps, lastStep(fr))
	require.Equal(t, []int64(res.Loads), []int64(fr[len(fr)-1].Loads))
	checkFlows(t, m, FlowsTree)
	m2, err := r.Movie()
	require.NoError(t, err)
	require.Same(t, m, m2)
	require.Error(t, r.Record(&tokendist.State{Loads: res.Loads}, tokendist.Sample{}), "Record after Movie")
	m.title = `T_{2,3} <"&">`
	var svg bytes.Buffer
	require.NoError(t, m.WriteSVG(&svg, len(fr)-1))
	require.True(t, strings.HasPrefix(svg.String(), "<svg "))
	require.Equal(t, tree.Order(), strings.Count(svg.String(), "<circle cx"))
	// Well-formed XML, the title escaped, the last frame's loads as the node labels.
	dec := xml.NewDecoder(bytes.NewReader(svg.Bytes()))
	var texts []string
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		if cd, ok := tok.(xml.CharData); ok && strings.TrimSpace(string(cd)) != "" {
			texts = append(texts, string(cd))
		}
	}
	require.Contains(t, texts, `T_{2,3} <"&">`)
	require.Contains(t, texts, frameText(m, len(fr)-1))
	for _, x := range fr[len(fr)-1].Loads {
		require.Contains(t, texts, strconv.FormatInt(x, 10))
	}
}

func TestNilNetworksAreErrors(t *testing.T) {
	_, err := NewRecorder(tokendist.Network(nil), nil, nil)
	require.True(t, errors.Is(err, tokendist.ErrNilNetwork))
	_, err = NewRecorder((*tokendist.Graph)(nil), nil, nil)
	require.True(t, errors.Is(err, tokendist.ErrNilNetwork))
	require.Equal(t, 1, strings.Count(err.Error(), "tokendist: "), err.Error())
}

// TestArrivalsMakeNodeChangeFrames: in a caller's run with a workload, a frame whose
// total changed has no flow that explains it, and draws node changes instead.
func TestArrivalsMakeNodeChangeFrames(t *testing.T) {
	tree, _ := tokendist.KaryTree(tokendist.KaryShape{Height: 2, Arity: 2})
	b, _ := tokendist.NewThreshold2(tree, nil)
	l, _ := tokendist.PointMass(tree.Order(), 30, 3)
	w, err := tokendist.NewPoissonArrivals(2, false)
	require.NoError(t, err)
	r, err := NewRecorder(tree, b, nil)
	require.NoError(t, err)
	_, err = tokendist.Run(context.Background(), tree, l, b, &tokendist.RunOptions{Recorder: r, SampleEvery: 1, MaxSteps: 12, Workload: w, Seed: 5})
	require.NoError(t, err)
	m, err := r.Movie()
	require.NoError(t, err)
	none, tree2 := 0, 0
	fr := m.Frames()
	for k := 1; k < len(fr); k++ {
		grew := fr[k].Loads.Total() != fr[k-1].Loads.Total()
		if grew {
			require.Equal(t, FlowsNone, fr[k].Flows, "frame %d", k)
			require.Nil(t, fr[k].Moved)
			none++
		} else {
			require.Equal(t, FlowsTree, fr[k].Flows, "frame %d", k)
			tree2++
		}
	}
	require.Positive(t, none)
	// And a matching balancer on a torus with arrivals: no frame with arrivals claims flows.
	tor, _ := tokendist.Torus(4, 4)
	ec, _ := tokendist.TorusColoring(4, 4)
	th, _ := tokendist.NewThreshold2(tor, ec)
	l2, _ := tokendist.PointMass(16, 50, 0)
	w2, _ := tokendist.NewPoissonArrivals(1, false)
	r2, err := NewRecorder(tor, th, nil)
	require.NoError(t, err)
	_, err = tokendist.Run(context.Background(), tor, l2, th, &tokendist.RunOptions{Recorder: r2, SampleEvery: 1, MaxSteps: 12, Workload: w2, Seed: 5})
	require.NoError(t, err)
	m2, err := r2.Movie()
	require.NoError(t, err)
	fr = m2.Frames()
	matched := 0
	for k := 1; k < len(fr); k++ {
		if fr[k].Loads.Total() != fr[k-1].Loads.Total() {
			require.Equal(t, FlowsNone, fr[k].Flows, "frame %d", k)
		} else if fr[k].Flows == FlowsMatching {
			matched++
		}
	}
	require.Positive(t, matched)
}

// TestRecorderEdges covers the Recorder's guards: a limit of exactly n nodes, a
// colouring of another graph, a repeated sample, a nil State, samples more than one
// step apart for a matching balancer, and the GIF's frame delays.
func TestRecorderEdges(t *testing.T) {
	tor, _ := tokendist.Torus(4, 4)
	ring, _ := tokendist.Ring(16)
	ec, _ := tokendist.TorusColoring(4, 4)
	th, _ := tokendist.NewThreshold2(tor, ec)
	r, err := NewRecorder(tor, th, &Options{MaxNodes: 16})
	require.NoError(t, err, "MaxNodes = n is allowed")
	require.NotNil(t, r.b, "THRESHOLD-2 on its own torus: a known matching")
	r, err = NewRecorder(ring, th, nil)
	require.NoError(t, err)
	require.Nil(t, r.b, "a colouring of another graph of the same order is not used")
	require.Error(t, r.Record(nil, tokendist.Sample{}))

	// A repeated sample adds no frame.
	s := &tokendist.State{Loads: make(tokendist.Loads, 16)}
	require.NoError(t, r.Record(s, tokendist.Sample{}))
	require.NoError(t, r.Record(s, tokendist.Sample{}))
	m, err := r.Movie()
	require.NoError(t, err)
	require.Len(t, m.Frames(), 1)

	// Samples two steps apart: a matching cannot tell the flows, even when nothing moved.
	th, _ = tokendist.NewThreshold2(tor, ec)
	r, err = NewRecorder(tor, th, nil)
	require.NoError(t, err)
	flat := make(tokendist.Loads, 16)
	for v := range flat {
		flat[v] = 5
	}
	_, err = tokendist.Run(context.Background(), tor, flat, th, &tokendist.RunOptions{Recorder: r, SampleEvery: 2, MaxSteps: 6, NoStability: true})
	require.NoError(t, err)
	m, err = r.Movie()
	require.NoError(t, err)
	require.Len(t, m.Frames(), 4)
	for _, f := range m.Frames()[1:] {
		require.Equal(t, FlowsNone, f.Flows)
	}
	// Sampled every step, the same run has matching flows (none moved).
	th, _ = tokendist.NewThreshold2(tor, ec)
	m, err = Record(context.Background(), tor, flat, th, &Options{Delay: 7, Every: 2, Run: tokendist.RunOptions{MaxSteps: 6, NoStability: true}})
	require.NoError(t, err)
	require.Len(t, m.Frames(), 4)
	for _, f := range m.Frames()[1:] {
		require.Equal(t, FlowsMatching, f.Flows)
		require.Empty(t, f.Moved)
	}
	g, _ := decodeGIF(t, m)
	require.Equal(t, []int{7, 7, 7, 21}, g.Delay, "Delay per frame, the last held three times")
	m = treeMovie(t, &Options{Every: 50})
	g, _ = decodeGIF(t, m)
	require.Equal(t, 10, g.Delay[0], "the default delay")
	require.Equal(t, 0, g.LoopCount, "loops forever")
}

// TestLayoutGeometry checks the places each layout gives: a ring on the circle of
// radius ½ from the top, evenly spaced along its cycle; a lattice on an even grid,
// centred; a tree layered by depth from its centre, each parent above the middle of
// its children.
func TestLayoutGeometry(t *testing.T) {
	near := func(want, got float64, msg string, args ...any) {
		t.Helper()
		require.InDelta(t, want, got, 1e-9, append([]any{msg}, args...)...)
	}
	ring, _ := tokendist.Ring(10)
	r, err := NewRecorder(ring, nil, nil)
	require.NoError(t, err)
	m := r.m
	chord := math.Sin(math.Pi / 10) // 2 · ½ · sin(π/n)
	x0, y0 := m.Position(0)
	near(0.5, x0, "node 0 at the top")
	near(0, y0, "node 0 at the top")
	for v := range 10 {
		x, y := m.Position(v)
		near(0.5, math.Hypot(x-0.5, y-0.5), "node %d on the circle", v)
		x1, y1 := m.Position((v + 1) % 10)
		near(chord, math.Hypot(x1-x, y1-y), "nodes %d, %d a chord apart", v, v+1)
	}
	x1, _ := m.Position(1)
	require.Greater(t, x1, 0.5, "clockwise from the top")

	mesh, _ := tokendist.Mesh(4, 6)
	r, err = NewRecorder(mesh, nil, nil)
	require.NoError(t, err)
	m = r.m
	// 24 nodes, row-major with c columns and r rows, spacing 1/(max(r, c)−1), centred.
	lo, hi := point{1, 1}, point{0, 0}
	for _, p := range m.pos {
		lo = point{min(lo.x, p.x), min(lo.y, p.y)}
		hi = point{max(hi.x, p.x), max(hi.y, p.y)}
	}
	near(1, lo.x+hi.x, "centred across")
	near(1, lo.y+hi.y, "centred down")
	near(1, max(hi.x-lo.x, hi.y-lo.y), "the longer side spans [0, 1]")
	for _, e := range m.Links() {
		a, b := m.pos[e[0]], m.pos[e[1]]
		d := math.Hypot(a.x-b.x, a.y-b.y)
		near(0.2, d, "link %v: one grid step (1/5)", e)
	}

	tree, _ := tokendist.KaryTree(tokendist.KaryShape{Height: 3, Arity: 2})
	r, err = NewRecorder(tree, nil, nil)
	require.NoError(t, err)
	m = r.m
	_, rootY := m.Position(0) // the centre of a complete binary tree is its root
	near(0, rootY, "root on top")
	rootX, _ := m.Position(0)
	lx, _ := m.Position(1)
	rx, _ := m.Position(2)
	near((lx+rx)/2, rootX, "the root above the middle of its children")
	minX, maxX, maxY := 1.0, 0.0, 0.0
	for v := 1; v < tree.Order(); v++ {
		x, y := m.Position(v)
		_, py := m.Position((v - 1) / 2)
		near(py+1.0/3, y, "node %d one layer below its parent", v)
		minX, maxX, maxY = min(minX, x), max(maxX, x), max(maxY, y)
		if 2*v+2 < tree.Order() {
			lx, _ := m.Position(2*v + 1)
			rx, _ := m.Position(2*v + 2)
			near((lx+rx)/2, x, "node %d above the middle of its children", v)
		}
	}
	near(0, minX, "leftmost leaf")
	near(1, maxX, "rightmost leaf")
	near(1, maxY, "deepest layer")
	// Leaves are evenly spaced: 8 leaves 1/7 apart, in order.
	for i := range 8 {
		x, _ := m.Position(7 + i)
		near(float64(i)/7, x, "leaf %d", 7+i)
	}
}

// TestHypercubeProjection: the links of dimension i are one translation, at angle
// π·i/d and of length proportional to 1 + 0.09·i, so the cube's structure shows.
func TestHypercubeProjection(t *testing.T) {
	const d = 4
	cube, _ := tokendist.Hypercube(d)
	r, err := NewRecorder(cube, nil, nil)
	require.NoError(t, err)
	m := r.m
	var unit float64
	for i := range d {
		x0, y0 := m.Position(0)
		x1, y1 := m.Position(1 << i)
		dx, dy := x1-x0, y1-y0
		if i == 0 {
			unit = dx
			require.Positive(t, unit, "dimension 0 points right")
			require.InDelta(t, 0, dy, 1e-9)
		}
		l := math.Hypot(dx, dy)
		require.InDelta(t, 1+0.09*float64(i), l/unit, 1e-9, "dimension %d length", i)
		require.InDelta(t, math.Pi*float64(i)/d, math.Atan2(dy, dx), 1e-9, "dimension %d angle", i)
		for v := range 1 << d {
			if v>>i&1 == 1 {
				continue
			}
			a, b := m.pos[v], m.pos[v|1<<i]
			require.InDelta(t, dx, b.x-a.x, 1e-9, "node %d, dimension %d", v, i)
			require.InDelta(t, dy, b.y-a.y, 1e-9, "node %d, dimension %d", v, i)
		}
	}
}

// TestNormalizeDegenerate: points that span nothing (or NaN) go to the centre.
func TestNormalizeDegenerate(t *testing.T) {
	for _, c := range []struct{ lo, hi point }{{point{2, 3}, point{2, 3}}, {point{0, 0}, point{math.NaN(), 1}}, {point{0, 0}, point{math.Inf(1), 1}}} {
		pos := []point{{2, 3}, {2, 3}}
		normalize(pos, c.lo, c.hi)
		require.Equal(t, []point{{0.5, 0.5}, {0.5, 0.5}}, pos)
	}
	pos := []point{{0, 0}, {2, 1}}
	normalize(pos, point{0, 0}, point{2, 1})
	require.Equal(t, []point{{0, 0.25}, {1, 0.75}}, pos)
}

// TestCycleOrderNeedsOneCycle: two triangles are 2-regular but not a ring.
func TestCycleOrderNeedsOneCycle(t *testing.T) {
	g, err := tokendist.NewGraph(6, [][2]int{{0, 1}, {1, 2}, {0, 2}, {3, 4}, {4, 5}, {3, 5}})
	require.NoError(t, err)
	require.Nil(t, cycleOrder(g))
	ring, _ := tokendist.Ring(5)
	require.Equal(t, []int{0, 1, 2, 3, 4}, cycleOrder(ring))
}

// TestLayoutEdgeCases: an edgeless network is drawn force-directed, a 2-node path as
// a lattice; the hypercube projection needs 2^d nodes and d-regularity as well as
// one-bit links.
func TestLayoutEdgeCases(t *testing.T) {
	empty, err := tokendist.NewGraph(3, nil)
	require.NoError(t, err)
	path2, _ := tokendist.Path(2)
	for _, c := range []struct {
		g    *tokendist.Graph
		want Layout
	}{{empty, LayoutForce}, {path2, LayoutLattice}} {
		r, err := NewRecorder(c.g, nil, nil)
		require.NoError(t, err)
		require.Equal(t, c.want, r.m.Layout(), c.g.String())
	}
	matching, _ := tokendist.NewGraph(6, [][2]int{{0, 1}, {2, 3}, {4, 5}})
	bent, _ := tokendist.NewGraph(4, [][2]int{{0, 1}, {1, 3}, {3, 2}}) // one-bit links, not 2-regular
	for _, g := range []*tokendist.Graph{matching, bent} {
		_, err := NewRecorder(g, nil, &Options{Layout: LayoutHypercube})
		require.ErrorIs(t, err, tokendist.ErrBadParameter, g.String())
		_, err = NewRecorder(g, nil, &Options{Layout: LayoutLattice})
		require.NoError(t, err, "%s is a row-major grid's subgraph", g)
	}
}

// TestSceneScales pins the scales every format shares: load colours, arrow and ring
// widths, arrow ends, the curve's box, the node radius and the title's cut.
func TestSceneScales(t *testing.T) {
	m := treeMovie(t, &Options{Every: 5})
	s := newScene(m)
	require.Equal(t, int64(0), s.lo)
	require.Equal(t, int64(40), s.hi)
	require.Equal(t, 0, s.level(0))
	require.Equal(t, levels-1, s.level(40))
	require.Equal(t, int(math.Round(20*float64(levels-1)/40)), s.level(20))
	flat := &scene{lo: 3, hi: 3}
	require.Equal(t, levels/2, flat.level(3), "one load: the middle colour")

	require.Positive(t, s.maxFlow)
	wmax := max(2.5, min(2*s.r, 9))
	require.InDelta(t, wmax, s.width(s.maxFlow), 1e-9)
	require.InDelta(t, wmax, s.width(-s.maxFlow), 1e-9, "either direction")
	require.InDelta(t, 1.5+(wmax-1.5)/float64(s.maxFlow), s.width(1), 1e-9)
	require.InDelta(t, 1.5, (&scene{r: 5}).width(3), 1e-9, "no flows: the thinnest")
	require.Zero(t, s.ring(5), "tree frames have arrows, not rings")
	rs := &scene{maxDelta: 4}
	require.Zero(t, rs.ring(0))
	require.InDelta(t, 3, rs.ring(-4), 1e-9)
	require.InDelta(t, 1.5, rs.ring(1), 1e-9)

	// An arrow on a horizontal link of length 100 between nodes of radius 10: from
	// 11 past one end to 11 short of the other, the way the tokens went.
	a := &scene{r: 10}
	g := seg{0, 0, 100, 0, true, true}
	x0, y0, x1, y1, ok := a.arrow(g, 3)
	require.True(t, ok)
	require.Equal(t, [4]float64{11, 0, 89, 0}, [4]float64{x0, y0, x1, y1})
	x0, _, x1, _, ok = a.arrow(g, -3)
	require.True(t, ok)
	require.Equal(t, [2]float64{89, 11}, [2]float64{x0, x1})
	x0, _, x1, _, ok = a.arrow(seg{0, 0, 100, 0, false, true}, 3) // a stub: free start
	require.True(t, ok)
	require.Equal(t, [2]float64{0, 89}, [2]float64{x0, x1})
	_, _, _, _, ok = a.arrow(seg{0, 0, 0, 0, true, true}, 1)
	require.False(t, ok, "a zero-length link")
	x0, _, x1, _, ok = a.arrow(seg{0, 0, 20, 0, true, true}, 1) // short: gap 0.3 × 20
	require.True(t, ok)
	require.Equal(t, [2]float64{6, 14}, [2]float64{x0, x1})

	// The curve: first frame at the left top, last step at the right, zero at the bottom.
	fr := m.Frames()
	x, y := s.curveXY(float64(fr[0].Step), fr[0].Discrepancy)
	require.Equal(t, [2]float64{s.crv.x0, s.crv.y0}, [2]float64{x, y}, "the first discrepancy is the largest")
	x, y = s.curveXY(float64(fr[len(fr)-1].Step), 0)
	require.Equal(t, [2]float64{s.crv.x1, s.crv.y1}, [2]float64{x, y})

	// Radius: a third of the shortest link, within 1.5..12.
	short := math.Inf(1)
	for _, e := range m.Links() {
		short = min(short, math.Hypot(s.nx[e[0]]-s.nx[e[1]], s.ny[e[0]]-s.ny[e[1]]))
	}
	require.InDelta(t, max(1.5, min(12, short/3)), s.r, 1e-9)
	require.True(t, s.labels, "15 nodes: numbers drawn")

	require.Equal(t, "abc", s.shortTitle("abc"))
	long := strings.Repeat("x", 200)
	cut := s.shortTitle(long)
	require.Len(t, cut, (DefaultWidth-190)/8)
	require.True(t, strings.HasSuffix(cut, "..."))
	require.Equal(t, "a?b", asciiOnly("a→b"))

	xs := []float64{3, 1, 2, 5, 4}
	require.Equal(t, 3.0, median(xs))
	require.Equal(t, []float64{3, 1, 2, 5, 4}, xs, "median leaves its input alone")
	sortFloats(xs)
	require.Equal(t, []float64{1, 2, 3, 4, 5}, xs)
}
