//go:build cuda

package main

import (
	"bytes"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gpuplan/gpuplan/evidence"
	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/frontier"
)

func runBench(e *env, args []string) error {
	o, err := parseBenchArgs(e, args)
	if err != nil {
		return err
	}
	logf := func(format string, a ...any) { fmt.Fprintf(e.stderr, "bench: "+format+"\n", a...) }

	root := o.sourceRoot
	if root == "" {
		if root, err = findModuleRoot("."); err != nil {
			return err
		}
	}
	fingerprint, err := evidence.SourceFingerprint(root)
	if err != nil {
		return err
	}

	t0 := time.Now()
	g, err := o.spec.Build(o.seed, frontier.DefaultLimits())
	if err != nil {
		return err
	}
	g.Name = o.spec.Name()
	logf("graph %s: %d vertices, %d edges (built in %s)", g.Name, g.NumVertices(), g.NumEdgeEntries()/2, time.Since(t0).Round(time.Millisecond))

	var roots []int32
	if len(o.rootIDs) > 0 {
		for _, r := range o.rootIDs {
			if err := frontier.CheckRoot(g, r); err != nil {
				return err
			}
			roots = append(roots, int32(r))
		}
	} else if roots, err = frontier.Roots(g, o.roots, o.seed); err != nil {
		return err
	}

	// CPU reference, one goroutine per root (bounded by the CPUs).
	t0 = time.Now()
	stats := make([]rootStat, len(roots))
	refs := make([][]int32, len(roots))
	errs := make([]error, len(roots))
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for i, r := range roots {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			lv, err := frontier.BFS(g, r)
			if err == nil {
				err = frontier.Validate(g, r, lv)
			}
			if err != nil {
				errs[i] = err
				return
			}
			st := frontier.Stats(g, lv)
			refs[i] = lv
			stats[i] = rootStat{Root: r, Levels: st.Levels, Reached: st.Reached, Edges: st.Edges, Checksum: frontier.Checksum(lv)}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	var totalLevels uint64
	refSums := make([]uint64, len(roots))
	for i, s := range stats {
		totalLevels += uint64(s.Levels)
		refSums[i] = s.Checksum
	}
	refChecksum := combinedChecksum(refSums)
	logf("CPU reference BFS from %d roots: %d levels in all (%s)", len(roots), totalLevels, time.Since(t0).Round(time.Millisecond))

	x, err := executor.Open(o.device, executor.Options{})
	if err != nil {
		return err
	}
	defer x.Close()
	dev := x.Device()
	s, err := executor.NewBFSSession(x, g, executor.BFSConfig{Chunk: o.chunk, CheckEvery: o.checkEvery, MegakernelBlocksPerSM: o.megaPerSM, MegakernelThreads: o.megaThr, MegakernelAhead: o.megaAhead})
	if err != nil {
		return err
	}
	defer s.Close()
	mp, lp := s.MegakernelGrid(), s.LevelGrid()
	logf("device %s (cc %d.%d, %d SMs); megakernel grid %d x %d (%d blocks/SM by the occupancy model, %d by the driver); level grid %d x %d; convergence %d levels max, %s",
		dev.Name, dev.Major, dev.Minor, dev.SMCount, mp.GridBlocks, mp.BlockThreads, mp.ModelBlocksPerSM, mp.DriverBlocksPerSM,
		lp.GridBlocks, lp.BlockThreads, s.Convergence().MaxDeviceIterations, s.Convergence().ReadbackPolicy)

	driver := executor.DriverVersion()
	if b, err := os.ReadFile("/proc/driver/nvidia/version"); err == nil {
		if v := driverVersionFromProc(string(b)); v != "" {
			driver = v
		}
	}
	version, commit := buildVersion()
	prov := evidence.Provenance{Version: version, Commit: commit, SourceFingerprint: fingerprint, DeviceName: dev.Name,
		ComputeMajor: uint32(dev.Major), ComputeMinor: uint32(dev.Minor), DriverVersion: driver}
	workload := evidence.Workload{Name: g.Name, Nodes: uint64(g.NumVertices()), Edges: uint64(g.NumEdgeEntries() / 2), Iterations: totalLevels}

	arms := make([]executor.BFSArm, len(o.arms))
	for i, a := range o.arms {
		if arms[i], err = executor.ParseBFSArm(a); err != nil {
			return err
		}
	}

	// runOne runs one traversal and checks its levels against the reference
	// (the download and the check are outside the timed region).
	runOne := func(arm executor.BFSArm, i int) (executor.BFSRun, uint64, error) {
		r, err := s.Run(arm, roots[i])
		if err != nil {
			return r, 0, err
		}
		lv, err := s.Levels()
		if err != nil {
			return r, 0, err
		}
		// Identical levels have the reference's checksum; anything else fails.
		if !slices.Equal(lv, refs[i]) {
			verr := frontier.Validate(g, roots[i], lv)
			return r, 0, fmt.Errorf("arm %s from root %d: the GPU levels differ from the CPU reference (%v). Fix: this is a kernel bug; rerun with --arms to isolate the arm", arm, roots[i], verr)
		}
		sum := stats[i].Checksum
		if r.Levels != stats[i].Levels {
			return r, 0, fmt.Errorf("arm %s from root %d: the device counted %d levels, the reference %d. Fix: this is a kernel bug", arm, roots[i], r.Levels, stats[i].Levels)
		}
		return r, sum, nil
	}

	// Warm-up and correctness: every arm from every root once, untimed.
	t0 = time.Now()
	for _, arm := range arms {
		var levels, barriers, reruns int
		var relabels uint64
		for i := range roots {
			r, _, err := runOne(arm, i)
			if err != nil {
				return err
			}
			levels, barriers, relabels, reruns = levels+r.Levels, barriers+r.Barriers, relabels+r.Relabels, reruns+r.Reruns
		}
		if arm == executor.ArmMegakernel {
			logf("megakernel: %d levels in %d grid barriers (%.2f levels per barrier), %d labels lowered, %d level-synchronous reruns", levels, barriers, float64(levels)/float64(max(barriers, 1)), relabels, reruns)
		}
	}
	logf("correctness: %d arms x %d roots give levels identical to the CPU reference (%s)", len(arms), len(roots), time.Since(t0).Round(time.Millisecond))

	bar := &progressBar{w: e.stderr, on: o.progress, total: o.samples * len(arms)}
	wall := make([][]float64, len(arms))
	devNs := make([][]float64, len(arms))
	perRoot := make([][][]float64, len(arms))
	for a := range arms {
		perRoot[a] = make([][]float64, len(roots))
	}
	var rows []evidence.Sample
	for smp := 0; smp < o.samples; smp++ {
		for k := range arms {
			a := (smp + k) % len(arms) // rotate the order every sample
			arm := arms[a]
			var w, d float64
			var up, al, hs uint64
			sums := make([]uint64, len(roots))
			for i := range roots {
				r, sum, err := runOne(arm, i)
				if err != nil {
					return err
				}
				sums[i] = sum
				w += float64(r.WallNs)
				d += float64(r.DeviceNs)
				up, al, hs = up+r.TimedUploads, al+r.TimedAllocations, hs+r.TimedHostSyncs
				perRoot[a][i] = append(perRoot[a][i], float64(r.WallNs))
			}
			wall[a] = append(wall[a], w)
			devNs[a] = append(devNs[a], d)
			p := prov
			p.Date = time.Now().UTC()
			rows = append(rows, evidence.Sample{Provenance: p, Workload: workload, Arm: string(arm), Index: uint64(smp),
				WallNS: w, DeviceNS: d, Checksum: combinedChecksum(sums), TimedUploads: up, TimedAllocations: al, TimedHostSyncs: hs})
			bar.step(fmt.Sprintf("%s %s sample %d/%d", g.Name, arm, smp+1, o.samples))
		}
	}

	sum := &benchSummary{Workload: g.Name, Nodes: g.NumVertices(), Edges: uint64(g.NumEdgeEntries() / 2), Roots: stats,
		TotalLevels: totalLevels, Samples: o.samples, Device: fmt.Sprintf("%s (cc %d.%d, driver %s)", dev.Name, dev.Major, dev.Minor, driver)}
	if o.copyBytes > 0 {
		budget, err := x.Budget()
		if err != nil {
			return err
		}
		size := min(o.copyBytes, budget/3)
		runs, err := s.CopyCeiling(size, max(o.samples, 10))
		if err != nil {
			return err
		}
		var bw []float64
		for i, c := range runs {
			p := prov
			p.Date = time.Now().UTC()
			rows = append(rows, evidence.Sample{Provenance: p, Workload: workload, Arm: "copy-ceiling", Index: uint64(i),
				WallNS: float64(c.WallNs), DeviceNS: float64(c.DeviceNs), Checksum: "copy", BytesMoved: c.Bytes})
			if c.DeviceNs > 0 {
				bw = append(bw, float64(c.Bytes)/float64(c.DeviceNs))
			}
		}
		sum.CopyGBps = median(bw)
		logf("copy ceiling: %d MiB buffers, %.1f GB/s (median of %d, read + write)", size>>20, sum.CopyGBps, len(bw))
	}
	if slices.Contains(arms, executor.ArmMegakernel) {
		const floorLevels = 4096
		ns, err := s.BarrierFloor(floorLevels, 10)
		if err != nil {
			return err
		}
		var f []float64
		for _, v := range ns {
			f = append(f, float64(v)/floorLevels)
		}
		sum.BarrierFloorNs = median(f)
		logf("megakernel barrier floor: %.2f us per level (median of %d launches of %d barriers, %d blocks)", sum.BarrierFloorNs/1e3, len(f), floorLevels, mp.GridBlocks)
	}
	for a, arm := range arms {
		sum.Arms = append(sum.Arms, summarize(string(arm), wall[a], devNs[a], perRoot[a], stats, totalLevels))
	}
	finishSummary(sum)
	for _, r := range rows {
		if r.Arm != "copy-ceiling" && r.Checksum != refChecksum {
			return fmt.Errorf("arm %s sample %d: checksum %s differs from the reference %s. Fix: this is a kernel bug", r.Arm, r.Index, r.Checksum, refChecksum)
		}
	}

	var table bytes.Buffer
	if err := writeSummaryTable(&table, sum); err != nil {
		return err
	}
	if o.out != "" {
		var buf bytes.Buffer
		if err := evidence.WriteSamples(&buf, rows); err != nil {
			return err
		}
		for _, line := range strings.Split(strings.TrimRight(table.String(), "\n"), "\n") {
			buf.WriteString("# " + line + "\n")
		}
		if err := os.WriteFile(o.out, buf.Bytes(), 0o644); err != nil {
			return fmt.Errorf("writing %s: %w. Fix: check the directory exists and is writable", o.out, err)
		}
		logf("wrote %d samples to %s", len(rows), o.out)
	}
	if o.summary != "" {
		if err := os.WriteFile(o.summary, table.Bytes(), 0o644); err != nil {
			return fmt.Errorf("writing %s: %w. Fix: check the directory exists and is writable", o.summary, err)
		}
	}
	if o.json {
		return writeJSON(e.stdout, sum)
	}
	_, err = e.stdout.Write(table.Bytes())
	return err
}
