package hashjson

import (
	"encoding/json"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuplan/gpuplan/internal/hexhash"
)

type sample struct {
	Name   string         `json:"name"`
	Hash   uint64         `json:"hash"`
	Count  int            `json:"count"`
	Key    uint64         `json:"key"`
	Note   string         `json:"note,omitempty"`
	Nested map[string]any `json:"nested,omitempty"`
	Tags   []string       `json:"tags,omitempty"`
}

func (s sample) MarshalJSON() ([]byte, error) {
	type plain sample
	return Marshal(plain(s), sampleHashes(&s)...)
}

func (s *sample) UnmarshalJSON(b []byte) error {
	type plain sample
	return Unmarshal(b, (*plain)(s), sampleHashes(s)...)
}

func sampleHashes(s *sample) []Hash {
	return []Hash{{Key: "hash", Value: &s.Hash}, {Key: "key", Value: &s.Key}}
}

// wrapped is what the plans wrote before this package: plain embedded,
// the hashes shadowing its fields. Marshal must write the same bytes.
func wrapped(s sample) ([]byte, error) {
	type plain sample
	return json.Marshal(struct {
		plain
		Hash hexhash.Hex `json:"hash"`
		Key  hexhash.Hex `json:"key"`
	}{plain(s), hexhash.Hex(s.Hash), hexhash.Hex(s.Key)})
}

func TestMarshal(t *testing.T) {
	tests := []struct {
		name string
		v    sample
		want string
	}{
		{"zero", sample{}, `{"name":"","count":0,"hash":"0x0000000000000000","key":"0x0000000000000000"}`},
		{"above 2^53", sample{Name: "a<b", Hash: 18446744073709377289, Count: 3, Key: 1<<53 + 1, Note: "n"},
			`{"name":"a\u003cb","count":3,"note":"n","hash":"0xfffffffffffd5709","key":"0x0020000000000001"}`},
		{"strings, nesting and a nested hash key", sample{Name: `q"},"hash":1,{\`, Hash: 5, Nested: map[string]any{"hash": 7.0, "x": []any{"}", map[string]any{"key": "]"}}}, Tags: []string{",", `\"`}},
			`{"name":"q\"},\"hash\":1,{\\","count":0,"nested":{"hash":7,"x":["}",{"key":"]"}]},"tags":[",","\\\""],"hash":"0x0000000000000005","key":"0x0000000000000000"}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b, err := json.Marshal(tc.v)
			require.NoError(t, err)
			assert.Equal(t, tc.want, string(b))
			old, err := wrapped(tc.v)
			require.NoError(t, err)
			assert.Equal(t, string(old), string(b), "the bytes of the embedding wrapper")
			var back sample
			require.NoError(t, json.Unmarshal(b, &back))
			assert.Equal(t, tc.v, back)
		})
	}
}

func TestUnmarshal(t *testing.T) {
	tests := []struct {
		name, in string
		want     sample
		err      string
	}{
		{"integers", `{"hash":2748,"key":7,"count":1}`, sample{Hash: 0xabc, Key: 7, Count: 1}, ""},
		{"keys ignoring case", `{"HASH":"0xabc","Key":"0x7"}`, sample{Hash: 0xabc, Key: 7}, ""},
		{"last of a repeated key", `{"hash":1,"hash":"0x2"}`, sample{Hash: 2}, ""},
		{"null hash", `{"hash":null,"name":"x"}`, sample{Name: "x"}, ""},
		{"null", `null`, sample{}, ""},
		{"empty object", `{}`, sample{}, ""},
		{"bad hash", `{"hash":"0xzz"}`, sample{}, `hash "0xzz" is not 0x and 1 to 16 hex digits`},
		{"negative hash", `{"key":-1}`, sample{}, "hash -1 is not an integer"},
		{"bad field", `{"count":"many"}`, sample{}, "cannot unmarshal string"},
		{"not an object", `[1]`, sample{}, "cannot unmarshal array"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := sample{Name: "old", Hash: 9, Key: 9, Count: 9}
			err := json.Unmarshal([]byte(tc.in), &s)
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				assert.Equal(t, sample{Name: "old", Hash: 9, Key: 9, Count: 9}, s, "unchanged on failure")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, s, "what the input gives, the rest zero")
		})
	}
}

func TestMisuse(t *testing.T) {
	var s sample
	_, err := Marshal(s)
	assert.ErrorContains(t, err, "has a MarshalJSON method. Fix:")
	assert.ErrorContains(t, Unmarshal([]byte(`{}`), &s), "has an UnmarshalJSON method. Fix:")
	type plain sample
	assert.ErrorContains(t, Unmarshal([]byte(`{}`), plain{}), "not a non-nil pointer. Fix:")
	var p plain
	assert.ErrorContains(t, Unmarshal([]byte(`{} {}`), &p), "data after the JSON object. Fix:")
	assert.Error(t, Unmarshal([]byte(`{"hash":`), &p))
}

// FuzzMarshal holds Marshal to the bytes of the embedding wrapper, and
// Unmarshal to reading them back, for any strings.
func FuzzMarshal(f *testing.F) {
	f.Add("a", "b", uint64(1), uint64(2))
	f.Add(`"hash":1,`, `}{\`, uint64(1<<63), uint64(0))
	f.Fuzz(func(t *testing.T, name, tag string, hash, key uint64) {
		s := sample{Name: name, Hash: hash, Key: key, Tags: []string{tag}, Nested: map[string]any{tag: name, "hash": tag}}
		b, err := json.Marshal(s)
		require.NoError(t, err)
		old, err := wrapped(s)
		require.NoError(t, err)
		require.Equal(t, string(old), string(b))
		var back sample
		require.NoError(t, json.Unmarshal(b, &back))
		assert.Equal(t, hash, back.Hash)
		assert.Equal(t, key, back.Key)
		if utf8.ValidString(tag) {
			assert.Equal(t, []string{tag}, back.Tags)
		}
	})
}

// TestAppendHex holds the hex form to hexhash's, and a key with characters
// encoding/json escapes to its quoting.
func TestAppendHex(t *testing.T) {
	for _, v := range []uint64{0, 7, 0xabc, 1<<53 + 1, 18446744073709377289, 1<<64 - 1} {
		want, err := hexhash.Hex(v).MarshalText()
		require.NoError(t, err)
		assert.Equal(t, string(want), string(appendHex(nil, v)))
	}
	for _, key := range []string{"graph_layout_hash", "a<b&c", `q"`, "Key-9"} {
		want, err := json.Marshal(key)
		require.NoError(t, err)
		got, err := appendKey(nil, key)
		require.NoError(t, err)
		assert.Equal(t, string(want), string(got))
	}
}
