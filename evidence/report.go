package evidence

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/gpuplan/gpuplan/internal/quote"
)

// ArmSummary is the summary of one arm on one workload of one run.
type ArmSummary struct {
	Arm string
	N   int
	// Median is the median time in ns with its 95% confidence interval
	// (bounds are infinite when N is too small for a finite interval).
	Median Interval
	// Speedup is Baseline time / this arm's time with its 95% interval,
	// computed as the gate does. It is nil for the baseline arm itself.
	Speedup *Interval
	// BandwidthGBs is median bytes_moved / median time (bytes per ns = GB/s)
	// for arms that record bytes_moved, else 0.
	BandwidthGBs float64
}

// WorkloadSummary summarises one workload of one evidence file.
type WorkloadSummary struct {
	File     string
	Workload Workload
	Device   string
	Compute  string
	Commit   string
	Metric   string
	// Baseline is the arm speedups are relative to: the requested one when
	// present, else the arm with the slowest median.
	Baseline string
	Arms     []ArmSummary // in order of first appearance in the file
}

// Summarize groups each file's samples by workload and arm and computes the
// median of metric (MetricWallNS or MetricDeviceNS) per arm with its 95%
// interval and the speedup over baseline. Summaries are in file order, then
// in order of first appearance. With MetricDeviceNS, samples whose device
// time was not recorded (0) are left out.
func Summarize(files []ResultFile, metric, baseline string) ([]WorkloadSummary, error) {
	if metric != MetricWallNS && metric != MetricDeviceNS {
		return nil, fmt.Errorf("metric %q is unknown. Fix: use %s or %s", metric, MetricWallNS, MetricDeviceNS)
	}
	var out []WorkloadSummary
	for _, f := range files {
		type armData struct {
			values []float64
			bytes  []float64
		}
		var order []string
		byWorkload := map[string]map[string]*armData{}
		armOrder := map[string][]string{}
		sizes := map[string]Workload{}
		for _, s := range f.Samples {
			w := s.Workload.Name
			if byWorkload[w] == nil {
				byWorkload[w] = map[string]*armData{}
				order = append(order, w)
				sizes[w] = s.Workload
			}
			a := byWorkload[w][s.Arm]
			if a == nil {
				a = &armData{}
				byWorkload[w][s.Arm] = a
				armOrder[w] = append(armOrder[w], s.Arm)
			}
			v := s.WallNS
			if metric == MetricDeviceNS {
				if s.DeviceNS <= 0 {
					continue
				}
				v = s.DeviceNS
			}
			a.values = append(a.values, v)
			a.bytes = append(a.bytes, float64(s.BytesMoved))
		}
		if len(f.Samples) == 0 {
			continue
		}
		p := f.Samples[0].Provenance
		for _, w := range order {
			ws := WorkloadSummary{File: f.Path, Workload: sizes[w], Device: p.DeviceName,
				Compute: computeString(p.ComputeMajor, p.ComputeMinor), Commit: p.Commit, Metric: metric}
			arms := armOrder[w]
			base := ""
			if d := byWorkload[w][baseline]; d != nil && len(d.values) > 0 {
				base = baseline
			} else {
				slowest := math.Inf(-1)
				for _, arm := range arms {
					d := byWorkload[w][arm]
					if len(d.values) == 0 {
						continue
					}
					if m := MedianCI(d.values, Confidence).Center; m > slowest {
						slowest, base = m, arm
					}
				}
			}
			ws.Baseline = base
			for _, arm := range arms {
				d := byWorkload[w][arm]
				if len(d.values) == 0 {
					continue
				}
				as := ArmSummary{Arm: arm, N: len(d.values), Median: MedianCI(d.values, Confidence)}
				if arm != base {
					iv := SpeedupCI(byWorkload[w][base].values, d.values)
					as.Speedup = &iv
				}
				if mb := median(d.bytes); mb > 0 {
					as.BandwidthGBs = mb / as.Median.Center
				}
				ws.Arms = append(ws.Arms, as)
			}
			if len(ws.Arms) > 0 {
				out = append(out, ws)
			}
		}
	}
	return out, nil
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// timeUnit picks the unit a median and its interval are shown in.
func timeUnit(ns float64) (scale float64, unit, format string) {
	switch {
	case ns >= 1e6:
		return 1e6, "ms", "%.3f"
	case ns >= 1e3:
		return 1e3, "µs", "%.2f"
	}
	return 1, "ns", "%.1f"
}

func fmtScaled(ns, scale float64, format string) string {
	if math.IsInf(ns, 0) || math.IsNaN(ns) {
		return "∞"
	}
	return fmt.Sprintf(format, ns/scale)
}

func fmtBound(x float64) string {
	if math.IsInf(x, 0) || math.IsNaN(x) {
		return "∞"
	}
	return fmt.Sprintf("%.2f", x)
}

// MarkdownTable renders summaries as one Markdown table: per workload and
// arm, the sample count, the median time in ms with its 95% interval, the
// speedup over the baseline arm with its 95% interval, and the bandwidth of
// arms that record bytes moved.
func MarkdownTable(summaries []WorkloadSummary) string {
	var b strings.Builder
	if len(summaries) == 0 {
		b.WriteString("No evidence recorded.\n")
		return b.String()
	}
	metric := summaries[0].Metric
	fmt.Fprintf(&b, "| workload | device | arm | n | median %s | 95%% CI | speedup | 95%% CI | bandwidth |\n", metric)
	b.WriteString("|---|---|---|--:|--:|---|--:|---|--:|\n")
	for _, ws := range summaries {
		w := ws.Workload
		wl := fmt.Sprintf("%s (%d nodes, %d edges, %d iterations)", w.Name, w.Nodes, w.Edges, w.Iterations)
		dev := fmt.Sprintf("%s (%s)", quote.Text(ws.Device), ws.Compute)
		for _, a := range ws.Arms {
			speed, ci := "1.00x (baseline)", ""
			if a.Speedup != nil {
				speed = fmt.Sprintf("%.2fx", a.Speedup.Center)
				ci = fmt.Sprintf("[%sx, %sx]", fmtBound(a.Speedup.Lo), fmtBound(a.Speedup.Hi))
			}
			bw := ""
			if a.BandwidthGBs > 0 {
				bw = fmt.Sprintf("%.1f GB/s", a.BandwidthGBs)
			}
			scale, unit, format := timeUnit(a.Median.Center)
			fmt.Fprintf(&b, "| %s | %s | %s | %d | %s %s | [%s, %s] %s | %s | %s | %s |\n",
				mdEscape(wl), mdEscape(dev), a.Arm, a.N, fmtScaled(a.Median.Center, scale, format), unit,
				fmtScaled(a.Median.Lo, scale, format), fmtScaled(a.Median.Hi, scale, format), unit, speed, ci, bw)
		}
	}
	fmt.Fprintf(&b, "\nSpeedup is the baseline arm's median %s over the arm's; intervals are 95%% (benchmath medians; the speedup interval is conservative, see package evidence).\n", metric)
	return b.String()
}

func mdEscape(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
