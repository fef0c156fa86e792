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
	"math"
	"reflect"
	"strings"

	"github.com/gpuplan/gpuplan/internal/quote"
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
		b.WriteString(quote.Text(e.Source))
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

// Options adjust Decode.
type Options struct {
	// Required makes every struct field without omitempty required: a
	// field that is absent or null, and a null list element, is an error
	// naming its path.
	Required bool
	// Present, when not nil, receives the top-level keys given with a
	// non-null value, for callers that default the absent ones.
	Present map[string]bool
	// NullIsAbsent makes a null object member mean "not given" whatever
	// its type, for callers that treat absent fields themselves. A null
	// list element stays an error where the element type has no null.
	NullIsAbsent bool
}

// Decode decodes exactly one JSON value from data into v. Unknown fields,
// a key given twice in one object, a key that matches a field only when
// case is ignored, trailing data, type mismatches, a Go array given the
// wrong number of elements, a null where the type has no null, an empty
// input and a top-level null are *Error values naming the path of the
// offending value (for example "waves[3].id"). source names the input in
// messages.
func Decode(source string, data []byte, v any) error {
	return DecodeWith(source, data, v, Options{})
}

// DecodeWith is Decode with options. The document is checked in one pass
// over its bytes that allocates only for the keys of the open objects,
// then decoded once into v.
func DecodeWith(source string, data []byte, v any, o Options) error {
	if len(bytes.TrimSpace(data)) == 0 {
		return &Error{Source: source, Msg: "input is empty", Fix: "provide a JSON object"}
	}
	t := reflect.TypeOf(v)
	if t == nil || t.Kind() != reflect.Pointer {
		return &Error{Source: source, Msg: "decoding needs a pointer", Fix: "pass a pointer to the value to fill"}
	}
	if bytes.Equal(bytes.TrimSpace(data), []byte("null")) {
		// encoding/json accepts a top-level null and leaves v untouched;
		// report it instead of letting it pass as an empty document.
		want := describe(t)
		return &Error{Source: source, Field: "(top level)", Msg: "the input is null, not " + want,
			Fix: "make the whole input " + want}
	}
	w := &walker{scanner: scanner{data: data}, source: source, opts: o, types: map[reflect.Type]*typeInfo{}}
	err := w.value(w.info(t.Elem()))
	if w.skipSpace(); err == nil && w.pos < len(w.data) {
		// A NUL byte is data too: the check is the position, not peek's 0.
		line, col := lineCol(w.data, w.pos)
		return &Error{Source: source, Msg: fmt.Sprintf("trailing data after the JSON value at line %d, column %d (byte %d)", line, col, w.pos),
			Fix: "remove everything after the closing brace"}
	}
	if err != nil {
		return w.convertWalk(err)
	}
	if w.missing != nil {
		return w.missing
	}
	if err := json.Unmarshal(data, v); err != nil {
		return convert(source, err)
	}
	return nil
}

// convertWalk turns a scanner failure into an *Error with the line and
// column; walker errors are already *Error.
func (w *walker) convertWalk(err error) error {
	var se *syntaxError
	if !errors.As(err, &se) {
		return err
	}
	if se.eof {
		return &Error{Source: w.source, Msg: "JSON input ends early: " + se.msg, Fix: "close every string, object and array"}
	}
	line, col := lineCol(w.data, se.off)
	return &Error{Source: w.source, Msg: fmt.Sprintf("malformed JSON at line %d, column %d (byte %d): %s", line, col, se.off, se.msg),
		Fix: "check the JSON syntax near that position"}
}

func (e *syntaxError) Error() string { return e.msg }

// convert reports a failure of the standard decoder after the walk
// accepted the document: a decoding method's own error.
func convert(source string, err error) error {
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) {
		field, want := typeErr.Field, describe(typeErr.Type)
		if field == "" {
			field = "(top level)"
		}
		return &Error{Source: source, Field: field,
			Msg: fmt.Sprintf("cannot use JSON %s here: want %s", typeErr.Value, want), Fix: "give " + field + " " + want}
	}
	msg := err.Error()
	if strings.Contains(msg, "Fix:") {
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
