package node

import (
	"encoding/binary"

	"github.com/tokendist/tokendist/internal/errs"
	"github.com/tokendist/tokendist/internal/wire"
)

// Message is what a node program sends over one link. Kind, Round and Value are the
// program's to define (a message kind, the round it belongs to, a load or a proposal).
// Tokens are the tokens it carries: Context.Send takes them from the sender's load,
// and the host adds them to the receiver's load exactly once.
type Message struct {
	// Kind is the program's message type (the built-in programs start at 1).
	Kind uint8
	// Round is the round the message belongs to (or any number the program defines).
	Round int64
	// Value is the program's payload: a load, a proposal, a digit.
	Value int64
	// Tokens is the number of tokens the message carries (≥ 0).
	Tokens int64
	// Counted marks a message of the algorithm's own model, the kind tokendist.Run
	// counts in Result.Messages (for example the two load reports of a
	// dimension-exchange edge). Messages that only pace an asynchronous execution (a
	// round marker with no tokens) and the host's acknowledgements and
	// retransmissions are not counted.
	Counted bool
}

// maxMessageBytes is the longest encoding of a Message: kind, flags and three varints.
const maxMessageBytes = 2 + 3*binary.MaxVarintLen64

// AppendBinary appends m's binary encoding to b and returns the result (it implements
// encoding.BinaryAppender and never fails): Kind, a flags byte (1 when Counted, else 0),
// then Round, Value and Tokens as varints, at most 32 bytes. Hosts use it to persist a
// node's outgoing log and to put messages on the wire. O(1).
func (m Message) AppendBinary(b []byte) ([]byte, error) {
	flags := byte(0)
	if m.Counted {
		flags = 1
	}
	b = append(b, m.Kind, flags)
	b = binary.AppendVarint(b, m.Round)
	b = binary.AppendVarint(b, m.Value)
	return binary.AppendVarint(b, m.Tokens), nil
}

// DecodeMessage decodes the Message that AppendBinary wrote at the start of b and
// returns it with the number of bytes it took. It returns an error wrapping
// tokendist.ErrBadParameter, and never panics, for a truncated encoding, a flags byte
// other than 0 or 1, or negative tokens. O(1).
func DecodeMessage(b []byte) (Message, int, error) {
	bad := func(what string) (Message, int, error) {
		return Message{}, 0, errs.BadParam("message %s: %s", errs.Quote(b[:min(len(b), maxMessageBytes)]), what)
	}
	if len(b) < 2 {
		return bad("truncated")
	}
	m := Message{Kind: b[0], Counted: b[1] == 1}
	if b[1] > 1 {
		return bad("flags not 0 or 1")
	}
	r := wire.NewReader(b[2:])
	m.Round, m.Value, m.Tokens = r.Varint(), r.Varint(), r.Varint()
	if r.Failed() {
		return bad("truncated or overlong varint")
	}
	if m.Tokens < 0 {
		return bad("negative tokens")
	}
	return m, 2 + r.Used(), nil
}
