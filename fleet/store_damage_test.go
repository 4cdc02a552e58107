package fleet

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tokendist/tokendist/registry"
)

// damageSpec is the small fleet the store damage tests run one node of.
func damageSpec() registry.Spec {
	return registry.Spec{Network: choice("random-tree", map[string]any{"n": 6}), Loads: choice("uniform-random", map[string]any{"tokens": 60}),
		Algorithm: choice("threshold-1", nil), Seed: 3}
}

// copyFile copies src to dst.
func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// boltLoad returns the state saved in the BoltStore at path.
func boltLoad(t *testing.T, path string) []byte {
	t.Helper()
	s, err := OpenBoltStore(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	b, err := s.Load()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestStoreDamageChecksumRecord flips every bit of a store record in turn: each is
// refused, and past the magic and version bytes the refusal names the checksum. On
// the main branch before checksums, a flip in the handoff state (or in the epoch, to
// another non-zero value) decoded without an error.
func TestStoreDamageChecksumRecord(t *testing.T) {
	id := Identity{Fleet: 7, Name: "f", Node: 3, Network: "torus/00", Loads: "one/00", Algorithm: "x/00", Seed: 9}
	rec := appendRecord(nil, id, 5, []byte("a handoff state"))
	if st, err := DecodeStored(rec); err != nil || st.Epoch != 5 || string(st.State) != "a handoff state" || st.Identity != id {
		t.Fatalf("DecodeStored = %+v, %v", st, err)
	}
	for bit := 0; bit < 8*len(rec); bit++ {
		b := bytes.Clone(rec)
		b[bit/8] ^= 1 << (bit % 8)
		_, err := DecodeStored(b)
		if err == nil || !strings.HasPrefix(err.Error(), "tokendist: ") {
			t.Fatalf("bit %d flipped: accepted (%v)", bit, err)
		}
		if bit >= 16 && !strings.Contains(err.Error(), "checksum") {
			t.Fatalf("bit %d flipped: %v; want it to name the checksum", bit, err)
		}
	}
	// A record of version 1 (before checksums; never released) is refused, said so.
	old := bytes.Clone(rec[:len(rec)-recordCRC])
	old[1] = 1
	if _, err := DecodeStored(old); err == nil || !strings.Contains(err.Error(), "without a checksum") {
		t.Fatalf("a version 1 record: %v; want a refusal naming the missing checksum", err)
	}
}

// TestStoreDamageChecksumNode damages one bit of a node's saved state — in the
// BoltStore's file on disk, and in a MemoryStore — and expects the node to refuse to
// start, naming the node, the data file and the checksum, and leaving the store as it
// is (no repair). On the main branch before checksums, the node restored the damaged
// state (a flip in the handoff state's items changed them silently).
func TestStoreDamageChecksumNode(t *testing.T) {
	spec := damageSpec()
	// BoltStore: the bit flipped in the file, in every copy of the record (bbolt's
	// copy-on-write leaves older copies in free pages).
	dir := t.TempDir()
	cfg := identityConfig(t, spec, 0, dir)
	if _, err := openNode(t, cfg, nil, false); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, StoreFile)
	rec := boltLoad(t, path)
	file, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	at := len(rec) - recordCRC - 1 // the handoff state's last byte
	found := 0
	for i := 0; i+len(rec) <= len(file); {
		k := bytes.Index(file[i:], rec)
		if k < 0 {
			break
		}
		file[i+k+at] ^= 0x10
		found++
		i += k + len(rec)
	}
	if found == 0 {
		t.Fatal("the record is not in the file")
	}
	if err := os.WriteFile(path, file, 0o600); err != nil {
		t.Fatal(err)
	}
	damaged := boltLoad(t, path)
	if bytes.Equal(damaged, rec) || len(damaged) != len(rec) {
		t.Fatalf("the flip did not reach the stored value")
	}
	_, err = openNode(t, cfg, nil, false)
	wantErr(t, err, "checksum")
	wantErr(t, err, "node 0")
	wantErr(t, err, path)
	if _, err := openNode(t, cfg, nil, true); err == nil {
		t.Errorf("with Reinit: accepted a damaged store")
	}
	if got := boltLoad(t, path); !bytes.Equal(got, damaged) {
		t.Errorf("the refused start changed the store")
	}
	// MemoryStore: a bit flipped in the identity record, then one in the state.
	for _, at := range []int{5, -recordCRC - 1} {
		disk := NewMemoryStore()
		cfg := identityConfig(t, spec, 1, t.TempDir())
		if _, err := openNode(t, cfg, disk.Reopen(), false); err != nil {
			t.Fatal(err)
		}
		b, _ := disk.Reopen().Load()
		if at < 0 {
			at += len(b)
		}
		b[at] ^= 1
		if err := disk.Reopen().Save(b); err != nil {
			t.Fatal(err)
		}
		_, err := openNode(t, cfg, disk.Reopen(), false)
		wantErr(t, err, "checksum")
		wantErr(t, err, "node 1")
		if got, _ := disk.Reopen().Load(); !bytes.Equal(got, b) {
			t.Errorf("the refused start changed the store")
		}
	}
}

// TestStoreDamageTruncated truncates a real node's store file to 0 bytes, 1 page,
// half, and all but its last page, and opens it, as a BoltStore and as the node's
// store: each is an error (the process survives; no SIGBUS, no panic), and the node
// refuses to start; also with meta page 0 invalid, so that meta page 1 alone counts
// the pages. On the main branch, a truncated file whose meta pages count pages past
// its end was mapped by bbolt, which read past the end of the file: SIGBUS, the test
// binary killed (seen with bbolt v1.4.3); the first version of the size check missed
// the case of meta page 0 invalid in the same way.
func TestStoreDamageTruncated(t *testing.T) {
	spec := damageSpec()
	dir := t.TempDir()
	cfg := identityConfig(t, spec, 0, dir)
	for i := 0; i < 3; i++ { // three starts: several transactions
		if _, err := openNode(t, cfg, nil, false); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(dir, StoreFile)
	pristine, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	page := int(binary.LittleEndian.Uint32(pristine[16+8:]))
	// The pages in use: the meta pages' high-water page id (bbolt may grow the file
	// past it; a cut there loses nothing).
	used := page * int(max(binary.LittleEndian.Uint64(pristine[16+40:]), binary.LittleEndian.Uint64(pristine[page+16+40:])))
	if page < 512 || used < 4*page || used > len(pristine) {
		t.Fatalf("page size %d, %d bytes in use, file %d bytes", page, used, len(pristine))
	}
	// Meta page 0 invalid (its checksum broken): meta page 1 alone counts the pages.
	{
		b := bytes.Clone(pristine[:used/2])
		b[16+48] ^= 1
		p := filepath.Join(t.TempDir(), StoreFile)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		s, err := OpenBoltStore(p, nil)
		if err == nil {
			_ = s.Close()
		}
		wantErr(t, err, "truncated")
	}
	for _, size := range []int{0, page, used / 2, used - page} {
		for _, asNode := range []bool{false, true} {
			d := t.TempDir()
			for _, f := range []string{IdentityFile, StartsFile, StoreFile + SeqSuffix} {
				copyFile(t, filepath.Join(dir, f), filepath.Join(d, f))
			}
			p := filepath.Join(d, StoreFile)
			if err := os.WriteFile(p, pristine[:size], 0o600); err != nil {
				t.Fatal(err)
			}
			if asNode {
				_, err := openNode(t, identityConfig(t, spec, 0, d), nil, false)
				if err == nil || !strings.HasPrefix(err.Error(), "tokendist: ") {
					t.Errorf("truncated to %d of %d bytes: the node started (%v)", size, len(pristine), err)
				}
				continue
			}
			s, err := OpenBoltStore(p, nil)
			if size == 0 {
				// bbolt initialises an empty file: the store is empty, which the node
				// refuses (its identity file), as above.
				if err != nil {
					t.Errorf("truncated to 0: %v", err)
				} else if got, err := s.Load(); got != nil || err != nil {
					t.Errorf("truncated to 0: Load = %q, %v", got, err)
				}
			} else if err == nil || !strings.HasPrefix(err.Error(), "tokendist: ") || !strings.Contains(err.Error(), p) {
				t.Errorf("truncated to %d of %d bytes: %v; want an error naming the file", size, len(pristine), err)
			}
			if err == nil {
				_ = s.Close()
			}
		}
	}
}

// TestStoreDamageRollback restores a store file's bytes of an earlier save (what
// bbolt does silently when its newer meta page is damaged: it opens the older
// transaction) and expects the open to be refused, naming both save numbers and the
// mirror file to remove to accept the loss; with the mirror one save behind the store
// (a crash between the commit and the mirror's write) or a torn mirror slot, it
// opens. On the main branch, the rolled-back store opened and the node restored the
// older state, losing the later saves.
func TestStoreDamageRollback(t *testing.T) {
	path := filepath.Join(t.TempDir(), StoreFile)
	mirror := path + SeqSuffix
	save := func(state string) {
		t.Helper()
		s, err := OpenBoltStore(path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Save([]byte(state)); err != nil {
			t.Fatal(err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
	save("first")
	first := path + ".first"
	copyFile(t, path, first)
	firstMirror := mirror + ".first"
	copyFile(t, mirror, firstMirror)
	save("second")
	copyFile(t, path, path+".second")
	copyFile(t, first, path) // the rollback
	fds := openFDs(t)
	s, err := OpenBoltStore(path, nil)
	if err == nil {
		_ = s.Close()
	}
	if n := openFDs(t); n != fds {
		t.Errorf("%d descriptors open after the refused open, %d before: it leaked the database or the mirror", n, fds)
	}
	wantErr(t, err, "rolled back")
	wantErr(t, err, "save sequence is 1")
	wantErr(t, err, "records save 2")
	wantErr(t, err, "the last 1 saves") // 2 - 1
	wantErr(t, err, mirror)
	// The mirror behind the store: a crash between a commit and its mirror write.
	copyFile(t, path+".second", path)
	copyFile(t, firstMirror, mirror)
	if got := boltLoad(t, path); string(got) != "second" {
		t.Fatalf("with the mirror one save behind: %q", got)
	}
	save("third") // the mirror catches up: 3, then 4
	save("fourth")
	// A torn slot (here: the one save 4 wrote, garbage) leaves the other's number.
	m, err := os.ReadFile(mirror)
	if err != nil || len(m) != 32 {
		t.Fatalf("mirror %d bytes, %v", len(m), err)
	}
	m[3] ^= 0xff // save 4 is in slot 0
	if err := os.WriteFile(mirror, m, 0o600); err != nil {
		t.Fatal(err)
	}
	if got := boltLoad(t, path); string(got) != "fourth" {
		t.Fatalf("with a torn mirror slot: %q", got)
	}
	// The rollback after the fourth save (the mirror says 3), then the operator's
	// way to accept it.
	copyFile(t, first, path)
	s, err = OpenBoltStore(path, nil)
	if err == nil {
		_ = s.Close()
	}
	wantErr(t, err, "save sequence is 1")
	wantErr(t, err, "records save 3")
	if err := os.Remove(mirror); err != nil {
		t.Fatal(err)
	}
	if got := boltLoad(t, path); string(got) != "first" {
		t.Fatalf("after removing the mirror: %q", got)
	}
}

// TestStoreDamageRollbackMeta damages the newer of a real node's two bbolt meta
// pages, so that bbolt opens the older transaction, and expects the node's restart
// to be refused as a rollback. On the main branch the node restored the older state.
func TestStoreDamageRollbackMeta(t *testing.T) {
	dir := t.TempDir()
	cfg := identityConfig(t, damageSpec(), 0, dir)
	for i := 0; i < 2; i++ {
		if _, err := openNode(t, cfg, nil, false); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(dir, StoreFile)
	file, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	page := int(binary.LittleEndian.Uint32(file[16+8:]))
	txid := func(off int) uint64 { return binary.LittleEndian.Uint64(file[off+16+48:]) }
	newer := 0
	if txid(page) > txid(0) {
		newer = page
	}
	file[newer+16+48] ^= 1 // its txid: the meta page's checksum no longer matches
	if err := os.WriteFile(path, file, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = openNode(t, cfg, nil, false)
	wantErr(t, err, "rolled back")
	wantErr(t, err, "node 0")
}

// BenchmarkBoltStoreSave times a BoltStore Save of a 1 KiB state (the commit's fsyncs
// and the mirror's).
func BenchmarkBoltStoreSave(b *testing.B) {
	s, err := OpenBoltStore(filepath.Join(b.TempDir(), StoreFile), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	state := bytes.Repeat([]byte{1}, 1<<10)
	for b.Loop() {
		if err := s.Save(state); err != nil {
			b.Fatal(err)
		}
	}
}
