package occupancy

import (
	"fmt"
	"slices"
	"strings"
)

// Profile is one built-in device profile: a short name for the command line,
// its aliases, and the Device it describes.
type Profile struct {
	// Short is the canonical short name, for example "h100-sxm".
	Short string `json:"short"`
	// Aliases are other accepted names (matched case-insensitively).
	Aliases []string `json:"aliases,omitempty"`
	// Note explains where unusual numbers come from; empty when the profile
	// is NVIDIA's published data.
	Note string `json:"note,omitempty"`
	// Synthetic marks a profile that is not a real part's limits (vyre's
	// RTX 5090); Closest never picks it.
	Synthetic bool `json:"synthetic,omitempty"`
	// Device is the profile itself.
	Device Device `json:"device"`
}

// BlackwellSM120DefaultMemoryBytes is vyre's default RTX 5090 memory size
// (BLACKWELL_SM120_DEFAULT_MEMORY_BYTES, 32 GiB).
const BlackwellSM120DefaultMemoryBytes int64 = 32 << 30

// Common CUDA launch limits shared by every sm_70+ part.
var (
	defaultMaxGridDim  = [3]int64{2147483647, 65535, 65535}
	defaultMaxBlockDim = [3]int{1024, 1024, 64}
)

const (
	kib = 1024
	mib = 1024 * 1024
)

// archLimits are the per-architecture occupancy limits NVIDIA documents
// (the CUDA programming guide's table of compute capabilities).
type archLimits struct {
	major, minor      int
	threadsPerSM      int
	blocksPerSM       int
	smemPerSM         int
	smemOptIn         int
	reserved          int
	granularity       int
	carveoutsKiB      []int
	registersPerSM    int
	registersPerBlock int
}

// arch returns the occupancy row for compute capability major.minor. Every
// call returns fresh slices, so callers may modify the result.
func arch(major, minor int) archLimits {
	hopper := []int{0, 8, 16, 32, 64, 100, 132, 164, 196, 228}
	a := archLimits{major: major, minor: minor, registersPerSM: 65536, registersPerBlock: 65536}
	switch {
	case major == 7 && minor == 0:
		a.threadsPerSM, a.blocksPerSM, a.smemPerSM, a.smemOptIn, a.reserved, a.granularity = 2048, 32, 96*kib, 96*kib, 0, 256
		a.carveoutsKiB = []int{0, 8, 16, 32, 64, 96}
	case major == 7 && minor == 5:
		a.threadsPerSM, a.blocksPerSM, a.smemPerSM, a.smemOptIn, a.reserved, a.granularity = 1024, 16, 64*kib, 64*kib, 0, 256
		a.carveoutsKiB = []int{32, 64}
	case major == 8 && minor == 0:
		a.threadsPerSM, a.blocksPerSM, a.smemPerSM, a.smemOptIn, a.reserved, a.granularity = 2048, 32, 164*kib, 163*kib, 1*kib, 128
		a.carveoutsKiB = []int{0, 8, 16, 32, 64, 100, 132, 164}
	case major == 8 && minor == 6:
		a.threadsPerSM, a.blocksPerSM, a.smemPerSM, a.smemOptIn, a.reserved, a.granularity = 1536, 16, 100*kib, 99*kib, 1*kib, 128
		a.carveoutsKiB = []int{0, 8, 16, 32, 64, 100}
	case major == 8 && minor == 9:
		a.threadsPerSM, a.blocksPerSM, a.smemPerSM, a.smemOptIn, a.reserved, a.granularity = 1536, 24, 100*kib, 99*kib, 1*kib, 128
		a.carveoutsKiB = []int{0, 8, 16, 32, 64, 100}
	case major == 9 || major == 10:
		a.threadsPerSM, a.blocksPerSM, a.smemPerSM, a.smemOptIn, a.reserved, a.granularity = 2048, 32, 228*kib, 227*kib, 1*kib, 128
		a.carveoutsKiB = hopper
	case major == 12:
		a.threadsPerSM, a.blocksPerSM, a.smemPerSM, a.smemOptIn, a.reserved, a.granularity = 1536, 24, 128*kib, 99*kib, 1*kib, 128
		a.carveoutsKiB = []int{0, 8, 16, 32, 64, 100}
	}
	return a
}

// part describes the per-product numbers of one built-in profile.
type part struct {
	name         string
	major, minor int
	sms          int
	l2           int64
	memory       int64
	busBits      int
	memClockKHz  int64
	asyncEngines int
}

