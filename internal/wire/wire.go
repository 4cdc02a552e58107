// Package wire reads the varint framing that the module's binary encodings share (a
// node program's saved state, a Message, a handoff machine's persisted state, a fleet
// frame): one Reader with a sticky failure, so that a decoder reads every field and
// checks once.
package wire

import "encoding/binary"

// Reader reads fields from the front of a byte slice. The first malformed, overlong or
// missing field makes it fail: Failed then reports true, the rest is dropped and every
// later read returns zero. A decoder reads its fields, checks Failed (and whatever
// bounds its format has) once, and builds its own error naming the value. The zero
// value reads nothing; a Reader is not safe for concurrent use.
type Reader struct {
	b    []byte
	used int
	bad  bool
}

// NewReader returns a Reader of b (which it does not copy or modify). O(1).
func NewReader(b []byte) Reader { return Reader{b: b} }

// Fail makes the reader fail (a decoder's own check of a value). O(1).
func (r *Reader) Fail() {
	r.bad = true
	r.b = nil
}

// Failed reports whether a read or Fail failed the reader. O(1).
func (r *Reader) Failed() bool { return r.bad }

// Len returns the number of bytes left. O(1).
func (r *Reader) Len() int { return len(r.b) }

// Used returns the number of bytes read so far. O(1).
func (r *Reader) Used() int { return r.used }

// Rest returns the bytes left (nil after a failure), without consuming them. O(1).
func (r *Reader) Rest() []byte { return r.b }

// Skip consumes n bytes (the size of a field decoded from Rest); it fails for n
// negative or above Len. O(1).
func (r *Reader) Skip(n int) {
	if r.bad || n < 0 || n > len(r.b) {
		r.Fail()
		return
	}
	r.b = r.b[n:]
	r.used += n
}

// Byte reads one byte. O(1).
func (r *Reader) Byte() byte {
	if r.bad || len(r.b) == 0 {
		r.Fail()
		return 0
	}
	x := r.b[0]
	r.Skip(1)
	return x
}

// Uvarint reads an unsigned varint (encoding/binary's). O(1).
func (r *Reader) Uvarint() uint64 {
	if r.bad {
		return 0
	}
	x, k := binary.Uvarint(r.b)
	if k <= 0 {
		r.Fail()
		return 0
	}
	r.Skip(k)
	return x
}

// Varint reads a signed varint (encoding/binary's). O(1).
func (r *Reader) Varint() int64 {
	if r.bad {
		return 0
	}
	x, k := binary.Varint(r.b)
	if k <= 0 {
		r.Fail()
		return 0
	}
	r.Skip(k)
	return x
}

// Count reads an unsigned varint in 0..most; it fails above most (and for most < 0).
// O(1).
func (r *Reader) Count(most int) int {
	x := r.Uvarint()
	if most < 0 || x > uint64(most) {
		r.Fail()
		return 0
	}
	return int(x)
}

// Uvarints reads k unsigned varints into a new slice (nil for k = 0). Each takes at
// least one byte, so it fails, before allocating, for k negative or above Len: a
// decoder allocates at most one element per input byte. O(k).
func (r *Reader) Uvarints(k int64) []uint64 {
	if r.bad || k < 0 || k > int64(len(r.b)) {
		r.Fail()
		return nil
	}
	if k == 0 {
		return nil
	}
	out := make([]uint64, k)
	for i := range out {
		out[i] = r.Uvarint()
	}
	return out
}
