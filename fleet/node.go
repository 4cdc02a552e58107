package fleet

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tokendist/tokendist/node"

	"github.com/tokendist/tokendist"
	"github.com/tokendist/tokendist/handoff"
	"github.com/tokendist/tokendist/internal/errs"
	"github.com/tokendist/tokendist/registry"
)

// Options configure NewNode. The zero value takes the reference implementations.
type Options struct {
	// Registry resolves the Spec's names (nil: registry.Default()).
	Registry *registry.Registry
	// Store, when not nil, is the node's store (the node closes it); nil opens a
	// BoltStore in Config.Data/node.db.
	Store Store
	// Transport, when not nil, makes the node's transport around the receive function
	// the node gives it (the node closes it); nil makes a TCPTransport on Config.Listen
	// with Config.Peers.
	Transport func(recv func(from int, frame []byte)) (Transport, error)
	// Logf, when not nil, receives the node's log lines (restarts, dropped frames;
	// refused frames at most once per second per cause).
	Logf func(format string, args ...any)
	// Reinit allows the node to start afresh, with its initial items, when its store
	// is empty or missing on a data directory that has run a node before (it has an
	// IdentityFile or a StartsFile); without it NewNode refuses, since the state is
	// lost and the fleet may hold the node's initial items already. It is the
	// operator's explicit decision (tokendist-node -reinit), for one start.
	Reinit bool

	// dupGrace, when positive, replaces DuplicateGrace (tests).
	dupGrace time.Duration

	// programs, when not nil, replaces the algorithm's node programs (tests).
	programs node.Programs
}

// StoreFile is the name of the BoltStore file in a node's data directory.
const StoreFile = "node.db"

// InitialItemID is the ID of the i-th of node v's initial items (0 ≤ i < its initial
// load in the Spec): v<<32 | i. IDs that users add through AddItems should avoid this
// range (for example by setting the top bit).
func InitialItemID(v, i int) uint64 { return uint64(v)<<32 | uint64(uint32(i)) }

// Node is one node of a fleet: its handoff state machine (a handoff.ItemMachine,
// around the algorithm's node program), its Store and its Transport, driven by one
// goroutine (Run). After every event it persists the state the handoff asks for, and
// only then sends the datagrams of that state, so that a kill -9 at any point loses
// nothing another node was told and repeats nothing another node has. Its load is a
// list of item IDs that move between nodes with the tokens; work arrives and finishes
// through AddItems and CompleteItems (and the HTTP endpoints of Handler).
//
// The methods other than Run may be called from any goroutine while Run runs; they
// wait for the node's goroutine (at most the given context).
type Node struct {
	cfg           Config
	opts          Options
	nbrs          []int       // port -> neighbour ID
	portOf        map[int]int // neighbour ID -> port
	progs         node.Programs
	acfg          handoff.Config
	items         []uint64 // the initial items, until the node starts
	nd            *handoff.ItemMachine
	store         Store
	tr            Transport
	tick          time.Duration
	maxItemBytes  int // the item bytes of one frame: cfg.maxFrame() - MaxFrameOverhead
	restored      bool
	now           int64
	id            Identity         // this node's identity
	keys          fleetKeys        // the frame key and HTTP token (empty: insecure)
	inc           uint64           // this process's incarnation
	epoch         uint64           // this process's epoch (its start's number on the store)
	peerIncs      []peerInc        // per port: the incarnations seen from the neighbour
	faultIdx      map[faultKey]int // index in st.Faults
	faultsChanged bool
	pubFaults     []LinkFault         // published copy of st.Faults
	pubDups       []int               // published copy of st.DuplicatePeers
	logged        map[string]logLimit // per refusal cause
	startup       []handoff.Datagram  // the first Ready's datagrams, sent once the transport is up

	recv   chan inFrame
	queued atomic.Int64 // bytes of the frames in recv
	admin  chan adminReq
	done   chan struct{}

	started       time.Time
	firstDelivery time.Duration // since started; 0: none yet

	st  Status     // the counters, owned by the node's goroutine
	mu  sync.Mutex // guards pub
	pub Status     // st and the handoff's figures after the last event
}

type adminReq struct {
	f    func()
	done chan error
}

type inFrame struct {
	from  int
	frame []byte
}

// DuplicateGrace is how long after a neighbour's restart (a frame of a higher epoch)
// frames of its older process may still arrive without being reported: frames of the
// stopped process still on their way. Later ones are reported as a link fault "stale"
// (a slow link, or a second live process started from an older copy of the node's
// state); they are refused either way.
const DuplicateGrace = 2 * time.Second

// maxQueuedBytes bounds the bytes of the frames queued for the node's goroutine (at
// least one Config.MaxFrame); a frame over it is dropped, and its sender retransmits.
const maxQueuedBytes = 64 << 20

// maxFaults bounds Status.Faults.
const maxFaults = 16

// peerInc is what a node knows of one neighbour's processes.
type peerInc struct {
	epoch, inc uint64    // the newest process heard (inc 0: none yet)
	since      time.Time // when it superseded an older one (zero: it did not)
	dup        bool      // two live processes of one epoch seen: the link is refused
}

type faultKey struct {
	cause          string
	link, from, to int
	fleet          uint64
}

type logLimit struct {
	last       time.Time
	suppressed int64
}

