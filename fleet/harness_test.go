package fleet

import (
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/tokendist/tokendist"
	"github.com/tokendist/tokendist/handoff"
	"github.com/tokendist/tokendist/registry"
)

// topology is one network of a fleet test: its spec and the bound its final state
// must meet after recovery.
type topology struct {
	name string
	spec registry.Spec
}

func choice(name string, params map[string]any) registry.Choice {
	return registry.Choice{Name: name, Params: params}
}

// built is a topology's network, initial loads and bound.
type built struct {
	g     *tokendist.Graph
	loads tokendist.Loads
	algo  string
	// bound is the final discrepancy the algorithm guarantees after recovery (see
	// checkStable); local, when positive, the largest load difference across a link.
	bound, local int64
}

func build(t testing.TB, spec registry.Spec) built {
	t.Helper()
	reg := registry.Default()
	s, err := reg.Canonical(spec)
	if err != nil {
		t.Fatal(err)
	}
	g, l, _, err := reg.Build(s)
	if err != nil {
		t.Fatal(err)
	}
	b := built{g: g, loads: l, algo: s.Algorithm.Name}
	switch s.Algorithm.Name {
	case "threshold-1":
		// Lemma 8 of Houle, Symvonis and Wood: THRESHOLD-1 on a tree converges, from
		// any loads, to a stable distribution of discrepancy at most MSD(T).
		msd, err := tokendist.MSD(g)
		if err != nil {
			t.Fatal(err)
		}
		b.bound = int64(msd)
	case "rsw-diffusion":
		// RSW moves ⌊|X_u − X_v|/(d+1)⌋ over every link: its stable states (no token
		// moves) are exactly those with |X_u − X_v| ≤ d on every link, so their
		// discrepancy is at most d·diam(G).
		diam, err := g.Diameter()
		if err != nil {
			t.Fatal(err)
		}
		b.local = int64(g.MaxDegree())
		b.bound = b.local * int64(diam)
	default:
		t.Fatalf("no bound for %s", s.Algorithm.Name)
	}
	return b
}

// discrepancy of loads, and the largest difference across a link.
func (b built) discrepancy(loads []int64) (disc, local int64) {
	disc = slices.Max(loads) - slices.Min(loads)
	for u := range b.g.Order() {
		for _, w := range b.g.Neighbors(u) {
			local = max(local, loads[u]-loads[w])
		}
	}
	return disc, local
}

// withinBound reports whether loads meet b's bound.
func (b built) withinBound(loads []int64) bool {
	disc, local := b.discrepancy(loads)
	return disc <= b.bound && (b.local == 0 || local <= b.local)
}

// initialItems lists the fleet's initial items.
func (b built) initialItems() []uint64 {
	var ids []uint64
	for v, l := range b.loads {
		for i := range l {
			ids = append(ids, InitialItemID(v, int(i)))
		}
	}
	return ids
}

var (
	portsMu   sync.Mutex
	portsUsed = map[int]bool{}
)

