// Package plot draws what tokendist runs produce as SVG: Lines for any curves, Result
// for one run's discrepancy against steps, Traces for several runs on one set of axes.
// Options (zero value: the defaults) sets the title, axis labels, logarithmic axes,
// points and the legend's place, which by default keeps clear of the data.
//
// Text is drawn as outlines, so a plot looks the same in every viewer, with or without
// the Liberation fonts installed. Coordinates must be finite numbers of magnitude at
// most 1e300; anything else is an error wrapping tokendist.ErrBadParameter, as are more
// lines or a larger picture than the documented limits. Every error starts with
// "tokendist: ". A plot costs O(points) plus gonum/plot's rendering.
//
// The package is separate from the core so that a program that only runs balancers
// does not link gonum/plot and its fonts.
package plot
