package fleet

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/tokendist/tokendist"
	"github.com/tokendist/tokendist/handoff"
	"github.com/tokendist/tokendist/node"
	"github.com/tokendist/tokendist/registry"
)

// TestFrameMAC: a sealed frame opens to itself under its key; under another key,
// with any one bit flipped, cut short or without its tag it does not; the tag is
// MACSize bytes; the frame and HTTP keys differ and neither is the secret.
func TestFrameMAC(t *testing.T) {
	k := deriveKeys([]byte(testKey))
	other := deriveKeys([]byte(testKey + "x"))
	if len(k.frame) != 32 || len(k.token) != 64 || strings.Contains(k.token, fmt.Sprintf("%x", k.frame)) || string(k.frame) == testKey {
		t.Fatalf("keys %x, %q", k.frame, k.token)
	}
	if string(other.frame) == string(k.frame) || other.token == k.token {
		t.Fatal("two secrets give the same keys")
	}
	frame := AppendFrame(nil, FrameHeader{Fleet: 7, From: 1, To: 2, Epoch: 3, Incarnation: 4},
		handoff.Datagram{Kind: handoff.DatagramData, Seq: 5, Msg: node.Message{Kind: 1, Tokens: 2}, Items: []uint64{9, 1 << 40}})
	s := appendMAC(append([]byte{}, frame...), k.frame)
	if len(s) != len(frame)+MACSize {
		t.Fatalf("sealed %d bytes, frame %d; want %d more", len(s), len(frame), MACSize)
	}
	body, ok := checkMAC(s, k.frame)
	if !ok || string(body) != string(frame) {
		t.Fatalf("checkMAC of a sealed frame: %v, %q", ok, body)
	}
	if _, ok := checkMAC(s, other.frame); ok {
		t.Error("a frame sealed under another key was accepted")
	}
	for i := range s {
		for bit := range 8 {
			f := append([]byte{}, s...)
			f[i] ^= 1 << bit
			if _, ok := checkMAC(f, k.frame); ok {
				t.Fatalf("byte %d bit %d flipped: accepted", i, bit)
			}
		}
	}
	for cut := range len(s) {
		if _, ok := checkMAC(s[:cut], k.frame); ok {
			t.Fatalf("cut to %d bytes: accepted", cut)
		}
	}
	if _, ok := checkMAC(frame, k.frame); ok {
		t.Error("a frame without a MAC was accepted")
	}
	// The tag alone is the MAC of the empty frame (which DecodeFrame refuses next).
	if body, ok := checkMAC(appendMAC(nil, k.frame), k.frame); !ok || len(body) != 0 {
		t.Errorf("the MAC of the empty frame: %v, %q", ok, body)
	}
}

