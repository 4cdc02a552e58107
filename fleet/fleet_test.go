package fleet

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/tokendist/tokendist/node"

	"go.uber.org/goleak"

	"github.com/tokendist/tokendist"
	"github.com/tokendist/tokendist/handoff"
	"github.com/tokendist/tokendist/registry"
)

// appendV1Frame is the version-1 encoding (before the identity header), for the
// seeds of FuzzDecodeFrame and the check that version 1 is refused.
func appendV1Frame(b []byte, d handoff.Datagram) []byte {
	b = append(b, 1, byte(d.Kind))
	b = binary.AppendUvarint(b, d.Seq)
	b, _ = d.Msg.AppendBinary(b)
	b = binary.AppendUvarint(b, uint64(len(d.Items)))
	for _, id := range d.Items {
		b = binary.AppendUvarint(b, id)
	}
	return b
}

func TestFrameRoundTrip(t *testing.T) {
	hs := []FrameHeader{{Fleet: 1, From: 0, To: 1<<31 - 1, Epoch: 1, Incarnation: 1}, {Fleet: 1<<64 - 1, From: 1<<31 - 1, To: 7, Epoch: 1 << 40, Incarnation: 1 << 63}}
	for i, d := range []handoff.Datagram{
		{Kind: handoff.DatagramAck, Seq: 7},
		{Kind: handoff.DatagramData, Seq: 1, Msg: node.Message{Kind: 2, Round: -3, Value: 1 << 40, Tokens: 0, Counted: true}},
		{Kind: handoff.DatagramData, Seq: 1 << 50, Msg: node.Message{Kind: 9, Round: 5, Tokens: 3}, Items: []uint64{0, 1 << 63, 42}},
	} {
		h := hs[i%len(hs)]
		b := AppendFrame(nil, h, d)
		d.Port = 4
		gh, got, err := DecodeFrame(b, 4)
		if err != nil || !reflect.DeepEqual(got, d) || gh != h {
			t.Fatalf("DecodeFrame(AppendFrame(%+v, %+v)) = %+v, %+v, %v", h, d, gh, got, err)
		}
		for cut := range len(b) {
			if _, _, err := DecodeFrame(b[:cut], 0); err == nil {
				t.Fatalf("a frame cut to %d of %d bytes decoded", cut, len(b))
			}
		}
		if _, _, err := DecodeFrame(append(b, 0), 0); err == nil {
			t.Fatal("a frame with a trailing byte decoded")
		}
		// The same datagram in version 1 is refused, saying so.
		_, _, err = DecodeFrame(appendV1Frame(nil, d), 0)
		if err == nil || !strings.Contains(err.Error(), "version-1 frame") {
			t.Fatalf("a version-1 frame: %v; want an error naming version 1", err)
		}
	}
	for _, b := range [][]byte{nil, {3, 1, 0}, {2, 3, 0}, {1, 2, 1, 1, 0, 0, 0, 0, 0},
		AppendFrame(nil, FrameHeader{Fleet: 1, From: 1 << 31, To: 0, Epoch: 1, Incarnation: 1}, handoff.Datagram{Kind: handoff.DatagramAck}),
		AppendFrame(nil, FrameHeader{Fleet: 1, From: 0, To: 1 << 31, Epoch: 1, Incarnation: 1}, handoff.Datagram{Kind: handoff.DatagramAck}),
		AppendFrame(nil, FrameHeader{Fleet: 1, From: 0, To: 1, Epoch: 1}, handoff.Datagram{Kind: handoff.DatagramAck}),
		AppendFrame(nil, FrameHeader{Fleet: 1, From: 0, To: 1, Incarnation: 1}, handoff.Datagram{Kind: handoff.DatagramAck}),
	} {
		if _, _, err := DecodeFrame(b, 0); err == nil || !strings.HasPrefix(err.Error(), "tokendist: ") || !errors.Is(err, tokendist.ErrBadParameter) {
			t.Errorf("DecodeFrame(%v) = %v; want a tokendist bad-parameter error", b, err)
		}
	}
}