// Refused counts the frames a node refused for their identity or their MAC, by cause; none of them
// changed anything (docs/fleet.md, "Identity").
type Refused struct {
	// Version counts version-1 frames (from a node of an older release).
	Version int64 `json:"version"`
	// Fleet counts frames naming another fleet.
	Fleet int64 `json:"fleet"`
	// Receiver counts frames addressed to another node (a sender's address for that
	// node leads here).
	Receiver int64 `json:"receiver"`
	// Sender counts frames from a node that is not a neighbour, or whose sender is not
	// the node the transport says sent them.
	Sender int64 `json:"sender"`
	// Stale counts frames of a neighbour's older process (a lower epoch than the
	// newest heard: a restarted process's frames still on their way, or a second
	// process started from an older copy of the node's state).
	Stale int64 `json:"stale"`
	// Duplicate counts frames from a neighbour two live processes of one epoch claim
	// to be (every frame from it after the second process was heard).
	Duplicate int64 `json:"duplicate"`
	// MAC counts frames whose MAC is missing or wrong (docs/fleet.md,
	// "Authentication"): forged or damaged frames, or frames of a node with another
	// key_file or with insecure: true. They are refused before they are decoded.
	MAC int64 `json:"mac"`
}

// LinkFault is one disagreement between the two ends of a link, as a node found it in
// the frames it refused: what the frames name and what the transport says.
type LinkFault struct {
	// Cause is "version", "mac", "fleet", "receiver", "sender", "stale" (frames of
	// an older process still arriving DuplicateGrace after a newer one) or
	// "duplicate" (the Refused field it counts in). A "mac" fault names only the
	// link (From and To are -1, Fleet zero): its frames were not decoded.
	Cause string `json:"cause"`
	// Link is the node the transport says sent the frames; From, To and Fleet what the
	// frames name (their sender, receiver and fleet ID in hexadecimal).
	Link  int    `json:"link"`
	From  int    `json:"from"`
	To    int    `json:"to"`
	Fleet string `json:"fleet"`
	// Frames counts the frames refused for this fault.
	Frames int64 `json:"frames"`
	// Detail says what the fault means, in a sentence.
	Detail string `json:"detail"`
}

// Status is a node's state and counters, as /status reports them (JSON) and /metrics
// (Prometheus text) exposes them.
type Status struct {
	ID int `json:"id"`
	// Fleet is the fleet ID (Identity.FleetHex); Epoch and Incarnation this
	// process's (FrameHeader.Epoch, FrameHeader.Incarnation in hexadecimal).
	Fleet       string `json:"fleet"`
	Epoch       uint64 `json:"epoch"`
	Incarnation string `json:"incarnation"`
	// Load is the number of items held; InFlight the tokens sent and not yet
	// acknowledged; Unacked the data datagrams not yet acknowledged.
	Load     int64 `json:"load"`
	InFlight int64 `json:"in_flight"`
	Unacked  int   `json:"unacked"`
	// Idle reports handoff.Machine.Idle: the program is idle and nothing is unacknowledged.
	Idle bool `json:"idle"`
	// Moved and Messages are the program's counters (tokens sent, Counted messages)
	// over the node's life (persisted).
	Moved    int64 `json:"moved"`
	Messages int64 `json:"messages"`
	// Delivered counts the data datagrams delivered in this process; Received and
	// Sent the frames received and handed to the transport; Retransmissions,
	// Duplicates and OutOfOrder are handoff.Stats; Rejected counts frames refused
	// (undecodable, refused for their identity, or refused by the handoff); Saves the states
	// persisted. All since this process started.
	Delivered       int64 `json:"delivered"`
	Received        int64 `json:"received"`
	Sent            int64 `json:"sent"`
	Retransmissions int64 `json:"retransmissions"`
	Duplicates      int64 `json:"duplicates"`
	OutOfOrder      int64 `json:"out_of_order"`
	Rejected        int64 `json:"rejected"`
	Saves           int64 `json:"saves"`
	// Deferred counts data datagrams not taken because the items the node would then
	// hold would not fit one frame (Node.MaxItemBytes): the sender keeps them and
	// retransmits until the node has room (back-pressure), since this process
	// started.
	Deferred int64 `json:"deferred"`
	// Refused breaks down the frames refused for their identity or MAC (also counted in
	// Rejected); Faults lists the distinct link faults behind them (at most 16, the
	// first found); DuplicatePeers the neighbours whose ID two live processes of one
	// epoch claim (their frames are all refused from then on). All since this process
	// started.
	Refused        Refused     `json:"refused"`
	Faults         []LinkFault `json:"faults"`
	DuplicatePeers []int       `json:"duplicate_peers"`
	// SaveSeconds is the time spent in Store.Save since the process started.
	SaveSeconds float64 `json:"save_seconds"`
	// Added and Completed count the items added and completed in this process.
	Added     int64 `json:"added"`
	Completed int64 `json:"completed"`
	// Restored reports that this process started from a persisted state; Starts
	// counts the node's starts on its data directory (its restarts plus one), from
	// the file StartsFile there (0 when the file cannot be read or written).
	Restored bool  `json:"restored"`
	Starts   int64 `json:"starts"`
	// Uptime is the time since the process started the node, in seconds;
	// FirstDelivery the time from then to its first delivered data datagram (0:
	// none yet), its recovery time after a restart.
	Uptime        float64 `json:"uptime_seconds"`
	FirstDelivery float64 `json:"first_delivery_seconds"`
	// Now is the node's round clock (node.Context.Now) in ticks: with Patience p > 0
	// the node is in round Now/p. CaughtUp counts the ticks it moved forward at once,
	// since this process started, to reach a round a neighbour's message carried (a
	// node that was paused, down, slow or started late; docs/fleet.md, "The round
	// clock").
	Now      int64 `json:"now"`
	CaughtUp int64 `json:"caught_up_ticks"`
}

