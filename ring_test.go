package tokendist_test

import (
	"testing"

	"github.com/tokendist/tokendist"
	"github.com/tokendist/tokendist/tokendisttest"
)

// ringCase returns a contract case for a ring policy: the balancer applies to the rings
// among the contract's networks (Ring(7), Ring(8) and Path(1) = R_1) and rejects the
// others with ErrBadParameter.
func ringCase(name string, policy tokendist.RingPolicy, grid bool) tokendisttest.Case {
	return tokendisttest.Case{
		Name: name,
		New: func(g *tokendist.Graph) (tokendist.Balancer, error) {
			var b *tokendist.RingScheduler
			var err error
			if grid {
				dag, _ := tokendist.PyramidGrid(9)
				b, err = tokendist.NewRingGrid(g.Order(), dag, &tokendist.RingOptions{Policy: policy})
			} else {
				dag, _ := tokendist.RandomTreeDag(0.8, 8, 3)
				b, err = tokendist.NewRingTree(g.Order(), dag, &tokendist.RingOptions{Policy: policy})
			}
			if err != nil {
				return nil, err
			}
			loads, _ := tokendist.PointMass(g.Order(), 1, 0)
			// Init checks that the network is the ring R_p.
			if err := b.Init(&tokendist.State{Net: g, Loads: loads}); err != nil {
				return nil, err
			}
			return b, nil
		},
		Loads:    func(n int, _ uint64) (tokendist.Loads, error) { return tokendist.PointMass(n, 1, 0) },
		Networks: ringNetworks(),
	}
}

// ringNetworks adds the small rings R_2 (one edge) and R_3 to the contract's networks.
func ringNetworks() []tokendisttest.Network {
	nets := tokendisttest.Networks()
	for _, p := range []int{2, 3} {
		g, err := tokendist.Ring(p)
		if err != nil {
			panic(err)
		}
		nets = append(nets, tokendisttest.Network{Name: g.String(), Graph: g})
	}
	return nets
}

func TestContractRing(t *testing.T) {
	tokendisttest.Check(t, ringCase("ring-ksbf-tree", tokendist.RingPolicyKSBF, false))
	tokendisttest.Check(t, ringCase("ring-ksbf-grid", tokendist.RingPolicyKSBF, true))
	tokendisttest.Check(t, ringCase("ring-random-tree", tokendist.RingPolicyRandom, false))
	tokendisttest.Check(t, ringCase("ring-lessloaded-grid", tokendist.RingPolicyLessLoaded, true))
}
