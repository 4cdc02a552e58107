package tokendist_test

import (
	"context"
	"fmt"
	"os"

	"github.com/tokendist/tokendist"
)

// Write a run's trace as CSV (the potential is an exact decimal).
func ExampleTrace_WriteCSV() {
	path, _ := tokendist.Path(4)
	r, _ := tokendist.Run(context.Background(), path, tokendist.Loads{8, 0, 0, 0}, exampleOddEven{}, &tokendist.RunOptions{SampleEvery: 3})
	if err := r.Trace.WriteCSV(os.Stdout); err != nil {
		fmt.Println(err)
	}
	// Output:
	// step,time,discrepancy,max,min,potential,moved,messages,negative,round
	// 0,0,8,8,0,64,0,0,0,0
	// 3,3,6,6,0,40,2,0,0,3
	// 6,6,5,5,0,30,4,0,0,6
	// 9,9,2,3,1,20,8,0,0,9
	// 12,12,2,3,1,18,9,0,0,12
}
