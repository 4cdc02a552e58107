package tokendist

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/tokendist/tokendist/node"
)

// ptNodeTrees returns the trees of the perfect-tree program tests.
func ptNodeTrees() []*Graph {
	var ts []*Graph
	for _, n := range []int{1, 2, 3, 6, 10} {
		ts = append(ts, must(Path(n)), must(Star(n)))
	}
	for s := uint64(0); s < 12; s++ {
		ts = append(ts, must(RandomTree(5+int(s)*3, s)))
	}
	for s := uint64(0); s < 3; s++ {
		ts = append(ts, must(RandomTree(60+int(s)*40, s+100)))
	}
	for _, k := range []int{2, 3} {
		ts = append(ts, must(KaryTree(KaryShape{Arity: k, Height: 4})))
	}
	return ts
}

// TestPerfectTreeNodePrograms runs the perfect-tree programs on the synchronous host
// and compares with Run (unit delays, to completion): every run ends with a perfect
// distribution, and with exactly Run's loads and Moved, and Run's Messages plus one
// when phase 1 ended in a crossing (see PerfectTree.NodePrograms).
func TestPerfectTreeNodePrograms(t *testing.T) {
	crossed, total := 0, 0
	for ti, g := range ptNodeTrees() {
		for _, literal := range []bool{false, true} {
			pt := must(NewPerfectTree(g, &PerfectTreeOptions{Literal: literal}))
			progs := must(pt.NodePrograms(g, nil))
			for s := uint64(0); s < 6; s++ {
				r := rand.New(rand.NewPCG(s, uint64(ti)))
				loads := make(Loads, g.Order())
				k := []int64{0, 2, 9, 60}[s%4]
				for v := range loads {
					loads[v] = r.Int64N(k + 1)
				}
				label := fmt.Sprintf("tree %d (%v) literal %v seed %d", ti, g, literal, s)
				want, runErr := Run(context.Background(), g, loads, pt, nil)
				h := newSyncHost(g, progs)
				if s%3 == 2 {
					h.restore = rand.New(rand.NewPCG(s, 9))
				}
				err := h.run(loads, 0, s, 1<<20)
				if literal {
					// The literal program may fail or strand tokens (docs/errata.md, M1);
					// the programs must then fail or end as Run does, never panic.
					if runErr == nil && err == nil && !slices.Equal(h.loads(), want.Loads) {
						t.Errorf("%s: literal programs %v, Run %v", label, h.loads(), want.Loads)
					}
					continue
				}
				if runErr != nil {
					t.Fatalf("%s: Run: %v", label, runErr)
				}
				if err != nil {
					t.Fatalf("%s: host: %v", label, err)
				}
				got := h.loads()
				moved, msgs := h.counts()
				if !IsPerfectDistribution(got) || got.Total() != loads.Total() {
					t.Fatalf("%s: programs end with %v from %v", label, got, loads)
				}
				total++
				if h.crossings() > 0 {
					crossed++
				}
				if !slices.Equal(got, want.Loads) || moved != want.Moved || msgs != want.Messages+int64(h.crossings()/2) {
					t.Fatalf("%s: programs %v moved %d messages %d (%d crossing ends); Run %v moved %d messages %d",
						label, got, moved, msgs, h.crossings(), want.Loads, want.Moved, want.Messages)
				}
			}
		}
	}
	t.Logf("%d corrected runs, %d with a crossing", total, crossed)
}

