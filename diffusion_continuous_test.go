package tokendist_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tokendist/tokendist"
)

// TestCompareMatchesRun checks that Compare runs exactly what Run runs, chains the
// caller's recorder, and samples as asked.
func TestCompareMatchesRun(t *testing.T) {
	g := must(tokendist.Torus(6, 7))
	start := must(tokendist.RandomRange(g.Order(), 0, 60, 2))
	calls := 0
	rec := tokendist.RecorderFunc(func(*tokendist.State, tokendist.Sample) error { calls++; return nil })
	opts := &tokendist.RunOptions{MaxSteps: 40, Seed: 9, SampleEvery: 5, Recorder: rec}
	res, devs, err := runDeviation(context.Background(), g, start, must(tokendist.NewRandomizedDiffusion(g)), opts)
	require.NoError(t, err)
	want := must(tokendist.Run(context.Background(), g, start, must(tokendist.NewRandomizedDiffusion(g)), &tokendist.RunOptions{MaxSteps: 40, Seed: 9, SampleEvery: 5}))
	require.Equal(t, want, res)
	require.Len(t, devs, 9)
	require.Equal(t, 9, calls)
	for i, dv := range devs {
		require.Equal(t, int64(5*i), dv.Step)
		require.Equal(t, res.Trace[i].Discrepancy, dv.Discrepancy)
	}
	// The continuous discrepancy decreases, and a recorder reused for a second run
	// restarts.
	dev := must(tokendist.NewDeviation(g, start))
	for run := 0; run < 2; run++ {
		_, err := tokendist.Run(context.Background(), g, start, must(tokendist.NewRSWDiffusion(g)), &tokendist.RunOptions{MaxSteps: 30, SampleEvery: 1, Recorder: dev})
		require.NoError(t, err)
		require.Len(t, dev.Samples(), 31)
		require.Equal(t, int64(30), dev.Continuous().Steps())
	}
	for i := 1; i < len(dev.Samples()); i++ {
		require.LessOrEqual(t, dev.Samples()[i].Continuous, dev.Samples()[i-1].Continuous+1e-9)
	}
}

// runDeviation runs b with Run and a Deviation recorder from the same loads, sampling
// every round unless opts says otherwise and chaining opts.Recorder after the
// deviation's, and returns Run's result with the deviation samples.
func runDeviation(ctx context.Context, net tokendist.Network, loads tokendist.Loads, b tokendist.Balancer, opts *tokendist.RunOptions) (tokendist.Result, []tokendist.DeviationSample, error) {
	var o tokendist.RunOptions
	if opts != nil {
		o = *opts
	}
	dev, err := tokendist.NewDeviation(net, loads)
	if err != nil {
		return tokendist.Result{Status: tokendist.StatusFailed}, nil, err
	}
	dev.Next, o.Recorder = o.Recorder, dev
	if o.SampleEvery == 0 {
		o.SampleEvery = 1
	}
	res, err := tokendist.Run(ctx, net, loads, b, &o)
	return res, dev.Samples(), err
}
