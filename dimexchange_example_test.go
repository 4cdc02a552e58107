package tokendist_test

import (
	"context"
	"fmt"

	"github.com/tokendist/tokendist"
)

// A user protocol plugs into the same stepper: the heavier end sends half the
// difference, the integer form of Cybenko's dimension exchange on the hypercube.
func ExampleNewDimensionExchange() {
	ec, _ := tokendist.HypercubeColoring(4)
	half := tokendist.ProtocolFunc(func(t int64, u, v int, lu, lv int64) int64 { return (lu - lv) / 2 })
	b, err := tokendist.NewDimensionExchange(ec.Graph(), ec, half)
	if err != nil {
		panic(err)
	}
	loads, _ := tokendist.PointMass(16, 1000, 0)
	r, _ := tokendist.Run(context.Background(), ec.Graph(), loads, b, &tokendist.RunOptions{MaxSteps: 4})
	fmt.Println(r.Loads, "discrepancy", r.Discrepancy())
	// Output:
	// [63 63 63 63 63 63 63 63 62 62 62 62 62 62 62 62] discrepancy 1
}
