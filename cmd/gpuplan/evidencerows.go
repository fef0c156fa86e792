package main

import (
	"github.com/gpuplan/gpuplan/evidence"
	"github.com/gpuplan/gpuplan/workloads/harness"
)

// evidenceRow returns a workload's sample as an evidence row of workload
// w under the provenance p: every workload's samples map the same way.
func evidenceRow(p evidence.Provenance, w evidence.Workload, s harness.Sample) evidence.Sample {
	return evidence.Sample{Provenance: p, Workload: w, Arm: s.Arm, Index: s.Index, WallNS: s.WallNs, DeviceNS: s.DeviceNs,
		Checksum: s.Checksum, TimedUploads: s.TimedUploads, TimedAllocations: s.TimedAllocations, TimedHostSyncs: s.TimedHostSyncs,
		BytesMoved: s.BytesMoved}
}
