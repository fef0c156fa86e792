// Package hashjson writes structs whose 64-bit hashes are JSON hex strings
// ("0x0000000000000abc", internal/hexhash) and reads them back, for the
// plans of megakernel and planners: a JSON number above 2^53 loses digits
// in readers that hold numbers as doubles (jq, JavaScript).
//
// A type's MarshalJSON passes a copy of itself converted to a method-free
// type (type plain T), and its hash fields:
//
//	func (p Plan) MarshalJSON() ([]byte, error) {
//		type plain Plan
//		return hashjson.Marshal(plain(p), hashjson.Hash{Key: "graph_layout_hash", Value: &p.GraphLayoutHash})
//	}
//
// The output is what encoding/json writes for a struct that embeds plain
// and declares one hexhash.Hex field per hash: plain's fields in order
// without the hash keys, then the hashes in the order given.
package hashjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"

	"github.com/gpuplan/gpuplan/internal/hexhash"
)

// Hash is one hash field of a struct: its JSON key and its value.
type Hash struct {
	Key   string
	Value *uint64
}

// member is one member of a JSON object.
type member struct {
	key string
	raw json.RawMessage
}

// Marshal writes plain, a struct value of a type without a MarshalJSON
// method, as a JSON object whose hash keys hold the hashes as hex strings
// after plain's other fields. It edits encoding/json's output of plain
// without decoding it: one more copy of the object's bytes.
func Marshal(plain any, hashes ...Hash) ([]byte, error) {
	if _, ok := plain.(json.Marshaler); ok {
		return nil, fmt.Errorf("hashjson: %T has a MarshalJSON method. Fix: pass a copy converted to a type without methods", plain)
	}
	b, err := json.Marshal(plain)
	if err != nil {
		return nil, err
	}
	if len(b) < 2 || b[0] != '{' {
		return nil, fmt.Errorf("hashjson: %T is not written as a JSON object. Fix: pass a struct", plain)
	}
	extra := 0
	for _, h := range hashes {
		extra += len(h.Key) + len(`,"":"0x0000000000000000"`)
	}
	out := make([]byte, 1, len(b)+extra)
	out[0] = '{'
	// encoding/json writes compact output with the struct tags' keys as
	// given, so a member is the bytes up to the next ',' or '}' outside
	// strings and nested values, and a hash member starts with "key":.
	for start := 1; start < len(b)-1; {
		end := memberEnd(b, start)
		if m := b[start:end]; !isHashMember(m, hashes) {
			if len(out) > 1 {
				out = append(out, ',')
			}
			out = append(out, m...)
		}
		start = end + 1
	}
	for _, h := range hashes {
		if len(out) > 1 {
			out = append(out, ',')
		}
		if out, err = appendKey(out, h.Key); err != nil {
			return nil, err
		}
		out = append(appendHex(append(out, ':', '"'), *h.Value), '"')
	}
	return append(out, '}'), nil
}

