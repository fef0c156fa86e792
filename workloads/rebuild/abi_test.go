package rebuild

import (
	"math/rand/v2"
	"testing"

	"github.com/gpuplan/gpuplan/egraph"
	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/internal/kernelabi/abitest"
	"github.com/stretchr/testify/assert"
)

// TestABI checks the committed header and PTX against the Go ABI, and that
// every kernel is emulated.
func TestABI(t *testing.T) {
	want := []string{KernelReset, KernelStep, KernelPersistent, KernelBarrierOnly, KernelIncremental, KernelIncrementalStep, KernelBucketPairs}
	abitest.Check(t, abitest.Module{ABI: ABI, Header: "kernels/rebuild_abi.h", Package: "./workloads/rebuild", PTX: KernelPTX(), Names: KernelNames(), Want: want,
		Fakes: NewEmulation(1).Kernels()})
}

// TestABIArgsRoundTrip fills the step kernel's parameters on the host side
// and decodes what the launch passes on the emulation side.
func TestABIArgsRoundTrip(t *testing.T) {
	x, _ := newFakeExecutor(t, 1<<30, 1)
	b, ptr := abitest.Buffer(t, x)
	host := StepParams[executor.Buffer]{StateParams: StateParams[executor.Buffer]{Image: b, Unions: b, Parent: b, Cls: b, Canon: b,
		Table: b, Pairs: b, Ctl: b, Out: b, SecClass: 1, SecOp: 2, SecOffset: 3, SecLen: 4, SecChildren: 5, SecGroups: 6, Rows: 7,
		ChildSlots: 8, Classes: 9, UnionPairs: 10, TableSlots: 16}, Round: 11, Stages: 12, ItemFirst: 13, ItemCount: 14}
	abitest.RoundTrip(t, host, StepParams[executor.DevPtr]{StateParams: StateParams[executor.DevPtr]{Image: ptr, Unions: ptr, Parent: ptr, Cls: ptr,
		Canon: ptr, Table: ptr, Pairs: ptr, Ctl: ptr, Out: ptr, SecClass: 1, SecOp: 2, SecOffset: 3, SecLen: 4, SecChildren: 5,
		SecGroups: 6, Rows: 7, ChildSlots: 8, Classes: 9, UnionPairs: 10, TableSlots: 16}, Round: 11, Stages: 12, ItemFirst: 13, ItemCount: 14},
		ptr, 9, []uint64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 16, 11, 12, 13, 14})
	assert.Equal(t, 20, stepRoundArg)
	assert.Equal(t, 23, stepCountArg)
}

// TestSignatureConstants checks that the kernels' hash, built from the ABI
// constants, is egraph's NodeSignature, on random e-nodes.
func TestSignatureConstants(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for range 2000 {
		n := rng.IntN(5)
		kids := make([]int32, n)
		canon := make([]uint32, n)
		for k := range kids {
			kids[k] = rng.Int32()
			canon[k] = uint32(kids[k])
		}
		op := rng.Int32N(1 << 20)
		s := &emuState{canon: canon}
		assert.Equal(t, egraph.NodeSignature(op, kids), s.signature(uint32(op), 0, uint32(n), false))
	}
	assert.Equal(t, egraph.SignatureBucketRecordWords, BucketRecordWords)
}
