package fleet

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/tokendist/tokendist/handoff"
	"github.com/tokendist/tokendist/node"
	"github.com/tokendist/tokendist/registry"
)

// boundedFleet runs the two-node fleet of TestHandler (each config edited by edit)
// and serves node 0's and node 1's handlers; stop stops it and checks Run's errors.
type boundedFleet struct {
	t     *testing.T
	nodes [2]*Node
	srvs  [2]*httptest.Server
	stops [2]context.CancelFunc
	errc  [2]chan error
}

func startBounded(t *testing.T, tokens int, edit func(c *Config)) *boundedFleet {
	t.Helper()
	spec := registry.Spec{Network: choice("random-tree", map[string]any{"n": 2}), Loads: choice("point-mass", map[string]any{"tokens": tokens}), Algorithm: choice("threshold-1", nil)}
	b := build(t, spec)
	cfgs := configs(t, b, spec, t.TempDir(), func(_, v int, listen []string) string { return listen[v] })
	f := &boundedFleet{t: t}
	for v := range 2 {
		if edit != nil {
			edit(&cfgs[v])
		}
		nd, err := NewNode(cfgs[v], nil)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		f.nodes[v], f.stops[v], f.errc[v] = nd, cancel, make(chan error, 1)
		go func() { f.errc[v] <- nd.Run(ctx) }()
		f.srvs[v] = httptest.NewServer(nd.Handler())
	}
	return f
}

func (f *boundedFleet) do(v int, method, path, body string) (int, string) {
	f.t.Helper()
	req, _ := http.NewRequest(method, f.srvs[v].URL+path, strings.NewReader(body))
	authorize(req)
	resp, err := f.srvs[v].Client().Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(out)
}

func (f *boundedFleet) stop() {
	f.t.Helper()
	for v := range 2 {
		f.srvs[v].Close()
		f.srvs[v].Client().CloseIdleConnections()
		f.stops[v]()
		if err := <-f.errc[v]; err != nil {
			f.t.Errorf("node %d: Run: %v", v, err)
		}
	}
}

// TestHandlerStrictJSON: on main, /work and /complete answered 200 to a body with
// trailing garbage, a second object or a repeated key (the decoder read the first
// value, and the last of the repeated keys), and read at most 8 MiB of any body,
// decoding the truncated prefix (400 "unexpected EOF" rather than 413).
func TestHandlerStrictJSON(t *testing.T) {
	defer goleak.VerifyNone(t)
	f := startBounded(t, 6, nil)
	defer f.stop()
	for _, tc := range []struct {
		path, body string
		code       int
		want       string
	}{
		{"/work", `{"items":[9223372036854775808]} garbage`, 400, "trailing data"},
		{"/work", `{"items":[9223372036854775808]}{"items":[9223372036854775809]}`, 400, "a second JSON value"},
		{"/work", `{"items":[9223372036854775808],"items":[9223372036854775809]}`, 400, `repeated key "items"`},
		{"/work", `{"items":[9223372036854775808],"Items":[9223372036854775809]}`, 400, `repeated key "Items"`},
		{"/work", `{"items":[9223372036854775808],"more":1}`, 400, `unknown field "more"`},
		{"/work", ``, 400, "empty JSON document"},
		{"/complete", `{"count":1}{"count":2}`, 400, "a second JSON value"},
		{"/complete", `{"count":1,"count":2}`, 400, `repeated key "count"`},
		{"/complete", `{"count":1}]`, 400, "trailing data"},
		{"/work", `{"items":[` + strings.Repeat("1,", maxRequestBytes/2) + `1]}`, 413, fmt.Sprintf("over the limit of %d bytes", maxRequestBytes)},
	} {
		code, body := f.do(0, "POST", tc.path, tc.body)
		if code != tc.code || !strings.HasPrefix(body, "tokendist: ") || !strings.Contains(body, tc.want) {
			t.Errorf("POST %s %s: %d %q; want %d with %q", tc.path, errsQuote(tc.body), code, body, tc.code, tc.want)
		}
	}
	// Nothing of the refused requests was done.
	if st := f.nodes[0].Snapshot(); st.Added != 0 || st.Completed != 0 {
		t.Errorf("after refused requests: added %d, completed %d", st.Added, st.Completed)
	}
}

