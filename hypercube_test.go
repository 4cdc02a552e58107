package tokendist_test

import (
	"context"
	"errors"
	"math"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tokendist/tokendist"
	"github.com/tokendist/tokendist/tokendisttest"
)

func TestContractCubeBalancers(t *testing.T) {
	cases := []struct {
		name string
		new  func(g *tokendist.Graph) (tokendist.Balancer, error)
	}{
		{"NewDimensionOrderBalance", func(g *tokendist.Graph) (tokendist.Balancer, error) {
			return tokendist.NewDimensionOrderBalance(g, nil)
		}},
		{"NewDimensionOrderBalance/MinError", func(g *tokendist.Graph) (tokendist.Balancer, error) {
			return tokendist.NewDimensionOrderBalance(g, &tokendist.CubeOptions{MinError: true})
		}},
		{"NewHypercubeBalance", func(g *tokendist.Graph) (tokendist.Balancer, error) {
			return tokendist.NewHypercubeBalance(g, nil)
		}},
		{"NewHypercubeBalance/MinError", func(g *tokendist.Graph) (tokendist.Balancer, error) {
			return tokendist.NewHypercubeBalance(g, &tokendist.CubeOptions{MinError: true})
		}},
		{"NewLeightonBalance", func(g *tokendist.Graph) (tokendist.Balancer, error) {
			return tokendist.NewLeightonBalance(g)
		}},
	}
	for _, c := range cases {
		tokendisttest.Check(t, tokendisttest.Case{Name: c.name, New: c.new})
	}
}

// multiGroups are fixed group loads for a network of n nodes, so that the contract's
// loads (their sums) match the balancer whatever the seed.
func multiGroups(n int) []tokendist.Loads {
	groups := make([]tokendist.Loads, 3)
	for j := range groups {
		groups[j], _ = tokendist.RandomRange(n, 0, 12, uint64(40+j))
	}
	return groups
}

// notCube is a Network that is not a *Graph: a 4-cycle labelled 0-1-2-3.
type notCube struct{}

func (notCube) Order() int { return 4 }
func (notCube) Neighbors(v int) []int32 {
	return [][]int32{{1, 3}, {0, 2}, {1, 3}, {0, 2}}[v]
}

