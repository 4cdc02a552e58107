package animate

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tokendist/tokendist"
)

// movie1000 records 500 steps of randomized diffusion (node changes) or THRESHOLD-2
// (matching flows) on a 25 × 40 torus of 1000 nodes: 501 frames.
func movie1000(tb testing.TB, matching bool) *Movie {
	tor, err := tokendist.Torus(25, 40)
	require.NoError(tb, err)
	l, err := tokendist.UniformRandom(1000, 20000, 7)
	require.NoError(tb, err)
	var b tokendist.Balancer
	if matching {
		ec, err := tokendist.TorusColoring(25, 40)
		require.NoError(tb, err)
		b, err = tokendist.NewThreshold2(tor, ec)
		require.NoError(tb, err)
	} else {
		b, err = tokendist.NewRandomizedDiffusion(tor)
		require.NoError(tb, err)
	}
	m, err := Record(context.Background(), tor, l, b, &Options{Run: tokendist.RunOptions{MaxSteps: 500, NoStability: true}})
	require.NoError(tb, err)
	require.Len(tb, m.Frames(), 501)
	return m
}

// TestRender1000Nodes500Steps records and writes, as GIF and HTML, a 1000-node,
// 500-step animation within a generous bound (docs/performance.md has the figures).
func TestRender1000Nodes500Steps(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the 1000-node, 500-step render")
	}
	for _, matching := range []bool{false, true} {
		start := time.Now()
		m := movie1000(t, matching)
		rec := time.Since(start)
		start = time.Now()
		cw := &countWriter{}
		require.NoError(t, m.WriteGIF(cw))
		gifTime, gifBytes := time.Since(start), cw.n
		start = time.Now()
		cw = &countWriter{}
		require.NoError(t, m.WriteHTML(cw))
		htmlTime := time.Since(start)
		t.Logf("matching=%v: record %v, GIF %v (%d bytes), HTML %v (%d bytes)", matching, rec, gifTime, gifBytes, htmlTime, cw.n)
		require.Less(t, rec+gifTime+htmlTime, 2*time.Minute)
	}
}

type countWriter struct{ n int64 }

func (c *countWriter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

func BenchmarkGIF1000Nodes500Steps(b *testing.B) {
	m := movie1000(b, false)
	b.ResetTimer()
	for range b.N {
		if err := m.WriteGIF(io.Discard); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkHTML1000Nodes500Steps(b *testing.B) {
	m := movie1000(b, false)
	b.ResetTimer()
	for range b.N {
		if err := m.WriteHTML(io.Discard); err != nil {
			b.Fatal(err)
		}
	}
}
