//go:build cuda

package executor

import (
	_ "embed"
	"encoding/binary"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/stretchr/testify/require"
)

var (
	//go:embed testdata/kernels/link_main.ptx
	linkMainPTX []byte
	//go:embed testdata/kernels/link_helper.ptx
	linkHelperPTX []byte
	// pdlApplyPTX is link_apply after griddepcontrol.wait, for sm_90.
	//go:embed testdata/pdl_apply.ptx
	pdlApplyPTX []byte
)

// openDAGTest opens device 0, or skips (fails with GPUPLAN_REQUIRE_GPU).
func openDAGTest(t *testing.T) *Executor {
	t.Helper()
	if initStatus() != 0 {
		err := unavailableFromInit(initStatus())
		if os.Getenv("GPUPLAN_REQUIRE_GPU") != "" {
			t.Fatalf("GPUPLAN_REQUIRE_GPU is set but no GPU is usable: %v", err)
		}
		t.Skip(err.Error())
	}
	x, err := Open(0, Options{})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, x.Close()) })
	return x
}

// dagBuffers uploads n random words and allocates two more buffers.
func dagBuffers(t *testing.T, x *Executor, n int) (in, mid, out Buffer, want []uint32) {
	t.Helper()
	r := rand.New(rand.NewPCG(1, 2))
	data := make([]byte, 4*n)
	want = make([]uint32, n)
	for i := range n {
		v := r.Uint32()
		binary.LittleEndian.PutUint32(data[4*i:], v)
		want[i] = (v*3+1)*3 + 2
	}
	var err error
	for _, b := range []*Buffer{&in, &mid, &out} {
		*b, err = x.Alloc(uint64(4 * n))
		require.NoError(t, err)
	}
	require.NoError(t, x.Upload(in, data))
	return in, mid, out, want
}

func checkWords(t *testing.T, x *Executor, b Buffer, want []uint32, what string) {
	t.Helper()
	got, err := x.Download(b)
	require.NoError(t, err)
	for i, w := range want {
		if v := binary.LittleEndian.Uint32(got[4*i:]); v != w {
			t.Fatalf("%s: word %d is %d, want %d", what, i, v, w)
		}
	}
}

func TestGPULinkStreamsAndGraphs(t *testing.T) {
	x := openDAGTest(t)
	_, err := x.LinkModule(LinkInput{Name: "link_main.ptx", PTX: linkMainPTX})
	var le *LinkError
	require.ErrorAs(t, err, &le, "an unresolved function fails the link")
	require.Contains(t, le.Log, "scale_add")

	m, err := x.LinkModule(LinkInput{Name: "link_main.ptx", PTX: linkMainPTX}, LinkInput{Name: "link_helper.ptx", PTX: linkHelperPTX})
	require.NoError(t, err)
	k, err := m.Kernel("link_apply")
	require.NoError(t, err)
	const n = 1 << 24 // large enough that an unordered consumer overtakes its producer
	in, mid, out, want := dagBuffers(t, x, n)
	cfg := Linear(n/256, 256)

	// Two streams ordered by an event.
	a, err := x.NewStream()
	require.NoError(t, err)
	defer a.Close()
	b, err := x.NewStream()
	require.NoError(t, err)
	defer b.Close()
	ev, err := x.NewEvent(false)
	require.NoError(t, err)
	defer ev.Close()
	for range 3 {
		require.NoError(t, a.Launch(k, cfg, Ptr(in), Ptr(mid), U64(n), U64(1)))
		require.NoError(t, a.Record(ev))
		require.NoError(t, b.Wait(ev))
		require.NoError(t, b.Launch(k, cfg, Ptr(mid), Ptr(out), U64(n), U64(2)))
		require.NoError(t, b.Synchronize())
		require.NoError(t, a.Synchronize())
		checkWords(t, x, out, want, "streams")
	}

	// A graph of the same two launches, replayed.
	for _, pdl := range []bool{false, true} {
		if pdl && x.Device().Major < 9 {
			continue
		}
		consumer := k
		if pdl {
			mp, err := x.LinkModule(LinkInput{Name: "pdl_apply.ptx", PTX: pdlApplyPTX}, LinkInput{Name: "link_helper.ptx", PTX: linkHelperPTX})
			require.NoError(t, err)
			consumer, err = mp.Kernel("pdl_apply")
			require.NoError(t, err)
		}
		gb, err := x.NewGraph()
		require.NoError(t, err)
		n1, err := gb.AddKernel(k, cfg, nil, Ptr(in), Ptr(mid), U64(n), U64(1))
		require.NoError(t, err)
		_, err = gb.AddKernel(consumer, cfg, []GraphDep{{Node: n1, Programmatic: pdl}}, Ptr(mid), Ptr(out), U64(n), U64(2))
		require.NoError(t, err)
		g, err := gb.Instantiate()
		require.NoError(t, err)
		for range 3 {
			require.NoError(t, x.Upload(out, make([]byte, 4*n)))
			require.NoError(t, g.Launch(a))
			require.NoError(t, a.Synchronize())
			checkWords(t, x, out, want, map[bool]string{false: "graph", true: "graph with a programmatic edge"}[pdl])
		}
		require.NoError(t, g.Close())
	}
	for _, buf := range []Buffer{in, mid, out} {
		require.NoError(t, x.Free(buf))
	}
}
