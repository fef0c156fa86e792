package executor

import (
	"fmt"
	"slices"

	"github.com/gpuplan/gpuplan/occupancy"
)

// ptxFallbackTargets are vyre's PTX targets below the native one, high to
// low.
var ptxFallbackTargets = []int{89, 86, 80, 75, 70}

// PTXTargetCandidates returns the sm targets to probe, high to low: the
// native sm (major*10+minor) first, then 89, 86, 80, 75 and 70, keeping only
// values at or below native and dropping duplicates. A native value of 0 or
// less yields no candidates.
func PTXTargetCandidates(nativeSM int) []int {
	if nativeSM <= 0 {
		return nil
	}
	out := []int{nativeSM}
	for _, t := range ptxFallbackTargets {
		if t <= nativeSM && !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}

// ProbePTX returns the tiny probe kernel vyre JIT-loads to test a target: one
// global atomic add and one bar.sync, with the .version of
// occupancy.PTXVersionForTarget. The entry point is named "gpuplan_ptx_probe".
func ProbePTX(sm int) (string, error) {
	v, err := occupancy.PTXVersionForTarget(sm)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf(`.version %s
.target sm_%d
.address_size 64

.visible .entry gpuplan_ptx_probe(
	.param .u64 gpuplan_ptx_probe_param_0
)
{
	.reg .b32 %%r<3>;
	.reg .b64 %%rd<3>;
	ld.param.u64 %%rd1, [gpuplan_ptx_probe_param_0];
	cvta.to.global.u64 %%rd2, %%rd1;
	mov.u32 %%r1, 1;
	atom.global.add.u32 %%r2, [%%rd2], %%r1;
	bar.sync 0;
	ret;
}
`, v, sm), nil
}

// PTXTargetProbeError lists every candidate that failed to load.
type PTXTargetProbeError struct {
	Failures []string
}

func (e *PTXTargetProbeError) Error() string {
	return fmt.Sprintf("no PTX target loads on this device (tried: %v). Fix: update the NVIDIA driver; it must accept PTX ISA 8.0 or newer.", e.Failures)
}

// SelectPTXTarget probes candidates high to low with load (which JIT-loads
// the probe PTX and unloads it) and returns the first that loads.
func SelectPTXTarget(nativeSM int, load func(ptx string) error) (int, error) {
	var fails []string
	for _, sm := range PTXTargetCandidates(nativeSM) {
		src, err := ProbePTX(sm)
		if err == nil {
			err = load(src)
		}
		if err == nil {
			return sm, nil
		}
		fails = append(fails, fmt.Sprintf("sm_%d: %v", sm, err))
	}
	if len(fails) == 0 {
		fails = append(fails, fmt.Sprintf("native sm %d has no candidates", nativeSM))
	}
	return 0, &PTXTargetProbeError{Failures: fails}
}
