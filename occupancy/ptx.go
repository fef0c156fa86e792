package occupancy

import "fmt"

// InvalidPTXTargetError reports a target sm that is not a GPU
// architecture (vyre's InvalidPtxTarget).
type InvalidPTXTargetError struct{ TargetSM int }

// Error names the target and ends with a "Fix:" sentence.
func (e *InvalidPTXTargetError) Error() string {
	return fmt.Sprintf("InvalidPtxTarget: target sm_%d is not a GPU architecture. Fix: pass the compute capability as major*10+minor, for example 80 or 90", e.TargetSM)
}

// PTXVersionForTarget returns the PTX ISA version vyre emits for a target
// sm (major*10+minor): 120 and above "8.7", 100 to 119 "8.6", 90 to 99
// "8.0", any other positive target "8.5". Zero or less is an
// *InvalidPTXTargetError.
func PTXVersionForTarget(sm int) (string, error) {
	switch {
	case sm <= 0:
		return "", &InvalidPTXTargetError{TargetSM: sm}
	case sm >= 120:
		return "8.7", nil
	case sm >= 100:
		return "8.6", nil
	case sm >= 90:
		return "8.0", nil
	}
	return "8.5", nil
}
