package executor

import (
	"bytes"
	"github.com/gpuplan/gpuplan/internal/memcheck"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFuseUploadsRules(t *testing.T) {
	a, b := Buffer{ID: 1, Len: 100}, Buffer{ID: 2, Len: 100}
	later := []byte{9, 9, 9, 9, 9, 9}
	cases := []struct {
		name string
		in   []Upload
		want []Upload
	}{
		{"empty never copies", []Upload{{a, 5, nil}, {b, 0, []byte{}}}, []Upload{}},
		{"covering later replaces", []Upload{{a, 2, []byte{1, 2}}, {a, 0, later}}, []Upload{{a, 0, later}}},
		{"overlap merges, later wins", []Upload{{a, 0, []byte{1, 2, 3}}, {a, 2, []byte{7, 8}}}, []Upload{{a, 0, []byte{1, 2, 7, 8}}}},
		{"touching merges", []Upload{{a, 0, []byte{1}}, {a, 1, []byte{2}}}, []Upload{{a, 0, []byte{1, 2}}}},
		{"earlier wins where later does not reach", []Upload{{a, 4, []byte{4, 5, 6}}, {a, 2, []byte{2, 3}}}, []Upload{{a, 2, []byte{2, 3, 4, 5, 6}}}},
		{"gap keeps two", []Upload{{a, 0, []byte{1}}, {a, 2, []byte{3}}}, []Upload{{a, 0, []byte{1}}, {a, 2, []byte{3}}}},
		{"other buffer never merges", []Upload{{a, 0, []byte{1}}, {b, 0, []byte{2}}}, []Upload{{a, 0, []byte{1}}, {b, 0, []byte{2}}}},
		{"bridge joins three", []Upload{{a, 0, []byte{1}}, {a, 2, []byte{3}}, {a, 1, []byte{2}}}, []Upload{{a, 0, []byte{1, 2, 3}}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := FuseUploads(c.in)
			require.NoError(t, err)
			require.Len(t, got, len(c.want))
			for i := range got {
				assert.Equal(t, c.want[i].Buffer, got[i].Buffer)
				assert.Equal(t, c.want[i].Offset, got[i].Offset)
				assert.Equal(t, c.want[i].Data, got[i].Data)
			}
		})
	}
	// A covering upload is used without a copy.
	got, err := FuseUploads([]Upload{{a, 2, []byte{1}}, {a, 0, later}})
	require.NoError(t, err)
	assert.Same(t, &later[0], &got[0].Data[0])
	_, err = FuseUploads([]Upload{{a, math.MaxUint64, []byte{1}}})
	assert.ErrorContains(t, err, "upload end offset")
}

// applyUploads writes uploads into per-buffer memories in order.
func applyUploads(mem map[uint64][]byte, ups []Upload) {
	for _, u := range ups {
		copy(mem[u.Buffer.ID][u.Offset:], u.Data)
	}
}

func TestFuseUploadsProperties(t *testing.T) {
	for seed := uint64(0); seed < 400; seed++ {
		r := rand.New(rand.NewPCG(seed, 0xf05e))
		nbuf := 1 + r.IntN(3)
		size := 8 + r.IntN(120)
		var ups []Upload
		for i := 0; i < r.IntN(20); i++ {
			off := r.IntN(size)
			l := r.IntN(size - off + 1)
			d := make([]byte, l)
			for j := range d {
				d[j] = byte(r.Uint32())
			}
			ups = append(ups, Upload{Buffer: Buffer{ID: uint64(1 + r.IntN(nbuf)), Len: uint64(size)}, Offset: uint64(off), Data: d})
		}
		snapshot := make([][]byte, len(ups))
		for i, u := range ups {
			snapshot[i] = bytes.Clone(u.Data)
		}
		fused, err := FuseUploads(ups)
		require.NoError(t, err)
		want, got := map[uint64][]byte{}, map[uint64][]byte{}
		for id := uint64(1); id <= uint64(nbuf); id++ {
			want[id] = make([]byte, size)
			got[id] = make([]byte, size)
		}
		applyUploads(want, ups)
		// Fused uploads are disjoint, so any order gives the same memory.
		for i := len(fused) - 1; i >= 0; i-- {
			applyUploads(got, fused[i:i+1])
		}
		require.Equal(t, want, got, "seed %d", seed)
		for i, u := range ups {
			require.Equal(t, snapshot[i], u.Data, "inputs are not modified")
		}
		var total, inputBytes int
		for i, a := range fused {
			require.NotEmpty(t, a.Data, "no empty DMA")
			total += len(a.Data)
			for _, b := range fused[i+1:] {
				if a.Buffer.ID == b.Buffer.ID {
					aEnd, bEnd := a.Offset+uint64(len(a.Data)), b.Offset+uint64(len(b.Data))
					require.True(t, aEnd < b.Offset || bEnd < a.Offset, "seed %d: fused uploads overlap or touch", seed)
				}
			}
		}
		for _, u := range ups {
			inputBytes += len(u.Data)
		}
		require.LessOrEqual(t, total, max(inputBytes, 0))
	}
}

func TestFuseReadbacksVyreProperty(t *testing.T) {
	for seed := uint64(0); seed < 400; seed++ {
		r := rand.New(rand.NewPCG(seed, 0xbeef))
		size := 16 + r.IntN(200)
		mem := map[uint64][]byte{}
		var reqs []ReadRequest
		for id := uint64(1); id <= 3; id++ {
			mem[id] = make([]byte, size)
			for j := range mem[id] {
				mem[id][j] = byte(r.Uint32())
			}
		}
		for i := 0; i < r.IntN(25); i++ {
			off := r.IntN(size)
			reqs = append(reqs, ReadRequest{Buffer: Buffer{ID: uint64(1 + r.IntN(3))}, Offset: uint64(off), Len: uint64(r.IntN(size - off + 1))})
		}
		copies, views, err := FuseReadbacks(reqs)
		require.NoError(t, err)
		require.Len(t, views, len(reqs))
		// The copied bytes are exactly the union of the requested intervals.
		union := map[uint64]map[uint64]bool{}
		for _, q := range reqs {
			for b := q.Offset; b < q.Offset+q.Len; b++ {
				if union[q.Buffer.ID] == nil {
					union[q.Buffer.ID] = map[uint64]bool{}
				}
				union[q.Buffer.ID][b] = true
			}
		}
		copied := map[uint64]map[uint64]bool{}
		var n int
		for _, c := range copies {
			require.NotZero(t, c.Len)
			for b := c.Offset; b < c.Offset+c.Len; b++ {
				if copied[c.Buffer.ID] == nil {
					copied[c.Buffer.ID] = map[uint64]bool{}
				}
				require.False(t, copied[c.Buffer.ID][b], "a byte is copied twice")
				copied[c.Buffer.ID][b] = true
				n++
			}
		}
		require.Equal(t, union, copied, "seed %d", seed)
		// No two fused copies could still be merged.
		for i, a := range copies {
			for _, b := range copies[i+1:] {
				if a.Buffer.ID == b.Buffer.ID {
					require.True(t, a.Offset+a.Len < b.Offset || b.Offset+b.Len < a.Offset)
				}
			}
		}
		// Every view reads its request's bytes.
		for i, q := range reqs {
			v := views[i]
			if q.Len == 0 {
				require.Equal(t, -1, v.CopySlot)
				continue
			}
			c := copies[v.CopySlot]
			require.Equal(t, q.Buffer.ID, c.Buffer.ID)
			require.Equal(t, q.Len, v.ByteLen)
			require.Equal(t, mem[q.Buffer.ID][q.Offset:q.Offset+q.Len], mem[c.Buffer.ID][c.Offset+v.ByteOffset:c.Offset+v.ByteOffset+v.ByteLen])
		}
	}
}

func TestFuseReadbacksSortsAndDropsEmpty(t *testing.T) {
	a, b := Buffer{ID: 1}, Buffer{ID: 2}
	copies, views, err := FuseReadbacks([]ReadRequest{{b, 10, 5}, {a, 4, 4}, {a, 0, 4}, {a, 100, 0}, {a, 2, 1}})
	require.NoError(t, err)
	assert.Equal(t, []FusedCopy{{a, 0, 8}, {b, 10, 5}}, copies)
	assert.Equal(t, []ReadView{{1, 0, 5}, {0, 4, 4}, {0, 0, 4}, {-1, 0, 0}, {0, 2, 1}}, views)
	_, _, err = FuseReadbacks([]ReadRequest{{a, math.MaxUint64, 1}})
	assert.ErrorContains(t, err, "readback end offset")
}

func FuzzFuseUploads(f *testing.F) {
	f.Add([]byte{1, 0, 3, 1, 2, 3, 1, 2, 2, 7, 8})
	f.Fuzz(func(t *testing.T, spec []byte) {
		var ups []Upload
		for len(spec) >= 3 {
			id, off, l := uint64(spec[0]%3), uint64(spec[1]), int(spec[2]%32)
			spec = spec[3:]
			d := make([]byte, l)
			for i := range d {
				d[i] = byte(len(ups) + i)
			}
			ups = append(ups, Upload{Buffer: Buffer{ID: id}, Offset: off, Data: d})
		}
		memcheck.Check(t, memcheck.Bound{Base: 1 << 16, PerByte: 256}, 3*len(ups), func() { _, _ = FuseUploads(ups) })
		fused, err := FuseUploads(ups)
		if err != nil {
			t.Fatal(err)
		}
		want, got := map[uint64][]byte{0: make([]byte, 300), 1: make([]byte, 300), 2: make([]byte, 300)}, map[uint64][]byte{0: make([]byte, 300), 1: make([]byte, 300), 2: make([]byte, 300)}
		applyUploads(want, ups)
		applyUploads(got, fused)
		for id := range want {
			if !bytes.Equal(want[id], got[id]) {
				t.Fatalf("buffer %d differs", id)
			}
		}
	})
}

func FuzzFuseReadbacks(f *testing.F) {
	f.Add([]byte{1, 0, 3, 1, 2, 3, 0, 9, 0})
	f.Fuzz(func(t *testing.T, spec []byte) {
		var reqs []ReadRequest
		for len(spec) >= 3 {
			reqs = append(reqs, ReadRequest{Buffer: Buffer{ID: uint64(spec[0] % 3)}, Offset: uint64(spec[1]), Len: uint64(spec[2] % 40)})
			spec = spec[3:]
		}
		memcheck.Check(t, memcheck.Bound{Base: 1 << 16, PerByte: 256}, 3*len(reqs), func() { _, _, _ = FuseReadbacks(reqs) })
		copies, views, err := FuseReadbacks(reqs)
		if err != nil {
			t.Fatal(err)
		}
		for i, q := range reqs {
			v := views[i]
			if q.Len == 0 {
				if v.CopySlot != -1 {
					t.Fatal("empty request has a slot")
				}
				continue
			}
			c := copies[v.CopySlot]
			if c.Buffer.ID != q.Buffer.ID || c.Offset+v.ByteOffset != q.Offset || v.ByteLen != q.Len || v.ByteOffset+v.ByteLen > c.Len {
				t.Fatalf("view %d wrong: %+v %+v %+v", i, q, v, c)
			}
		}
	})
}

func BenchmarkFuseUploads(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	ups := make([]Upload, 256)
	for i := range ups {
		ups[i] = Upload{Buffer: Buffer{ID: uint64(r.IntN(8))}, Offset: uint64(r.IntN(1 << 20)), Data: make([]byte, 1+r.IntN(4096))}
	}
	b.ReportAllocs()
	for b.Loop() {
		_, _ = FuseUploads(ups)
	}
}

func BenchmarkFuseReadbacks(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	reqs := make([]ReadRequest, 1024)
	for i := range reqs {
		reqs[i] = ReadRequest{Buffer: Buffer{ID: uint64(r.IntN(8))}, Offset: uint64(r.IntN(1 << 20)), Len: uint64(r.IntN(4096))}
	}
	b.ReportAllocs()
	for b.Loop() {
		_, _, _ = FuseReadbacks(reqs)
	}
}
