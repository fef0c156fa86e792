package strictjson

import (
	"fmt"
)

// Field states in one object of a struct type.
const (
	absent uint8 = iota
	givenNull
	given
)

// key reads an object key and the colon after it.
func (w *walker) key() ([]byte, error) {
	w.skipSpace()
	k, err := w.str()
	if err != nil {
		return nil, err
	}
	if err := w.expect(':', "':' after an object key"); err != nil {
		return nil, err
	}
	return k, nil
}

func duplicateErr(w *walker, key string) *Error {
	return w.errAt(fmt.Sprintf("key %q appears twice in one object", key),
		fmt.Sprintf("keep one %q: a repeated key would silently replace the first value", key))
}

// object checks an object against struct type ti: every key a field
// spelled exactly, no key twice and, with Options.Required, every field
// without omitempty present and not null.
func (w *walker) object(ti *typeInfo) error {
	if c := w.peek(); c != '{' {
		return w.typeErr(kindOf(c), ti.t)
	}
	if err := w.enter(); err != nil {
		return err
	}
	w.pos++
	st := newFieldStates(len(ti.fields))
	for more, err := w.first('}'); more || err != nil; more, err = w.next('}') {
		if err != nil {
			return err
		}
		k, err := w.key()
		if err != nil {
			return err
		}
		idx, ok := ti.byName[string(k)]
		if !ok {
			w.pushKey(string(k))
			return w.unknownField(ti, string(k))
		}
		f := ti.fields[idx]
		w.pushKey(f.name)
		if st.get(idx) != absent {
			return duplicateErr(w, f.name)
		}
		s, err := w.member(f)
		if err != nil {
			return err
		}
		w.pop()
		st.set(idx, s)
		if w.opts.Present != nil && w.depth == 1 && s == given {
			w.opts.Present[f.name] = true
		}
	}
	w.depth--
	return w.requiredFields(ti, &st)
}

// fieldStates holds the state of each field of one object: two bits per
// field in a word for up to 32 fields, a slice beyond.
type fieldStates struct {
	bits uint64
	wide []uint8
}

func newFieldStates(n int) fieldStates {
	if n <= 32 {
		return fieldStates{}
	}
	return fieldStates{wide: make([]uint8, n)}
}

func (s *fieldStates) get(i int) uint8 {
	if s.wide != nil {
		return s.wide[i]
	}
	return uint8(s.bits>>(2*i)) & 3
}

func (s *fieldStates) set(i int, v uint8) {
	if s.wide != nil {
		s.wide[i] = v
		return
	}
	s.bits = s.bits&^(3<<(2*i)) | uint64(v)<<(2*i)
}

// member checks one field's value and returns its state.
func (w *walker) member(f field) (uint8, error) {
	if w.peek() != 'n' {
		return given, w.value(f.info)
	}
	switch {
	case w.opts.Required && !f.omitempty:
		if err := w.literal("null"); err != nil {
			return absent, err
		}
		w.miss(Required(w.source, w.field(), fmt.Sprintf("give %q a non-null value", w.field())))
		return givenNull, nil
	case (f.omitempty || w.opts.NullIsAbsent) && !f.info.nullable:
		// null for an optional field means "not given".
		return givenNull, w.literal("null")
	}
	return givenNull, w.value(f.info)
}

func (w *walker) unknownField(ti *typeInfo, k string) error {
	if name, ok := ti.caseMatch(k); ok {
		return w.errAt(fmt.Sprintf("key %q matches field %q only when case is ignored", k, name),
			fmt.Sprintf("spell the key exactly %q", name))
	}
	field := w.field()
	if k == "" {
		field = "(empty name)"
		if parent := pathString(w.stack[:len(w.stack)-1]); parent != "" {
			field = parent + ".(empty name)"
		}
	}
	return &Error{Source: w.source, Field: field, Msg: "unknown field",
		Fix: fmt.Sprintf("remove %q or check its spelling against the documented fields", k)}
}

func (w *walker) requiredFields(ti *typeInfo, st *fieldStates) error {
	if !w.opts.Required {
		return nil
	}
	for i, f := range ti.fields {
		if st.get(i) != given && !f.omitempty {
			w.pushKey(f.name)
			name := w.field()
			w.pop()
			w.miss(Required(w.source, name, fmt.Sprintf("add %q (spelled exactly so) with a non-null value", name)))
			return nil
		}
	}
	return nil
}

// miss records a missing required value. The walk goes on, so a syntax
// error or trailing data later in the input is reported first, as a
// malformed document is the more basic problem.
func (w *walker) miss(err error) {
	if w.missing == nil {
		w.missing = err
	}
}

// mapValue checks an object decoded into a map: no key twice, every
// value of the map's element type.
func (w *walker) mapValue(ti *typeInfo) error {
	if c := w.peek(); c != '{' {
		return w.typeErr(kindOf(c), ti.t)
	}
	return w.members(func() error { return w.element(ti.elem) })
}

// any checks any JSON value: the syntax, and no object with a key twice.
func (w *walker) any() error {
	switch c := w.peek(); c {
	case '{':
		return w.members(w.any)
	case '[':
		if err := w.enter(); err != nil {
			return err
		}
		w.pos++
		n := 0
		for more, err := w.first(']'); more || err != nil; more, err = w.next(']') {
			if err != nil {
				return err
			}
			w.pushIndex(n)
			if err := w.any(); err != nil {
				return err
			}
			w.pop()
			n++
		}
		w.depth--
		return nil
	case '"':
		_, err := w.str()
		return err
	case 't':
		return w.literal("true")
	case 'f':
		return w.literal("false")
	case 'n':
		return w.literal("null")
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		_, err := w.number()
		return err
	}
	return w.unexpected("a JSON value")
}

// members walks the members of an object (the '{' is next), checking that
// no key repeats and each value with fn.
func (w *walker) members(fn func() error) error {
	if err := w.enter(); err != nil {
		return err
	}
	w.pos++
	var seen map[string]struct{}
	for more, err := w.first('}'); more || err != nil; more, err = w.next('}') {
		if err != nil {
			return err
		}
		k, err := w.key()
		if err != nil {
			return err
		}
		key := string(k)
		w.pushKey(key)
		if seen == nil {
			seen = map[string]struct{}{}
		}
		if _, dup := seen[key]; dup {
			return duplicateErr(w, key)
		}
		seen[key] = struct{}{}
		if err := fn(); err != nil {
			return err
		}
		w.pop()
	}
	w.depth--
	return nil
}