// freeAddr returns a free loopback address, with a port below the kernel's ephemeral
// range (32768 and up by default), so that a node restarted on its port does not find
// it taken by some outgoing connection.
// A port is handed out once per test process: the caller binds it later.
func freeAddr(t testing.TB) string {
	t.Helper()
	portsMu.Lock()
	defer portsMu.Unlock()
	for range 200 {
		port := 20000 + rand.IntN(12000)
		if portsUsed[port] {
			continue
		}
		ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err == nil {
			portsUsed[port] = true
			addr := ln.Addr().String()
			_ = ln.Close()
			return addr
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// configs makes the node configs of a fleet on loopback: peer(u, v) is the address u
// sends v's frames to (v's listen address, or a proxy's).
func configs(t testing.TB, b built, spec registry.Spec, dir string, peer func(u, v int, listen []string) string) []Config {
	n := b.g.Order()
	listen := make([]string, n)
	for v := range listen {
		listen[v] = freeAddr(t)
	}
	cfgs := make([]Config, n)
	key := testKeyFile(t, dir)
	for v := range n {
		peers := map[int]string{}
		for _, w := range b.g.Neighbors(v) {
			peers[int(w)] = peer(v, int(w), listen)
		}
		cfgs[v] = Config{ID: v, Spec: spec, Listen: listen[v], Status: freeAddr(t), Data: filepath.Join(dir, fmt.Sprint(v)),
			Peers: peers, Tick: Duration(DefaultTick), RetransmitTicks: 5, KeyFile: key}
	}
	return cfgs
}

// testKey is the secret of the tests' fleets (a fixed one: same seed, same result).
const testKey = "tokendist-test-key-0123456789abcdef0123456789abcdef"

// testKeyFile writes the tests' key file into dir (created if missing), readable by
// its owner only, and returns its path.
func testKeyFile(t testing.TB, dir string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "fleet.key")
	if err := os.WriteFile(path, []byte(testKey+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// sealed returns frame with the MAC the tests' key gives it (as a node of the
// tests' fleets sends it).
func sealed(frame []byte) []byte {
	return appendMAC(frame, deriveKeys([]byte(testKey)).frame)
}

// authClient is an HTTP client with the given timeout that sends the tests' fleets'
// bearer token with every request.
func authClient(timeout time.Duration) *http.Client {
	return &http.Client{Timeout: timeout, Transport: bearer{http.DefaultTransport}}
}

type bearer struct{ rt http.RoundTripper }

func (b bearer) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	authorize(req)
	return b.rt.RoundTrip(req)
}

// authorize sets req's bearer token to the tests' fleets' HTTP token.
func authorize(req *http.Request) {
	req.Header.Set("Authorization", "Bearer "+deriveKeys([]byte(testKey)).token)
}

// unsealed returns a frame a node of the tests' fleets sent without its MAC, for
// DecodeFrame; it fails the test when the MAC is wrong.
func unsealed(t testing.TB, frame []byte) []byte {
	t.Helper()
	body, ok := checkMAC(frame, deriveKeys([]byte(testKey)).frame)
	if !ok {
		t.Fatalf("frame %q has no valid MAC", frame)
	}
	return body
}

// exactlyOnce compares the items found (each occurrence) with the items expected: it
// returns the lost and doubled IDs and those nobody added.
func exactlyOnce(expected []uint64, found []uint64) (lost, doubled, unknown []uint64) {
	seen := make(map[uint64]int, len(found))
	for _, id := range found {
		seen[id]++
	}
	for _, id := range expected {
		switch seen[id] {
		case 0:
			lost = append(lost, id)
		case 1:
		default:
			doubled = append(doubled, id)
		}
		delete(seen, id)
	}
	for id := range seen {
		unknown = append(unknown, id)
	}
	sort.Slice(unknown, func(i, j int) bool { return unknown[i] < unknown[j] })
	return lost, doubled, unknown
}

// auditStores reads the persisted state of every node of a stopped fleet and returns
// every item it holds or has in flight (the consistent cut of docs/handoff.md: a log
// entry counts when its sequence number is above the receiver's delivered counter),
// and the settled loads: each node's load plus the tokens in flight to it (a token in
// flight is credited to its receiver; for THRESHOLD-1 in its stable regime every
// exchange swaps two loads, so the settled loads of any consistent cut are a
// permutation of a stable distribution's, and for RSW at a fixed point nothing moves).
func auditStores(t testing.TB, b built, cfgs []Config) (items []uint64, loads []int64) {
	t.Helper()
	n := b.g.Order()
	states := make([]handoff.State, n)
	for v := range n {
		s, err := OpenBoltStore(filepath.Join(cfgs[v].Data, StoreFile), nil)
		if err != nil {
			t.Fatal(err)
		}
		raw, err := s.Load()
		_ = s.Close()
		if err != nil {
			t.Fatal(err)
		}
		stored, err := DecodeStored(raw)
		raw = stored.State
		if err != nil {
			t.Fatal(err)
		}
		if states[v], err = handoff.DecodeState(raw); err != nil {
			t.Fatal(err)
		}
	}
	loads = make([]int64, n)
	for v, ps := range states {
		items = append(items, ps.Items...)
		loads[v] += ps.Load
		nb := b.g.Neighbors(v)
		for p, l := range ps.Links {
			w := int(nb[p])
			q := slices.Index(b.g.Neighbors(w), int32(v))
			for _, d := range l.Log {
				if d.Seq > states[w].Links[q].Delivered {
					items = append(items, d.Items...)
					loads[w] += d.Msg.Tokens
				}
			}
		}
	}
	return items, loads
}
