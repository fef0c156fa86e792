// Package strictjson decodes JSON documents strictly: unknown fields,
// trailing data and type mismatches are errors that name the offending field
// and say how to fix it.
package strictjson

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"strings"
)

// Error is a decoding failure. Field is the JSON path of the offending value
// when known (for example "waves[3].frontier_bytes").
type Error struct {
	Source string // file name or "<input>"
	Field  string
	Msg    string
	Fix    string
}

// Error describes the failure and ends with a "Fix:" sentence.
func (e *Error) Error() string {
	var b strings.Builder
	if e.Source != "" {
		b.WriteString(e.Source)
		b.WriteString(": ")
	}
	if e.Field != "" {
		fmt.Fprintf(&b, "field %q: ", e.Field)
	}
	b.WriteString(e.Msg)
	if e.Fix != "" {
		b.WriteString(". Fix: ")
		b.WriteString(e.Fix)
	}
	return b.String()
}

// Decode decodes exactly one JSON value from data into v. Unknown fields,
// trailing data, type mismatches, an empty input and a top-level null are
// *Error values. source names the input in messages.
func Decode(source string, data []byte, v any) error {
	if len(bytes.TrimSpace(data)) == 0 {
		return &Error{Source: source, Msg: "input is empty", Fix: "provide a JSON object"}
	}
	if bytes.Equal(bytes.TrimSpace(data), []byte("null")) {
		// encoding/json accepts a top-level null and leaves v untouched;
		// report it instead of letting it pass as an empty document.
		want := describe(reflect.TypeOf(v))
		return &Error{Source: source, Field: "(top level)", Msg: "the input is null, not " + want,
			Fix: "make the whole input " + want}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return convert(source, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return &Error{Source: source, Msg: "trailing data after the JSON value", Fix: "remove everything after the closing brace"}
	}
	return nil
}

func convert(source string, err error) error {
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	switch {
	case errors.As(err, &typeErr):
		field, want := typeErr.Field, describe(typeErr.Type)
		fix := fmt.Sprintf("give %s %s", field, want)
		if field == "" {
			field, fix = "(top level)", "make the whole input "+want
		}
		return &Error{Source: source, Field: field,
			Msg: fmt.Sprintf("cannot use JSON %s here: want %s", typeErr.Value, want), Fix: fix}
	case errors.As(err, &syntaxErr):
		return &Error{Source: source, Msg: fmt.Sprintf("malformed JSON at byte %d: %v", syntaxErr.Offset, syntaxErr),
			Fix: "check the JSON syntax near that offset"}
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		return &Error{Source: source, Msg: "JSON input ends early", Fix: "close every object and array"}
	}
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "json: unknown field "); ok {
		name = strings.Trim(name, `"`)
		field := name
		if field == "" {
			field = "(empty name)"
		}
		return &Error{Source: source, Field: field, Msg: "unknown field",
			Fix: fmt.Sprintf("remove %q or check its spelling against the documented fields", name)}
	}
	if strings.Contains(msg, "Fix:") {
		// A custom unmarshaler already explained the remedy.
		return &Error{Source: source, Msg: msg}
	}
	return &Error{Source: source, Msg: msg, Fix: "check the input against the documented format"}
}

// Required reports a missing required field as an *Error.
func Required(source, field, fix string) error {
	return &Error{Source: source, Field: field, Msg: "required field is missing", Fix: fix}
}

// describe says in JSON terms what a value of Go type t must look like, so a
// type mismatch names the expected JSON form rather than a Go type name.
func describe(t reflect.Type) string {
	if t == nil {
		return "a value of the documented form"
	}
	textUnmarshaler := reflect.TypeFor[encoding.TextUnmarshaler]()
	if t.Implements(textUnmarshaler) || reflect.PointerTo(t).Implements(textUnmarshaler) {
		return "a string"
	}
	switch t.Kind() {
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		lim := int64(1)<<(t.Bits()-1) - 1
		return fmt.Sprintf("an integer in %d..%d", -lim-1, lim)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return fmt.Sprintf("an integer in 0..%d", uint64(math.MaxUint64)>>(64-t.Bits()))
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	case reflect.Slice, reflect.Array:
		return "a JSON array"
	case reflect.Struct, reflect.Map:
		return "a JSON object"
	case reflect.Pointer:
		return describe(t.Elem())
	}
	return "a value of the documented form"
}