// FuzzDecodeFrame: DecodeFrame never panics, and what it accepts encodes back to the
// same bytes.
func FuzzDecodeFrame(f *testing.F) {
	// Version-1 seeds (refused now; kept as a corpus of near-misses).
	f.Add(appendV1Frame(nil, handoff.Datagram{Kind: handoff.DatagramAck, Seq: 3}))
	f.Add(appendV1Frame(nil, handoff.Datagram{Kind: handoff.DatagramData, Seq: 2, Msg: node.Message{Kind: 1, Round: 4, Value: -9, Tokens: 2, Counted: true}, Items: []uint64{5, 1 << 62}}))
	h := FrameHeader{Fleet: 0xfeedface12345678, From: 3, To: 9, Epoch: 2, Incarnation: 77}
	f.Add(AppendFrame(nil, h, handoff.Datagram{Kind: handoff.DatagramAck, Seq: 3}))
	f.Add(AppendFrame(nil, h, handoff.Datagram{Kind: handoff.DatagramData, Seq: 2, Msg: node.Message{Kind: 1, Round: 4, Value: -9, Tokens: 2, Counted: true}, Items: []uint64{5, 1 << 62}}))
	f.Add(AppendFrame(nil, FrameHeader{Fleet: 1<<64 - 1, From: 1<<31 - 1, To: 0, Epoch: 1<<64 - 1, Incarnation: 1<<64 - 1}, handoff.Datagram{Kind: handoff.DatagramData, Seq: 1}))
	f.Fuzz(func(t *testing.T, b []byte) {
		h, d, err := DecodeFrame(b, 1)
		if err != nil {
			return
		}
		if len(d.Items) > len(b) {
			t.Fatalf("%d items from %d bytes", len(d.Items), len(b))
		}
		if h.From < 0 || h.To < 0 || h.Epoch == 0 || h.Incarnation == 0 {
			t.Fatalf("accepted header %+v", h)
		}
		if again := AppendFrame(nil, h, d); string(again) != string(b) {
			// Varints have one canonical form only when minimal; accept equal decodes.
			h2, d2, err := DecodeFrame(again, 1)
			if err != nil || !reflect.DeepEqual(d, d2) || h != h2 {
				t.Fatalf("re-encoding %x gives %x, decoding to %+v %+v", b, again, h2, d2)
			}
		}
	})
}

func ExampleDecodeFrame() {
	frame := appendFrameExample()
	h, d, err := DecodeFrame(frame, 0)
	fmt.Println(h.From, h.To, d.Kind, d.Seq, d.Msg.Tokens, d.Items, err)
	// Output: 4 5 Data 1 2 [17179869184 17179869185] <nil>
}

func appendFrameExample() []byte {
	return AppendFrame(nil, FrameHeader{Fleet: 0xabc, From: 4, To: 5, Epoch: 1, Incarnation: 1},
		handoff.Datagram{Kind: handoff.DatagramData, Seq: 1, Msg: node.Message{Kind: 1, Round: 1, Tokens: 2},
			Items: []uint64{InitialItemID(4, 0), InitialItemID(4, 1)}})
}

func ExampleInitialItemID() {
	fmt.Printf("%#x %#x\n", InitialItemID(0, 5), InitialItemID(3, 0))
	// Output: 0x5 0x300000000
}

func writeConfig(t *testing.T, c any) string {
	t.Helper()
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "node.json")
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestReadConfig(t *testing.T) {
	good := Config{ID: 1, Spec: registry.Spec{Network: choice("torus", map[string]any{"sides": []int{3, 3}}), Loads: choice("uniform-random", map[string]any{"tokens": 9}),
		Algorithm: choice("rsw-diffusion", nil)}, Listen: "127.0.0.1:1", Status: "127.0.0.1:2", Data: "d", Peers: map[int]string{0: "127.0.0.1:3"}, Tick: Duration(5 * time.Millisecond), KeyFile: "k"}
	c, err := ReadConfig(writeConfig(t, good))
	if err != nil || c.ID != 1 || c.tick() != 5*time.Millisecond || c.Peers[0] != "127.0.0.1:3" {
		t.Fatalf("ReadConfig = %+v, %v", c, err)
	}
	if s := c.String(); !strings.Contains(s, "node 1 of torus/rsw-diffusion") {
		t.Errorf("String = %q", s)
	}
	for _, tc := range []struct {
		edit func(m map[string]any)
		want string
	}{
		{func(m map[string]any) { m["id"] = -1 }, "id -1"},
		{func(m map[string]any) { m["bogus"] = 1 }, "bogus"},
		{func(m map[string]any) { m["listen"] = "nope" }, "listen address"},
		{func(m map[string]any) { m["status"] = "" }, "status address"},
		{func(m map[string]any) { m["data"] = "" }, "data directory"},
		{func(m map[string]any) { m["tick"] = "fast" }, "duration"},
		{func(m map[string]any) { m["tick"] = 5 }, "duration"},
		{func(m map[string]any) { m["patience"] = -2 }, "patience"},
		{func(m map[string]any) { m["peers"] = map[string]string{"0": "x"} }, "peers[0]"},
	} {
		b, _ := json.Marshal(good)
		var m map[string]any
		_ = json.Unmarshal(b, &m)
		tc.edit(m)
		_, err := ReadConfig(writeConfig(t, m))
		if err == nil || !strings.HasPrefix(err.Error(), "tokendist: ") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ReadConfig with %s: %v", tc.want, err)
		}
	}
	if _, err := ReadConfig(filepath.Join(t.TempDir(), "missing.json")); err == nil {
		t.Error("ReadConfig of a missing file succeeded")
	}
}

