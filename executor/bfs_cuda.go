//go:build cuda

package executor

import (
	"encoding/binary"
	"fmt"
	"time"
	"unsafe"

	"github.com/gpuplan/gpuplan/frontier"
	"github.com/gpuplan/gpuplan/megakernel"
	"gorgonia.org/cu"
)

// BFSArm names one way of driving the BFS levels from the host.
type BFSArm string

// The BFS execution arms. All of them produce identical levels.
const (
	// ArmHostLoop launches one frontier-queue level at a time, reads the
	// 4-byte next-frontier count back and synchronises: what a user writes
	// by hand with the Go driver binding. The whole traversal runs on the
	// driver thread in one hand-off; per level it issues cuLaunchKernel on a
	// non-blocking stream, a 4-byte cuMemcpyDtoHAsync into pinned memory and
	// cuStreamSynchronize, then tests the count on the host: no events, no
	// per-level goroutine hand-off, no per-level allocation.
	ArmHostLoop BFSArm = "host-loop"
	// ArmDeviceLoop enqueues BFSConfig.CheckEvery levels back to back on one
	// stream without any host sync and reads the count once per batch.
	ArmDeviceLoop BFSArm = "device-loop"
	// ArmMegakernel runs every level in one cooperative launch with a grid
	// barrier per level and reads the final changed flag once.
	ArmMegakernel BFSArm = "megakernel"
	// ArmHostLoopScan is the host loop over the plain scan wave (one thread
	// per vertex, every vertex visited every level).
	ArmHostLoopScan BFSArm = "host-loop-scan"
)

// BFSArms lists every arm in a fixed order.
func BFSArms() []BFSArm {
	return []BFSArm{ArmHostLoop, ArmDeviceLoop, ArmMegakernel, ArmHostLoopScan}
}

// ParseBFSArm returns the arm named s.
func ParseBFSArm(s string) (BFSArm, error) {
	for _, a := range BFSArms() {
		if string(a) == s {
			return a, nil
		}
	}
	return "", fmt.Errorf("unknown BFS arm %q. Fix: use host-loop, device-loop, megakernel or host-loop-scan", s)
}

// BFSConfig tunes a BFSSession; the zero value picks the defaults.
type BFSConfig struct {
	// Chunk is the most edges per frontier-queue item (0: frontier.DefaultChunk).
	Chunk int
	// CheckEvery is the device loop's levels per host check (0: 16).
	CheckEvery int
	// LevelThreads is the block size of the per-level kernels (0: 256).
	LevelThreads int
	// MegakernelThreads is the megakernel's block size (0: 512 for graphs
	// of low degree, 1024 otherwise; see DefaultMegakernelThreads).
	MegakernelThreads int
	// MegakernelBlocksPerSM caps the megakernel's co-resident blocks per SM
	// (0: DefaultMegakernelBlocksPerSM). Fewer blocks make the per-level
	// barrier cheaper; the occupancy model and the driver bound it from
	// above.
	MegakernelBlocksPerSM int
	// MegakernelAhead is the most levels a megakernel block expands from
	// its own kept frontier between two grid barriers (0: 4 for graphs of
	// low degree, 1 otherwise; see frontier.DefaultRunAhead; 1: one barrier
	// per level, level-synchronous).
	MegakernelAhead int
}

// maxMegakernelAhead bounds BFSConfig.MegakernelAhead.
const maxMegakernelAhead = frontier.MaxRunAhead

// DefaultMegakernelBlocksPerSM is the megakernel's default blocks per SM:
// one block per SM. On an H100 it ran grid-2048 at 1.66 us per level (512
// threads, 8 levels ahead) against 1.70 us with two blocks of 512 and 1.63
// us with two of 256 (within the run's noise); the barrier floor is 1.07 us
// at 132 blocks and 1.53 us at 264.
const DefaultMegakernelBlocksPerSM = 1

