package fleet

import (
	"testing"

	"go.uber.org/goleak"
)

// TestTCPTransportCloseTwice: a second Close of a TCPTransport returns nil: Close
// does not report the listener's net.ErrClosed.
func TestTCPTransportCloseTwice(t *testing.T) {
	defer goleak.VerifyNone(t)
	tr, err := NewTCPTransport(0, "127.0.0.1:0", map[int]string{1: "127.0.0.1:9"}, func(int, []byte) {}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.Close(); err != nil {
		t.Fatal(err)
	}
	if err := tr.Close(); err != nil {
		t.Errorf("a second Close: %v; want nil", err)
	}
}
