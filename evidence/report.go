package evidence

import (
	"fmt"
	"math"
	"path"
	"strings"

	"github.com/gpuplan/gpuplan/internal/quote"
	"github.com/gpuplan/gpuplan/internal/stats"
)

// ArmSummary is the summary of one arm on one workload of one run.
type ArmSummary struct {
	Arm  string
	Kind ArmKind
	N    int
	// Median is the median time in ns with its 95% confidence interval
	// (bounds are infinite when N is too small for a finite interval).
	Median Interval
	// PerIteration is Median divided by the workload's iterations (the time
	// per BFS level, say). It is nil when the workload states no iterations
	// and for bandwidth arms.
	PerIteration *Interval
	// Speedup is Baseline time / this arm's time with its 95% interval,
	// computed as the gate does. It is nil for the baseline arm itself and
	// for bandwidth arms.
	Speedup *Interval
	// Bandwidth is the median of the samples' bytes_moved / time in GB/s
	// (bytes per ns) with its 95% interval, for bandwidth arms; nil
	// otherwise. The time is device_ns where recorded, else wall_ns.
	Bandwidth *Interval
}

// WorkloadSummary summarises one workload of one evidence file.
type WorkloadSummary struct {
	// File is the path of the evidence file; Run is a short label for it,
	// unique among the summarised files (the file name without .csv, or
	// more of its path where two files share a name).
	File     string
	Run      string
	Workload Workload
	Device   string
	Compute  string
	Driver   string
	Commit   string
	Metric   string
	// Baseline is the arm speedups are relative to: the requested one when
	// present, else the slowest of gpuplan's own arms (never a bandwidth
	// arm). It is empty when the workload has no arm to compare with.
	Baseline string
	Arms     []ArmSummary // in order of first appearance in the file
	// Freshness says whether the run was measured on the current tree's
	// code; Summarize leaves it FreshnessUnknown and MarkFreshness sets it.
	Freshness Freshness
}

// Freshness says whether a run was measured on the current tree's code,
// as the gate judges it (StaleFiles).
type Freshness int

const (
	// FreshnessUnknown: no fingerprints of the current tree were compared
	// with the run's, so whether it is stale is not known.
	FreshnessUnknown Freshness = iota
	// Fresh: the run's source fingerprint is one of the current tree's.
	Fresh
	// Stale: the run's source fingerprint is none of the current tree's:
	// it was measured on other code, and the gate judges no claim on it.
	Stale
)

// String names the freshness as reports print it: "unknown", "fresh" or
// "stale".
func (f Freshness) String() string {
	switch f {
	case Fresh:
		return "fresh"
	case Stale:
		return "stale"
	}
	return "unknown"
}

// Texts the Markdown report and the chart share about freshness.
const (
	noFingerprints = "no source fingerprints of the current tree were given to compare the runs with (gpuplan report computes them from the module root: run it there, or pass --root DIR)"
	staleMeaning   = "their source fingerprint is none of the current tree's, so they were measured on other code and the gate judges no claim on them (gpuplan gate --list-stale lists their files)"
)

// MarkFreshness sets the Freshness of each summary of files from current,
// the current tree's fingerprints (SourceFingerprints, as the gate
// computes them): Stale where StaleFiles lists the summary's file, Fresh
// where it does not. With no current fingerprints, and for a summary of a
// file not in files, it leaves FreshnessUnknown, which the Markdown
// report and the chart state as "staleness not checked".
func MarkFreshness(summaries []WorkloadSummary, files []ResultFile, current Fingerprints) {
	if len(current) == 0 {
		return
	}
	known := map[string]Freshness{}
	for _, f := range files {
		known[f.Path] = Fresh
	}
	for _, p := range StaleFiles(files, current) {
		known[p] = Stale
	}
	for i := range summaries {
		summaries[i].Freshness = known[summaries[i].File]
	}
}

// FreshnessNote says whether staleness was checked and how many of the
// summaries, which a report calls noun ("sections", "panels"), are stale
// and marked as mark says.
func FreshnessNote(summaries []WorkloadSummary, noun, mark string) string {
	stale, unknown := freshnessCounts(summaries)
	if unknown == len(summaries) {
		return "Staleness not checked: " + noFingerprints + "."
	}
	var parts []string
	if unknown > 0 {
		parts = append(parts, fmt.Sprintf("Staleness not checked for %d of %d %s: no source fingerprints were compared with theirs.", unknown, len(summaries), noun))
	}
	switch {
	case stale > 0:
		parts = append(parts, fmt.Sprintf("%d of %d %s are marked %s: %s.", stale, len(summaries), noun, mark, staleMeaning))
	case unknown == 0:
		parts = append(parts, "No run is stale: every run's source fingerprint is one of the current tree's.")
	}
	return strings.Join(parts, " ")
}

// freshnessCounts counts the stale summaries and those of unknown
// freshness.
func freshnessCounts(summaries []WorkloadSummary) (stale, unknown int) {
	for _, ws := range summaries {
		switch ws.Freshness {
		case Stale:
			stale++
		case FreshnessUnknown:
			unknown++
		}
	}
	return stale, unknown
}

// Label names the workload and its run, for example
// "grid-2048 · run grid-2048-corners".
func (ws WorkloadSummary) Label() string {
	return ws.Workload.Name + " · run " + ws.Run
}

// armData collects one arm's values on one workload of one file.
type armData struct {
	kind       ArmKind
	values     []float64 // the metric, ns
	bandwidths []float64 // GB/s, bandwidth arms only
}