// DefaultMegakernelThreads returns the megakernel's default block size for
// a graph: 512 threads for graphs of low degree (frontier.LowDegree: grids,
// road networks), whose levels are small and bound by latency, and 1,024
// for the rest, whose levels are large. On an H100: grid-2048 1.66 us per
// level at 512 against 1.67 us at 256 and 1.81 us at 1,024 (running 8
// levels ahead); Kronecker scale 20 160 us at 1,024 against 209 us at 512.
func DefaultMegakernelThreads(lowDegree bool) int {
	if lowDegree {
		return 512
	}
	return 1024
}

// maxMegakernelBlocks is the largest megakernel grid: a level word counts
// block arrivals in 16 bits.
const maxMegakernelBlocks = 1<<16 - 1

// BFSSession holds one graph resident on the device (uploaded once) and runs
// BFS from many roots with any arm.
type BFSSession struct {
	x     *Executor
	g     *frontier.CSR
	cfg   BFSConfig
	qcap  uint64
	lowDg bool

	mod                                  *Module
	kInit, kScan, kLevel, kMega, kCopy   *Kernel
	kBarrier                             *Kernel
	offsets, targets, level, q0, q1, ctl Buffer

	levelPlan GridPlan
	megaPlan  GridPlan
	conv      megakernel.ConvergencePlan
	ctlWord   []byte
}

// BFSRun is the measurement of one BFS from one root with one arm.
type BFSRun struct {
	Arm  BFSArm `json:"arm"`
	Root int32  `json:"root"`
	// Levels is the number of levels (the largest level + 1), as the
	// device counted them.
	Levels int `json:"levels"`
	// Barriers is the megakernel's grid barriers (its steps; fewer than
	// Levels when its blocks run ahead); 0 for the other arms.
	Barriers int `json:"barriers,omitempty"`
	// Relabels is the megakernel's claims that lowered a label a block
	// running ahead had set (0 when level-synchronous).
	Relabels uint64 `json:"relabels,omitempty"`
	// Reruns is 1 when the megakernel's run-ahead overflowed a frontier
	// queue and the traversal was run again level-synchronously (its time
	// includes both).
	Reruns int `json:"reruns,omitempty"`
	// WallNs is the host wall-clock time of the traversal (the per-root reset
	// is outside it); DeviceNs sums the event-timed device time of its
	// dispatches.
	WallNs   uint64 `json:"wall_ns"`
	DeviceNs uint64 `json:"device_ns"`
	// Launches is the number of kernel launches of the traversal.
	Launches uint64 `json:"launches"`
	// Pollution inside the timed region: input uploads, allocations, and
	// host syncs beyond the arm's own control flow.
	TimedUploads     uint64 `json:"timed_uploads"`
	TimedAllocations uint64 `json:"timed_allocations"`
	TimedHostSyncs   uint64 `json:"timed_host_syncs"`
}

// bytesOf views a slice of 4-byte values as bytes (for uploads).
func bytesOf[T int32 | uint32](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), 4*len(s))
}

