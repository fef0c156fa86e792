package strictjson

import (
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
)

// maxDepth bounds the nesting of arrays and objects, as encoding/json does.
const maxDepth = 10000

// walker checks a document against a Go type in one pass over its bytes,
// holding only the current path and the state of the open objects, so its
// memory stays proportional to the nesting and the widest object.
type walker struct {
	scanner
	source string
	opts   Options
	depth  int
	stack  []step
	// missing is the first required value found absent or null.
	missing error
	types   map[reflect.Type]*typeInfo
}

var (
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
)

func (w *walker) errAt(msg, fix string) *Error {
	return &Error{Source: w.source, Field: w.field(), Msg: msg, Fix: fix}
}

// value checks the value at the scanner's position against type ti (nil
// means any JSON value).
func (w *walker) value(ti *typeInfo) error {
	c := w.peek()
	switch {
	case !startsValue(c):
		return w.unexpected("a JSON value")
	case ti == nil || ti.class == classAny:
		return w.any()
	case ti.class == classCustom:
		return w.custom(ti.t)
	case c == 'n':
		if err := w.literal("null"); err != nil {
			return err
		}
		if !ti.nullable {
			return w.errAt("null is not "+describe(ti.t), "give "+w.field()+" "+describe(ti.t)+", or leave the field out where it is optional")
		}
		return nil
	}
	switch ti.class {
	case classText:
		return w.text(ti.t)
	case classPointer:
		return w.value(ti.elem)
	case classStruct:
		return w.object(ti)
	case classMap:
		return w.mapValue(ti)
	case classSlice, classArray:
		return w.array(ti)
	}
	return w.scalar(ti.t, c)
}

// startsValue reports whether c can start a JSON value.
func startsValue(c byte) bool {
	switch c {
	case '{', '[', '"', 't', 'f', 'n', '-':
		return true
	}
	return c >= '0' && c <= '9'
}

// typeErr reports a JSON value of the wrong kind for t.
func (w *walker) typeErr(got string, t reflect.Type) *Error {
	want := describe(t)
	fix := fmt.Sprintf("give %s %s", w.field(), want)
	if len(w.stack) == 0 {
		fix = "make the whole input " + want
	}
	return w.errAt(fmt.Sprintf("cannot use JSON %s here: want %s", got, want), fix)
}

// kindOf names the JSON kind that starts with c.
func kindOf(c byte) string {
	switch c {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "bool"
	case 'n':
		return "null"
	}
	return "number"
}

func (w *walker) scalar(t reflect.Type, c byte) error {
	switch t.Kind() {
	case reflect.Bool:
		if c == 't' {
			return w.literal("true")
		}
		if c == 'f' {
			return w.literal("false")
		}
	case reflect.String:
		if c == '"' {
			_, err := w.str()
			return err
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64:
		if c == '-' || (c >= '0' && c <= '9') {
			return w.num(t)
		}
	default:
		return w.errAt("this field cannot be decoded from JSON", "report this input")
	}
	return w.typeErr(kindOf(c), t)
}

// num checks that a number literal fits t.
func (w *walker) num(t reflect.Type) error {
	lit, err := w.number()
	if err != nil {
		return err
	}
	switch t.Kind() {
	case reflect.Float32, reflect.Float64:
		if _, err := strconv.ParseFloat(string(lit), t.Bits()); err != nil {
			return w.errAt(fmt.Sprintf("JSON number %s does not fit a %d-bit floating-point number", clip(lit), t.Bits()), "give "+w.field()+" a smaller number")
		}
		return nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		_, err = strconv.ParseInt(string(lit), 10, t.Bits())
	default:
		_, err = strconv.ParseUint(string(lit), 10, t.Bits())
	}
	if err != nil {
		return w.typeErr("number "+clip(lit), t)
	}
	return nil
}

// clip shortens a literal quoted in a message.
func clip(lit []byte) string {
	if len(lit) > 40 {
		return string(lit[:37]) + "..."
	}
	return string(lit)
}

// text checks a value decoded by an UnmarshalText method: a string the
// method accepts.
func (w *walker) text(t reflect.Type) error {
	c := w.peek()
	if c != '"' {
		return w.typeErr(kindOf(c), t)
	}
	b, err := w.str()
	if err != nil {
		return err
	}
	if err := reflect.New(t).Interface().(encoding.TextUnmarshaler).UnmarshalText(b); err != nil {
		return w.methodErr(err)
	}
	return nil
}

// custom checks a value decoded by an UnmarshalJSON method (or base64
// bytes) by running the standard decoder on its bytes alone.
func (w *walker) custom(t reflect.Type) error {
	w.skipSpace()
	start := w.pos
	if err := w.any(); err != nil {
		return err
	}
	if err := json.Unmarshal(w.data[start:w.pos], reflect.New(t).Interface()); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return w.typeErr(te.Value, t)
		}
		return w.methodErr(err)
	}
	return nil
}

// methodErr wraps a decoding method's error, keeping its own Fix.
func (w *walker) methodErr(err error) *Error {
	msg := err.Error()
	if strings.Contains(msg, "Fix:") {
		return &Error{Source: w.source, Field: w.field(), Msg: msg}
	}
	return w.errAt(msg, "check the value against the documented format")
}

func (w *walker) enter() error {
	w.depth++
	if w.depth > maxDepth {
		return w.fail(fmt.Sprintf("arrays and objects nest deeper than %d levels", maxDepth))
	}
	return nil
}

// array checks an array whose elements have t's element type; a Go array
// type must get exactly its length.
func (w *walker) array(ti *typeInfo) error {
	t := ti.t
	if w.peek() != '[' {
		c := w.peek()
		return w.typeErr(kindOf(c), t)
	}
	if err := w.enter(); err != nil {
		return err
	}
	w.pos++
	n := 0
	for more, err := w.first(']'); more || err != nil; more, err = w.next(']') {
		if err != nil {
			return err
		}
		if t.Kind() == reflect.Array && n == t.Len() {
			whole := w.field()
			w.pushIndex(n)
			return w.errAt(fmt.Sprintf("%s holds more than %d elements", whole, t.Len()), fmt.Sprintf("give exactly %d elements", t.Len()))
		}
		w.pushIndex(n)
		if err := w.element(ti.elem); err != nil {
			return err
		}
		w.pop()
		n++
	}
	w.depth--
	if t.Kind() == reflect.Array && n != t.Len() {
		return w.errAt(fmt.Sprintf("has %d elements, want %d", n, t.Len()), fmt.Sprintf("give exactly %d elements", t.Len()))
	}
	return nil
}

// element checks one array element; with Options.Required a null element
// is an error even where the type allows it.
func (w *walker) element(ti *typeInfo) error {
	if w.opts.Required && w.peek() == 'n' {
		if err := w.literal("null"); err != nil {
			return err
		}
		w.miss(w.errAt("element is null", "give every list element a value"))
		return nil
	}
	return w.value(ti)
}

// first reports whether a container has a first member (consuming the
// closing byte when it does not).
func (w *walker) first(closing byte) (bool, error) {
	if w.peek() == closing {
		w.pos++
		return false, nil
	}
	return true, nil
}

// next consumes the separator after a member and reports whether another
// member follows.
func (w *walker) next(closing byte) (bool, error) {
	switch w.peek() {
	case ',':
		w.pos++
		return true, nil
	case closing:
		w.pos++
		return false, nil
	}
	return false, w.unexpected(fmt.Sprintf("',' or '%c'", closing))
}
