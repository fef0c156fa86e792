package occupancy

import (
	"fmt"
	"math"

	"github.com/gpuplan/gpuplan/internal/strictjson"
)

// InvalidDeviceError reports an impossible value in a Device. Field is the
// JSON name of the offending field.
type InvalidDeviceError struct {
	Field string
	Msg   string
	Fix   string
}

// Error describes the failure and ends with a "Fix:" sentence.
func (e *InvalidDeviceError) Error() string {
	return fmt.Sprintf("device field %q: %s. Fix: %s", e.Field, e.Msg, e.Fix)
}

func invalid(field, fix, format string, args ...any) error {
	return &InvalidDeviceError{Field: field, Msg: fmt.Sprintf(format, args...), Fix: fix}
}

// requiredDeviceFields are the JSON fields a custom profile must give; the
// others are optionalDeviceFields.
var requiredDeviceFields = []string{
	"name", "cc_major", "cc_minor", "sm_count", "warp_size",
	"max_threads_per_block", "max_threads_per_sm", "max_blocks_per_sm",
	"registers_per_sm", "registers_per_block", "registers_per_thread",
	"shared_mem_per_sm", "shared_mem_per_block", "total_memory_bytes",
}

// DefaultedField is an optional field that a custom device profile left
// out (or gave as null), with the default it got.
type DefaultedField struct {
	// Field is the device field's JSON name, for example
	// "memory_clock_khz".
	Field string `json:"field"`
	// Value is the default as the device holds it, for example "256" or
	// "[1024 1024 64]".
	Value string `json:"value"`
	// Meaning says what the default stands for, for example "unknown: no
	// bandwidth estimate".
	Meaning string `json:"meaning"`
}

// optionalField is one optional device field: its JSON name, what its
// default means, and set, which gives d the default (it may read the
// required fields) and returns it.
type optionalField struct {
	name    string
	meaning string
	set     func(d *Device) any
}

// optionalDeviceFields are the fields a custom profile may leave out, in
// Device's order, each with its documented default (see LoadDeviceJSON).
var optionalDeviceFields = []optionalField{
	{"ordinal", "a profile, not a live GPU", func(d *Device) any { d.Ordinal = 0; return d.Ordinal }},
	{"register_alloc_unit", "registers per warp allocation on every current GPU", func(d *Device) any { d.RegisterAllocUnit = 256; return d.RegisterAllocUnit }},
	{"sub_partitions", "warp schedulers per SM on sm_70 and later", func(d *Device) any { d.SubPartitions = 4; return d.SubPartitions }},
	{"shared_mem_per_block_optin", "shared_mem_per_block: no opt-in above the default", func(d *Device) any {
		d.SharedMemPerBlockOptIn = d.SharedMemPerBlock
		return d.SharedMemPerBlockOptIn
	}},
	{"reserved_shared_mem_per_block", "1024 on cc 8.0 and later, 0 before", func(d *Device) any {
		d.ReservedSharedMemPerBlk = 0
		if d.Major >= 8 {
			d.ReservedSharedMemPerBlk = 1024
		}
		return d.ReservedSharedMemPerBlk
	}},
	{"shared_mem_alloc_unit", "128 on cc 8.0 and later, 256 before", func(d *Device) any {
		d.SharedMemAllocUnit = 256
		if d.Major >= 8 {
			d.SharedMemAllocUnit = 128
		}
		return d.SharedMemAllocUnit
	}},
	{"shared_mem_carveouts_kib", "none: the exact model uses the whole shared_mem_per_sm", func(d *Device) any { d.SharedMemCarveoutsKiB = nil; return []int{} }},
	{"l2_bytes", "unknown", func(d *Device) any { d.L2Bytes = 0; return d.L2Bytes }},
	{"memory_bus_bits", "unknown: no bandwidth estimate", func(d *Device) any { d.MemoryBusBits = 0; return d.MemoryBusBits }},
	{"memory_clock_khz", "unknown: no bandwidth estimate", func(d *Device) any { d.MemoryClockKHz = 0; return d.MemoryClockKHz }},
	{"cooperative_launch", "no cooperative launch: no grid-wide barriers", func(d *Device) any { d.CooperativeLaunch = false; return d.CooperativeLaunch }},
	{"concurrent_kernels", "kernels do not run concurrently", func(d *Device) any { d.ConcurrentKernels = false; return d.ConcurrentKernels }},
	{"async_engines", "no copy engine counted", func(d *Device) any { d.AsyncEngines = 0; return d.AsyncEngines }},
	{"max_grid_dim", "every current GPU's grid limits", func(d *Device) any { d.MaxGridDim = defaultMaxGridDim; return d.MaxGridDim }},
	{"max_block_dim", "every current GPU's block limits", func(d *Device) any { d.MaxBlockDim = defaultMaxBlockDim; return d.MaxBlockDim }},
}

