//go:build race

package tokendist

// raceEnabled reports whether the tests run with the race detector, whose runtime
// allocates on its own (allocation counts are checked only without it).
const raceEnabled = true

// RaceEnabled exports raceEnabled to the external test package (tokendist_test); it is
// declared in a _test file, so it is not part of the library's API.
const RaceEnabled = raceEnabled
