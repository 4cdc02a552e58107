// Package nilcheck tells whether an interface value is nil or holds a typed nil: the one
// check the core, handoff and animate make before calling a user's value, so that a
// typed nil gets a clear error instead of a nil-pointer panic deep inside a run.
package nilcheck

import "reflect"

// IsNil reports whether v is a nil interface or holds a nil pointer, map, slice, func,
// chan or interface (a typed nil). O(1).
func IsNil(v any) bool {
	if v == nil {
		return true
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Func, reflect.Chan, reflect.Interface:
		return rv.IsNil()
	}
	return false
}
