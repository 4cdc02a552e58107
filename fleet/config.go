package fleet

import (
	"encoding/json"
	"fmt"
	"net"
	"path/filepath"
	"time"

	"github.com/tokendist/tokendist/internal/errs"
	"github.com/tokendist/tokendist/internal/files"
	"github.com/tokendist/tokendist/internal/strictjson"
	"github.com/tokendist/tokendist/registry"
)

// Config is one node's configuration: what the fleet runs (the same Spec on every
// node) and where this node lives. Its JSON form is the config file of the
// tokendist-node command.
type Config struct {
	// ID is the node's index in the network of Spec.
	ID int `json:"id"`
	// Spec names the network, the initial loads, the algorithm and the seed, as
	// registry names (registry.Spec); every node of a fleet has the same one and builds
	// the same network from it. Its stop rules, metrics, workload and churn are not
	// used: a fleet runs until it is stopped, and its work arrives through the node's
	// work endpoint.
	Spec registry.Spec `json:"spec"`
	// Fleet, when not empty, names the fleet; it is mixed into the fleet ID
	// (Identity.Fleet), which every frame carries and every store records. Empty: the
	// ID is derived from the Spec alone, so two fleets that run the same Spec on
	// overlapping addresses need different names. Every node of a fleet has the same.
	Fleet string `json:"fleet,omitempty"`
	// Patience is node.Options.Patience, in ticks (0: wait for ever).
	Patience int64 `json:"patience,omitempty"`
	// Rounds is the number of rounds a round-based program begins (0: no limit).
	Rounds int64 `json:"rounds,omitempty"`
	// Listen is the address the node receives frames on (host:port).
	Listen string `json:"listen"`
	// Status is the address of the node's HTTP endpoint (host:port): /metrics
	// (Prometheus text), /status (JSON), /items and /work.
	Status string `json:"status"`
	// Data is the directory of the node's durable state; it is created if missing.
	Data string `json:"data"`
	// Peers maps the ID of every neighbour to the address to send its frames to (its
	// Listen address, or a proxy in front of it).
	Peers map[int]string `json:"peers"`
	// Tick is the period of the node's local timer (0: 10 ms).
	Tick Duration `json:"tick,omitempty"`
	// RetransmitTicks is handoff.Config.RetransmitTicks (0: its default).
	RetransmitTicks int64 `json:"retransmit_ticks,omitempty"`
	// MaxFrame is TCPOptions.MaxFrame, the largest frame in bytes the node sends and
	// receives (0: DefaultMaxFrame); every node of a fleet must have the same. It
	// bounds the items a node holds (Node.MaxItemBytes).
	MaxFrame int `json:"max_frame,omitempty"`
	// KeyFile is the file of the fleet's shared secret (at least MinKeyBytes bytes,
	// the same file on every node, readable by its owner only): every frame carries a
	// MAC under a key derived from it, and the HTTP endpoint wants a bearer token
	// derived from it (Config.HTTPToken; docs/fleet.md, "Authentication"). ReadConfig
	// reads a relative path from the config file's directory. Exactly one of KeyFile
	// and Insecure is set.
	KeyFile string `json:"key_file,omitempty"`
	// Insecure turns authentication off: frames carry no MAC and the HTTP endpoint
	// takes requests without a token. Only for experiments on loopback: Check refuses
	// it unless Listen and Status are loopback addresses.
	Insecure bool `json:"insecure,omitempty"`
}

// DefaultMaxFrame is Config.MaxFrame's and TCPOptions.MaxFrame's default: 1 MiB.
const DefaultMaxFrame = 1 << 20

func (c *Config) maxFrame() int {
	if c.MaxFrame == 0 {
		return DefaultMaxFrame
	}
	return c.MaxFrame
}

// Duration is a time.Duration written as a string in JSON ("10ms").
type Duration time.Duration

// MarshalJSON writes the duration as a string.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// UnmarshalJSON reads a duration string such as "10ms" or "1.5s".
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return errs.BadParam("duration %s: want a string such as \"10ms\"", errs.Quote(b))
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return errs.BadParam("duration %q: %v", s, err)
	}
	*d = Duration(v)
	return nil
}

// DefaultTick is Config.Tick's default.
const DefaultTick = 10 * time.Millisecond

// maxConfigBytes bounds a config file.
const maxConfigBytes = 1 << 20

// ReadConfig reads and checks a JSON config file, strictly: an unknown key, a key
// repeated in one object (at any depth), trailing data or a second value is an error
// naming it, as is a value out of its range or a config without key_file and without
// insecure (Check). A relative key_file is made relative to the config file's
// directory; the key file itself is read by NewNode. O(file size).
func ReadConfig(path string) (Config, error) {
	data, err := files.ReadFile(path, "config file", maxConfigBytes)
	if err != nil {
		return Config{}, err
	}
	var c Config
	if err := strictjson.Decode(data, &c); err != nil {
		return Config{}, errs.Wrapf(err, "config file %s", files.Name(path))
	}
	if c.KeyFile != "" && !filepath.IsAbs(c.KeyFile) {
		c.KeyFile = filepath.Join(filepath.Dir(path), c.KeyFile)
	}
	if err := c.Check(); err != nil {
		return Config{}, errs.Wrapf(err, "config file %s", files.Name(path))
	}
	return c, nil
}