// LoadDeviceJSON decodes a custom device profile: a ProfileDocument (an
// object whose "schema" is ProfileSchema, as `gpuplan devices --device NAME
// --json` writes it, with the device under "device"), or the device object
// alone, using the snake_case field names of Device's JSON tags. source
// names the input in error messages (a file name, or "<input>").
//
// Decoding is strict: an unknown field, a type mismatch, trailing data or a
// missing required field is a *strictjson.Error naming the field and the fix,
// and so is an impossible value (see Device.Validate). Required fields: name,
// cc_major, cc_minor, sm_count, warp_size, max_threads_per_block,
// max_threads_per_sm, max_blocks_per_sm, registers_per_sm,
// registers_per_block, registers_per_thread, shared_mem_per_sm,
// shared_mem_per_block and total_memory_bytes.
//
// Every other field is optional, and absent or null it gets its default
// (LoadDeviceJSONDefaults says which did): ordinal 0; register_alloc_unit
// 256; sub_partitions 4; shared_mem_per_block_optin = shared_mem_per_block;
// reserved_shared_mem_per_block 1024 on cc >= 8.0 and 0 before;
// shared_mem_alloc_unit 128 on cc >= 8.0 and 256 before;
// shared_mem_carveouts_kib none (the exact model then uses the whole
// shared_mem_per_sm); l2_bytes 0 (unknown); memory_bus_bits and
// memory_clock_khz 0 (unknown: the bandwidth estimate is 0);
// cooperative_launch and concurrent_kernels false; async_engines 0;
// max_grid_dim [2147483647, 65535, 65535]; max_block_dim [1024, 1024, 64].
func LoadDeviceJSON(source string, data []byte) (Device, error) {
	d, _, err := LoadDeviceJSONDefaults(source, data)
	return d, err
}

// LoadDeviceJSONDefaults is LoadDeviceJSON that also returns the optional
// fields the profile left out, with the defaults they got, in the order of
// Device's fields (none for a complete profile, such as the ones `gpuplan
// devices --json` writes).
func LoadDeviceJSONDefaults(source string, data []byte) (Device, []DefaultedField, error) {
	if source == "" {
		source = "<input>"
	}
	if isProfileDocument(data) {
		return loadProfileDocument(source, data)
	}
	return loadDeviceObject(source, data)
}

// loadDeviceObject decodes a bare device object: the rules of
// LoadDeviceJSON.
func loadDeviceObject(source string, data []byte) (Device, []DefaultedField, error) {
	var d Device
	present := map[string]bool{}
	if err := strictjson.DecodeWith(source, data, &d, strictjson.Options{Present: present, NullIsAbsent: true}); err != nil {
		return Device{}, nil, err
	}
	for _, f := range requiredDeviceFields {
		if !present[f] {
			return Device{}, nil, strictjson.Required(source, f, fmt.Sprintf("add %q to the profile (gpuplan devices --device h100-sxm --json shows a complete profile under \"device\")", f))
		}
	}
	var defaulted []DefaultedField
	for _, f := range optionalDeviceFields {
		if !present[f.name] {
			defaulted = append(defaulted, DefaultedField{Field: f.name, Value: fmt.Sprint(f.set(&d)), Meaning: f.meaning})
		}
	}
	if err := d.Validate(); err != nil {
		ie := err.(*InvalidDeviceError)
		return Device{}, nil, &strictjson.Error{Source: source, Field: ie.Field, Msg: ie.Msg, Fix: ie.Fix}
	}
	return d, defaulted, nil
}

