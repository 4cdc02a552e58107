// Package brokenstore holds deliberately broken fleet stores, for the self-checks of
// fleet's tests only: a test that claims to catch a broken persistence order must fail
// when the node runs on one of these. Nothing in the library or in the tokendist-node
// command uses it.
package brokenstore

import (
	"errors"
	"sync"
)

// Store is fleet.Store (restated here so that fleet's own tests can import this
// package).
type Store interface {
	Load() ([]byte, error)
	Save(state []byte) error
	Close() error
}

// WriteBehind is a write-behind cache in front of a real store: Save records a copy
// of the state and returns nil at once, and the state reaches the real store only on
// every Every-th Save and at Close. A node on it sends datagrams and answers requests
// before their state is durable, so a crash (kill -9, or an in-process crash that
// skips Close) loses acknowledged work or repeats delivered work: exactly the fault
// the chaos test's self-check (scripts/chaos.sh broken) must catch. Its methods are
// safe for concurrent use.
type WriteBehind struct {
	inner Store
	every int

	mu      sync.Mutex
	pending []byte // the last state saved and not yet written (nil: none)
	saves   int
}

// NewWriteBehind returns a write-behind cache in front of inner that writes every
// every-th state (every < 1 counts as 1). The cache owns inner (Close closes it).
func NewWriteBehind(inner Store, every int) *WriteBehind {
	return &WriteBehind{inner: inner, every: max(every, 1)}
}

// Load returns the pending state if there is one, else the inner store's.
func (w *WriteBehind) Load() ([]byte, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.pending != nil {
		return append([]byte(nil), w.pending...), nil
	}
	return w.inner.Load()
}

// Save records state and writes it to the inner store only on every every-th call.
func (w *WriteBehind) Save(state []byte) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.pending = append(w.pending[:0], state...)
	w.saves++
	if w.saves%w.every != 0 {
		return nil
	}
	err := w.inner.Save(w.pending)
	w.pending = nil
	return err
}

// Close writes the pending state, if any, and closes the inner store.
func (w *WriteBehind) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	var err error
	if w.pending != nil {
		err = w.inner.Save(w.pending)
		w.pending = nil
	}
	return errors.Join(err, w.inner.Close())
}
