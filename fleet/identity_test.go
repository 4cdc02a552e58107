package fleet

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/tokendist/tokendist/handoff"
	"github.com/tokendist/tokendist/registry"
)

// swapTransport sends the frames for node a to node b, and with both those for b to
// a: a node whose config has node b's address for node a (and a's for b).
type swapTransport struct {
	Transport
	a, b int
	both bool
}

func (s swapTransport) Send(to int, frame []byte) error {
	switch {
	case to == s.a:
		to = s.b
	case to == s.b && s.both:
		to = s.a
	}
	return s.Transport.Send(to, frame)
}

// aliasRecv attaches node v to nw with its frames from node a handed on as from node
// alias[a]: what a TCP transport does with a process that claims to be that node.
func aliasRecv(nw *InmemNetwork, v int, alias map[int]int) func(recv func(from int, frame []byte)) (Transport, error) {
	return func(recv func(from int, frame []byte)) (Transport, error) {
		t, err := nw.Attach(v, func(from int, frame []byte) {
			if as, ok := alias[from]; ok {
				from = as
			}
			recv(from, frame)
		})
		if err != nil {
			return nil, err
		}
		return t, nil
	}
}

// waitUntil polls cond every millisecond for at most limit.
func waitUntil(limit time.Duration, cond func() bool) bool {
	for deadline := time.Now().Add(limit); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if cond() {
			return true
		}
	}
	return cond()
}

func hasFault(s Status, cause string, from, to int) bool {
	return slices.ContainsFunc(s.Faults, func(f LinkFault) bool {
		return f.Cause == cause && f.From == from && f.To == to && f.Frames > 0
	})
}

func metricsText(s Status) string {
	var b bytes.Buffer
	_ = writePrometheus(&b, s.ID, s.metrics())
	return b.String()
}

// TestIdentitySwappedPeers runs a fleet in which node 0 has a wrong peer address:
// neighbour b's address for neighbour a (one address wrong), or the addresses of a and
// b swapped. Its frames for a reach b, which refuses them (they name another
// receiver), counts them and reports the fault on /status and in the metrics; nothing
// of them is applied, so the persisted states hold every item exactly once, and once
// node 0 restarts with the right addresses the fleet balances and drains with every
// item exactly once. (Before frames named their receiver, b applied them to its own
// link with node 0: with one address wrong, items were lost and doubled.)
func TestIdentitySwappedPeers(t *testing.T) {
	defer goleak.VerifyNone(t)
	for _, both := range []bool{false, true} {
		t.Run(map[bool]string{false: "one address wrong", true: "two addresses swapped"}[both], func(t *testing.T) {
			testSwappedPeers(t, both)
		})
	}
}

func testSwappedPeers(t *testing.T, both bool) {
	spec := registry.Spec{Network: choice("torus", map[string]any{"sides": []int{3, 3}}), Loads: choice("point-mass", map[string]any{"tokens": 90}),
		Algorithm: choice("rsw-diffusion", nil), Seed: 4}
	f := newMemFleet(t, spec)
	defer f.close()
	nb := f.b.g.Neighbors(0)
	a, b := int(nb[0]), int(nb[1])
	f.transport = func(v int) func(recv func(int, []byte)) (Transport, error) {
		if v != 0 {
			return f.nw.Transport(v)
		}
		return func(recv func(int, []byte)) (Transport, error) {
			tr, err := f.nw.Attach(0, recv)
			if err != nil {
				return nil, err
			}
			return swapTransport{tr, a, b, both}, nil
		}
	}
	f.startAll()
	l := newLedger(f.b)
	ctx := context.Background()
	for i := range 6 { // work arrives at node 0, which must send it on
		ids := l.newIDs(5)
		if err := f.nodes[0].AddItems(ctx, ids); err != nil {
			t.Fatal(err)
		}
		for _, id := range ids {
			l.expected[id] = true
		}
		if i%2 == 1 {
			done, err := f.nodes[a].CompleteItems(ctx, 2)
			if err != nil {
				t.Fatal(err)
			}
			l.complete(done)
		}
	}
	if !waitUntil(10*time.Second, func() bool {
		sa, sb := f.nodes[a].Snapshot(), f.nodes[b].Snapshot()
		return (sa.Refused.Receiver >= 5 || !both) && sb.Refused.Receiver >= 5
	}) {
		t.Fatalf("the misaddressed frames were not refused: node %d %+v, node %d %+v", a, f.nodes[a].Snapshot().Refused, b, f.nodes[b].Snapshot().Refused)
	}
	checks := []struct{ at, to int }{{b, a}}
	if both {
		checks = append(checks, struct{ at, to int }{a, b})
	} else if s := f.nodes[a].Snapshot(); s.Rejected != 0 || len(s.Faults) != 0 {
		t.Errorf("node %d, whose address is right, refused frames: %+v", a, s)
	}
	for _, c := range checks {
		s := f.nodes[c.at].Snapshot()
		if !hasFault(s, "receiver", 0, c.to) {
			t.Errorf("node %d does not report node 0's frames for node %d: %+v", c.at, c.to, s.Faults)
		}
		if s.Rejected < s.Refused.Receiver {
			t.Errorf("node %d: Rejected %d < Refused.Receiver %d", c.at, s.Rejected, s.Refused.Receiver)
		}
		m := metricsText(s)
		if !strings.Contains(m, `tokendist_node_link_faults{node="`) || strings.Contains(m, `tokendist_node_link_faults{node="`+strconv.Itoa(c.at)+`"} 0`) {
			t.Errorf("node %d: the metrics do not report the link fault:\n%s", c.at, m)
		}
		if strings.Contains(m, `tokendist_node_refused_frames_total{node="`+strconv.Itoa(c.at)+`",cause="receiver"} 0`) ||
			!strings.Contains(m, `tokendist_node_refused_frames_total{node="`+strconv.Itoa(c.at)+`",cause="receiver"}`) {
			t.Errorf("node %d: the metrics do not count the refused frames:\n%s", c.at, m)
		}
	}
	// Nothing misaddressed was applied: the persisted states hold every item once.
	for v := range f.nodes {
		if err := f.stop(v); err != nil {
			t.Fatalf("node %d: Run: %v", v, err)
		}
	}
	items, _ := f.audit()
	if lost, doubled, unknown := l.check(items); lost+doubled+unknown > 0 {
		t.Fatalf("with swapped addresses: lost %d, doubled %d, unknown %d", lost, doubled, unknown)
	}
	// Node 0's addresses fixed: the fleet recovers, every item exactly once.
	f.transport = nil
	f.startAll()
	f.finish(l)
}

