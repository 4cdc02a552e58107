package handoff

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests if a goroutine outlives them: a Machine starts none.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// mustReady returns m's Ready, panicking on its error (a test program's AppendState
// does not panic).
func mustReady(m interface{ Ready() (Ready, error) }) Ready {
	rd, err := m.Ready()
	if err != nil {
		panic(err)
	}
	return rd
}
