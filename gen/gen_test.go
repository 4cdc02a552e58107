package gen

import (
	"errors"
	"math"
	"testing"

	"github.com/tokendist/tokendist"

	"github.com/stretchr/testify/require"
)

// meanSD returns the sample mean and standard deviation of xs.
func meanSD(xs []float64) (mean, sd float64) {
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	for _, x := range xs {
		sd += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(sd / float64(len(xs)-1))
}

// requireMeanNear checks that the mean of the samples is within z standard errors of
// want, the standard error taken from the samples themselves.
func requireMeanNear(t *testing.T, samples []float64, want, z float64, what string) {
	t.Helper()
	mean, sd := meanSD(samples)
	se := sd / math.Sqrt(float64(len(samples)))
	require.LessOrEqualf(t, math.Abs(mean-want), z*se+1e-12,
		"%s: mean %.4f over %d samples, want %.4f ± %.1f·%.4f", what, mean, len(samples), want, z, se)
}

func requireSimpleConnected(t *testing.T, g *tokendist.Graph, n int) {
	t.Helper()
	require.Equal(t, n, g.Order())
	require.True(t, g.Connected())
	for v := range n {
		nb := g.Neighbors(v)
		for i, w := range nb {
			require.NotEqual(t, int32(v), w, "loop at %d", v)
			if i > 0 {
				require.Less(t, nb[i-1], w, "neighbours of %d not strictly ascending", v)
			}
		}
	}
}

func TestErdosRenyiMatchesGnp(t *testing.T) {
	t.Parallel()
	const n, p, seeds = 200, 0.05, 200
	edges := make([]float64, 0, seeds)
	var degSum, degSq, nodes float64
	for seed := range uint64(seeds) {
		g, err := ErdosRenyi(n, p, seed)
		require.NoError(t, err)
		requireSimpleConnected(t, g, n)
		edges = append(edges, float64(g.Size()))
		for v := range n {
			d := float64(g.Degree(v))
			degSum += d
			degSq += d * d
			nodes++
		}
	}
	// Edge count: p·n(n-1)/2 (conditioning on connectivity, which fails about 1 % of
	// the time at this p, moves it by far less than the tolerance).
	requireMeanNear(t, edges, p*n*(n-1)/2, 4, "edges")
	// Degrees are Binomial(n-1, p): variance (n-1)p(1-p) = 9.455.
	mean := degSum / nodes
	variance := degSq/nodes - mean*mean
	require.InDelta(t, (n-1)*p*(1-p), variance, 0.5)

	g, err := ErdosRenyi(7, 1, 9)
	require.NoError(t, err)
	require.Equal(t, 21, g.Size(), "p = 1 gives the complete graph")
}

func TestBarabasiAlbertStructure(t *testing.T) {
	t.Parallel()
	for _, m := range []int{1, 2, 3, 5} {
		for _, n := range []int{m + 1, m + 2, 50, 300} {
			for seed := range uint64(10) {
				g, err := BarabasiAlbert(n, m, seed)
				require.NoError(t, err)
				requireSimpleConnected(t, g, n)
				require.Equal(t, m*(m+1)/2+(n-m-1)*m, g.Size())
				// Nodes 0..m form a clique; every later node has exactly m older
				// neighbours.
				for v := range n {
					older := 0
					for _, w := range g.Neighbors(v) {
						if int(w) < v {
							older++
						}
					}
					require.Equal(t, min(v, m), older, "n = %d, m = %d, seed %d, node %d", n, m, seed, v)
					require.GreaterOrEqual(t, g.Degree(v), m)
				}
			}
		}
	}
}

// The degree distribution tends to P(k) = 2m(m+1)/(k(k+1)(k+2)): 2/(m+2) of the nodes
// keep degree m, and 2m/((m+2)(m+3)) reach m+1. A uniform (not preferential) choice of
// targets would give the first fraction 1/(m+1) instead.
func TestBarabasiAlbertDegreeDistribution(t *testing.T) {
	const n, seeds = 4000, 10
	for _, m := range []int{2, 3} {
		var atM, atM1 []float64
		for seed := range uint64(seeds) {
			g, err := BarabasiAlbert(n, m, seed)
			require.NoError(t, err)
			a, b := 0, 0
			for v := range n {
				switch g.Degree(v) {
				case m:
					a++
				case m + 1:
					b++
				}
			}
			atM = append(atM, float64(a)/n)
			atM1 = append(atM1, float64(b)/n)
		}
		fm := float64(m)
		// Finite n shifts the fractions by O(1/n); 0.01 covers it and the sampling error.
		mean, _ := meanSD(atM)
		require.InDelta(t, 2/(fm+2), mean, 0.01, "m = %d, degree m", m)
		mean, _ = meanSD(atM1)
		require.InDelta(t, 2*fm/((fm+2)*(fm+3)), mean, 0.01, "m = %d, degree m+1", m)
	}
}

func TestWattsStrogatz(t *testing.T) {
	t.Parallel()
	// beta = 0 is the ring lattice; k = 2 is the ring.
	for _, n := range []int{3, 5, 10, 31} {
		for k := 2; k < n; k += 2 {
			g, err := WattsStrogatz(n, k, 0, 1)
			require.NoError(t, err)
			for v := range n {
				want := make([]int32, 0, k)
				for w := range n {
					if d := min((v-w+n)%n, (w-v+n)%n); d >= 1 && d <= k/2 {
						want = append(want, int32(w))
					}
				}
				require.Equal(t, want, g.Neighbors(v), "n = %d, k = %d, node %d", n, k, v)
			}
		}
	}
	// Exactly n·k/2 edges and minimum degree k/2 for every beta; the fraction of edges
	// longer than k/2 around the ring is beta·(1 − (k+1)/n) up to O(k/n): a rewired end
	// lands uniformly on the n−1−k non-neighbours or fewer.
	const n, k, seeds = 1000, 6, 20
	for _, beta := range []float64{0.05, 0.3, 1} {
		var long []float64
		for seed := range uint64(seeds) {
			g, err := WattsStrogatz(n, k, beta, seed)
			require.NoError(t, err)
			requireSimpleConnected(t, g, n)
			require.Equal(t, n*k/2, g.Size())
			far := 0
			for v := range n {
				require.GreaterOrEqual(t, g.Degree(v), k/2)
				for _, w := range g.Neighbors(v) {
					if d := min((v-int(w)+n)%n, (int(w)-v+n)%n); int(w) > v && d > k/2 {
						far++
					}
				}
			}
			long = append(long, float64(far)/float64(n*k/2))
		}
		mean, _ := meanSD(long)
		require.InDelta(t, beta*(1-float64(k+1)/n), mean, 0.015, "beta = %v", beta)
	}
}

// Edge count against its closed form n(n-1)/2 · (π r² − 8r³/3 + r⁴/2).
func TestRandomGeometricEdgeCount(t *testing.T) {
	t.Parallel()
	const n, seeds = 300, 60
	for _, radius := range []float64{0.12, 0.3} {
		var edges []float64
		for seed := range uint64(seeds) {
			g, err := RandomGeometric(n, radius, seed)
			require.NoError(t, err)
			requireSimpleConnected(t, g, n)
			edges = append(edges, float64(g.Size()))
		}
		r2 := radius * radius
		want := n * (n - 1) / 2 * (math.Pi*r2 - 8*r2*radius/3 + r2*r2/2)
		requireMeanNear(t, edges, want, 4, "RandomGeometric edges")
	}
}

func TestRandomFamiliesDeterministic(t *testing.T) {
	build := []func(seed uint64) (*tokendist.Graph, error){
		func(s uint64) (*tokendist.Graph, error) { return ErdosRenyi(100, 0.08, s) },
		func(s uint64) (*tokendist.Graph, error) { return BarabasiAlbert(100, 2, s) },
		func(s uint64) (*tokendist.Graph, error) { return WattsStrogatz(100, 4, 0.2, s) },
		func(s uint64) (*tokendist.Graph, error) { return RandomGeometric(100, 0.2, s) },
	}
	for i, f := range build {
		a, err := f(7)
		require.NoError(t, err)
		b, err := f(7)
		require.NoError(t, err)
		c, err := f(8)
		require.NoError(t, err)
		require.Equal(t, a, b, "family %d: same seed, same graph", i)
		require.NotEqual(t, a, c, "family %d: another seed, another graph", i)
	}
}

func TestRandomFamiliesReject(t *testing.T) {
	for _, tc := range []struct {
		name string
		f    func() (*tokendist.Graph, error)
		want error
		msg  string
	}{
		{"gnp n=0", func() (*tokendist.Graph, error) { return ErdosRenyi(0, 0.5, 1) }, tokendist.ErrBadParameter, "n = 0"},
		{"gnp p=0", func() (*tokendist.Graph, error) { return ErdosRenyi(10, 0, 1) }, tokendist.ErrBadParameter, "p = 0"},
		{"gnp p>1", func() (*tokendist.Graph, error) { return ErdosRenyi(10, 1.5, 1) }, tokendist.ErrBadParameter, "p = 1.5"},
		{"gnp NaN", func() (*tokendist.Graph, error) { return ErdosRenyi(10, math.NaN(), 1) }, tokendist.ErrBadParameter, "p = NaN"},
		{"gnp sparse", func() (*tokendist.Graph, error) { return ErdosRenyi(100000, 1e-6, 1) }, tokendist.ErrNotConnected, "connectivity threshold"},
		{"gnp 100 draws", func() (*tokendist.Graph, error) { return ErdosRenyi(50, 0.04, 1) }, tokendist.ErrNotConnected, "in 100 draws"},
		{"gnp huge", func() (*tokendist.Graph, error) { return ErdosRenyi(1<<30, 0.5, 1) }, tokendist.ErrBadParameter, "int32"},
		{"ba m=0", func() (*tokendist.Graph, error) { return BarabasiAlbert(10, 0, 1) }, tokendist.ErrBadParameter, "m = 0"},
		{"ba n=m", func() (*tokendist.Graph, error) { return BarabasiAlbert(3, 3, 1) }, tokendist.ErrBadParameter, "n = 3"},
		{"ba huge", func() (*tokendist.Graph, error) { return BarabasiAlbert(1<<30, 4, 1) }, tokendist.ErrBadParameter, "int32"},
		{"ws odd k", func() (*tokendist.Graph, error) { return WattsStrogatz(10, 3, 0.1, 1) }, tokendist.ErrBadParameter, "k = 3"},
		{"ws k=n", func() (*tokendist.Graph, error) { return WattsStrogatz(10, 10, 0.1, 1) }, tokendist.ErrBadParameter, "k = 10"},
		{"ws beta", func() (*tokendist.Graph, error) { return WattsStrogatz(10, 4, -0.1, 1) }, tokendist.ErrBadParameter, "beta = -0.1"},
		{"rgg radius", func() (*tokendist.Graph, error) { return RandomGeometric(10, 0, 1) }, tokendist.ErrBadParameter, "radius = 0"},
		{"rgg radius big", func() (*tokendist.Graph, error) { return RandomGeometric(10, 2, 1) }, tokendist.ErrBadParameter, "radius = 2"},
		{"rgg sparse", func() (*tokendist.Graph, error) { return RandomGeometric(10000, 0.001, 1) }, tokendist.ErrNotConnected, "connectivity threshold"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, err := tc.f()
			require.Nil(t, g)
			require.Error(t, err)
			require.True(t, errors.Is(err, tc.want), "%v", err)
			require.Contains(t, err.Error(), tc.msg)
			require.Regexp(t, "^tokendist: ", err.Error())
		})
	}
}
