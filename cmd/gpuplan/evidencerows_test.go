package main

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/gpuplan/gpuplan/evidence"
	"github.com/gpuplan/gpuplan/workloads/harness"
)

// TestEvidenceRow checks that every field of a sample reaches its row.
func TestEvidenceRow(t *testing.T) {
	prov := evidence.Provenance{Version: "v1", Commit: "abc"}
	w := evidence.Workload{Name: "grid-8", Nodes: 64, Edges: 112, Iterations: 15}
	for _, s := range []harness.Sample{
		{Arm: "host-loop", Index: 0, WallNs: 10, DeviceNs: 8, Checksum: "c", TimedUploads: 1, TimedAllocations: 1, TimedHostSyncs: 2},
		{Arm: harness.ArmCopyCeiling, Index: 1, WallNs: 20, DeviceNs: 19, Checksum: "copy", BytesMoved: 1 << 20},
	} {
		assert.Equal(t, evidence.Sample{Provenance: prov, Workload: w, Arm: s.Arm, Index: s.Index, WallNS: s.WallNs, DeviceNS: s.DeviceNs,
			Checksum: s.Checksum, TimedUploads: s.TimedUploads, TimedAllocations: s.TimedAllocations, TimedHostSyncs: s.TimedHostSyncs,
			BytesMoved: s.BytesMoved}, evidenceRow(prov, w, s))
	}
}
