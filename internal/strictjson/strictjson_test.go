package strictjson

import (
	"errors"
	"strings"
	"testing"

	"github.com/tokendist/tokendist/internal/errs"
)

type inner struct {
	Name   string         `json:"name"`
	Params map[string]any `json:"params"`
}

type doc struct {
	Items []uint64 `json:"items"`
	Spec  inner    `json:"spec"`
	List  []inner  `json:"list"`
}

// TestDecode: encoding/json alone (the fleet's decoders before this package) took the
// last of a repeated key, ignored a second value and anything after the first, and
// matched "Items" and "items" to one field.
func TestDecode(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"items":[1],"items":[2]}`, `repeated key "items" at $`},
		{`{"items":[1],"Items":[2]}`, `repeated key "Items" at $ (as "items"`},
		{`{"spec":{"name":"a","name":"b"}}`, `repeated key "name" at $.spec`},
		{`{"spec":{"params":{"x":1,"x":2}}}`, `repeated key "x" at $.spec.params`},
		{`{"list":[{"name":"a"},{"name":"b","name":"c"}]}`, `repeated key "name" at $.list[1]`},
		{`{"items":[1]} x`, `trailing data after the JSON value at byte 14: "x"`},
		{`{"items":[1]}}`, `trailing data`},
		{`{"items":[1]}{"items":[2]}`, `a second JSON value at byte 13`},
		{`{"items":[1]} 7`, `a second JSON value`},
		{`{"itemz":[1]}`, `unknown field "itemz"`},
		{``, `empty JSON document`},
		{`   `, `empty JSON document`},
		{`{"items":[1,]}`, `invalid character`},
		{`{"items":"a"}`, `cannot unmarshal`},
		{strings.Repeat("[", 1001) + strings.Repeat("]", 1001), `nested deeper than 1000`},
	} {
		var d doc
		err := Decode([]byte(tc.in), &d)
		if err == nil || !strings.HasPrefix(err.Error(), "tokendist: ") || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, errs.ErrBadParameter) {
			t.Errorf("Decode(%q) = %v, want an error with %q", tc.in, err, tc.want)
		}
	}
	// Keys of sibling objects and of different depths may repeat.
	var d doc
	in := `{"items":[1,2], "spec":{"name":"a","params":{"name":1,"items":2}}, "list":[{"name":"a"},{"name":"b"}]}` + "\n\t "
	if err := Decode([]byte(in), &d); err != nil {
		t.Fatalf("Decode(%q): %v", in, err)
	}
	if len(d.Items) != 2 || d.Spec.Name != "a" || len(d.Spec.Params) != 2 || len(d.List) != 2 || d.List[1].Name != "b" {
		t.Errorf("Decode(%q) = %+v", in, d)
	}
}
