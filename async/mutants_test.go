package async

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/tokendist/tokendist"
	"github.com/tokendist/tokendist/handoff"
	"github.com/tokendist/tokendist/node"
)

// Tests written against the mutants gremlins left alive in package async
// (docs/mutation.md, "Issue 36: async and the node programs").

// aheadNode is a correct node whose in-memory load, as the simulator reads it, is one
// token above the load it persists: only a full check can see it.
type aheadNode struct{ counter }

func (n aheadNode) NodeContext() *node.Context {
	c := *n.counter.NodeContext()
	c.Load++
	return &c
}

// TestFinalFullCheck: a run that ends with StatusDone is checked in full at the end,
// whatever CheckEvery says: a node whose memory is ahead of its storage fails the run
// with a *ConservationError naming it, even when no periodic full check ran.
func TestFinalFullCheck(t *testing.T) {
	g, err := tokendist.Ring(6)
	if err != nil {
		t.Fatal(err)
	}
	loads := randomLoads(6, 4, 50)
	opts := &Options{Rounds: 3, CheckEvery: math.MaxInt64}
	res, err := simulate(context.Background(), g, pairPrograms{6}, loads, opts, func(s *sim, v int, m *handoff.CountMachine) nodeMachine {
		if v == 3 {
			return aheadNode{counter{m}}
		}
		return counter{m}
	})
	var ce *ConservationError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "node 3: persisted load") || res.Status != tokendist.StatusFailed {
		t.Fatalf("memory ahead of storage at the end: %v, %v; want a *ConservationError naming node 3", res.Status, err)
	}
	if res.Events == 0 || res.Events >= opts.CheckEvery {
		t.Fatalf("%d events", res.Events)
	}
}