// NewBFSSession checks that g's resident BFS state fits the device budget
// (a *frontier.TooLargeError naming "device bytes" otherwise), loads the BFS
// kernels, uploads the graph once, and plans the launches: the per-level
// kernels' grid and the megakernel's co-resident grid from the occupancy
// model (cross-checked with the driver), and the megakernel's final-flag-
// only convergence plan from megakernel.PlanDeviceConvergence.
func NewBFSSession(x *Executor, g *frontier.CSR, cfg BFSConfig) (*BFSSession, error) {
	if g == nil {
		return nil, invalidArg("graph", "Fix: pass a graph built by a frontier generator or loader.", "nil")
	}
	if cfg.Chunk == 0 {
		cfg.Chunk = frontier.DefaultChunk
	}
	if cfg.CheckEvery == 0 {
		cfg.CheckEvery = 16
	}
	if cfg.LevelThreads == 0 {
		cfg.LevelThreads = 256
	}
	if cfg.MegakernelThreads == 0 {
		cfg.MegakernelThreads = DefaultMegakernelThreads(frontier.LowDegree(g))
	}
	if cfg.MegakernelBlocksPerSM == 0 {
		cfg.MegakernelBlocksPerSM = DefaultMegakernelBlocksPerSM
	}
	if cfg.MegakernelAhead == 0 {
		cfg.MegakernelAhead = frontier.DefaultRunAhead(frontier.LowDegree(g))
	}
	if cfg.Chunk < 1 || cfg.CheckEvery < 1 || cfg.LevelThreads%32 != 0 || cfg.MegakernelThreads%32 != 0 || cfg.MegakernelBlocksPerSM < 0 {
		return nil, invalidArg("BFS config", "Fix: use a positive chunk and check interval, block sizes that are multiples of 32 and a non-negative megakernel blocks-per-SM cap.", "%+v", cfg)
	}
	if cfg.MegakernelAhead < 1 || cfg.MegakernelAhead > maxMegakernelAhead {
		return nil, invalidArg("BFS config MegakernelAhead", fmt.Sprintf("Fix: use 1 (one grid barrier per level) up to %d levels, or 0 for the default (frontier.DefaultRunAhead).", maxMegakernelAhead), "%d", cfg.MegakernelAhead)
	}
	if err := g.Check(); err != nil {
		return nil, err
	}
	budget, err := x.Budget()
	if err != nil {
		return nil, err
	}
	if err := frontier.CheckDeviceBudget(g, cfg.Chunk, budget); err != nil {
		return nil, err
	}
	qcap, err := frontier.QueueCapacity(g, cfg.Chunk)
	if err != nil {
		return nil, err
	}
	conv, err := megakernel.PlanDeviceConvergence(uint32(g.NumVertices()), megakernel.ChangedFlagBytes, 0)
	if err != nil {
		return nil, err
	}
	s := &BFSSession{x: x, g: g, cfg: cfg, qcap: qcap, lowDg: frontier.LowDegree(g), conv: conv, ctlWord: make([]byte, 8)}
	ok := false
	defer func() {
		if !ok {
			_ = s.Close()
		}
	}()
	if s.mod, err = x.LoadModule(frontier.BFSKernelPTX()); err != nil {
		return nil, err
	}
	for _, k := range []struct {
		dst  **Kernel
		name string
	}{{&s.kInit, frontier.KernelInit}, {&s.kScan, frontier.KernelWaveScan}, {&s.kLevel, frontier.KernelQueueLevel},
		{&s.kMega, frontier.KernelMegakernel}, {&s.kCopy, frontier.KernelCopy}, {&s.kBarrier, frontier.KernelBarrierOnly}} {
		if *k.dst, err = s.mod.Kernel(k.name); err != nil {
			return nil, err
		}
	}
	n := uint64(g.NumVertices())
	for _, b := range []struct {
		dst *Buffer
		len uint64
	}{{&s.offsets, 4 * (n + 1)}, {&s.targets, 4 * uint64(max(1, g.NumEdgeEntries()))}, {&s.level, 4 * n},
		{&s.q0, frontier.QueueItemBytes * qcap}, {&s.q1, frontier.QueueItemBytes * qcap}, {&s.ctl, 4 * frontier.CtlWords}} {
		if *b.dst, err = x.Alloc(b.len); err != nil {
			return nil, err
		}
	}
	if err := x.Upload(s.offsets, bytesOf(g.Offsets)); err != nil {
		return nil, err
	}
	if err := x.Upload(s.targets, bytesOf(g.Targets)); err != nil {
		return nil, err
	}
	if s.levelPlan, err = x.CooperativeGrid(s.kLevel, cfg.LevelThreads, 0); err != nil {
		return nil, err
	}
	if s.megaPlan, err = x.CooperativeGrid(s.kMega, cfg.MegakernelThreads, 0); err != nil {
		return nil, err
	}
	if c := cfg.MegakernelBlocksPerSM; c < s.megaPlan.BlocksPerSM {
		s.megaPlan.BlocksPerSM = c
		s.megaPlan.GridBlocks = uint32(c * s.megaPlan.SMCount)
	}
	if s.megaPlan.GridBlocks > maxMegakernelBlocks {
		return nil, invalidArg("megakernel grid", fmt.Sprintf("Fix: cap the megakernel at %d blocks (BFSConfig.MegakernelBlocksPerSM or larger blocks); its level barrier counts arrivals in 16 bits.", maxMegakernelBlocks), "%d blocks", s.megaPlan.GridBlocks)
	}
	ok = true
	return s, nil
}

