package wavedag

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/occupancy"
)

//go:embed testdata/kernels/testwaves.ptx
var testPTX []byte

// fmix is the wave functions' hash (testwaves.cu).
func fmix(h uint32) uint32 {
	h ^= h >> 16
	h *= 0x85ebca6b
	h ^= h >> 13
	h *= 0xc2b2ae35
	h ^= h >> 16
	return h
}

// elems returns the tile's element range [lo, hi) of n elements.
func elems(t *Tile, n uint32) (uint32, uint32) {
	lo := t.Index * t.Threads
	return min(lo, n), min(lo+t.Threads, n)
}

// testFuncs are the Go references of testwaves.cu.
func testFuncs() map[string]HostFunc {
	return map[string]HostFunc{
		"t_seed": func(t *Tile) error {
			n, salt := t.U32(1), t.U32(2)
			out := t.Uint32s(0, 0, uint64(n))
			lo, hi := elems(t, n)
			for i := lo; i < hi; i++ {
				out[i] = fmix(salt ^ i)
			}
			return t.Err()
		},
		"t_all": func(t *Tile) error {
			n, np := t.U32(1), int(t.U32(2))
			out := t.Uint32s(0, 0, uint64(n))
			ins := make([][]uint32, np)
			for p := range np {
				ins[p] = t.Uint32s(3+2*p, 0, uint64(t.U32(4+2*p)))
			}
			lo, hi := elems(t, n)
			for i := lo; i < hi; i++ {
				h := i
				for _, in := range ins {
					h = fmix(h + in[(7*i+1)%uint32(len(in))])
				}
				out[i] = h
			}
			return t.Err()
		},
		"t_block": func(t *Tile) error {
			n, m, k := t.U32(1), t.U32(3), t.U32(4)
			out, in := t.Uint32s(0, 0, uint64(n)), t.Uint32s(2, 0, uint64(m))
			lo, hi := elems(t, n)
			for i := lo; i < hi; i++ {
				h := i
				for j := k * i; j < k*i+k && j < m; j++ {
					h = fmix(h ^ in[j])
				}
				out[i] = h
			}
			return t.Err()
		},
		"t_prologue": func(t *Tile) error {
			n := t.U32(1)
			out, w, in := t.Uint32s(0, 0, uint64(n)), t.Uint32s(2, 0, uint64(n)), t.Uint32s(3, 0, uint64(n))
			lo, hi := elems(t, n)
			s := make([]uint32, hi-lo)
			copy(s, w[lo:hi]) // before gp_wait: weights only
			t.Wait()
			for i := lo; i < hi; i++ {
				out[i] = s[i-lo]*3 + in[i]
			}
			return t.Err()
		},
	}
}

// obj is a JSON object under construction.
type obj = map[string]any

// testWave is one wave of a test workload.
func testWave(id int, name, fn string, tiles int, prologue bool, shared int, args ...obj) obj {
	k := obj{"function": fn, "tiles": tiles, "block": 256, "args": args}
	if prologue {
		k["prologue"] = true
	}
	if shared > 0 {
		k["shared_bytes"] = shared
	}
	return obj{"id": id, "name": name, "kernel": k}
}

func buf(name string) obj { return obj{"buffer": name} }
func u32(v int) obj       { return obj{"u32": v} }
func dep(b, a int, tiles string) obj {
	d := obj{"before": b, "after": a}
	if tiles != "" {
		d["tiles"] = tiles
	}
	return d
}

// testWorkload is an eight-wave DAG over every tile map and a prologue:
// two seeds, a wave reading every tile of both, a same-tile chain, a
// block-of-two reader, a prologue wave and a join.
func testWorkload(t *testing.T, edit func(w obj)) []byte {
	const n = 1000
	bufs := []obj{}
	for _, b := range []string{"a", "b", "c", "d", "e", "h"} {
		bufs = append(bufs, obj{"name": b, "bytes": 4 * n})
	}
	bufs = append(bufs, obj{"name": "f", "bytes": 4 * n / 2}, obj{"name": "g", "bytes": 4 * n},
		obj{"name": "w", "bytes": 4 * n, "init": obj{"fill": "random", "seed": 7, "type": "u32"}, "read_only": true})
	w := obj{
		"name": "test-dag", "device": "h200", "module": "testwaves.ptx",
		"buffers": bufs,
		"outputs": []obj{{"buffer": "h", "type": "u32"}, {"buffer": "c", "type": "u32"}},
		"waves": []obj{
			testWave(0, "seed-a", "t_seed", 4, false, 0, buf("a"), u32(n), u32(1)),
			testWave(1, "seed-b", "t_seed", 4, false, 0, buf("b"), u32(n), u32(2)),
			testWave(2, "all-c", "t_all", 4, false, 0, buf("c"), u32(n), u32(2), buf("a"), u32(n), buf("b"), u32(n)),
			testWave(3, "same-d", "t_block", 4, false, 0, buf("d"), u32(n), buf("c"), u32(n), u32(1)),
			testWave(4, "same-e", "t_block", 4, false, 0, buf("e"), u32(n), buf("a"), u32(n), u32(1)),
			testWave(5, "block-f", "t_block", 2, false, 0, buf("f"), u32(n/2), buf("a"), u32(n), u32(2)),
			testWave(6, "prologue-g", "t_prologue", 4, true, 1024, buf("g"), u32(n), buf("w"), buf("c")),
			testWave(7, "join-h", "t_all", 4, false, 0, buf("h"), u32(n), u32(4), buf("d"), u32(n), buf("e"), u32(n), buf("f"), u32(n/2), buf("g"), u32(n)),
		},
		"dependencies": []obj{dep(0, 2, ""), dep(1, 2, ""), dep(2, 3, "same"), dep(0, 4, "same"), dep(0, 5, "block:2"),
			dep(2, 6, ""), dep(3, 7, ""), dep(4, 7, ""), dep(5, 7, ""), dep(6, 7, "")},
	}
	if edit != nil {
		edit(w)
	}
	data, err := json.Marshal(w)
	require.NoError(t, err)
	return data
}

// testFiles serves the test module.
func testFiles(path string) ([]byte, error) {
	if path == "testwaves.ptx" {
		return testPTX, nil
	}
	return nil, fmt.Errorf("no file %s", path)
}

// parseTest parses a test workload.
func parseTest(t *testing.T, data []byte) *Program {
	t.Helper()
	p, err := Parse("test.json", data, testFiles, LoadOptions{})
	require.NoError(t, err)
	return p
}

// testDevice is the fake's H200.
func testDevice(t *testing.T) occupancy.Device {
	p, err := occupancy.LookupProfile("h200")
	require.NoError(t, err)
	return p.Device
}

// openFake opens a session of p on a fake backend with the test
// references.
func openFake(t *testing.T, p *Program, funcs map[string]HostFunc, seed uint64, opts Options) (*Session, *executor.Executor) {
	t.Helper()
	x, err := executor.New(NewFake(testDevice(t), funcs, seed), executor.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = x.Close() })
	s, err := Open(x, p, opts)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s, x
}
