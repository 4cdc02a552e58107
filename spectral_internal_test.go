package tokendist

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tokendist/tokendist/internal/par"
)

// TestLanczosKernelsAgree runs 40 Lanczos steps on 4-regular networks with each pass-A
// kernel (stencil runs, 4-regular adjacency, general adjacency) and with 1 and 2
// workers, and requires every α, β and both vectors to agree bit for bit.
func TestLanczosKernelsAgree(t *testing.T) {
	par.Acquire()
	defer par.Release()
	for _, sides := range [][]int{{120, 120}, {333, 77}, {1001, 13}, {4099, 5}, {3000, 3}} {
		g, err := Torus(sides...)
		require.NoError(t, err)
		ln, err := newLazyNet(g)
		require.NoError(t, err)
		type variant struct {
			name    string
			set     func(l *lanczos)
			workers int
		}
		vs := []variant{
			{"runs", func(l *lanczos) {}, 1},
			{"runs/2 workers", func(l *lanczos) {}, 2},
			{"adjacency4", func(l *lanczos) { l.runs = nil }, 2},
			{"general", func(l *lanczos) { l.runs, l.regular = nil, false }, 1},
		}
		var ref *lanczos
		var refAB []float64
		for _, v := range vs {
			l := newLanczos(ln, 7)
			if v.name == "runs" {
				require.NotNil(t, l.runs, "%v: no stencil runs", sides)
			}
			v.set(l)
			l.workers = v.workers
			var ab []float64
			for k := 0; k < 40; k++ {
				a, b := l.step()
				ab = append(ab, a, b)
			}
			if ref == nil {
				ref, refAB = l, ab
				continue
			}
			for i := range ab {
				require.Equal(t, math.Float64bits(refAB[i]), math.Float64bits(ab[i]), "%v %s: coefficient %d", sides, v.name, i)
			}
			for i := range l.a {
				require.Equal(t, math.Float64bits(ref.a[i]), math.Float64bits(l.a[i]), "%v %s: a[%d]", sides, v.name, i)
				require.Equal(t, math.Float64bits(ref.b[i]), math.Float64bits(l.b[i]), "%v %s: b[%d]", sides, v.name, i)
			}
		}
	}
}
