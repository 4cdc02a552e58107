package fleet

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/tokendist/tokendist/internal/errs"
	"github.com/tokendist/tokendist/internal/files"
	"github.com/tokendist/tokendist/registry"
)

// Identity names a node of a fleet and what the fleet runs. A node's store records the
// Identity it was created with (in front of every state it saves, see DecodeStored),
// and a node refuses to restore a state recorded under another one; its frames carry
// Fleet and Node (FrameHeader).
type Identity struct {
	// Fleet is the fleet's ID: the first 8 bytes of a SHA-256 of Config.Fleet and the
	// canonical network, loads, algorithm (names and parameters) and seed, so every
	// node of one fleet derives the same ID and two fleets differ unless they run the
	// same spec under the same Config.Fleet name.
	Fleet uint64 `json:"fleet,string"`
	// Name is Config.Fleet.
	Name string `json:"name,omitempty"`
	// Node is the node's ID.
	Node int `json:"node"`
	// Network, Loads and Algorithm are the spec's choices, each its registry name and
	// a digest of its canonical parameters ("torus/1a2b3c4d5e6f7a8b").
	Network   string `json:"network"`
	Loads     string `json:"loads"`
	Algorithm string `json:"algorithm"`
	// Seed is the spec's seed.
	Seed uint64 `json:"seed"`
}

// NewIdentity returns the Identity of the node cfg configures: it canonicalises
// cfg.Spec with reg (nil: registry.Default()) and hashes it. It fails with an error
// naming the choice the registry refuses. O(size of the spec's parameters).
func NewIdentity(cfg Config, reg *registry.Registry) (Identity, error) {
	if reg == nil {
		reg = registry.Default()
	}
	spec, err := reg.Canonical(cfg.Spec)
	if err != nil {
		return Identity{}, errs.Wrapf(err, "node %d: spec", cfg.ID)
	}
	return identityOf(cfg, spec)
}

// identityOf is NewIdentity of a canonical spec.
func identityOf(cfg Config, spec registry.Spec) (Identity, error) {
	id := Identity{Name: cfg.Fleet, Node: cfg.ID, Seed: spec.Seed}
	h := sha256.New()
	fmt.Fprintf(h, "tokendist fleet 1\x00%s\x00%d\x00", cfg.Fleet, spec.Seed)
	for _, c := range []struct {
		dst *string
		ch  registry.Choice
	}{{&id.Network, spec.Network}, {&id.Loads, spec.Loads}, {&id.Algorithm, spec.Algorithm}} {
		params, err := json.Marshal(c.ch.Params)
		if err != nil {
			return Identity{}, errs.BadParam("node %d: parameters of %s: %v", cfg.ID, c.ch.Name, err)
		}
		sum := sha256.Sum256(params)
		*c.dst = c.ch.Name + "/" + hex.EncodeToString(sum[:8])
		fmt.Fprintf(h, "%s\x00%s\x00", c.ch.Name, params)
	}
	id.Fleet = binary.BigEndian.Uint64(h.Sum(nil)[:8])
	return id, nil
}

// FleetHex is the fleet ID as 16 hexadecimal digits, as logs and Status show it.
func (id Identity) FleetHex() string { return fmt.Sprintf("%016x", id.Fleet) }

// diff lists the fields in which the stored identity s differs from the configured
// one c, each as "field: stored X, configured Y"; empty when they agree.
func (s Identity) diff(c Identity) []string {
	var out []string
	add := func(field string, stored, configured any) {
		out = append(out, fmt.Sprintf("%s: stored %v, configured %v", field, stored, configured))
	}
	if s.Node != c.Node {
		add("node", s.Node, c.Node)
	}
	if s.Algorithm != c.Algorithm {
		add("algorithm", s.Algorithm, c.Algorithm)
	}
	if s.Network != c.Network {
		add("network", s.Network, c.Network)
	}
	if s.Loads != c.Loads {
		add("loads", s.Loads, c.Loads)
	}
	if s.Seed != c.Seed {
		add("seed", s.Seed, c.Seed)
	}
	if s.Name != c.Name {
		add("fleet name", fmt.Sprintf("%q", s.Name), fmt.Sprintf("%q", c.Name))
	}
	if len(out) == 0 && s.Fleet != c.Fleet {
		add("fleet ID", s.FleetHex(), c.FleetHex())
	}
	return out
}

// The store record: recordMagic, recordVersion, the identity's JSON (length-prefixed),
// the epoch (uvarint), the handoff state and a CRC-32C (Castagnoli, big-endian) of
// everything before it. Version 1 (no checksum) was never released and is refused.
const (
	recordMagic   = 0xd1
	recordVersion = 2
	maxIdentity   = 1 << 16
	recordCRC     = 4
)

// castagnoli is the CRC-32C table of the store record's checksum.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// appendRecord appends the store record of identity id, epoch epoch and handoff
// state state.
func appendRecord(b []byte, id Identity, epoch uint64, state []byte) []byte {
	js, _ := json.Marshal(id) // cannot fail: strings and integers
	start := len(b)
	b = append(b, recordMagic, recordVersion)
	b = binary.AppendUvarint(b, uint64(len(js)))
	b = append(b, js...)
	b = binary.AppendUvarint(b, epoch)
	b = append(b, state...)
	return binary.BigEndian.AppendUint32(b, crc32.Checksum(b[start:], castagnoli))
}