// Validate checks that d describes a possible CUDA device. The first
// impossible value is an *InvalidDeviceError naming the JSON field and the
// fix. Built-in profiles always validate.
func (d Device) Validate() error {
	if err := d.validateMagnitudes(); err != nil {
		return err
	}
	if err := d.validateCompute(); err != nil {
		return err
	}
	if err := d.validateMemory(); err != nil {
		return err
	}
	return d.validateLists()
}

// validateMagnitudes rejects counts and sizes far above any real device,
// before the other checks do arithmetic on them.
func (d *Device) validateMagnitudes() error {
	const big = 1 << 30 // far above any real count; keeps the arithmetic overflow-free
	const bigBytes = 1 << 40
	switch {
	case d.SMCount > big:
		return invalid("sm_count", "give the real SM count", "is %d, above 2^30", d.SMCount)
	case d.MaxThreadsPerSM > big:
		return invalid("max_threads_per_sm", "give the real limit (2048 on sm_90)", "is %d, above 2^30", d.MaxThreadsPerSM)
	case d.MaxThreadsPerBlock > 1<<16:
		return invalid("max_threads_per_block", "give the real limit (1024 on every current GPU)", "is %d, above 65536", d.MaxThreadsPerBlock)
	case d.MaxBlocksPerSM > big:
		return invalid("max_blocks_per_sm", "give the real limit (32 on sm_90)", "is %d, above 2^30", d.MaxBlocksPerSM)
	case d.RegistersPerSM > big:
		return invalid("registers_per_sm", "give the real register file size (65536)", "is %d, above 2^30", d.RegistersPerSM)
	case d.RegisterAllocUnit > big:
		return invalid("register_alloc_unit", "use 256 or omit the field", "is %d, above 2^30", d.RegisterAllocUnit)
	case d.SharedMemPerSM > bigBytes:
		return invalid("shared_mem_per_sm", "give the real shared memory per SM (233472 on sm_90)", "is %d, above 2^40", d.SharedMemPerSM)
	}
	return nil
}

// validateCompute checks the name, the ordinal, the compute capability, the
// thread, block and register limits and the sub-partitions.
func (d *Device) validateCompute() error {
	switch {
	case d.Name == "":
		return invalid("name", "give the device a name such as \"NVIDIA H100 80GB HBM3\"", "is empty")
	case d.Ordinal < 0:
		return invalid("ordinal", "use 0 or the CUDA device index", "is %d, below 0", d.Ordinal)
	case d.Major < 1 || d.Major > 99:
		return invalid("cc_major", "give the compute capability major version, for example 9 for cc 9.0", "is %d, outside 1..99", d.Major)
	case d.Minor < 0 || d.Minor > 9:
		return invalid("cc_minor", "give the compute capability minor version, for example 0 for cc 9.0", "is %d, outside 0..9", d.Minor)
	case d.SMCount < 1:
		return invalid("sm_count", "give the number of streaming multiprocessors (132 on an H100 SXM)", "is %d; a device has at least one SM", d.SMCount)
	case d.WarpSize != 32:
		return invalid("warp_size", "set warp_size to 32 (every NVIDIA GPU)", "is %d, not 32", d.WarpSize)
	case d.MaxThreadsPerSM < 32 || d.MaxThreadsPerSM%32 != 0:
		return invalid("max_threads_per_sm", "give a positive multiple of 32 (2048 on sm_90)", "is %d, not a positive multiple of the warp size", d.MaxThreadsPerSM)
	case d.MaxThreadsPerBlock < 32 || d.MaxThreadsPerBlock%32 != 0:
		return invalid("max_threads_per_block", "give a positive multiple of 32 (1024 on every current GPU)", "is %d, not a positive multiple of the warp size", d.MaxThreadsPerBlock)
	case d.MaxThreadsPerBlock > d.MaxThreadsPerSM:
		return invalid("max_threads_per_block", "lower max_threads_per_block to at most max_threads_per_sm", "is %d, above max_threads_per_sm %d", d.MaxThreadsPerBlock, d.MaxThreadsPerSM)
	case d.MaxBlocksPerSM < 1:
		return invalid("max_blocks_per_sm", "give the architecture's resident block limit (32 on sm_90)", "is %d; at least one block must fit", d.MaxBlocksPerSM)
	case d.RegistersPerSM < 1:
		return invalid("registers_per_sm", "give the register file size in 32-bit registers (65536)", "is %d", d.RegistersPerSM)
	case d.RegistersPerBlock < 1 || d.RegistersPerBlock > d.RegistersPerSM:
		return invalid("registers_per_block", "give a value in 1..registers_per_sm (65536)", "is %d, outside 1..registers_per_sm %d", d.RegistersPerBlock, d.RegistersPerSM)
	case d.RegistersPerThread < 1 || d.RegistersPerThread > 255:
		return invalid("registers_per_thread", "give the per-thread register limit (255 on sm_70+)", "is %d, outside 1..255", d.RegistersPerThread)
	case d.RegisterAllocUnit < 1:
		return invalid("register_alloc_unit", "use 256 (registers per warp allocation unit) or omit the field", "is %d", d.RegisterAllocUnit)
	case d.SubPartitions < 1 || d.SubPartitions > 8:
		return invalid("sub_partitions", "use 4 (sm_70+) or omit the field", "is %d, outside 1..8", d.SubPartitions)
	}
	return nil
}

