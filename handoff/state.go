package handoff

import (
	"encoding/binary"
	"fmt"

	"github.com/tokendist/tokendist/node"

	"github.com/tokendist/tokendist/internal/errs"
	"github.com/tokendist/tokendist/internal/wire"
)

// The persisted encoding: a header (magic, version), the load (8 bytes,
// little-endian, at a fixed offset), then varints. Version 1 is a CountMachine's,
// version 2 an ItemMachine's: each log entry is followed by its items' IDs, and the
// held IDs follow the links.
const (
	stateMagic       = 0xA5
	stateVersion     = 1
	stateVersionItem = 2
	loadOffset       = 2
)

// StateLoad returns the load recorded in a machine's persisted State, in O(1). It
// returns an error for bytes a Machine did not write (it checks the header only).
func StateLoad(state []byte) (int64, error) {
	if len(state) < loadOffset+8 || state[0] != stateMagic || (state[1] != stateVersion && state[1] != stateVersionItem) {
		return 0, errs.BadParam("persisted node state %s has no valid header", errs.Quote(state))
	}
	return int64(binary.LittleEndian.Uint64(state[loadOffset:])), nil
}

func (n *Machine) encode(b []byte) ([]byte, error) {
	v := byte(stateVersion)
	if n.itemMode {
		v = stateVersionItem
	}
	b = append(b, stateMagic, v)
	b = binary.LittleEndian.AppendUint64(b, uint64(n.ctx.Load))
	b = binary.AppendVarint(b, n.ctx.Now)
	b = binary.AppendVarint(b, n.ctx.Moved)
	b = binary.AppendVarint(b, n.ctx.Messages)
	b = binary.AppendUvarint(b, uint64(len(n.links)))
	for i := range n.links {
		l := &n.links[i]
		b = binary.AppendUvarint(b, l.next)
		b = binary.AppendUvarint(b, l.acked)
		b = binary.AppendUvarint(b, l.delivered)
		for j, m := range l.log {
			b, _ = m.AppendBinary(b)
			if n.itemMode {
				for _, id := range l.logItems[j] {
					b = binary.AppendUvarint(b, id)
				}
			}
		}
	}
	if n.itemMode {
		for _, id := range n.items {
			b = binary.AppendUvarint(b, id)
		}
	}
	// The program's state last, length-prefixed.
	prog, err := n.appendProgram(n.buf.prog[:0])
	if err != nil {
		return b, err
	}
	n.buf.prog = prog
	b = binary.AppendUvarint(b, uint64(len(n.buf.prog)))
	return append(b, n.buf.prog...), nil
}

// appendProgram calls the program's AppendState under a recover.
func (n *Machine) appendProgram(b []byte) (out []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			out, err = b, fmt.Errorf("%sprogram of node %d panicked in AppendState: %v", errs.Prefix, n.ctx.ID, r)
		}
	}()
	return n.prog.AppendState(b), nil
}

// State is what a machine's persisted State records, as DecodeState decodes it, for a
// host's audit of a stopped fleet: the persisted states of all nodes form a consistent
// cut, in which a token (an item) is held by a node, or in a sender's log with a
// sequence number above the receiver's Delivered (in flight), or in a log at or below
// it (already delivered: the receiver holds it; the ack has not arrived).
type State struct {
	// Load, Now, Moved and Messages are the node's node.Context fields.
	Load, Now, Moved, Messages int64
	// ItemMode reports an ItemMachine's state; Items are the IDs it holds (nil for a
	// CountMachine's).
	ItemMode bool
	Items    []uint64
	// Links are the sequence state of every port.
	Links []LinkState
}

// LinkState is one port's persisted sequence state and outgoing log.
type LinkState struct {
	Sequence
	// Log holds the unacknowledged data datagrams, sequence numbers Acked+1 ..
	// Next-1, with their items in an ItemMachine's state.
	Log []Datagram
}

