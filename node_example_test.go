package tokendist_test

import (
	"context"
	"fmt"
	"slices"

	"github.com/tokendist/tokendist/node"

	"github.com/tokendist/tokendist"
)

// A host of node programs in a few lines: every node starts, then messages are
// delivered in waves until none is in flight (reliable FIFO links, no timer). With
// RunOptions.NodeStreams, Run draws the same random choices and ends with the same
// loads, Moved and Messages.
func ExampleRandomizedDiffusion_NodePrograms() {
	g, _ := tokendist.Ring(6)
	b, _ := tokendist.NewRandomizedDiffusion(g)
	loads := tokendist.Loads{17, 0, 4, 0, 9, 1}
	const rounds, seed = 3, 7

	progs, err := b.NodePrograms(g, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	type delivery struct {
		to, port int
		m        node.Message
	}
	var inFlight []delivery
	ctx := make([]node.Context, g.Order())
	prog := make([]node.Program, g.Order())
	post := func(v int) { // move v's outbox onto the links
		for _, e := range ctx[v].Outbox() {
			w := int(g.Neighbors(v)[e.Port])
			inFlight = append(inFlight, delivery{w, slices.Index(g.Neighbors(w), int32(v)), e.Msg})
		}
		ctx[v].Reset()
	}
	for v := range prog {
		prog[v], _ = progs.Program(v)
		ctx[v] = node.Context{ID: v, Degree: g.Degree(v), Load: loads[v], Rounds: rounds, Seed: seed}
		if err := prog[v].Start(&ctx[v]); err != nil {
			fmt.Println(err)
			return
		}
		post(v)
	}
	for len(inFlight) > 0 {
		wave := inFlight
		inFlight = nil
		for _, d := range wave {
			ctx[d.to].Load += d.m.Tokens // the host adds the tokens, then delivers
			if err := prog[d.to].Receive(&ctx[d.to], d.port, d.m); err != nil {
				fmt.Println(err)
				return
			}
			post(d.to)
		}
	}
	var final tokendist.Loads
	var moved, messages int64
	for v := range ctx {
		final = append(final, ctx[v].Load)
		moved += ctx[v].Moved
		messages += ctx[v].Messages
	}
	fmt.Println("programs:", final, "moved", moved, "messages", messages)

	res, _ := tokendist.Run(context.Background(), g, loads, b,
		&tokendist.RunOptions{MaxSteps: rounds, Seed: seed, NodeStreams: true})
	fmt.Println("Run:     ", res.Loads, "moved", res.Moved, "messages", res.Messages)
	// Output:
	// programs: [6 5 4 4 5 7] moved 61 messages 28
	// Run:      [6 5 4 4 5 7] moved 61 messages 28
}