// NewNode builds the network of cfg.Spec, checks that cfg.ID is a node of it and that
// cfg.Peers names exactly its neighbours, opens the store and restores the node from
// it (or starts it afresh with its initial items, see InitialItemID), and starts the
// transport. The node does nothing until Run. It returns an error naming the bad
// value; on error it has closed what it opened. Cost: building the network (O(n + m)
// for the built-in ones) and reading the state.
func NewNode(cfg Config, opts *Options) (*Node, error) {
	if err := cfg.Check(); err != nil {
		return nil, err
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	reg := o.Registry
	if reg == nil {
		reg = registry.Default()
	}
	spec, err := reg.Canonical(cfg.Spec)
	if err != nil {
		return nil, errs.Wrapf(err, "node %d: spec", cfg.ID)
	}
	g, loads, b, err := reg.Build(spec)
	if err != nil {
		return nil, errs.Wrapf(err, "node %d: spec", cfg.ID)
	}
	if cfg.ID >= g.Order() {
		return nil, errs.BadParam("node %d: the network has nodes 0..%d", cfg.ID, g.Order()-1)
	}
	id, err := identityOf(cfg, spec)
	if err != nil {
		return nil, err
	}
	keys, err := readKeys(&cfg)
	if err != nil {
		return nil, errs.Wrapf(err, "node %d", cfg.ID)
	}
	n := &Node{cfg: cfg, opts: o, keys: keys, tick: cfg.tick(), maxItemBytes: cfg.maxFrame() - MaxFrameOverhead, id: id, inc: newIncarnation(),
		faultIdx: map[faultKey]int{}, logged: map[string]logLimit{},
		recv: make(chan inFrame, 4096), admin: make(chan adminReq), done: make(chan struct{})}
	n.portOf = make(map[int]int, g.Degree(cfg.ID))
	for p, w32 := range g.Neighbors(cfg.ID) {
		w := int(w32)
		n.nbrs = append(n.nbrs, w)
		n.portOf[w] = p
		if _, ok := cfg.Peers[w]; !ok {
			return nil, errs.BadParam("node %d: peers has no address for neighbour %d", cfg.ID, w)
		}
	}
	for w := range cfg.Peers {
		if _, ok := n.portOf[w]; !ok {
			return nil, errs.BadParam("node %d: peers[%d] is not a neighbour", cfg.ID, w)
		}
	}
	n.progs = o.programs
	if n.progs == nil {
		na, ok := b.(tokendist.NodeAlgorithm)
		if !ok {
			return nil, errs.BadParam("node %d: algorithm %s has no node programs", cfg.ID, spec.Algorithm.Name)
		}
		if n.progs, err = na.NodePrograms(g, &node.Options{Patience: cfg.Patience}); err != nil {
			return nil, errs.Wrapf(err, "node %d: algorithm %s", cfg.ID, spec.Algorithm.Name)
		}
	}
	n.peerIncs = make([]peerInc, len(n.nbrs))
	n.acfg = handoff.Config{ID: cfg.ID, Degree: len(n.nbrs), Rounds: cfg.Rounds, Seed: spec.Seed,
		RetransmitTicks: cfg.RetransmitTicks}
	for i := range loads[cfg.ID] {
		n.items = append(n.items, InitialItemID(cfg.ID, int(i)))
	}
	if err := n.open(); err != nil {
		return nil, err
	}
	return n, nil
}

// open opens the store, restores or starts the node and starts the transport.
func (n *Node) open() (err error) {
	n.store = n.opts.Store
	if n.store == nil {
		if err := os.MkdirAll(n.cfg.Data, 0o700); err != nil {
			return errs.Wrapf(err, "node %d: data directory %q", n.cfg.ID, n.cfg.Data)
		}
		if n.store, err = OpenBoltStore(filepath.Join(n.cfg.Data, StoreFile), nil); err != nil {
			return errs.Wrapf(err, "node %d", n.cfg.ID)
		}
	}
	defer func() {
		if err != nil {
			_ = n.store.Close()
		}
	}()
	raw, err := n.store.Load()
	if err != nil {
		return errs.Wrapf(err, "node %d", n.cfg.ID)
	}
	prog, err := n.progs.Program(n.cfg.ID)
	if err != nil {
		return errs.Wrapf(err, "node %d: program", n.cfg.ID)
	}
	used, marker, markerEpoch := usedBefore(n.cfg.Data)
	if raw != nil {
		stored, err := DecodeStored(raw)
		if err != nil {
			where := fmt.Sprintf("data directory %q", n.cfg.Data)
			if n.opts.Store == nil {
				where = fmt.Sprintf("data file %q", filepath.Join(n.cfg.Data, StoreFile))
			}
			return errs.Wrapf(err, "node %d: %s", n.cfg.ID, where)
		}
		if d := stored.Identity.diff(n.id); len(d) > 0 {
			return errs.BadParam("node %d: the store in data directory %q was created for another node or spec (%s); refusing to restore it: start the node with the config it was created with, or on another data directory",
				n.cfg.ID, n.cfg.Data, strings.Join(d, "; "))
		}
		if n.nd, err = handoff.RestoreItemMachine(prog, n.acfg, stored.State); err != nil {
			return err
		}
		if size := itemBytes(n.nd.Items()); size > n.maxItemBytes {
			return errs.BadParam("node %d: the %d items it holds take %d bytes in a frame, over the limit of %d (max_frame %d less %d bytes of header): start it with the max_frame it ran with",
				n.cfg.ID, len(n.nd.Items()), size, n.maxItemBytes, n.cfg.maxFrame(), MaxFrameOverhead)
		}
		n.restored = true
		n.now = n.nd.NodeContext().Now
		// The new epoch is durable before the process sends anything.
		n.epoch = max(stored.Epoch, markerEpoch) + 1
		if err := n.save(stored.State); err != nil {
			return err
		}
	} else {
		if used && !n.opts.Reinit {
			if marker == "" {
				marker = "a " + StartsFile + " file"
			}
			return errs.BadParam("node %d: the store is empty or missing, but data directory %q has run a node before (%s): its state is lost, and the fleet may hold its initial items already; refusing to start afresh unless told to (Options.Reinit, tokendist-node -reinit)",
				n.cfg.ID, n.cfg.Data, marker)
		}
		n.epoch = markerEpoch + 1
		if size := itemBytes(n.items); size > n.maxItemBytes {
			return errs.BadParam("node %d: its %d initial items take %d bytes in a frame, over the limit of %d (max_frame %d less %d bytes of header): the node could not send them",
				n.cfg.ID, len(n.items), size, n.maxItemBytes, n.cfg.maxFrame(), MaxFrameOverhead)
		}
		if n.nd, err = handoff.NewItemMachine(prog, n.acfg, n.items); err != nil {
			return err
		}
		if err := n.nd.Start(); err != nil {
			return err
		}
		// Save the first state now, with the identity: the store records what it was
		// created for before anything is sent, and a used data directory is marked.
		if n.nd.HasReady() {
			rd, err := n.nd.Ready()
			if err != nil {
				return err
			}
			if rd.State != nil {
				if err := n.save(rd.State); err != nil {
					return err
				}
			}
			for _, d := range rd.Datagrams {
				d.Items = slices.Clone(d.Items)
				n.startup = append(n.startup, d)
			}
			n.nd.Advance()
		}
	}
	if err := writeIdentityFile(n.cfg.Data, n.id, n.epoch); err != nil {
		return errs.Wrapf(err, "node %d: identity file in data directory %q", n.cfg.ID, n.cfg.Data)
	}
	n.items = nil
	budget := max(maxQueuedBytes, int64(n.cfg.maxFrame()))
	recv := func(from int, frame []byte) {
		k := int64(len(frame))
		if n.queued.Add(k) > budget {
			n.queued.Add(-k) // over the budget: the frame is lost, the sender retransmits
			return
		}
		select {
		case n.recv <- inFrame{from, frame}:
		default: // full: the frame is lost, the sender retransmits
			n.queued.Add(-k)
		}
	}
	if n.opts.Transport != nil {
		n.tr, err = n.opts.Transport(recv)
	} else {
		n.tr, err = NewTCPTransport(n.cfg.ID, n.cfg.Listen, n.cfg.Peers, recv, &TCPOptions{MaxFrame: n.cfg.maxFrame()})
	}
	if err != nil {
		return errs.Wrapf(err, "node %d: transport", n.cfg.ID)
	}
	n.started = time.Now()
	n.st = Status{ID: n.cfg.ID, Fleet: n.id.FleetHex(), Epoch: n.epoch, Incarnation: fmt.Sprintf("%016x", n.inc),
		Restored: n.restored, Starts: n.countStart(), Saves: n.st.Saves, SaveSeconds: n.st.SaveSeconds}
	for _, d := range n.startup {
		if err := n.send(d); err != nil {
			_ = n.tr.Close()
			return err
		}
	}
	n.startup = nil
	n.refresh()
	return nil
}

// StartsFile is the name of the file in a node's data directory that counts its
// starts (Status.Starts). It is informational: the node's state is in the store.
const StartsFile = "starts"

// countStart adds one to the starts file and returns the count (0 on an error, which
// is logged: the count is not part of the node's state).
func (n *Node) countStart() int64 {
	path := filepath.Join(n.cfg.Data, StartsFile)
	var k int64
	if b, err := os.ReadFile(path); err == nil {
		k, _ = strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	}
	k = max(k, 0) + 1
	if err := os.MkdirAll(n.cfg.Data, 0o700); err != nil {
		n.logf("node %d: starts file: %v", n.cfg.ID, err)
		return 0
	}
	if err := os.WriteFile(path, []byte(strconv.FormatInt(k, 10)+"\n"), 0o600); err != nil {
		n.logf("node %d: starts file: %v", n.cfg.ID, err)
		return 0
	}
	return k
}

func (n *Node) logf(format string, args ...any) {
	if n.opts.Logf != nil {
		n.opts.Logf(format, args...)
	}
}

// Run drives the node until ctx is done or a store fails: frames, timer ticks (every
// Config.Tick while the node is not idle) and the requests of AddItems, CompleteItems
// and the snapshots, one at a time. With Config.Patience > 0 a data frame of a round
// ahead of the node's round clock first moves the clock to that round's first tick
// (docs/fleet.md, "The round clock"; Status.Now, Status.CaughtUp). After each it
// persists and sends (see Node). When ctx is done it persists the last state, closes
// the transport (waiting for its goroutines) and the store, and returns nil. A failed
// Save, a program error in a tick (a timer tick or a catch-up) or a frame over Config.MaxFrame (which AddItems and the deferral of datagrams keep
// from happening: see MaxItemBytes) returns the error after the same cleanup, without
// persisting the event: the process should exit, and a restart resumes from the last
// saved state. A frame refused for its identity (another fleet, another receiver, a
// sender that is not a neighbour or not the link's, a superseded or duplicate
// incarnation: see frame) is counted in Status.Rejected and Status.Refused, recorded
// in Status.Faults and logged at most once per second per cause; a frame the handoff
// refuses (undecodable, an acknowledgement of data never sent, or a program error on
// delivery) is logged and counted in Status.Rejected. Neither changes anything. Run
// must be called once.
func (n *Node) Run(ctx context.Context) (err error) {
	defer close(n.done)
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%snode %d panicked: %v", errs.Prefix, n.cfg.ID, r)
		}
		err = errors.Join(err, n.close())
	}()
	ticker := time.NewTicker(n.tick)
	defer ticker.Stop()
	n.logf("node %d: running (restored %t, load %d, %d unacked)", n.cfg.ID, n.restored, n.nd.NodeContext().Load, n.nd.Unacked())
	for {
		select {
		case <-ctx.Done():
			return n.flush()
		case f := <-n.recv:
			n.queued.Add(-int64(len(f.frame)))
			if err := n.frame(f); err != nil {
				return err
			}
		case <-ticker.C:
			if !n.nd.Idle() {
				n.now++
				if err := n.nd.Tick(n.now); err != nil {
					return err
				}
			}
		case r := <-n.admin:
			r.f()
			err := n.flush()
			r.done <- err // buffered
			if err != nil {
				return err
			}
			continue
		}
		if err := n.flush(); err != nil {
			return err
		}
	}
}

