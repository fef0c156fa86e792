package nccl

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/occupancy"
)

// fakeExecutors opens n executors on CPU fake backends.
func fakeExecutors(t testing.TB, n int) []*executor.Executor {
	t.Helper()
	dev, err := occupancy.Lookup("h200")
	require.NoError(t, err)
	dev.TotalMemoryBytes = 1 << 26
	xs := make([]*executor.Executor, n)
	for i := range xs {
		x, err := executor.New(executor.NewFake(executor.FakeConfig{Device: dev}), executor.Options{SkipPTXProbe: true})
		require.NoError(t, err)
		t.Cleanup(func() { _ = x.Close() })
		xs[i] = x
	}
	return xs
}

// filled allocates a buffer of n bytes on x holding fill(i) at byte i.
func filled(t testing.TB, x *executor.Executor, n int, fill func(i int) byte) executor.Buffer {
	t.Helper()
	b, err := x.Alloc(uint64(n))
	require.NoError(t, err)
	data := make([]byte, n)
	for i := range data {
		data[i] = fill(i)
	}
	require.NoError(t, x.Upload(b, data))
	return b
}

func TestFakeAllGather(t *testing.T) {
	xs := fakeExecutors(t, 3)
	c, err := NewFake(xs)
	require.NoError(t, err)
	assert.Equal(t, 3, c.Ranks())
	var send, recv []Region
	for r, x := range xs {
		s := filled(t, x, 16, func(i int) byte { return byte(10*r + i) })
		d := filled(t, x, 8+3*8, func(int) byte { return 0xee })
		send = append(send, Region{X: x, Buf: s, Off: 4, Len: 8})
		recv = append(recv, Region{X: x, Buf: d, Off: 8, Len: 24})
	}
	st, err := c.AllGather(send, recv)
	require.NoError(t, err)
	assert.EqualValues(t, 6*8, st.Bytes, "3 x 2 pairs of 8 bytes")
	for r, x := range xs {
		got, err := x.Download(recv[r].Buf)
		require.NoError(t, err)
		want := []byte{0xee, 0xee, 0xee, 0xee, 0xee, 0xee, 0xee, 0xee}
		for from := range 3 {
			for i := 4; i < 12; i++ {
				want = append(want, byte(10*from+i))
			}
		}
		assert.Equal(t, want, got, "rank %d", r)
	}
	require.NoError(t, c.Close())
	_, err = c.AllGather(send, recv)
	assert.ErrorContains(t, err, "communicator is closed")
}

func TestFakeSendRecv(t *testing.T) {
	xs := fakeExecutors(t, 2)
	c, err := NewFake(xs)
	require.NoError(t, err)
	a := filled(t, xs[0], 8, func(i int) byte { return byte(i) })
	b := filled(t, xs[1], 8, func(i int) byte { return byte(100 + i) })
	// Swap the halves: a[0:4] -> b[4:8], b[0:4] -> a[4:8], and a local
	// copy a[0:2] -> a[2:4] read before any write.
	ts := []Transfer{
		{From: 0, To: 1, Src: Region{xs[0], a, 0, 4}, Dst: Region{xs[1], b, 4, 4}},
		{From: 1, To: 0, Src: Region{xs[1], b, 0, 4}, Dst: Region{xs[0], a, 4, 4}},
		{From: 0, To: 0, Src: Region{xs[0], a, 0, 2}, Dst: Region{xs[0], a, 2, 2}},
		{From: 1, To: 0, Src: Region{xs[1], b, 0, 0}, Dst: Region{xs[0], a, 0, 0}},
	}
	st, err := c.SendRecv(ts)
	require.NoError(t, err)
	assert.EqualValues(t, 8, st.Bytes, "the local copy is not exchanged")
	ga, err := xs[0].Download(a)
	require.NoError(t, err)
	gb, err := xs[1].Download(b)
	require.NoError(t, err)
	assert.Equal(t, []byte{0, 1, 0, 1, 100, 101, 102, 103}, ga)
	assert.Equal(t, []byte{100, 101, 102, 103, 0, 1, 2, 3}, gb)
}

