package main

import (
	"errors"
	"fmt"
	"io"
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

--grid and --block are held to CUDA's per-axis limits first (grid x up
to 2147483647, y and z up to 65535; block x and y up to 1024, z up to
64), and --regs to 255: a value beyond them, an empty dimension or one
that is not a number is a usage error. Then the launch limits the message
does not carry are checked against the device, as the driver checks them
at launch: each grid and block dimension, the kernel's launch bounds
(--max-threads), registers per thread and per block (given --regs), and
static plus dynamic shared memory (--smem with --dyn). A failed one is
printed on a "# launch" line after the message and blocks the launch.

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
// failures (the message's fix= field), apart from them a grid that is not
// co-resident (its cooperative_residency= field), and then the failed
// launch limits, which the message does not carry. The message's status=
// covers the capability checks alone, so status=ok can sit beside a
// blocked launch; the verdict is what decides the exit status.
func launchVerdict(diag occupancy.KernelLaunchShapeDiagnostic, limits []string) []string {
	failures := make([]string, 0, len(diag.Capability.Failures)+1+len(limits))
	for _, fl := range diag.Capability.Failures {
		failures = append(failures, fl.String())
	}
	if diag.ResidencyBlocked() {
		failures = append(failures, fmt.Sprintf("cooperative_residency(required=%d,limit=%d)", diag.GridBlocks, *diag.CooperativeResidentBlockLimit))
	}
	return append(failures, limits...)
}

// blockedError makes diagnose exit 1 after printing a blocked launch; it
// names the fields of the message, or the launch limits outside it, that
// say why.
func blockedError(diag occupancy.KernelLaunchShapeDiagnostic, failures, limits []string) error {
	var where, fix []string
	if !diag.Capability.OK() {
		where = append(where, "fix=")
		fix = append(fix, "change the launch shape or pick a device that meets the requirements")
	}
	if diag.ResidencyBlocked() {
		where = append(where, "cooperative_residency=")
		fix = append(fix, fmt.Sprintf("launch at most %d blocks, or use fewer registers or less shared memory per block so more blocks fit on an SM", *diag.CooperativeResidentBlockLimit))
	}
	var see []string
	if len(where) > 0 {
		see = append(see, "see the message's "+strings.Join(where, " and ")+" field")
	}
	if len(limits) > 0 {
		see = append(see, fmt.Sprintf("%s: launch limits the message does not carry", strings.Join(limits, ", ")))
		fix = append(fix, "bring each requested value within its max=: a smaller grid or block, fewer registers per thread (-maxrregcount or __launch_bounds__) or less shared memory")
	}
	return fmt.Errorf("the kernel launch is blocked by %s (%s). Fix: %s",
		strings.Join(failures, ", "), strings.Join(see, "; "), strings.Join(fix, "; "))
}

// diagnoseOptions are the parsed flags of "gpuplan diagnose".
type diagnoseOptions struct {
	df                 deviceFlags
	kf                 kernelFlags
	kernel             string
	grid, block        [3]uint32
	coop, tensor       bool
	minSM              bool
	reqMajor, reqMinor uint16
	set                map[string]bool
	json               bool
}

func runDiagnose(e *env, args []string) error {
	o, err := parseDiagnoseArgs(e, args)
	if err != nil {
		return err
	}
	d, label, err := o.df.resolve(e, "diagnose")
	if err != nil {
		return err
	}
	if err := d.Validate(); err != nil {
		return err
	}
	limit, source, err := o.residencyLimit(d)
	if err != nil {
		return err
	}
	diag, err := o.diagnose(d, limit)
	if err != nil {
		return err
	}
	limits := launchLimitFailures(d, o.kf, o.grid, o.block, o.set["regs"])
	return writeDiagnosis(e, o.json, label, source, diag, limits)
}

