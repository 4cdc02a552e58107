//go:build race

package tokendist_test

// plotRace reports whether the tests run with the race detector.
const plotRace = true
