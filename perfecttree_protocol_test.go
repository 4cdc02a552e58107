package tokendist

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestPTQueueRuns(t *testing.T) {
	var q ptQueue
	require.True(t, q.push(ptMsg{kind: ptMsgInfo, t: 7, n: 3}))
	for i := 0; i < 1000; i++ {
		require.True(t, q.push(ptMsg{kind: ptMsgToken}))
	}
	require.True(t, q.push(ptMsg{kind: ptMsgToken3}))
	require.True(t, q.push(ptMsg{kind: ptMsgFinished}))
	require.Equal(t, int64(1001), q.tokens())
	require.False(t, q.push(ptMsg{kind: ptMsgToken}), "a fifth run breaks the protocol's shape")
	require.Equal(t, ptMsg{kind: ptMsgInfo, t: 7, n: 3}, q.pop())
	for i := 0; i < 1000; i++ {
		require.Equal(t, ptMsgToken, q.pop().kind)
	}
	require.Equal(t, ptMsgToken3, q.pop().kind)
	require.True(t, q.push(ptMsg{kind: ptMsgToken}), "room again once runs are consumed")
	require.Equal(t, ptMsgFinished, q.pop().kind)
	require.Equal(t, ptMsgToken, q.pop().kind)
	require.Zero(t, q.runs)
}

// TestPTNodeProgram walks a leaf through the three phases by hand: the program asks
// for exactly the paper's primitives, in order.
func TestPTNodeProgram(t *testing.T) {
	nd := ptTestNode(1, 5, false)
	// S1.2: a leaf reserves its only channel, finds no message, sends its (T, N).
	require.Equal(t, ptAction{op: ptOpReserve, port: 1}, nd.resume(false))
	require.Equal(t, ptAction{op: ptOpSend, port: 1, msg: ptMsg{kind: ptMsgInfo, t: 5, n: 1}}, nd.resume(true))
	require.Equal(t, ptAction{op: ptOpRelease, port: 1}, nd.resume(false))
	// S1.3: it waits for the global message.
	require.Equal(t, ptAction{op: ptOpWaitPort, port: 1}, nd.resume(false))
	require.True(t, nd.in.deliver(1, ptMsg{kind: ptMsgInfo, t: 9, n: 3})) // T = 9, N = 3: Avg = 3
	require.Equal(t, ptAction{op: ptOpPhase, port: 1}, nd.resume(false))
	require.Equal(t, int64(4), nd.subT[0])
	require.Equal(t, int64(2), nd.subN[0])
	// Phase 2, S2.4: balanced with 5 > Avg tokens: two safeSends of a token to the parent.
	for k := 0; k < 2; k++ {
		require.Equal(t, ptAction{op: ptOpReserve, port: 1}, nd.resume(false))
		require.Equal(t, ptAction{op: ptOpWaitFree, port: 1}, nd.resume(false), "busy: wait")
		require.Equal(t, ptAction{op: ptOpReserve, port: 1}, nd.resume(false))
		require.Equal(t, ptAction{op: ptOpSend, port: 1, msg: ptMsg{kind: ptMsgToken}}, nd.resume(true))
		require.Equal(t, ptAction{op: ptOpRelease, port: 1}, nd.resume(false))
	}
	require.Equal(t, ptAction{op: ptOpPhase, port: 2}, nd.resume(false))
	// Phase 3, S3.2: a token, then Finished.
	require.Equal(t, ptAction{op: ptOpWaitPort, port: 1}, nd.resume(false))
	require.True(t, nd.in.deliver(1, ptMsg{kind: ptMsgToken3}))
	require.True(t, nd.in.deliver(1, ptMsg{kind: ptMsgFinished}))
	require.Equal(t, ptAction{op: ptOpPhase, port: 3}, nd.resume(false))
	require.Equal(t, int64(4), nd.tv)
	require.Equal(t, ptAction{op: ptOpDone}, nd.resume(false))
}

