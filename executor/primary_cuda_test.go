//go:build cuda

package executor

import (
	"math/rand/v2"
	"os"
	"testing"
	"unsafe"

	"github.com/gpuplan/gpuplan/internal/gputest/cudart"
	"github.com/stretchr/testify/require"
)

// openOrSkip opens device 0, skipping t without a GPU unless
// GPUPLAN_REQUIRE_GPU is set.
func openOrSkip(t *testing.T) *Executor {
	t.Helper()
	x, err := Open(0, Options{})
	if err != nil {
		if os.Getenv("GPUPLAN_REQUIRE_GPU") != "" {
			t.Fatalf("GPUPLAN_REQUIRE_GPU is set but no GPU is usable: %v", err)
		}
		t.Skip(err.Error())
	}
	return x
}

// randomBytes returns n bytes from a seeded generator.
func randomBytes(seed uint64, n int) []byte {
	r := rand.New(rand.NewPCG(seed, 7))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// contextOf returns the driver handle of x's context.
func contextOf(t *testing.T, x *Executor) uintptr {
	b, ok := x.b.(*cudaBackend)
	require.True(t, ok, "a CUDA executor")
	return *(*uintptr)(unsafe.Pointer(&b.ctx))
}

// roundTrip uploads random bytes into a new buffer of x and checks that
// they come back.
func roundTrip(t *testing.T, x *Executor, seed uint64) Buffer {
	t.Helper()
	want := randomBytes(seed, 1<<20+13)
	b, err := x.Alloc(uint64(len(want)))
	require.NoError(t, err)
	require.NoError(t, x.Upload(b, want))
	got, err := x.Download(b)
	require.NoError(t, err)
	require.Equal(t, want, got)
	return b
}

func TestGPUTwoExecutorsShareThePrimaryContext(t *testing.T) {
	rt, err := cudart.Open(0)
	if err != nil {
		t.Skip(err.Error())
	}
	a := openOrSkip(t)
	active, err := rt.PrimaryActive()
	require.NoError(t, err)
	require.True(t, active, "an open executor retains the primary context")
	b := openOrSkip(t)
	require.Equal(t, contextOf(t, a), contextOf(t, b), "two executors on one device use one context")
	ba := roundTrip(t, a, 1)
	roundTrip(t, b, 2)
	require.NoError(t, a.Free(ba))
	require.NoError(t, a.Close())
	// b's buffers and modules live on after a closes.
	roundTrip(t, b, 3)
	m, err := b.LoadModule(testKernelsPTX)
	require.NoError(t, err)
	require.NotNil(t, m)
	require.NoError(t, b.Close())
}

func TestGPUExecutorBesideARuntimeLibrary(t *testing.T) {
	rt, err := cudart.Open(0)
	if err != nil {
		t.Skip(err.Error())
	}
	x := openOrSkip(t)
	defer func() { require.NoError(t, x.Close()) }()
	ctx, err := rt.Context()
	require.NoError(t, err)
	require.Equal(t, contextOf(t, x), ctx, "the runtime's context is the executor's")

	// The runtime reads what the executor wrote, and writes into the
	// executor's buffer from memory of its own.
	b := roundTrip(t, x, 4)
	p, err := x.DevicePtr(b)
	require.NoError(t, err)
	got := make([]byte, b.Len)
	require.NoError(t, rt.ToHost(got, uintptr(p)))
	require.Equal(t, randomBytes(4, int(b.Len)), got)
	want := randomBytes(5, int(b.Len))
	r, err := rt.Malloc(len(want))
	require.NoError(t, err)
	require.NoError(t, rt.ToDevice(r, want))
	require.NoError(t, rt.Copy(uintptr(p), r, len(want)))
	require.NoError(t, rt.Free(r))
	back, err := x.Download(b)
	require.NoError(t, err)
	require.Equal(t, want, back)
}

func TestGPUPrivateContextIsTheExecutorsOwn(t *testing.T) {
	shared := openOrSkip(t)
	defer func() { require.NoError(t, shared.Close()) }()
	own, err := Open(0, Options{PrivateContext: true})
	require.NoError(t, err)
	require.NotEqual(t, contextOf(t, shared), contextOf(t, own), "a private context is not the primary one")
	roundTrip(t, own, 6)
	require.NoError(t, own.Close())
	roundTrip(t, shared, 7)
}
