package registry

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tokendist/tokendist"
)

// TestSpectrumCache checks that the registry computes λ_max once per distinct network:
// equal networks built twice share one entry, different ones get their own, the value
// equals a fresh LambdaMax, and the cache keeps at most maxCachedSpectra networks.
func TestSpectrumCache(t *testing.T) {
	r := New()
	a1, err := tokendist.Hypercube(6)
	require.NoError(t, err)
	a2, err := tokendist.Hypercube(6) // equal links, another value
	require.NoError(t, err)
	b, err := tokendist.Torus(8, 8) // 64 nodes too, other links
	require.NoError(t, err)

	var wg sync.WaitGroup
	got := make([]tokendist.Spectrum, 8)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			g := a1
			if i%2 == 1 {
				g = a2
			}
			got[i], _ = r.lambdaMax(g)
		}()
	}
	wg.Wait()
	want, err := tokendist.LambdaMax(a1, nil)
	require.NoError(t, err)
	for _, sp := range got {
		require.Equal(t, want, sp)
	}
	require.Len(t, r.spectra.m, 1)

	sb, err := r.lambdaMax(b)
	require.NoError(t, err)
	wb, err := tokendist.LambdaMax(b, nil)
	require.NoError(t, err)
	require.Equal(t, wb, sb)
	require.NotEqual(t, want.LambdaMax, sb.LambdaMax)
	require.Len(t, r.spectra.m, 2)

	for n := 3; n < 3+maxCachedSpectra; n++ {
		g, err := tokendist.Ring(n)
		require.NoError(t, err)
		_, err = r.lambdaMax(g)
		require.NoError(t, err)
	}
	require.Len(t, r.spectra.m, maxCachedSpectra)
	require.NotContains(t, r.spectra.m, cacheKey{fingerprint(a1), "lambda"}, "the oldest entry is dropped")

	_, err = r.lambdaMax(nil)
	require.Error(t, err)
}

// TestRunTauUsesCache checks that runs with Stop.Tau on one network, with different
// seeds and the lambda_max metric, add one spectrum to the cache.
func TestRunTauUsesCache(t *testing.T) {
	r := New()
	for seed := uint64(1); seed <= 3; seed++ {
		s := Spec{Network: Choice{Name: "hypercube", Params: Params{"d": 5}}, Loads: Choice{Name: "random-range", Params: Params{"hi": 20}},
			Algorithm: Choice{Name: "randomized-diffusion"}, Seed: seed, Stop: StopRule{Tau: true, NoStability: true}, Metrics: []string{"lambda_max"}}
		out, err := r.Run(t.Context(), s, nil)
		require.NoError(t, err)
		cf, err := tokendist.HypercubeSpectrum(5)
		require.NoError(t, err)
		require.InDelta(t, cf.LambdaMax, out.Metrics["lambda_max"], 1e-12)
	}
	require.Len(t, r.spectra.m, 1)
}

// TestPeripheralCache checks that the distance loads find the peripheral node once per
// network: runs of several seeds and algorithms on one network add one entry, with the
// node Peripheral returns.
func TestPeripheralCache(t *testing.T) {
	r := New()
	for _, alg := range []string{"randomized-diffusion", "fgs-deterministic"} {
		for seed := uint64(1); seed <= 3; seed++ {
			s := Spec{Network: Choice{Name: "torus", Params: Params{"sides": []any{5, 7}}}, Loads: Choice{Name: "distance"},
				Algorithm: Choice{Name: alg}, Seed: seed, Stop: StopRule{MaxSteps: 3}}
			_, err := r.Run(t.Context(), s, nil)
			require.NoError(t, err)
		}
	}
	require.Len(t, r.spectra.m, 1)
	g, err := tokendist.Torus(5, 7)
	require.NoError(t, err)
	want, err := tokendist.Peripheral(g)
	require.NoError(t, err)
	got, err := r.peripheral(g)
	require.NoError(t, err)
	require.Equal(t, want, got)
	require.Len(t, r.spectra.m, 1)
}