func (p part) device() Device {
	a := arch(p.major, p.minor)
	return Device{
		Name:                    p.name,
		Major:                   p.major,
		Minor:                   p.minor,
		SMCount:                 p.sms,
		WarpSize:                32,
		MaxThreadsPerBlock:      1024,
		MaxThreadsPerSM:         a.threadsPerSM,
		MaxBlocksPerSM:          a.blocksPerSM,
		RegistersPerSM:          a.registersPerSM,
		RegistersPerBlock:       a.registersPerBlock,
		RegistersPerThread:      255,
		RegisterAllocUnit:       256,
		SubPartitions:           4,
		SharedMemPerSM:          a.smemPerSM,
		SharedMemPerBlock:       48 * kib,
		SharedMemPerBlockOptIn:  a.smemOptIn,
		ReservedSharedMemPerBlk: a.reserved,
		SharedMemAllocUnit:      a.granularity,
		SharedMemCarveoutsKiB:   a.carveoutsKiB,
		L2Bytes:                 p.l2,
		TotalMemoryBytes:        p.memory,
		MemoryBusBits:           p.busBits,
		MemoryClockKHz:          p.memClockKHz,
		CooperativeLaunch:       true,
		ConcurrentKernels:       true,
		AsyncEngines:            p.asyncEngines,
		MaxGridDim:              defaultMaxGridDim,
		MaxBlockDim:             defaultMaxBlockDim,
	}
}

// Blackwell5090 returns vyre's synthetic RTX 5090 profile
// (blackwell_sm120_caps) with the given total memory. Its 20 vyre fields are
// exactly vyre's, so vyre's test vectors port unchanged:
// 170 SMs, cc 12.0, 2048 threads per SM, 65,536 registers per SM and per
// block, 128 KiB shared memory per block and 256 KiB per SM, 96 MiB L2, a
// 512-bit bus at 14,000,000 kHz, cooperative launch and concurrent kernels,
// two async engines.
//
// vyre's numbers are not the CUDA sm_120 limits (those are 1536
// threads and 128 KiB shared memory per SM, 99 KiB opt-in per block); use
// the "rtx5090-sm120" profile for those. The fields vyre does not have are
// filled from the sm_120 row: 24 blocks per SM, 255 registers per thread,
// 256-register allocation unit, 4 sub-partitions, 1 KiB reserved and 128 B
// granularity. The opt-in per-block limit equals vyre's per-block limit and
// the carveout list is empty, so the exact model uses the whole 256 KiB per
// SM.
func Blackwell5090(totalMemory int64) Device {
	return Device{
		Name:                    "NVIDIA GeForce RTX 5090",
		Ordinal:                 0,
		Major:                   12,
		Minor:                   0,
		SMCount:                 170,
		WarpSize:                32,
		MaxThreadsPerBlock:      1024,
		MaxThreadsPerSM:         2048,
		MaxBlocksPerSM:          24,
		RegistersPerSM:          65536,
		RegistersPerBlock:       65536,
		RegistersPerThread:      255,
		RegisterAllocUnit:       256,
		SubPartitions:           4,
		SharedMemPerSM:          256 * kib,
		SharedMemPerBlock:       128 * kib,
		SharedMemPerBlockOptIn:  128 * kib,
		ReservedSharedMemPerBlk: 1 * kib,
		SharedMemAllocUnit:      128,
		SharedMemCarveoutsKiB:   nil,
		L2Bytes:                 96 * mib,
		TotalMemoryBytes:        totalMemory,
		MemoryBusBits:           512,
		MemoryClockKHz:          14_000_000,
		CooperativeLaunch:       true,
		ConcurrentKernels:       true,
		AsyncEngines:            2,
		MaxGridDim:              defaultMaxGridDim,
		MaxBlockDim:             defaultMaxBlockDim,
	}
}

// Blackwell5090Default returns vyre's default RTX 5090 profile
// (blackwell_sm120_caps_default): Blackwell5090 with 32 GiB.
func Blackwell5090Default() Device {
	return Blackwell5090(BlackwellSM120DefaultMemoryBytes)
}