func TestCollectiveArgumentsAreChecked(t *testing.T) {
	xs := fakeExecutors(t, 2)
	c, err := NewFake(xs)
	require.NoError(t, err)
	a := filled(t, xs[0], 16, func(int) byte { return 0 })
	b := filled(t, xs[1], 16, func(int) byte { return 0 })
	ra, rb := Region{xs[0], a, 0, 8}, Region{xs[1], b, 0, 8}
	gathers := []struct {
		send, recv []Region
		msg        string
	}{
		{[]Region{ra}, []Region{ra, rb}, "send and recv hold 1 and 2 regions for 2 ranks"},
		{[]Region{rb, ra}, []Region{ra, rb}, "send[0] is not on the executor of rank 0"},
		{[]Region{ra, {xs[1], b, 12, 8}}, []Region{{xs[0], a, 0, 16}, {xs[1], b, 0, 16}}, "send[1] is 8 bytes at offset 12 of a 16-byte buffer"},
		{[]Region{ra, {xs[1], b, 0, 4}}, []Region{{xs[0], a, 0, 16}, {xs[1], b, 0, 16}}, "send[1] is 4 bytes, send[0] 8"},
		{[]Region{ra, rb}, []Region{{xs[0], a, 0, 16}, {xs[1], b, 0, 12}}, "recv[1] is 12 bytes, not 2 ranks x 8"},
	}
	for _, g := range gathers {
		_, err := c.AllGather(g.send, g.recv)
		var ae *ArgumentError
		require.ErrorAs(t, err, &ae)
		assert.ErrorContains(t, err, g.msg)
		assert.ErrorContains(t, err, "Fix:")
	}
	sends := []struct {
		t   Transfer
		msg string
	}{
		{Transfer{From: 0, To: 2, Src: ra, Dst: rb}, "transfers[0] goes from rank 0 to rank 2 of 2"},
		{Transfer{From: 0, To: 1, Src: ra, Dst: Region{xs[1], b, 0, 4}}, "sends 8 bytes into 4"},
		{Transfer{From: 1, To: 0, Src: ra, Dst: rb}, "transfers[0].src is not on the executor of rank 1"},
		{Transfer{From: 0, To: 1, Src: ra, Dst: Region{xs[1], b, 16, 8}}, "transfers[0].dst is 8 bytes at offset 16"},
	}
	for _, s := range sends {
		_, err := c.SendRecv([]Transfer{s.t})
		assert.ErrorContains(t, err, s.msg)
	}
	_, err = NewFake(nil)
	assert.ErrorContains(t, err, "executors is empty")
	_, err = NewFake([]*executor.Executor{xs[0], nil})
	assert.ErrorContains(t, err, "executors[1] is nil")
}

// TestOpenRefusesTwoRanksOnOneDevice: every fake executor reports device
// 0, and NCCL runs one rank per device.
func TestOpenRefusesTwoRanksOnOneDevice(t *testing.T) {
	xs := fakeExecutors(t, 2)
	_, err := Open(xs, Options{Env: &executor.MapEnvironment{Vars: map[string]string{}}})
	assert.ErrorContains(t, err, "executors[1] is on device 0 like executors[0], and NCCL runs one rank per device")
	assert.ErrorContains(t, err, "Fix:")
}

func TestDisableNVLS(t *testing.T) {
	env := &executor.MapEnvironment{Vars: map[string]string{}}
	v, err := DisableNVLS(env)
	require.NoError(t, err)
	assert.Equal(t, "0", v)
	assert.Equal(t, "0", env.Vars[NVLSEnv])
	env.Vars[NVLSEnv] = "1"
	v, err = DisableNVLS(env)
	require.NoError(t, err)
	assert.Equal(t, "1", v, "an explicit setting is kept")
	_, err = DisableNVLS(failingEnv{})
	assert.ErrorContains(t, err, "Fix: set NCCL_NVLS_ENABLE=0")
}