// frame steps one incoming frame: it checks the frame's identity (docs/fleet.md,
// "Identity") and applies it only when the frame is for this fleet and node, from a
// neighbour on that neighbour's link, of its current incarnation. A data frame of a
// round ahead of the node's clock first moves the clock there (catchUp); the program's
// error in that tick is returned (Run stops).
func (n *Node) frame(f inFrame) error {
	n.st.Received++
	if len(f.frame) > 0 && f.frame[0] == 1 {
		n.st.Refused.Version++
		n.fault(faultKey{cause: "version", link: f.from, from: f.from, to: -1}, f,
			fmt.Sprintf("node %d sends version-1 frames: it runs an older release; upgrade it", f.from))
		return nil
	}
	body := f.frame
	if n.keys.frame != nil {
		var ok bool
		if body, ok = checkMAC(f.frame, n.keys.frame); !ok {
			n.st.Refused.MAC++
			n.fault(faultKey{cause: "mac", link: f.from, from: -1, to: -1}, f,
				fmt.Sprintf("frames on the link of node %d fail authentication (no MAC or a wrong one): forged or damaged frames, or a node with another key_file or with insecure: true; they are refused", f.from))
			return nil
		}
	}
	h, d, err := DecodeFrame(body, 0)
	if err != nil {
		n.st.Rejected++
		n.limitedLog("undecodable", "node %d: frame from %d: %v", n.cfg.ID, f.from, err)
		return nil
	}
	port, nbr := n.portOf[h.From]
	switch {
	case h.Fleet != n.id.Fleet:
		n.st.Refused.Fleet++
		n.fault(faultKey{"fleet", f.from, h.From, h.To, h.Fleet}, f,
			fmt.Sprintf("node %d of fleet %016x sends here (node %d of fleet %s): a peer address of another fleet's node leads here", h.From, h.Fleet, n.cfg.ID, n.id.FleetHex()))
		return nil
	case h.To != n.cfg.ID:
		n.st.Refused.Receiver++
		n.fault(faultKey{"receiver", f.from, h.From, h.To, h.Fleet}, f,
			fmt.Sprintf("node %d's frames for node %d arrive at node %d: its peer address for node %d leads here", h.From, h.To, n.cfg.ID, h.To))
		return nil
	case !nbr:
		n.st.Refused.Sender++
		n.fault(faultKey{"sender", f.from, h.From, h.To, h.Fleet}, f,
			fmt.Sprintf("node %d, not a neighbour of node %d, sends here", h.From, n.cfg.ID))
		return nil
	case h.From != f.from:
		n.st.Refused.Sender++
		n.fault(faultKey{"sender", f.from, h.From, h.To, h.Fleet}, f,
			fmt.Sprintf("frames of node %d arrive on the link of node %d", h.From, f.from))
		return nil
	}
	if !n.incarnation(port, h, f) {
		return nil
	}
	if d.Kind == handoff.DatagramData {
		if err := n.catchUp(d.Msg.Round); err != nil {
			return err
		}
	}
	d.Port = port
	if d.Kind == handoff.DatagramData && len(d.Items) > 0 && d.Seq == n.nd.Sequence(port).Delivered+1 {
		if size := itemBytes(n.nd.Items()) + itemBytes(d.Items); size > n.maxItemBytes {
			// Taking the items would let the program send a frame over the limit:
			// leave them with the sender, which retransmits until the node has room.
			n.st.Deferred++
			n.limitedLog("deferred", "node %d: deferred a datagram of %d items from %d: the items held would take %d bytes in a frame, over the limit of %d", n.cfg.ID, len(d.Items), f.from, size, n.maxItemBytes)
			return nil
		}
	}
	delivered := n.nd.Stats().Delivered
	if err := n.nd.Step(d); err != nil {
		n.st.Rejected++
		n.logf("node %d: datagram from %d: %v", n.cfg.ID, f.from, err)
		return nil
	}
	if n.nd.Stats().Delivered != delivered {
		n.st.Delivered++
		if n.firstDelivery == 0 {
			n.firstDelivery = max(time.Since(n.started), time.Nanosecond)
		}
	}
	return nil
}

