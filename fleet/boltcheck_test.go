package fleet

import (
	"encoding/binary"
	"hash/fnv"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckBoltFileEdges pins checkBoltFile on crafted files (sparse where large): a
// meta page is 16 bytes of page header, then the magic, the page size at 8, the page
// count at 40 and an FNV-64a of the 56 bytes before it at 56. A file is refused when a
// valid meta page (meta page 0 at offset 0, else one whose page size is its offset)
// counts more bytes than the file has, or a page size of 0, or a page count whose
// bytes overflow; a file of exactly its pages, all zeros, or with a valid meta page at
// an offset other than its page size is left to bbolt.
func TestCheckBoltFileEdges(t *testing.T) {
	type meta struct {
		off   int64
		ps    uint32
		pages uint64
	}
	dir := t.TempDir()
	write := func(name string, size int64, metas ...meta) string {
		path := filepath.Join(dir, name)
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if err := f.Truncate(size); err != nil {
			t.Fatal(err)
		}
		for _, m := range metas {
			var b [16 + 64]byte
			p := b[16:]
			binary.LittleEndian.PutUint32(p[0:], 0xED0CDAED)
			binary.LittleEndian.PutUint32(p[8:], m.ps)
			binary.LittleEndian.PutUint64(p[40:], m.pages)
			h := fnv.New64a()
			_, _ = h.Write(p[:56])
			binary.LittleEndian.PutUint64(p[56:], h.Sum64())
			if _, err := f.WriteAt(b[:], m.off); err != nil {
				t.Fatal(err)
			}
		}
		return path
	}
	for _, c := range []struct {
		name    string
		path    string
		refused bool
	}{
		{"page size 0", write("ps0", 8192, meta{0, 0, 1}), true},
		{"a page count whose bytes overflow", write("overflow", 8192, meta{0, 4096, 1 << 62}), true},
		{"exactly its pages", write("exact", 8192, meta{0, 4096, 2}), false},
		{"one page more than the file", write("short", 8192, meta{0, 4096, 3}), true},
		{"all zeros", write("zeros", 8192), false},
		{"meta page 1 at 16 MiB, pages past the end", write("big", 1<<24+4096, meta{1 << 24, 1 << 24, 4}), true},
		{"a meta page at 1 KiB claiming 4 KiB pages", write("misplaced", 8192, meta{1 << 10, 4096, 1 << 20}), false},
	} {
		err := checkBoltFile(c.path)
		switch {
		case c.refused && (err == nil || !strings.HasPrefix(err.Error(), "tokendist: ") || !strings.Contains(err.Error(), "truncated or damaged")):
			t.Errorf("%s: %v; want it refused as truncated or damaged", c.name, err)
		case !c.refused && err != nil:
			t.Errorf("%s: %v; want it left to bbolt", c.name, err)
		}
	}
}
