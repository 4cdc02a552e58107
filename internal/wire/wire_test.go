package wire

import (
	"encoding/binary"
	"testing"
)

func TestReader(t *testing.T) {
	var b []byte
	b = append(b, 7)
	b = binary.AppendUvarint(b, 300)
	b = binary.AppendVarint(b, -5)
	b = binary.AppendUvarint(b, 2)
	b = binary.AppendUvarint(b, 1<<40)
	b = binary.AppendUvarint(b, 9)
	b = append(b, 0xAA, 0xBB)
	r := NewReader(b)
	if x := r.Byte(); x != 7 {
		t.Fatalf("Byte = %d", x)
	}
	if x := r.Uvarint(); x != 300 {
		t.Fatalf("Uvarint = %d", x)
	}
	if x := r.Varint(); x != -5 {
		t.Fatalf("Varint = %d", x)
	}
	if k := r.Count(2); k != 2 {
		t.Fatalf("Count = %d", k)
	}
	if ids := r.Uvarints(2); len(ids) != 2 || ids[0] != 1<<40 || ids[1] != 9 {
		t.Fatalf("Uvarints = %v", ids)
	}
	if r.Failed() || r.Len() != 2 || r.Used() != len(b)-2 || r.Rest()[0] != 0xAA {
		t.Fatalf("failed %t, len %d, used %d", r.Failed(), r.Len(), r.Used())
	}
	r.Skip(2)
	if r.Failed() || r.Len() != 0 || r.Used() != len(b) {
		t.Fatalf("after Skip: failed %t, len %d", r.Failed(), r.Len())
	}
	if ids := r.Uvarints(0); ids != nil || r.Failed() {
		t.Fatalf("Uvarints(0) = %v, failed %t", ids, r.Failed())
	}
	// Every read past the end fails, and the failure sticks.
	if r.Byte() != 0 || !r.Failed() {
		t.Fatal("Byte past the end")
	}
	r = NewReader(b)
	r.Fail()
	if r.Byte() != 0 || r.Uvarint() != 0 || r.Varint() != 0 || r.Rest() != nil || r.Len() != 0 || !r.Failed() {
		t.Fatal("reads after Fail")
	}
}

func TestReaderFailures(t *testing.T) {
	over := []byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01} // 11 bytes: overflows
	for name, f := range map[string]func(r *Reader){
		"Uvarint of nothing":   func(r *Reader) { r.Uvarint() },
		"Varint of nothing":    func(r *Reader) { r.Varint() },
		"Byte of nothing":      func(r *Reader) { r.Byte() },
		"Count above most":     func(r *Reader) { r.b = []byte{3}; r.Count(2) },
		"Count, negative most": func(r *Reader) { r.b = []byte{0}; r.Count(-1) },
		"Uvarints beyond Len":  func(r *Reader) { r.b = []byte{1, 2}; r.Uvarints(3) },
		"Uvarints negative":    func(r *Reader) { r.b = []byte{1}; r.Uvarints(-1) },
		"Skip beyond Len":      func(r *Reader) { r.b = []byte{1}; r.Skip(2) },
		"Skip negative":        func(r *Reader) { r.b = []byte{1}; r.Skip(-1) },
		"overlong Uvarint":     func(r *Reader) { r.b = over; r.Uvarint() },
		"overlong Varint":      func(r *Reader) { r.b = over; r.Varint() },
	} {
		var r Reader
		f(&r)
		if !r.Failed() {
			t.Errorf("%s: not failed", name)
		}
		if r.Uvarint() != 0 || r.Len() != 0 {
			t.Errorf("%s: reads after the failure", name)
		}
	}
}