// maxCatchUpRounds bounds the rounds one message moves the round clock forward (a
// neighbour's message of a round absurdly far ahead must not make the program skip
// rounds for ever): a node further behind catches up over several messages, one per
// round of its neighbours at most.
const maxCatchUpRounds = 1 << 16

// maxClock bounds the round clock a catch-up sets (2⁶², 146 million years of 1 ms
// ticks), far from int64's overflow in the ticks that follow.
const maxClock = 1 << 62

// catchUp moves the round clock forward to the first tick of round r's window (r·p,
// with p = Config.Patience) when it is behind it, and ticks the machine there, so that
// the program leaves the rounds whose windows have passed (docs/fleet.md, "The round
// clock"). A neighbour's data datagram of round r means that neighbour's clock has
// reached r·p: a node that was paused, down, slow or started late joins its
// neighbours' round on their first message instead of staying rounds behind for good.
// The clock never goes back, and one message moves it at most maxCatchUpRounds rounds
// and never past maxClock. With zero patience, an idle machine or a clock at or past
// r·p it does nothing. O(1) plus the machine's Tick (the program skips the rounds
// whose windows passed, O(rounds skipped · degree) at most).
func (n *Node) catchUp(r int64) error {
	p := n.cfg.Patience
	if p <= 0 || r <= 0 || n.nd.Idle() {
		return nil
	}
	r = min(r, n.now/p+maxCatchUpRounds)
	at := int64(maxClock)
	if r <= maxClock/p {
		at = r * p
	}
	if at <= n.now {
		return nil
	}
	n.st.CaughtUp += at - n.now
	n.now = at
	return n.nd.Tick(n.now)
}

