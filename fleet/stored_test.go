package fleet

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"hash/crc32"
	"strings"
	"testing"
)

// TestDecodeStoredEdges pins DecodeStored at its edges, each by the defect its error
// names: the two-byte records of version 1 and 2, a record of exactly its header and
// checksum, and the identity's length at its bounds (maxIdentity bytes decode, one
// more is refused; a length of exactly the bytes left decodes as far as the epoch, one
// more is refused as a length, never read into the checksum).
func TestDecodeStoredEdges(t *testing.T) {
	id := Identity{Fleet: 3, Name: "f", Node: 2, Network: "ring/00", Loads: "l/01", Algorithm: "a/02", Seed: 5}
	sealed := func(b []byte) []byte { return binary.BigEndian.AppendUint32(b, crc32.Checksum(b, castagnoli)) }
	js, err := json.Marshal(id)
	if err != nil {
		t.Fatal(err)
	}
	// record is a sealed record whose identity is js padded with spaces to size bytes
	// (valid JSON), declared as k bytes, then tail.
	record := func(size int, k uint64, tail []byte) []byte {
		b := binary.AppendUvarint([]byte{recordMagic, recordVersion}, k)
		b = append(b, js...)
		b = append(b, bytes.Repeat([]byte{' '}, size-len(js))...)
		return sealed(append(b, tail...))
	}
	epochState := append(binary.AppendUvarint(nil, 4), "state"...)
	for _, c := range []struct {
		name string
		b    []byte
		want string // "" : decodes
	}{
		{"magic and version 1", []byte{recordMagic, 1}, "without a checksum"},
		{"version 1 with another magic", []byte{recordMagic + 1, 1}, "no identity record"},
		{"magic and version 2", []byte{recordMagic, recordVersion}, "checksum missing"},
		{"header and checksum only", sealed([]byte{recordMagic, recordVersion}), "bad identity record length"},
		{"identity of maxIdentity bytes", record(maxIdentity, maxIdentity, epochState), ""},
		{"identity of maxIdentity+1 bytes", record(maxIdentity+1, maxIdentity+1, epochState), "bad identity record length"},
		{"identity length = the bytes left", record(len(js)+2, uint64(len(js)+2), nil), "bad epoch"},
		{"identity length past the bytes left", record(len(js)+2, uint64(len(js)+3), nil), "bad identity record length"},
		{"identity length 4 past the bytes left", record(len(js)+2, uint64(len(js)+6), nil), "bad identity record length"},
	} {
		st, err := DecodeStored(c.b)
		switch {
		case c.want == "" && (err != nil || st.Identity != id || st.Epoch != 4 || string(st.State) != "state"):
			t.Errorf("%s: %+v, %v; want it decoded", c.name, st, err)
		case c.want != "" && (err == nil || !strings.HasPrefix(err.Error(), "tokendist: ") || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: %v; want an error naming %q", c.name, err, c.want)
		}
	}
}
