package occupancy

// Device describes one GPU model (or one live GPU) with everything gpuplan's
// planners need: the occupancy limits, the memory system and the launch
// features. It is a superset of vyre's 20-field CudaDeviceCaps.
//
// Sizes are in bytes, clocks in kHz. JSON field names are the snake_case
// forms shown in the tags; see LoadDeviceJSON for the strict rules a custom
// profile must satisfy.
type Device struct {
	// Name is the marketing name, for example "NVIDIA H100 80GB HBM3".
	Name string `json:"name"`
	// Ordinal is the device index for live devices; 0 for profiles.
	Ordinal int `json:"ordinal"`
	// Major and Minor form the compute capability, for example 9.0.
	Major int `json:"cc_major"`
	Minor int `json:"cc_minor"`

	SMCount            int `json:"sm_count"`
	WarpSize           int `json:"warp_size"`
	MaxThreadsPerBlock int `json:"max_threads_per_block"`
	MaxThreadsPerSM    int `json:"max_threads_per_sm"`
	MaxBlocksPerSM     int `json:"max_blocks_per_sm"`

	RegistersPerSM     int `json:"registers_per_sm"`
	RegistersPerBlock  int `json:"registers_per_block"`
	RegistersPerThread int `json:"registers_per_thread"`
	// RegisterAllocUnit is the per-warp register allocation granularity (256).
	RegisterAllocUnit int `json:"register_alloc_unit"`
	// SubPartitions is the number of warp schedulers per SM (4 on sm_70+).
	SubPartitions int `json:"sub_partitions"`

	SharedMemPerSM          int `json:"shared_mem_per_sm"`
	SharedMemPerBlock       int `json:"shared_mem_per_block"`
	SharedMemPerBlockOptIn  int `json:"shared_mem_per_block_optin"`
	ReservedSharedMemPerBlk int `json:"reserved_shared_mem_per_block"`
	SharedMemAllocUnit      int `json:"shared_mem_alloc_unit"`
	// SharedMemCarveoutsKiB lists the supported shared-memory carveouts in
	// KiB, ascending (for example 0,8,16,32,64,100,132,164,196,228).
	SharedMemCarveoutsKiB []int `json:"shared_mem_carveouts_kib"`

	L2Bytes          int64 `json:"l2_bytes"`
	TotalMemoryBytes int64 `json:"total_memory_bytes"`
	MemoryBusBits    int   `json:"memory_bus_bits"`
	// MemoryClockKHz is the memory clock as the driver reports it
	// (CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE).
	MemoryClockKHz int64 `json:"memory_clock_khz"`

	CooperativeLaunch bool `json:"cooperative_launch"`
	ConcurrentKernels bool `json:"concurrent_kernels"`
	AsyncEngines      int  `json:"async_engines"`

	MaxGridDim  [3]int64 `json:"max_grid_dim"`
	MaxBlockDim [3]int   `json:"max_block_dim"`
}