// TestIdentityRefusesStrangers injects, on node 0's link with a neighbour w, copies
// of a data frame w sent (and the network held back), each with one identity field
// wrong: another fleet, another receiver, a sender that is not a neighbour, another
// neighbour as the sender, and the version-1 encoding. Each is refused, counted under
// its cause and reported, and changes nothing (no delivery, none of its items held);
// the unchanged frame, injected last, is delivered — so the refusals are the
// identity's. The fleet then ends with every item exactly once.
func TestIdentityRefusesStrangers(t *testing.T) {
	defer goleak.VerifyNone(t)
	spec := registry.Spec{Network: choice("torus", map[string]any{"sides": []int{3, 3}}), Loads: choice("uniform-random", map[string]any{"tokens": 90}),
		Algorithm: choice("rsw-diffusion", nil), Seed: 6}
	b0 := build(t, spec)
	nb := b0.g.Neighbors(0)
	stranger := -1
	for v := 1; v < b0.g.Order(); v++ {
		if !slices.Contains(nb, int32(v)) {
			stranger = v
			break
		}
	}
	const attacker = 100
	var (
		mu       sync.Mutex
		held     []byte // the first data frame with items to node 0, held back
		w        = -1   // its sender (the link from w to 0 is down while the test injects)
		blocking atomic.Bool
	)
	blocking.Store(true)
	f := newMemFleetOpts(t, spec, &InmemOptions{Drop: func(from, to int, frame []byte) bool {
		if to != 0 || !blocking.Load() {
			return false
		}
		mu.Lock()
		defer mu.Unlock()
		if w < 0 {
			if _, d, err := DecodeFrame(unsealed(t, frame), 0); err == nil && d.Kind == handoff.DatagramData && len(d.Items) > 0 {
				held, w = slices.Clone(frame), from
			}
		}
		return from == w
	}})
	defer f.close()
	f.transport = func(v int) func(recv func(int, []byte)) (Transport, error) {
		if v != 0 {
			return f.nw.Transport(v)
		}
		return func(recv func(int, []byte)) (Transport, error) {
			t, err := f.nw.Attach(0, func(from int, frame []byte) {
				if from == attacker {
					mu.Lock()
					from = w
					mu.Unlock()
				}
				recv(from, frame)
			})
			if err != nil {
				return nil, err
			}
			return t, nil
		}
	}
	f.startAll()
	l := newLedger(f.b)
	if !waitUntil(10*time.Second, func() bool { mu.Lock(); defer mu.Unlock(); return held != nil }) {
		t.Fatal("node 0 was sent no data frame with items")
	}
	mu.Lock()
	frame := held
	mu.Unlock()
	y := int(nb[0])
	if y == w {
		y = int(nb[1])
	}
	h, d, err := DecodeFrame(unsealed(t, frame), 0)
	if err != nil {
		t.Fatal(err)
	}
	inj, err := f.nw.Attach(attacker, func(int, []byte) {})
	if err != nil {
		t.Fatal(err)
	}
	defer inj.Close()
	nd := f.nodes[0]
	ctx := context.Background()
	holds := func() bool {
		items, err := nd.Items(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return slices.Contains(items, d.Items[0])
	}
	// linkDelivered is node 0's delivered counter on its link with w.
	linkDelivered := func() uint64 {
		var got uint64
		if err := nd.do(ctx, func() { got = nd.nd.Sequence(nd.portOf[w]).Delivered }); err != nil {
			t.Fatal(err)
		}
		return got
	}
	if holds() || linkDelivered() != d.Seq-1 {
		t.Fatalf("node 0 holds item %d or has delivered %d on the link, before frame %d arrived", d.Items[0], linkDelivered(), d.Seq)
	}
	with := func(edit func(h *FrameHeader)) []byte {
		h2 := h
		edit(&h2)
		return sealed(AppendFrame(nil, h2, d))
	}
	v1 := appendV1Frame(nil, d)
	cases := []struct {
		name  string
		frame []byte
		count func(Refused) int64
		cause string
		from  int
		to    int
	}{
		{"another fleet", with(func(h *FrameHeader) { h.Fleet ^= 1 }), func(r Refused) int64 { return r.Fleet }, "fleet", w, 0},
		{"another receiver", with(func(h *FrameHeader) { h.To = y }), func(r Refused) int64 { return r.Receiver }, "receiver", w, y},
		{"a non-neighbour sender", with(func(h *FrameHeader) { h.From = stranger }), func(r Refused) int64 { return r.Sender }, "sender", stranger, 0},
		{"another neighbour as the sender", with(func(h *FrameHeader) { h.From = y }), func(r Refused) int64 { return r.Sender }, "sender", y, 0},
		{"version 1", v1, func(r Refused) int64 { return r.Version }, "version", w, -1},
	}
	for _, c := range cases {
		before := nd.Snapshot()
		if err := inj.Send(0, c.frame); err != nil {
			t.Fatal(err)
		}
		if !waitUntil(5*time.Second, func() bool { return nd.Snapshot().Received > before.Received }) {
			t.Fatalf("%s: the frame did not arrive", c.name)
		}
		after := nd.Snapshot()
		if c.count(after.Refused) != c.count(before.Refused)+1 || after.Rejected != before.Rejected+1 {
			t.Errorf("%s: refused %+v → %+v, rejected %d → %d; want one more under %s", c.name, before.Refused, after.Refused, before.Rejected, after.Rejected, c.cause)
		}
		if got := linkDelivered(); got != d.Seq-1 || holds() {
			t.Errorf("%s: the frame was applied (delivered on the link: %d)", c.name, got)
		}
		if !hasFault(after, c.cause, c.from, c.to) {
			t.Errorf("%s: no %s fault from %d to %d in %+v", c.name, c.cause, c.from, c.to, after.Faults)
		}
	}
	// The control: the frame itself, on the same path, is applied.
	before := nd.Snapshot()
	if err := inj.Send(0, frame); err != nil {
		t.Fatal(err)
	}
	if !waitUntil(5*time.Second, holds) {
		t.Fatalf("the unchanged frame was not applied: %+v → %+v", before, nd.Snapshot())
	}
	if got, s := linkDelivered(), nd.Snapshot(); got != d.Seq || s.Rejected != before.Rejected {
		t.Errorf("the unchanged frame: delivered on the link %d (want %d), rejected %d → %d", got, d.Seq, before.Rejected, s.Rejected)
	}
	blocking.Store(false)
	f.finish(l)
}

// identityConfig is one node's config of a small fleet and its neighbours' addresses.
func identityConfig(t *testing.T, spec registry.Spec, id int, data string) Config {
	t.Helper()
	b := build(t, spec)
	peers := map[int]string{}
	for _, w := range b.g.Neighbors(id) {
		peers[int(w)] = "inmem:0"
	}
	return Config{ID: id, Spec: spec, Listen: "inmem:0", Status: "inmem:0", Data: data, Peers: peers, Tick: Duration(time.Millisecond), KeyFile: testKeyFile(t, t.TempDir())}
}

// openNode builds a node on store st (nil: a BoltStore in cfg.Data) and an in-memory
// transport, and closes it at once; it returns NewNode's error.
func openNode(t *testing.T, cfg Config, st Store, reinit bool) (Status, error) {
	t.Helper()
	nw, err := NewInmemNetwork(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer nw.Close()
	nd, err := NewNode(cfg, &Options{Store: st, Transport: nw.Transport(cfg.ID), Reinit: reinit})
	if err != nil {
		return Status{}, err
	}
	s := nd.Snapshot()
	if err := nd.Close(); err != nil {
		t.Fatal(err)
	}
	return s, nil
}

// TestIdentityRestartChanged restarts a node on its store with one thing of its
// config changed — the seed, the loads, the algorithm, the network, the fleet name,
// the node ID — and expects a refusal naming it, the store untouched; with the config
// it was created with, it restores. Both with a MemoryStore and a BoltStore.
func TestIdentityRestartChanged(t *testing.T) {
	spec := registry.Spec{Network: choice("random-tree", map[string]any{"n": 6}), Loads: choice("uniform-random", map[string]any{"tokens": 60}),
		Algorithm: choice("threshold-1", nil), Seed: 3}
	for _, bolt := range []bool{false, true} {
		dir := t.TempDir()
		disk := NewMemoryStore()
		store := func() Store {
			if bolt {
				return nil
			}
			return disk.Reopen()
		}
		load := func() []byte {
			if !bolt {
				b, _ := disk.Reopen().Load()
				return b
			}
			s, err := OpenBoltStore(filepath.Join(dir, StoreFile), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			b, err := s.Load()
			if err != nil {
				t.Fatal(err)
			}
			return b
		}
		cfg := identityConfig(t, spec, 0, dir)
		if s, err := openNode(t, cfg, store(), false); err != nil || s.Restored {
			t.Fatalf("first start: %+v, %v", s, err)
		}
		saved := load()
		stored, err := DecodeStored(saved)
		id := stored.Identity
		if err != nil || id.Node != 0 || id.Seed != 3 || !strings.HasPrefix(id.Algorithm, "threshold-1/") || stored.Epoch != 1 {
			t.Fatalf("stored identity %+v, %v", stored, err)
		}
		if _, err := handoff.DecodeState(stored.State); err != nil {
			t.Fatalf("the stored state: %v", err)
		}
		if fid, epoch, err := readIdentityFile(dir); err != nil || fid != id || epoch != 1 {
			t.Fatalf("identity file %+v, epoch %d, %v; want %+v, 1", fid, epoch, err, id)
		}
		other := func(edit func(s *registry.Spec)) registry.Spec {
			s := spec
			edit(&s)
			return s
		}
		for _, c := range []struct {
			name string
			cfg  Config
			want string
		}{
			{"seed", identityConfig(t, other(func(s *registry.Spec) { s.Seed = 4 }), 0, dir), "seed: stored 3, configured 4"},
			{"loads", identityConfig(t, other(func(s *registry.Spec) {
				s.Loads = choice("uniform-random", map[string]any{"tokens": 61})
			}), 0, dir), "loads: stored uniform-random/"},
			{"algorithm", identityConfig(t, other(func(s *registry.Spec) { s.Algorithm = choice("rsw-diffusion", nil) }), 0, dir),
				"algorithm: stored threshold-1/"},
			{"network", identityConfig(t, other(func(s *registry.Spec) { s.Network = choice("path", map[string]any{"n": 6}) }), 0, dir),
				"network: stored random-tree/"},
			{"fleet name", func() Config { c := cfg; c.Fleet = "staging"; return c }(), `fleet name: stored "", configured "staging"`},
			{"node", identityConfig(t, spec, 1, dir), "node: stored 0, configured 1"},
		} {
			_, err := openNode(t, c.cfg, store(), false)
			if err == nil || !strings.HasPrefix(err.Error(), "tokendist: ") || !strings.Contains(err.Error(), c.want) {
				t.Errorf("bolt %t, restart with another %s: %v; want a refusal naming %q", bolt, c.name, err, c.want)
			}
			if c.name != "node" && err != nil && strings.Count(err.Error(), "stored") != 1 {
				t.Errorf("bolt %t, another %s: %v names more than the difference", bolt, c.name, err)
			}
			// Options.Reinit does not override a store of another spec.
			if _, err := openNode(t, c.cfg, store(), true); err == nil {
				t.Errorf("bolt %t, another %s with Reinit: accepted", bolt, c.name)
			}
			if got := load(); !bytes.Equal(got, saved) {
				t.Fatalf("bolt %t, another %s: the refused start changed the store", bolt, c.name)
			}
		}
		// The refused starts did not count: the restart is the second epoch.
		if s, err := openNode(t, cfg, store(), false); err != nil || !s.Restored || s.Epoch != 2 {
			t.Fatalf("bolt %t, restart with the same config: %+v, %v; want a restore in epoch 2", bolt, s, err)
		}
		if stored, err := DecodeStored(load()); err != nil || stored.Epoch != 2 {
			t.Fatalf("bolt %t: after the restart the store has epoch %d, %v; want 2", bolt, stored.Epoch, err)
		}
	}
}

// TestIdentityUsedDataDir: a node whose store is empty or missing on a data directory
// that has run a node before is refused, naming Reinit; with Options.Reinit it
// starts afresh. A new data directory with an empty store starts.
func TestIdentityUsedDataDir(t *testing.T) {
	spec := registry.Spec{Network: choice("random-tree", map[string]any{"n": 6}), Loads: choice("uniform-random", map[string]any{"tokens": 60}),
		Algorithm: choice("threshold-1", nil), Seed: 3}
	// MemoryStore: a new, empty store on the used directory.
	dir := t.TempDir()
	cfg := identityConfig(t, spec, 2, dir)
	if _, err := openNode(t, cfg, NewMemoryStore(), false); err != nil {
		t.Fatal(err)
	}
	_, err := openNode(t, cfg, NewMemoryStore(), false)
	wantErr(t, err, "has run a node before")
	wantErr(t, err, "Reinit")
	// The fresh start continues the epochs of the identity file (epoch 1 there).
	if s, err := openNode(t, cfg, NewMemoryStore(), true); err != nil || s.Restored || s.Epoch != 2 {
		t.Fatalf("with Reinit: %+v, %v; want a fresh start in epoch 2", s, err)
	}
	// BoltStore: the store file deleted; and a directory with only a starts file.
	dir = t.TempDir()
	cfg = identityConfig(t, spec, 2, dir)
	if _, err := openNode(t, cfg, nil, false); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, StoreFile)); err != nil {
		t.Fatal(err)
	}
	_, err = openNode(t, cfg, nil, false)
	wantErr(t, err, "has run a node before")
	if s, err := openNode(t, cfg, nil, true); err != nil || s.Restored {
		t.Fatalf("with Reinit: %+v, %v; want a fresh start", s, err)
	}
	if s, err := openNode(t, cfg, nil, false); err != nil || !s.Restored {
		t.Fatalf("after the Reinit start: %+v, %v; want a restore", s, err)
	}
	dir = t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, StartsFile), []byte("3\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = openNode(t, identityConfig(t, spec, 2, dir), NewMemoryStore(), false)
	wantErr(t, err, "has run a node before (a starts file)")
}

// TestDecodeStored: a record round-trips; a record cut before its state, or with a
// wrong magic, version, identity length or epoch, is an error, never a panic.
func TestDecodeStored(t *testing.T) {
	id := Identity{Fleet: 1<<64 - 1, Name: "n", Node: 7, Network: "torus/00", Loads: "l/01", Algorithm: "a/02", Seed: 9}
	state := []byte("the handoff state")
	rec := appendRecord(nil, id, 1<<40, state)
	st, err := DecodeStored(rec)
	if err != nil || st.Identity != id || st.Epoch != 1<<40 || string(st.State) != string(state) {
		t.Fatalf("DecodeStored = %+v, %v", st, err)
	}
	for cut := range len(rec) - len(state) {
		if _, err := DecodeStored(rec[:cut]); err == nil {
			t.Fatalf("a record cut to %d of %d bytes decoded", cut, len(rec))
		}
	}
	bad := func(edit func(b []byte) []byte) []byte { return edit(slices.Clone(rec)) }
	// sealed appends a matching checksum, so that the structure is what is refused.
	sealed := func(b []byte) []byte { return binary.BigEndian.AppendUint32(b, crc32.Checksum(b, castagnoli)) }
	for name, b := range map[string][]byte{
		"magic":    bad(func(b []byte) []byte { b[0]++; return b }),
		"version":  bad(func(b []byte) []byte { b[1]++; return b }),
		"length":   sealed(append([]byte{recordMagic, recordVersion}, binary.AppendUvarint(nil, maxIdentity+1)...)),
		"trailing": sealed(append(append([]byte{recordMagic, recordVersion}, binary.AppendUvarint(nil, 3)...), '{', '}', 'x', 1)),
		"epoch 0": func() []byte {
			r := appendRecord(nil, id, 1, state)
			r = r[:len(r)-recordCRC]
			r[len(r)-len(state)-1] = 0
			return sealed(r)
		}(),
		"json":    sealed(append(append([]byte{recordMagic, recordVersion}, binary.AppendUvarint(nil, 2)...), '{', 'x', 1)),
		"unknown": sealed(append(append([]byte{recordMagic, recordVersion}, binary.AppendUvarint(nil, 7)...), append([]byte(`{"x":1}`), 1)...)),
	} {
		_, err := DecodeStored(b)
		if err == nil || !strings.HasPrefix(err.Error(), "tokendist: ") {
			t.Errorf("%s: %v; want an error", name, err)
		} else if strings.Contains(err.Error(), "checksum") {
			t.Errorf("%s: %v; want the structure refused, not the checksum", name, err)
		}
	}
	if _, err := DecodeStored([]byte("a state of an older release")); err == nil || !strings.Contains(err.Error(), "older tokendist") {
		t.Errorf("an old state: %v", err)
	}
}

// TestIdentityDuplicateID runs second processes of node 0 beside the first (each with
// its own store and data directory, frames arriving as node 0's). First node 0
// restarts (epoch 2), which its neighbours take for a restart, not a duplicate. A
// second process on an empty store (epoch 1, lower) is refused as stale: none of its
// frames is applied, the first process's link keeps working, and a neighbour reports
// a "stale" fault once the grace has passed. A second process restored from a copy of
// node 0's store as it was before the restart (epoch 2, the same as the running
// one's) is a duplicate: a neighbour reports node 0 in DuplicatePeers and the metrics,
// and refuses every frame from it from then on.
func TestIdentityDuplicateID(t *testing.T) {
	defer goleak.VerifyNone(t)
	spec := registry.Spec{Network: choice("torus", map[string]any{"sides": []int{3, 3}}), Loads: choice("uniform-random", map[string]any{"tokens": 90}),
		Algorithm: choice("rsw-diffusion", nil), Seed: 8}
	const emptyDup, copyDup = 100, 101
	f := newMemFleet(t, spec)
	defer f.close()
	f.dupGrace = 50 * time.Millisecond
	nb := f.b.g.Neighbors(0)
	f.transport = func(v int) func(recv func(int, []byte)) (Transport, error) {
		if slices.Contains(nb, int32(v)) {
			return aliasRecv(f.nw, v, map[int]int{emptyDup: 0, copyDup: 0})
		}
		return f.nw.Transport(v)
	}
	f.startAll()
	l := newLedger(f.b)
	ctx := context.Background()
	add := func(v int) {
		ids := l.newIDs(4)
		if err := f.nodes[v].AddItems(ctx, ids); err != nil {
			t.Fatal(err)
		}
		for _, id := range ids {
			l.expected[id] = true
		}
	}
	// linkDelivered is neighbour w's delivered counter on its link with node 0.
	linkDelivered := func(w int) uint64 {
		nd := f.nodes[w]
		var got uint64
		if err := nd.do(ctx, func() { got = nd.nd.Sequence(nd.portOf[0]).Delivered }); err != nil {
			t.Fatal(err)
		}
		return got
	}
	faulty := func(cause string) (int, Status) {
		for _, w := range nb {
			if s := f.nodes[w].Snapshot(); slices.ContainsFunc(s.Faults, func(lf LinkFault) bool { return lf.Cause == cause }) {
				return int(w), s
			}
		}
		return -1, Status{}
	}
	run := func(st Store, id int) (stop func()) {
		cfg := f.cfgs[0]
		cfg.Data = t.TempDir()
		nd, err := NewNode(cfg, &Options{Store: st, Transport: f.nw.Transport(id), dupGrace: f.dupGrace})
		if err != nil {
			t.Fatal(err)
		}
		dctx, cancel := context.WithCancel(ctx)
		errc := make(chan error, 1)
		go func() { errc <- nd.Run(dctx) }()
		return func() {
			cancel()
			if err := <-errc; err != nil {
				t.Errorf("second process %d: Run: %v", id, err)
			}
		}
	}

	// A copy of node 0's store in epoch 1 with unacknowledged data (so that a process
	// restored from it retransmits: an idle process sends nothing to compare).
	var snapshot []byte
	for i := 0; i < 500 && snapshot == nil; i++ {
		add(0)
		raw, err := f.disks[0].Reopen().Load()
		if err != nil {
			t.Fatal(err)
		}
		stored, err := DecodeStored(raw)
		if err != nil {
			t.Fatal(err)
		}
		ps, err := handoff.DecodeState(stored.State)
		if err != nil {
			t.Fatal(err)
		}
		if slices.ContainsFunc(ps.Links, func(l handoff.LinkState) bool { return len(l.Log) > 0 }) {
			snapshot = raw
		}
		time.Sleep(time.Millisecond)
	}
	if snapshot == nil {
		t.Fatal("node 0 never had unacknowledged data in its store")
	}
	// A restart, with traffic on both sides of it: not a duplicate, nothing reported.
	if err := f.stop(0); err != nil {
		t.Fatal(err)
	}
	f.start(0)
	if s := f.nodes[0].Snapshot(); s.Epoch != 2 {
		t.Fatalf("restarted node 0 is in epoch %d; want 2", s.Epoch)
	}
	for range 10 {
		add(0)
		time.Sleep(2 * f.dupGrace / 5)
	}
	for _, w := range nb {
		if s := f.nodes[w].Snapshot(); len(s.DuplicatePeers)+len(s.Faults) > 0 {
			t.Fatalf("a restart of node 0: node %d reports %v %+v", w, s.DuplicatePeers, s.Faults)
		}
	}

	// A second process on an empty store: epoch 1, refused as stale.
	stopEmpty := run(NewMemoryStore(), emptyDup)
	found, st := -1, Status{}
	for deadline := time.Now().Add(10 * time.Second); found < 0 && time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		found, st = faulty("stale")
	}
	if found < 0 {
		t.Fatal("no neighbour of node 0 reported the frames of an older process of node 0")
	}
	if len(st.DuplicatePeers) != 0 || st.Refused.Stale == 0 || !hasFault(st, "stale", 0, found) {
		t.Fatalf("node %d: duplicate peers %v, refused %+v, faults %+v", found, st.DuplicatePeers, st.Refused, st.Faults)
	}
	// The running node 0's frames are still applied on that link.
	before := linkDelivered(found)
	if !waitUntil(5*time.Second, func() bool { add(0); return linkDelivered(found) > before }) {
		t.Fatalf("node %d applies nothing more from node 0 beside its stale second process", found)
	}
	stopEmpty()

	// A second process from the older copy: epoch 2, as the running one's.
	cp := NewMemoryStore()
	if err := cp.Save(snapshot); err != nil {
		t.Fatal(err)
	}
	stopCopy := run(cp, copyDup)
	defer stopCopy()
	found = -1
	for deadline := time.Now().Add(10 * time.Second); found < 0 && time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		add(0) // the first process goes on sending
		found, st = faulty("duplicate")
	}
	if found < 0 {
		t.Fatal("no neighbour of node 0 noticed two live processes claiming it in one epoch")
	}
	if !slices.Equal(st.DuplicatePeers, []int{0}) || st.Refused.Duplicate == 0 || !hasFault(st, "duplicate", 0, found) {
		t.Fatalf("node %d: duplicate peers %v, refused %+v, faults %+v", found, st.DuplicatePeers, st.Refused, st.Faults)
	}
	m := metricsText(st)
	if !strings.Contains(m, `tokendist_node_duplicate_peers{node="`+strconv.Itoa(found)+`"} 1`) {
		t.Errorf("the metrics do not report the duplicate:\n%s", m)
	}
	// From then on, nothing from node 0 is applied on that link.
	before = linkDelivered(found)
	refusedBefore := f.nodes[found].Snapshot().Refused.Duplicate
	for range 20 {
		add(0)
		time.Sleep(2 * f.dupGrace / 5)
	}
	if got := linkDelivered(found); got != before {
		t.Errorf("after the detection node %d delivered %d → %d datagrams from node 0", found, before, got)
	}
	if s := f.nodes[found].Snapshot(); s.Refused.Duplicate <= refusedBefore {
		t.Errorf("after the detection: refused as duplicates %d → %d; want more", refusedBefore, s.Refused.Duplicate)
	}
}