// TestPerfectTreeNodeProgramsDelays runs the perfect-tree programs with random transit
// times (FIFO links) and save/restore: every run ends Finished with a perfect
// distribution of the same total.
func TestPerfectTreeNodeProgramsDelays(t *testing.T) {
	t.Parallel()
	for ti, g := range ptNodeTrees() {
		pt := must(NewPerfectTree(g, nil))
		progs := must(pt.NodePrograms(g, &node.Options{Patience: 3}))
		for s := uint64(0); s < 4; s++ {
			r := rand.New(rand.NewPCG(s, uint64(ti)+100))
			loads := make(Loads, g.Order())
			for v := range loads {
				loads[v] = r.Int64N(20)
			}
			h := newSyncHost(g, progs)
			h.delay = func(int64, int, int, int64) int64 { return r.Int64N(5) }
			h.restore = rand.New(rand.NewPCG(s, 10))
			if err := h.run(loads, 0, s, 1<<20); err != nil {
				t.Fatalf("tree %d seed %d: %v", ti, s, err)
			}
			if got := h.loads(); !IsPerfectDistribution(got) || got.Total() != loads.Total() {
				t.Fatalf("tree %d seed %d: %v from %v", ti, s, got, loads)
			}
			for v, p := range h.p {
				if p.(*ptProg).wait != ptwDone {
					t.Fatalf("tree %d seed %d: node %d not Finished", ti, s, v)
				}
			}
		}
	}
}

// TestPerfectTreeNodeProgramsBadInput checks the errors of the perfect-tree programs.
func TestPerfectTreeNodeProgramsBadInput(t *testing.T) {
	tree := must(RandomTree(9, 1))
	pt := must(NewPerfectTree(tree, nil))
	if _, err := pt.NodePrograms(must(Ring(9)), nil); err == nil || !strings.HasPrefix(err.Error(), "tokendist: ") {
		t.Fatalf("on a ring: %v", err)
	}
	shuffled := must(NewPerfectTree(tree, &PerfectTreeOptions{ShufflePorts: true}))
	if _, err := shuffled.NodePrograms(tree, nil); err == nil || !strings.Contains(err.Error(), "ShufflePorts") {
		t.Fatalf("ShufflePorts: %v", err)
	}
	progs := must(pt.NodePrograms(tree, nil))
	for _, v := range []int{-1, 9} {
		if _, err := progs.Program(v); err == nil || !strings.Contains(err.Error(), fmt.Sprint(v)) {
			t.Fatalf("Program(%d): %v", v, err)
		}
	}
	// Save a node in the middle of a run, then feed RestoreState corruptions of it.
	h := newSyncHost(tree, progs)
	loads := Loads{5, 0, 3, 9, 1, 0, 2, 7, 4}
	if err := h.run(loads, 0, 1, 3); err == nil {
		t.Fatal("the run should not be over at time 3")
	}
	v := 0
	for tree.Degree(v) < 2 {
		v++
	}
	good := h.p[v].AppendState(nil)
	r := rand.New(rand.NewPCG(2, 2))
	for i := 0; i < 3000; i++ {
		b := append([]byte{}, good...)
		switch i % 3 {
		case 0:
			b[r.IntN(len(b))] ^= byte(1 + r.IntN(255))
		case 1:
			b = b[:r.IntN(len(b))]
		default:
			b = append(b, byte(r.Uint32()))
		}
		p := must(progs.Program(v))
		before := p.AppendState(nil)
		if err := p.RestoreState(b); err != nil {
			if !strings.HasPrefix(err.Error(), "tokendist: ") || !strings.Contains(err.Error(), fmt.Sprintf("node %d", v)) {
				t.Fatalf("RestoreState error %q", err)
			}
			if after := p.AppendState(nil); string(after) != string(before) {
				t.Fatal("a failed RestoreState changed the state")
			}
			continue
		}
		// Accepted bytes must save back the same, and running on must not panic.
		if again := p.AppendState(nil); string(again) != string(b) {
			t.Fatalf("RestoreState accepted %x but saves %x", b, again)
		}
		c := node.Context{ID: v, Degree: tree.Degree(v), Load: 100}
		_ = p.Tick(&c)
		_ = p.Receive(&c, 0, node.Message{Kind: ptWireToken, Tokens: 1})
		_ = p.Tick(&c)
	}
}
