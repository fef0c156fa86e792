package harness

import (
	"fmt"
	"strings"
	"time"

	"github.com/gpuplan/gpuplan/executor"
)

// ParseArm returns the arm of arms named s. The error of another name
// names the workload (what, "BFS") and lists the arms, in order:
// "unknown BFS arm "x". Fix: use host-loop, device-loop or megakernel".
func ParseArm[A ~string](what string, arms []A, s string) (A, error) {
	names := Names(arms)
	for i, n := range names {
		if n == s {
			return arms[i], nil
		}
	}
	list := strings.Join(names, ", ")
	if k := len(names) - 1; k > 0 {
		list = strings.Join(names[:k], ", ") + " or " + names[k]
	}
	return "", fmt.Errorf("unknown %s arm %q. Fix: use %s", what, s, list)
}

// Checked runs an arm, then, outside its timed region, reads its output
// back and checks the two: it returns the run's result with the run's
// error, or else read's, or else check's.
func Checked[R, O any](run func() (R, error), read func(R) (O, error), check func(R, O) error) (R, error) {
	r, err := run()
	if err != nil {
		return r, err
	}
	out, err := read(r)
	if err != nil {
		return r, err
	}
	return r, check(r, out)
}

// Accounting is what the executor's telemetry says of one arm run: the
// timed region's wall time, launches and pollution, and the whole run's
// control flow.
type Accounting struct {
	// WallNs is the host wall-clock time of the timed region.
	WallNs uint64 `json:"wall_ns"`
	// Launches is the kernel launches of the timed region.
	Launches uint64 `json:"launches"`
	// TimedUploads, TimedAllocations and TimedHostSyncs are the pollution
	// inside the timed region: its input uploads, whether it allocated
	// (0 or 1), and its host syncs beyond the arm's own control flow.
	TimedUploads     uint64 `json:"timed_uploads"`
	TimedAllocations uint64 `json:"timed_allocations"`
	TimedHostSyncs   uint64 `json:"timed_host_syncs"`
	// Syncs, Readbacks and ReadbackBytes are the host syncs, the readback
	// operations and the bytes read back by the whole run, from NewMeter
	// to Finish: its reset, its convergence checks and the read of its
	// result words. A run's output is read separately.
	Syncs         uint64 `json:"syncs"`
	Readbacks     uint64 `json:"readbacks"`
	ReadbackBytes uint64 `json:"readback_bytes"`
}

// Meter accounts one arm run: NewMeter starts it (before the run's reset),
// Time runs and accounts its timed region, and Finish accounts the whole
// run (after the read of its result words).
type Meter struct {
	x     *executor.Executor
	start executor.TelemetrySnapshot
	// Accounting is what the meter has accounted so far.
	Accounting
}

// NewMeter starts accounting an arm run on x.
func NewMeter(x *executor.Executor) *Meter {
	return &Meter{x: x, start: x.Telemetry()}
}

// Time runs the arm's timed region and records its wall time; when the
// region succeeds, also its launches and its pollution. The region returns
// the host syncs its own control flow takes (the host loop's per-step
// readback is the arm, not pollution).
func (m *Meter) Time(region func() (ownSyncs uint64, err error)) error {
	before := m.x.Telemetry()
	t0 := time.Now()
	own, err := region()
	m.WallNs = uint64(time.Since(t0))
	timed := m.x.Telemetry().Sub(before)
	if err != nil {
		return err
	}
	m.Launches = timed.KernelLaunches
	m.TimedUploads = timed.HostUploadOperations
	if timed.ResidentAllocationBytesRequested+timed.TransientAllocationBytesRequested > 0 {
		m.TimedAllocations = 1
	}
	m.TimedHostSyncs = timed.SyncPoints - min(timed.SyncPoints, own)
	return nil
}

// Finish records the whole run's host syncs, readbacks and bytes read back
// since NewMeter, and returns the accounting.
func (m *Meter) Finish() Accounting {
	all := m.x.Telemetry().Sub(m.start)
	m.Syncs, m.Readbacks, m.ReadbackBytes = all.SyncPoints, all.DeviceReadbackOperations, all.DeviceToHostBytes
	return m.Accounting
}

// Repeat runs f reps + 1 times, the first an untimed warm-up whose value it
// drops, and returns the other reps values in order. It stops at the first
// error.
func Repeat[T any](reps int, f func() (T, error)) ([]T, error) {
	out := make([]T, 0, max(reps, 0))
	for i := -1; i < reps; i++ {
		v, err := f()
		if err != nil {
			return nil, err
		}
		if i >= 0 {
			out = append(out, v)
		}
	}
	return out, nil
}

// OverheadLaunches is how many empty launches LaunchOverhead times.
const OverheadLaunches = 64

// Probe is a launch that does no work and the read after it: the host
// loop's step without its work, which LaunchOverhead times.
type Probe struct {
	Kernel *executor.Kernel
	Config executor.LaunchConfig
	Args   []executor.Arg
	// Buffer and Offset locate the read after each launch (a readback and
	// a sync), and Into takes it.
	Buffer executor.Buffer
	Offset uint64
	Into   []byte
}

// LaunchOverhead measures the cost of a launch and a readback that do no
// work: OverheadLaunches launches of p, each with its read, in one
// executor.RunHostLoop. It returns the wall time per launch in ns.
func LaunchOverhead(x *executor.Executor, p Probe) (float64, error) {
	t, err := x.RunHostLoop(func(l *executor.HostLoop) error {
		vals, err := l.Resolve(p.Args)
		if err != nil {
			return err
		}
		for range OverheadLaunches {
			if err := l.Launch(p.Kernel, p.Config, vals); err != nil {
				return err
			}
			if err := l.Read(p.Buffer, p.Offset, p.Into); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("measuring the launch overhead: %w", err)
	}
	return float64(t.WallNs) / OverheadLaunches, nil
}