// TestCubeBadInput covers the rejected inputs of the constructors, Init and the bound
// functions: every error starts with "tokendist: " and wraps the right sentinel.
func TestCubeBadInput(t *testing.T) {
	h3, _ := tokendist.Hypercube(3)
	h4, _ := tokendist.Hypercube(4)
	se3, _ := tokendist.ShuffleExchange(3)
	ring6, _ := tokendist.Ring(6)
	ring8, _ := tokendist.Ring(8)
	ok3 := []tokendist.Loads{make(tokendist.Loads, 8)}
	neg := []tokendist.Loads{{0, 0, -1, 0, 0, 0, 0, 0}}
	huge := []tokendist.Loads{{1 << 62, 0, 0, 0, 0, 0, 0, 0}, {1 << 62, 0, 0, 0, 0, 0, 0, 0}}
	cases := []struct {
		name string
		err  error
		sent error
	}{
		{"nil network", second(tokendist.NewDimensionOrderBalance(nil, nil)), tokendist.ErrNilNetwork},
		{"order not a power of two", second(tokendist.NewDimensionOrderBalance(ring6, nil)), tokendist.ErrBadParameter},
		{"Ring(8) is not a cube", second(tokendist.NewHypercubeBalance(ring8, nil)), tokendist.ErrBadParameter},
		{"relabelled cycle", second(tokendist.NewLeightonBalance(notCube{})), tokendist.ErrBadParameter},
		{"recursion on the shuffle-exchange", second(tokendist.NewHypercubeBalance(se3, nil)), tokendist.ErrBadParameter},
		{"g < 1", second(tokendist.NewMultiBalance(h3, nil, nil)), tokendist.ErrBadParameter},
		{"group of the wrong length", second(tokendist.NewMultiBalance(h3, []tokendist.Loads{make(tokendist.Loads, 7)}, nil)), tokendist.ErrBadLoads},
		{"negative group count", second(tokendist.NewMultiBalance(h3, neg, nil)), tokendist.ErrBadLoads},
		{"groups overflow", second(tokendist.NewMultiBalance(h3, huge, nil)), tokendist.ErrBadLoads},
		{"NewMultiBalance on a ring", second(tokendist.NewMultiBalance(ring8, ok3, nil)), tokendist.ErrBadParameter},
		{"Init on another network", runErr(t, h3, h4, make(tokendist.Loads, 16)), tokendist.ErrBadParameter},
		{"Init with loads not the group sums", runMultiErr(h3, ok3, tokendist.Loads{1, 0, 0, 0, 0, 0, 0, 0}), tokendist.ErrBadLoads},
		{"HammingBall x too large", second(tokendist.HammingBall(3, 9, 0)), tokendist.ErrBadParameter},
		{"HammingBall bad centre", second(tokendist.HammingBall(3, 2, 8)), tokendist.ErrBadParameter},
		{"HammingBall d > 30", second(tokendist.HammingBall(31, 2, 0)), tokendist.ErrBadParameter},
		{"HammingBallSize r < 0", second(tokendist.HammingBallSize(4, -1)), tokendist.ErrBadParameter},
		{"HammingBallShape x = 0", third(tokendist.HammingBallShape(4, 0)), tokendist.ErrBadParameter},
		{"HypercubeFringe x > p", second(tokendist.HypercubeFringe(3, 9)), tokendist.ErrBadParameter},
		{"Fringe node outside", second(tokendist.Fringe(h3, []int{8})), tokendist.ErrBadParameter},
		{"MinFringe too large", third(tokendist.MinFringe(ring8, 9)), tokendist.ErrBadParameter},
		{"BalanceLowerBound m < n/p", second(tokendist.BalanceLowerBound(3, 80, 9, 0)), tokendist.ErrBadParameter},
		{"BalanceLowerBound error below minimum", second(tokendist.BalanceLowerBound(3, 81, 81, 0)), tokendist.ErrBadParameter},
		{"HammingBallLoads too many tokens", second(tokendist.HammingBallLoads(3, 17, 2, 0)), tokendist.ErrBadParameter},
		{"PackedLoads repeated node", second(tokendist.PackedLoads(8, []int{1, 1}, 4, 2)), tokendist.ErrBadParameter},
		{"DimensionDiscrepancies length", second(tokendist.DimensionDiscrepancies(make(tokendist.Loads, 6))), tokendist.ErrBadLoads},
		{"DimensionDiscrepancies negative", second(tokendist.DimensionDiscrepancies(neg[0])), tokendist.ErrBadLoads},
		{"MultiDiscrepancies ragged", second(tokendist.MultiDiscrepancies([]tokendist.Loads{make(tokendist.Loads, 8), make(tokendist.Loads, 4)})), tokendist.ErrBadLoads},
		{"MultiBalanceLowerBound g = 0", second(tokendist.MultiBalanceLowerBound(nil, 1)), tokendist.ErrBadParameter},
		{"MultiBalanceLowerBound negative", second(tokendist.MultiBalanceLowerBound(ok3, -1)), tokendist.ErrBadParameter},
		{"CondensedIDGroups r > d", second(tokendist.CondensedIDGroups(3, 4, 1)), tokendist.ErrBadParameter},
		{"ShuffleExchangeLowerBound d = 1", third(tokendist.ShuffleExchangeLowerBound(1, 4, 2, 0)), tokendist.ErrBadParameter},
		{"DimensionOrderTimeBound m < 0", second(tokendist.DimensionOrderTimeBound(h3, -1)), tokendist.ErrBadParameter},
		{"LeightonTime on a ring", second(tokendist.LeightonTime(ring8, 3)), tokendist.ErrBadParameter},
		{"DimensionOrderWorstLoads m < 0", second(tokendist.DimensionOrderWorstLoads(4, -1)), tokendist.ErrBadParameter},
		{"HypercubeBalanceTimeBound d < 0", second(tokendist.HypercubeBalanceTimeBound(-1, 3)), tokendist.ErrBadParameter},
		{"MinimumError p = 0", second(tokendist.MinimumError(3, 0)), tokendist.ErrBadParameter},
		{"MinimumError p < 0", second(tokendist.MinimumError(3, -2)), tokendist.ErrBadParameter},
		{"MinimumError n < 0", second(tokendist.MinimumError(-1, 4)), tokendist.ErrBadParameter},
		{"Shuffle d = 0", second(tokendist.Shuffle(0, 0)), tokendist.ErrBadParameter},
		{"Shuffle d = 63", second(tokendist.Shuffle(0, 63)), tokendist.ErrBadParameter},
		{"Shuffle i < 0", second(tokendist.Shuffle(-1, 4)), tokendist.ErrBadParameter},
		{"Shuffle i = 2^d", second(tokendist.Shuffle(16, 4)), tokendist.ErrBadParameter},
		{"Unshuffle d < 0", second(tokendist.Unshuffle(1, -1)), tokendist.ErrBadParameter},
		{"Unshuffle i = 2^d", second(tokendist.Unshuffle(8, 3)), tokendist.ErrBadParameter},
		{"PairTime MaxInt64, MinInt64", second(tokendist.PairTime(math.MaxInt64, math.MinInt64)), tokendist.ErrOverflow},
		{"PairTime MinInt64, MaxInt64", second(tokendist.PairTime(math.MinInt64, math.MaxInt64)), tokendist.ErrOverflow},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			require.Error(t, c.err)
			require.ErrorIs(t, c.err, c.sent)
			require.Regexp(t, "^tokendist: ", c.err.Error())
		})
	}
}

func third[T, U any](_ T, _ U, err error) error { return err }

func runErr(t *testing.T, built, run *tokendist.Graph, loads tokendist.Loads) error {
	b, err := tokendist.NewDimensionOrderBalance(built, nil)
	require.NoError(t, err)
	_, err = tokendist.Run(context.Background(), run, loads, b, nil)
	return err
}

func runMultiErr(g *tokendist.Graph, groups []tokendist.Loads, loads tokendist.Loads) error {
	b, err := tokendist.NewMultiBalance(g, groups, nil)
	if err != nil {
		return errors.Join(errors.New("constructor failed"), err)
	}
	_, err = tokendist.Run(context.Background(), g, loads, b, nil)
	return err
}
