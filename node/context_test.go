package node

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/tokendist/tokendist/internal/errs"
)

// TestSendOverflow: Send refuses a message that would take Moved or Messages past the
// int64 range, with an error wrapping ErrOverflow, and sends nothing; the largest
// message that still fits is sent.
func TestSendOverflow(t *testing.T) {
	c := &Context{ID: 7, Degree: 2, Load: 10, Moved: math.MaxInt64 - 4}
	err := c.Send(1, Message{Tokens: 5})
	if !errors.Is(err, errs.ErrOverflow) || !strings.HasPrefix(err.Error(), "tokendist: ") || !strings.Contains(err.Error(), "node 7") {
		t.Fatalf("Moved overflow: %v", err)
	}
	if c.Load != 10 || c.Moved != math.MaxInt64-4 || len(c.Outbox()) != 0 {
		t.Fatalf("a refused send changed the context: load %d, moved %d, outbox %v", c.Load, c.Moved, c.Outbox())
	}
	if err := c.Send(1, Message{Tokens: 4}); err != nil || c.Moved != math.MaxInt64 || c.Load != 6 {
		t.Fatalf("the last send that fits: %v, moved %d, load %d", err, c.Moved, c.Load)
	}
	c = &Context{ID: 7, Degree: 2, Load: 10, Messages: math.MaxInt64}
	if err := c.Send(0, Message{Tokens: 1, Counted: true}); !errors.Is(err, errs.ErrOverflow) || c.Load != 10 || len(c.Outbox()) != 0 {
		t.Fatalf("Messages overflow: %v, load %d", err, c.Load)
	}
	if err := c.Send(0, Message{Tokens: 1}); err != nil || c.Messages != math.MaxInt64 {
		t.Fatalf("an uncounted message does not count: %v", err)
	}
}

// TestSendRefusesBadMessages: Send refuses a port out of range, negative tokens and
// more tokens than the node holds with an error wrapping ErrBadParameter that names the
// node and the value, and sends nothing; the boundary cases (port 0 and Degree−1, zero
// tokens, exactly the load) are sent, and only a Counted message counts.
func TestSendRefusesBadMessages(t *testing.T) {
	for _, tc := range []struct {
		port int
		m    Message
		name string
	}{
		{-1, Message{Tokens: 1}, "port -1"},
		{3, Message{Tokens: 1}, "port 3"},
		{0, Message{Tokens: -1}, "-1 tokens"},
		{2, Message{Tokens: -1 << 63}, "-9223372036854775808 tokens"},
		{1, Message{Tokens: 11}, "11 tokens"},
	} {
		c := &Context{ID: 4, Degree: 3, Load: 10, Moved: 2, Messages: 1}
		err := c.Send(tc.port, tc.m)
		if !errors.Is(err, errs.ErrBadParameter) || !strings.HasPrefix(err.Error(), "tokendist: ") ||
			!strings.Contains(err.Error(), "node 4") || !strings.Contains(err.Error(), tc.name) {
			t.Errorf("Send(%d, %+v) = %v; want an ErrBadParameter naming node 4 and %q", tc.port, tc.m, err, tc.name)
		}
		if strings.HasPrefix(tc.name, "port") && !strings.Contains(err.Error(), "ports 0..2") {
			t.Errorf("Send(%d, %+v) = %v; want the valid ports 0..2 named", tc.port, tc.m, err)
		}
		if c.Load != 10 || c.Moved != 2 || c.Messages != 1 || len(c.Outbox()) != 0 {
			t.Errorf("Send(%d, %+v) refused but changed the context: load %d, moved %d, messages %d, outbox %v",
				tc.port, tc.m, c.Load, c.Moved, c.Messages, c.Outbox())
		}
	}
	c := &Context{ID: 4, Degree: 3, Load: 10}
	sends := []Envelope{
		{0, Message{Kind: 1, Tokens: 0, Counted: true}},
		{2, Message{Kind: 2, Tokens: 4}},
		{1, Message{Kind: 3, Tokens: 6, Counted: true}}, // exactly what is left
	}
	for _, e := range sends {
		if err := c.Send(e.Port, e.Msg); err != nil {
			t.Fatalf("Send(%d, %+v): %v", e.Port, e.Msg, err)
		}
	}
	if c.Load != 0 || c.Moved != 10 || c.Messages != 2 || !slices.Equal(c.Outbox(), sends) {
		t.Fatalf("after the sends: load %d, moved %d, messages %d, outbox %v; want 0, 10, 2, %v", c.Load, c.Moved, c.Messages, c.Outbox(), sends)
	}
	c.Reset()
	if len(c.Outbox()) != 0 || c.Load != 0 || c.Moved != 10 {
		t.Fatalf("Reset: outbox %v, load %d, moved %d", c.Outbox(), c.Load, c.Moved)
	}
}
