package fleet

import (
	"encoding/binary"

	"github.com/tokendist/tokendist"
	"github.com/tokendist/tokendist/async"
	"github.com/tokendist/tokendist/internal/errs"
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
func AppendFrame(b []byte, d async.Datagram) []byte {
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
func DecodeFrame(b []byte, port int) (async.Datagram, error) {
	bad := func(what string) (async.Datagram, error) {
		return async.Datagram{}, errs.BadParam("frame %s: %s", errs.Quote(b), what)
	}
	if len(b) < 2 || b[0] != frameVersion {
		return bad("not a version-1 frame")
	}
	d := async.Datagram{Port: port, Kind: async.DatagramKind(b[1])}
	if d.Kind != async.Data && d.Kind != async.Ack {
		return bad("unknown kind")
	}
	r := reader{b: b[2:]}
	d.Seq = r.uvarint()
	if !r.err {
		m, used, err := tokendist.DecodeMessage(r.b)
		if err != nil {
			return bad("bad message")
		}
		d.Msg, r.b = m, r.b[used:]
	}
	k := r.uvarint()
	if r.err || k > uint64(len(r.b)) || k > maxFrameItems {
		return bad("bad header or message")
	}
	if k > 0 {
		d.Items = make([]uint64, k)
		for i := range d.Items {
			d.Items[i] = r.uvarint()
		}
	}
	if r.err || len(r.b) != 0 {
		return bad("truncated or trailing bytes")
	}
	if d.Kind == async.Ack && (d.Msg != (tokendist.Message{}) || k != 0) {
		return bad("an ack with a message")
	}
	return d, nil
}

type reader struct {
	b   []byte
	err bool
}

func (r *reader) uvarint() uint64 {
	v, k := binary.Uvarint(r.b)
	if k <= 0 {
		r.err, r.b = true, nil
		return 0
	}
	r.b = r.b[k:]
	return v
}
