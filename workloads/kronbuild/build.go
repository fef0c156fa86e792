package kronbuild

import (
	"errors"
	"fmt"
	"time"

	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/frontier"
	"github.com/gpuplan/gpuplan/internal/kernelabi"
	"github.com/gpuplan/gpuplan/workloads/harness"
)

// Config tunes a build; the zero value picks the defaults.
type Config struct {
	// MaxDeviceBytes caps the device memory budget the build plans with
	// (0: the executor's live resident budget, which is never exceeded).
	MaxDeviceBytes uint64 `json:"max_device_bytes,omitempty"`
	// HostPermutation draws the labels on the host
	// (frontier.KroneckerPermutation: the shuffle's swaps one after
	// another) and uploads them, instead of drawing them on the device.
	HostPermutation bool `json:"host_permutation,omitempty"`
}

// Times are the times of a build. The device phases are device time
// between timing events on the build's stream, summed over the parts.
type Times struct {
	// Permutation is drawing the labels: device time, or with
	// Config.HostPermutation the host's wall time of drawing and
	// uploading them.
	Permutation time.Duration `json:"permutation_ns"`
	// Count is counting every source bucket's entries (one pass over the
	// edges), Generate drawing every part's entries as keys (one pass
	// each), Sort sorting them and CSR deduplicating them into targets and
	// offsets.
	Count    time.Duration `json:"count_ns"`
	Generate time.Duration `json:"generate_ns"`
	Sort     time.Duration `json:"sort_ns"`
	CSR      time.Duration `json:"csr_ns"`
	// Readback is the host's wall time of reading the CSR back.
	Readback time.Duration `json:"readback_ns"`
	// Total is the host's wall time of the whole build.
	Total time.Duration `json:"total_ns"`
}

// Result is a built graph, read back to the host, with its memory plan
// and its times.
type Result struct {
	// Graph is the CSR, named as frontier.Kronecker names it.
	Graph *frontier.CSR
	// Plan is the memory plan the build ran, its parts' distinct entries
	// filled in.
	Plan  Plan
	Times Times
}

// Build builds frontier.Kronecker(scale, edgeFactor, seed) on x's device:
// the same CSR, offsets and targets alike, read back to the host. The
// edges never leave the device: they are drawn there, labelled, sorted and
// deduplicated, in as many parts of the vertex range as the memory budget
// needs. The parameters frontier.Kronecker refuses are refused with its
// errors (Check), a graph without an edge with frontier's
// *frontier.EmptyGraphError, and a build over the budget with a
// *BudgetError, all before its buffers are allocated. The offsets are
// 64-bit on the device and read straight into the CSR's.
func Build(x *executor.Executor, scale, edgeFactor int, seed uint64, cfg Config) (*Result, error) {
	start := time.Now()
	if x == nil {
		return nil, errNoExecutor()
	}
	if err := Check(scale, edgeFactor); err != nil {
		return nil, err
	}
	budget, err := harness.Budget(x, cfg.MaxDeviceBytes)
	if err != nil {
		return nil, err
	}
	plan, err := newPlan(scale, edgeFactor, budget, cfg.HostPermutation)
	if err != nil {
		return nil, err
	}
	b := &builder{x: x, cfg: cfg, seed: seed, plan: plan}
	b.pcg[0], b.pcg[1] = frontier.KroneckerPermutationPCG(seed)
	g, err := b.run()
	if cerr := b.close(); cerr != nil {
		// A build's own error comes first, unwrapped when closing works.
		err = errors.Join(err, cerr)
	}
	if err != nil {
		return nil, err
	}
	b.times.Total = time.Since(start)
	return &Result{Graph: g, Plan: b.plan, Times: b.times}, nil
}

// errNoExecutor is the error of a build without an executor.
func errNoExecutor() error {
	return fmt.Errorf("kronbuild needs an executor. Fix: open one (executor.Open, or executor.New over NewFake's backend)")
}

// kernels are the build's entry points.
type kernels struct {
	permDraw, permLinks, permLabels, count, generate, sortHist, scan, sortScatter, uniqueCount, compact, fill *executor.Kernel
}

// fixedBuffers are what the whole build holds, in allocation order (the
// fields' order, as harness.Buffers lists them): the labels, the offsets
// (the device permutation's last writers before them), the bucket counts
// and the control words.
type fixedBuffers struct{ perm, offsets, counts, ctl executor.Buffer }

// sortBuffers are a sort's scratch, in allocation order: the keys, their
// second buffer and the digit matrix.
type sortBuffers struct{ keys, alt, hist executor.Buffer }

// builder is one build in progress.
type builder struct {
	x       *executor.Executor
	cfg     Config
	seed    uint64
	plan    Plan
	k       kernels
	fixed   fixedBuffers
	scratch sortBuffers
	st      *executor.Stream
	tl      timeline
	targets []int32
	times   Times
	// pcg seeds the device shuffle (frontier.KroneckerPermutationPCG);
	// rejections counts the draws it redrew after a rejection.
	pcg        [2]uint64
	rejections int
	// resident is each grid-stride kernel's co-resident grid.
	resident map[*executor.Kernel]uint32
}

