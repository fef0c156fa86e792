package occupancy

import (
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"strings"
)

// KernelCapabilityMessageVersion prefixes every stable diagnostic message.
const KernelCapabilityMessageVersion = "cuda-kernel-capability-v1"

// CudaKernelDeviceEnvelope is what a kernel launch is checked against (vyre's
// CudaKernelDeviceEnvelope).
type CudaKernelDeviceEnvelope struct {
	SMMajor                   uint16 `json:"sm_major"`
	SMMinor                   uint16 `json:"sm_minor"`
	MaxThreadsPerBlock        uint32 `json:"max_threads_per_block"`
	SharedMemoryPerBlockBytes uint64 `json:"shared_memory_per_block_bytes"`
	SupportsCooperativeLaunch bool   `json:"supports_cooperative_launch"`
	SupportsTensorCores       bool   `json:"supports_tensor_cores"`
}

// EnvelopeFromDevice builds the launch envelope of d. The shared memory limit
// is the per-block default, or the opt-in maximum when optIn is set (a
// kernel that raised its dynamic shared memory attribute). Out-of-range
// values (never in a valid Device) become 0.
func EnvelopeFromDevice(d Device, optIn bool) CudaKernelDeviceEnvelope {
	u16 := func(v int) uint16 {
		if v < 0 || v > math.MaxUint16 {
			return 0
		}
		return uint16(v)
	}
	smem := d.SharedMemPerBlock
	if optIn {
		smem = d.SharedMemPerBlockOptIn
	}
	if smem < 0 {
		smem = 0
	}
	return CudaKernelDeviceEnvelope{
		SMMajor:                   u16(d.Major),
		SMMinor:                   u16(d.Minor),
		MaxThreadsPerBlock:        capU32(d.MaxThreadsPerBlock),
		SharedMemoryPerBlockBytes: uint64(smem),
		SupportsCooperativeLaunch: d.CooperativeLaunch,
		SupportsTensorCores:       d.HasTensorCores(),
	}
}

// CudaKernelRequirement is what a kernel needs (vyre's
// CudaKernelRequirement).
type CudaKernelRequirement struct {
	MinSMMajor                 uint16 `json:"min_sm_major"`
	MinSMMinor                 uint16 `json:"min_sm_minor"`
	RequestedThreadsPerBlock   uint32 `json:"requested_threads_per_block"`
	RequestedSharedMemoryBytes uint64 `json:"requested_shared_memory_bytes"`
	RequiresCooperativeLaunch  bool   `json:"requires_cooperative_launch"`
	RequiresTensorCores        bool   `json:"requires_tensor_cores"`
}

// LaunchFailureKind names one failed capability check.
type LaunchFailureKind int

// The failure kinds, in the order DiagnoseKernelLaunch checks them.
const (
	FailureSMVersion LaunchFailureKind = iota
	FailureThreadsPerBlock
	FailureSharedMemory
	FailureCooperativeLaunch
	FailureTensorCores
)

// KernelLaunchFailure is one failed check. Required*/Actual* are set for
// FailureSMVersion; Requested and Maximum for the threads and shared-memory
// failures.
type KernelLaunchFailure struct {
	Kind                         LaunchFailureKind `json:"-"`
	RequiredMajor, RequiredMinor uint16            `json:"-"`
	ActualMajor, ActualMinor     uint16            `json:"-"`
	Requested, Maximum           uint64            `json:"-"`
}

// String formats the failure as it appears in the stable message, for
// example "threads_per_block(requested=1024,max=512)".
func (f KernelLaunchFailure) String() string {
	switch f.Kind {
	case FailureSMVersion:
		return fmt.Sprintf("sm_version(required=%d.%d,actual=%d.%d)", f.RequiredMajor, f.RequiredMinor, f.ActualMajor, f.ActualMinor)
	case FailureThreadsPerBlock:
		return fmt.Sprintf("threads_per_block(requested=%d,max=%d)", f.Requested, f.Maximum)
	case FailureSharedMemory:
		return fmt.Sprintf("shared_memory(requested=%d,max=%d)", f.Requested, f.Maximum)
	case FailureCooperativeLaunch:
		return "cooperative_launch"
	case FailureTensorCores:
		return "tensor_cores"
	}
	return "unknown"
}

// MarshalText encodes the failure as its String form.
func (f KernelLaunchFailure) MarshalText() ([]byte, error) { return []byte(f.String()), nil }

// KernelLaunchDiagnostic is the result of DiagnoseKernelLaunch.
type KernelLaunchDiagnostic struct {
	Kernel   string                `json:"kernel"`
	Failures []KernelLaunchFailure `json:"failures"`
}

