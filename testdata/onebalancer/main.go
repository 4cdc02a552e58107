// Command onebalancer runs one balancer on a ring: the smallest program a user writes.
// TestCoreBinarySize builds it and checks its size (the core must stay light).
package main

import (
	"context"
	"fmt"
	"log"

	"github.com/tokendist/tokendist"
)

func main() {
	ring, err := tokendist.Ring(64)
	if err != nil {
		log.Fatal(err)
	}
	loads, err := tokendist.PointMass(64, 6400, 0)
	if err != nil {
		log.Fatal(err)
	}
	b, err := tokendist.NewRandomizedDiffusion(ring)
	if err != nil {
		log.Fatal(err)
	}
	res, err := tokendist.Run(context.Background(), ring, loads, b, &tokendist.RunOptions{Seed: 1})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res)
}