// TestForgedFramesRefused steps forged frames into an in-process node: a data frame
// and an acknowledgement without a MAC, under another key, a valid frame with one
// byte flipped, and valid frames replayed onto another link or to another node. None
// changes the node (its items, load, links); each is counted in Refused (MAC,
// Sender, Receiver), Rejected and /metrics, and the MAC refusals are a link fault.
// Then the same acknowledgement, validly sealed, is applied: the forged ones would
// have acknowledged the node's unacknowledged data (on main a forged acknowledgement
// dropped the items it carried).
func TestForgedFramesRefused(t *testing.T) {
	defer goleak.VerifyNone(t)
	nd, done := bareNode(t, nil, 0)
	defer done()
	port, w := -1, 0
	for p, v := range nd.nbrs {
		if nd.nd.Sequence(p).Next > nd.nd.Sequence(p).Acked+1 {
			port, w = p, v
			break
		}
	}
	if port < 0 {
		t.Fatal("node 0 has no unacknowledged data after its start")
	}
	other := nd.nbrs[(port+1)%len(nd.nbrs)]
	seq := nd.nd.Sequence(port)
	h := FrameHeader{Fleet: nd.id.Fleet, From: w, To: 0, Epoch: 1, Incarnation: 1}
	ack := AppendFrame(nil, h, handoff.Datagram{Kind: handoff.DatagramAck, Seq: seq.Next - 1})
	data := AppendFrame(nil, h, handoff.Datagram{Kind: handoff.DatagramData, Seq: seq.Delivered + 1,
		Msg: node.Message{Kind: 1, Tokens: 2}, Items: []uint64{1<<63 | 1, 1<<63 | 2}})
	wrongKey := deriveKeys([]byte("another fleet's key, 0123456789abcdef0123456789"))
	flipped := sealed(ack)
	flipped[3] ^= 0x40 // the sender's ID
	toOther := h
	toOther.To = 5
	type state struct {
		items    string
		load     int64
		inFlight int64
		unacked  int
		seq      handoff.Sequence
	}
	snap := func() state {
		return state{fmt.Sprint(nd.nd.Items()), nd.nd.NodeContext().Load, nd.nd.InFlight(), nd.nd.Unacked(), nd.nd.Sequence(port)}
	}
	// What the node sends carries the MAC.
	out, err := nd.encode(handoff.Datagram{Kind: handoff.DatagramAck, Port: port, Seq: 1})
	if err != nil {
		t.Fatal(err)
	}
	if body, ok := checkMAC(out, deriveKeys([]byte(testKey)).frame); !ok {
		t.Errorf("the node's frame %q has no valid MAC", out)
	} else if h, _, err := DecodeFrame(body, 0); err != nil || h.To != w {
		t.Errorf("the node's frame: %+v, %v", h, err)
	}
	before, st0 := snap(), nd.st
	for _, tc := range []struct {
		name  string
		from  int
		frame []byte
	}{
		{"an ack without a MAC", w, ack},
		{"data without a MAC", w, data},
		{"an ack under another key", w, appendMAC(append([]byte{}, ack...), wrongKey.frame)},
		{"data under another key", w, appendMAC(append([]byte{}, data...), wrongKey.frame)},
		{"a valid ack with a flipped byte", w, flipped},
		{"a valid ack with its tag cut", w, sealed(ack)[:len(ack)+MACSize-1]},
		{"a valid ack replayed onto another link", other, sealed(ack)},
		{"a valid ack for another node", w, sealed(AppendFrame(nil, toOther, handoff.Datagram{Kind: handoff.DatagramAck, Seq: seq.Next - 1}))},
	} {
		nd.frame(inFrame{from: tc.from, frame: tc.frame})
		if got := snap(); got != before {
			t.Fatalf("%s changed the node: %+v → %+v", tc.name, before, got)
		}
	}
	r := nd.st.Refused
	if r.MAC != 6 || r.Sender != 1 || r.Receiver != 1 || nd.st.Rejected-st0.Rejected != 8 || nd.st.Delivered != st0.Delivered {
		t.Errorf("refused %+v, rejected %d more, delivered %d; want 6 MAC, 1 sender, 1 receiver, 8, none", r, nd.st.Rejected-st0.Rejected, nd.st.Delivered)
	}
	if !hasFault(nd.st, "mac", -1, -1) {
		t.Errorf("faults %+v; want a mac fault on link %d", nd.st.Faults, w)
	}
	m := metricsText(nd.st)
	if !strings.Contains(m, `tokendist_node_refused_frames_total{node="0",cause="mac"} 6`+"\n") {
		t.Errorf("metrics:\n%s", m)
	}
	// The same acknowledgement with its MAC: applied.
	nd.frame(inFrame{from: w, frame: sealed(ack)})
	if got := nd.nd.Sequence(port); got.Acked != seq.Next-1 || nd.st.Refused.MAC != 6 {
		t.Errorf("a valid ack: link %+v, refused %+v; want acked %d", got, nd.st.Refused, seq.Next-1)
	}
	// Replayed on its own link: nothing more happens (an older ack acknowledges nothing new).
	after := snap()
	nd.frame(inFrame{from: w, frame: sealed(ack)})
	if got := snap(); got != after {
		t.Errorf("a replayed valid ack changed the node: %+v → %+v", after, got)
	}
}

