package brokenstore

import "testing"

// mem is a minimal inner store that counts writes.
type mem struct {
	state  []byte
	writes int
	closed bool
}

func (m *mem) Load() ([]byte, error) { return m.state, nil }
func (m *mem) Save(s []byte) error {
	m.state = append([]byte(nil), s...)
	m.writes++
	return nil
}
func (m *mem) Close() error { m.closed = true; return nil }

// TestWriteBehind: the inner store sees every third state and the last one at Close;
// Load returns the pending state first.
func TestWriteBehind(t *testing.T) {
	in := &mem{state: []byte("old")}
	w := NewWriteBehind(in, 3)
	for i, s := range []string{"a", "b", "c", "d"} {
		if err := w.Save([]byte(s)); err != nil {
			t.Fatal(err)
		}
		got, _ := w.Load()
		if string(got) != s {
			t.Fatalf("Load after Save %d = %q; want %q", i+1, got, s)
		}
	}
	if in.writes != 1 || string(in.state) != "c" {
		t.Fatalf("inner store: %d writes, state %q; want 1 write of c", in.writes, in.state)
	}
	if err := w.Close(); err != nil || !in.closed || in.writes != 2 || string(in.state) != "d" {
		t.Fatalf("Close: %v; inner %+v; want d written and closed", err, in)
	}
	fresh := NewWriteBehind(&mem{state: []byte("x")}, 0)
	if got, _ := fresh.Load(); string(got) != "x" {
		t.Fatalf("Load with nothing pending = %q; want the inner state", got)
	}
	if err := fresh.Save([]byte("y")); err != nil || fresh.inner.(*mem).writes != 1 {
		t.Fatal("every < 1 should write every state")
	}
}