// MegakernelGrid returns the megakernel's co-resident grid plan.
func (s *BFSSession) MegakernelGrid() GridPlan { return s.megaPlan }

// LevelGrid returns the per-level kernels' full-device grid plan (the device
// loop's launch shape; the host loop sizes each level by its count).
func (s *BFSSession) LevelGrid() GridPlan { return s.levelPlan }

// Convergence returns the megakernel's convergence plan.
func (s *BFSSession) Convergence() megakernel.ConvergencePlan { return s.conv }

// Close frees the session's device buffers.
func (s *BFSSession) Close() error {
	var first error
	for _, b := range []Buffer{s.offsets, s.targets, s.level, s.q0, s.q1, s.ctl} {
		if b.ID == 0 {
			continue
		}
		if err := s.x.Free(b); err != nil && first == nil {
			first = err
		}
	}
	s.offsets, s.targets, s.level, s.q0, s.q1, s.ctl = Buffer{}, Buffer{}, Buffer{}, Buffer{}, Buffer{}, Buffer{}
	return first
}

// readWord reads one 4-byte control word (a 4-byte readback and a sync).
func (s *BFSSession) readWord(word int) (uint32, error) {
	if err := s.x.DownloadRangeInto(s.ctl, 4*uint64(word), s.ctlWord[:4]); err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint32(s.ctlWord), nil
}

func (s *BFSSession) graphArgs() []Arg {
	return []Arg{Ptr(s.offsets), Ptr(s.targets), Ptr(s.level)}
}

// reset runs bfs_init for root (outside any timed region).
func (s *BFSSession) reset(root int32) error {
	n := uint64(s.g.NumVertices())
	blocks := uint32(min((n+255)/256, uint64(s.x.Device().SMCount)*8))
	_, err := s.x.Launch(s.kInit, Linear(blocks, 256), Ptr(s.offsets), Ptr(s.level), Ptr(s.q0), Ptr(s.ctl),
		U64(n), U64(uint64(root)), U64(uint64(s.cfg.Chunk)), U64(s.qcap))
	return err
}

// Run resets the BFS state for root, then runs and times one traversal with
// arm. The levels stay on the device: Levels downloads them.
func (s *BFSSession) Run(arm BFSArm, root int32) (BFSRun, error) {
	if err := frontier.CheckRoot(s.g, int64(root)); err != nil {
		return BFSRun{}, err
	}
	if err := s.reset(root); err != nil {
		return BFSRun{}, err
	}
	r := BFSRun{Arm: arm, Root: root}
	before := s.x.Telemetry()
	t0 := time.Now()
	var syncsExpected uint64
	var err error
	switch arm {
	case ArmHostLoop:
		syncsExpected, err = s.runHostLoop(&r)
	case ArmDeviceLoop:
		syncsExpected, err = s.runDeviceLoop(&r)
	case ArmMegakernel:
		syncsExpected, err = s.runMegakernel(&r)
	case ArmHostLoopScan:
		syncsExpected, err = s.runScanLoop(&r)
	default:
		_, err = ParseBFSArm(string(arm))
	}
	r.WallNs = uint64(time.Since(t0))
	after := s.x.Telemetry()
	if err != nil {
		return r, err
	}
	r.Launches = after.KernelLaunches - before.KernelLaunches
	r.TimedUploads = after.HostUploadOperations - before.HostUploadOperations
	if after.ResidentAllocationBytesRequested+after.TransientAllocationBytesRequested >
		before.ResidentAllocationBytesRequested+before.TransientAllocationBytesRequested {
		r.TimedAllocations = 1
	}
	if syncs := after.SyncPoints - before.SyncPoints; syncs > syncsExpected {
		r.TimedHostSyncs = syncs - syncsExpected
	}
	return r, s.checkControl(&r)
}

