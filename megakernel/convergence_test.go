package megakernel_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuplan/gpuplan/megakernel"
)

func TestPlanDeviceConvergence(t *testing.T) {
	p, err := megakernel.PlanDeviceConvergence(128, 4, 0)
	require.NoError(t, err)
	assert.Equal(t, megakernel.ConvergencePlan{MaxDeviceIterations: 128, HostSyncPoints: 1, ChangedFlagReadbackBytes: 4,
		HostIterationPolls: 0, ReadbackPolicy: megakernel.FinalFlagOnly}, p)

	_, err = megakernel.PlanDeviceConvergence(0, 4, 0)
	assert.ErrorAs(t, err, new(*megakernel.EmptyIterationBudgetError))
	_, err = megakernel.PlanDeviceConvergence(8, 1, 0)
	var w *megakernel.InvalidChangedFlagWidthError
	require.ErrorAs(t, err, &w)
	assert.Equal(t, uint32(1), w.Bytes)
	_, err = megakernel.PlanDeviceConvergence(8, 4, 8)
	var h *megakernel.HostPolledConvergenceError
	require.ErrorAs(t, err, &h)
	assert.Equal(t, uint32(8), h.Polls)
	// Order: the iteration budget is checked first, then the flag width.
	_, err = megakernel.PlanDeviceConvergence(0, 1, 8)
	assert.ErrorAs(t, err, new(*megakernel.EmptyIterationBudgetError))
	_, err = megakernel.PlanDeviceConvergence(8, 1, 8)
	assert.ErrorAs(t, err, new(*megakernel.InvalidChangedFlagWidthError))
	for _, bad := range [][3]uint32{{0, 4, 0}, {8, 1, 0}, {8, 4, 8}} {
		_, err := megakernel.PlanDeviceConvergence(bad[0], bad[1], bad[2])
		assert.Contains(t, err.Error(), "Fix:")
	}

	for it := uint32(1); it <= 1024; it++ {
		p, err := megakernel.PlanDeviceConvergence(it, 4, 0)
		require.NoError(t, err)
		require.Equal(t, it, p.MaxDeviceIterations)
		require.Equal(t, uint32(1), p.HostSyncPoints)
		require.Equal(t, uint32(4), p.ChangedFlagReadbackBytes)
		require.Zero(t, p.HostIterationPolls)
		require.Equal(t, megakernel.FinalFlagOnly, p.ReadbackPolicy)
	}
	assert.Equal(t, "FinalFlagOnly", megakernel.FinalFlagOnly.String())
}

func ExamplePlanDeviceConvergence() {
	p, err := megakernel.PlanDeviceConvergence(128, 4, 0)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(p.MaxDeviceIterations, p.HostSyncPoints, p.ChangedFlagReadbackBytes, p.ReadbackPolicy)
	_, err = megakernel.PlanDeviceConvergence(8, 4, 8)
	fmt.Println(err)
	// Output:
	// 128 1 4 FinalFlagOnly
	// host_iteration_polls is 8 but the host may never poll per iteration. Fix: request 0 polls and read the changed flag once after the device loop
}