// validateMemory checks the shared memory sizes and units, the L2 and
// device memory sizes, the memory clock and bus width, and the copy
// engines.
func (d *Device) validateMemory() error {
	switch {
	case d.SharedMemPerSM < 1:
		return invalid("shared_mem_per_sm", "give the shared memory per SM in bytes (233472 on sm_90)", "is %d", d.SharedMemPerSM)
	case d.SharedMemPerBlock < 0 || d.SharedMemPerBlock > d.SharedMemPerSM:
		return invalid("shared_mem_per_block", "give at most shared_mem_per_sm (49152 is the CUDA default)", "is %d, outside 0..shared_mem_per_sm %d", d.SharedMemPerBlock, d.SharedMemPerSM)
	case d.SharedMemPerBlockOptIn < d.SharedMemPerBlock || d.SharedMemPerBlockOptIn > d.SharedMemPerSM:
		return invalid("shared_mem_per_block_optin", "give a value between shared_mem_per_block and shared_mem_per_sm", "is %d, outside %d..%d", d.SharedMemPerBlockOptIn, d.SharedMemPerBlock, d.SharedMemPerSM)
	case d.ReservedSharedMemPerBlk < 0 || d.ReservedSharedMemPerBlk > d.SharedMemPerSM:
		return invalid("reserved_shared_mem_per_block", "use 1024 on sm_80+ and 0 before, or omit the field", "is %d, outside 0..shared_mem_per_sm", d.ReservedSharedMemPerBlk)
	case d.SharedMemAllocUnit < 1 || d.SharedMemAllocUnit > d.SharedMemPerSM:
		return invalid("shared_mem_alloc_unit", "use 128 on sm_80+ and 256 before, or omit the field", "is %d, outside 1..shared_mem_per_sm", d.SharedMemAllocUnit)
	case d.L2Bytes < 0:
		return invalid("l2_bytes", "give the L2 size in bytes or 0 when unknown", "is %d, below 0", d.L2Bytes)
	case d.TotalMemoryBytes < 1:
		return invalid("total_memory_bytes", "give the device memory in bytes", "is %d", d.TotalMemoryBytes)
	case d.MemoryBusBits < 0:
		return invalid("memory_bus_bits", "give the bus width in bits or 0 when unknown", "is %d, below 0", d.MemoryBusBits)
	case d.MemoryClockKHz < 0:
		return invalid("memory_clock_khz", "give the memory clock in kHz or 0 when unknown", "is %d, below 0", d.MemoryClockKHz)
	case d.AsyncEngines < 0:
		return invalid("async_engines", "give the copy engine count or 0", "is %d, below 0", d.AsyncEngines)
	case d.MemoryClockKHz > 0 && d.MemoryBusBits > 0 && !d.bandwidthFits():
		return invalid("memory_clock_khz", "give the memory clock in kHz and the bus width in bits of a real device (2619000 and 5120 on an H100 SXM)",
			"is %d, which with memory_bus_bits %d makes the bandwidth estimate (clock x bits x 250 bytes per second) overflow 63 bits", d.MemoryClockKHz, d.MemoryBusBits)
	}
	return nil
}

