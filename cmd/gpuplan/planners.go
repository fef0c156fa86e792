package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"strings"
	"text/tabwriter"

	"github.com/gpuplan/gpuplan/internal/strictjson"
)

// The planner commands (fuse, queue, compact, batch, diagnostics, passes)
// share one shape: `gpuplan <name> [--json] <input.json|->`. The input is one
// strict JSON object; every field is required unless its tag says omitempty,
// and a null counts as missing.

// plannerInput parses the flags of a planner command and reads and decodes
// its one input argument into v. It returns the parsed flags, so the caller
// can honour --json, and the input's name for error messages.
func (e *env) plannerInput(name, about string, args []string, v any) (*flags, string, error) {
	f := e.newFlags(name, name+" [--json] <input.json|->", about)
	if err := f.parse(args); err != nil {
		return nil, "", err
	}
	if f.NArg() != 1 {
		return nil, "", usagef("gpuplan %s: want one input file (or - for standard input), got %d arguments. Fix: pass one JSON input file or - ('gpuplan %s --help' shows the input format)", name, f.NArg(), name)
	}
	data, source, err := e.readInput(f.Arg(0))
	if err != nil {
		return nil, "", err
	}
	if err := decodePlannerInput(source, data, v); err != nil {
		return nil, "", err
	}
	return f, source, nil
}

// decodePlannerInput decodes data strictly into v (a pointer to a struct) and
// then checks that every required field is present and not null.
func decodePlannerInput(source string, data []byte, v any) error {
	// A value rejected by an UnmarshalText method (host_sync, say) keeps its
	// own fix: strictjson adds no second one.
	if err := strictjson.Decode(source, data, v); err != nil {
		return err
	}
	var raw any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&raw); err != nil {
		return &strictjson.Error{Source: source, Msg: err.Error(), Fix: "check the JSON syntax"}
	}
	if _, ok := raw.(map[string]any); !ok {
		return &strictjson.Error{Source: source, Field: "(top level)", Msg: "the input is not a JSON object", Fix: "wrap the input in { ... } as the command's --help shows"}
	}
	return checkRequired(source, "", reflect.TypeOf(v).Elem(), raw)
}

// checkRequired walks the generic JSON value raw alongside the Go type t and
// reports the first required struct field that is absent or null.
func checkRequired(source, path string, t reflect.Type, raw any) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct:
		obj, ok := raw.(map[string]any)
		if !ok {
			return nil // a type mismatch was already reported by Decode
		}
		for i := range t.NumField() {
			sf := t.Field(i)
			if !sf.IsExported() {
				continue
			}
			name, opts, _ := strings.Cut(sf.Tag.Get("json"), ",")
			if name == "-" {
				continue
			}
			if name == "" {
				name = sf.Name
			}
			field := name
			if path != "" {
				field = path + "." + name
			}
			val, present := obj[name]
			if !present || val == nil {
				if strings.Contains(","+opts+",", ",omitempty,") {
					continue
				}
				return strictjson.Required(source, field, fmt.Sprintf("add %q (spelled exactly so) with a non-null value", field))
			}
			if err := checkRequired(source, field, sf.Type, val); err != nil {
				return err
			}
		}
	case reflect.Slice, reflect.Array:
		arr, ok := raw.([]any)
		if !ok {
			return nil
		}
		for i, el := range arr {
			if el == nil {
				return &strictjson.Error{Source: source, Field: fmt.Sprintf("%s[%d]", path, i), Msg: "element is null", Fix: "give every list element a value"}
			}
			if err := checkRequired(source, fmt.Sprintf("%s[%d]", path, i), t.Elem(), el); err != nil {
				return err
			}
		}
	}
	return nil
}

// writePlan writes plan as JSON when f.json is set, and otherwise runs text.
func writePlan(w io.Writer, f *flags, plan any, text func(tw *tabwriter.Writer)) error {
	if f.json {
		return writeJSON(w, plan)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	text(tw)
	return tw.Flush()
}

// bps formats basis points as a percentage, for example 2500 -> "25.00%".
func bps(v uint64) string {
	return fmt.Sprintf("%d.%02d%%", v/100, v%100)
}

// joinUints formats ids as "1, 2, 3".
func joinUints[T ~uint32 | ~uint64](ids []T) string {
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = fmt.Sprint(id)
	}
	return strings.Join(parts, ", ")
}
