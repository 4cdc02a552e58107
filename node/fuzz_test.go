package node_test

import (
	"strings"
	"testing"

	"github.com/tokendist/tokendist/node"
)

// FuzzDecodeMessage: DecodeMessage never panics, and what it accepts encodes back to the
// bytes it read.
func FuzzDecodeMessage(f *testing.F) {
	b, _ := node.Message{Kind: 1, Round: 2, Value: -3, Tokens: 4, Counted: true}.AppendBinary(nil)
	f.Add(b)
	f.Add([]byte{0, 2, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		m, k, err := node.DecodeMessage(data)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "tokendist: ") {
				t.Fatalf("error %q lacks the tokendist: prefix", err)
			}
			return
		}
		again, _ := m.AppendBinary(nil)
		if m2, k2, err := node.DecodeMessage(again); err != nil || m2 != m || k2 != len(again) || k > len(data) {
			t.Fatalf("%x: decoded %+v from %d bytes; re-encoded %x decodes to %+v, %d, %v", data, m, k, again, m2, k2, err)
		}
	})
}
