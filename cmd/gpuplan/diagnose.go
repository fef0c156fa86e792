package main

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/gpuplan/gpuplan/internal/quote"
	"github.com/gpuplan/gpuplan/occupancy"
)

const diagnoseAbout = `
Check a kernel launch shape against a device and print vyre's stable
capability message (cuda-kernel-capability-v1|kernel=...|status=ok or
status=blocked|fix=..., then the launch shape). The checks, in order: the
required sm version, threads per block, dynamic shared memory per block
(the 48 KiB default limit, or the opt-in maximum with --opt-in),
cooperative launch, tensor cores.

With --cooperative the grid must also be co-resident: given --regs, the
limit is the exact occupancy model's blocks per SM x SMs; without --regs it
is vyre's thread-only bound (max threads per SM / block x SMs), which
ignores registers and shared memory.

Exit status: 0 when the launch is possible, 1 when it is blocked.

Examples:
  gpuplan diagnose --device h200 --kernel frontier --grid 264 --block 128 --cooperative --regs 238
  gpuplan diagnose --device a10 --grid 9,2 --block 128,2 --dyn 65536 --min-sm 9.0
`

// diagnoseOutput is the JSON form of a diagnosis.
type diagnoseOutput struct {
	Device                        string   `json:"device"`
	Message                       string   `json:"message"`
	Launchable                    bool     `json:"launchable"`
	CapabilityStatus              string   `json:"capability_status"`
	Failures                      []string `json:"failures"`
	GridBlocks                    uint64   `json:"grid_blocks"`
	ThreadsPerBlock               uint32   `json:"threads_per_block"`
	CooperativeResidentBlockLimit *uint64  `json:"cooperative_resident_block_limit,omitempty"`
	LimitSource                   string   `json:"limit_source,omitempty"`
}

// launchVerdict lists what blocks a diagnosed launch: the capability
// failures (the message's fix= field) and, apart from them, a grid that is
// not co-resident (its cooperative_residency= field). The message's
// status= covers the capability checks alone, so status=ok can sit beside
// a blocked residency; the verdict is what decides the exit status.
func launchVerdict(diag occupancy.KernelLaunchShapeDiagnostic) []string {
	failures := make([]string, 0, len(diag.Capability.Failures)+1)
	for _, fl := range diag.Capability.Failures {
		failures = append(failures, fl.String())
	}
	if diag.ResidencyBlocked() {
		failures = append(failures, fmt.Sprintf("cooperative_residency(required=%d,limit=%d)", diag.GridBlocks, *diag.CooperativeResidentBlockLimit))
	}
	return failures
}

// blockedError makes diagnose exit 1 after printing a blocked launch; it
// names the fields of the message that say why.
func blockedError(diag occupancy.KernelLaunchShapeDiagnostic, failures []string) error {
	var where, fix []string
	if !diag.Capability.OK() {
		where = append(where, "fix=")
		fix = append(fix, "change the launch shape or pick a device that meets the requirements")
	}
	if diag.ResidencyBlocked() {
		where = append(where, "cooperative_residency=")
		fix = append(fix, fmt.Sprintf("launch at most %d blocks, or use fewer registers or less shared memory per block so more blocks fit on an SM", *diag.CooperativeResidentBlockLimit))
	}
	return fmt.Errorf("the kernel launch is blocked by %s (see the message's %s field). Fix: %s",
		strings.Join(failures, ", "), strings.Join(where, " and "), strings.Join(fix, "; "))
}

