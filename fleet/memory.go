package fleet

import (
	"sync"

	"github.com/tokendist/tokendist/internal/errs"
)

// MemoryStore is an in-memory Store, for running a fleet in one process (tests,
// examples, simulations); with InmemNetwork it is the way to test a fleet without
// processes, sockets or files other than the starts file (Config.Data). It keeps the
// Store rules within the process: Save replaces the whole state atomically (a copy of
// the bytes) and Load returns a copy of the last state saved, or nil if none was; the
// state survives only as long as the process.
//
// The state belongs to the MemoryStore's "disk", which outlives the handle a Node
// closes: Reopen returns a new open handle on the same disk, as a process restarted on
// its data directory opens its BoltStore again. So a crash and restart of a node is:
// stop the node (cancel Run's context; every event's state is saved before anything of
// it is sent, so a stop between events is a kill -9 between events — and a Store
// wrapper whose Save fails stops Run inside an event, without sending what that event
// would have sent), then build a new Node on the same Config with Options.Store set to
// Reopen() of the same MemoryStore: it restores the last saved state.
//
// A MemoryStore is safe for concurrent use, but like every Store it serves one node
// at a time: two open handles on one disk must not both be given to running nodes.
type MemoryStore struct {
	disk   *memoryDisk
	closed bool // guarded by disk.mu
}

// memoryDisk is the state the handles of one MemoryStore share.
type memoryDisk struct {
	mu    sync.Mutex
	state []byte // nil: never saved
}

// NewMemoryStore returns an open, empty store (Load returns nil). O(1).
func NewMemoryStore() *MemoryStore {
	return &MemoryStore{disk: &memoryDisk{}}
}

// Load returns a copy of the last saved state, nil if none was saved. It fails with
// an error after Close. O(len(state)).
func (s *MemoryStore) Load() ([]byte, error) {
	s.disk.mu.Lock()
	defer s.disk.mu.Unlock()
	if s.closed {
		return nil, errs.BadParam("Load of a closed MemoryStore")
	}
	if s.disk.state == nil {
		return nil, nil
	}
	return append(make([]byte, 0, len(s.disk.state)), s.disk.state...), nil
}

// Save replaces the state with a copy of state (the caller keeps state), atomically:
// a concurrent Load sees the old state or the new one. It fails with an error for a
// nil state and after Close, leaving the state as it was. O(len(state)).
func (s *MemoryStore) Save(state []byte) error {
	if state == nil {
		return errs.BadParam("Save of a nil state")
	}
	c := append(make([]byte, 0, len(state)), state...)
	s.disk.mu.Lock()
	defer s.disk.mu.Unlock()
	if s.closed {
		return errs.BadParam("Save of %d bytes to a closed MemoryStore", len(state))
	}
	s.disk.state = c
	return nil
}

// Close closes this handle: its later Load and Save fail. The state stays, for the
// handles Reopen returns; closing twice is harmless. O(1).
func (s *MemoryStore) Close() error {
	s.disk.mu.Lock()
	s.closed = true
	s.disk.mu.Unlock()
	return nil
}

// Reopen returns a new open handle on s's state, whether s is open or closed (s is
// unchanged): what reopening a data directory is to a BoltStore. O(1).
func (s *MemoryStore) Reopen() *MemoryStore {
	return &MemoryStore{disk: s.disk}
}
