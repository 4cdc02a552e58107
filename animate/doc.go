// Package animate shows a run of a tokendist balancer as an animation: the network
// drawn in a layout that fits its family, each node's load as a colour on one scale
// for the whole run (with a legend, and the number itself on small networks), the
// tokens moved over each link as an arrow whose width is the count, a step counter,
// and the discrepancy curve beneath, growing as the run goes.
//
// Record runs a balancer with tokendist.Run and returns a *Movie; a Recorder does the
// same inside a run the caller drives (RunOptions.Recorder). A Movie is written as an
// animated GIF (WriteGIF, a fixed palette), a self-contained HTML page (WriteHTML: one
// inline SVG, a play/pause button and a step slider, no network requests and no
// external fonts or scripts) or an SVG of one frame (WriteSVG).
//
// # Layouts
//
// The layout (Options.Layout, LayoutAuto by default) is chosen from the network's
// structure, in this order: a connected 2-regular network is drawn as a circle
// (LayoutCircle), a network whose edges all join neighbours of a row-major r × c grid,
// with or without wrap-around (Mesh, Torus, Path), as a lattice (LayoutLattice, the
// wrap-around links drawn as stubs leaving the grid), a network on 2^d nodes whose
// edges all join nodes that differ in one bit as a hypercube projection
// (LayoutHypercube), a tree layered from its centre (LayoutTree), and anything else
// force-directed (LayoutForce: gonum's Eades layout from a fixed seed).
//
// # What an arrow means
//
// An arrow on link {u, v} in frame k is the net number of tokens that crossed the link
// from u to v (or from v to u: the arrow points the way they went) in the steps after
// frame k−1 up to frame k. It is computed exactly from the loads, never estimated,
// and only where the loads determine it:
//
//   - On a tree network the net flow over any interval is the unique flow with the
//     interval's load changes: the flow on the link above a node is the change of the
//     node's subtree.
//   - For a balancer that moves tokens along one matching per step and says which
//     (a *tokendist.DimensionExchange or *tokendist.Discrepancy1: the edges of colour
//     ActiveColor(t) at step t), the flow of a step on a matched link is the load
//     change of its ends; Record then samples every step and adds a frame's steps.
//
// Everywhere else (diffusion, random matching, the hypercube schedules on a network
// that is not a tree) the per-link flows are not known from the loads, and the frame
// draws each node's load change instead: a ring around the node, orange for tokens
// gained and cyan for tokens lost, as thick as the change. A frame says which it
// draws (Frame.Flows).
//
// # Simulated runs
//
// A run of node programs in the event simulator of package async is drawn in model time
// from the simulator's snapshots (async.Options.Observer): RecordSimulation runs one,
// and a Recorder is itself an async.Observer (Recorder.Observe, at the interval
// Recorder.ObserveEvery). Its frames are at equal intervals of model time
// (Options.EveryTime; Frame.Time, the counter "t = 12.5" and the discrepancy curve's
// axis), show the persisted loads (a crashed node's too: grey with a cross, its load as
// the label; Frame.Down), the tokens in flight on each direction of a link as an arrow
// whose width is the count, the two directions side by side (Frame.InFlight,
// FlowsInFlight), and a magenta mark on each link direction that lost datagrams since
// the previous frame (Frame.Lost; the counts in the caption). A legend names the crashed
// and lost marks.
//
// # Limits
//
// A movie is bounded: at most Options.MaxNodes nodes, Options.MaxFrames frames and
// Options.MaxBytes bytes of output (defaults DefaultMaxNodes, DefaultMaxFrames,
// DefaultMaxBytes). Beyond a limit the call fails with an error wrapping
// tokendist.ErrTooLarge that names the limit and says how to sample less often
// (Options.Every, or Options.EveryTime for a simulated run). Every error starts with
// "tokendist: ".
//
// The package is separate from the core so that a program that only runs balancers
// does not link the layouts, image encoders and fonts (it links package async, whose
// runs it draws).
package animate
