package node

import (
	"errors"
	"math"
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