// TestHTTPAuth: with a key, every endpoint answers 401 without the bearer token or
// with another, doing nothing (a /work without the token adds nothing); with the
// token it answers. An insecure node takes requests without one.
func TestHTTPAuth(t *testing.T) {
	defer goleak.VerifyNone(t)
	spec := registry.Spec{Network: choice("random-tree", map[string]any{"n": 2}), Loads: choice("point-mass", map[string]any{"tokens": 4}), Algorithm: choice("threshold-1", nil)}
	for _, insecure := range []bool{false, true} {
		cfg := identityConfig(t, spec, 0, t.TempDir())
		if insecure {
			cfg.KeyFile, cfg.Insecure, cfg.Listen, cfg.Status = "", true, "127.0.0.1:1", "127.0.0.1:2"
		}
		nw, err := NewInmemNetwork(nil)
		if err != nil {
			t.Fatal(err)
		}
		nd, err := NewNode(cfg, &Options{Store: NewMemoryStore(), Transport: nw.Transport(0)})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		errc := make(chan error, 1)
		go func() { errc <- nd.Run(ctx) }()
		srv := httptest.NewServer(nd.Handler())
		do := func(method, path, body, auth string) (int, string) {
			t.Helper()
			req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
			if auth != "" {
				req.Header.Set("Authorization", auth)
			}
			resp, err := srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			return resp.StatusCode, string(b)
		}
		good := "Bearer " + deriveKeys([]byte(testKey)).token
		endpoints := []struct{ method, path, body string }{
			{"POST", "/work", `{"items":[9223372036854775809]}`}, {"POST", "/complete", `{"count":1}`},
			{"GET", "/items", ""}, {"GET", "/status", ""}, {"GET", "/metrics", ""},
		}
		if out, err := nd.encode(handoff.Datagram{Kind: handoff.DatagramAck, Seq: 1}); err != nil {
			t.Fatal(err)
		} else if _, _, err := DecodeFrame(out, 0); (err == nil) != insecure {
			t.Errorf("insecure %t: the node's frame decodes without its last %d bytes: %v", insecure, MACSize, err)
		}
		if !insecure {
			if code, msg := do("GET", "/status", "", ""); code != http.StatusUnauthorized || !strings.Contains(msg, "no Authorization header") {
				t.Errorf("no header: %d %q", code, msg)
			}
			if code, msg := do("GET", "/status", "", "Bearer x"); code != http.StatusUnauthorized || !strings.Contains(msg, "missing or wrong bearer token") {
				t.Errorf("a wrong token: %d %q", code, msg)
			}
			for _, e := range endpoints {
				for _, auth := range []string{"", "Bearer " + deriveKeys([]byte(testKey+"x")).token, good[:len(good)-1], "Basic " + good[7:], good[7:]} {
					if code, msg := do(e.method, e.path, e.body, auth); code != http.StatusUnauthorized || !strings.HasPrefix(msg, "tokendist: ") {
						t.Errorf("%s %s with Authorization %q: %d %q; want 401", e.method, e.path, auth, code, msg)
					}
				}
			}
			if s := nd.Snapshot(); s.Added != 0 || s.Completed != 0 || s.Load != 4 {
				t.Errorf("after refused requests: added %d, completed %d, load %d; want 0, 0, 4", s.Added, s.Completed, s.Load)
			}
		}
		auth := good
		if insecure {
			auth = ""
		}
		for _, e := range endpoints {
			if code, msg := do(e.method, e.path, e.body, auth); code != 200 {
				t.Errorf("insecure %t: %s %s with the token: %d %q", insecure, e.method, e.path, code, msg)
			}
		}
		if code, _ := do("GET", "/status", "", "bearer "+good[7:]); code != 200 && !insecure {
			t.Errorf("a lower-case scheme: %d; want 200", code)
		}
		if s := nd.Snapshot(); s.Added != 1 || s.Completed != 1 {
			t.Errorf("insecure %t: added %d, completed %d; want 1, 1", insecure, s.Added, s.Completed)
		}
		srv.Close()
		cancel()
		if err := <-errc; err != nil {
			t.Error(err)
		}
		_ = nw.Close()
	}
}

