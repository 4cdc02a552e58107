package nilcheck

import "testing"

type stringer interface{ String() string }

type value struct{}

func (value) String() string { return "" }

type pointer struct{}

func (*pointer) String() string { return "" }

func TestIsNil(t *testing.T) {
	var np *pointer
	var ns stringer
	var typed stringer = np
	var m map[int]int
	var s []int
	var f func()
	var c chan int
	for _, tc := range []struct {
		name string
		v    any
		want bool
	}{
		{"nil interface", nil, true},
		{"nil stringer", ns, true},
		{"typed nil pointer", np, true},
		{"typed nil in interface", typed, true},
		{"nil map", m, true},
		{"nil slice", s, true},
		{"nil func", f, true},
		{"nil chan", c, true},
		{"pointer", &pointer{}, false},
		{"value", value{}, false},
		{"int zero", 0, false},
		{"empty string", "", false},
		{"map", map[int]int{}, false},
		{"slice", []int{}, false},
		{"func", func() {}, false},
		{"chan", make(chan int), false},
	} {
		if got := IsNil(tc.v); got != tc.want {
			t.Errorf("%s: IsNil = %v, want %v", tc.name, got, tc.want)
		}
	}
}
