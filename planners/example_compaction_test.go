package planners_test

import (
	"fmt"

	"github.com/gpuplan/gpuplan/planners"
)

func ExamplePlanResultCompaction() {
	plan, err := planners.PlanResultCompaction([]planners.ResultSlot{
		{Slot: 2, MeaningfulBytes: 0, CapacityBytes: 128},
		{Slot: 1, MeaningfulBytes: 12, CapacityBytes: 128},
		{Slot: 3, MeaningfulBytes: 24, CapacityBytes: 256},
		{Slot: 4, MeaningfulBytes: 200, CapacityBytes: 256},
	}, 32)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range plan.CompactRecords {
		fmt.Printf("slot %d at %d: %d bytes\n", r.Slot, r.CompactOffset, r.Bytes)
	}
	fmt.Println("direct:", plan.DirectSlots)
	fmt.Println(plan.SelectedReadbackBytes, "of", plan.FullCapacityBytes, "bytes,", plan.AvoidedReadbackBasisPoints, "bps avoided")
	// Output:
	// slot 1 at 0: 12 bytes
	// slot 3 at 12: 24 bytes
	// direct: [4]
	// 236 of 768 bytes, 6927 bps avoided
}
