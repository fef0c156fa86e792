package hexhash

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestHexRoundTrip(t *testing.T) {
	// 18446744073709377289 is the example: as a JSON number, jq
	// prints it as ...377000.
	for _, v := range []uint64{0, 7, 0xabc, 1 << 53, 1<<53 + 1, 18446744073709377289, math.MaxUint64} {
		b, err := json.Marshal(Hex(v))
		require.NoError(t, err)
		assert.Len(t, string(b), 20, "%s", b)
		var back Hex
		require.NoError(t, json.Unmarshal(b, &back))
		assert.Equal(t, Hex(v), back)
		// A double cannot hold every value; the string can.
		var f any
		require.NoError(t, json.Unmarshal(b, &f))
		assert.IsType(t, "", f)
	}
	b, _ := json.Marshal(struct {
		H Hex `json:"h"`
	}{0xabc})
	assert.JSONEq(t, `{"h":"0x0000000000000abc"}`, string(b))
}

func TestHexUnmarshal(t *testing.T) {
	var h Hex
	require.NoError(t, json.Unmarshal([]byte(`2748`), &h))
	assert.Equal(t, Hex(0xabc), h)
	require.NoError(t, json.Unmarshal([]byte(`"0xABC"`), &h))
	assert.Equal(t, Hex(0xabc), h)
	for _, bad := range []string{`"abc"`, `"0x"`, `"0x12345678901234567"`, `"0xzz"`, `-1`, `1.5`, `true`} {
		err := json.Unmarshal([]byte(bad), &h)
		require.Error(t, err, bad)
		assert.Contains(t, err.Error(), "Fix:", bad)
	}
}
