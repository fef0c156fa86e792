package rendezvous

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuplan/gpuplan/internal/memcheck"
)

func TestHelloRoundTrip(t *testing.T) {
	for _, h := range []hello{{1, 2, ""}, {7, 8, key}, {1<<16 - 1, 1 << 16, strings.Repeat("k", MaxKeyLen)}} {
		b := appendHello(nil, h)
		assert.Len(t, b, helloHeaderLen+len(h.key))
		got, err := parseHello(b)
		require.NoError(t, err)
		assert.Equal(t, h, got)
	}
}

func TestHelloParseErrors(t *testing.T) {
	valid := appendHello(nil, hello{rank: 1, world: 2, key: "ab"})
	cases := []struct {
		name   string
		data   []byte
		msg    string
		closed bool
	}{
		{"empty", nil, "the peer closed the connection before the hello was complete", true},
		{"short header", valid[:10], "before the hello was complete", true},
		{"short key", valid[:len(valid)-1], "before the hello's device key was complete", true},
		{"wrong magic", append([]byte("XXXX"), valid[4:]...), `does not start with "GPRV" (it starts with "XXXX")`, false},
		{"wrong version", append(append([]byte(Magic), 0, 2), valid[6:]...), "version 2, this process version 1", false},
		{"oversized key", rawHello(Magic, Version, 1, 2, 1<<31, ""), "the hello's device key is 2147483648 bytes, more than the 256 allowed", false},
		{"trailing bytes", append(append([]byte(nil), valid...), 0), "the hello is followed by 1 more bytes", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseHello(tc.data)
			var we *wireError
			require.ErrorAs(t, err, &we)
			assert.Contains(t, err.Error(), tc.msg)
			assert.Equal(t, tc.closed, we.closed)
		})
	}
}

// endless reads as an unending stream of zeros.
type endless struct{}

func (endless) Read(p []byte) (int, error) { clear(p); return len(p), nil }

// TestReadersAllocateWithinTheirBounds: a length claimed by a peer never
// decides an allocation before it is checked, even when the peer would
// send that many bytes.
func TestReadersAllocateWithinTheirBounds(t *testing.T) {
	for _, n := range []uint32{MaxKeyLen, MaxKeyLen + 1, 1 << 20, 1<<32 - 1} {
		hdr := rawHello(Magic, Version, 1, 2, n, "")
		memcheck.Check(t, memcheck.Bound{Base: 16 << 10}, 0, func() {
			_, _ = readHello(io.MultiReader(bytes.NewReader(hdr), endless{}))
		})
		ans := binary.BigEndian.AppendUint32([]byte("GPRV\x00\x01\x01"), n)
		memcheck.Check(t, memcheck.Bound{Base: 16 << 10}, 0, func() {
			_, _, _, _ = readAnswer(io.MultiReader(bytes.NewReader(ans), endless{}))
		})
	}
}

func TestAnswerRoundTrip(t *testing.T) {
	p := payload(9)
	got, _, refused, err := readAnswer(bytes.NewReader(appendAccepted(nil, p)))
	require.NoError(t, err)
	assert.False(t, refused)
	assert.Equal(t, p, got)

	_, msg, refused, err := readAnswer(bytes.NewReader(appendRefused(nil, "no. Fix: yes")))
	require.NoError(t, err)
	assert.True(t, refused)
	assert.Equal(t, "no. Fix: yes", msg)

	_, msg, _, err = readAnswer(bytes.NewReader(appendRefused(nil, strings.Repeat("x", 2*MaxMessageLen))))
	require.NoError(t, err)
	assert.Len(t, msg, MaxMessageLen, "a long refusal is cut to its bound")

	_, _, _, err = readAnswer(bytes.NewReader([]byte("GPRV\x00\x01\x05")))
	assert.ErrorContains(t, err, "the answer has status 5, neither accepted (0) nor refused (1)")
	_, _, _, err = readAnswer(bytes.NewReader([]byte("GPRV\x00\x01\x00abc")))
	assert.ErrorContains(t, err, "before the payload was complete")
}

func FuzzParseHello(f *testing.F) {
	f.Add(appendHello(nil, hello{rank: 1, world: 2, key: key}))
	f.Add(appendHello(nil, hello{rank: 3, world: 4}))
	f.Add(appendHello(nil, hello{rank: 1, world: 2, key: strings.Repeat("k", MaxKeyLen)}))
	f.Add(rawHello(Magic, Version, 1, 2, 1<<32-1, ""))
	f.Add(rawHello(Magic, Version, 1, 2, MaxKeyLen+1, ""))
	f.Add(rawHello(Magic, 2, 1, 2, 0, ""))
	f.Add(rawHello("GET ", Version, 1, 2, 0, ""))
	f.Add([]byte("GPRV"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		// No input allocates more than the key's bound and a little.
		memcheck.Check(t, memcheck.Bound{Base: 16 << 10, PerByte: 4}, len(data), func() {
			h, err := parseHello(data)
			if err != nil {
				var we *wireError
				if !errors.As(err, &we) || we.msg == "" {
					t.Fatalf("error of type %T: %v", err, err)
				}
				return
			}
			if len(h.key) > MaxKeyLen {
				t.Fatalf("a key of %d bytes was accepted", len(h.key))
			}
			if !bytes.Equal(appendHello(nil, h), data) {
				t.Fatalf("%x parses to %+v, which encodes differently", data, h)
			}
		})
	})
}

func FuzzReadAnswer(f *testing.F) {
	f.Add(appendAccepted(nil, payload(1)))
	f.Add(appendRefused(nil, "rank 2 joined twice. Fix: give every process a distinct rank"))
	f.Add([]byte("GPRV\x00\x01\x01\xff\xff\xff\xff"))
	f.Add([]byte("GPRV\x00\x01\x07"))
	f.Add([]byte("HTTP/1.1 200 OK\r\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		memcheck.Check(t, memcheck.Bound{Base: 16 << 10, PerByte: 4}, len(data), func() {
			p, msg, refused, err := readAnswer(bytes.NewReader(data))
			switch {
			case err != nil:
				var we *wireError
				if !errors.As(err, &we) {
					t.Fatalf("error of type %T: %v", err, err)
				}
			case refused:
				if len(msg) > MaxMessageLen {
					t.Fatalf("a refusal of %d bytes was accepted", len(msg))
				}
				if !bytes.HasPrefix(data, appendRefused(nil, msg)) {
					t.Fatalf("%x reads as the refusal %q, which encodes differently", data, msg)
				}
			default:
				if !bytes.HasPrefix(data, appendAccepted(nil, p)) {
					t.Fatalf("%x reads as a payload that encodes differently", data)
				}
			}
		})
	})
}
