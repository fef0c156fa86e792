package harness

import (
	"fmt"
	"slices"

	"github.com/gpuplan/gpuplan/internal/stats"
)

// The benchmark protocol's shared defaults.
const (
	// DefaultSamples is the timed samples per arm of a workload's
	// benchmark, unless the workload sets its own.
	DefaultSamples = 30
	// DefaultCopyBytes sizes each buffer of the copy ceiling.
	DefaultCopyBytes = 1 << 30
	// MinCopySamples is the fewest copy-ceiling samples, whatever the
	// samples per arm: a gate judges no arm on fewer than 10.
	MinCopySamples = 10
	// ArmCopyCeiling names the copy-bandwidth ceiling's samples.
	ArmCopyCeiling = "copy-ceiling"
)

// Sample is one timed sample of one arm of a benchmark: one row of its
// evidence (Evidence).
type Sample struct {
	Arm      string
	Index    uint64
	WallNs   float64
	DeviceNs float64
	// Checksum identifies the sample's checked output: every arm's must be
	// the reference's.
	Checksum string
	// Pollution of the timed region (summed over a sample's runs).
	TimedUploads, TimedAllocations, TimedHostSyncs uint64
	// BytesMoved is set for a bandwidth's samples (the copy ceiling, an
	// exchange): bytes read plus written.
	BytesMoved uint64
}

// Reporting is what a benchmark run reports as it goes; a workload's
// BenchConfig embeds it.
type Reporting struct {
	// Progress, when set, is called after every timed sample.
	Progress func(done, total int, label string)
	// Log, when set, receives one line per step of the protocol.
	Log func(format string, args ...any)
}

// Discard is a log that drops every line.
func Discard(string, ...any) {}

// LogOr returns log, or Discard when log is nil: a benchmark
// configuration's Log default.
func LogOr(log func(format string, args ...any)) func(format string, args ...any) {
	if log == nil {
		return Discard
	}
	return log
}

// ProgressLabel is the label of a timed sample in a progress report:
// "<workload> <arm> sample <smp+1>/<samples>".
func ProgressLabel(workload, arm string, smp, samples int) string {
	return fmt.Sprintf("%s %s sample %d/%d", workload, arm, smp+1, samples)
}

// Interleave takes the timed samples of a benchmark, samples of each arm,
// interleaved: sample smp runs arms[(smp+k) % len(arms)] k-th, so that the
// order rotates every sample and no arm always runs first or after the same
// arm. run takes sample smp of arms[a]; after each, progress (when not nil)
// gets the samples done, their total and the sample's ProgressLabel under
// workload. Interleave stops at the first error.
func Interleave(workload string, arms []string, samples int, progress func(done, total int, label string), run func(smp, a int) error) error {
	total := samples * len(arms)
	for smp := range samples {
		for k := range arms {
			a := (smp + k) % len(arms)
			if err := run(smp, a); err != nil {
				return err
			}
			if progress != nil {
				progress(smp*len(arms)+k+1, total, ProgressLabel(workload, arms[a], smp, samples))
			}
		}
	}
	return nil
}

// Names returns the names of arms, in order, as strings.
func Names[A ~string](arms []A) []string {
	out := make([]string, len(arms))
	for i, a := range arms {
		out[i] = string(a)
	}
	return out
}

// Floor measures the synchronisation floor of a persistent kernel when arms
// holds its arm and steps is not 0: measure(steps) returns the device times
// of launches that each cross steps steps (grid barriers) and do nothing
// else. Floor returns those times and the median time of one step; no
// times when the floor is not measured.
func Floor[A comparable](arms []A, arm A, steps int, measure func(steps int) ([]uint64, error)) (ns []uint64, median float64, err error) {
	if !slices.Contains(arms, arm) || steps == 0 {
		return nil, 0, nil
	}
	if ns, err = measure(steps); err != nil {
		return nil, 0, err
	}
	per := make([]float64, len(ns))
	for i, v := range ns {
		per[i] = float64(v) / float64(steps)
	}
	return ns, stats.Median(per), nil
}
