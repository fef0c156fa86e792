package occupancy_test

import (
	"fmt"

	"github.com/gpuplan/gpuplan/occupancy"
)

func ExampleCompute() {
	h200, _ := occupancy.Lookup("h200")
	r, err := occupancy.Compute(h200, occupancy.Kernel{RegistersPerThread: 10, DynamicSharedBytes: 20000}, 96)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%d blocks/SM, %d warps/SM, occupancy %.3f, limited by %s\n",
		r.ActiveBlocksPerSM, r.ActiveWarpsPerSM, r.Occupancy, r.Limit)
	// Output: 11 blocks/SM, 33 warps/SM, occupancy 0.516, limited by shared-memory
}

func ExampleMaxPotentialBlockSize() {
	h100, _ := occupancy.Lookup("h100-sxm")
	block, grid, _ := occupancy.MaxPotentialBlockSize(h100, occupancy.Kernel{RegistersPerThread: 255})
	fmt.Println(block, grid)
	// Output: 256 132
}

func ExampleCoResidentGrid() {
	h200, _ := occupancy.Lookup("h200")
	grid, _ := occupancy.CoResidentGrid(h200, occupancy.Kernel{RegistersPerThread: 238}, 128)
	fmt.Println("cooperative grid:", grid, "blocks")
	// Output: cooperative grid: 264 blocks
}

func ExampleLookup() {
	d, err := occupancy.Lookup("H100")
	fmt.Println(d.Name, d.CC(), d.SMCount, err)
	_, err = occupancy.Lookup("gtx480")
	fmt.Println(err != nil)
	// Output:
	// NVIDIA H100 80GB HBM3 9.0 132 <nil>
	// true
}

func ExampleProfiles() {
	for _, p := range occupancy.Profiles()[:3] {
		fmt.Println(p.Short, p.Device.SMCount)
	}
	// Output:
	// v100 80
	// t4 40
	// a10 72
}

func ExampleLoadDeviceJSON() {
	_, err := occupancy.LoadDeviceJSON("mygpu.json", []byte(`{"name": "x", "sm_count": 0}`))
	fmt.Println(err)
	// Output: mygpu.json: field "cc_major": required field is missing. Fix: add "cc_major" to the profile (gpuplan devices --device h100-sxm --json shows a complete profile under "device")
}

func ExampleDevice_BandwidthBytesPerSec() {
	h200, _ := occupancy.Lookup("h200")
	fmt.Printf("%.2f TB/s\n", float64(h200.BandwidthBytesPerSec())/1e12)
	// Output: 4.81 TB/s
}

func ExampleBlackwell5090() {
	d := occupancy.Blackwell5090(512 << 20)
	fmt.Println(d.Name, d.SMCount, d.TotalMemoryBytes)
	// Output: NVIDIA GeForce RTX 5090 170 536870912
}

func ExampleEstimateOccupancy() {
	d := occupancy.Blackwell5090Default()
	e := occupancy.EstimateOccupancy(d, occupancy.KernelResourceUsage{RegsPerThread: 64}, 256)
	fmt.Println(e.BlocksPerSM, e.WarpsPerSM, e.OccupancyBPS)
	// Output: 4 32 5000
}

func ExamplePickWorkgroupSizeForOccupancy() {
	d := occupancy.Blackwell5090Default()
	wg, ok := occupancy.PickWorkgroupSizeForOccupancy(d, occupancy.KernelResourceUsage{RegsPerThread: 16}, []uint32{128, 256, 512})
	fmt.Println(wg, ok)
	// Output: 128 true
}

func ExampleCooperativeThreadResidencyBlockLimit() {
	fmt.Println(occupancy.CooperativeThreadResidencyBlockLimit(occupancy.Blackwell5090Default(), 256))
	// Output: 1360
}

func ExampleCanLaunchConcurrently() {
	d := occupancy.Blackwell5090Default()
	heavy := occupancy.KernelResourceUsage{RegsPerThread: 128}
	dec := occupancy.CanLaunchConcurrently(d, heavy, 512, heavy, 256)
	fmt.Println(dec.Concurrent, dec.Reason)
	// Output: false register-pressure
}

func ExampleDiagnoseKernelLaunch() {
	dev := occupancy.CudaKernelDeviceEnvelope{SMMajor: 8, SMMinor: 6, MaxThreadsPerBlock: 512, SharedMemoryPerBlockBytes: 16384}
	d := occupancy.DiagnoseKernelLaunch("frontier", dev, occupancy.CudaKernelRequirement{MinSMMajor: 9, RequestedThreadsPerBlock: 256})
	fmt.Println(d.Message())
	// Output: cuda-kernel-capability-v1|kernel=frontier|status=blocked|fix=sm_version(required=9.0,actual=8.6)
}

func ExampleDiagnoseKernelLaunchShape() {
	h200, _ := occupancy.Lookup("h200")
	limit := uint64(16)
	d, _ := occupancy.DiagnoseKernelLaunchShape("frontier", occupancy.EnvelopeFromDevice(h200, false),
		occupancy.CudaKernelLaunchShape{Grid: [3]uint32{9, 2, 1}, Block: [3]uint32{128, 2, 1}, Cooperative: true}, &limit)
	fmt.Println(d.Message())
	// Output: cuda-kernel-capability-v1|kernel=frontier|status=ok|grid=[9, 2, 1]|block=[128, 2, 1]|grid_blocks=18|threads_per_block=256|dynamic_shared_bytes=0|cooperative_resident_block_limit=16|cooperative_residency=blocked(required=18,limit=16)
}

func ExampleClosest() {
	live, _ := occupancy.Lookup("h100-sxm")
	live.Name = "NVIDIA H100 80GB HBM3"
	live.SMCount = 114
	p := occupancy.Closest(live)
	fmt.Println(p.Short)
	for _, d := range occupancy.Diff(p.Device, live) {
		fmt.Println(d.Field, d.A, d.B)
	}
	// Output:
	// h100-pcie
	// name NVIDIA H100 PCIe NVIDIA H100 80GB HBM3
	// memory_clock_khz 1593000 2619000
}

func ExampleLookupProfile() {
	// Names match case-insensitively, with spaces and underscores as hyphens.
	p, err := occupancy.LookupProfile("H100 SXM")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(p.Short, p.Device.CC(), p.Device.SMCount)
	_, err = occupancy.LookupProfile("gtx480")
	fmt.Println(err != nil)
	// Output:
	// h100-sxm 9.0 132
	// true
}

func ExampleProfileNames() {
	names := occupancy.ProfileNames()
	fmt.Println(len(names), "profiles, from", names[0], "to", names[len(names)-1])
	// Output: 14 profiles, from v100 to rtx5090-sm120
}

func ExampleDevice_Validate() {
	d, _ := occupancy.Lookup("h100-sxm")
	fmt.Println(d.Validate())
	d.WarpSize = 64
	fmt.Println(d.Validate())
	// Output:
	// <nil>
	// device field "warp_size": is 64, not 32. Fix: set warp_size to 32 (every NVIDIA GPU)
}

func ExampleParseLimit() {
	l, err := occupancy.ParseLimit("registers")
	fmt.Println(l, err)
	_, err = occupancy.ParseLimit("bandwidth")
	fmt.Println(err)
	// Output:
	// registers <nil>
	// occupancy: unknown limit "bandwidth". Fix: use warps, blocks, registers or shared-memory
}
