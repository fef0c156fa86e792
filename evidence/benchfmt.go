package evidence

import (
	"io"

	"golang.org/x/perf/benchfmt"
)

// BenchmarkName is the benchmark name every exported sample carries in
// Go's benchmark format, before its sub-name keys: samples are written as
// "BenchmarkEvidence/workload=W/arm=A".
const BenchmarkName = "Evidence"

// Units of the values WriteBenchfmt writes. Readers of the format (benchfmt,
// benchstat) convert ns to seconds and MB to bytes when they read them.
const (
	UnitWallNS                = "ns/op"               // wall_ns of one sample
	UnitWallNSPerIteration    = "ns/iteration"        // wall_ns over the workload's iterations
	UnitDeviceNS              = "device-ns/op"        // device_ns, where recorded
	UnitDeviceNSPerIteration  = "device-ns/iteration" // device_ns over the iterations, where recorded
	UnitBandwidthMBPerSecond  = "MB/s"                // bytes_moved over device time (wall time where not recorded); bandwidth arms only
	benchfmtIterationsPerLine = 1                     // each line is one timed repetition
)

// WriteBenchfmt writes the samples of files in Go's benchmark format
// (golang.org/x/perf/benchfmt), one result line per sample, so that
// benchstat and other tools of the Go benchmark ecosystem read gpuplan's
// evidence. Each file's provenance is written as file configuration (run,
// device, compute-capability, driver, gpuplan-version, commit,
// source-fingerprint; run is the file's label from RunLabels). A sample is
// "BenchmarkEvidence/workload=W/arm=A 1" followed by its wall time (ns/op),
// the wall time per iteration (ns/iteration, when the workload states its
// iterations and the arm is not a bandwidth arm), the same two for the
// device time where it was recorded (device-ns/op, device-ns/iteration) and,
// for bandwidth arms, the bandwidth (MB/s).
//
// benchstat groups results into tables by all file configuration keys, so
// to compare two runs of different builds with it, ignore the keys that
// name the build and the run:
//
//	benchstat -ignore run,commit,gpuplan-version,source-fingerprint old.txt new.txt
//
// and to compare the arms of one run side by side: benchstat -col /arm run.txt.
func WriteBenchfmt(w io.Writer, files []ResultFile) error {
	bw := benchfmt.NewWriter(w)
	labels := RunLabels(files)
	for i, f := range files {
		for _, s := range f.Samples {
			if err := bw.Write(benchfmtResult(labels[i], &s)); err != nil {
				return err
			}
		}
	}
	return nil
}

func benchfmtResult(run string, s *Sample) *benchfmt.Result {
	p := &s.Provenance
	r := &benchfmt.Result{
		Name:  benchfmt.Name(BenchmarkName + "/workload=" + s.Workload.Name + "/arm=" + s.Arm),
		Iters: benchfmtIterationsPerLine,
	}
	for _, kv := range [][2]string{
		{"run", run}, {"device", p.DeviceName}, {"compute-capability", computeString(p.ComputeMajor, p.ComputeMinor)},
		{"driver", p.DriverVersion}, {"gpuplan-version", p.Version}, {"commit", p.Commit}, {"source-fingerprint", p.SourceFingerprint},
	} {
		r.Config = append(r.Config, benchfmt.Config{Key: kv[0], Value: []byte(kv[1]), File: true})
	}
	bandwidth := s.BytesMoved > 0
	perIteration := s.Workload.Iterations > 0 && !bandwidth
	it := float64(s.Workload.Iterations)
	r.Values = append(r.Values, benchfmt.Value{Value: s.WallNS, Unit: UnitWallNS})
	if perIteration {
		r.Values = append(r.Values, benchfmt.Value{Value: s.WallNS / it, Unit: UnitWallNSPerIteration})
	}
	if s.DeviceNS > 0 {
		r.Values = append(r.Values, benchfmt.Value{Value: s.DeviceNS, Unit: UnitDeviceNS})
		if perIteration {
			r.Values = append(r.Values, benchfmt.Value{Value: s.DeviceNS / it, Unit: UnitDeviceNSPerIteration})
		}
	}
	if bandwidth {
		t := s.DeviceNS
		if t <= 0 {
			t = s.WallNS
		}
		// bytes per ns is GB/s; Go's benchmarks report MB/s.
		r.Values = append(r.Values, benchfmt.Value{Value: float64(s.BytesMoved) / t * 1e3, Unit: UnitBandwidthMBPerSecond})
	}
	return r
}
