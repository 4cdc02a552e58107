// Package strictjson decodes one JSON document strictly, for every decoder of the
// module that reads input from outside (the fleet's HTTP bodies and config file): a
// field the target does not have, a key repeated in one object (at any depth; keys
// that differ only in letter case count as repeated, since encoding/json reads them
// into the same field), and anything but white space after the value (trailing
// garbage, a second value) are errors starting with "tokendist: " that name the
// problem and where it is.
package strictjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/tokendist/tokendist/internal/errs"
)

// maxDepth bounds the nesting the key check follows (encoding/json itself stops at
// 10,000; the module's documents nest fewer than 10 levels).
const maxDepth = 1000

// Decode decodes the single JSON value in data into v, strictly (see the package
// comment). Its errors wrap tokendist.ErrBadParameter (and, for a type mismatch or an
// error of v's UnmarshalJSON, that error too). O(len(data)).
func Decode(data []byte, v any) error {
	if err := checkKeys(data); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		if errors.Is(err, errs.ErrBadParameter) {
			return err
		}
		return fmt.Errorf("%w: %s", errs.ErrBadParameter, strings.TrimPrefix(err.Error(), "json: "))
	}
	return nil
}

// checkKeys walks data's tokens: one value, no repeated key in any object, nothing
// after the value.
func checkKeys(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	type frame struct {
		obj    bool
		keys   map[string]string // folded key -> key as written
		path   string
		index  int
		expect bool // object: the next string token is a key
	}
	var stack []*frame
	elem := func() string { // the path of the value about to be read
		if len(stack) == 0 {
			return "$"
		}
		f := stack[len(stack)-1]
		if !f.obj {
			return f.path + "[" + strconv.Itoa(f.index) + "]"
		}
		return f.path
	}
	done := false
	for {
		off := dec.InputOffset()
		tok, err := dec.Token()
		if err == io.EOF {
			if !done {
				return errs.BadParam("empty JSON document")
			}
			return nil
		}
		if done {
			rest := bytes.TrimLeft(data[off:], " \t\r\n")
			off += int64(len(data[off:]) - len(rest))
			if err != nil {
				return errs.BadParam("trailing data after the JSON value at byte %d: %s", off, errs.Quote(bytes.TrimSpace(rest)))
			}
			return errs.BadParam("a second JSON value at byte %d: %s (want exactly one)", off, errs.Quote(bytes.TrimSpace(rest)))
		}
		if err != nil {
			return errs.BadParam("%s", strings.TrimPrefix(err.Error(), "json: "))
		}
		top := (*frame)(nil)
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if k, isKey := tok.(string); isKey && top != nil && top.obj && top.expect {
			fk := strings.ToLower(strings.ToUpper(k))
			if prev, dup := top.keys[fk]; dup {
				if prev == k {
					return errs.BadParam("repeated key %q at %s", k, top.path)
				}
				return errs.BadParam("repeated key %q at %s (as %q: keys differ only in letter case)", k, top.path, prev)
			}
			top.keys[fk] = k
			top.expect = false
			top.path, top.index = top.path+"."+k, len(top.path) // remember where the key began
			continue
		}
		switch d := tok.(type) {
		case json.Delim:
			switch d {
			case '{', '[':
				if len(stack) >= maxDepth {
					return errs.BadParam("JSON nested deeper than %d at %s", maxDepth, elem())
				}
				stack = append(stack, &frame{obj: d == '{', keys: map[string]string{}, path: elem(), expect: d == '{'})
				continue
			default:
				stack = stack[:len(stack)-1]
			}
		}
		// A value ended: advance the parent.
		if len(stack) == 0 {
			done = true
			continue
		}
		p := stack[len(stack)-1]
		if p.obj {
			p.path, p.expect = p.path[:p.index], true
		} else {
			p.index++
		}
	}
}
