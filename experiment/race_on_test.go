//go:build race

package experiment

const raceEnabled = true
