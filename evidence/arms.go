package evidence

import "slices"

// ArmKind says how a report treats an arm.
type ArmKind int

const (
	// ArmTimed is one of gpuplan's execution arms: its time is reported with
	// its speedup over the baseline arm.
	ArmTimed ArmKind = iota
	// ArmExternal is a peer tool (Gunrock, egg, ...) measured beside
	// gpuplan's arms on the same workload. Its time and speedup are
	// reported like a timed arm's, and it is marked as external.
	ArmExternal
	// ArmBandwidth is an arm that records bytes_moved, such as the
	// copy-ceiling: a device-memory bandwidth measurement, reported as
	// bandwidth and never as a speedup (it does not do the workload's work).
	ArmBandwidth
)

// String names the kind as reports print it: "timed", "external" or
// "bandwidth".
func (k ArmKind) String() string {
	switch k {
	case ArmExternal:
		return "external"
	case ArmBandwidth:
		return "bandwidth"
	}
	return "timed"
}

// ExternalArms lists the arm names that are peer tools rather than
// gpuplan's own execution strategies. Extend this list when a benchmark
// records another peer tool beside gpuplan's arms.
func ExternalArms() []string {
	return []string{"gunrock", "gapbs", "gswitch", "blest", "egg"}
}

// IsExternalArm reports whether arm is one of ExternalArms.
func IsExternalArm(arm string) bool {
	return slices.Contains(ExternalArms(), arm)
}

// ArmLabel is the arm's name as tables and charts print it: external arms
// are marked.
func ArmLabel(arm string, kind ArmKind) string {
	if kind == ArmExternal {
		return arm + " (external)"
	}
	return arm
}
