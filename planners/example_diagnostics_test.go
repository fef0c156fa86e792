package planners_test

import (
	"fmt"

	"github.com/gpuplan/gpuplan/planners"
)

func ExamplePlanDiagnosticAggregation() {
	shard := func(id uint32, candidates, emitted uint64) planners.DiagnosticShard {
		return planners.DiagnosticShard{Shard: id, CandidateItems: candidates, EmittedDiagnostics: emitted,
			RawItemBytes: 32, DiagnosticRecordBytes: 24, CounterBytes: 16, SeverityMask: 0b11}
	}
	plan, err := planners.PlanDiagnosticAggregation([]planners.DiagnosticShard{
		shard(2, 2000, 4), shard(1, 1000, 2), shard(3, 4000, 0),
	}, 64, 1024)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range plan.CompactRanges {
		fmt.Printf("shard %d at %d: %d records, %d bytes\n", r.Shard, r.CompactOffset, r.Records, r.Bytes)
	}
	fmt.Println("host", plan.HostReadbackBytes, "raw", plan.RawCandidateReadbackBytes, "ratio", plan.CompressionRatioBPS, "bps")
	// Output:
	// shard 1 at 0: 2 records, 48 bytes
	// shard 2 at 48: 4 records, 96 bytes
	// host 192 raw 224000 ratio 8 bps
}

func ExampleDiagnosticCompressionRatioBPS() {
	fmt.Println(planners.DiagnosticCompressionRatioBPS(192, 224000), planners.DiagnosticCompressionRatioBPS(1<<63, 1))
	// Output: 8 4294967295
}
