package evidence

import (
	"io"
	"strings"

	"golang.org/x/perf/benchfmt"

	"github.com/gpuplan/gpuplan/internal/quote"
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
//
// Names read from the evidence (the run label, which comes from a file
// name, the device, the workload, the arm) cannot add lines, keys or
// results to the output. A configuration value that is not plain printable
// text (one that is empty, holds a line break or another character that is
// not printable, holds invalid UTF-8, has leading or trailing space, or
// starts with '"') is written as a Go string literal, which strconv.Unquote
// reads back; a value written unquoted never starts with '"'. In the
// benchmark name, the workload and the arm are percent-encoded: every byte
// other than an ASCII letter or digit, '.', '_', '-', ':' and '+' is
// written as '%' and two upper-case hex digits (a space as %20, '/' as %2F,
// '=' as %3D, '%' as %25, a newline as %0A), and so is the '-' of an arm
// that ends in '-' and digits, which benchfmt would otherwise read as
// GOMAXPROCS; url.PathUnescape decodes them. The names of valid evidence
// need neither and are written unchanged.
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
		Name:  benchfmtName(s.Workload.Name, s.Arm),
		Iters: benchfmtIterationsPerLine,
	}
	for _, kv := range [][2]string{
		{"run", run}, {"device", p.DeviceName}, {"compute-capability", computeString(p.ComputeMajor, p.ComputeMinor)},
		{"driver", p.DriverVersion}, {"gpuplan-version", p.Version}, {"commit", p.Commit}, {"source-fingerprint", p.SourceFingerprint},
	} {
		r.Config = append(r.Config, benchfmt.Config{Key: kv[0], Value: benchfmtValue(kv[1]), File: true})
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

// benchfmtValue renders s as a file configuration value of Go's benchmark
// format: s itself when it is plain printable text, else s as a Go string
// literal (quote.Text). The result is one line of printable characters and
// never empty, so it can neither end the configuration line early nor
// delete the key, as an empty value would.
func benchfmtValue(s string) []byte { return []byte(quote.Text(s)) }

// benchfmtName is the benchmark name of a sample of workload and arm,
// "Evidence/workload=W/arm=A" with W and A percent-encoded by
// benchfmtNamePart; the arm ends the name.
func benchfmtName(workload, arm string) benchfmt.Name {
	return benchfmt.Name(BenchmarkName + "/workload=" + benchfmtNamePart(workload, false) + "/arm=" + benchfmtNamePart(arm, true))
}

// benchfmtNamePart percent-encodes s for one sub-name value of a benchmark
// name: every byte other than an ASCII letter or digit, '.', '_', '-', ':'
// and '+' becomes '%' and two upper-case hex digits. When s ends the name
// (last), a '-' followed only by digits to the end is encoded as well.
func benchfmtNamePart(s string, last bool) string {
	keep := -1
	if last {
		keep = gomaxprocsSuffix(s)
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if nameByte(c) && i != keep {
			b.WriteByte(c)
			continue
		}
		const hex = "0123456789ABCDEF"
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&0xf])
	}
	return b.String()
}

// nameByte reports whether c stands for itself in a benchmark name.
func nameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		c == '.' || c == '_' || c == '-' || c == ':' || c == '+'
}

// gomaxprocsSuffix returns the index of the '-' that starts a trailing run
// of one or more digits in s, which benchfmt would read as the GOMAXPROCS
// of the benchmark, or -1 when s has no such suffix.
func gomaxprocsSuffix(s string) int {
	i := len(s) - 1
	for i >= 0 && s[i] >= '0' && s[i] <= '9' {
		i--
	}
	if i < 0 || i == len(s)-1 || s[i] != '-' {
		return -1
	}
	return i
}
