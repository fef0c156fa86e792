package strictjson

import (
	"reflect"
	"strings"
)

// class says how the walk checks a value of one Go type.
type class uint8

const (
	classScalar class = iota
	classText         // decoded by UnmarshalText: a JSON string
	classCustom       // decoded by UnmarshalJSON, or base64 bytes
	classPointer
	classAny
	classStruct
	classMap
	classSlice
	classArray
)

// typeInfo is what the walk needs to know about a Go type, computed once
// per type and decode.
type typeInfo struct {
	t        reflect.Type
	class    class
	nullable bool
	elem     *typeInfo // pointer, slice, array and map element
	fields   []field   // struct fields in declaration order
	byName   map[string]int
}

// field is one JSON-visible field of a struct.
type field struct {
	name      string
	info      *typeInfo
	omitempty bool
}

func (w *walker) info(t reflect.Type) *typeInfo {
	if ti, ok := w.types[t]; ok {
		return ti
	}
	ti := &typeInfo{t: t}
	w.types[t] = ti // before the elements, so recursive types terminate
	switch k := t.Kind(); {
	case reflect.PointerTo(t).Implements(jsonUnmarshaler):
		ti.class = classCustom
	case k != reflect.Pointer && reflect.PointerTo(t).Implements(textUnmarshaler):
		ti.class = classText
	case k == reflect.Pointer:
		ti.class, ti.elem = classPointer, w.info(t.Elem())
	case k == reflect.Interface:
		ti.class = classAny
	case k == reflect.Struct:
		ti.class, ti.byName = classStruct, map[string]int{}
		w.collectFields(t, ti, 0)
	case k == reflect.Map:
		ti.class, ti.elem = classMap, w.info(t.Elem())
	case k == reflect.Slice && t.Elem().Kind() == reflect.Uint8:
		ti.class = classCustom
	case k == reflect.Slice:
		ti.class, ti.elem = classSlice, w.info(t.Elem())
	case k == reflect.Array:
		ti.class, ti.elem = classArray, w.info(t.Elem())
	}
	switch t.Kind() {
	case reflect.Pointer, reflect.Interface, reflect.Slice, reflect.Map:
		ti.nullable = true
	}
	return ti
}

// collectFields adds t's fields to ti, flattening embedded structs as
// encoding/json does; a name given twice keeps the shallower field.
func (w *walker) collectFields(t reflect.Type, ti *typeInfo, depth int) {
	if depth > 16 {
		return
	}
	for i := range t.NumField() {
		sf := t.Field(i)
		tag := sf.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if sf.Anonymous && name == "" {
			inner := sf.Type
			if inner.Kind() == reflect.Pointer {
				inner = inner.Elem()
			}
			if inner.Kind() == reflect.Struct {
				w.collectFields(inner, ti, depth+1)
				continue
			}
		}
		if !sf.IsExported() {
			continue
		}
		if name == "" {
			name = sf.Name
		}
		if _, dup := ti.byName[name]; dup {
			continue
		}
		ti.byName[name] = len(ti.fields)
		ti.fields = append(ti.fields, field{name: name, info: w.info(sf.Type), omitempty: strings.Contains(","+opts+",", ",omitempty,")})
	}
}

// caseMatch returns the field whose name equals key only when case is
// ignored, as encoding/json would match it.
func (ti *typeInfo) caseMatch(key string) (string, bool) {
	for _, f := range ti.fields {
		if strings.EqualFold(f.name, key) {
			return f.name, true
		}
	}
	return "", false
}