func runDiagnose(e *env, args []string) error {
	f := e.newFlags("diagnose", "diagnose (--device NAME | --device-file FILE) --grid X[,Y[,Z]] --block X[,Y[,Z]] [--dyn D] [--opt-in] [--cooperative [--regs R]] [--tensor-cores] [--min-sm M.m] [--kernel NAME] [--json]", diagnoseAbout)
	var df deviceFlags
	df.add(f)
	var kf kernelFlags
	kf.add(f, "dynamic shared memory per block in bytes (checked against the per-block limit)")
	kernel := f.String("kernel", "kernel", "kernel name in the message")
	gridS := f.String("grid", "", "grid dimensions X[,Y[,Z]] in blocks")
	blockS := f.String("block", "", "block dimensions X[,Y[,Z]] in threads")
	coop := f.Bool("cooperative", false, "the launch is cooperative: the grid must be co-resident")
	tensor := f.Bool("tensor-cores", false, "the kernel requires tensor cores")
	minSM := f.String("min-sm", "", "required compute capability M.m, for example 9.0")
	if err := f.parse(args); err != nil {
		return err
	}
	if err := f.noArgs(); err != nil {
		return err
	}
	if strings.Contains(*kernel, "|") || !quote.Plain(*kernel) {
		// The message is one line of |-separated fields; a name holding a
		// separator, a line break or an escape would forge or split fields.
		return usagef("gpuplan diagnose: --kernel %q contains '|', a control character or surrounding space, which would split or forge the one-line message. Fix: name the kernel with printable characters other than '|'", *kernel)
	}
	if *gridS == "" || *blockS == "" {
		return usagef("gpuplan diagnose: --grid and --block are required. Fix: add both, for example --grid 264 --block 128 (see 'gpuplan diagnose --help')")
	}
	grid, err := parseDims("grid", *gridS)
	if err != nil {
		return err
	}
	block, err := parseDims("block", *blockS)
	if err != nil {
		return err
	}
	var reqMajor, reqMinor uint16
	if *minSM != "" {
		if reqMajor, reqMinor, err = parseSM(*minSM); err != nil {
			return err
		}
	}
	if kf.dyn < 0 || kf.dyn > 1<<32-1 {
		return usagef("gpuplan diagnose: --dyn %d is outside 0..4294967295 bytes. Fix: give the dynamic shared memory per block in bytes, 0 to 4294967295", kf.dyn)
	}
	if err := kf.kernel().Validate(); err != nil {
		return kernelFlagError("diagnose", err)
	}
	d, label, err := df.resolve(e, "diagnose")
	if err != nil {
		return err
	}
	if err := d.Validate(); err != nil {
		return err
	}
	set := setFlags(f)
	env := occupancy.EnvelopeFromDevice(d, kf.optIn)
	shape := occupancy.CudaKernelLaunchShape{Grid: grid, Block: block, DynamicSharedMemoryBytes: uint32(kf.dyn), Cooperative: *coop, RequiresTensorCores: *tensor}

	var limit *uint64
	source := ""
	if *coop {
		threads := uint64(block[0]) * uint64(block[1]) * uint64(block[2])
		switch {
		case set["regs"] && threads >= 1 && threads <= 1<<30:
			k := kf.kernel()
			r, err := occupancy.Compute(d, k, int(threads))
			if err != nil {
				return kernelFlagError("diagnose", err)
			}
			l := uint64(r.ActiveBlocksPerSM) * uint64(d.SMCount)
			limit = &l
			source = fmt.Sprintf("exact occupancy model: %d blocks/SM (limited by %s) x %d SMs", r.ActiveBlocksPerSM, r.Limit, d.SMCount)
		case threads <= 1<<32-1:
			l := occupancy.CooperativeThreadResidencyBlockLimit(d, uint32(threads))
			limit = &l
			source = "vyre's thread-only bound (max threads per SM / block x SMs; ignores registers and shared memory; pass --regs for the exact limit)"
		}
	}
	diag, err := occupancy.DiagnoseKernelLaunchShape(*kernel, env, shape, limit)
	var envErr *occupancy.CudaKernelLaunchEnvelopeError
	if errors.As(err, &envErr) {
		// The shape comes from --grid and --block alone.
		return usagef("gpuplan diagnose: --grid %q and --block %q: %v", *gridS, *blockS, err)
	}
	if err != nil {
		return err
	}
	if *minSM != "" {
		// The shape check requires sm 0.0; redo the capability check with the
		// required version so the message carries sm_version first.
		diag.Capability = occupancy.DiagnoseKernelLaunch(*kernel, env, occupancy.CudaKernelRequirement{
			MinSMMajor: reqMajor, MinSMMinor: reqMinor,
			RequestedThreadsPerBlock:   diag.ThreadsPerBlock,
			RequestedSharedMemoryBytes: uint64(shape.DynamicSharedMemoryBytes),
			RequiresCooperativeLaunch:  shape.Cooperative,
			RequiresTensorCores:        shape.RequiresTensorCores,
		})
	}
	return writeDiagnosis(e, f.json, label, source, diag)
}

