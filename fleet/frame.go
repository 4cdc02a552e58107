package fleet

import (
	"encoding/binary"

	"github.com/tokendist/tokendist/node"

	"github.com/tokendist/tokendist/handoff"
	"github.com/tokendist/tokendist/internal/errs"
	"github.com/tokendist/tokendist/internal/wire"
)

// frameVersion is the first byte of every frame; a frame of another version is
// refused, so that a fleet can be upgraded node by node behind a version check.
const frameVersion = 1

// maxFrameItems bounds the items of one frame (a frame is at most TCPOptions.MaxFrame
// bytes anyway; this keeps a decoder's allocation proportional to its input).
const maxFrameItems = 1 << 20

// AppendFrame appends the wire encoding of datagram d (its Port is not encoded: the
// receiver knows the link from the sender's ID) to b and returns the result. The
// encoding is versioned: a version byte, the kind, the sequence number, the message
// (kind, flags, round, value, tokens) and the item IDs, as varints. O(len(d.Items)).
func AppendFrame(b []byte, d handoff.Datagram) []byte {
	b = append(b, frameVersion, byte(d.Kind))
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
// wrong version, an unknown kind, a truncated or over-long frame, negative tokens);
// it never panics, and allocates at most one ID per input byte. O(len(b)).
func DecodeFrame(b []byte, port int) (handoff.Datagram, error) {
	bad := func(what string) (handoff.Datagram, error) {
		return handoff.Datagram{}, errs.BadParam("frame %s: %s", errs.Quote(b), what)
	}
	if len(b) < 2 || b[0] != frameVersion {
		return bad("not a version-1 frame")
	}
	d := handoff.Datagram{Port: port, Kind: handoff.DatagramKind(b[1])}
	if d.Kind != handoff.DatagramData && d.Kind != handoff.DatagramAck {
		return bad("unknown kind")
	}
	r := wire.NewReader(b[2:])
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
	return d, nil
}
