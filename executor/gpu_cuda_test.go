//go:build cuda

package executor

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/gpuplan/gpuplan/occupancy"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

//go:embed kernels/testkernels.ptx
var testKernelsPTX []byte

// gpuSummary collects one line per check for the table printed at the end.
type gpuSummary struct{ rows [][3]string }

func (s *gpuSummary) add(check, result, detail string) {
	s.rows = append(s.rows, [3]string{check, result, detail})
}

func (s *gpuSummary) print() {
	w := tabwriter.NewWriter(os.Stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(w, "\n=== GPU summary ===")
	fmt.Fprintln(w, "check\tresult\tdetail")
	for _, r := range s.rows {
		fmt.Fprintf(w, "%s\t%s\t%s\n", r[0], r[1], r[2])
	}
	w.Flush()
}

func passFail(ok bool) string {
	if ok {
		return "PASS"
	}
	return "FAIL"
}

// TestGPU runs every device check on one executor, in order, and prints a
// summary table. It skips without a GPU.
func TestGPU(t *testing.T) {
	if initStatus() != 0 {
		err := unavailableFromInit(initStatus())
		if os.Getenv("GPUPLAN_REQUIRE_GPU") != "" {
			t.Fatalf("GPUPLAN_REQUIRE_GPU is set but no GPU is usable: %v", err)
		}
		t.Skip(err.Error())
	}
	sum := &gpuSummary{}
	defer sum.print()
	x, err := Open(0, Options{})
	require.NoError(t, err)
	closed := false
	defer func() {
		if !closed {
			_ = x.Close()
		}
	}()
	dev := x.Device()
	sum.add("device", "", fmt.Sprintf("%s, cc %d.%d, %d SMs, %.1f GiB, PTX target sm_%d", dev.Name, dev.Major, dev.Minor, dev.SMCount, float64(dev.TotalMemoryBytes)/(1<<30), x.PTXTarget()))
	jit, jerr := JITCacheStatus()
	sum.add("jit cache", passFail(jerr == nil), fmt.Sprintf("CUDA_CACHE_PATH=%s max=%d", jit.Path, jit.MaxBytes))

	m, err := x.LoadModule(testKernelsPTX)
	require.NoError(t, err)
	kernel := func(name string) *Kernel {
		k, err := m.Kernel(name)
		require.NoError(t, err, name)
		return k
	}
	// Warm every kernel's attributes before measuring memory.
	names := []string{"occ_regs_tiny", "occ_regs_16", "occ_regs_40", "occ_regs_72", "occ_regs_120", "occ_regs_200", "occ_bounded_256", "occ_static_smem"}
	for _, n := range names {
		kernel(n)
	}
	freeStart, _, err := x.MemInfo()
	require.NoError(t, err)

	t.Run("GPUProbeMatchesProfile", func(t *testing.T) {
		p := occupancy.Closest(dev)
		diffs := occupancy.Diff(dev, p.Device)
		occFields := map[string]bool{"cc_major": true, "cc_minor": true, "sm_count": true, "warp_size": true,
			"max_threads_per_block": true, "max_threads_per_sm": true, "max_blocks_per_sm": true, "registers_per_sm": true,
			"registers_per_block": true, "shared_mem_per_sm": true, "shared_mem_per_block": true,
			"shared_mem_per_block_optin": true, "reserved_shared_mem_per_block": true, "cooperative_launch": true,
			"max_grid_dim": true, "max_block_dim": true}
		var bad, other []string
		for _, d := range diffs {
			s := fmt.Sprintf("%s live=%s profile=%s", d.Field, d.A, d.B)
			t.Log(s)
			if occFields[d.Field] {
				bad = append(bad, s)
			} else {
				other = append(other, s)
			}
		}
		assert.Empty(t, bad, "occupancy-relevant fields must match the built-in profile")
		detail := fmt.Sprintf("closest profile %s; %d occupancy fields differ", p.Short, len(bad))
		if len(other) > 0 {
			detail += "; other diffs: " + strings.Join(other, "; ")
		}
		sum.add("probe vs profile", passFail(len(bad) == 0), detail)
	})

	t.Run("GPUOccupancySweep", func(t *testing.T) {
		blocks := []int{}
		for b := 32; b <= 1024; b += 32 {
			blocks = append(blocks, b)
		}
		dyns := []int{0, 1024, 8 << 10, 20000, 40 << 10, 64 << 10, 100 << 10, 160 << 10}
		points, agree := 0, 0
		var mism []string
		var regs []string
		for _, n := range names {
			k := kernel(n)
			regs = append(regs, fmt.Sprintf("%s=%d", strings.TrimPrefix(n, "occ_"), k.Attributes().NumRegs))
			for _, dyn := range dyns {
				if dyn+k.Attributes().StaticSharedBytes > dev.SharedMemPerBlockOptIn {
					continue
				}
				for _, b := range blocks {
					if b > k.Attributes().MaxThreadsPerBlock {
						continue
					}
					drv, err := x.DriverMaxActiveBlocksPerSM(k, b, dyn)
					require.NoError(t, err)
					r, err := occupancy.Compute(dev, k.OccupancyKernel(dyn), b)
					require.NoError(t, err)
					points++
					if r.ActiveBlocksPerSM == drv {
						agree++
					} else if len(mism) < 20 {
						mism = append(mism, fmt.Sprintf("%s block=%d dyn=%d regs=%d: model %d (%s) driver %d", n, b, dyn, k.Attributes().NumRegs, r.ActiveBlocksPerSM, r.Limit, drv))
					}
				}
			}
		}
		for _, s := range mism {
			t.Log(s)
		}
		t.Log("registers: " + strings.Join(regs, " "))
		assert.GreaterOrEqual(t, points, 500)
		assert.Equal(t, points, agree, "the occupancy model must agree with the driver")
		sum.add("occupancy sweep", passFail(points >= 500 && agree == points), fmt.Sprintf("%d/%d points agree; regs %s", agree, points, strings.Join(regs, " ")))
	})

	t.Run("GPUResidentIO", func(t *testing.T) {
		r := rand.New(rand.NewPCG(2026, 6))
		checks := 0
		// Sizes straddle the 16 MiB staging chunk.
		sizes := []int{1, 7, 4096, 1<<20 + 3, 16 << 20, 40<<20 + 11}
		bufs := make([]Buffer, len(sizes))
		mirror := make([][]byte, len(sizes))
		for i, n := range sizes {
			b, err := x.Alloc(uint64(n))
			require.NoError(t, err)
			bufs[i] = b
			mirror[i] = make([]byte, n)
			for j := range mirror[i] {
				mirror[i][j] = byte(r.Uint32())
			}
			require.NoError(t, x.Upload(b, mirror[i]))
			got, err := x.Download(b)
			require.NoError(t, err)
			require.True(t, bytes.Equal(mirror[i], got), "full round trip of %d bytes", n)
			checks++
		}
		// Many uploads at offsets, overlapping and touching (fused).
		for round := 0; round < 20; round++ {
			var ups []Upload
			for u := 0; u < 12; u++ {
				i := r.IntN(len(sizes))
				n := sizes[i]
				off := r.IntN(n)
				l := 1 + r.IntN(min(n-off, 1<<16))
				data := make([]byte, l)
				for j := range data {
					data[j] = byte(r.Uint32())
				}
				ups = append(ups, Upload{Buffer: bufs[i], Offset: uint64(off), Data: data})
			}
			require.NoError(t, x.UploadMany(ups))
			for _, u := range ups {
				for bi := range bufs {
					if bufs[bi].ID == u.Buffer.ID {
						copy(mirror[bi][u.Offset:], u.Data)
					}
				}
			}
			// Many ranges over many buffers (fused readback).
			var reqs []ReadRequest
			for q := 0; q < 16; q++ {
				i := r.IntN(len(sizes))
				off := r.IntN(sizes[i])
				l := r.IntN(min(sizes[i]-off, 1<<17) + 1)
				reqs = append(reqs, ReadRequest{Buffer: bufs[i], Offset: uint64(off), Len: uint64(l)})
			}
			got, err := x.DownloadMany(reqs)
			require.NoError(t, err)
			for qi, q := range reqs {
				for bi := range bufs {
					if bufs[bi].ID == q.Buffer.ID {
						require.True(t, bytes.Equal(mirror[bi][q.Offset:q.Offset+q.Len], got[qi]), "round %d request %d", round, qi)
						checks++
					}
				}
			}
		}
		// The device really holds the bytes: xor on the device, then compare.
		xk := kernel("xor_bytes")
		last := len(bufs) - 1
		_, err := x.Launch(xk, Linear(264, 256), Ptr(bufs[last]), U64(uint64(sizes[last])), U64(0x5a))
		require.NoError(t, err)
		for j := range mirror[last] {
			mirror[last][j] ^= 0x5a
		}
		got, err := x.Download(bufs[last])
		require.NoError(t, err)
		require.True(t, bytes.Equal(mirror[last], got))
		checks++
		// In flight: freeing a buffer a pending dispatch uses is refused.
		pend, err := x.LaunchAsync(xk, Linear(264, 256), Ptr(bufs[last]), U64(uint64(sizes[last])), U64(0x33))
		require.NoError(t, err)
		var ife *InFlightError
		require.ErrorAs(t, x.Free(bufs[last]), &ife)
		_, err = pend.Wait()
		require.NoError(t, err)
		for j := range mirror[last] {
			mirror[last][j] ^= 0x33
		}
		checks++
		rs, err := x.DownloadRanges(bufs[last], []Range{{0, 100}, {50, 200}, {1 << 20, 5000}, {uint64(sizes[last]) - 9, 9}})
		require.NoError(t, err)
		require.Equal(t, mirror[last][0:100], rs[0])
		require.Equal(t, mirror[last][50:250], rs[1])
		require.Equal(t, mirror[last][1<<20:1<<20+5000], rs[2])
		require.Equal(t, mirror[last][sizes[last]-9:], rs[3])
		checks += 4
		// Bandwidth through pinned staging (256 MiB each way).
		big, err := x.Alloc(256 << 20)
		require.NoError(t, err)
		data := make([]byte, 256<<20)
		for j := 0; j < len(data); j += 4096 {
			data[j] = byte(j >> 12)
		}
		before := x.Telemetry()
		t0 := nowNs()
		require.NoError(t, x.Upload(big, data))
		t1 := nowNs()
		back, err := x.Download(big)
		t2 := nowNs()
		require.NoError(t, err)
		require.True(t, bytes.Equal(data, back))
		checks++
		t3 := nowNs()
		require.NoError(t, x.DownloadRangeInto(big, 0, back))
		t4 := nowNs()
		require.True(t, bytes.Equal(data, back))
		after := x.Telemetry()
		h2d := float64(256<<20) / float64(t1-t0)
		d2h := float64(256<<20) / float64(t2-t1)
		d2hInto := float64(256<<20) / float64(t4-t3)
		require.NoError(t, x.Free(big))
		for _, b := range bufs {
			require.NoError(t, x.Free(b))
		}
		sum.add("resident IO", "PASS", fmt.Sprintf("%d byte-exact checks (full, ranges, fused many-buffer, device xor; in-flight free refused); staged H2D %.2f GB/s, D2H %.2f GB/s (%.2f GB/s into a reused buffer); %d H2D bytes counted", checks, h2d, d2h, d2hInto, after.HostToDeviceBytes-before.HostToDeviceBytes))
	})

	t.Run("GPUBudgetRefusal", func(t *testing.T) {
		budget, err := x.Budget()
		require.NoError(t, err)
		res := x.ResidentBytes()
		// 1 MiB over the budget (free memory may move a little between calls).
		over, err := x.Alloc(budget - res + 1<<20)
		if err == nil {
			_ = x.Free(over)
		}
		var be *BudgetError
		require.ErrorAs(t, err, &be)
		_, err = x.Alloc(uint64(dev.TotalMemoryBytes))
		require.ErrorAs(t, err, &be)
		t.Log(err)
		sum.add("budget refusal", "PASS", fmt.Sprintf("budget %d B of %d B total; over-budget allocation refused: %s", budget, dev.TotalMemoryBytes, be.Error()[:60]))
	})

	t.Run("GPUPersistentBarrier", func(t *testing.T) {
		k := kernel("stencil_phases")
		const steps = 2000
		refs := map[int][]uint32{}
		run := func(n int, grid uint32, block uint32, force bool) (SplitResult, bool) {
			r := rand.New(rand.NewPCG(uint64(n), 7))
			init := make([]uint32, n)
			for i := range init {
				init[i] = r.Uint32()
			}
			want, ok := refs[n]
			if !ok {
				want = cpuStencil(init, steps)
				refs[n] = want
			}
			a, err := x.Alloc(uint64(4 * n))
			require.NoError(t, err)
			b, err := x.Alloc(uint64(4 * n))
			require.NoError(t, err)
			bar, err := x.Alloc(128)
			require.NoError(t, err)
			require.NoError(t, x.Upload(a, u32bytes(init)))
			require.NoError(t, x.Upload(b, make([]byte, 4*n)))
			require.NoError(t, x.Upload(bar, make([]byte, 128)))
			cfg := Linear(grid, block)
			cfg.Cooperative = true
			res, err := x.DispatchWithGridSyncSplit(k, cfg, steps, force, Ptr(a), Ptr(b), U64(uint64(n)), Ptr(bar))
			require.NoError(t, err)
			out := a // steps even: the last phase (odd) writes a
			got, err := x.Download(out)
			require.NoError(t, err)
			ok = bytes.Equal(u32bytes(want), got)
			for _, h := range []Buffer{a, b, bar} {
				require.NoError(t, x.Free(h))
			}
			return res, ok
		}
		plan, err := x.CooperativeGrid(k, 256, 0)
		require.NoError(t, err)
		t.Logf("co-resident grid at 256 threads: %+v", plan)
		// Refusal: one block more than co-resident is never launched.
		over := plan.Config()
		over.Grid[0]++
		before := x.Telemetry().KernelLaunches
		_, err = x.Launch(k, over, Ptr(Buffer{ID: 0}), Ptr(Buffer{}), U64(0), Ptr(Buffer{}), U64(0), U64(1))
		require.Error(t, err)
		var ce *CoResidencyError
		refused := errors.As(err, &ce)
		assert.True(t, refused, "%v", err)
		require.Equal(t, before, x.Telemetry().KernelLaunches)

		type variant struct {
			name  string
			n     int
			grid  uint32
			force bool
		}
		vs := []variant{
			{"coop 4096 el, 132 blocks", 4096, uint32(dev.SMCount), false},
			{"split 4096 el, 132 blocks", 4096, uint32(dev.SMCount), true},
			{fmt.Sprintf("coop 1M el, %d blocks", plan.GridBlocks), 1 << 20, plan.GridBlocks, false},
			{fmt.Sprintf("split 1M el, %d blocks", plan.GridBlocks), 1 << 20, plan.GridBlocks, true},
		}
		allOK := true
		var parts []string
		for _, v := range vs {
			res, ok := run(v.n, v.grid, 256, v.force)
			allOK = allOK && ok
			assert.True(t, ok, v.name)
			perStep := float64(res.Timing.DeviceNs) / steps / 1000
			parts = append(parts, fmt.Sprintf("%s: %.2f us/step (%d launches, %s)", v.name, perStep, res.Launches, passFail(ok)))
			t.Logf("%s: %+v", v.name, res)
		}
		sum.add("persistent barrier 2000 steps", passFail(allOK && refused), strings.Join(parts, "; ")+fmt.Sprintf("; grid %d+1 refused: %v", plan.GridBlocks, refused))
	})

	t.Run("GPULaunchOverhead", func(t *testing.T) {
		measure := func(x *Executor, k *Kernel, flag Buffer) (wall, enq, devns, loop, lr uint64) {
			var w, e, d, l, q []uint64
			word := make([]byte, 4)
			for i := 0; i < 300; i++ {
				tm, err := x.Launch(k, Linear(1, 32), U64(0))
				require.NoError(t, err)
				// Host-driven wave step: launch, 4-byte readback, host test.
				t0 := nowNs()
				_, err = x.Launch(k, Linear(1, 32), U64(0))
				require.NoError(t, err)
				require.NoError(t, x.DownloadRangeInto(flag, 0, word))
				t1 := nowNs()
				_, err = x.LaunchRead(k, Linear(1, 32), flag, 0, word, U64(0))
				require.NoError(t, err)
				t2 := nowNs()
				if i >= 50 {
					w, e, d, l = append(w, tm.WallNs), append(e, tm.EnqueueNs), append(d, tm.DeviceNs), append(l, uint64(t1-t0))
					q = append(q, uint64(t2-t1))
				}
			}
			return median(w), median(e), median(d), median(l), median(q)
		}
		flag, err := x.Alloc(4)
		require.NoError(t, err)
		w, e, d, l, q := measure(x, kernel("empty_kernel"), flag)
		require.NoError(t, x.Free(flag))
		parts := []string{fmt.Sprintf("polling driver thread: wall %.1f us, enqueue %.1f us, device %.1f us, launch+4B readback %.1f us (LaunchRead %.1f us)",
			float64(w)/1000, float64(e)/1000, float64(d)/1000, float64(l)/1000, float64(q)/1000)}
		// A second executor whose driver thread always parks.
		y, err := Open(0, Options{DriverPoll: -1, SkipPTXProbe: true})
		require.NoError(t, err)
		ym, err := y.LoadModule(testKernelsPTX)
		require.NoError(t, err)
		yk, err := ym.Kernel("empty_kernel")
		require.NoError(t, err)
		yflag, err := y.Alloc(4)
		require.NoError(t, err)
		w, e, d, l, q = measure(y, yk, yflag)
		require.NoError(t, y.Close())
		parts = append(parts, fmt.Sprintf("parking driver thread: wall %.1f us, enqueue %.1f us, device %.1f us, launch+4B readback %.1f us (LaunchRead %.1f us)",
			float64(w)/1000, float64(e)/1000, float64(d)/1000, float64(l)/1000, float64(q)/1000))
		sum.add("timed empty launch (medians)", "PASS", strings.Join(parts, "; "))
	})

	t.Run("GPUParity", func(t *testing.T) { gpuParity(t, x, kernel, sum) })

	t.Run("GPUBatchUpload", func(t *testing.T) { gpuBatchUpload(t, x, sum) })

	t.Run("GPUTelemetry", func(t *testing.T) {
		s := x.Telemetry()
		txt := s.PrometheusText()
		assert.Contains(t, txt, "gpuplan_kernel_launches_total ")
		assert.Positive(t, s.KernelLaunches)
		assert.Positive(t, s.TimedDeviceMeasurements)
		sum.add("telemetry", "PASS", fmt.Sprintf("%d launches, %d timed, %d H2D B, %d D2H B, %d sync points", s.KernelLaunches, s.TimedDispatches, s.HostToDeviceBytes, s.DeviceToHostBytes, s.SyncPoints))
	})

	// Leak check: everything freed, then close; free memory must be back.
	require.Zero(t, x.ResidentBytes())
	freeEnd, _, err := x.MemInfo()
	require.NoError(t, err)
	require.NoError(t, x.Close())
	closed = true
	atClose := x.FreeMemoryAtClose()
	// The primary context keeps what it made lazily (kernels' local
	// memory) until its last holder releases it. Once this executor has
	// released it, a new one starts from a fresh context: its free memory
	// at open must be what this one's was, so everything the executor took
	// (staging, modules, streams, the context's own) was given back.
	y, err := Open(0, Options{})
	require.NoError(t, err)
	reopened := y.FreeMemoryAtOpen()
	require.NoError(t, y.Close())
	ok := reopened >= x.FreeMemoryAtOpen()
	assert.True(t, ok, "free at open %d, after warm-up %d, after frees %d, at close %d, at the next open %d", x.FreeMemoryAtOpen(), freeStart, freeEnd, atClose, reopened)
	sum.add("memory after close", passFail(ok), fmt.Sprintf("free at open %d, after warm-up %d, after frees %d, at close %d, at the next open %d (delta vs open %+d B)",
		x.FreeMemoryAtOpen(), freeStart, freeEnd, atClose, reopened, int64(reopened)-int64(x.FreeMemoryAtOpen())))
}

// gpuParity runs the parity cases (parity_test.go) against the CUDA
// backend: vyre's behaviours, messages, and the exact host waits and copies
// of each call, as TestParityOnFake checks them on the fake.
func gpuParity(t *testing.T, x *Executor, kernel func(string) *Kernel, sum *gpuSummary) {
	e := &parityEnv{x: x, addOne: kernel("add_one"), addPars: kernel("add_one_params"), fallback: func(t *testing.T) (*Executor, *Kernel) {
		y, err := Open(0, Options{ResidentBorrowedFallback: true, SkipPTXProbe: true})
		require.NoError(t, err)
		t.Cleanup(func() { _ = y.Close() })
		m, err := y.LoadModule(testKernelsPTX)
		require.NoError(t, err)
		k, err := m.Kernel("add_one")
		require.NoError(t, err)
		return y, k
	}}
	cases := parityCases()
	var failed []string
	for _, c := range cases {
		if !t.Run(c.name, func(t *testing.T) { c.run(t, e) }) {
			failed = append(failed, c.name)
		}
	}
	detail := fmt.Sprintf("%d/%d parity cases (vyre's resident IO, host and resident dispatch; waits and copies exact)", len(cases)-len(failed), len(cases))
	if len(failed) > 0 {
		detail += "; failed: " + strings.Join(failed, "; ")
	}
	sum.add("parity with vyre", passFail(len(failed) == 0), detail)
	ranges := "off: libnvToolsExt.so.1 was not found"
	if x.ProfilerRangesActive() {
		ranges = "on: libnvToolsExt loaded, gpuplan.* ranges around launches and copies"
	}
	sum.add("NVTX ranges", "", ranges)
}

// gpuBatchUpload times 64 buffers uploaded as one batch (UploadBuffers, one
// wait) against 64 single uploads (64 waits), for small and larger buffers.
func gpuBatchUpload(t *testing.T, x *Executor, sum *gpuSummary) {
	const nbuf, reps = 64, 30
	var parts []string
	for _, size := range []int{4 << 10, 256 << 10} {
		bufs := make([]Buffer, nbuf)
		data := make([][]byte, nbuf)
		for i := range bufs {
			b, err := x.Alloc(uint64(size))
			require.NoError(t, err)
			bufs[i] = b
			data[i] = bytes.Repeat([]byte{byte(i)}, size)
		}
		var batch, single []uint64
		var batchSyncs, singleSyncs uint64
		for r := 0; r < reps+3; r++ {
			before := x.Telemetry()
			t0 := nowNs()
			require.NoError(t, x.UploadBuffers(bufs, data))
			t1 := nowNs()
			mid := x.Telemetry()
			for i, b := range bufs {
				require.NoError(t, x.Upload(b, data[i]))
			}
			t2 := nowNs()
			batchSyncs, singleSyncs = mid.Sub(before).SyncPoints, x.Telemetry().Sub(mid).SyncPoints
			if r >= 3 { // the first rounds warm the staging pool
				batch, single = append(batch, uint64(t1-t0)), append(single, uint64(t2-t1))
			}
		}
		got, err := x.DownloadBuffers(bufs)
		require.NoError(t, err)
		require.Equal(t, data, got)
		assert.EqualValues(t, 1, batchSyncs)
		assert.EqualValues(t, nbuf, singleSyncs)
		for _, b := range bufs {
			require.NoError(t, x.Free(b))
		}
		mb, ms := median(batch), median(single)
		parts = append(parts, fmt.Sprintf("64 x %d KiB: one batch %.1f us (%d wait), 64 single uploads %.1f us (%d waits), %.1fx",
			size>>10, float64(mb)/1000, batchSyncs, float64(ms)/1000, singleSyncs, float64(ms)/float64(max(mb, 1))))
	}
	sum.add("batched upload (medians of 30)", "PASS", strings.Join(parts, "; "))
}

func cpuStencil(init []uint32, steps int) []uint32 {
	a := append([]uint32(nil), init...)
	b := make([]uint32, len(a))
	n := len(a)
	for p := 0; p < steps; p++ {
		in, out := a, b
		if p&1 == 1 {
			in, out = b, a
		}
		for i := 0; i < n; i++ {
			l := in[(i+n-1)%n]
			r := in[(i+1)%n]
			out[i] = (l * 3) ^ (in[i] + 0x9e3779b9 + uint32(p)) ^ (r >> 1)
		}
	}
	if steps%2 == 1 {
		return b
	}
	return a
}

func nowNs() int64 { return time.Now().UnixNano() }

func median(v []uint64) uint64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}