// incarnation checks the sender's process on port (docs/fleet.md, "Identity"): a
// higher epoch supersedes the current process (a restart); a lower epoch is refused
// (reported past the grace); the same epoch with another incarnation is a second
// live process with the neighbour's ID, after which every frame from it is refused.
// It reports whether the frame may be applied.
func (n *Node) incarnation(port int, h FrameHeader, f inFrame) bool {
	pi := &n.peerIncs[port]
	if pi.dup {
		n.st.Refused.Duplicate++
		n.fault(faultKey{cause: "duplicate", link: f.from, from: h.From, to: h.To, fleet: h.Fleet}, f, "")
		return false
	}
	switch {
	case pi.inc == 0 || h.Epoch > pi.epoch:
		if pi.inc != 0 {
			pi.since = time.Now()
			n.logf("node %d: node %d restarted (epoch %d, was %d)", n.cfg.ID, h.From, h.Epoch, pi.epoch)
		}
		pi.epoch, pi.inc = h.Epoch, h.Incarnation
		return true
	case h.Epoch == pi.epoch && h.Incarnation == pi.inc:
		return true
	case h.Epoch == pi.epoch:
		pi.dup = true
		n.st.DuplicatePeers = append(n.st.DuplicatePeers, h.From)
		n.faultsChanged = true
		n.st.Refused.Duplicate++
		n.fault(faultKey{cause: "duplicate", link: f.from, from: h.From, to: h.To, fleet: h.Fleet}, f,
			fmt.Sprintf("two live processes claim node %d, both in epoch %d (incarnations %016x and %016x): all its frames are refused", h.From, h.Epoch, pi.inc, h.Incarnation))
		return false
	}
	// An older process.
	n.st.Refused.Stale++
	grace := DuplicateGrace
	if n.opts.dupGrace > 0 {
		grace = n.opts.dupGrace
	}
	since := pi.since
	if since.IsZero() { // heard only the newer process: count from this node's start
		since = n.started
	}
	if time.Since(since) > grace {
		n.fault(faultKey{cause: "stale", link: f.from, from: h.From, to: h.To, fleet: h.Fleet}, f,
			fmt.Sprintf("frames of node %d's epoch %d arrive after its epoch %d started (more than %v later): a slow link, or a second live process of node %d started from an older copy of its state; they are refused", h.From, h.Epoch, pi.epoch, grace, h.From))
		return false
	}
	n.st.Rejected++
	n.limitedLog("stale", "node %d: refused a frame of node %d's epoch %d (it restarted: epoch %d)", n.cfg.ID, h.From, h.Epoch, pi.epoch)
	return false
}