// run builds the graph: the kernels, the fixed buffers and the stream,
// the labels, the bucket counts and the parts they plan, then the offsets.
func (b *builder) run() (*frontier.CSR, error) {
	if err := b.open(); err != nil {
		return nil, err
	}
	if err := b.labels(); err != nil {
		return nil, err
	}
	counts, err := b.count()
	if err != nil {
		return nil, err
	}
	if err := b.plan.splitParts(counts); err != nil {
		return nil, err
	}
	if b.plan.Entries == 0 {
		return nil, &frontier.EmptyGraphError{Source: b.plan.Graph, Vertices: int(b.plan.Vertices)}
	}
	base := uint64(0)
	for i := range b.plan.Parts {
		if err := b.buildPart(&b.plan.Parts[i], base); err != nil {
			return nil, err
		}
		base += b.plan.Parts[i].Distinct
	}
	offsets, err := b.readOffsets(base)
	if err != nil {
		return nil, err
	}
	return &frontier.CSR{Name: b.plan.Graph, Offsets: offsets, Targets: b.targets[:base]}, nil
}

// open loads the kernels, allocates the fixed buffers and opens the
// build's stream.
func (b *builder) open() error {
	_, err := harness.LoadKernels(b.x, kronbuildPTX, []harness.Entry{
		{Dst: &b.k.permDraw, Name: KernelPermDraw}, {Dst: &b.k.permLinks, Name: KernelPermLinks},
		{Dst: &b.k.permLabels, Name: KernelPermLabels}, {Dst: &b.k.count, Name: KernelCount},
		{Dst: &b.k.generate, Name: KernelGenerate}, {Dst: &b.k.sortHist, Name: KernelSortHist},
		{Dst: &b.k.scan, Name: KernelScan}, {Dst: &b.k.sortScatter, Name: KernelSortScatter},
		{Dst: &b.k.uniqueCount, Name: KernelUniqueCount}, {Dst: &b.k.compact, Name: KernelCompact},
		{Dst: &b.k.fill, Name: KernelFill},
	})
	if err != nil {
		return err
	}
	if err := b.residentGrids(); err != nil {
		return err
	}
	n := b.plan.Vertices
	sizes := []uint64{n * labelBytes, (n + 1) * offsetBytes, uint64(b.plan.Buckets) * wordBytes, CtlWords * wordBytes}
	if err := harness.Allocate(b.x, "kronbuild fixed buffers", harness.Buffers(&b.fixed), sizes, b.plan.FixedBytes); err != nil {
		return err
	}
	if b.st, err = b.x.NewStream(); err != nil {
		return err
	}
	b.tl = timeline{x: b.x, st: b.st}
	return nil
}

// close releases everything the build holds on the device; closing twice
// does nothing.
func (b *builder) close() error {
	var errs []error
	if b.st != nil {
		errs = append(errs, b.st.Close())
		b.st = nil
	}
	errs = append(errs, b.tl.close(), harness.Free(b.x, harness.Buffers(&b.scratch)), harness.Free(b.x, harness.Buffers(&b.fixed)))
	return errors.Join(errs...)
}

// zeroed is a parameter struct's buffer field that a launch passes as
// executor.Out: zeroed on the stream before the launch.
type zeroed struct {
	field string
	buf   executor.Buffer
}

// launch enqueues k on the build's stream with the arguments of the
// parameter struct p, its outs fields passed as executor.Out.
func (b *builder) launch(k *executor.Kernel, cfg executor.LaunchConfig, p any, outs ...zeroed) error {
	args, err := kernelabi.Args(p)
	if err != nil {
		return err
	}
	for _, o := range outs {
		i, err := kernelabi.Index(p, o.field)
		if err != nil {
			return err
		}
		args[i] = executor.Out(o.buf)
	}
	return b.st.Launch(k, cfg, args...)
}

// strideGrid is the launch of grid-stride kernel k over items items,
// perBlock a block per round: as many blocks as the items need, at most
// as many as are co-resident (a second wave would only lengthen the
// launch's tail).
func (b *builder) strideGrid(k *executor.Kernel, items, perBlock uint64) executor.LaunchConfig {
	return executor.Linear(uint32(max(1, min(uint64(b.resident[k]), (items+perBlock-1)/perBlock))), Threads)
}

// residentGrids sizes the co-resident grid of every grid-stride kernel
// from the occupancy model, cross-checked with the driver.
func (b *builder) residentGrids() error {
	b.resident = map[*executor.Kernel]uint32{}
	for _, k := range []*executor.Kernel{b.k.permLinks, b.k.permLabels, b.k.count, b.k.generate, b.k.fill} {
		g, err := b.x.CooperativeGrid(k, Threads, 0)
		if err != nil {
			return err
		}
		b.resident[k] = g.GridBlocks
	}
	return nil
}

// sync waits for the build's stream.
func (b *builder) sync() error { return b.st.Synchronize() }
