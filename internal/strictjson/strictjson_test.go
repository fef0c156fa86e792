package strictjson

import (
	"errors"
	"strings"
	"testing"

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
		{"trailing", `{"name":"a"} {}`, "", "trailing data"},
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

func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"name":"a","count":3}`))
	f.Add([]byte(`{"inner":{"bytes":7}} x`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var s sample
		if err := Decode("fuzz", data, &s); err != nil {
			assert.Contains(t, err.Error(), "Fix:")
		}
	})
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