// TestNewIdentity: every node of a fleet derives the same fleet ID, a fleet name
// changes it, the node's stored identity is NewIdentity's, and a bad spec is an error
// naming the choice.
func TestNewIdentity(t *testing.T) {
	spec := registry.Spec{Network: choice("random-tree", map[string]any{"n": 6}), Loads: choice("uniform-random", map[string]any{"tokens": 60}),
		Algorithm: choice("threshold-1", nil), Seed: 3}
	ids := map[uint64]bool{}
	for v := range 6 {
		id, err := NewIdentity(identityConfig(t, spec, v, t.TempDir()), nil)
		if err != nil || id.Node != v {
			t.Fatalf("node %d: %+v, %v", v, id, err)
		}
		ids[id.Fleet] = true
	}
	if len(ids) != 1 {
		t.Fatalf("the nodes of one fleet derive %d fleet IDs", len(ids))
	}
	cfg := identityConfig(t, spec, 0, t.TempDir())
	cfg.Fleet = "staging"
	named, err := NewIdentity(cfg, registry.Default())
	if err != nil || ids[named.Fleet] || named.Name != "staging" {
		t.Fatalf("a named fleet: %+v, %v; want another fleet ID", named, err)
	}
	if s, err := openNode(t, cfg, NewMemoryStore(), false); err != nil || s.Fleet != named.FleetHex() {
		t.Fatalf("the node's fleet %q, %v; want %s", s.Fleet, err, named.FleetHex())
	}
	cfg.Spec.Algorithm = choice("no-such-algorithm", nil)
	if _, err := NewIdentity(cfg, nil); err == nil {
		t.Error("an unknown algorithm was accepted")
	} else {
		wantErr(t, err, "no-such-algorithm")
	}
}

