package tokendist

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// ptTestNode returns a node program of degree deg holding tokens.
func ptTestNode(deg int, tokens int64, literal bool) *ptNode {
	nd := &ptNode{}
	nd.init(tokens, make([]int64, deg), make([]int64, deg), make([]ptQueue, deg), make([]int32, deg), literal)
	return nd
}

// ptStuck puts every node of a path in state S1.3 waiting for a global message that
// never comes.
func ptStuck(nodes []ptNode) {
	for v := range nodes {
		nd := &nodes[v]
		nd.s, nd.r, nd.parent, nd.pc = 1, nd.deg-1, 1, ptPcP1
		for i := range nd.subN {
			nd.subN[i] = 1
		}
		nd.subN[0] = 0
	}
}

func TestPTDeadlockDetected(t *testing.T) {
	g, _ := Path(5)
	loads := Loads{1, 2, 3, 4, 5}

	var sm ptSim
	s := &State{Net: g, Loads: loads.Clone()}
	o := &PerfectTreeOptions{Delays: ptUnitDelays{}}
	// Initialise, then replay time 0 with stuck programs.
	require.NoError(t, sm.init(g, s, o))
	ptStuck(sm.nodes)
	sm.heap, sm.finished, sm.err = sm.heap[:0], 0, nil
	for v := 0; v < sm.n; v++ {
		sm.enqueue(int32(v))
	}
	sm.runReady()
	require.ErrorIs(t, sm.check(), ErrDeadlock)

	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	c := newPTConc(context.Background(), g, loads, &PerfectTreeOptions{}, 0)
	ptStuck(c.nodes)
	c.wg.Add(c.n)
	for v := 0; v < c.n; v++ {
		go c.runNode(v)
	}
	c.wg.Wait()
	require.ErrorIs(t, context.Cause(c.ctx), ErrDeadlock)
}
