package strictjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/gpuplan/gpuplan/internal/memcheck"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type sample struct {
	Name  string `json:"name"`
	Count uint64 `json:"count"`
	Inner struct {
		Bytes uint32 `json:"bytes"`
	} `json:"inner"`
}

func TestDecode(t *testing.T) {
	tests := []struct {
		name, in, field, contains string
	}{
		{"ok", `{"name":"a","count":3}`, "", ""},
		{"unknown", `{"name":"a","cout":3}`, "cout", "unknown field"},
		{"unknown empty name", `{"":[]}`, "(empty name)", "unknown field"},
		{"trailing", `{"name":"a"} {}`, "", "trailing data after the JSON value at line 1, column 14 (byte 13)"},
		{"trailing NUL", "{\"name\":\"a\"}\x00", "", "trailing data after the JSON value at line 1, column 13 (byte 12)"},
		{"trailing on a later line", "{\"name\":\"a\"}\n\n  x", "", "at line 3, column 3 (byte 16)"},
		{"type", `{"count":"x"}`, "count", "cannot use"},
		{"nested type", `{"inner":{"bytes":-1}}`, "inner.bytes", "cannot use"},
		{"empty", `  `, "", "empty"},
		{"truncated", `{"name":`, "", "ends early"},
		{"syntax", `{"name" 1}`, "", "malformed"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var s sample
			err := Decode("in.json", []byte(tc.in), &s)
			if tc.contains == "" {
				require.NoError(t, err)
				assert.Equal(t, uint64(3), s.Count)
				return
			}
			var de *Error
			require.ErrorAs(t, err, &de)
			assert.Equal(t, tc.field, de.Field)
			assert.Contains(t, err.Error(), tc.contains)
			assert.Contains(t, err.Error(), "Fix:")
			assert.Contains(t, err.Error(), "in.json")
		})
	}
}

func TestDecodeTypeMismatchNamesJSONForm(t *testing.T) {
	type withText struct {
		Mode  picky    `json:"mode"`
		Ratio float64  `json:"ratio"`
		Flag  bool     `json:"flag"`
		Delta int8     `json:"delta"`
		List  []uint16 `json:"list"`
	}
	tests := []struct {
		in, want string
	}{
		{`[]`, `in.json: field "(top level)": cannot use JSON array here: want a JSON object. Fix: make the whole input a JSON object`},
		{` null `, `in.json: field "(top level)": the input is null, not a JSON object. Fix: make the whole input a JSON object`},
		{`{"count":-1}`, `in.json: field "count": cannot use JSON number -1 here: want an integer in 0..18446744073709551615. Fix: give count an integer in 0..18446744073709551615`},
		{`{"inner":{"bytes":4294967296}}`, `in.json: field "inner.bytes": cannot use JSON number 4294967296 here: want an integer in 0..4294967295. Fix: give inner.bytes an integer in 0..4294967295`},
		{`{"inner":[]}`, `in.json: field "inner": cannot use JSON array here: want a JSON object. Fix: give inner a JSON object`},
		{`{"name":7}`, `in.json: field "name": cannot use JSON number here: want a string. Fix: give name a string`},
	}
	for _, tc := range tests {
		var s sample
		err := Decode("in.json", []byte(tc.in), &s)
		require.Error(t, err, tc.in)
		assert.Equal(t, tc.want, err.Error(), tc.in)
	}
	other := []struct {
		in, want string
	}{
		{`{"mode":3}`, "want a string"},
		{`{"ratio":"NaN"}`, "want a number"},
		{`{"flag":1}`, "want true or false"},
		{`{"delta":200}`, "want an integer in -128..127"},
		{`{"list":{}}`, "want a JSON array"},
		{`{"list":[-1]}`, "want an integer in 0..65535"},
	}
	for _, tc := range other {
		var v withText
		err := Decode("in.json", []byte(tc.in), &v)
		require.Error(t, err, tc.in)
		assert.Contains(t, err.Error(), tc.want, tc.in)
		assert.Equal(t, 1, strings.Count(err.Error(), "Fix:"), err.Error())
	}
}

