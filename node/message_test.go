package node

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// TestMessageEncoding: AppendBinary and DecodeMessage round-trip every field, take
// exactly the bytes written (a message can be followed by others), and refuse a
// truncated encoding, a flags byte above 1 and negative tokens with a tokendist error.
func TestMessageEncoding(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	edge := []int64{0, 1, -1, 1 << 62, -1 << 63, 1<<63 - 1}
	var buf []byte
	var want []Message
	for i := 0; i < 500; i++ {
		m := Message{Kind: uint8(r.IntN(256)), Round: int64(r.Uint64()), Value: edge[r.IntN(len(edge))],
			Tokens: r.Int64(), Counted: r.IntN(2) == 1}
		if i%3 == 0 {
			m.Round, m.Tokens = edge[r.IntN(len(edge))], int64(r.IntN(5))
		}
		buf, _ = m.AppendBinary(buf)
		want = append(want, m)
	}
	for i, w := range want {
		m, k, err := DecodeMessage(buf)
		if err != nil || m != w || k > maxMessageBytes {
			t.Fatalf("message %d: got %+v (%d bytes), %v; want %+v", i, m, k, err, w)
		}
		buf = buf[k:]
	}
	if len(buf) != 0 {
		t.Fatalf("%d bytes left", len(buf))
	}
	good, _ := Message{Kind: 3, Round: 7, Value: -2, Tokens: 9, Counted: true}.AppendBinary(nil)
	for _, bad := range [][]byte{nil, {3}, good[:len(good)-1], append([]byte{3, 2}, good[2:]...),
		func() []byte { b, _ := (Message{Tokens: -1}).AppendBinary(nil); return b }(),
		append([]byte{0, 0}, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01)} {
		if _, _, err := DecodeMessage(bad); err == nil || !strings.HasPrefix(err.Error(), "tokendist: ") || !strings.Contains(err.Error(), "message ") {
			t.Errorf("DecodeMessage(%v) = %v; want a tokendist error", bad, err)
		}
	}
}