// appendKey appends key as encoding/json writes an object key.
func appendKey(out []byte, key string) ([]byte, error) {
	plain := true
	for _, c := range []byte(key) {
		plain = plain && (c == '_' || c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z')
	}
	if plain {
		return append(append(append(out, '"'), key...), '"'), nil
	}
	q, err := json.Marshal(key)
	return append(out, q...), err
}

// appendHex appends v as hexhash.Hex writes it: "0x" and 16 lowercase hex
// digits.
func appendHex(out []byte, v uint64) []byte {
	const digits = "0123456789abcdef"
	var buf [18]byte
	buf[0], buf[1] = '0', 'x'
	for i := len(buf) - 1; i >= 2; i-- {
		buf[i] = digits[v&15]
		v >>= 4
	}
	return append(out, buf[:]...)
}

// memberEnd returns the index of the ',' or '}' that ends the object
// member starting at b[start], in encoding/json's compact output.
func memberEnd(b []byte, start int) int {
	depth, inString := 0, false
	for i := start; i < len(b); i++ {
		c := b[i]
		switch {
		case inString && c == '\\':
			i++ // the escaped byte
		case c == '"':
			inString = !inString
		case inString:
		case c == '{' || c == '[':
			depth++
		case (c == '}' || c == ']') && depth > 0:
			depth--
		case (c == ',' || c == '}') && depth == 0:
			return i
		}
	}
	return len(b)
}

// isHashMember reports whether member m is "key": followed by a value for
// one of the hashes' keys.
func isHashMember(m []byte, hashes []Hash) bool {
	for _, h := range hashes {
		n := len(h.Key)
		if len(m) > n+2 && m[0] == '"' && string(m[1:1+n]) == h.Key && m[1+n] == '"' && m[2+n] == ':' {
			return true
		}
	}
	return false
}

// Unmarshal reads what Marshal writes into plain, a pointer to a struct of
// a type without an UnmarshalJSON method, and the hashes: each is a hex
// string or a JSON integer, matched to its key as encoding/json matches
// field names. On success plain and the hashes hold only what data gives
// (the rest is zero); on failure they are unchanged.
func Unmarshal(data []byte, plain any, hashes ...Hash) error {
	if _, ok := plain.(json.Unmarshaler); ok {
		return fmt.Errorf("hashjson: %T has an UnmarshalJSON method. Fix: pass a pointer converted to a type without methods", plain)
	}
	dst := reflect.ValueOf(plain)
	if dst.Kind() != reflect.Pointer || dst.IsNil() {
		return fmt.Errorf("hashjson: %T is not a non-nil pointer. Fix: pass a pointer to the struct to fill", plain)
	}
	fresh := reflect.New(dst.Type().Elem())
	values := make([]hexhash.Hex, len(hashes))
	ms, err := members(data)
	switch {
	case errors.Is(err, errNotObject):
		// encoding/json's own message for a value that is not an object,
		// and nothing for null (which leaves everything zero).
		if err := json.Unmarshal(data, fresh.Interface()); err != nil {
			return err
		}
	case err != nil:
		return err
	default:
		if err := decodeMembers(ms, fresh.Interface(), hashes, values); err != nil {
			return err
		}
	}
	// plain and the hashes may share memory (the hashes are plain's own
	// fields): plain first.
	dst.Elem().Set(fresh.Elem())
	for i, h := range hashes {
		*h.Value = uint64(values[i])
	}
	return nil
}

// decodeMembers decodes the hash members into values and the others into
// plain.
func decodeMembers(ms []member, plain any, hashes []Hash, values []hexhash.Hex) error {
	var rest []member
	for _, m := range ms {
		i := hashIndex(m.key, hashes)
		if i < 0 {
			rest = append(rest, m)
			continue
		}
		if err := json.Unmarshal(m.raw, &values[i]); err != nil {
			return err
		}
	}
	b, err := object(rest)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, plain)
}

// hashIndex returns the index of the hash whose key matches key exactly,
// else ignoring case (as encoding/json matches field names), or -1.
func hashIndex(key string, hashes []Hash) int {
	for _, eq := range []func(a, b string) bool{func(a, b string) bool { return a == b }, strings.EqualFold} {
		for i, h := range hashes {
			if eq(key, h.Key) {
				return i
			}
		}
	}
	return -1
}

var errNotObject = errors.New("hashjson: not a JSON object")

// members splits a JSON object into its members, in order, each value's
// bytes as given.
func members(data []byte) ([]member, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, errNotObject
	}
	var ms []member
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, err
		}
		ms = append(ms, member{key: key, raw: raw})
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("hashjson: data after the JSON object. Fix: give one JSON object")
	}
	return ms, nil
}

// object writes members as a compact JSON object, keys escaped as
// encoding/json escapes them.
func object(ms []member) ([]byte, error) {
	out := []byte{'{'}
	for i, m := range ms {
		if i > 0 {
			out = append(out, ',')
		}
		var err error
		if out, err = appendKey(out, m.key); err != nil {
			return nil, err
		}
		out = append(append(out, ':'), m.raw...)
	}
	return append(out, '}'), nil
}