// FuzzDecode checks every input against encoding/json: what Decode
// accepts the standard decoder accepts with the same result, whatever it
// rejects for syntax Decode rejects too, and memory stays proportional to
// the input.
func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"name":"a","count":3}`))
	f.Add([]byte(`{"inner":{"bytes":7}} x`))
	f.Add([]byte(`{"name":"a","name":"b"}`))
	f.Add([]byte(`{"Name":"\u00e9\ud83d\ude00","list":[1,2],"grid":[1,2,3],"m":{"a":null}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var got, want wide
		var err error
		memcheck.Check(t, memcheck.Bound{Base: 64 << 10, PerByte: 64}, len(data), func() {
			err = Decode("fuzz", data, &got)
		})
		if !json.Valid(data) {
			require.Error(t, err, "Decode accepted malformed JSON %q", data)
		}
		if err != nil {
			var de *Error
			require.ErrorAs(t, err, &de)
			assert.Contains(t, err.Error(), "Fix:")
			return
		}
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.DisallowUnknownFields()
		require.NoError(t, dec.Decode(&want), "Decode accepted what encoding/json rejects: %q", data)
		assert.Equal(t, want, got)
	})
}

// wide has a field of every kind the walk handles.
type wide struct {
	Name  string             `json:"name"`
	Count uint64             `json:"count"`
	Delta int8               `json:"delta"`
	Ratio float32            `json:"ratio"`
	Flag  *bool              `json:"flag"`
	List  []uint16           `json:"list"`
	Grid  [3]int             `json:"grid"`
	M     map[string]*int    `json:"m"`
	Any   any                `json:"any"`
	Mode  picky              `json:"mode"`
	Inner *struct{ X int }   `json:"inner"`
	Raw   json.RawMessage    `json:"raw"`
	Deep  [][]map[string]int `json:"deep"`
}

type picky int

func (p *picky) UnmarshalText(b []byte) error {
	if string(b) != "ok" {
		return errors.New("mode must be \"ok\". Fix: set mode to \"ok\"")
	}
	return nil
}

func TestDecodeCustomUnmarshalerFixOnce(t *testing.T) {
	var v struct {
		Mode picky `json:"mode"`
	}
	err := Decode("in.json", []byte(`{"mode":"bad"}`), &v)
	require.Error(t, err)
	assert.Equal(t, 1, strings.Count(err.Error(), "Fix:"), err.Error())
}

func TestDecodeRefusesWhatEncodingJSONLetsThrough(t *testing.T) {
	type claim struct {
		Name string `json:"name"`
	}
	type doc struct {
		Claims []claim   `json:"claims"`
		Grid   [3]uint32 `json:"grid"`
		Cuts   []int     `json:"cuts"`
		Opt    string    `json:"opt,omitempty"`
		Stages []struct {
			ID uint32 `json:"id"`
		} `json:"stages"`
		Limits map[string]int `json:"limits"`
	}
	tests := []struct {
		name, in, field, contains string
	}{
		{"duplicate key drops the claims", `{"claims":[{"name":"x"}],"claims":[]}`, "claims", `key "claims" appears twice`},
		{"duplicate nested key", `{"claims":[{"name":"x","name":"y"}]}`, "claims[0].name", "appears twice"},
		{"duplicate map key", `{"limits":{"a":1,"a":2}}`, "limits.a", "appears twice"},
		{"case-only key", `{"Claims":[]}`, "Claims", `matches field "claims" only when case is ignored`},
		{"case-only duplicate", `{"claims":[],"CLAIMS":[{"name":"x"}]}`, "CLAIMS", "only when case is ignored"},
		{"array too long", `{"grid":[1,2,3,4]}`, "grid[3]", "more than 3 elements"},
		{"array too short", `{"grid":[1,2]}`, "grid", "has 2 elements, want 3"},
		{"null element", `{"cuts":[1,null]}`, "cuts[1]", "null is not an integer"},
		{"null scalar", `{"grid":null}`, "grid", "null is not a JSON array"},
		{"type in array names the index", `{"stages":[{"id":1},{"id":2},{"id":3},{"id":"x"}]}`, "stages[3].id", "cannot use JSON string"},
		{"unknown in array names the index", `{"stages":[{"id":1},{"di":2}]}`, "stages[1].di", "unknown field"},
		{"odd key quoted in path", `{"limits":{"a b":"x"}}`, `limits["a b"]`, "cannot use JSON string"},
		{"deep nesting", `{"limits":{"a":` + strings.Repeat("[", maxDepth+1), "limits.a", "cannot use JSON array"},
		{"deep nesting of any", strings.Repeat("[", maxDepth+1), "(top level)", "cannot use JSON array"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var d doc
			err := Decode("in.json", []byte(tc.in), &d)
			var de *Error
			require.ErrorAs(t, err, &de)
			assert.Equal(t, tc.field, de.Field)
			assert.Contains(t, err.Error(), tc.contains)
			assert.Equal(t, 1, strings.Count(err.Error(), "Fix:"), err.Error())
		})
	}
	var d doc
	require.NoError(t, Decode("in.json", []byte(`{"opt":null,"grid":[1,2,3],"cuts":null}`), &d))
	assert.Equal(t, [3]uint32{1, 2, 3}, d.Grid)
}

