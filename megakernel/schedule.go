package megakernel

import (
	"fmt"

	"github.com/gpuplan/gpuplan/internal/checked"
)

// InvalidStepError reports a non-finite or negative homotopy step dt
// (vyre's InvalidStep).
type InvalidStepError struct{ Dt float64 }

// Error describes the failure and ends with a "Fix:" sentence.
func (e *InvalidStepError) Error() string {
	return fmt.Sprintf("homotopy step dt = %v is not a finite value >= 0. Fix: pass a step in [0, 1]", e.Dt)
}

// InvalidLaunchOverheadError reports a non-finite or negative launch
// overhead (vyre's InvalidLaunchOverhead).
type InvalidLaunchOverheadError struct{ LaunchOverheadNS float64 }

// Error describes the failure and ends with a "Fix:" sentence.
func (e *InvalidLaunchOverheadError) Error() string {
	return fmt.Sprintf("launch overhead %v ns is not a finite value >= 0. Fix: pass the measured launch overhead in nanoseconds", e.LaunchOverheadNS)
}

// InvalidCostError reports a non-finite or negative dispatch cost in sample
// Index (vyre's InvalidCost).
type InvalidCostError struct {
	Index  int
	CostNS float64
}

// Error describes the failure and ends with a "Fix:" sentence.
func (e *InvalidCostError) Error() string {
	return fmt.Sprintf("schedule sample %d: dispatch_cost_ns %v is not a finite value >= 0. Fix: pass the measured dispatch cost in nanoseconds", e.Index, e.CostNS)
}

// InvalidFrontierDensityError reports a density outside [0, 1] (or
// non-finite) in sample Index (vyre's InvalidFrontierDensity).
type InvalidFrontierDensityError struct {
	Index   int
	Density float64
}

// Error describes the failure and ends with a "Fix:" sentence.
func (e *InvalidFrontierDensityError) Error() string {
	return fmt.Sprintf("schedule sample %d: frontier_density %v is not in [0, 1]. Fix: pass the active fraction of the frontier, between 0 and 1", e.Index, e.Density)
}

// ScheduleFusionPressure is vyre's homotopy fusion-pressure scheduler
// (schedule_megakernel_from_cuda_samples). It returns one fusion pressure in
// [0, 1] per sample. With step = clamp(dt, 0, 1) and, for s = 1..nSteps,
// alpha = s/nSteps, each sample's pressure x moves by step x (alpha x P - x)
// towards its target
//
//	P = clamp(0.55 cost_p (0.65 + 0.35 density) + 0.25 readback_p + 0.15 L/(L+cost) + 0.05 density, 0, 1)
//
// where cost_p and readback_p are normalised by the maxima over the samples.
// All zeros when there are no samples, nSteps is 0, or the maximum cost,
// maximum readback and launch overhead are all 0.
//
// Validation order: *InvalidStepError, *InvalidLaunchOverheadError, then
// *InvalidCostError for the first bad cost, then *InvalidFrontierDensityError
// for the first bad density.
func ScheduleFusionPressure(samples []ScheduleSample, launchOverheadNS float64, nSteps int, dt float64) ([]float64, error) {
	if !checked.Finite(dt) || dt < 0 {
		return nil, &InvalidStepError{Dt: dt}
	}
	if !checked.Finite(launchOverheadNS) || launchOverheadNS < 0 {
		return nil, &InvalidLaunchOverheadError{LaunchOverheadNS: launchOverheadNS}
	}
	var maxCost float64
	var maxRB uint64
	// vyre validates its cost array before its density array.
	for i, s := range samples {
		if !checked.Finite(s.DispatchCostNS) || s.DispatchCostNS < 0 {
			return nil, &InvalidCostError{Index: i, CostNS: s.DispatchCostNS}
		}
	}
	for i, s := range samples {
		if !checked.Finite(s.FrontierDensity) || s.FrontierDensity < 0 || s.FrontierDensity > 1 {
			return nil, &InvalidFrontierDensityError{Index: i, Density: s.FrontierDensity}
		}
		maxCost = max(maxCost, s.DispatchCostNS)
		maxRB = max(maxRB, s.ReadbackBytes)
	}
	out := make([]float64, len(samples))
	if len(samples) == 0 || nSteps <= 0 || (maxCost == 0 && maxRB == 0 && launchOverheadNS == 0) {
		return out, nil
	}
	step := min(max(dt, 0), 1)
	targets := make([]float64, len(samples))
	for i, s := range samples {
		var costP, rbP, launchDom float64
		if maxCost > 0 {
			costP = s.DispatchCostNS / maxCost
		}
		if maxRB > 0 {
			rbP = float64(s.ReadbackBytes) / float64(maxRB)
		}
		if den := launchOverheadNS + s.DispatchCostNS; den > 0 {
			launchDom = checked.Clamp01(launchOverheadNS / den)
		}
		d := s.FrontierDensity
		targets[i] = checked.Clamp01(0.55*costP*(0.65+0.35*d) + 0.25*rbP + 0.15*launchDom + 0.05*d)
	}
	for s := 1; s <= nSteps; s++ {
		alpha := float64(s) / float64(nSteps)
		for i := range out {
			out[i] += step * (alpha*targets[i] - out[i])
		}
	}
	for i := range out {
		out[i] = checked.Clamp01(out[i])
	}
	return out, nil
}