// bareNode builds node 0 of a torus on an in-memory network without running it, for
// tests that call its frame handling directly (no other goroutine touches it).
func bareNode(t *testing.T, logf func(string, ...any), grace time.Duration) (*Node, func()) {
	t.Helper()
	spec := registry.Spec{Network: choice("torus", map[string]any{"sides": []int{3, 3}}), Loads: choice("uniform-random", map[string]any{"tokens": 90}),
		Algorithm: choice("rsw-diffusion", nil), Seed: 6}
	nw, err := NewInmemNetwork(nil)
	if err != nil {
		t.Fatal(err)
	}
	nd, err := NewNode(identityConfig(t, spec, 0, t.TempDir()), &Options{Store: NewMemoryStore(), Transport: nw.Transport(0), Logf: logf, dupGrace: grace})
	if err != nil {
		t.Fatal(err)
	}
	if s := nd.Snapshot(); s.Sent < 1 || s.Saves != 1 || s.SaveSeconds <= 0 || s.Epoch != 1 {
		t.Fatalf("a new node: sent %d, saves %d (%v s), epoch %d; want its first frames sent after one save, epoch 1", s.Sent, s.Saves, s.SaveSeconds, s.Epoch)
	}
	return nd, func() { _ = nd.Close(); _ = nw.Close() }
}