// parseDiagnoseArgs parses and checks the flags of "gpuplan diagnose".
func parseDiagnoseArgs(e *env, args []string) (*diagnoseOptions, error) {
	f := e.newFlags("diagnose", "diagnose (--device NAME | --device-file FILE) --grid X[,Y[,Z]] --block X[,Y[,Z]] [--dyn D] [--opt-in] [--cooperative [--regs R]] [--tensor-cores] [--min-sm M.m] [--kernel NAME] [--json]", diagnoseAbout)
	o := &diagnoseOptions{}
	o.df.add(f)
	o.kf.add(f, "dynamic shared memory per block in bytes (checked against the per-block limit)")
	f.StringVar(&o.kernel, "kernel", "kernel", "kernel name in the message")
	gridS := f.String("grid", "", "grid dimensions X[,Y[,Z]] in blocks (x up to 2147483647, y and z up to 65535)")
	blockS := f.String("block", "", "block dimensions X[,Y[,Z]] in threads (x and y up to 1024, z up to 64)")
	f.BoolVar(&o.coop, "cooperative", false, "the launch is cooperative: the grid must be co-resident")
	f.BoolVar(&o.tensor, "tensor-cores", false, "the kernel requires tensor cores")
	minSM := f.String("min-sm", "", "required compute capability M.m, for example 9.0")
	if err := f.parse(args); err != nil {
		return nil, err
	}
	if err := f.noArgs(); err != nil {
		return nil, err
	}
	o.set, o.json = setFlags(f), f.json
	if err := o.checkKernelName(); err != nil {
		return nil, err
	}
	if err := o.parseShape(*gridS, *blockS); err != nil {
		return nil, err
	}
	if o.set["min-sm"] {
		var err error
		o.minSM = true
		if o.reqMajor, o.reqMinor, err = parseSM(*minSM); err != nil {
			return nil, err
		}
	}
	return o, o.checkKernel()
}

// checkKernelName refuses a --kernel that would split or forge the
// one-line message.
func (o *diagnoseOptions) checkKernelName() error {
	if strings.Contains(o.kernel, "|") || !quote.Plain(o.kernel) {
		// The message is one line of |-separated fields; a name holding a
		// separator, a line break or an escape would forge or split fields.
		return usagef("gpuplan diagnose: --kernel %s contains '|', a control character or surrounding space, which would split or forge the one-line message. Fix: name the kernel with printable characters other than '|'", quote.Echo(o.kernel))
	}
	return nil
}

// parseShape reads --grid and --block, each checked against CUDA's
// per-axis limits.
func (o *diagnoseOptions) parseShape(gridS, blockS string) error {
	switch {
	case !o.set["grid"] && !o.set["block"]:
		return usagef("gpuplan diagnose: --grid and --block are required. Fix: add both, for example --grid 264 --block 128 (see 'gpuplan diagnose --help')")
	case !o.set["grid"]:
		return usagef("gpuplan diagnose: --grid is required beside --block. Fix: add the grid's blocks, for example --grid 264 (see 'gpuplan diagnose --help')")
	case !o.set["block"]:
		return usagef("gpuplan diagnose: --block is required beside --grid. Fix: add the block's threads, for example --block 128 (see 'gpuplan diagnose --help')")
	}
	var err error
	if o.grid, err = parseDims("grid", gridS, cudaMaxGridDim); err != nil {
		return err
	}
	o.block, err = parseDims("block", blockS, cudaMaxBlockDim)
	return err
}

// checkKernel refuses kernel resource flags out of range.
func (o *diagnoseOptions) checkKernel() error {
	if o.kf.dyn < 0 || o.kf.dyn > 1<<32-1 {
		return usagef("gpuplan diagnose: --dyn %d is outside 0..4294967295 bytes. Fix: give the dynamic shared memory per block in bytes, 0 to 4294967295", o.kf.dyn)
	}
	if err := o.kf.kernel().Validate(); err != nil {
		return kernelFlagError("diagnose", err)
	}
	return checkRegsFlag("diagnose", o.kf.regs)
}

