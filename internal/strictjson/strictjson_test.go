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
