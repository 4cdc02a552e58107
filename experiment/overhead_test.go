package experiment

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/tokendist/tokendist"
	"github.com/tokendist/tokendist/registry"
)

// TestSweepOverhead measures the share of a sweep's wall time spent outside the runs
// (database, scheduling, progress) on a grid of small runs: n = 1000, 200 steps. It
// compares the sweep with a bare loop running the same specs on the same number of
// goroutines, in the same process (baseline, sweep, baseline). Set
// TOKENDIST_SWEEP_OVERHEAD to the number of runs (10000 for the target).
func TestSweepOverhead(t *testing.T) {
	nruns, _ := strconv.Atoi(os.Getenv("TOKENDIST_SWEEP_OVERHEAD"))
	if nruns <= 0 {
		t.Skip("set TOKENDIST_SWEEP_OVERHEAD=10000 to measure")
	}
	text := "name: overhead\nnetworks:\n  - name: random-regular\n    n: 1000\n    d: 4\nloads:\n  - name: uniform-random\n    tokens: 100000\n" +
		"algorithms: [random-matching]\nstop:\n  max_steps: 200\nseeds: " + strconv.Itoa(nruns) + "\n"
	reg := registry.New()
	f, err := Parse("overhead.yaml", []byte(text), reg, false)
	if err != nil {
		t.Fatal(err)
	}
	runs, err := f.Specs()
	if err != nil {
		t.Fatal(err)
	}
	workers := runtime.GOMAXPROCS(0)
	bare := func() time.Duration {
		start := time.Now()
		next := make(chan int)
		var wg sync.WaitGroup
		for w := 0; w < workers; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range next {
					if _, err := reg.Run(context.Background(), runs[i].Spec, &tokendist.RunOptions{Workers: 1}); err != nil {
						t.Error(err)
					}
				}
			}()
		}
		for i := range runs {
			next <- i
		}
		close(next)
		wg.Wait()
		return time.Since(start)
	}
	b1 := bare()
	db, err := OpenDB(filepath.Join(t.TempDir(), "o.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	st, err := Sweep(context.Background(), reg, runs, db, SweepOptions{Workers: workers, Progress: os.Stderr, Every: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	b2 := bare()
	base := (b1 + b2) / 2
	t.Logf("%d runs, %d workers: bare loop %v and %v, sweep %v", len(runs), workers, b1.Round(time.Millisecond), b2.Round(time.Millisecond), st.Wall.Round(time.Millisecond))
	t.Logf("overhead vs bare loop: %.1f%% of the sweep's wall time", 100*(st.Wall.Seconds()-base.Seconds())/st.Wall.Seconds())
	t.Logf("time outside runs: %.1f%% (1 − Σ run time / (workers × wall))", 100*(1-st.RunTime.Seconds()/(float64(workers)*st.Wall.Seconds())))
	if st.Ran != len(runs) {
		t.Errorf("ran %d of %d", st.Ran, len(runs))
	}
}
