//go:build race

package plot_test

const raceEnabled = true
