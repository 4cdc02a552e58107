package fleet

import (
	"path/filepath"
	"testing"
	"time"
)

// TestBoltStoreLockTimeout: a second open of a locked store gives up after
// BoltOptions.Timeout (200 ms here: well under 2 s, not the 5 s default), and, without
// -short, after the default 5 s when Timeout is 0 (not never: bbolt's own 0 waits for
// ever). bbolt stops retrying its file lock up to 50 ms (its retry interval) before
// the timeout, hence the lower bounds.
func TestBoltStoreLockTimeout(t *testing.T) {
	path := filepath.Join(t.TempDir(), "node.db")
	s, err := OpenBoltStore(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	t0 := time.Now()
	if s2, err := OpenBoltStore(path, &BoltOptions{Timeout: 200 * time.Millisecond}); err == nil {
		s2.Close()
		t.Fatal("a second open of a locked store succeeded")
	}
	if d := time.Since(t0); d < 100*time.Millisecond || d > 2*time.Second {
		t.Errorf("the open with Timeout 200 ms gave up after %v; want 100 ms to 2 s", d)
	}
	if testing.Short() {
		return
	}
	t0 = time.Now()
	done := make(chan error, 1)
	go func() {
		s2, err := OpenBoltStore(path, nil)
		if err == nil {
			s2.Close()
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("a second open of a locked store succeeded")
		}
		if d := time.Since(t0); d < 4*time.Second || d > 8*time.Second {
			t.Errorf("the open with the default timeout gave up after %v; want about 5 s", d)
		}
	case <-time.After(10 * time.Second):
		s.Close() // releases the lock: the open returns
		<-done
		t.Fatal("the open with the default timeout still waited after 10 s")
	}
}