type workloadData struct {
	w     Workload
	arms  map[string]*armData
	order []string
}

// Summarize groups each file's samples by workload and arm and computes the
// median of metric (MetricWallNS or MetricDeviceNS) per arm with its 95%
// interval, the time per iteration, the speedup over baseline and, for
// bandwidth arms, the bandwidth. Summaries are in file order, then in order
// of first appearance. With MetricDeviceNS, samples whose device time was
// not recorded (0) are left out.
func Summarize(files []ResultFile, metric, baseline string) ([]WorkloadSummary, error) {
	if metric != MetricWallNS && metric != MetricDeviceNS {
		return nil, fmt.Errorf("metric %s is unknown. Fix: use %s or %s", quote.Echo(metric), MetricWallNS, MetricDeviceNS)
	}
	labels := RunLabels(files)
	var out []WorkloadSummary
	for i, f := range files {
		if len(f.Samples) == 0 {
			continue
		}
		p := f.Samples[0].Provenance
		for _, wd := range groupFile(f, metric) {
			ws := WorkloadSummary{File: f.Path, Run: labels[i], Workload: wd.w, Device: p.DeviceName,
				Compute: computeString(p.ComputeMajor, p.ComputeMinor), Driver: p.DriverVersion, Commit: p.Commit, Metric: metric}
			ws.Baseline = chooseBaseline(wd, baseline)
			ws.Arms = summarizeArms(wd, ws.Baseline)
			if len(ws.Arms) > 0 {
				out = append(out, ws)
			}
		}
	}
	return out, nil
}

// groupFile sorts one file's samples into workloads and arms, in order of
// first appearance.
func groupFile(f ResultFile, metric string) []*workloadData {
	var order []*workloadData
	byName := map[string]*workloadData{}
	for _, s := range f.Samples {
		wd := byName[s.Workload.Name]
		if wd == nil {
			wd = &workloadData{w: s.Workload, arms: map[string]*armData{}}
			byName[s.Workload.Name] = wd
			order = append(order, wd)
		}
		a := wd.arms[s.Arm]
		if a == nil {
			a = &armData{kind: ArmTimed}
			if IsExternalArm(s.Arm) {
				a.kind = ArmExternal
			}
			wd.arms[s.Arm] = a
			wd.order = append(wd.order, s.Arm)
		}
		if s.BytesMoved > 0 {
			a.kind = ArmBandwidth
			t := s.DeviceNS
			if t <= 0 {
				t = s.WallNS
			}
			a.bandwidths = append(a.bandwidths, float64(s.BytesMoved)/t)
		}
		v := s.WallNS
		if metric == MetricDeviceNS {
			if s.DeviceNS <= 0 {
				continue
			}
			v = s.DeviceNS
		}
		a.values = append(a.values, v)
	}
	return order
}

// chooseBaseline returns the requested arm when it has values and is not a
// bandwidth arm, else the slowest of gpuplan's own arms, else the slowest
// external arm, else "".
func chooseBaseline(wd *workloadData, requested string) string {
	if d := wd.arms[requested]; d != nil && len(d.values) > 0 && d.kind != ArmBandwidth {
		return requested
	}
	for _, kind := range []ArmKind{ArmTimed, ArmExternal} {
		base, slowest := "", math.Inf(-1)
		for _, arm := range wd.order {
			d := wd.arms[arm]
			if d.kind != kind || len(d.values) == 0 {
				continue
			}
			if m := stats.Median(d.values); m > slowest {
				slowest, base = m, arm
			}
		}
		if base != "" {
			return base
		}
	}
	return ""
}

func summarizeArms(wd *workloadData, base string) []ArmSummary {
	var arms []ArmSummary
	for _, arm := range wd.order {
		d := wd.arms[arm]
		if len(d.values) == 0 {
			continue
		}
		as := ArmSummary{Arm: arm, Kind: d.kind, N: len(d.values), Median: MedianCI(d.values, Confidence)}
		switch {
		case d.kind == ArmBandwidth:
			bw := MedianCI(d.bandwidths, Confidence)
			as.Bandwidth = &bw
		case wd.w.Iterations > 0:
			it := float64(wd.w.Iterations)
			as.PerIteration = &Interval{Center: as.Median.Center / it, Lo: as.Median.Lo / it, Hi: as.Median.Hi / it}
		}
		if arm != base && base != "" && d.kind != ArmBandwidth {
			iv := SpeedupCI(wd.arms[base].values, d.values)
			as.Speedup = &iv
		}
		arms = append(arms, as)
	}
	return arms
}

// RunLabels returns a short label for each file, unique among them: the
// file name without its .csv extension, or the whole path (without .csv)
// where two files share a name, with " #2", " #3", ... added where even the
// paths repeat.
func RunLabels(files []ResultFile) []string {
	labels := make([]string, len(files))
	count := map[string]int{}
	for i, f := range files {
		labels[i] = strings.TrimSuffix(path.Base(slashPath(f.Path)), ".csv")
		count[labels[i]]++
	}
	seen := map[string]int{}
	for i, f := range files {
		if count[labels[i]] > 1 {
			labels[i] = strings.TrimSuffix(slashPath(f.Path), ".csv")
		}
		seen[labels[i]]++
		if n := seen[labels[i]]; n > 1 {
			labels[i] = fmt.Sprintf("%s #%d", labels[i], n)
		}
	}
	return labels
}

func slashPath(p string) string { return strings.ReplaceAll(p, `\`, "/") }
