package occupancy

import (
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDiagnoseKernelLaunchVyreVectors(t *testing.T) {
	dev := CudaKernelDeviceEnvelope{SMMajor: 9, SMMinor: 0, MaxThreadsPerBlock: 1024, SharedMemoryPerBlockBytes: 227 * 1024,
		SupportsCooperativeLaunch: true, SupportsTensorCores: true}
	ok := DiagnoseKernelLaunch("frontier", dev, CudaKernelRequirement{MinSMMajor: 8, MinSMMinor: 0, RequestedThreadsPerBlock: 1024,
		RequestedSharedMemoryBytes: 64 * 1024, RequiresCooperativeLaunch: true, RequiresTensorCores: true})
	assert.True(t, ok.OK())
	assert.Equal(t, "cuda-kernel-capability-v1|kernel=frontier|status=ok", ok.Message())

	small := CudaKernelDeviceEnvelope{SMMajor: 8, SMMinor: 6, MaxThreadsPerBlock: 512, SharedMemoryPerBlockBytes: 16 * 1024}
	bad := DiagnoseKernelLaunch("frontier", small, CudaKernelRequirement{MinSMMajor: 9, MinSMMinor: 0, RequestedThreadsPerBlock: 1024,
		RequestedSharedMemoryBytes: 64 * 1024, RequiresCooperativeLaunch: true, RequiresTensorCores: true})
	require.Len(t, bad.Failures, 5)
	msg := bad.Message()
	for _, part := range []string{"sm_version(required=9.0,actual=8.6)", "threads_per_block(requested=1024,max=512)",
		"shared_memory(requested=65536,max=16384)", "cooperative_launch", "tensor_cores"} {
		assert.Contains(t, msg, part)
	}
	assert.Equal(t, "cuda-kernel-capability-v1|kernel=frontier|status=blocked|fix=sm_version(required=9.0,actual=8.6),"+
		"threads_per_block(requested=1024,max=512),shared_memory(requested=65536,max=16384),cooperative_launch,tensor_cores", msg)
}

func TestDiagnoseSMVersionTuple(t *testing.T) {
	tests := []struct {
		devMaj, devMin, reqMaj, reqMin uint16
		fail                           bool
	}{
		{9, 0, 8, 9, false}, // 9.0 >= 8.9 although minor 0 < 9
		{8, 9, 9, 0, true},
		{8, 6, 8, 6, false},
		{8, 6, 8, 7, true},
	}
	for _, tc := range tests {
		d := DiagnoseKernelLaunch("k", CudaKernelDeviceEnvelope{SMMajor: tc.devMaj, SMMinor: tc.devMin}, CudaKernelRequirement{MinSMMajor: tc.reqMaj, MinSMMinor: tc.reqMin})
		assert.Equal(t, tc.fail, !d.OK(), "%+v", tc)
	}
}

func TestDiagnoseKernelLaunchShapeVyreVectors(t *testing.T) {
	dev := EnvelopeFromDevice(mustLookup(t, "h200"), false)
	limit := uint64(16)
	d, err := DiagnoseKernelLaunchShape("frontier", dev, CudaKernelLaunchShape{Grid: [3]uint32{9, 2, 1}, Block: [3]uint32{128, 2, 1}, Cooperative: true}, &limit)
	require.NoError(t, err)
	assert.Equal(t, uint64(18), d.GridBlocks)
	assert.Equal(t, uint32(256), d.ThreadsPerBlock)
	assert.False(t, d.IsLaunchable())
	assert.True(t, d.ResidencyBlocked())
	assert.Equal(t, "cuda-kernel-capability-v1|kernel=frontier|status=ok|grid=[9, 2, 1]|block=[128, 2, 1]|grid_blocks=18|threads_per_block=256|dynamic_shared_bytes=0"+
		"|cooperative_resident_block_limit=16|cooperative_residency=blocked(required=18,limit=16)", d.Message())

	_, err = DiagnoseKernelLaunchShape("frontier", dev, CudaKernelLaunchShape{Grid: [3]uint32{1, 1, 1}, Block: [3]uint32{math.MaxUint32, math.MaxUint32, 2}}, nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "threads per block")
	assert.Contains(t, err.Error(), "Fix:")

	_, err = DiagnoseKernelLaunchShape("frontier", dev, CudaKernelLaunchShape{Grid: [3]uint32{math.MaxUint32, math.MaxUint32, math.MaxUint32}, Block: [3]uint32{1, 1, 1}}, nil)
	assert.ErrorContains(t, err, "grid blocks")

	// No limit: launchable, no residency suffix; a limit that holds adds only the limit.
	d, err = DiagnoseKernelLaunchShape("k", dev, CudaKernelLaunchShape{Grid: [3]uint32{4, 1, 1}, Block: [3]uint32{256, 1, 1}, DynamicSharedMemoryBytes: 4096}, nil)
	require.NoError(t, err)
	assert.True(t, d.IsLaunchable())
	assert.Equal(t, "cuda-kernel-capability-v1|kernel=k|status=ok|grid=[4, 1, 1]|block=[256, 1, 1]|grid_blocks=4|threads_per_block=256|dynamic_shared_bytes=4096", d.Message())
	limit = 4
	d, err = DiagnoseKernelLaunchShape("k", dev, CudaKernelLaunchShape{Grid: [3]uint32{4, 1, 1}, Block: [3]uint32{256, 1, 1}}, &limit)
	require.NoError(t, err)
	assert.True(t, d.IsLaunchable())
	assert.True(t, strings.HasSuffix(d.Message(), "|cooperative_resident_block_limit=4"))

	// Shape failures: too many threads and too much shared memory for the default limit.
	d, err = DiagnoseKernelLaunchShape("k", dev, CudaKernelLaunchShape{Grid: [3]uint32{1, 1, 1}, Block: [3]uint32{32, 32, 2}, DynamicSharedMemoryBytes: 64 * 1024}, nil)
	require.NoError(t, err)
	assert.False(t, d.IsLaunchable())
	assert.Equal(t, "cuda-kernel-capability-v1|kernel=k|status=blocked|fix=threads_per_block(requested=2048,max=1024),shared_memory(requested=65536,max=49152)"+
		"|grid=[1, 1, 1]|block=[32, 32, 2]|grid_blocks=1|threads_per_block=2048|dynamic_shared_bytes=65536", d.Message())
}

func TestEnvelopeFromDevice(t *testing.T) {
	h100 := mustLookup(t, "h100")
	e := EnvelopeFromDevice(h100, false)
	assert.Equal(t, CudaKernelDeviceEnvelope{SMMajor: 9, SMMinor: 0, MaxThreadsPerBlock: 1024, SharedMemoryPerBlockBytes: 49152,
		SupportsCooperativeLaunch: true, SupportsTensorCores: true}, e)
	assert.Equal(t, uint64(232448), EnvelopeFromDevice(h100, true).SharedMemoryPerBlockBytes)
}