// fault counts a refused frame in Rejected and in the fault k (recorded with detail
// the first time, up to maxFaults), and logs it at most once per second per cause.
func (n *Node) fault(k faultKey, f inFrame, detail string) {
	n.st.Rejected++
	i, ok := n.faultIdx[k]
	if !ok && len(n.st.Faults) < maxFaults {
		i, ok = len(n.st.Faults), true
		n.faultIdx[k] = i
		n.st.Faults = append(n.st.Faults, LinkFault{Cause: k.cause, Link: k.link, From: k.from, To: k.to,
			Fleet: fmt.Sprintf("%016x", k.fleet), Detail: detail})
	}
	if ok {
		n.st.Faults[i].Frames++
		n.faultsChanged = true
		detail = n.st.Faults[i].Detail
	}
	n.limitedLog(k.cause, "node %d: refused a frame from link %d (%d bytes): %s", n.cfg.ID, f.from, len(f.frame), detail)
}

// limitedLog logs at most one line per second per cause, saying how many it skipped.
func (n *Node) limitedLog(cause, format string, args ...any) {
	l := n.logged[cause]
	if now := time.Now(); now.Sub(l.last) >= time.Second {
		if l.suppressed > 0 {
			format += fmt.Sprintf(" (and %d more %s refusals not logged)", l.suppressed, cause)
		}
		n.logf(format, args...)
		l = logLimit{last: now}
	} else {
		l.suppressed++
	}
	n.logged[cause] = l
}

// flush persists the node's Ready, and only then sends its datagrams. It encodes
// the frames first: one over Config.MaxFrame (which MaxItemBytes keeps from
// happening) returns an error before anything is persisted or sent.
func (n *Node) flush() error {
	if n.nd.HasReady() {
		rd, err := n.nd.Ready()
		if err != nil {
			return err
		}
		frames := make([][]byte, len(rd.Datagrams))
		for i, d := range rd.Datagrams {
			f, err := n.encode(d)
			if err != nil {
				return err
			}
			frames[i] = f
		}
		if rd.State != nil {
			if err := n.save(rd.State); err != nil {
				return err
			}
		}
		for i, d := range rd.Datagrams {
			if err := n.tr.Send(n.nbrs[d.Port], frames[i]); err != nil {
				return err
			}
			n.st.Sent++
		}
		n.nd.Advance()
	}
	n.refresh()
	return nil
}

// encode returns d's frame with the node's identity, or an error for a frame over
// Config.MaxFrame (the transport would refuse it).
func (n *Node) encode(d handoff.Datagram) ([]byte, error) {
	to := n.nbrs[d.Port]
	frame := AppendFrame(nil, FrameHeader{Fleet: n.id.Fleet, From: n.cfg.ID, To: to, Epoch: n.epoch, Incarnation: n.inc}, d)
	if n.keys.frame != nil {
		frame = appendMAC(frame, n.keys.frame)
	}
	if len(frame) > n.cfg.maxFrame() {
		return nil, errs.BadParam("node %d: a frame of %d bytes (%d items) for node %d, over max_frame %d; not persisted, not sent", n.cfg.ID, len(frame), len(d.Items), to, n.cfg.maxFrame())
	}
	return frame, nil
}

// send encodes d with the node's identity and hands it to the transport.
func (n *Node) send(d handoff.Datagram) error {
	frame, err := n.encode(d)
	if err != nil {
		return err
	}
	if err := n.tr.Send(n.nbrs[d.Port], frame); err != nil {
		return err
	}
	n.st.Sent++
	return nil
}

// save persists state behind the node's identity record.
func (n *Node) save(state []byte) error {
	t0 := time.Now()
	if err := n.store.Save(appendRecord(nil, n.id, n.epoch, state)); err != nil {
		return errs.Wrapf(err, "node %d", n.cfg.ID)
	}
	n.st.SaveSeconds += time.Since(t0).Seconds()
	n.st.Saves++
	return nil
}

// refresh copies the handoff's figures into the published status.
func (n *Node) refresh() {
	c, s := n.nd.NodeContext(), n.nd.Stats()
	n.st.Load, n.st.InFlight, n.st.Unacked, n.st.Idle = c.Load, n.nd.InFlight(), n.nd.Unacked(), n.nd.Idle()
	n.st.Moved, n.st.Messages = c.Moved, c.Messages
	n.st.Retransmissions, n.st.Duplicates, n.st.OutOfOrder = s.Retransmissions, s.Duplicates, s.OutOfOrder
	n.st.FirstDelivery = n.firstDelivery.Seconds()
	n.st.Now = n.now
	if n.faultsChanged || n.pubFaults == nil {
		// Published copies: the node's goroutine goes on changing st's.
		n.pubFaults = append([]LinkFault{}, n.st.Faults...)
		n.pubDups = append([]int{}, n.st.DuplicatePeers...)
		n.faultsChanged = false
	}
	n.mu.Lock()
	n.pub = n.st
	n.pub.Faults, n.pub.DuplicatePeers = n.pubFaults, n.pubDups
	n.mu.Unlock()
}

func (n *Node) close() error {
	var err error
	if n.tr != nil {
		err = n.tr.Close()
	}
	return errors.Join(err, n.store.Close())
}

// Close releases the store and the transport of a node whose Run was never called
// (Run closes them itself). O(1) plus the transport's Close.
func (n *Node) Close() error { return n.close() }

// ErrStopped is returned by the request methods when Run has returned without taking
// the request: nothing was done. (A request Run took gets its own answer, even when Run
// returns right after it.)
var ErrStopped = errors.New("tokendist: node stopped")

