//go:build race

package tokendist_test

const advRace = true