// checkControl reads the result words after a run (untimed): the device's
// level count, and the overflow and misuse flags that must stay 0.
func (s *BFSSession) checkControl(r *BFSRun) error {
	words, err := s.x.DownloadRange(s.ctl, 4*frontier.CtlResultLevels, 4*8)
	if err != nil {
		return err
	}
	// at returns the result line's bytes from control word w on.
	at := func(w int) []byte { return words[4*(w-frontier.CtlResultLevels):] }
	levels := binary.LittleEndian.Uint32(at(frontier.CtlResultLevels))
	if r.Arm != ArmHostLoopScan {
		r.Levels = int(levels)
	}
	if r.Arm == ArmMegakernel {
		r.Barriers = int(binary.LittleEndian.Uint32(at(frontier.CtlResultBarriers)))
		r.Relabels = binary.LittleEndian.Uint64(at(frontier.CtlResultRelabels))
	}
	if binary.LittleEndian.Uint32(at(frontier.CtlResultOverflow)) != 0 {
		return fmt.Errorf("BFS %s from root %d: a frontier queue overflowed its %d items. Fix: this is a sizing bug in frontier.QueueCapacity; report it", r.Arm, r.Root, s.qcap)
	}
	switch binary.LittleEndian.Uint32(at(frontier.CtlResultMisuse)) {
	case 0:
	case 2:
		return fmt.Errorf("BFS %s from root %d: the megakernel was launched with more than %d blocks and did nothing. Fix: launch it through BFSSession, which caps its grid", r.Arm, r.Root, maxMegakernelBlocks)
	default:
		return fmt.Errorf("BFS %s from root %d: a per-level launch was given several phases. Fix: launch %s with one phase per launch", r.Arm, r.Root, frontier.KernelQueueLevel)
	}
	return nil
}

func (s *BFSSession) queueArgs(depthBase uint64) []Arg {
	low := uint64(0)
	if s.lowDg {
		low = 1
	}
	return append(s.graphArgs(), Ptr(s.q0), Ptr(s.q1), Ptr(s.ctl), U64(uint64(s.cfg.Chunk)), U64(s.qcap), U64(low), U64(depthBase))
}