// do runs f on the node's goroutine, which then persists and sends; do returns after
// that (with the error of the persisting), or with ctx's error or ErrStopped.
func (n *Node) do(ctx context.Context, f func()) error {
	r := adminReq{f: f, done: make(chan error, 1)}
	select {
	case n.admin <- r:
	case <-n.done:
		return ErrStopped
	case <-ctx.Done():
		return errs.Wrapf(ctx.Err(), "node %d", n.cfg.ID)
	}
	select {
	case err := <-r.done:
		return err
	case <-n.done:
		// Run answers a request it took before it returns: prefer that answer (a
		// request done and saved must not be reported as ErrStopped, "nothing done").
		select {
		case err := <-r.done:
			return err
		default:
			return ErrStopped
		}
	}
}

// AddItems adds work: the items ids arrive at the node. It returns once they are
// persisted (from then on the fleet keeps them exactly once until they complete). The
// IDs must be new to the fleet (see InitialItemID). It refuses, adding nothing, a
// request that names an ID twice or an ID the node holds (the fleet's other nodes are
// not asked), and one after which the items the node holds would not fit one frame
// (MaxItemBytes: a node's program may send its whole load in one message, and a frame
// over TCPOptions.MaxFrame is never sent); the error wraps tokendist.ErrBadParameter
// and names the ID or the limit. O(len(ids) + load) plus a Save.
func (n *Node) AddItems(ctx context.Context, ids []uint64) error {
	seen := make(map[uint64]struct{}, len(ids))
	for _, id := range ids {
		if _, dup := seen[id]; dup {
			return &refusal{code: 400, err: errs.BadParam("node %d: item %d appears twice in one request", n.cfg.ID, id)}
		}
		seen[id] = struct{}{}
	}
	var refused error
	err := n.do(ctx, func() {
		held := n.nd.Items()
		for _, id := range held {
			if _, dup := seen[id]; dup {
				refused = &refusal{code: 409, err: errs.BadParam("node %d: item %d is held by the node already", n.cfg.ID, id)}
				return
			}
		}
		if size := itemBytes(held) + itemBytes(ids); size > n.maxItemBytes {
			refused = &refusal{code: 413, err: errs.BadParam("node %d: adding %d items would make the %d items it holds %d bytes in a frame, over the limit of %d (MaxItemBytes: TCPOptions.MaxFrame %d less %d bytes of header); complete items first, or add them to another node",
				n.cfg.ID, len(ids), len(held)+len(ids), size, n.maxItemBytes, n.maxItemBytes+MaxFrameOverhead, MaxFrameOverhead)}
			return
		}
		n.nd.AddItems(slices.Clone(ids))
		n.st.Added += int64(len(ids))
	})
	if err != nil {
		return err
	}
	return refused
}

// refusal is a request the node refused; code is the HTTP status it answers.
type refusal struct {
	code int
	err  error
}

func (r *refusal) Error() string { return r.err.Error() }
func (r *refusal) Unwrap() error { return r.err }

// MaxFrameOverhead is the most bytes of a frame that are not item IDs: the version
// and kind bytes, the identity header, the sequence number, the message and the item
// count, each varint at its longest (AppendFrame), and the MAC (MACSize). A frame
// whose items take at most TCPOptions.MaxFrame − MaxFrameOverhead bytes fits any
// transport with that MaxFrame.
const MaxFrameOverhead = 2 + 10 + 5 + 5 + 10 + 10 + 10 + (2 + 3*10) + 10 + MACSize

// itemBytes is the bytes that ids take in a frame (each a uvarint, 1 to 10 bytes).
// O(len(ids)).
func itemBytes(ids []uint64) int {
	k := 0
	for _, id := range ids {
		k += uvarintLen(id)
	}
	return k
}

func uvarintLen(x uint64) int {
	k := 1
	for x >= 0x80 {
		x >>= 7
		k++
	}
	return k
}

// CompleteItems finishes up to k items the node holds (the oldest first) and returns
// their IDs once their removal is persisted. O(load) plus a Save.
func (n *Node) CompleteItems(ctx context.Context, k int) ([]uint64, error) {
	var out []uint64
	var err error
	if e := n.do(ctx, func() {
		if out, err = n.nd.CompleteItems(k); err == nil {
			n.st.Completed += int64(len(out))
		}
	}); e != nil {
		return nil, e
	}
	return out, err
}

// Items returns a copy of the IDs the node holds. O(load).
func (n *Node) Items(ctx context.Context) ([]uint64, error) {
	var out []uint64
	err := n.do(ctx, func() { out = slices.Clone(n.nd.Items()) })
	return out, err
}

// MaxItemBytes returns the bytes the item IDs of one frame may take:
// Config.MaxFrame (its default when 0) less MaxFrameOverhead. A node holds at most
// items that take this many bytes in a frame (each ID a uvarint of 1 to 10 bytes: at
// least MaxItemBytes/10 items of any IDs), so that any message its program sends fits
// one frame: AddItems refuses more, and a data datagram that would bring more waits
// with its sender (Status.Deferred). O(1).
func (n *Node) MaxItemBytes() int { return n.maxItemBytes }

// Snapshot returns the node's status. O(1).
func (n *Node) Snapshot() Status {
	n.mu.Lock()
	s := n.pub
	n.mu.Unlock()
	s.Uptime = time.Since(n.started).Seconds()
	return s
}
