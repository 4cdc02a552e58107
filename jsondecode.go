package tokendist

import (
	"encoding/json"
	"errors"
)

// UnmarshalJSON decodes a trace written by json.Marshal or Trace.WriteJSON. A value of
// the wrong type (a string where a step count belongs) fails with an error that starts
// with "tokendist: " and names the field; the input is never echoed whole. Syntax
// errors are found by encoding/json before this method runs and come from it as they
// are. It costs O(size of the input).
func (t *Trace) UnmarshalJSON(data []byte) error {
	type plain Trace // no methods: the default decoding
	return jsonErr("trace", json.Unmarshal(data, (*plain)(t)))
}

// UnmarshalJSON decodes a Result written by json.Marshal, with the errors of
// Trace.UnmarshalJSON. It costs O(size of the input).
func (r *Result) UnmarshalJSON(data []byte) error {
	type plain Result
	return jsonErr("Result", json.Unmarshal(data, (*plain)(r)))
}

// jsonErr prefixes a decoding error of what, naming the field and the JSON type for a
// type error.
func jsonErr(what string, err error) error {
	if err == nil {
		return nil
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return badParam("%s JSON: field %s at offset %d: a JSON %s cannot be a %v", what, quote([]byte(te.Field)), te.Offset, te.Value, te.Type)
	}
	return wrapf(err, "%s JSON", what)
}
