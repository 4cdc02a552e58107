// Command anim draws the animations of the user's guide (docs/guide/img/*-run.gif), one
// per paper, with package animate. Every run is seeded and every layout fixed, so the
// files are the same on every machine:
//
//	go run ./docs/guide/anim                   # from the repository root
//	go run ./docs/guide/anim -out /tmp/img     # somewhere else
//
// Each movie has at most about 40 frames (a frame every ⌈steps/40⌉ steps) at 480 × 420
// pixels, to keep the files small.
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/tokendist/tokendist"
	"github.com/tokendist/tokendist/animate"
)

func main() {
	out := flag.String("out", filepath.Join("docs", "guide", "img"), "directory for the GIF files")
	flag.Parse()
	if err := run(*out); err != nil {
		fmt.Fprintln(os.Stderr, "anim:", err)
		os.Exit(1)
	}
}

// movies lists the guide's animations: file name and the function recording it.
var movies = []struct {
	file   string
	record func() (*animate.Movie, error)
}{
	{"houle-run.gif", houle},
	{"gao-rosenberg-run.gif", gaoRosenberg},
	{"plaxton-run.gif", plaxton},
	{"berenbrink-run.gif", berenbrink},
	{"margara-run.gif", margara},
}

func run(out string) error {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	for _, m := range movies {
		b, err := draw(m.record)
		if err != nil {
			return fmt.Errorf("%s: %w", m.file, err)
		}
		if err := os.WriteFile(filepath.Join(out, m.file), b, 0o644); err != nil {
			return err
		}
		fmt.Println("wrote", filepath.Join(out, m.file))
	}
	return nil
}

// draw records a movie and encodes it as a GIF.
func draw(record func() (*animate.Movie, error)) ([]byte, error) {
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

// houle: THRESHOLD-1 on a random 24-node tree stops moving at a stable distribution
// whose discrepancy the tree's MSD bounds; the arrows are exact (a tree).
func houle() (*animate.Movie, error) {
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

// gaoRosenberg: KS-BF on the ring R_8 growing the complete tree-dag T_9 (511 tasks)
// from one task at PE 0;
// loads are queued tasks (node changes: tasks are born and done, no flow to draw).
func gaoRosenberg() (*animate.Movie, error) {
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

// plaxton: the recursion of section 2.3 on Hypercube(5) from random loads (node
// changes: the schedule's pairs are not exposed).
func plaxton() (*animate.Movie, error) {
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

// berenbrink: randomized diffusion on an 8 × 8 torus from 8 tokens a node and 16 more
// at node 27: the excess
// tokens wander (node changes: diffusion's flows are not determined by the loads).
func berenbrink() (*animate.Movie, error) {
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

// margara: the perfect-tree protocol on a random 30-node tree with unit delays; its
// phases sweep the tree (exact arrows).
func margara() (*animate.Movie, error) {
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
