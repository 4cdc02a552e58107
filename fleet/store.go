package fleet

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"hash/fnv"
	"io"
	"math"
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
// Save is atomic and durable. A Save costs one transaction and one mirror write:
// O(len(state)) writes and three fsyncs.
//
// Damage is refused, never repaired: before bbolt maps the file, OpenBoltStore checks
// that the file holds every page its meta pages count (a truncated file is an error,
// not a SIGBUS); and every Save numbers the state (a save sequence kept in the same
// transaction) and then mirrors that number in a second file, path+SeqSuffix, so that
// an open whose store is behind its mirror — bbolt fell back to its older meta page,
// or the file was restored from an older copy, losing saves that may hold
// acknowledged work — is refused with both numbers.
type BoltStore struct {
	db  *bolt.DB
	seq uint64   // the last save's sequence number
	mir *os.File // the mirror file
}

// SeqSuffix is appended to a BoltStore's path to name its mirror file: two 16-byte
// slots, each a save sequence number and its CRC-32C, written in turn after each
// Save's commit and fsync'd. Removing it makes the next open accept the store's
// sequence as it is (what an operator does to accept a rolled-back store's loss).
const SeqSuffix = ".seq"

var (
	boltBucket = []byte("tokendist")
	boltKey    = []byte("state")
	boltSeqKey = []byte("seq")
)

// checkBoltFile refuses a bbolt file shorter than its meta pages say: bbolt maps the
// file and would fault (SIGBUS) reading a page past its end. A file too short to hold
// a meta page, or whose meta pages are both invalid, is left to bbolt (it refuses it,
// or initialises an empty file). O(1): at most 16 reads of 80 bytes.
func checkBoltFile(path string) error {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return errs.Wrapf(err, "open store %q", path)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return errs.Wrapf(err, "open store %q", path)
	}
	size := st.Size()
	// A meta page: a 16-byte page header, then magic, version, page size, flags (4
	// bytes each), the root bucket (16), freelist, high-water page id, txid and an
	// FNV-64a checksum of the 56 bytes before it (8 each), little-endian.
	var buf [16 + 64]byte
	// meta reads the meta page at off: its page size and page count, ok false when
	// it is not a valid meta page.
	meta := func(off int64) (ps int64, pages uint64, ok bool) {
		if _, err := f.ReadAt(buf[:], off); err != nil {
			return 0, 0, false
		}
		m := buf[16:]
		if binary.LittleEndian.Uint32(m[0:]) != 0xED0CDAED {
			return 0, 0, false
		}
		h := fnv.New64a()
		_, _ = h.Write(m[:56])
		if h.Sum64() != binary.LittleEndian.Uint64(m[56:]) {
			return 0, 0, false
		}
		return int64(binary.LittleEndian.Uint32(m[8:])), binary.LittleEndian.Uint64(m[40:]), true
	}
	check := func(i int, ps int64, pages uint64) error {
		if ps <= 0 || pages > uint64(math.MaxInt64/ps) || int64(pages)*ps > size {
			return errs.BadParam("store %q is truncated or damaged: %d bytes, but its meta page %d counts %d pages of %d bytes; refusing to open it: restore the file from a copy, or start the node afresh on a new data directory", path, size, i, pages, ps)
		}
		return nil
	}
	// Meta page 1 is one page in; with meta page 0 invalid, bbolt v1.4 looks for it
	// at 1 KiB << i for i up to 14, and so does this.
	var offsets []int64
	for i := 0; i <= 14; i++ {
		offsets = append(offsets, 1<<10<<i)
	}
	if ps, pages, ok := meta(0); ok {
		if err := check(0, ps, pages); err != nil {
			return err
		}
		offsets = []int64{ps}
	}
	for _, off := range offsets {
		if ps, pages, ok := meta(off); ok && ps == off {
			if err := check(1, ps, pages); err != nil {
				return err
			}
		}
	}
	return nil
}

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
	if err := checkBoltFile(path); err != nil {
		return nil, err
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: o.Timeout})
	if err != nil {
		return nil, errs.Wrapf(err, "open store %q", path)
	}
	s := &BoltStore{db: db}
	if err := s.openSeq(path); err != nil {
		_ = db.Close()
		if s.mir != nil {
			_ = s.mir.Close()
		}
		return nil, err
	}
	return s, nil
}