// OK reports that every check passed.
func (d KernelLaunchDiagnostic) OK() bool { return len(d.Failures) == 0 }

// Message is the stable, byte-for-byte message:
// "cuda-kernel-capability-v1|kernel=<name>|status=ok", or
// "...|status=blocked|fix=" followed by the failures joined by commas.
func (d KernelLaunchDiagnostic) Message() string {
	var b strings.Builder
	d.appendMessage(&b)
	return b.String()
}

func (d KernelLaunchDiagnostic) appendMessage(b *strings.Builder) {
	b.WriteString(KernelCapabilityMessageVersion)
	b.WriteString("|kernel=")
	b.WriteString(d.Kernel)
	if d.OK() {
		b.WriteString("|status=ok")
		return
	}
	b.WriteString("|status=blocked|fix=")
	for i, f := range d.Failures {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(f.String())
	}
}

// DiagnoseKernelLaunch is vyre's diagnose_cuda_kernel_launch: it records
// every failing check, in order: sm version (compared as a (major, minor)
// tuple), threads per block, shared memory, cooperative launch, tensor
// cores.
func DiagnoseKernelLaunch(kernel string, dev CudaKernelDeviceEnvelope, req CudaKernelRequirement) KernelLaunchDiagnostic {
	d := KernelLaunchDiagnostic{Kernel: kernel}
	if dev.SMMajor < req.MinSMMajor || (dev.SMMajor == req.MinSMMajor && dev.SMMinor < req.MinSMMinor) {
		d.Failures = append(d.Failures, KernelLaunchFailure{Kind: FailureSMVersion,
			RequiredMajor: req.MinSMMajor, RequiredMinor: req.MinSMMinor, ActualMajor: dev.SMMajor, ActualMinor: dev.SMMinor})
	}
	if req.RequestedThreadsPerBlock > dev.MaxThreadsPerBlock {
		d.Failures = append(d.Failures, KernelLaunchFailure{Kind: FailureThreadsPerBlock,
			Requested: uint64(req.RequestedThreadsPerBlock), Maximum: uint64(dev.MaxThreadsPerBlock)})
	}
	if req.RequestedSharedMemoryBytes > dev.SharedMemoryPerBlockBytes {
		d.Failures = append(d.Failures, KernelLaunchFailure{Kind: FailureSharedMemory,
			Requested: req.RequestedSharedMemoryBytes, Maximum: dev.SharedMemoryPerBlockBytes})
	}
	if req.RequiresCooperativeLaunch && !dev.SupportsCooperativeLaunch {
		d.Failures = append(d.Failures, KernelLaunchFailure{Kind: FailureCooperativeLaunch})
	}
	if req.RequiresTensorCores && !dev.SupportsTensorCores {
		d.Failures = append(d.Failures, KernelLaunchFailure{Kind: FailureTensorCores})
	}
	return d
}

// CudaKernelLaunchShape is a concrete launch (vyre's launch shape).
type CudaKernelLaunchShape struct {
	Grid                     [3]uint32 `json:"grid"`
	Block                    [3]uint32 `json:"block"`
	DynamicSharedMemoryBytes uint32    `json:"dynamic_shared_memory_bytes"`
	Cooperative              bool      `json:"cooperative"`
	RequiresTensorCores      bool      `json:"requires_tensor_cores"`
}

// KernelLaunchShapeDiagnostic is the result of DiagnoseKernelLaunchShape.
type KernelLaunchShapeDiagnostic struct {
	Capability      KernelLaunchDiagnostic `json:"capability"`
	Shape           CudaKernelLaunchShape  `json:"shape"`
	GridBlocks      uint64                 `json:"grid_blocks"`
	ThreadsPerBlock uint32                 `json:"threads_per_block"`
	// CooperativeResidentBlockLimit is the limit passed in, if any.
	CooperativeResidentBlockLimit *uint64 `json:"cooperative_resident_block_limit,omitempty"`
}

// IsLaunchable reports no capability failures and, when a residency limit
// was given, GridBlocks within it.
func (s KernelLaunchShapeDiagnostic) IsLaunchable() bool {
	return s.Capability.OK() && (s.CooperativeResidentBlockLimit == nil || s.GridBlocks <= *s.CooperativeResidentBlockLimit)
}

// ResidencyBlocked reports a residency limit that the grid exceeds.
func (s KernelLaunchShapeDiagnostic) ResidencyBlocked() bool {
	return s.CooperativeResidentBlockLimit != nil && s.GridBlocks > *s.CooperativeResidentBlockLimit
}