// writeDiagnosis prints the stable message (vyre's format, unchanged) and
// gpuplan's verdict, and fails when the launch is blocked.
func writeDiagnosis(e *env, asJSON bool, label, source string, diag occupancy.KernelLaunchShapeDiagnostic) error {
	failures := launchVerdict(diag)
	if asJSON {
		status := "ok"
		if !diag.Capability.OK() {
			status = "blocked"
		}
		if err := writeJSON(e.stdout, diagnoseOutput{Device: label, Message: diag.Message(), Launchable: diag.IsLaunchable(), CapabilityStatus: status,
			Failures: failures, GridBlocks: diag.GridBlocks, ThreadsPerBlock: diag.ThreadsPerBlock,
			CooperativeResidentBlockLimit: diag.CooperativeResidentBlockLimit, LimitSource: source}); err != nil {
			return err
		}
	} else {
		fmt.Fprintln(e.stdout, diag.Message())
		if source != "" {
			fmt.Fprintf(e.stdout, "# cooperative_resident_block_limit on %s: %s\n", quote.Text(label), source)
		}
		if diag.Capability.OK() && diag.ResidencyBlocked() {
			fmt.Fprintf(e.stdout, "# launch blocked: %s (status=ok covers the capability checks only)\n", strings.Join(failures, ", "))
		}
	}
	if len(failures) > 0 {
		return blockedError(diag, failures)
	}
	return nil
}

// parseDims parses "X", "X,Y" or "X,Y,Z" (x also separates) into three
// uint32 dimensions; missing ones are 1.
func parseDims(name, s string) ([3]uint32, error) {
	out := [3]uint32{1, 1, 1}
	parts := strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == 'x' || r == 'X' })
	if len(parts) == 0 || len(parts) > 3 {
		return out, usagef("gpuplan diagnose: --%s %q has %d dimensions. Fix: give 1 to 3 dimensions, for example 128 or 128,2,1", name, s, len(parts))
	}
	for i, p := range parts {
		v, err := strconv.ParseUint(strings.TrimSpace(p), 10, 32)
		if err != nil {
			return out, usagef("gpuplan diagnose: --%s %q: dimension %d is not a number in 1..4294967295. Fix: give each dimension as a whole number from 1 to 4294967295, for example 128,2,1", name, s, i+1)
		}
		if v == 0 {
			// CUDA refuses a launch with a zero dimension.
			return out, usagef("gpuplan diagnose: --%s %q: dimension %d is 0, and CUDA refuses a launch with a zero dimension. Fix: give each dimension as a whole number from 1 to 4294967295, for example 128,2,1", name, s, i+1)
		}
		out[i] = uint32(v)
	}
	return out, nil
}

// parseSM parses "M.m" (or "M") into a compute capability.
func parseSM(s string) (uint16, uint16, error) {
	maj, min, found := strings.Cut(s, ".")
	if !found {
		min = "0"
	}
	a, err1 := strconv.ParseUint(maj, 10, 16)
	b, err2 := strconv.ParseUint(min, 10, 16)
	if err1 != nil || err2 != nil {
		return 0, 0, usagef("gpuplan diagnose: --min-sm %q is not a compute capability. Fix: give it as major.minor, for example 9.0", s)
	}
	return uint16(a), uint16(b), nil
}