type failingEnv struct{}

func (failingEnv) Lookup(string) (string, bool) { return "", false }
func (failingEnv) Set(string, string) error     { return errors.New("read-only") }

func TestErrorsNameTheCallAndFix(t *testing.T) {
	e := &Error{Call: "ncclAllGather", Code: 5, Detail: "invalid usage"}
	assert.Equal(t, "nccl: ncclAllGather failed: ncclInvalidUsage (invalid usage). Fix: NCCL was used against its rules (for example two ranks on one GPU); use one rank per device", e.Error())
	assert.Contains(t, (&Error{Call: "ncclGroupEnd", Code: 42}).Error(), "ncclResult(42). Fix: run with NCCL_DEBUG=WARN")
	m := &MissingError{Library: Library, Reason: "libnccl.so.2: cannot open shared object file: No such file or directory"}
	assert.True(t, errors.Is(m, ErrUnavailable))
	assert.Contains(t, m.Error(), "NCCL is not available: libnccl.so.2 could not be loaded (libnccl.so.2: cannot open shared object file")
	assert.Contains(t, m.Error(), "apt-get install libnccl2")
	assert.Contains(t, m.Error(), LibraryEnv)
	assert.Equal(t, "2.21.5", FormatVersion(22105))
	assert.Equal(t, "2.8.4", FormatVersion(2804))
}

// checkCollectives runs an all-gather and an all-to-all with a local copy
// on random data, at offsets inside the buffers, and checks every byte.
func checkCollectives(t *testing.T, xs []*executor.Executor, c Collectives) {
	r := rand.New(rand.NewPCG(uint64(len(xs)), 3))
	const n = 1000
	p := len(xs)
	src, dst := make([]executor.Buffer, p), make([]executor.Buffer, p)
	data := make([][]byte, p)
	for i, x := range xs {
		data[i] = make([]byte, p*n+8)
		for j := range data[i] {
			data[i][j] = byte(r.Uint32())
		}
		src[i] = filled(t, x, len(data[i]), func(j int) byte { return data[i][j] })
		dst[i] = filled(t, x, p*n+16, func(int) byte { return 0 })
	}
	var send, recv []Region
	for i, x := range xs {
		send = append(send, Region{X: x, Buf: src[i], Off: 8, Len: n})
		recv = append(recv, Region{X: x, Buf: dst[i], Off: 16, Len: uint64(p * n)})
	}
	st, err := c.AllGather(send, recv)
	require.NoError(t, err)
	assert.EqualValues(t, p*(p-1)*n, st.Bytes)
	for i, x := range xs {
		got, err := x.DownloadRange(dst[i], 16, uint64(p*n))
		require.NoError(t, err)
		for from := range p {
			require.True(t, bytes.Equal(data[from][8:8+n], got[from*n:(from+1)*n]), "all-gather rank %d slot %d", i, from)
		}
	}
	var ts []Transfer
	for from := range p {
		for to := range p {
			ts = append(ts, Transfer{From: from, To: to, Src: Region{xs[from], src[from], uint64(to * n), n},
				Dst: Region{xs[to], dst[to], uint64(from * n), n}})
		}
	}
	_, err = c.SendRecv(ts)
	require.NoError(t, err)
	for to, x := range xs {
		got, err := x.DownloadRange(dst[to], 0, uint64(p*n))
		require.NoError(t, err)
		for from := range p {
			require.True(t, bytes.Equal(data[from][to*n:(to+1)*n], got[from*n:(from+1)*n]), "all-to-all %d -> %d", from, to)
		}
	}
}

// TestFakeCollectivesOnRandomData runs the GPU tests' checks on the fake
// over 1 to 4 ranks.
func TestFakeCollectivesOnRandomData(t *testing.T) {
	for p := 1; p <= 4; p++ {
		xs := fakeExecutors(t, p)
		c, err := NewFake(xs)
		require.NoError(t, err)
		checkCollectives(t, xs, c)
	}
}
