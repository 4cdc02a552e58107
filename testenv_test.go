package tokendist

import (
	"os"
	"testing"
)

// The one switch for long tests (docs/design.md, section "Tests"): TOKENDIST_LONG=1 runs
// the tests that are skipped by default because they take minutes or assert wall-clock
// times, and widens the sweeps of the others. Every test reads it through these helpers
// (package tokendist_test through the exported LongTests and LongTest), never with
// os.Getenv.

// longTests reports whether TOKENDIST_LONG=1 asks for the long tests and larger sweeps.
func longTests() bool { return os.Getenv("TOKENDIST_LONG") == "1" }

// longTest skips t unless TOKENDIST_LONG=1.
func longTest(t testing.TB) {
	t.Helper()
	if !longTests() {
		t.Skip("long test: set TOKENDIST_LONG=1")
	}
}

// LongTests is longTests for package tokendist_test.
func LongTests() bool { return longTests() }

// LongTest is longTest for package tokendist_test.
func LongTest(t testing.TB) {
	t.Helper()
	longTest(t)
}
