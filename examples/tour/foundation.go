package main

import (
	"fmt"

	"github.com/tokendist/tokendist"
)

func init() {
	register(section{order: 0, title: "Networks (foundation)", run: networksSection})
}

// networksSection lists the default networks the other sections use.
func networksSection(t *tour) error {
	type nw struct {
		name string
		make func() (*tokendist.Graph, error)
	}
	nets := []nw{
		{"KaryTree(KaryShape{Height: 10, Arity: 2})", func() (*tokendist.Graph, error) { return tokendist.KaryTree(tokendist.KaryShape{Height: 10, Arity: 2}) }},
		{"RandomTree(1000)", func() (*tokendist.Graph, error) { return tokendist.RandomTree(1000, t.seed) }},
		{"Hypercube(10)", func() (*tokendist.Graph, error) { return tokendist.Hypercube(10) }},
		{"Torus(32, 32)", func() (*tokendist.Graph, error) { return tokendist.Torus(32, 32) }},
		{"RandomRegular(1024, 4)", func() (*tokendist.Graph, error) { return tokendist.RandomRegular(1024, 4, t.seed) }},
		{"ShuffleExchange(10)", func() (*tokendist.Graph, error) { return tokendist.ShuffleExchange(10) }},
	}
	var rows [][]string
	for _, n := range nets {
		g, err := n.make()
		if err != nil {
			return err
		}
		diam, err := g.Diameter()
		if err != nil {
			return err
		}
		rows = append(rows, []string{n.name, fmt.Sprint(g.Order()), fmt.Sprint(g.Size()), fmt.Sprint(g.MaxDegree()),
			fmt.Sprint(diam), fmt.Sprint(g.IsTree()), fmt.Sprint(g.IsBipartite())})
	}
	t.table([]string{"network", "nodes", "edges", "max degree", "diameter", "tree", "bipartite"}, rows)
	return nil
}