// TestIdentityIncarnations steps the incarnation rule frame by frame: a higher epoch
// is a restart; a lower one is refused, reported only past the grace; the same epoch
// with another incarnation marks a duplicate, after which everything from that
// neighbour is refused; each refusal counted once.
func TestIdentityIncarnations(t *testing.T) {
	defer goleak.VerifyNone(t)
	const grace = 50 * time.Millisecond
	nd, done := bareNode(t, nil, grace)
	defer done()
	w := nd.nbrs[0]
	port := nd.portOf[w]
	step := func(epoch, inc uint64) bool {
		return nd.incarnation(port, FrameHeader{Fleet: nd.id.Fleet, From: w, To: 0, Epoch: epoch, Incarnation: inc}, inFrame{from: w})
	}
	want := func(what string, got bool, ok bool, r Refused, faults ...string) {
		t.Helper()
		var causes []string
		for _, f := range nd.st.Faults {
			causes = append(causes, f.Cause)
		}
		if got != ok || nd.st.Refused != r || !slices.Equal(causes, faults) {
			t.Fatalf("%s: applied %t, refused %+v, faults %v; want %t, %+v, %v", what, got, nd.st.Refused, causes, ok, r, faults)
		}
	}
	want("first frame", step(1, 11), true, Refused{})
	want("same process", step(1, 11), true, Refused{})
	time.Sleep(2 * grace) // the restart comes later than the grace after the first frame
	want("restart", step(2, 22), true, Refused{})
	want("the old process's frame, within the grace", step(1, 11), false, Refused{Stale: 1})
	if len(nd.st.DuplicatePeers) != 0 {
		t.Fatalf("a restart marked a duplicate: %v", nd.st.DuplicatePeers)
	}
	time.Sleep(2 * grace)
	want("the old process's frame, past the grace", step(1, 11), false, Refused{Stale: 2}, "stale")
	want("the restarted process", step(2, 22), true, Refused{Stale: 2}, "stale")
	want("another process of epoch 2", step(2, 33), false, Refused{Stale: 2, Duplicate: 1}, "stale", "duplicate")
	want("the first process of epoch 2, after", step(2, 22), false, Refused{Stale: 2, Duplicate: 2}, "stale", "duplicate")
	want("a later epoch, after", step(3, 44), false, Refused{Stale: 2, Duplicate: 3}, "stale", "duplicate")
	if !slices.Equal(nd.st.DuplicatePeers, []int{w}) || nd.st.Rejected != 5 {
		t.Fatalf("duplicate peers %v, rejected %d; want [%d], 5", nd.st.DuplicatePeers, nd.st.Rejected, w)
	}

	// Without Options.dupGrace the grace is DuplicateGrace: a stale frame right after
	// a restart is not reported.
	nd2, done2 := bareNode(t, nil, 0)
	defer done2()
	w2 := nd2.nbrs[0]
	step2 := func(epoch, inc uint64) bool {
		return nd2.incarnation(nd2.portOf[w2], FrameHeader{Fleet: nd2.id.Fleet, From: w2, To: 0, Epoch: epoch, Incarnation: inc}, inFrame{from: w2})
	}
	step2(1, 1)
	step2(2, 2)
	time.Sleep(2 * grace)
	if step2(1, 1) || nd2.st.Refused.Stale != 1 || len(nd2.st.Faults) != 0 {
		t.Fatalf("default grace: refused %+v, faults %+v; want one stale frame, not reported", nd2.st.Refused, nd2.st.Faults)
	}
}

