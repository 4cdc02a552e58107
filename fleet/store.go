package fleet

import (
	"errors"
	"os"
	"path/filepath"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/tokendist/tokendist/internal/errs"
)

// Store keeps one node's durable state: the bytes its handoff state machine asks to
// persist. The runtime saves before it sends anything that state implies (an
// acknowledgement, a transfer), so that a crash at any point loses nothing another
// node has been told.
//
// Rules: Save replaces the whole state atomically and durably: once it returns nil, a
// crash of the process or the machine leaves exactly the new state, and a crash during
// Save leaves the old one or the new one, never a mixture. Load returns the last state
// saved, or nil if there is none. A Store serves one node; its methods are not called
// concurrently.
type Store interface {
	// Load returns the last saved state, nil if none was saved.
	Load() ([]byte, error)
	// Save replaces the state; see the rules above.
	Save(state []byte) error
	// Close releases the store; later calls fail.
	Close() error
}

// BoltOptions configure OpenBoltStore. The zero value is the safe default.
type BoltOptions struct {
	// Timeout bounds the wait for the file lock held by another process (0: 5 s).
	Timeout time.Duration
}

// BoltStore is the reference Store: one bbolt database file (go.etcd.io/bbolt, the
// store of etcd), whose transactions are copy-on-write and fsync'd on commit, so that
// Save is atomic and durable. A Save costs one transaction: O(len(state)) writes and
// two fsyncs.
type BoltStore struct {
	db *bolt.DB
}

var (
	boltBucket = []byte("tokendist")
	boltKey    = []byte("state")
)

// OpenBoltStore opens (creating if needed) the store in file path, whose directory must
// exist. It fails with an error naming path when the file is not a bbolt database or is
// locked by another process past opts.Timeout.
func OpenBoltStore(path string, opts *BoltOptions) (*BoltStore, error) {
	var o BoltOptions
	if opts != nil {
		o = *opts
	}
	if o.Timeout < 0 {
		return nil, errs.BadParam("BoltOptions.Timeout %v is negative", o.Timeout)
	}
	if o.Timeout == 0 {
		o.Timeout = 5 * time.Second
	}
	if path == "" {
		return nil, errs.BadParam("store path is empty")
	}
	if st, err := os.Stat(filepath.Dir(path)); err != nil || !st.IsDir() {
		return nil, errs.BadParam("store directory %q does not exist", filepath.Dir(path))
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: o.Timeout})
	if err != nil {
		return nil, errs.Wrapf(err, "open store %q", path)
	}
	if err := db.Update(func(tx *bolt.Tx) error {
		_, err := tx.CreateBucketIfNotExists(boltBucket)
		return err
	}); err != nil {
		_ = db.Close()
		return nil, errs.Wrapf(err, "open store %q", path)
	}
	return &BoltStore{db: db}, nil
}

// Load returns a copy of the saved state, nil if none was saved. O(len(state)).
func (s *BoltStore) Load() ([]byte, error) {
	var out []byte
	err := s.db.View(func(tx *bolt.Tx) error {
		if v := tx.Bucket(boltBucket).Get(boltKey); v != nil {
			out = append(make([]byte, 0, len(v)), v...)
		}
		return nil
	})
	if err != nil {
		return nil, errs.Wrapf(err, "load state from %q", s.db.Path())
	}
	return out, nil
}

// Save replaces the state in one fsync'd transaction.
func (s *BoltStore) Save(state []byte) error {
	if state == nil {
		return errs.BadParam("Save of a nil state")
	}
	err := s.db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket(boltBucket).Put(boltKey, state)
	})
	if err != nil {
		return errs.Wrapf(err, "save state to %q", s.db.Path())
	}
	return nil
}

// Close closes the database file.
func (s *BoltStore) Close() error {
	if err := s.db.Close(); err != nil && !errors.Is(err, berrors.ErrDatabaseNotOpen) {
		return errs.Wrapf(err, "close store")
	}
	return nil
}