// TestPTNodeEarlyPhase3 checks the erratum fix at node level: phase-3 messages that
// reach a node in phase 2 are set aside and used when its phase 3 starts.
func TestPTNodeEarlyPhase3(t *testing.T) {
	nd := ptTestNode(2, 0, false) // a path's middle node: channel 1 parent, channel 2 child
	require.True(t, nd.in.deliver(2, ptMsg{kind: ptMsgInfo, t: 2, n: 1}))
	require.Equal(t, ptAction{op: ptOpReserve, port: 1}, nd.resume(false))
	require.Equal(t, ptOpSend, nd.resume(true).op)
	require.Equal(t, ptOpRelease, nd.resume(false).op)
	require.Equal(t, ptAction{op: ptOpWaitPort, port: 1}, nd.resume(false))
	require.True(t, nd.in.deliver(1, ptMsg{kind: ptMsgInfo, t: 6, n: 4})) // Avg = 1
	// S1.5: forward the global values to the child.
	require.Equal(t, ptAction{op: ptOpReserve, port: 2}, nd.resume(false))
	require.Equal(t, ptAction{op: ptOpSend, port: 2, msg: ptMsg{kind: ptMsgInfo, t: 6, n: 4}}, nd.resume(true))
	require.Equal(t, ptOpRelease, nd.resume(false).op)
	require.Equal(t, ptAction{op: ptOpPhase, port: 1}, nd.resume(false))
	// S2.1: 0 tokens, the child's subtree holds 2 > Avg. A phase-3 token and Finished
	// from the parent arrive first: they are set aside, the node keeps waiting.
	require.True(t, nd.in.deliver(1, ptMsg{kind: ptMsgToken3}))
	require.True(t, nd.in.deliver(1, ptMsg{kind: ptMsgFinished}))
	require.Equal(t, ptAction{op: ptOpWaitAny}, nd.resume(false))
	require.Equal(t, int64(0), nd.tv)
	require.Equal(t, int64(1), nd.early)
	require.True(t, nd.earlyFin)
	// The child's surplus arrives: balanced with Avg; phase 3 starts as a root with
	// Avg + 1 tokens, so it finishes at once.
	require.True(t, nd.in.deliver(2, ptMsg{kind: ptMsgToken}))
	require.Equal(t, ptAction{op: ptOpPhase, port: 2}, nd.resume(false))
	require.Equal(t, ptAction{op: ptOpReserve, port: 2}, nd.resume(false))
	require.Equal(t, ptAction{op: ptOpSend, port: 2, msg: ptMsg{kind: ptMsgFinished}}, nd.resume(true))
	require.Equal(t, ptOpRelease, nd.resume(false).op)
	require.Equal(t, ptAction{op: ptOpPhase, port: 3}, nd.resume(false))
	require.Equal(t, int64(2), nd.tv)

	// The literal program takes the same phase-3 token as a phase-2 one.
	lit := ptTestNode(2, 0, true)
	*lit = ptNode{deg: 2, subT: []int64{4, 2}, subN: []int64{3, 1}, avg: 1, parent: 1, literal: true, phase: 2,
		nBig: 1, pc: ptPcP2, in: ptInbox{q: make([]ptQueue, 2), ring: make([]int32, 2)}}
	require.True(t, lit.in.deliver(1, ptMsg{kind: ptMsgToken}))
	require.True(t, lit.in.deliver(1, ptMsg{kind: ptMsgFinished}))
	require.Equal(t, ptAction{op: ptOpWaitAny}, lit.resume(false))
	require.Equal(t, int64(1), lit.tv, "the phase-3 token counted in phase 2")
	require.False(t, lit.in.empty(1), "Finished is not a token: it stays queued")
}

func TestPTNodeFailures(t *testing.T) {
	// A Finished message where phase 1 expects subtree information.
	nd := ptTestNode(3, 0, false)
	require.Equal(t, ptAction{op: ptOpWaitAny}, nd.resume(false))
	require.True(t, nd.in.deliver(2, ptMsg{kind: ptMsgFinished}))
	a := nd.resume(false)
	require.Equal(t, ptOpFail, a.op)
	require.ErrorIs(t, ptNodeError(7, nd, a.port), ErrProtocol)
	require.Contains(t, ptNodeError(7, nd, a.port).Error(), "node 7 in phase 1: unexpected message")

	// A phase-3 root with extra tokens and no child able to take them.
	nd = ptTestNode(1, 0, false)
	*nd = ptNode{deg: 1, subT: []int64{10}, subN: []int64{5}, avg: 1, tv: 5, phase: 3, pc: ptPcP3,
		in: ptInbox{q: make([]ptQueue, 1), ring: make([]int32, 1)}}
	a = nd.resume(false)
	require.Equal(t, ptAction{op: ptOpFail, port: ptFailNoTaker}, a)
}