// openSeq creates the bucket, reads the store's save sequence and checks it against
// the mirror file's.
func (s *BoltStore) openSeq(path string) error {
	if err := s.db.Update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists(boltBucket)
		if err != nil {
			return err
		}
		if v := b.Get(boltSeqKey); v != nil {
			if len(v) != 8 {
				return errs.BadParam("save sequence of %d bytes", len(v))
			}
			s.seq = binary.BigEndian.Uint64(v)
		} else if b.Get(boltKey) != nil {
			return errs.BadParam("a state without a save sequence (written by an unreleased tokendist)")
		}
		return nil
	}); err != nil {
		return errs.Wrapf(err, "open store %q", path)
	}
	mpath := path + SeqSuffix
	f, err := os.OpenFile(mpath, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return errs.Wrapf(err, "open store %q: mirror", path)
	}
	s.mir = f
	var buf [32]byte
	k, err := f.ReadAt(buf[:], 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return errs.Wrapf(err, "open store %q: mirror %q", path, mpath)
	}
	var mirror uint64
	for i := 0; i+16 <= k; i += 16 {
		slot := buf[i : i+16]
		if binary.BigEndian.Uint32(slot[8:]) == crc32.Checksum(slot[:8], castagnoli) {
			mirror = max(mirror, binary.BigEndian.Uint64(slot[:8]))
		}
	}
	if s.seq == 0 && mirror > 0 && s.empty() {
		// An empty store (deleted, or truncated to nothing) is the node's to refuse
		// (its identity file) or to start afresh on (Options.Reinit): number on from
		// the mirror, so that it stays behind the store.
		s.seq = mirror
	}
	if s.seq < mirror {
		return errs.BadParam("store %q was rolled back: its save sequence is %d, but mirror %q records save %d: the last %d saves, which may hold acknowledged items, are lost; refusing to open it: restore the store file from a copy as new as the mirror, or, to accept the loss (items other nodes were told are here may be gone), remove %q",
			path, s.seq, mpath, mirror, mirror-s.seq, mpath)
	}
	return nil
}

// empty reports whether no state was ever saved in s.
func (s *BoltStore) empty() bool {
	e := true
	_ = s.db.View(func(tx *bolt.Tx) error {
		e = tx.Bucket(boltBucket).Get(boltKey) == nil
		return nil
	})
	return e
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

// Save replaces the state in one fsync'd transaction, then writes its save sequence
// number to the mirror file and fsyncs it. If the mirror write fails, Save returns
// the error although the state is committed (the node stops; the next open accepts a
// store ahead of its mirror). O(len(state)) plus three fsyncs.
func (s *BoltStore) Save(state []byte) error {
	if state == nil {
		return errs.BadParam("Save of a nil state")
	}
	seq := s.seq + 1
	err := s.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(boltBucket)
		if err := b.Put(boltSeqKey, binary.BigEndian.AppendUint64(nil, seq)); err != nil {
			return err
		}
		return b.Put(boltKey, state)
	})
	if err != nil {
		return errs.Wrapf(err, "save state to %q", s.db.Path())
	}
	s.seq = seq
	// The mirror, after the commit: a crash between the two leaves the mirror one
	// behind, which the next open accepts. Slots alternate, so a torn write leaves
	// the other slot's (older) number.
	var slot [16]byte
	binary.BigEndian.PutUint64(slot[:], seq)
	binary.BigEndian.PutUint32(slot[8:], crc32.Checksum(slot[:8], castagnoli))
	if _, err := s.mir.WriteAt(slot[:], int64(seq%2)*16); err != nil {
		return errs.Wrapf(err, "save state to %q: mirror", s.db.Path())
	}
	if err := s.mir.Sync(); err != nil {
		return errs.Wrapf(err, "save state to %q: mirror", s.db.Path())
	}
	return nil
}

// Close closes the database file.
func (s *BoltStore) Close() error {
	if s.mir != nil {
		_ = s.mir.Close()
	}
	if err := s.db.Close(); err != nil && !errors.Is(err, berrors.ErrDatabaseNotOpen) {
		return errs.Wrapf(err, "close store")
	}
	return nil
}
