//go:build !race

package tokendisttest

// raceEnabled is true under the race detector, whose runtime allocates on its own.
const raceEnabled = false
