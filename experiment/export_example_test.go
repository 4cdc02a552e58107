package experiment_test

import (
	"fmt"

	"github.com/tokendist/tokendist/experiment"
)

// Summarize describes a sample as report --summary does: nine runs at a step cap of
// 10000 and one that stopped at 531 have a mean that hides both, which the median and
// quartiles show (t_{0.975, 9} = 2.2622 gives the interval).
func ExampleSummarize() {
	steps := []float64{10000, 10000, 10000, 531, 10000, 10000, 10000, 10000, 10000, 10000}
	s := experiment.Summarize(steps)
	fmt.Printf("n %d, mean %.1f, sd %.1f, 95%% CI [%.1f, %.1f]\n", s.Count, s.Mean, s.SD, s.CILow, s.CIHigh)
	fmt.Printf("min %g, quartiles %g %g %g, max %g\n", s.Min, s.Q1, s.Median, s.Q3, s.Max)
	// Output:
	// n 10, mean 9053.1, sd 2994.4, 95% CI [6911.1, 11195.1]
	// min 531, quartiles 10000 10000 10000, max 10000
}