func errsQuote(s string) string {
	if len(s) > 60 {
		return fmt.Sprintf("%q... (%d bytes)", s[:60], len(s))
	}
	return fmt.Sprintf("%q", s)
}

// TestWorkDuplicateIDs: on main, /work took an ID twice in one request, and an ID
// the node held already, and /complete then returned that ID more than once (the
// review saw one ID 3 times in one answer).
func TestWorkDuplicateIDs(t *testing.T) {
	defer goleak.VerifyNone(t)
	f := startBounded(t, 0, nil)
	defer f.stop()
	const id = uint64(1) << 63
	if code, body := f.do(0, "POST", "/work", fmt.Sprintf(`{"items":[%d,%d,%d]}`, id+1, id, id)); code != 400 || !strings.Contains(body, fmt.Sprintf("item %d appears twice", id)) {
		t.Errorf("POST /work with an ID twice: %d %s; want 400 naming %d", code, body, id)
	}
	if code, body := f.do(0, "POST", "/work", fmt.Sprintf(`{"items":[%d]}`, id)); code != 200 {
		t.Fatalf("POST /work: %d %s", code, body)
	}
	// Node 0 holds id (the threshold-1 balancer does not move one token of two nodes).
	if code, body := f.do(0, "POST", "/work", fmt.Sprintf(`{"items":[%d,%d]}`, id+2, id)); code != http.StatusConflict || !strings.Contains(body, fmt.Sprintf("item %d is held by the node", id)) {
		t.Errorf("POST /work with a held ID: %d %s; want 409 naming %d", code, body, id)
	}
	if code, body := f.do(0, "POST", "/work", fmt.Sprintf(`{"items":[%d,%d,%d]}`, id+1, id+2, id+3)); code != 200 {
		t.Fatalf("POST /work: %d %s", code, body)
	}
	waitFor(t, "balance", func() bool { return f.nodes[0].Snapshot().Load == 2 && f.nodes[1].Snapshot().Load == 2 })
	// Complete at both nodes until the four are out (at most 5 s): between two calls
	// the balancer may move an item from the node not yet drained to the one drained.
	seen := map[uint64]int{}
	for deadline := time.Now().Add(5 * time.Second); len(seen) < 4 && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		for v := range 2 {
			code, body := f.do(v, "POST", "/complete", `{"count":10}`)
			var items ItemsResponse
			if code != 200 || json.Unmarshal([]byte(body), &items) != nil {
				t.Fatalf("POST /complete: %d %s", code, body)
			}
			for _, x := range items.Items {
				seen[x]++
			}
		}
	}
	if len(seen) != 4 {
		t.Errorf("completed %v; want the 4 IDs added", seen)
	}
	for x, k := range seen {
		if k != 1 || x < id || x > id+3 {
			t.Errorf("item %d completed %d times", x, k)
		}
	}
}

// TestWorkOverFrame: on main, /work took any number of items; once a node's program
// sent a message carrying more than about 100,000 of them the transport refused the
// frame and Run returned an error, after the items were persisted, so the restarted
// node failed again (a crash loop). Now /work refuses with 413, and a node that could
// not send what it would hold leaves a datagram with its sender (Status.Deferred).
func TestWorkOverFrame(t *testing.T) {
	defer goleak.VerifyNone(t)
	f := startBounded(t, 0, func(c *Config) { c.MaxFrame = MinMaxFrame })
	defer f.stop()
	nd := f.nodes[0]
	if got, want := nd.MaxItemBytes(), MinMaxFrame-MaxFrameOverhead; got != want {
		t.Fatalf("MaxItemBytes = %d; want %d", got, want)
	}
	// IDs of 10 bytes each: k fit, k+1 do not.
	k := nd.MaxItemBytes() / 10
	ids := func(from, n int) string {
		var b strings.Builder
		for i := range n {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprint(&b, uint64(1)<<63+uint64(from+i))
		}
		return `{"items":[` + b.String() + `]}`
	}
	if code, body := f.do(0, "POST", "/work", ids(0, k+1)); code != http.StatusRequestEntityTooLarge || !strings.Contains(body, fmt.Sprintf("over the limit of %d", nd.MaxItemBytes())) {
		t.Fatalf("POST /work of %d items: %d %s; want 413 naming the limit", k+1, code, body)
	}
	if code, body := f.do(0, "POST", "/work", ids(0, k)); code != 200 {
		t.Fatalf("POST /work of %d items: %d %s", k, code, body)
	}
	// The balancer moves half to node 1; node 0 then has room for that many again.
	waitFor(t, "balance", func() bool { return nd.Snapshot().Load == int64(k-k/2) && f.nodes[1].Snapshot().Load == int64(k/2) })
	if code, body := f.do(0, "POST", "/work", ids(k, k/2+1)); code != http.StatusRequestEntityTooLarge {
		t.Fatalf("POST /work of %d more items: %d %s; want 413", k/2+1, code, body)
	}
	if code, body := f.do(0, "POST", "/work", ids(k, k/2)); code != 200 {
		t.Fatalf("POST /work of %d more items: %d %s", k/2, code, body)
	}
	// 3k/2 items in all: threshold-1 leaves the two loads at most 1 apart.
	waitFor(t, "balance", func() bool {
		a, b := nd.Snapshot().Load, f.nodes[1].Snapshot().Load
		return a+b == int64(k+k/2) && a-b <= 1 && b-a <= 1
	})
}