// validateLists checks the shared-memory carveout list and the grid and
// block dimension limits, entry by entry.
func (d *Device) validateLists() error {
	prev := -1
	for i, c := range d.SharedMemCarveoutsKiB {
		if c < 0 || c <= prev {
			return invalid(fmt.Sprintf("shared_mem_carveouts_kib[%d]", i), "list the supported carveouts in KiB in strictly ascending order", "entry %d (%d) is negative or not ascending", i, c)
		}
		if c > d.SharedMemPerSM/1024 {
			return invalid(fmt.Sprintf("shared_mem_carveouts_kib[%d]", i), "drop carveouts larger than shared_mem_per_sm", "entry %d (%d KiB) exceeds shared_mem_per_sm (%d B)", i, c, d.SharedMemPerSM)
		}
		prev = c
	}
	for i, g := range d.MaxGridDim {
		if g < 1 || g > math.MaxInt32 {
			return invalid(fmt.Sprintf("max_grid_dim[%d]", i), "use [2147483647, 65535, 65535] or omit the field", "entry %d is %d, outside 1..2147483647", i, g)
		}
	}
	for i, b := range d.MaxBlockDim {
		if b < 1 || b > d.MaxThreadsPerBlock {
			return invalid(fmt.Sprintf("max_block_dim[%d]", i), "use [1024, 1024, 64] or omit the field", "entry %d is %d, outside 1..max_threads_per_block", i, b)
		}
	}
	return nil
}

// DDRFactor is the number of transfers per memory clock used by
// BandwidthBytesPerSec. The driver reports the memory clock such that
// 2 x clock x bus width matches NVIDIA's datasheet bandwidth for HBM2,
// HBM2e, HBM3, HBM3e, GDDR6, GDDR6X and GDDR7 parts alike (for example the
// H100 SXM's 2,619 MHz on 5,120 bits gives 3.35 TB/s and the H200's
// 3,201 MHz on 6,016 bits gives 4.81 TB/s).
const DDRFactor = 2

// BandwidthBytesPerSec estimates the peak memory bandwidth as
// DDRFactor x MemoryClockKHz x 1000 x MemoryBusBits / 8 bytes per second.
// It returns 0 when the clock or bus width is unknown (0 or negative) or
// when the product would overflow int64 (no real device comes close).
func (d Device) BandwidthBytesPerSec() int64 {
	bw, _ := d.bandwidth()
	return bw
}

// bandwidthFits reports whether the bandwidth estimate fits an int64.
func (d *Device) bandwidthFits() bool {
	_, ok := d.bandwidth()
	return ok
}

func (d *Device) bandwidth() (int64, bool) {
	if d.MemoryClockKHz <= 0 || d.MemoryBusBits <= 0 {
		return 0, false
	}
	// clockKHz*1000*2*bits/8 = clockKHz*bits*250.
	hz := uint64(d.MemoryClockKHz)
	bits := uint64(d.MemoryBusBits)
	if hz > math.MaxInt64/250/bits {
		return 0, false
	}
	return int64(hz * bits * 250), true
}

// HasTensorCores reports whether the device has tensor cores (cc 7.0 and
// later, every part gpuplan profiles).
func (d Device) HasTensorCores() bool { return d.Major >= 7 }

// CC returns the compute capability as "major.minor".
func (d Device) CC() string { return fmt.Sprintf("%d.%d", d.Major, d.Minor) }
