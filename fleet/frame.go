package fleet

import (
	"encoding/binary"
	"math"

	"github.com/tokendist/tokendist/node"

	"github.com/tokendist/tokendist/handoff"
	"github.com/tokendist/tokendist/internal/errs"
	"github.com/tokendist/tokendist/internal/wire"
)

// frameVersion is the first byte of every frame; a frame of another version is
// refused, so that a fleet can be upgraded node by node behind a version check.
// Version 1 (before the identity header) is refused with a message saying so.
const frameVersion = 2

// maxFrameItems bounds the items of one frame (a frame is at most TCPOptions.MaxFrame
// bytes anyway; this keeps a decoder's allocation proportional to its input).
const maxFrameItems = 1 << 20

// FrameHeader is the identity a frame carries (frame version 2): which fleet it
// belongs to, which node sent it and to which node, and the sender's process (its
// epoch and incarnation). A node applies a frame only when Fleet is its fleet's ID, To
// is itself, From is a neighbour and the link the transport says it came from, and
// the sender's process is the newest it has heard from From (docs/fleet.md,
// "Identity").
type FrameHeader struct {
	// Fleet is the fleet's ID (Identity.Fleet), the same on every node of one fleet.
	Fleet uint64
	// From and To are the sender's and the receiver's node IDs (0 ≤ ID < 2³¹).
	From, To int
	// Epoch counts the sender's starts on its store (1, 2, ...; saved before the
	// process sends anything): a restarted process has a higher epoch than the one
	// before it.
	Epoch uint64
	// Incarnation is a random number the sender draws when its process starts the
	// node (never 0): two processes that claim the same node ID differ in it.
	Incarnation uint64
}

// AppendFrame appends the wire encoding of datagram d with header h to b and returns
// the result (d.Port is not encoded: the receiver knows the link from h.From). The
// encoding is versioned: the version byte 2, the kind, then as varints the fleet ID,
// From, To, the epoch, the incarnation, the sequence number, the message (kind, flags, round,
// value, tokens) and the item IDs. O(len(d.Items)).
func AppendFrame(b []byte, h FrameHeader, d handoff.Datagram) []byte {
	b = append(b, frameVersion, byte(d.Kind))
	b = binary.AppendUvarint(b, h.Fleet)
	b = binary.AppendUvarint(b, uint64(h.From))
	b = binary.AppendUvarint(b, uint64(h.To))
	b = binary.AppendUvarint(b, h.Epoch)
	b = binary.AppendUvarint(b, h.Incarnation)
	b = binary.AppendUvarint(b, d.Seq)
	b, _ = d.Msg.AppendBinary(b)
	b = binary.AppendUvarint(b, uint64(len(d.Items)))
	for _, id := range d.Items {
		b = binary.AppendUvarint(b, id)
	}
	return b
}

// DecodeFrame decodes a frame AppendFrame wrote, with Port set to port. It returns an
// error wrapping tokendist.ErrBadParameter, quoting the bytes, for anything else (a
// version-1 frame, said so, or another version, an unknown kind, a node ID of 2³¹ or
// more, a zero epoch or incarnation, a truncated or over-long frame, negative tokens); it
// never panics, and allocates at most one ID per input byte. O(len(b)).
func DecodeFrame(b []byte, port int) (FrameHeader, handoff.Datagram, error) {
	bad := func(what string) (FrameHeader, handoff.Datagram, error) {
		return FrameHeader{}, handoff.Datagram{}, errs.BadParam("frame %s: %s", errs.Quote(b), what)
	}
	if len(b) >= 1 && b[0] == 1 {
		return bad("a version-1 frame (no fleet and node identity; sent by an older tokendist-node): this node reads version 2 only, upgrade every node of the fleet")
	}
	if len(b) < 2 || b[0] != frameVersion {
		return bad("not a version-2 frame")
	}
	d := handoff.Datagram{Port: port, Kind: handoff.DatagramKind(b[1])}
	if d.Kind != handoff.DatagramData && d.Kind != handoff.DatagramAck {
		return bad("unknown kind")
	}
	r := wire.NewReader(b[2:])
	var h FrameHeader
	h.Fleet = r.Uvarint()
	from, to := r.Uvarint(), r.Uvarint()
	h.Epoch = r.Uvarint()
	h.Incarnation = r.Uvarint()
	if r.Failed() || from > math.MaxInt32 || to > math.MaxInt32 || h.Epoch == 0 || h.Incarnation == 0 {
		return bad("bad identity header")
	}
	h.From, h.To = int(from), int(to)
	d.Seq = r.Uvarint()
	if !r.Failed() {
		m, used, err := node.DecodeMessage(r.Rest())
		if err != nil {
			return bad("bad message")
		}
		d.Msg = m
		r.Skip(used)
	}
	k := r.Uvarint()
	if r.Failed() || k > uint64(r.Len()) || k > maxFrameItems {
		return bad("bad header or message")
	}
	d.Items = r.Uvarints(int64(k))
	if r.Failed() || r.Len() != 0 {
		return bad("truncated or trailing bytes")
	}
	if d.Kind == handoff.DatagramAck && (d.Msg != (node.Message{}) || k != 0) {
		return bad("an ack with a message")
	}
	return h, d, nil
}
