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

// The switch for whole sweeps (README, "Tests"; docs/design.md, "Tests"):
// TOKENDIST_SWEEPS=full (or TOKENDIST_LONG=1) runs every case of the sweeps that check
// the papers' bounds and the runtimes' equivalences; .ci/run sets it. By default such a
// sweep checks a fixed cross-section (every k-th case, rotated so that each option or
// policy meets other cases), so that go test ./... answers in minutes.

// fullSweeps reports whether the whole sweeps are asked for.
func fullSweeps() bool { return os.Getenv("TOKENDIST_SWEEPS") == "full" || longTests() }

// sweepTakes reports whether case i of a sweep runs for the rotation rot: always with
// whole sweeps, else when (i + rot) mod k = 0, and with -short when (i + rot) mod 2k = 0.
func sweepTakes(i, rot, k int) bool {
	if fullSweeps() {
		return true
	}
	if testing.Short() {
		k *= 2
	}
	return (i+rot)%k == 0
}

// FullSweeps is fullSweeps for package tokendist_test.
func FullSweeps() bool { return fullSweeps() }

// SweepTakes is sweepTakes for package tokendist_test.
func SweepTakes(i, rot, k int) bool { return sweepTakes(i, rot, k) }
