package tokendist_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tokendist/tokendist"
)

// The observer tour and the c-orderings agree with observers walked step by step, for
// every small tree, every colouring of a family, every colour and every node; the tour
// satisfies Observation 4, equation (3), and Lemma 9 holds with the exact gap.
func TestObserverTourMatchesSimulation(t *testing.T) {
	for _, g := range msdAllTrees(t, 8) {
		for _, ec := range msdColorings(t, g) {
			msdCheckTour(t, g, ec)
		}
	}
	for seed := uint64(0); seed < 30; seed++ {
		g, err := tokendist.RandomTree(int(9+seed*3), seed)
		require.NoError(t, err)
		for _, ec := range []*tokendist.EdgeColoring{msdBFSColoring(t, g), msdRandomColoring(t, g, 2, seed)} {
			msdCheckTour(t, g, ec)
		}
	}
}
