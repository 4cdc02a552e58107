package fleet

import (
	"runtime"
	"strings"
	"testing"

	"github.com/tokendist/tokendist/handoff"
	"github.com/tokendist/tokendist/node"
)

// TestDecodeFrameEdges pins DecodeFrame at its edges: which defect the error names for
// the shortest frames and an item count past the bytes left, an ack that carries items,
// the item-count bound (maxFrameItems items decode, one more is refused), and the
// allocation of a short frame claiming many items (the 11-byte frame that made
// the decoder allocate 8 MiB).
func TestDecodeFrameEdges(t *testing.T) {
	h := FrameHeader{Fleet: 5, From: 1, To: 2, Epoch: 1, Incarnation: 1}
	// The header of a data frame, its message, then an item count of k and no items.
	claim := func(k uint64) []byte {
		b := AppendFrame(nil, h, handoff.Datagram{Kind: handoff.DatagramData, Seq: 1, Msg: node.Message{Tokens: 1}})
		b = b[:len(b)-1] // the item count 0
		for ; k >= 0x80; k >>= 7 {
			b = append(b, byte(k)|0x80)
		}
		return append(b, byte(k))
	}
	ackItems := AppendFrame(nil, h, handoff.Datagram{Kind: handoff.DatagramAck, Seq: 3, Items: []uint64{9}})
	for _, c := range []struct {
		name string
		b    []byte
		want string
	}{
		{"the single byte 1", []byte{1}, "version-1 frame"},
		{"the single byte 2", []byte{2}, "not a version-2 frame"},
		{"version and kind only", []byte{2, byte(handoff.DatagramData)}, "bad identity header"},
		{"an item count past the bytes left", claim(1 << 19), "bad header or message"},
		{"an ack with items", ackItems, "an ack with a message"},
	} {
		_, _, err := DecodeFrame(c.b, 0)
		if err == nil || !strings.HasPrefix(err.Error(), "tokendist: ") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %v: %v; want an error naming %q", c.name, c.b, err, c.want)
		}
	}

	// maxFrameItems one-byte items decode; maxFrameItems+1 are refused though the bytes
	// are there.
	for _, k := range []uint64{maxFrameItems, maxFrameItems + 1} {
		b := claim(k)
		b = append(b, make([]byte, k)...) // k items of ID 0
		_, d, err := DecodeFrame(b, 0)
		if k <= maxFrameItems && (err != nil || uint64(len(d.Items)) != k) {
			t.Errorf("a frame of %d items: %d items, %v; want them all", k, len(d.Items), err)
		}
		if k > maxFrameItems && (err == nil || !strings.Contains(err.Error(), "bad header or message")) {
			t.Errorf("a frame of %d items (over maxFrameItems %d): %v; want it refused", k, maxFrameItems, err)
		}
	}

	// A short frame claiming maxFrameItems items allocates about its own size, not
	// 8 bytes per claimed item (8 MiB).
	b := claim(maxFrameItems)
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	for range 10 {
		if _, _, err := DecodeFrame(b, 0); err == nil {
			t.Fatal("a frame claiming more items than it has bytes decoded")
		}
	}
	runtime.ReadMemStats(&m1)
	if per := (m1.TotalAlloc - m0.TotalAlloc) / 10; per > 64<<10 {
		t.Errorf("decoding a %d-byte frame claiming %d items allocated %d bytes per call; want at most 64 KiB", len(b), maxFrameItems, per)
	}
}
