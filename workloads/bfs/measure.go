package bfs

import (
	"fmt"

	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/internal/kernelabi"
	"github.com/gpuplan/gpuplan/workloads/harness"
)

// BarrierFloor measures the megakernel's synchronisation alone: reps
// cooperative launches, on the megakernel's grid, that each cross levels
// level barriers and do nothing else (after one untimed warm-up launch). It
// returns each launch's device time in ns (the per-level floor is that over
// levels).
func (s *Session) BarrierFloor(levels, reps int) ([]uint64, error) {
	if levels < 1 || reps < 1 {
		return nil, fmt.Errorf("barrier floor of %d levels, %d launches: cross at least one barrier at least once. Fix: pass positive counts", levels, reps)
	}
	cfg := s.plans.MegakernelGrid.Config()
	args := kernelabi.MustArgs(BarrierParams[executor.Buffer]{Ctl: s.buf.ctl, Levels: uint64(levels)})
	return harness.Repeat(reps, func() (uint64, error) {
		if err := s.reset(0); err != nil {
			return 0, err
		}
		t, err := s.x.Launch(s.k.barrier, cfg, args...)
		return t.DeviceNs, err
	})
}

// CopyRun is one timed device-to-device copy.
type CopyRun struct {
	Bytes    uint64 `json:"bytes"` // bytes read plus bytes written
	WallNs   uint64 `json:"wall_ns"`
	DeviceNs uint64 `json:"device_ns"`
}

// CopyCeiling measures the device's copy bandwidth: reps timed copies of
// size bytes (rounded down to 16-byte words) between two scratch buffers,
// after one warm-up copy. Each run counts bytes read plus written. The
// buffers are freed before it returns.
func (s *Session) CopyCeiling(size uint64, reps int) ([]CopyRun, error) {
	n16 := size / 16
	if n16 == 0 || reps < 1 {
		return nil, fmt.Errorf("copy ceiling of %d bytes, %d copies: copy at least 16 bytes at least once. Fix: pass a larger size", size, reps)
	}
	src, err := s.x.Alloc(16 * n16)
	if err != nil {
		return nil, err
	}
	defer s.x.Free(src)
	dst, err := s.x.Alloc(16 * n16)
	if err != nil {
		return nil, err
	}
	defer s.x.Free(dst)
	plan, err := s.x.CooperativeGrid(s.k.copy, 512, 0)
	if err != nil {
		return nil, err
	}
	cfg := plan.Config()
	cfg.Cooperative = false
	args := kernelabi.MustArgs(CopyParams[executor.Buffer]{Src: src, Dst: dst, N16: n16})
	return harness.Repeat(reps, func() (CopyRun, error) {
		t, err := s.x.Launch(s.k.copy, cfg, args...)
		return CopyRun{Bytes: 2 * 16 * n16, WallNs: t.WallNs, DeviceNs: t.DeviceNs}, err
	})
}
