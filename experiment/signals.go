package experiment

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/tokendist/tokendist"

	"github.com/tokendist/tokendist/internal/errs"
)

// maxWorkers bounds --workers and SweepOptions.Workers: more goroutines than this
// cannot run faster on any machine and only cost memory.
const maxWorkers = 1 << 12

// checkWorkers refuses a worker count outside 0..maxWorkers.
func checkWorkers(w int) error {
	if w < 0 || w > maxWorkers {
		return errs.BadParam("workers %d (want 0, for one per core, to %d)", w, maxWorkers)
	}
	return nil
}

// interrupts returns a context that the first SIGINT or SIGTERM cancels (the command
// stops between runs and commits what has finished). A second signal exits at once with
// ExitFailed through c.exit, after printing which runs in progress are lost: user code
// that ignores cancellation cannot keep the command alive. stop releases the signals.
func (c *command) interrupts(what string, fl *inflight) (context.Context, func()) {
	ctx, cancel := context.WithCancel(context.Background())
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		select {
		case sig := <-ch:
			fmt.Fprintf(c.stderr, "tokendist: %s: %v: stopping after the runs in progress (interrupt again to exit at once)\n", what, sig)
			cancel()
		case <-done:
			return
		}
		select {
		case sig := <-ch:
			msg := "no run was in progress"
			if fl != nil {
				msg = fl.describe()
			}
			fmt.Fprintf(c.stderr, "tokendist: %s: second %v: exiting now; %s\n", what, sig, msg)
			c.exit(ExitFailed)
		case <-done:
		}
	}()
	return ctx, func() {
		signal.Stop(ch)
		close(done)
		<-finished
		cancel()
	}
}

// checkedWriter keeps the first error of its writes (later writes are dropped).
type checkedWriter struct {
	w   io.Writer
	err error
}

func (c *checkedWriter) Write(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.w.Write(p)
	if err == nil && n < len(p) {
		err = io.ErrShortWrite
	}
	c.err = err
	return n, err
}

// writeTraceFile writes a trace as CSV to a new file, checking every write and the close.
func writeTraceFile(path string, t tokendist.Trace) error {
	fh, err := os.Create(path)
	if err != nil {
		return wrapf(err, "run --trace-dir")
	}
	err = t.WriteCSV(fh)
	if cerr := fh.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path) // no truncated trace is left behind
		return wrapf(err, "run --trace-dir: %s", fileName(path))
	}
	return nil
}
