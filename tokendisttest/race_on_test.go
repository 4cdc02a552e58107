//go:build race

package tokendisttest_test

// raceOn is true under the race detector, which turns the allocation check off.
const raceOn = true
