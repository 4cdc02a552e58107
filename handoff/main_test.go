package handoff

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests if a goroutine outlives them: a Machine starts none.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