// runHostLoop is the host-driven wave loop as a user writes it by hand with
// the Go driver binding. The traversal runs on the driver thread in one
// hand-off (the executor lock is held throughout, so no other call touches
// the session's buffers meanwhile); per level: cuLaunchKernel on the
// session's non-blocking stream (the grid sized from the count just read,
// one item per warp up to the full device), a 4-byte cuMemcpyDtoHAsync of
// the next count into pinned memory, cuStreamSynchronize, and a host test of
// the count. Nothing is allocated per level and no per-level event is
// recorded; two events around the whole traversal give DeviceNs. It records its
// launches in the telemetry but no sync points (its syncs are its control
// flow), so it expects none.
func (s *BFSSession) runHostLoop(r *BFSRun) (uint64, error) {
	x := s.x
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed {
		return 0, ErrClosed
	}
	cb, ok := x.b.(*cudaBackend)
	if !ok {
		return 0, fmt.Errorf("BFS host-loop needs the CUDA backend. Fix: open the executor with the CUDA backend")
	}
	vals := make([]uint64, 0, 12)
	for _, b := range []Buffer{s.offsets, s.targets, s.level, s.q0, s.q1, s.ctl} {
		res, ok := x.buffers[b.ID]
		if !ok {
			return 0, &UnknownBufferError{Buffer: b.ID}
		}
		vals = append(vals, uint64(res.ptr))
	}
	ctl := cu.DevicePtr(vals[5])
	low := uint64(0)
	if s.lowDg {
		low = 1
	}
	vals = append(vals, uint64(s.cfg.Chunk), s.qcap, low, 0, 0, 0)
	st, err := x.streamLocked()
	if err != nil {
		return 0, err
	}
	defer x.releaseStreamLocked(st)
	pin, err := x.stagingLocked(4)
	if err != nil {
		return 0, err
	}
	defer x.releaseStagingLocked(pin)
	ev0, err := x.eventLocked()
	if err != nil {
		return 0, err
	}
	defer x.releaseEventLocked(ev0)
	ev1, err := x.eventLocked()
	if err != nil {
		return 0, err
	}
	defer x.releaseEventLocked(ev1)
	warpsPerBlock := uint64(s.cfg.LevelThreads / 32)
	threads := uint32(s.cfg.LevelThreads)
	maxBlocks := uint64(s.levelPlan.GridBlocks)
	maxLevels := int(s.conv.MaxDeviceIterations)
	var launches, slots uint64
	err = x.onDriver(func() error {
		fn, err := cb.fn("cuLaunchKernel", s.kLevel.ref)
		if err != nil {
			return err
		}
		cst, err := cb.stream("cuLaunchKernel", st)
		if err != nil {
			return err
		}
		fnp, stp, host := funcPtr(fn), unsafe.Pointer(cst.C()), unsafe.Pointer(&pin.Data[0])
		if err := cb.EventRecord(ev0, st); err != nil {
			return err
		}
		read := func(word int) (uint32, error) {
			if err := cuErr("cuMemcpyDtoHAsync", cu.MemcpyDtoHAsync(host, ctl+cu.DevicePtr(4*word), 4, cst), "4 bytes"); err != nil {
				return 0, err
			}
			if err := cuErr("cuStreamSynchronize", cst.Synchronize(), ""); err != nil {
				return 0, err
			}
			return binary.LittleEndian.Uint32(pin.Data), nil
		}
		count, err := read(frontier.CtlCountWord(0))
		if err != nil {
			return err
		}
		for d := 0; count > 0; d++ {
			if d >= maxLevels {
				return fmt.Errorf("BFS host-loop from root %d ran %d levels without converging. Fix: the graph or the kernels are inconsistent; validate the graph", r.Root, d)
			}
			blocks := uint32(min((uint64(count)+warpsPerBlock-1)/warpsPerBlock, maxBlocks))
			vals[len(vals)-2], vals[len(vals)-1] = uint64(d), uint64(d)+1
			if err := launchLevel(fnp, stp, blocks, threads, vals); err != nil {
				return err
			}
			if count, err = read(frontier.CtlCountWord(d + 1)); err != nil {
				return err
			}
			launches++
			slots += uint64(blocks) * uint64(threads)
		}
		if err := cb.EventRecord(ev1, st); err != nil {
			return err
		}
		if err := cb.EventSync(ev1); err != nil {
			return err
		}
		if ms, err := cb.EventElapsedMs(ev0, ev1); err == nil {
			if ns, err := msToNs(ms); err == nil {
				r.DeviceNs = ns
			}
		}
		return nil
	})
	// Telemetry once after the traversal (the per-level path records
	// nothing): launches, launched elements and scheduled thread slots.
	x.tel.add(cKernelLaunches, launches)
	x.tel.add(cLaunchedElements, slots)
	x.tel.add(cScheduledSlots, slots)
	return 0, err
}

