package planners_test

import (
	"fmt"

	"github.com/gpuplan/gpuplan/planners"
)

func ExamplePlanDeviceWorkQueue() {
	plan, err := planners.PlanDeviceWorkQueue(planners.DeviceWorkQueueProfile{
		InitialItems: 256, QueueCapacity: 1024, EntryBytes: 16, ControlBytes: 128,
		BudgetBytes: 32768, HostSync: planners.WorkQueueFinalOnly,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(plan.QueueBytes, plan.ResidentBytes, plan.InitialOccupancyBPS)
	// Output: 16384 16512 2500
}

func ExamplePlanDeviceWorkQueueBackpressure() {
	plan, err := planners.PlanDeviceWorkQueueBackpressure(planners.DeviceWorkQueueProfile{
		QueueCapacity: 65536, EntryBytes: 16, ControlBytes: 128, BudgetBytes: 2 << 20,
	}, 8192)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(plan.Strategy, plan.Chunks, plan.ItemsPerChunk, plan.Queue.ResidentBytes)
	// Output: chunked_resident_drain 8 8192 1048704
}

func ExamplePlanDeviceWorkQueueWithExpansion() {
	plan, err := planners.PlanDeviceWorkQueueWithExpansion(planners.DeviceWorkQueueExpansionProfile{
		InitialItems: 4, ExpansionItems: 12, EntryBytes: 8, ControlBytes: 64, BudgetBytes: 256,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(plan.QueueCapacity, plan.QueueBytes, plan.ResidentBytes, plan.InitialOccupancyBPS)
	// Output: 16 128 192 2500
}

func ExamplePlanDeviceWorkQueue_hostParticipationRejected() {
	_, err := planners.PlanDeviceWorkQueue(planners.DeviceWorkQueueProfile{
		QueueCapacity: 8, EntryBytes: 8, BudgetBytes: 1024, HostSync: planners.WorkQueueHostParticipates,
	})
	fmt.Println(err)
	// Output: host_sync is host_participates: the host must not take part in draining a device work queue. Fix: set host_sync to final_only and read the completion state once after the drain
}