// nopTransport drops what is sent, counting it.
type nopTransport struct{ sent *atomic.Int64 }

func (t nopTransport) Send(int, []byte) error { t.sent.Add(1); return nil }
func (nopTransport) Close() error             { return nil }

// startNopNode runs node 0 of a two-node tree with MaxFrame at its least, on a
// transport that discards what it is given, counting it in sent; recv hands the node a
// frame. stop ends Run and reports its error.
func startNopNode(t *testing.T) (nd *Node, ctx context.Context, recv func(int, []byte), sent *atomic.Int64, stop func()) {
	t.Helper()
	spec := registry.Spec{Network: choice("random-tree", map[string]any{"n": 2}), Loads: choice("point-mass", map[string]any{"tokens": 0}), Algorithm: choice("threshold-1", nil)}
	b := build(t, spec)
	cfgs := configs(t, b, spec, t.TempDir(), func(_, v int, listen []string) string { return listen[v] })
	c := cfgs[0]
	c.MaxFrame = MinMaxFrame
	recvc := make(chan func(int, []byte), 1)
	sent = new(atomic.Int64)
	nd, err := NewNode(c, &Options{Transport: func(recv func(int, []byte)) (Transport, error) {
		recvc <- recv
		return nopTransport{sent}, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	recv = <-recvc
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- nd.Run(ctx) }()
	return nd, ctx, recv, sent, func() {
		cancel()
		if err := <-errc; err != nil {
			t.Error(err)
		}
	}
}

// TestDeferOverFrame: a data datagram whose items the node could not send on (they
// would take more than MaxItemBytes with the items it holds) is left with its sender
// and counted in Status.Deferred; on main it was delivered, and the node's next
// message of its whole load would have been refused by the transport, ending Run.
func TestDeferOverFrame(t *testing.T) {
	defer goleak.VerifyNone(t)
	nd, ctx, recv, sent, stop := startNopNode(t)
	defer stop()
	k := nd.MaxItemBytes() / 10
	var held []uint64
	for i := range k - 1 {
		held = append(held, 1<<63+uint64(i))
	}
	if err := nd.AddItems(ctx, held); err != nil {
		t.Fatal(err)
	}
	// Two 10-byte items from node 1: one more than fits.
	frame := sealed(AppendFrame(nil, FrameHeader{Fleet: nd.id.Fleet, From: 1, To: 0, Epoch: 1, Incarnation: 1},
		handoff.Datagram{Kind: handoff.DatagramData, Seq: 1, Msg: node.Message{Kind: 1, Tokens: 2}, Items: []uint64{1<<63 + 1<<40, 1<<63 + 1<<40 + 1}}))
	recv(1, frame)
	waitFor(t, "deferred", func() bool { return nd.Snapshot().Deferred == 1 })
	if st := nd.Snapshot(); st.Load != int64(k-1) || st.Delivered != 0 {
		t.Fatalf("after a deferred datagram: load %d, delivered %d; want %d, 0", st.Load, st.Delivered, k-1)
	}
	// With room (one item completed) the retransmission is taken.
	if _, err := nd.CompleteItems(ctx, 1); err != nil {
		t.Fatal(err)
	}
	recv(1, frame)
	waitFor(t, "delivered", func() bool { return nd.Snapshot().Delivered == 1 })
	if st := nd.Snapshot(); st.Deferred != 1 || st.Load < int64(k-2) {
		t.Errorf("after the retransmission: %+v", st)
	}
	// The limit itself: items of exactly MaxItemBytes are taken, one byte more is not.
	room := nd.MaxItemBytes()
	items, err := nd.Items(ctx)
	if err != nil {
		t.Fatal(err)
	}
	room -= itemBytes(items)
	var fill []uint64
	for i := 0; room > 0; i++ {
		id := uint64(1)<<63 + 1<<50 + uint64(i)
		if room < 10 {
			id = 1<<(7*(room-1)) + uint64(i) // room bytes
		}
		fill = append(fill, id)
		room -= uvarintLen(id)
	}
	if err := nd.AddItems(ctx, fill); err != nil {
		t.Fatalf("AddItems of exactly the room left: %v", err)
	}
	err = nd.AddItems(ctx, []uint64{2})
	want := fmt.Sprintf("would make the %d items it holds %d bytes in a frame, over the limit of %d (MaxItemBytes: TCPOptions.MaxFrame %d less %d bytes of header)",
		len(items)+len(fill)+1, nd.MaxItemBytes()+1, nd.MaxItemBytes(), MinMaxFrame, MaxFrameOverhead)
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("AddItems of one byte over: %v; want %q", err, want)
	}
	st := nd.Snapshot()
	if st.Added != int64(k-1+len(fill)) || st.Load != int64(len(items)+len(fill)) {
		t.Errorf("added %d, load %d; want %d, %d", st.Added, st.Load, k-1+len(fill), len(items)+len(fill))
	}
	if st.Sent != sent.Load() {
		t.Errorf("Status.Sent %d; the transport had %d", st.Sent, sent.Load())
	}
}

// TestReadConfigStrict: on main, a config file with a repeated key (at any depth),
// trailing data or a second object was read (the last repeated key, the first
// object), and retransmit_ticks 2^62 and tick 1µs were accepted.
func TestReadConfigStrict(t *testing.T) {
	good := Config{ID: 1, Spec: registry.Spec{Network: choice("torus", map[string]any{"sides": []int{3, 3}}), Loads: choice("uniform-random", map[string]any{"tokens": 9}),
		Algorithm: choice("rsw-diffusion", nil)}, Listen: "127.0.0.1:1", Status: "127.0.0.1:2", Data: "d", Peers: map[int]string{0: "127.0.0.1:3"}, KeyFile: "k"}
	b, err := json.Marshal(good)
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	inner := strings.Replace(text, `"name":"torus"`, `"name":"torus","name":"ring"`, 1)
	if inner == text {
		t.Fatalf("no network name in %s", text)
	}
	for _, tc := range []struct{ text, want string }{
		{text + ` {}`, "a second JSON value"},
		{text + ` x`, "trailing data"},
		{strings.Replace(text, `{"id":1,`, `{"id":1,"id":2,`, 1), `repeated key "id" at $`},
		{inner, `repeated key "name" at $.spec.network`},
		{strings.Replace(text, `"data":"d"`, `"data":"d","retransmit_ticks":4611686018427387904`, 1), "retransmit_ticks 4611686018427387904: want 0 (the default) ≤ retransmit_ticks ≤ 1048576"},
		{strings.Replace(text, `"data":"d"`, `"data":"d","retransmit_ticks":-1`, 1), "retransmit_ticks -1"},
		{strings.Replace(text, `"data":"d"`, `"data":"d","tick":"1µs"`, 1), "tick 1µs: want 0 (the default 10ms) or 1ms ≤ tick ≤ 1m0s"},
		{strings.Replace(text, `"data":"d"`, `"data":"d","tick":"2m"`, 1), "tick 2m0s"},
		{strings.Replace(text, `"data":"d"`, `"data":"d","patience":1099511627777`, 1), "patience 1099511627777"},
		{strings.Replace(text, `"data":"d"`, `"data":"d","rounds":1099511627777`, 1), "rounds 1099511627777"},
		{strings.Replace(text, `"data":"d"`, `"data":"d","max_frame":4095`, 1), "max_frame 4095"},
		{strings.Replace(text, `"data":"d"`, `"data":"d","max_frame":67108865`, 1), "max_frame 67108865"},
		{strings.Replace(text, `{"id":1,`, `{"id":2147483648,`, 1), "id 2147483648"},
	} {
		p := filepath.Join(t.TempDir(), "node.json")
		if err := os.WriteFile(p, []byte(tc.text), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := ReadConfig(p)
		if err == nil || !strings.HasPrefix(err.Error(), "tokendist: ") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ReadConfig(%s): %v; want %q", tc.text, err, tc.want)
		}
	}
	// The bounds themselves are accepted.
	for _, edit := range []func(c *Config){
		func(c *Config) {
			c.Tick, c.RetransmitTicks, c.MaxFrame = Duration(MinTick), MaxRetransmitTicks, MinMaxFrame
		},
		func(c *Config) {
			c.Tick, c.Patience, c.Rounds, c.MaxFrame, c.ID = Duration(MaxTick), MaxTicks, MaxTicks, MaxMaxFrame, MaxNodeID
		},
	} {
		c := good
		edit(&c)
		if err := c.Check(); err != nil {
			t.Errorf("Check(%+v): %v", c, err)
		}
	}
}

// TestRestoreOverFrame: a node restarted with a smaller max_frame than the items it
// holds need refuses to start, naming the limit (on main there was no max_frame; a
// node holding more than a frame's items failed only when its program sent them).
func TestRestoreOverFrame(t *testing.T) {
	defer goleak.VerifyNone(t)
	spec := registry.Spec{Network: choice("random-tree", map[string]any{"n": 2}), Loads: choice("point-mass", map[string]any{"tokens": 0}), Algorithm: choice("threshold-1", nil)}
	b := build(t, spec)
	cfgs := configs(t, b, spec, t.TempDir(), func(_, v int, listen []string) string { return listen[v] })
	nd, err := NewNode(cfgs[0], nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- nd.Run(ctx) }()
	var ids []uint64
	for i := range 1000 {
		ids = append(ids, 1<<63+uint64(i))
	}
	err = nd.AddItems(ctx, ids)
	cancel()
	if err2 := <-errc; err != nil || err2 != nil {
		t.Fatal(err, err2)
	}
	c := cfgs[0]
	c.MaxFrame = MinMaxFrame
	nd, err = NewNode(c, nil)
	if err == nil {
		_ = nd.Close()
		t.Fatal("NewNode with a max_frame too small for the items held succeeded")
	}
	if !strings.HasPrefix(err.Error(), "tokendist: ") || !strings.Contains(err.Error(), fmt.Sprintf("over the limit of %d (max_frame %d", MinMaxFrame-MaxFrameOverhead, MinMaxFrame)) {
		t.Errorf("NewNode: %v", err)
	}
	nd, err = NewNode(cfgs[0], nil)
	if err != nil {
		t.Fatalf("NewNode with the max_frame it ran with: %v", err)
	}
	_ = nd.Close()
}

// TestInitialOverFrame: a node whose initial items would not fit one frame refuses
// to start, naming the limit, instead of failing when its program sends them.
func TestInitialOverFrame(t *testing.T) {
	defer goleak.VerifyNone(t)
	// 3000 initial items on one node: IDs 0..2999 take 128·1 + 2872·2 = 5872 bytes.
	spec := registry.Spec{Network: choice("random-tree", map[string]any{"n": 2}), Loads: choice("point-mass", map[string]any{"tokens": 3000}), Algorithm: choice("threshold-1", nil)}
	b := build(t, spec)
	cfgs := configs(t, b, spec, t.TempDir(), func(_, v int, listen []string) string { return listen[v] })
	refused := 0
	for v := range 2 {
		c := cfgs[v]
		c.MaxFrame = MinMaxFrame
		nd, err := NewNode(c, nil)
		if err != nil {
			refused++
			if !strings.Contains(err.Error(), fmt.Sprintf("3000 initial items take 5872 bytes in a frame, over the limit of %d", MinMaxFrame-MaxFrameOverhead)) {
				t.Errorf("NewNode(%d): %v", v, err)
			}
			continue
		}
		_ = nd.Close()
	}
	if refused != 1 {
		t.Errorf("%d nodes refused; want the one with the 3000 items", refused)
	}
}