// Profiles returns the built-in device profiles in a stable order (by
// architecture, then product). Every call returns fresh values: callers may
// modify them freely.
//
// Sources: NVIDIA datasheets for SM count, L2, memory size, bus width and
// memory clock (the clock as the driver reports it, so
// Device.BandwidthBytesPerSec lands on the datasheet bandwidth); the
// per-architecture occupancy limits NVIDIA documents. Memory sizes are the
// totals nvidia-smi prints (MiB), except the H200's, which is
// cuDeviceTotalMem on a live H200; every other H200 attribute was checked
// against that device too (TestExactModelMatchesDriver). Async engine counts
// are informational and not used by any model.
func Profiles() []Profile {
	ps := []Profile{
		{Short: "v100", Aliases: []string{"v100-sxm2", "v100-sxm2-32gb", "v100-32gb"},
			Device: part{"Tesla V100-SXM2-32GB", 7, 0, 80, 6 * mib, 32768 * mib, 4096, 877_000, 6}.device()},
		{Short: "t4", Aliases: []string{"tesla-t4"},
			Device: part{"Tesla T4", 7, 5, 40, 4 * mib, 16384 * mib, 256, 5_001_000, 3}.device()},
		{Short: "a10", Aliases: []string{"nvidia-a10"},
			Device: part{"NVIDIA A10", 8, 6, 72, 6 * mib, 24576 * mib, 384, 6_251_000, 2}.device()},
		{Short: "a100-40gb", Aliases: []string{"a100-sxm4-40gb", "a100-40g"},
			Device: part{"NVIDIA A100-SXM4-40GB", 8, 0, 108, 40 * mib, 40960 * mib, 5120, 1_215_000, 3}.device()},
		{Short: "a100-80gb", Aliases: []string{"a100", "a100-sxm", "a100-sxm4-80gb", "a100-80g"},
			Device: part{"NVIDIA A100-SXM4-80GB", 8, 0, 108, 40 * mib, 81920 * mib, 5120, 1_593_000, 3}.device()},
		{Short: "l4", Aliases: []string{"nvidia-l4"},
			Device: part{"NVIDIA L4", 8, 9, 58, 48 * mib, 23034 * mib, 192, 6_251_000, 2}.device()},
		{Short: "l40s", Aliases: []string{"nvidia-l40s"},
			Device: part{"NVIDIA L40S", 8, 9, 142, 96 * mib, 46068 * mib, 384, 9_001_000, 2}.device()},
		{Short: "rtx4090", Aliases: []string{"4090", "rtx-4090", "geforce-rtx-4090"},
			Device: part{"NVIDIA GeForce RTX 4090", 8, 9, 128, 72 * mib, 24564 * mib, 384, 10_501_000, 2}.device()},
		{Short: "h100-sxm", Aliases: []string{"h100", "h100-sxm5", "h100-sxm5-80gb", "h100-80gb-hbm3"},
			Device: part{"NVIDIA H100 80GB HBM3", 9, 0, 132, 50 * mib, 81559 * mib, 5120, 2_619_000, 3}.device()},
		{Short: "h100-pcie", Aliases: []string{"h100-pcie-80gb"},
			Device: part{"NVIDIA H100 PCIe", 9, 0, 114, 50 * mib, 81559 * mib, 5120, 1_593_000, 3}.device()},
		{Short: "h200", Aliases: []string{"h200-sxm", "h200-sxm-141gb", "h200-141gb"},
			Device: part{"NVIDIA H200", 9, 0, 132, 60 * mib, 150_109_880_320, 6016, 3_201_000, 3}.device()},
		{Short: "b200", Aliases: []string{"b200-sxm", "b200-180gb"},
			Note:   "cc 10.0 limits are NVIDIA's documented ones, not yet checked on a live device; check them with gpuplan devices --probe",
			Device: part{"NVIDIA B200", 10, 0, 148, 126 * mib, 183359 * mib, 8192, 3_996_000, 4}.device()},
		{Short: "rtx5090", Aliases: []string{"5090", "rtx-5090", "blackwell-sm120", "vyre-rtx5090"},
			Synthetic: true,
			Note:      "vyre's synthetic blackwell_sm120_caps (2048 threads and 256 KiB shared memory per SM); see rtx5090-sm120 for the CUDA sm_120 limits",
			Device:    Blackwell5090Default()},
		{Short: "rtx5090-sm120", Aliases: []string{"rtx5090-cuda", "geforce-rtx-5090"},
			Note:   "cc 12.0 limits are NVIDIA's documented ones, not yet checked on a live device; check them with gpuplan devices --probe",
			Device: part{"NVIDIA GeForce RTX 5090", 12, 0, 170, 96 * mib, 32607 * mib, 512, 14_001_000, 2}.device()},
	}
	return ps
}

// normalizeName folds case and treats spaces and underscores as hyphens.
func normalizeName(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	return strings.NewReplacer(" ", "-", "_", "-").Replace(s)
}

// ProfileNames returns every built-in short name in Profiles order.
func ProfileNames() []string {
	ps := Profiles()
	names := make([]string, len(ps))
	for i, p := range ps {
		names[i] = p.Short
	}
	return names
}

// UnknownDeviceError is returned by Lookup for a name that matches no
// built-in profile. Known lists the short names.
type UnknownDeviceError struct {
	Name  string
	Known []string
}

// Error describes the failure and ends with a "Fix:" sentence.
func (e *UnknownDeviceError) Error() string {
	return fmt.Sprintf("device: unknown device %q; known devices: %s. Fix: use one of the known names or load a custom profile with --device-file",
		e.Name, strings.Join(e.Known, ", "))
}

// LookupProfile finds a built-in profile by short name or alias,
// case-insensitively (spaces and underscores count as hyphens).
func LookupProfile(name string) (Profile, error) {
	key := normalizeName(name)
	ps := Profiles()
	for _, p := range ps {
		if key == p.Short || slices.Contains(p.Aliases, key) {
			return p, nil
		}
	}
	return Profile{}, &UnknownDeviceError{Name: name, Known: ProfileNames()}
}

// Lookup returns the Device of the built-in profile called name (short name,
// alias, case-insensitive). An unknown name is an *UnknownDeviceError that
// lists the known names.
func Lookup(name string) (Device, error) {
	p, err := LookupProfile(name)
	if err != nil {
		return Device{}, err
	}
	return p.Device, nil
}