func TestDecodeNestingLimit(t *testing.T) {
	var v any
	err := Decode("in.json", []byte(strings.Repeat("[", maxDepth+1)), &v)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "nest deeper than 10000 levels")
	require.NoError(t, Decode("in.json", []byte(strings.Repeat("[", 100)+strings.Repeat("]", 100)), &v))
}

func TestDecodeSyntaxErrorsNameLineAndColumn(t *testing.T) {
	tests := []struct{ in, want string }{
		{"{\n  \"name\": 1,\n  x\n}", "line 3, column 3"},
		{`{"name":"a\q"}`, `'q' is not a valid escape`},
		{"{\"name\":\"a\x01\"}", "control character 0x01"},
		{`{"count":01}`, "found '1' where"},
		{`{"count":1.}`, "digit after the decimal point"},
		{`{"count":-}`, "where a digit was expected"},
		{`{"name":"\u12"}`, "four hex digits"},
		{`[1,]`, "where a JSON value was expected"},
		{`{"name":tru}`, "where a JSON value was expected"},
	}
	for _, tc := range tests {
		var v any
		err := Decode("in.json", []byte(tc.in), &v)
		require.Error(t, err, tc.in)
		assert.Contains(t, err.Error(), tc.want, tc.in)
		assert.Contains(t, err.Error(), "Fix:", tc.in)
	}
}

func TestDecodeWithRequired(t *testing.T) {
	type inner struct {
		A *uint32 `json:"a"`
		B uint32  `json:"b,omitempty"`
	}
	type doc struct {
		Items []inner `json:"items"`
		Note  string  `json:"note,omitempty"`
	}
	tests := []struct{ in, field string }{
		{`{}`, "items"},
		{`{"items":null}`, "items"},
		{`{"items":[{"a":1},{"b":2}]}`, "items[1].a"},
		{`{"items":[{"a":null}]}`, "items[0].a"},
		{`{"items":[null]}`, "items[0]"},
	}
	for _, tc := range tests {
		var d doc
		err := DecodeWith("in.json", []byte(tc.in), &d, Options{Required: true})
		var de *Error
		require.ErrorAs(t, err, &de, tc.in)
		assert.Equal(t, tc.field, de.Field, tc.in)
	}
	var d doc
	require.NoError(t, DecodeWith("in.json", []byte(`{"items":[{"a":1,"b":null}],"note":null}`), &d, Options{Required: true}))
	assert.Equal(t, uint32(1), *d.Items[0].A)
}

func TestDecodeWithPresent(t *testing.T) {
	var d struct {
		A int `json:"a"`
		B int `json:"b"`
		C *struct {
			A int `json:"a"`
		} `json:"c"`
	}
	present := map[string]bool{}
	require.NoError(t, DecodeWith("in.json", []byte(`{"a":1,"c":{"a":2},"b":2}`), &d, Options{Present: present}))
	assert.Equal(t, map[string]bool{"a": true, "b": true, "c": true}, present)
}

func TestDecodeMemoryIsProportionalToTheInput(t *testing.T) {
	type row struct {
		ID    uint32 `json:"id"`
		Bytes uint64 `json:"bytes"`
	}
	var b strings.Builder
	b.WriteString(`{"rows":[`)
	for i := range 100000 {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"id":7,"bytes":12345}`)
	}
	b.WriteString(`]}`)
	data := []byte(b.String())
	var doc struct {
		Rows []row `json:"rows"`
	}
	// The decoded rows take 16 bytes each against 22 input bytes; the
	// walk's per-object state adds garbage of a few bytes per object.
	memcheck.Check(t, memcheck.Bound{Base: 1 << 20, PerByte: 8}, len(data), func() {
		require.NoError(t, Decode("in.json", data, &doc))
	})
	assert.Len(t, doc.Rows, 100000)
}

func BenchmarkDecode(b *testing.B) {
	type row struct {
		ID    uint32 `json:"id"`
		Bytes uint64 `json:"bytes"`
	}
	for _, n := range []int{1000, 1000000} {
		var sb strings.Builder
		sb.WriteString(`{"rows":[`)
		for i := range n {
			if i > 0 {
				sb.WriteByte(',')
			}
			sb.WriteString(`{"id":7,"bytes":12345}`)
		}
		sb.WriteString(`]}`)
		data := []byte(sb.String())
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				var doc struct {
					Rows []row `json:"rows"`
				}
				if err := Decode("in.json", data, &doc); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
