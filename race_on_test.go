//go:build race

package tokendist

// raceEnabled reports whether the tests run with the race detector, whose runtime
// allocates on its own (allocation counts are checked only without it).
const raceEnabled = true