// DecodeState decodes a machine's persisted State (the program's state is not
// decoded). It returns an error wrapping ErrBadParameter, naming the defect, for bytes
// a Machine did not write; it never panics and allocates O(len(state)). O(len(state)).
func DecodeState(state []byte) (State, error) {
	ps, _, err := parseState(state)
	if err != "" {
		return State{}, errs.BadParam("persisted state %s: %s", errs.Quote(state), err)
	}
	return ps, nil
}

// parseState decodes state, returning the program's state bytes, or a description of
// the first defect.
func parseState(state []byte) (ps State, prog []byte, bad string) {
	load, err := StateLoad(state)
	if err != nil || load < 0 {
		return ps, nil, "bad header or load"
	}
	ps.ItemMode = state[1] == stateVersionItem
	r := wire.NewReader(state[loadOffset+8:])
	ps.Load = load
	ps.Now = r.Varint()
	ps.Moved = r.Varint()
	ps.Messages = r.Varint()
	deg := r.Uvarint()
	if r.Failed() || deg > uint64(r.Len())/3 {
		return ps, nil, fmt.Sprintf("degree %d", deg)
	}
	ps.Links = make([]LinkState, deg)
	for i := range ps.Links {
		l := &ps.Links[i]
		l.Next, l.Acked, l.Delivered = r.Uvarint(), r.Uvarint(), r.Uvarint()
		if r.Failed() || l.Next == 0 || l.Acked >= l.Next || l.Next-l.Acked-1 > uint64(r.Len()) {
			return ps, nil, fmt.Sprintf("link %d sequence state", i)
		}
		k := int(l.Next - l.Acked - 1)
		l.Log = make([]Datagram, k)
		for j := range l.Log {
			g := &l.Log[j]
			g.Port, g.Kind, g.Seq = i, DatagramData, l.Acked+1+uint64(j)
			m, used, err := node.DecodeMessage(r.Rest())
			if err != nil {
				return ps, nil, fmt.Sprintf("link %d log entry %d", i, j)
			}
			g.Msg = m
			r.Skip(used)
			if ps.ItemMode {
				if g.Items = r.Uvarints(m.Tokens); r.Failed() {
					return ps, nil, fmt.Sprintf("link %d log entry %d items", i, j)
				}
			}
		}
	}
	if ps.ItemMode {
		if ps.Items = r.Uvarints(load); r.Failed() {
			return ps, nil, "held items"
		}
	}
	size := r.Uvarint()
	if r.Failed() || size != uint64(r.Len()) {
		return ps, nil, "program state length"
	}
	return ps, r.Rest(), ""
}

func (n *Machine) decode(state []byte) error {
	ps, prog, bad := parseState(state)
	if bad == "" && len(ps.Links) != len(n.links) {
		bad = fmt.Sprintf("degree %d, want %d", len(ps.Links), len(n.links))
	}
	if bad != "" {
		return errs.BadParam("node %d: persisted state %s: %s", n.ctx.ID, errs.Quote(state), bad)
	}
	n.ctx.Load, n.ctx.Now, n.ctx.Moved, n.ctx.Messages = ps.Load, ps.Now, ps.Moved, ps.Messages
	n.itemMode, n.items = ps.ItemMode, ps.Items
	for i := range n.links {
		l, p := &n.links[i], &ps.Links[i]
		l.next, l.acked, l.delivered = p.Next, p.Acked, p.Delivered
		l.log = make([]node.Message, len(p.Log))
		if n.itemMode {
			l.logItems = make([][]uint64, len(p.Log))
		}
		for j := range p.Log {
			l.log[j] = p.Log[j].Msg
			if n.itemMode {
				l.logItems[j] = p.Log[j].Items
			}
		}
	}
	return n.restoreProgram(prog)
}

func (n *Machine) restoreProgram(b []byte) (err error) {
	method := "RestoreState"
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%sprogram of node %d panicked in %s: %v", errs.Prefix, n.ctx.ID, method, r)
		}
	}()
	if err := n.prog.RestoreState(b); err != nil {
		return errs.Wrapf(err, "program of node %d: RestoreState", n.ctx.ID)
	}
	method = "Idle"
	n.idle = n.prog.Idle()
	return nil
}