// shape is the launch the flags describe.
func (o *diagnoseOptions) shape() occupancy.CudaKernelLaunchShape {
	return occupancy.CudaKernelLaunchShape{Grid: o.grid, Block: o.block, DynamicSharedMemoryBytes: uint32(o.kf.dyn), Cooperative: o.coop, RequiresTensorCores: o.tensor}
}

// residencyLimit is the co-resident block limit of a cooperative launch
// and where it comes from: the exact occupancy model given --regs, vyre's
// thread-only bound without. It is nil for other launches.
func (o *diagnoseOptions) residencyLimit(d occupancy.Device) (*uint64, string, error) {
	if !o.coop {
		return nil, "", nil
	}
	threads := uint64(o.block[0]) * uint64(o.block[1]) * uint64(o.block[2])
	if o.set["regs"] {
		r, err := occupancy.Compute(d, o.kf.kernel(), int(threads))
		if err != nil {
			return nil, "", kernelFlagError("diagnose", err)
		}
		l := uint64(r.ActiveBlocksPerSM) * uint64(d.SMCount)
		return &l, fmt.Sprintf("exact occupancy model: %d blocks/SM (limited by %s) x %d SMs", r.ActiveBlocksPerSM, r.Limit, d.SMCount), nil
	}
	l := occupancy.CooperativeThreadResidencyBlockLimit(d, uint32(threads))
	return &l, "vyre's thread-only bound (max threads per SM / block x SMs; ignores registers and shared memory; pass --regs for the exact limit)", nil
}

// diagnose runs vyre's shape diagnosis and, given --min-sm, redoes the
// capability check with the required version.
func (o *diagnoseOptions) diagnose(d occupancy.Device, limit *uint64) (occupancy.KernelLaunchShapeDiagnostic, error) {
	env := occupancy.EnvelopeFromDevice(d, o.kf.optIn)
	shape := o.shape()
	diag, err := occupancy.DiagnoseKernelLaunchShape(o.kernel, env, shape, limit)
	var envErr *occupancy.CudaKernelLaunchEnvelopeError
	if errors.As(err, &envErr) {
		// The shape comes from --grid and --block alone.
		return diag, usagef("gpuplan diagnose: --grid %s and --block %s: %v", dims(o.grid), dims(o.block), err)
	}
	if err != nil || !o.minSM {
		return diag, err
	}
	// The shape check requires sm 0.0; redo the capability check with the
	// required version so the message carries sm_version first.
	diag.Capability = occupancy.DiagnoseKernelLaunch(o.kernel, env, occupancy.CudaKernelRequirement{
		MinSMMajor: o.reqMajor, MinSMMinor: o.reqMinor,
		RequestedThreadsPerBlock:   diag.ThreadsPerBlock,
		RequestedSharedMemoryBytes: uint64(shape.DynamicSharedMemoryBytes),
		RequiresCooperativeLaunch:  shape.Cooperative,
		RequiresTensorCores:        shape.RequiresTensorCores,
	})
	return diag, nil
}

// dims formats parsed dimensions as X,Y,Z.
func dims(v [3]uint32) string {
	return fmt.Sprintf("%d,%d,%d", v[0], v[1], v[2])
}

// writeDiagnosis prints the stable message (vyre's format, unchanged) and
// gpuplan's verdict, with the failed launch limits the message does not
// carry, and fails when the launch is blocked.
func writeDiagnosis(e *env, asJSON bool, label, source string, diag occupancy.KernelLaunchShapeDiagnostic, limits []string) error {
	failures := launchVerdict(diag, limits)
	if asJSON {
		status := "ok"
		if !diag.Capability.OK() {
			status = "blocked"
		}
		if err := writeJSON(e.stdout, diagnoseOutput{Device: label, Message: diag.Message(), Launchable: len(failures) == 0, CapabilityStatus: status,
			Failures: failures, GridBlocks: diag.GridBlocks, ThreadsPerBlock: diag.ThreadsPerBlock,
			CooperativeResidentBlockLimit: diag.CooperativeResidentBlockLimit, LimitSource: source}); err != nil {
			return err
		}
	} else {
		writeDiagnosisText(e.stdout, label, source, diag, failures, limits)
	}
	if len(failures) > 0 {
		return blockedError(diag, failures, limits)
	}
	return nil
}