// TestAuthConfig: a config without key_file and without insecure is refused saying
// what to add; both is refused; insecure only on loopback addresses; NewNode refuses
// a missing, short or group-readable key file; ReadConfig reads a relative key_file
// from the config's directory; HTTPToken derives the token.
func TestAuthConfig(t *testing.T) {
	spec := registry.Spec{Network: choice("random-tree", map[string]any{"n": 2}), Loads: choice("point-mass", map[string]any{"tokens": 4}), Algorithm: choice("threshold-1", nil)}
	base := Config{ID: 0, Spec: spec, Listen: "127.0.0.1:1", Status: "localhost:2", Data: "d", Peers: map[int]string{1: "127.0.0.1:3"}}
	for _, tc := range []struct {
		edit func(c *Config)
		want string // "" : accepted
	}{
		{func(c *Config) {}, `add "key_file": "fleet.key" to every node's config`},
		{func(c *Config) { c.KeyFile, c.Insecure = "k", true }, `key_file "k" and insecure: true: choose one`},
		{func(c *Config) { c.Insecure = true }, ""},
		{func(c *Config) { c.Insecure, c.Listen = true, "[::1]:1" }, ""},
		{func(c *Config) { c.Insecure, c.Listen = true, "0.0.0.0:1" }, `insecure: true with listen address "0.0.0.0:1"`},
		{func(c *Config) { c.Insecure, c.Listen = true, ":1" }, `insecure: true with listen address ":1"`},
		{func(c *Config) { c.Insecure, c.Status = true, "10.1.2.3:2" }, `insecure: true with status address "10.1.2.3:2"`},
		{func(c *Config) { c.KeyFile, c.Listen, c.Status = "k", "0.0.0.0:1", ":2" }, ""},
	} {
		c := base
		tc.edit(&c)
		err := c.Check()
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, tokendist.ErrBadParameter)) {
			t.Errorf("Check(%+v) = %v; want %q", c, err, tc.want)
		}
	}
	dir := t.TempDir()
	write := func(name, text string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct{ name, path, want string }{
		{"missing", filepath.Join(dir, "missing.key"), "key_file: stat"},
		{"short", write("short.key", "0123456789abcdef0123456789abcde\n\n", 0o600), "holds 31 bytes of key; want at least 32"},
		{"short after its white space", write("short2.key", "0123456789abcdef0123456789abcde \t\r\n", 0o600), "holds 31 bytes of key"},
		{"group-readable", write("group.key", testKey, 0o640), "has mode -rw-r-----"},
		{"a directory", dir, "key_file " + dir + " is a directory"},
	} {
		c := base
		c.KeyFile = tc.path
		c.Data = t.TempDir()
		_, err := NewNode(c, &Options{Store: NewMemoryStore(), Transport: func(func(int, []byte)) (Transport, error) { return nil, errors.New("not reached") }})
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "tokendist: ") {
			t.Errorf("a %s key file: %v; want %q", tc.name, err, tc.want)
		}
		if _, err := c.HTTPToken(); err == nil {
			t.Errorf("HTTPToken with a %s key file: no error", tc.name)
		}
	}
	// ReadConfig: key_file relative to the config's directory.
	c := base
	c.KeyFile = "fleet.key"
	p := writeConfig(t, c)
	testKeyFile(t, filepath.Dir(p))
	got, err := ReadConfig(p)
	if err != nil || got.KeyFile != filepath.Join(filepath.Dir(p), "fleet.key") {
		t.Fatalf("ReadConfig: key_file %q, %v", got.KeyFile, err)
	}
	if tok, err := got.HTTPToken(); err != nil || tok != deriveKeys([]byte(testKey)).token {
		t.Errorf("HTTPToken = %q, %v", tok, err)
	}
	// Exactly 32 bytes: accepted; an absolute key_file is read as it is.
	c.KeyFile = write("exact.key", "0123456789abcdef0123456789abcdef", 0o600)
	p = writeConfig(t, c)
	if got, err := ReadConfig(p); err != nil || got.KeyFile != c.KeyFile {
		t.Errorf("ReadConfig of an absolute key_file: %q, %v", got.KeyFile, err)
	} else if tok, err := got.HTTPToken(); err != nil || tok != deriveKeys([]byte("0123456789abcdef0123456789abcdef")).token {
		t.Errorf("a 32-byte key: %q, %v", tok, err)
	}
	c.KeyFile, c.Insecure = "", true
	if got, err := ReadConfig(writeConfig(t, c)); err != nil || got.KeyFile != "" {
		t.Errorf("ReadConfig of an insecure config: key_file %q, %v; want none", got.KeyFile, err)
	}
	if tok, err := c.HTTPToken(); err != nil || tok != "" {
		t.Errorf("HTTPToken of an insecure config = %q, %v; want none", tok, err)
	}
}