// TestIdentityFaultsBounded: distinct faults are recorded up to 16, every refused
// frame is counted, and the log has one line per cause per second, saying how many it
// skipped.
func TestIdentityFaultsBounded(t *testing.T) {
	defer goleak.VerifyNone(t)
	var mu sync.Mutex
	var lines []string
	nd, done := bareNode(t, func(format string, args ...any) {
		mu.Lock()
		lines = append(lines, fmt.Sprintf(format, args...))
		mu.Unlock()
	}, 0)
	defer done()
	logged := func(sub string) (k int, last string) {
		mu.Lock()
		defer mu.Unlock()
		for _, l := range lines {
			if strings.Contains(l, sub) {
				k, last = k+1, l
			}
		}
		return k, last
	}
	w := nd.nbrs[0]
	for to := 1; to <= 20; to++ { // 20 distinct misaddressed links
		nd.frame(inFrame{from: w, frame: sealed(AppendFrame(nil, FrameHeader{Fleet: nd.id.Fleet, From: w, To: 100 + to, Epoch: 1, Incarnation: 1},
			handoff.Datagram{Kind: handoff.DatagramAck, Seq: 0}))})
	}
	s := nd.st
	if s.Refused.Receiver != 20 || s.Rejected != 20 || len(s.Faults) != maxFaults || s.Faults[0].To != 101 || s.Faults[maxFaults-1].To != 100+maxFaults {
		t.Fatalf("refused %+v, rejected %d, %d faults (first %+v); want 20, 20, %d from 101 on", s.Refused, s.Rejected, len(s.Faults), s.Faults[0], maxFaults)
	}
	for i, f := range s.Faults {
		if f.Frames != 1 || f.Cause != "receiver" || f.From != w || f.Link != w || f.Detail == "" {
			t.Fatalf("fault %d: %+v", i, f)
		}
	}
	m := metricsText(nd.st)
	if strings.Count(m, "# HELP tokendist_node_refused_frames_total") != 1 ||
		!strings.Contains(m, `tokendist_node_refused_frames_total{node="0",cause="receiver"} 20`+"\n") ||
		!strings.Contains(m, `tokendist_node_link_faults{node="0"} 16`+"\n") {
		t.Errorf("metrics:\n%s", m)
	}
	if k, last := logged("refused a frame"); k != 1 || strings.Contains(last, "more") {
		t.Fatalf("%d log lines for 20 refusals in a burst (last %q); want 1, without a skipped count", k, last)
	}
	nd.frame(inFrame{from: w}) // an empty frame: no MAC, another cause
	if nd.st.Rejected != 21 || nd.st.Refused.Receiver != 20 || nd.st.Refused.MAC != 1 {
		t.Fatalf("an empty frame: rejected %d, refused %+v", nd.st.Rejected, nd.st.Refused)
	}
	if k, last := logged("refused a frame"); k != 2 || !strings.Contains(last, "fail authentication") {
		t.Fatalf("%d log lines after an empty frame (last %q); want 2, the last for its MAC", k, last)
	}
	time.Sleep(1100 * time.Millisecond)
	nd.frame(inFrame{from: w, frame: sealed(AppendFrame(nil, FrameHeader{Fleet: nd.id.Fleet ^ 1, From: w, To: 0, Epoch: 1, Incarnation: 1},
		handoff.Datagram{Kind: handoff.DatagramAck, Seq: 0}))}) // another cause
	nd.frame(inFrame{from: w, frame: sealed(AppendFrame(nil, FrameHeader{Fleet: nd.id.Fleet, From: w, To: 101, Epoch: 1, Incarnation: 1},
		handoff.Datagram{Kind: handoff.DatagramAck, Seq: 0}))})
	if k, last := logged("refused a frame"); k != 4 || !strings.Contains(last, "(and 19 more receiver refusals not logged)") {
		t.Fatalf("after a second: %d lines, last %q; want 4, the last counting 19 skipped", k, last)
	}
	if nd.st.Faults[0].Frames != 2 || nd.st.Refused.Fleet != 1 || len(nd.st.Faults) != maxFaults {
		t.Fatalf("faults %+v, refused %+v", nd.st.Faults[0], nd.st.Refused)
	}
}