// writeDiagnosisText prints the message, where the residency limit comes
// from, and what blocks the launch that status= does not say.
func writeDiagnosisText(w io.Writer, label, source string, diag occupancy.KernelLaunchShapeDiagnostic, failures, limits []string) {
	fmt.Fprintln(w, diag.Message())
	if source != "" {
		fmt.Fprintf(w, "# cooperative_resident_block_limit on %s: %s\n", quote.Text(label), source)
	}
	switch {
	case diag.Capability.OK() && len(failures) > 0:
		fmt.Fprintf(w, "# launch blocked: %s (status=ok covers the capability checks only)\n", strings.Join(failures, ", "))
	case len(limits) > 0:
		fmt.Fprintf(w, "# launch also blocked: %s (launch limits the message's fix= field does not carry)\n", strings.Join(limits, ", "))
	}
}

// parseDims parses "X", "X,Y" or "X,Y,Z" (x also separates) into three
// dimensions, missing ones 1, each from 1 to its axis's limit in max. An
// empty dimension or one that is not a number is an error naming the flag
// and the position.
func parseDims(name, s string, max [3]uint64) ([3]uint32, error) {
	out := [3]uint32{1, 1, 1}
	parts := strings.Split(strings.NewReplacer("x", ",", "X", ",").Replace(s), ",")
	if len(parts) > 3 {
		return out, usagef("gpuplan diagnose: --%s %s has %d dimensions. Fix: give 1 to 3 dimensions, for example 128 or 128,2,1", name, quote.Echo(s), len(parts))
	}
	for i, p := range parts {
		v, err := parseDim(name, s, i, strings.TrimSpace(p), max)
		if err != nil {
			return out, err
		}
		out[i] = v
	}
	return out, nil
}

// parseDim parses dimension i of --name s, refusing an empty one, a
// non-number, 0 and values above the axis's limit.
func parseDim(name, s string, i int, p string, max [3]uint64) (uint32, error) {
	axis := axisNames[i]
	fix := fmt.Sprintf("Fix: give each dimension as a whole number, x from 1 to %d, y from 1 to %d and z from 1 to %d, for example 128,2,1", max[0], max[1], max[2])
	if p == "" {
		return 0, usagef("gpuplan diagnose: --%s %s: dimension %d (%c) is empty. %s", name, quote.Echo(s), i+1, axis, fix)
	}
	v, err := strconv.ParseUint(p, 10, 64)
	switch {
	case errors.Is(err, strconv.ErrRange), err == nil && v > max[i]:
		return 0, usagef("gpuplan diagnose: --%s %s: dimension %d (%c) is above CUDA's limit of %d along %c. %s", name, quote.Echo(s), i+1, axis, max[i], axis, fix)
	case err != nil:
		return 0, usagef("gpuplan diagnose: --%s %s: dimension %d (%c) is not a number. %s", name, quote.Echo(s), i+1, axis, fix)
	case v == 0:
		// CUDA refuses a launch with a zero dimension.
		return 0, usagef("gpuplan diagnose: --%s %s: dimension %d is 0, and CUDA refuses a launch with a zero dimension. %s", name, quote.Echo(s), i+1, fix)
	}
	return uint32(v), nil
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
		return 0, 0, usagef("gpuplan diagnose: --min-sm %s is not a compute capability. Fix: give it as major.minor, for example 9.0", quote.Echo(s))
	}
	return uint16(a), uint16(b), nil
}
