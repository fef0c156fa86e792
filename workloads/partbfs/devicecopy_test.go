package partbfs

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/executor/nccl"
)

// checkDeviceCopy checks the simulation's collectives byte for byte on
// random data at odd (4-byte aligned) offsets.
func checkDeviceCopy(t *testing.T, x *executor.Executor) {
	d, err := NewDeviceCopy(x, 3)
	require.NoError(t, err)
	r := rand.New(rand.NewPCG(1, 2))
	data := make([]byte, 3*4096)
	for i := range data {
		data[i] = byte(r.Uint32())
	}
	src, err := x.Alloc(uint64(len(data)))
	require.NoError(t, err)
	dst, err := x.Alloc(uint64(len(data)) * 3)
	require.NoError(t, err)
	defer x.Free(src)
	defer x.Free(dst)
	require.NoError(t, x.Upload(src, data))
	var send, recv []nccl.Region
	for i := range 3 {
		send = append(send, nccl.Region{X: x, Buf: src, Off: uint64(i) * 4096, Len: 4092})
		recv = append(recv, nccl.Region{X: x, Buf: dst, Off: uint64(i)*3*4096 + 4, Len: 3 * 4092})
	}
	st, err := d.AllGather(send, recv)
	require.NoError(t, err)
	assert.EqualValues(t, 6*4092, st.Bytes)
	got, err := x.Download(dst)
	require.NoError(t, err)
	for to := range 3 {
		for from := range 3 {
			at := to*3*4096 + 4 + from*4092
			require.True(t, bytes.Equal(data[from*4096:from*4096+4092], got[at:at+4092]), "rank %d's slot %d", to, from)
		}
	}
}

// TestDeviceCopyExchange runs the byte checks on the fake, and refuses
// regions that are not 4-byte words.
func TestDeviceCopyExchange(t *testing.T) {
	x := fakeExecutor(t, 1<<26, 3)
	checkDeviceCopy(t, x)
	d, err := NewDeviceCopy(x, 2)
	require.NoError(t, err)
	b, err := x.Alloc(64)
	require.NoError(t, err)
	_, err = d.SendRecv([]nccl.Transfer{{From: 0, To: 1, Src: nccl.Region{X: x, Buf: b, Off: 2, Len: 8}, Dst: nccl.Region{X: x, Buf: b, Off: 32, Len: 8}}})
	assert.ErrorContains(t, err, "Fix: align the regions to 4 bytes")
	require.NoError(t, d.Close())
	_, err = d.SendRecv(nil)
	assert.ErrorContains(t, err, "closed")
	_, err = NewDeviceCopy(x, 0)
	assert.ErrorContains(t, err, "Fix:")
}
