package plot_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tokendist/tokendist"
)

// fndMust returns g or panics: the test networks are valid by construction.
func fndMust(g *tokendist.Graph, err error) *tokendist.Graph {
	if err != nil {
		panic(err)
	}
	return g
}

// fndNeighbourExchange balances the pairs (u, u+1) of a ring, alternating between even
// and odd u: a small deterministic balancer that gives the plots a real trace.
type fndNeighbourExchange struct{}

func (fndNeighbourExchange) String() string { return "neighbour-exchange" }

func (fndNeighbourExchange) Step(s *tokendist.State) error {
	l := s.Loads
	n := len(l)
	for u := int(s.Steps % 2); u+1 < n; u += 2 {
		switch d := l[u] - l[u+1]; {
		case d >= 2:
			l[u]--
			l[u+1]++
			s.Moved++
		case d <= -2:
			l[u]++
			l[u+1]--
			s.Moved++
		}
	}
	s.Time++
	return nil
}

// fndCheckErr checks that err has the module's prefix, wraps is, and names every word.
func fndCheckErr(t testing.TB, err, is error, words ...string) {
	t.Helper()
	require.Error(t, err)
	require.True(t, strings.HasPrefix(err.Error(), "tokendist: "), "error %q lacks the prefix", err)
	if is != nil {
		require.True(t, errors.Is(err, is), "error %q is not %q", err, is)
	}
	for _, w := range words {
		require.Contains(t, err.Error(), w)
	}
}

// Period makes Run stop once the loads repeat two steps apart (tokendist.Periodic).
func (fndNeighbourExchange) Period(*tokendist.State) int64 { return 2 }
