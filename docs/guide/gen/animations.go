package main

// The guide's animations (img/*-run.gif), one per paper and one of a simulated run
// (async-run.gif, for docs/async.md), with package animate. Each movie
// has at most about 40 frames (a frame every ⌈steps/40⌉ steps) at 480 × 420 pixels, to
// keep the files small; every run is seeded and every layout fixed.

import (
	"bytes"
	"context"

	"github.com/tokendist/tokendist"
	"github.com/tokendist/tokendist/animate"
	"github.com/tokendist/tokendist/async"
	"github.com/tokendist/tokendist/faults"
)

// gifOf returns the drawing of a figure that records a movie and encodes it as a GIF.
func gifOf(record func() (*animate.Movie, error)) func() ([]byte, error) {
	return func() ([]byte, error) { return encodeGIF(record) }
}

// encodeGIF records a movie and encodes it as a GIF.
func encodeGIF(record func() (*animate.Movie, error)) ([]byte, error) {
	m, err := record()
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := m.WriteGIF(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// movie runs a fresh balancer once to count the steps, then records a second fresh one
// with a frame every ⌈steps/40⌉ steps.
func movie(net tokendist.Network, loads tokendist.Loads, mk func() (tokendist.Balancer, error), ro tokendist.RunOptions, title string) (*animate.Movie, error) {
	b, err := mk()
	if err != nil {
		return nil, err
	}
	res, err := tokendist.Run(context.Background(), net, loads, b, &ro)
	if err != nil {
		return nil, err
	}
	b, err = mk()
	if err != nil {
		return nil, err
	}
	every := max(1, (res.Steps+39)/40)
	return animate.Record(context.Background(), net, loads, b, &animate.Options{Run: ro, Every: every, Width: 480, Height: 420, Title: title, Delay: 15})
}

// houleRun: THRESHOLD-1 on a random 24-node tree stops moving at a stable distribution
// whose discrepancy the tree's MSD bounds; the arrows are exact (a tree).
func houleRun() (*animate.Movie, error) {
	g, err := tokendist.RandomTree(24, 7)
	if err != nil {
		return nil, err
	}
	loads, err := tokendist.RandomRange(g.Order(), 0, 30, 7)
	if err != nil {
		return nil, err
	}
	return movie(g, loads, func() (tokendist.Balancer, error) { return tokendist.NewThreshold1(g, nil) }, tokendist.RunOptions{}, "THRESHOLD-1, RandomTree(24)")
}

// gaoRosenbergRun: KS-BF on the ring R_8 growing the complete tree-dag T_9 (511 tasks)
// from one task at PE 0;
// loads are queued tasks (node changes: tasks are born and done, no flow to draw).
func gaoRosenbergRun() (*animate.Movie, error) {
	const p = 8
	g, err := tokendist.Ring(p)
	if err != nil {
		return nil, err
	}
	loads := make(tokendist.Loads, p)
	loads[0] = 1
	mk := func() (tokendist.Balancer, error) {
		dag, err := tokendist.CompleteTree(9)
		if err != nil {
			return nil, err
		}
		return tokendist.NewRingTree(p, dag, nil)
	}
	return movie(g, loads, mk, tokendist.RunOptions{MaxSteps: 2000}, "KS-BF, T_9 (511 tasks) on R_8")
}

// plaxtonRun: the recursion of section 2.3 on Hypercube(5) from random loads (node
// changes: the schedule's pairs are not exposed).
func plaxtonRun() (*animate.Movie, error) {
	g, err := tokendist.Hypercube(5)
	if err != nil {
		return nil, err
	}
	loads, err := tokendist.RandomRange(g.Order(), 0, 40, 5)
	if err != nil {
		return nil, err
	}
	return movie(g, loads, func() (tokendist.Balancer, error) { return tokendist.NewHypercubeBalance(g, nil) }, tokendist.RunOptions{}, "Hypercube balance, Hypercube(5)")
}

// berenbrinkRun: randomized diffusion on an 8 × 8 torus from 8 tokens a node and 16 more
// at node 27: the excess
// tokens wander (node changes: diffusion's flows are not determined by the loads).
func berenbrinkRun() (*animate.Movie, error) {
	g, err := tokendist.Torus(8, 8)
	if err != nil {
		return nil, err
	}
	loads, err := tokendist.PointMass(g.Order(), 16, 27)
	if err != nil {
		return nil, err
	}
	for v := range loads {
		loads[v] += 8
	}
	return movie(g, loads, func() (tokendist.Balancer, error) { return tokendist.NewRandomizedDiffusion(g) }, tokendist.RunOptions{MaxSteps: 80, Seed: 2}, "Randomized diffusion, Torus(8, 8)")
}

// margaraRun: the perfect-tree protocol on a random 30-node tree with unit delays; its
// phases sweep the tree (exact arrows).
func margaraRun() (*animate.Movie, error) {
	g, err := tokendist.RandomTree(30, 3)
	if err != nil {
		return nil, err
	}
	loads, err := tokendist.RandomRange(g.Order(), 0, 20, 3)
	if err != nil {
		return nil, err
	}
	mk := func() (tokendist.Balancer, error) {
		d, err := tokendist.NewUnitDelays()
		if err != nil {
			return nil, err
		}
		return tokendist.NewPerfectTree(g, &tokendist.PerfectTreeOptions{Delays: d})
	}
	return movie(g, loads, mk, tokendist.RunOptions{Seed: 3, NoStability: true}, "Perfect tree protocol, RandomTree(30)")
}

// asyncRun: randomized diffusion's node programs (patience 0) on a 6 × 6 torus in the
// event simulator of package async, from 10 tokens a node and 300 more at node 14, with
// delays spread over [0.5, 2], 2% of datagrams lost and node 21 crashed from time 8 to 28:
// drawn in model time (tokens in flight as arrows, the crashed node grey with a cross,
// lost datagrams marked), a frame every round interval near a fortieth of the run.
func asyncRun() (*animate.Movie, error) {
	g, err := tokendist.Torus(6, 6)
	if err != nil {
		return nil, err
	}
	loads, err := tokendist.PointMass(g.Order(), 300, 14)
	if err != nil {
		return nil, err
	}
	for v := range loads {
		loads[v] += 10
	}
	b, err := tokendist.NewRandomizedDiffusion(g)
	if err != nil {
		return nil, err
	}
	progs, err := b.NodePrograms(g, nil)
	if err != nil {
		return nil, err
	}
	so := &async.Options{Seed: 5, Rounds: 12, Faults: faults.Model{
		Delay: faults.Uniform(0.5, 2), Loss: 0.02,
		Crashes: []faults.Crash{{Node: 21, At: 8, DownFor: 20}},
	}}
	res, err := async.Simulate(context.Background(), g, progs, loads, so)
	if err != nil {
		return nil, err
	}
	every := animate.RoundInterval(res.Time, 40)
	return animate.RecordSimulation(context.Background(), g, progs, loads, so,
		&animate.Options{EveryTime: every, Width: 480, Height: 420, Title: "Randomized diffusion, simulated", Delay: 15})
}