// The ranges of the config's numbers (docs/fleet.md, "Limits"); 0 takes the default
// where there is one.
const (
	// MaxTicks bounds patience and rounds (2⁴⁰: 35 years of 1 ms ticks), far
	// from int64's overflow in any sum of ticks.
	MaxTicks = 1 << 40
	// MinTick is the shortest non-zero tick: below 1 ms the timer outruns a Save
	// (an fsync).
	MinTick = time.Millisecond
	// MaxTick is the longest tick: above a minute retransmission and pacing stall.
	MaxTick = time.Minute
	// MaxRetransmitTicks bounds retransmit_ticks (2²⁰: 17 minutes of 1 ms ticks; the
	// handoff's backoff multiplies it by up to 64).
	MaxRetransmitTicks = 1 << 20
	// MinMaxFrame is the smallest non-zero max_frame: 4 KiB holds 400 items of any
	// IDs after the header.
	MinMaxFrame = 4 << 10
	// MaxMaxFrame is the largest max_frame (and TCPOptions.MaxFrame): the most the
	// reader allocates for one frame of a connection.
	MaxMaxFrame = 64 << 20
	// MaxNodeID bounds id (a frame carries node IDs below 2³¹).
	MaxNodeID = 1<<31 - 1
)

// Check returns an error naming the first bad field and its value: an ID outside
// 0..MaxNodeID, patience or rounds outside 0..MaxTicks, a tick other than 0 outside
// MinTick..MaxTick, retransmit_ticks outside 0..MaxRetransmitTicks, max_frame other
// than 0 outside MinMaxFrame..MaxMaxFrame, an address that is not host:port, an
// empty data directory, neither key_file nor insecure (the message says what to add),
// both, or insecure with a listen or status address that is not loopback. It does
// not read the key file nor build the network (NewNode does, and checks the
// ID and the peers against it). O(len(Peers)).
func (c *Config) Check() error {
	switch {
	case c.ID < 0 || c.ID > MaxNodeID:
		return errs.BadParam("id %d: want 0 ≤ id ≤ %d", c.ID, MaxNodeID)
	case c.Patience < 0 || c.Patience > MaxTicks:
		return errs.BadParam("patience %d: want 0 ≤ patience ≤ %d (2^40) ticks", c.Patience, int64(MaxTicks))
	case c.Rounds < 0 || c.Rounds > MaxTicks:
		return errs.BadParam("rounds %d: want 0 ≤ rounds ≤ %d (2^40)", c.Rounds, int64(MaxTicks))
	case c.Tick != 0 && (time.Duration(c.Tick) < MinTick || time.Duration(c.Tick) > MaxTick):
		return errs.BadParam("tick %v: want 0 (the default %v) or %v ≤ tick ≤ %v", time.Duration(c.Tick), DefaultTick, MinTick, MaxTick)
	case c.RetransmitTicks < 0 || c.RetransmitTicks > MaxRetransmitTicks:
		return errs.BadParam("retransmit_ticks %d: want 0 (the default) ≤ retransmit_ticks ≤ %d (2^20)", c.RetransmitTicks, MaxRetransmitTicks)
	case c.MaxFrame != 0 && (c.MaxFrame < MinMaxFrame || c.MaxFrame > MaxMaxFrame):
		return errs.BadParam("max_frame %d: want 0 (the default %d) or %d ≤ max_frame ≤ %d", c.MaxFrame, DefaultMaxFrame, MinMaxFrame, MaxMaxFrame)
	case c.Data == "":
		return errs.BadParam("data directory is empty")
	}
	for _, a := range []struct{ key, addr string }{{"listen", c.Listen}, {"status", c.Status}} {
		if _, _, err := net.SplitHostPort(a.addr); err != nil {
			return errs.BadParam("%s address %q: %v", a.key, a.addr, err)
		}
	}
	switch {
	case c.KeyFile == "" && !c.Insecure:
		return errs.BadParam("no key_file: frames and HTTP requests are authenticated with a shared key since issue 36 (docs/fleet.md, \"Authentication\"); " +
			"make one key for the fleet (head -c 32 /dev/urandom | base64 > fleet.key; chmod 600 fleet.key), copy it to every node, and add \"key_file\": \"fleet.key\" to every node's config " +
			"(relative to the config's directory); or, for an experiment on loopback only, add \"insecure\": true")
	case c.KeyFile != "" && c.Insecure:
		return errs.BadParam("key_file %q and insecure: true: choose one (insecure turns authentication off)", c.KeyFile)
	case c.Insecure:
		for _, a := range []struct{ key, addr string }{{"listen", c.Listen}, {"status", c.Status}} {
			if !loopback(a.addr) {
				return errs.BadParam("insecure: true with %s address %q: without authentication a node listens on loopback only (127.0.0.0/8, ::1 or localhost); set key_file to listen elsewhere", a.key, a.addr)
			}
		}
	}
	for id, a := range c.Peers {
		if _, _, err := net.SplitHostPort(a); err != nil {
			return errs.BadParam("peers[%d] address %q: %v", id, a, err)
		}
	}
	return nil
}

// loopback reports whether addr (host:port) names a loopback host.
func loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func (c *Config) tick() time.Duration {
	if c.Tick == 0 {
		return DefaultTick
	}
	return time.Duration(c.Tick)
}

// String summarises the config for logs.
func (c Config) String() string {
	return fmt.Sprintf("node %d of %s/%s (listen %s, status %s, data %s, %d peers)",
		c.ID, c.Spec.Network.Name, c.Spec.Algorithm.Name, c.Listen, c.Status, c.Data, len(c.Peers))
}