// runDeviceLoop: enqueue CheckEvery levels back to back on one stream (the
// executor's split dispatch: one launch per phase, no host sync between),
// then read the count after the batch. Levels past the end of the BFS see
// an empty queue and return at once.
func (s *BFSSession) runDeviceLoop(r *BFSRun) (uint64, error) {
	k := uint64(s.cfg.CheckEvery)
	var syncs uint64
	for base := uint64(0); ; base += k {
		if base >= uint64(s.conv.MaxDeviceIterations) {
			return syncs, fmt.Errorf("BFS device-loop from root %d ran %d levels without converging. Fix: the graph or the kernels are inconsistent; validate the graph", r.Root, base)
		}
		res, err := s.x.DispatchWithGridSyncSplit(s.kLevel, s.levelPlan.Config().nonCooperative(), k, true, s.queueArgs(base)...)
		if err != nil {
			return syncs, err
		}
		r.DeviceNs += res.Timing.DeviceNs
		count, err := s.readWord(frontier.CtlCountWord(int(base + k)))
		if err != nil {
			return syncs, err
		}
		syncs += 2
		if count == 0 {
			return syncs, nil
		}
	}
}

// nonCooperative returns c as an ordinary launch.
func (c LaunchConfig) nonCooperative() LaunchConfig {
	c.Cooperative = false
	return c
}

// runMegakernel: one cooperative launch over the co-resident grid runs every
// level; the host reads the final changed flag once (FinalFlagOnly), with
// the overflow flag next to it. Run-ahead can push a vertex more than once
// in one step (each time its label is lowered), so the queues' capacity,
// which bounds a level-synchronous level, could in principle overflow: the
// traversal is then run again with one barrier per level (r.Reruns).
func (s *BFSSession) runMegakernel(r *BFSRun) (uint64, error) {
	syncs, overflow, err := s.launchMegakernel(r, uint64(s.cfg.MegakernelAhead))
	if err != nil || overflow == 0 || s.cfg.MegakernelAhead == 1 {
		return syncs, err
	}
	if err := s.reset(r.Root); err != nil {
		return syncs, err
	}
	r.Reruns = 1
	more, _, err := s.launchMegakernel(r, 1)
	// The reset is one more dispatch with its own sync.
	return syncs + more + 1, err
}

// launchMegakernel launches the megakernel with run-ahead depth ahead and
// returns the syncs it expects and the overflow flag.
func (s *BFSSession) launchMegakernel(r *BFSRun, ahead uint64) (uint64, uint32, error) {
	low := uint64(0)
	if s.lowDg {
		low = 1
	}
	t, err := s.x.Launch(s.kMega, s.megaPlan.Config(), append(s.graphArgs(), Ptr(s.q0), Ptr(s.q1), Ptr(s.ctl),
		U64(uint64(s.g.NumVertices())), U64(uint64(s.cfg.Chunk)), U64(s.qcap), U64(low),
		U64(uint64(s.conv.MaxDeviceIterations)), U64(ahead))...)
	if err != nil {
		return 0, 0, err
	}
	r.DeviceNs += t.DeviceNs
	words := s.ctlWord
	if err := s.x.DownloadRangeInto(s.ctl, 4*frontier.CtlResultChanged, words); err != nil {
		return 1, 0, err
	}
	changed, overflow := binary.LittleEndian.Uint32(words), binary.LittleEndian.Uint32(words[4:])
	if changed != 0 {
		return 2, overflow, fmt.Errorf("BFS megakernel from root %d did not converge within %d steps. Fix: raise the convergence plan's iteration budget", r.Root, s.conv.MaxDeviceIterations)
	}
	return 2, overflow, nil
}

// runScanLoop: the plain scan wave, one launch per level over every
// vertex, with a 4-byte readback of the level's changed flag
// (Executor.LaunchRead).
func (s *BFSSession) runScanLoop(r *BFSRun) (uint64, error) {
	n := uint64(s.g.NumVertices())
	blocks := uint32(min((n+255)/256, uint64(s.levelPlan.GridBlocks)))
	var syncs uint64
	for d := 0; ; d++ {
		if d >= int(s.conv.MaxDeviceIterations) {
			return syncs, fmt.Errorf("BFS host-loop-scan from root %d ran %d levels without converging. Fix: validate the graph", r.Root, d)
		}
		t, err := s.x.LaunchRead(s.kScan, Linear(blocks, 256), s.ctl, 4*uint64(frontier.CtlScanChangedWord(d)), s.ctlWord[:4],
			append(s.graphArgs(), Ptr(s.ctl), U64(n), U64(uint64(d)))...)
		if err != nil {
			return syncs, err
		}
		r.DeviceNs += t.DeviceNs
		changed := binary.LittleEndian.Uint32(s.ctlWord)
		syncs += 2
		if changed == 0 {
			r.Levels = d + 1
			return syncs, nil
		}
	}
}