func TestNewNodeErrors(t *testing.T) {
	spec := registry.Spec{Network: choice("torus", map[string]any{"sides": []int{3, 3}}), Loads: choice("uniform-random", map[string]any{"tokens": 9}), Algorithm: choice("rsw-diffusion", nil)}
	b := build(t, spec)
	cfgs := configs(t, b, spec, t.TempDir(), func(_, v int, listen []string) string { return listen[v] })
	for _, tc := range []struct {
		edit func(c *Config)
		want string
	}{
		{func(c *Config) { c.ID = 9 }, "nodes 0..8"},
		{func(c *Config) { delete(c.Peers, int(b.g.Neighbors(0)[0])) }, "no address for neighbour"},
		{func(c *Config) { c.Peers[8] = "127.0.0.1:1" }, "peers[8] is not a neighbour"},
		{func(c *Config) { c.Spec.Algorithm = choice("no-such-algorithm", nil) }, "no-such-algorithm"},
		{func(c *Config) { c.Spec.Algorithm = choice("perfect-tree", nil) }, "perfect-tree"},
		{func(c *Config) { c.Data = "" }, "data directory"},
	} {
		c := cfgs[0]
		c.Peers = map[int]string{}
		for k, v := range cfgs[0].Peers {
			c.Peers[k] = v
		}
		tc.edit(&c)
		nd, err := NewNode(c, nil)
		if err == nil {
			_ = nd.Close()
			t.Errorf("NewNode with %s succeeded", tc.want)
			continue
		}
		if !strings.HasPrefix(err.Error(), "tokendist: ") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("NewNode: %v; want %q", err, tc.want)
		}
	}
}

// TestHandler drives the HTTP endpoint of a two-node fleet.
func TestHandler(t *testing.T) {
	defer goleak.VerifyNone(t)
	spec := registry.Spec{Network: choice("random-tree", map[string]any{"n": 2}), Loads: choice("point-mass", map[string]any{"tokens": 6}), Algorithm: choice("threshold-1", nil)}
	b := build(t, spec)
	cfgs := configs(t, b, spec, t.TempDir(), func(_, v int, listen []string) string { return listen[v] })
	var nodes [2]*Node
	var stops [2]context.CancelFunc
	var errc [2]chan error
	for v := range 2 {
		nd, err := NewNode(cfgs[v], nil)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		nodes[v], stops[v], errc[v] = nd, cancel, make(chan error, 1)
		go func() { errc[v] <- nd.Run(ctx) }()
	}
	srv := httptest.NewServer(nodes[0].Handler())
	defer srv.Close()
	defer srv.Client().CloseIdleConnections()
	do := func(method, path, body string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		authorize(req)
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(out)
	}
	if code, body := do("POST", "/work", `{"items":[9223372036854775808,9223372036854775809]}`); code != 200 || !strings.Contains(body, `"added":2`) {
		t.Fatalf("POST /work: %d %s", code, body)
	}
	// Balanced: THRESHOLD-1 on two nodes with 8 tokens ends with 4 and 4.
	waitFor(t, "balance", func() bool { return nodes[0].Snapshot().Load == 4 && nodes[1].Snapshot().Load == 4 })
	code, body := do("GET", "/metrics", "")
	for _, want := range []string{"# TYPE tokendist_node_load gauge", `tokendist_node_load{node="0"} 4`, "tokendist_node_moved_tokens_total", "tokendist_node_first_delivery_seconds"} {
		if code != 200 || !strings.Contains(body, want) {
			t.Fatalf("GET /metrics: %d, no %q in\n%s", code, want, body)
		}
	}
	var st Status
	if code, body := do("GET", "/status", ""); code != 200 || json.Unmarshal([]byte(body), &st) != nil || st.Load != 4 || st.Added != 2 {
		t.Fatalf("GET /status: %d %s", code, body)
	}
	var items ItemsResponse
	if code, body := do("GET", "/items", ""); code != 200 || json.Unmarshal([]byte(body), &items) != nil || len(items.Items) != 4 {
		t.Fatalf("GET /items: %d %s", code, body)
	}
	if code, body := do("POST", "/complete", `{"count":3}`); code != 200 || json.Unmarshal([]byte(body), &items) != nil || len(items.Items) != 3 {
		t.Fatalf("POST /complete: %d %s", code, body)
	}
	for _, tc := range []struct {
		method, path, body string
		code               int
	}{
		{"POST", "/work", `{"items":"x"}`, 400},
		{"POST", "/work", `{"unknown":1}`, 400},
		{"POST", "/complete", `{"count":-1}`, 400},
		{"POST", "/complete", `{"count":0}`, 200}, // nothing completed, not refused
		{"DELETE", "/status", "", 405},
		{"GET", "/work", "", 405},
	} {
		if code, body := do(tc.method, tc.path, tc.body); code != tc.code {
			t.Errorf("%s %s %s: %d %s; want %d", tc.method, tc.path, tc.body, code, body, tc.code)
		}
	}
	for v := range 2 {
		stops[v]()
		if err := <-errc[v]; err != nil {
			t.Fatal(err)
		}
	}
	if code, _ := do("GET", "/items", ""); code != http.StatusServiceUnavailable {
		t.Errorf("GET /items on a stopped node: %d; want 503", code)
	}
}
