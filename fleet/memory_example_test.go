package fleet_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/tokendist/tokendist/fleet"
	"github.com/tokendist/tokendist/registry"
)

// A fleet in one process: two nodes over an InmemNetwork, each on its own
// MemoryStore. The nodes balance six items; node 1 crashes and is rebuilt from its
// store; then every item is completed, each exactly once.
func Example_inMemoryFleet() {
	spec := registry.Spec{
		Network:   registry.Choice{Name: "random-tree", Params: map[string]any{"n": 2}},
		Loads:     registry.Choice{Name: "point-mass", Params: map[string]any{"tokens": 6}}, // all on node 0
		Algorithm: registry.Choice{Name: "threshold-1"},
	}
	nw, err := fleet.NewInmemNetwork(nil)
	if err != nil {
		panic(err)
	}
	defer nw.Close()
	dir, err := os.MkdirTemp("", "fleet-example") // the nodes' starts files
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	// The fleet's shared key (docs/fleet.md, "Authentication"): every frame carries a MAC.
	key := filepath.Join(dir, "fleet.key")
	if err := os.WriteFile(key, []byte("example-key-0123456789abcdef0123456789abcdef\n"), 0o600); err != nil {
		panic(err)
	}
	stores := []*fleet.MemoryStore{fleet.NewMemoryStore(), fleet.NewMemoryStore()}
	nodes := make([]*fleet.Node, 2)
	stops := make([]func() error, 2)
	start := func(v int) {
		cfg := fleet.Config{ID: v, Spec: spec, Data: filepath.Join(dir, fmt.Sprint(v)), Tick: fleet.Duration(time.Millisecond), KeyFile: key,
			// The addresses are not used with Options.Transport, but must be host:port.
			Listen: "inmem:0", Status: "inmem:0", Peers: map[int]string{1 - v: "inmem:0"}}
		// Reopen: a new handle on the store's state (the node closes its handle).
		nd, err := fleet.NewNode(cfg, &fleet.Options{Store: stores[v].Reopen(), Transport: nw.Transport(v)})
		if err != nil {
			panic(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- nd.Run(ctx) }()
		nodes[v], stops[v] = nd, func() error { cancel(); return <-done }
	}
	until := func(cond func() bool) {
		for deadline := time.Now().Add(10 * time.Second); !cond() && time.Now().Before(deadline); {
			time.Sleep(time.Millisecond)
		}
	}
	start(0)
	start(1)
	until(func() bool { return nodes[0].Snapshot().Load == 3 && nodes[1].Snapshot().Load == 3 })
	fmt.Println("loads:", nodes[0].Snapshot().Load, nodes[1].Snapshot().Load)

	if err := stops[1](); err != nil { // the crash (between two events)
		panic(err)
	}
	start(1) // restored from stores[1]
	st := nodes[1].Snapshot()
	fmt.Println("node 1 restored:", st.Restored, "load:", st.Load)

	var done []uint64
	until(func() bool {
		for _, nd := range nodes {
			ids, err := nd.CompleteItems(context.Background(), 10)
			if err != nil {
				panic(err)
			}
			done = append(done, ids...)
		}
		return len(done) >= 6
	})
	slices.Sort(done)
	fmt.Println("completed:", done)
	for _, stop := range stops {
		if err := stop(); err != nil {
			panic(err)
		}
	}
	// Output:
	// loads: 3 3
	// node 1 restored: true load: 3
	// completed: [0 1 2 3 4 5]
}
