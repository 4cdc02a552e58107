package async

import (
	"context"
	"testing"

	"github.com/tokendist/tokendist/node"

	"github.com/tokendist/tokendist"
	"github.com/tokendist/tokendist/faults"
)

// TestThreshold1MSDCounterexample pins the study's counterexample (docs/async.md):
// Houle, Symvonis and Wood, section 4: THRESHOLD-1 "reaches a stable distribution whose
// discrepancy is at most MSD(T)". Run as node programs whose rounds are paced by the
// clock (Patience 4: round r owns the local ticks [4r, 4r+4)) on a network whose delays
// are uniform on [1, 16], most exchanges go without the partner's load, and after 200
// rounds the discrepancy of RandomTree(8, 1) from the loads below is far above its MSD
// of 2. With Patience 0 (a node waits for its partner) the same delays change nothing:
// the run ends exactly where Run does, within MSD.
func TestThreshold1MSDCounterexample(t *testing.T) {
	g, err := tokendist.RandomTree(8, 1)
	if err != nil {
		t.Fatal(err)
	}
	msd, err := tokendist.MSD(g)
	if err != nil {
		t.Fatal(err)
	}
	loads := tokendist.Loads{40, 0, 3, 17, 0, 9, 25, 1}
	b, err := tokendist.NewThreshold1(g, nil)
	if err != nil {
		t.Fatal(err)
	}
	sync, err := tokendist.Run(context.Background(), g, loads, b, &tokendist.RunOptions{MaxSteps: 200, NoStability: true})
	if err != nil {
		t.Fatal(err)
	}
	model := faults.Model{Delay: faults.Uniform(1, 16)}
	for _, patience := range []int64{0, 4} {
		progs, err := b.NodePrograms(g, &node.Options{Patience: patience})
		if err != nil {
			t.Fatal(err)
		}
		res, err := Simulate(context.Background(), g, progs, loads, &Options{Seed: 1, Rounds: 200, Faults: model})
		if err != nil {
			t.Fatal(err)
		}
		d := res.Loads.Discrepancy()
		t.Logf("patience %d: discrepancy %d (MSD %d, synchronous %d), time %.0f", patience, d, msd, sync.Loads.Discrepancy(), res.Time)
		switch {
		case res.Loads.Total() != loads.Total():
			t.Fatalf("patience %d: total %d of %d", patience, res.Loads.Total(), loads.Total())
		case patience == 0 && (int(d) > msd || res.Loads.Discrepancy() != sync.Loads.Discrepancy()):
			t.Fatalf("patience 0: discrepancy %d; want Run's %d ≤ MSD %d", d, sync.Loads.Discrepancy(), msd)
		case patience > 0 && int(d) <= 2*msd:
			t.Fatalf("patience %d: discrepancy %d is within 2·MSD = %d: the counterexample is gone", patience, d, 2*msd)
		}
	}
}
