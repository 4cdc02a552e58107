package tokendist_test

import (
	"testing"

	"github.com/tokendist/tokendist"
	"github.com/tokendist/tokendist/tokendisttest"
)

func TestContractMultiBalance(t *testing.T) {
	sums := func(n int, _ uint64) (tokendist.Loads, error) {
		total := make(tokendist.Loads, n)
		for _, grp := range multiGroups(n) {
			for v, x := range grp {
				total[v] += x
			}
		}
		return total, nil
	}
	names := []string{"NewMultiBalance", "NewMultiBalance/Ascending", "NewMultiBalance/MinError"}
	for i, o := range []tokendist.MultiOptions{{}, {Ascending: true}, {MinError: true}} {
		tokendisttest.Check(t, tokendisttest.Case{
			Name:  names[i],
			Loads: sums,
			New: func(g *tokendist.Graph) (tokendist.Balancer, error) {
				return tokendist.NewMultiBalance(g, multiGroups(g.Order()), &o)
			},
		})
	}
}
