package tokendist_test

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tokendist/tokendist"
	"go.uber.org/goleak"
)

func TestHardeningAbsurdSizes(t *testing.T) {
	defer goleak.VerifyNone(t)
	cube, _ := tokendist.Hypercube(3)
	cases := []struct {
		name string
		call func() error
	}{
		{"PointMass(1e12)", func() error { _, err := tokendist.PointMass(1e12, 1, 0); return err }},
		{"UniformRandom(1e12)", func() error { _, err := tokendist.UniformRandom(1e12, 1, 0); return err }},
		{"RandomRange(1e12)", func() error { _, err := tokendist.RandomRange(1e12, 0, 1, 0); return err }},
		{"PackedLoads(1e12)", func() error { _, err := tokendist.PackedLoads(1e12, []int{0}, 1, 1); return err }},
		{"RingWork(10, 1e12)", func() error { _, err := tokendist.RingWork(10, 1e12); return err }},
		{"RingWork(1<<20, 3)", func() error { _, err := tokendist.RingWork(1<<20, 3); return err }},
		{"RingGridWork(10, 1e12)", func() error { _, err := tokendist.RingGridWork(10, 1e12); return err }},
		{"RingTreeBounds(10, 1e12)", func() error { _, err := tokendist.RingTreeBounds(10, 1e12); return err }},
		{"CondensedIDGroups(30, 30, 1)", func() error { _, err := tokendist.CondensedIDGroups(30, 30, 1); return err }},
		{"AsGraph(order 1e12)", func() error {
			_, err := tokendist.AsGraph(advNet{1e12, func(int) []int32 { return nil }})
			return err
		}},
		{"Fringe(order 1e12)", func() error {
			_, err := tokendist.Fringe(advNet{1e12, func(int) []int32 { return nil }}, nil)
			return err
		}},
		{"LeightonTime(order MaxInt)", func() error {
			_, err := tokendist.LeightonTime(advNet{math.MaxInt, func(int) []int32 { return nil }}, 1)
			return err
		}},
		{"MultiBalance(typed nil groups)", func() error { _, err := tokendist.NewMultiBalance(cube, []tokendist.Loads{nil}, nil); return err }},
	}
	for _, c := range cases {
		err := c.call()
		if err == nil || !strings.HasPrefix(err.Error(), "tokendist: ") {
			t.Errorf("%s: error %v, want a tokendist error", c.name, err)
		}
	}
	// The refusals that are about memory name the size and wrap ErrTooLarge.
	_, err := tokendist.PointMass(1e12, 1, 0)
	require.True(t, errors.Is(err, tokendist.ErrTooLarge), "PointMass(1e12): %v, want ErrTooLarge naming the size", err)
	require.True(t, strings.Contains(err.Error(), "1000000000000"), "PointMass(1e12): %v, want ErrTooLarge naming the size", err)
}

// TestNetworkTooLargeForFamily: a network too large for its family is refused with an
// error that wraps ErrTooLarge, like the memory budget's refusals, and still
// ErrBadParameter (issue 36: Hypercube(40) wrapped only ErrBadParameter).
func TestNetworkTooLargeForFamily(t *testing.T) {
	for name, call := range map[string]func() error{
		"Hypercube(40)":       func() error { _, err := tokendist.Hypercube(40); return err },
		"Hypercube(27)":       func() error { _, err := tokendist.Hypercube(27); return err },
		"ShuffleExchange(30)": func() error { _, err := tokendist.ShuffleExchange(30); return err },
		"Path(2^31)":          func() error { _, err := tokendist.Path(1 << 31); return err },
	} {
		err := call()
		require.ErrorIs(t, err, tokendist.ErrTooLarge, name)
		require.ErrorIs(t, err, tokendist.ErrBadParameter, name)
		require.True(t, strings.HasPrefix(err.Error(), "tokendist: "), "%s: %v", name, err)
	}
	_, err := tokendist.Hypercube(-1)
	require.ErrorIs(t, err, tokendist.ErrBadParameter)
	require.NotErrorIs(t, err, tokendist.ErrTooLarge)
}