// Stored is what a Node keeps in its Store, as DecodeStored reads it.
type Stored struct {
	// Identity is the node's identity when its store was created.
	Identity Identity
	// Epoch is the number of the process that saved it among the node's starts on
	// the store (FrameHeader.Epoch).
	Epoch uint64
	// State is the handoff state (handoff.DecodeState reads it).
	State []byte
}

// DecodeStored decodes what a Node saved in its Store: its Identity, epoch and
// handoff state (for an audit; State aliases b). The record ends in a CRC-32C of the
// rest: a record whose checksum does not match (a flipped bit anywhere, a cut) is
// refused with an error saying "checksum". It returns an error wrapping
// tokendist.ErrBadParameter, quoting the bytes, for anything else (a state saved by a
// release before identities or before checksums, said so); it never panics.
// O(len(b)).
func DecodeStored(b []byte) (Stored, error) {
	if len(b) >= 2 && b[0] == recordMagic && b[1] == 1 {
		return Stored{}, errs.BadParam("stored state %s: a record without a checksum (written by an unreleased tokendist before checksums); refusing it: start the node on a new data directory", errs.Quote(b))
	}
	if len(b) < 2 || b[0] != recordMagic || b[1] != recordVersion {
		return Stored{}, errs.BadParam("stored state %s: no identity record (a store written by an older tokendist, or not by a Node)", errs.Quote(b))
	}
	if len(b) < 2+recordCRC {
		return Stored{}, errs.BadParam("stored state %s: checksum missing (the record is cut)", errs.Quote(b))
	}
	body := b[:len(b)-recordCRC]
	if want, got := binary.BigEndian.Uint32(b[len(body):]), crc32.Checksum(body, castagnoli); want != got {
		return Stored{}, errs.BadParam("stored state %s: checksum mismatch (stored %08x, computed %08x): the store is damaged; refusing to restore it", errs.Quote(b), want, got)
	}
	b = body
	k, used := binary.Uvarint(b[2:])
	if used <= 0 || k > maxIdentity || k > uint64(len(b)-2-used) {
		return Stored{}, errs.BadParam("stored state %s: bad identity record length", errs.Quote(b))
	}
	rest := b[2+used:]
	var st Stored
	dec := json.NewDecoder(bytes.NewReader(rest[:k]))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&st.Identity); err != nil {
		return Stored{}, errs.BadParam("stored state %s: identity record: %v", errs.Quote(b), err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return Stored{}, errs.BadParam("stored state %s: trailing bytes in the identity record", errs.Quote(b))
	}
	rest = rest[k:]
	st.Epoch, used = binary.Uvarint(rest)
	if used <= 0 || st.Epoch == 0 {
		return Stored{}, errs.BadParam("stored state %s: bad epoch", errs.Quote(b))
	}
	st.State = rest[used:]
	return st, nil
}

// IdentityFile is the name of the file in a node's data directory that marks it as
// used: at every start, once the start's first state is saved, the node writes its
// Identity and epoch there (JSON). A node whose store is empty or missing refuses to
// start on a directory that has this file (or the StartsFile) unless Options.Reinit
// says so, and then starts with the next epoch after the file's.
const IdentityFile = "identity"

// marker is the IdentityFile's contents.
type marker struct {
	Identity
	Epoch uint64 `json:"epoch"`
}

// usedBefore reports whether dir has run a node before, the identity file's contents
// if it has one, and the epoch they record (0 if none).
func usedBefore(dir string) (used bool, text string, epoch uint64) {
	if b, err := os.ReadFile(filepath.Join(dir, IdentityFile)); err == nil {
		var m marker
		if json.Unmarshal(b, &m) == nil {
			epoch = m.Epoch
		}
		return true, strings.TrimSpace(string(b)), epoch
	}
	if _, err := os.Stat(filepath.Join(dir, StartsFile)); err == nil {
		return true, "", 0
	}
	return false, "", 0
}

// writeIdentityFile writes id and epoch to dir's IdentityFile, atomically (a
// temporary file renamed over it).
func writeIdentityFile(dir string, id Identity, epoch uint64) error {
	js, _ := json.Marshal(marker{id, epoch})
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	tmp := filepath.Join(dir, IdentityFile+".tmp")
	if err := os.WriteFile(tmp, append(js, '\n'), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(dir, IdentityFile))
}

// readIdentityFile reads dir's IdentityFile (tests and tools).
func readIdentityFile(dir string) (Identity, uint64, error) {
	b, err := files.ReadFile(filepath.Join(dir, IdentityFile), "identity file", maxIdentity)
	if err != nil {
		return Identity{}, 0, err
	}
	var m marker
	if err := json.Unmarshal(b, &m); err != nil {
		return Identity{}, 0, errs.BadParam("identity file in %q: %v", dir, err)
	}
	return m.Identity, m.Epoch, nil
}

// newIncarnation draws a process's incarnation: random, never 0.
func newIncarnation() uint64 {
	var b [8]byte
	for {
		_, _ = rand.Read(b[:]) // never fails (crypto/rand)
		if v := binary.BigEndian.Uint64(b[:]); v != 0 {
			return v
		}
	}
}