func dims[T uint32 | int](v [3]T) string {
	return "[" + strconv.FormatUint(uint64(v[0]), 10) + ", " + strconv.FormatUint(uint64(v[1]), 10) + ", " + strconv.FormatUint(uint64(v[2]), 10) + "]"
}

// Message is the capability message followed by
// "|grid=[x, y, z]|block=[x, y, z]|grid_blocks=N|threads_per_block=N|dynamic_shared_bytes=N",
// then "|cooperative_resident_block_limit=L" when a limit was given, then
// "|cooperative_residency=blocked(required=N,limit=L)" when the grid exceeds
// it.
func (s KernelLaunchShapeDiagnostic) Message() string {
	var b strings.Builder
	s.Capability.appendMessage(&b)
	fmt.Fprintf(&b, "|grid=%s|block=%s|grid_blocks=%d|threads_per_block=%d|dynamic_shared_bytes=%d",
		dims(s.Shape.Grid), dims(s.Shape.Block), s.GridBlocks, s.ThreadsPerBlock, s.Shape.DynamicSharedMemoryBytes)
	if l := s.CooperativeResidentBlockLimit; l != nil {
		fmt.Fprintf(&b, "|cooperative_resident_block_limit=%d", *l)
		if s.GridBlocks > *l {
			fmt.Fprintf(&b, "|cooperative_residency=blocked(required=%d,limit=%d)", s.GridBlocks, *l)
		}
	}
	return b.String()
}

// CudaKernelLaunchEnvelopeError is vyre's CudaKernelLaunchEnvelopeError: a
// launch shape whose sizes overflow. Field names the quantity.
type CudaKernelLaunchEnvelopeError struct {
	Field string
	Fix   string
}

// Error describes the failure and ends with a "Fix:" sentence.
func (e *CudaKernelLaunchEnvelopeError) Error() string {
	return fmt.Sprintf("cuda kernel launch envelope: %s overflows. Fix: %s", e.Field, e.Fix)
}

// DiagnoseKernelLaunchShape is vyre's diagnose_cuda_kernel_launch_shape: it
// checks a concrete launch against dev with DiagnoseKernelLaunch (minimum sm
// 0.0, threads = the product of the block dimensions, shared memory = the
// dynamic shared memory, cooperative and tensor-core flags from the shape)
// and, when cooperativeResidentBlockLimit is non-nil, checks the grid's
// block count against it. The block dimensions' product must fit u32 (an
// error naming "threads per block"); the grid's product is computed in u64
// (an error naming "grid blocks" on overflow).
func DiagnoseKernelLaunchShape(kernel string, dev CudaKernelDeviceEnvelope, shape CudaKernelLaunchShape, cooperativeResidentBlockLimit *uint64) (KernelLaunchShapeDiagnostic, error) {
	grid := uint64(shape.Grid[0]) * uint64(shape.Grid[1])
	hi, lo := mul64(grid, uint64(shape.Grid[2]))
	if hi != 0 {
		return KernelLaunchShapeDiagnostic{}, &CudaKernelLaunchEnvelopeError{Field: "grid blocks",
			Fix: "split the launch: the grid's block count must fit 64 bits"}
	}
	grid = lo
	threads := uint64(shape.Block[0]) * uint64(shape.Block[1])
	hi, threads = mul64(threads, uint64(shape.Block[2]))
	if hi != 0 || threads > math.MaxUint32 {
		return KernelLaunchShapeDiagnostic{}, &CudaKernelLaunchEnvelopeError{Field: "threads per block",
			Fix: "use block dimensions whose product fits 32 bits (at most the device's max threads per block)"}
	}
	req := CudaKernelRequirement{
		RequestedThreadsPerBlock:   uint32(threads),
		RequestedSharedMemoryBytes: uint64(shape.DynamicSharedMemoryBytes),
		RequiresCooperativeLaunch:  shape.Cooperative,
		RequiresTensorCores:        shape.RequiresTensorCores,
	}
	var limit *uint64
	if cooperativeResidentBlockLimit != nil {
		l := *cooperativeResidentBlockLimit
		limit = &l
	}
	return KernelLaunchShapeDiagnostic{
		Capability:                    DiagnoseKernelLaunch(kernel, dev, req),
		Shape:                         shape,
		GridBlocks:                    grid,
		ThreadsPerBlock:               uint32(threads),
		CooperativeResidentBlockLimit: limit,
	}, nil
}

func mul64(a, b uint64) (hi, lo uint64) { return bits.Mul64(a, b) }