// Levels downloads the level of every vertex from the last run.
func (s *BFSSession) Levels() ([]int32, error) {
	raw, err := s.x.Download(s.level)
	if err != nil {
		return nil, err
	}
	out := make([]int32, len(raw)/4)
	for i := range out {
		out[i] = int32(binary.LittleEndian.Uint32(raw[4*i:]))
	}
	return out, nil
}

// BarrierFloor measures the megakernel's synchronisation alone: reps
// cooperative launches, on the megakernel's grid, that each cross levels
// level barriers and do nothing else. It returns each launch's device time
// in ns (the per-level floor is that over levels).
func (s *BFSSession) BarrierFloor(levels, reps int) ([]uint64, error) {
	if levels < 1 || reps < 1 {
		return nil, invalidArg("barrier floor", "Fix: cross at least one barrier at least once.", "levels %d, reps %d", levels, reps)
	}
	cfg := s.megaPlan.Config()
	out := make([]uint64, 0, reps)
	for i := -1; i < reps; i++ {
		if err := s.reset(0); err != nil {
			return nil, err
		}
		t, err := s.x.Launch(s.kBarrier, cfg, Ptr(s.ctl), U64(uint64(levels)))
		if err != nil {
			return nil, err
		}
		if i >= 0 {
			out = append(out, t.DeviceNs)
		}
	}
	return out, nil
}

// CopyRun is one timed device-to-device copy.
type CopyRun struct {
	Bytes    uint64 `json:"bytes"` // bytes read plus bytes written
	WallNs   uint64 `json:"wall_ns"`
	DeviceNs uint64 `json:"device_ns"`
}

// CopyCeiling measures the device's copy bandwidth: reps timed copies of
// size bytes (rounded down to 16-byte words) between two scratch buffers,
// after one warm-up copy. Each run counts bytes read plus written. The
// buffers are freed before it returns.
func (s *BFSSession) CopyCeiling(size uint64, reps int) ([]CopyRun, error) {
	n16 := size / 16
	if n16 == 0 || reps < 1 {
		return nil, invalidArg("copy ceiling", "Fix: copy at least 16 bytes at least once.", "size %d, reps %d", size, reps)
	}
	src, err := s.x.Alloc(16 * n16)
	if err != nil {
		return nil, err
	}
	defer s.x.Free(src)
	dst, err := s.x.Alloc(16 * n16)
	if err != nil {
		return nil, err
	}
	defer s.x.Free(dst)
	plan, err := s.x.CooperativeGrid(s.kCopy, 512, 0)
	if err != nil {
		return nil, err
	}
	cfg := plan.Config().nonCooperative()
	out := make([]CopyRun, 0, reps)
	for i := -1; i < reps; i++ {
		t, err := s.x.Launch(s.kCopy, cfg, Ptr(src), Ptr(dst), U64(n16))
		if err != nil {
			return nil, err
		}
		if i >= 0 {
			out = append(out, CopyRun{Bytes: 2 * 16 * n16, WallNs: t.WallNs, DeviceNs: t.DeviceNs})
		}
	}
	return out, nil
}

// DriverVersion returns the CUDA driver API version as "cuda-MAJOR.MINOR"
// (cuDriverGetVersion).
func DriverVersion() string {
	v := cu.Version()
	return fmt.Sprintf("cuda-%d.%d", v/1000, (v%1000)/10)
}
