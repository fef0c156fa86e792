package evidence

import (
	"fmt"
	"io"
	"math"
	"text/tabwriter"

	"golang.org/x/perf/benchmath"

	"github.com/gpuplan/gpuplan/internal/quote"
)

// CompareSide is one run's side of an ArmComparison.
type CompareSide struct {
	N int
	// Median is the median in ns (per run, or per iteration when the
	// comparison is per iteration) with its 95% interval.
	Median     Interval
	Iterations uint64
}

// ArmComparison compares one arm on one workload across two runs, as
// benchstat compares a benchmark across two files.
type ArmComparison struct {
	Workload string
	Arm      string
	Kind     ArmKind
	// PerIteration is set when the runs state different iterations for the
	// workload (another root set, say): times are then compared per
	// iteration, since times per run are not comparable.
	PerIteration bool
	Old, New     CompareSide
	// Delta is New.Median.Center / Old.Median.Center - 1: negative is
	// faster.
	Delta float64
	// P is the p-value of the Mann-Whitney U test (benchmath assuming
	// nothing, as benchstat) that both runs' samples come from one
	// distribution; Significant is P < Alpha.
	P           float64
	Significant bool
	// Warnings are benchmath's (too few samples) and a note when the
	// graph's nodes or edges differ between the runs.
	Warnings []string
}

// CompareReport is the comparison of two evidence runs.
type CompareReport struct {
	Old, New string // file paths
	Metric   string
	Alpha    float64
	Rows     []ArmComparison
	// OnlyOld and OnlyNew list "workload/arm" measured in one run only.
	OnlyOld, OnlyNew []string
}

type armKey struct{ workload, arm string }

// armSamples indexes one file's samples by workload and arm, in order of
// first appearance.
func armSamples(f ResultFile) (map[armKey][]*Sample, []armKey) {
	by := map[armKey][]*Sample{}
	var order []armKey
	for i := range f.Samples {
		s := &f.Samples[i]
		k := armKey{s.Workload.Name, s.Arm}
		if by[k] == nil {
			order = append(order, k)
		}
		by[k] = append(by[k], s)
	}
	return by, order
}

// Compare compares every arm of every workload measured in both runs on
// metric (MetricWallNS or MetricDeviceNS): each side's median with its 95%
// interval, the relative change of the median and the p-value of the
// Mann-Whitney U test, computed with golang.org/x/perf/benchmath as
// benchstat computes them, at benchstat's alpha of 0.05. With
// MetricDeviceNS, samples without a device time are left out.
func Compare(oldRun, newRun ResultFile, metric string) (CompareReport, error) {
	if metric != MetricWallNS && metric != MetricDeviceNS {
		return CompareReport{}, fmt.Errorf("metric %s is unknown. Fix: use %s or %s", quote.Echo(metric), MetricWallNS, MetricDeviceNS)
	}
	rep := CompareReport{Old: oldRun.Path, New: newRun.Path, Metric: metric, Alpha: benchmath.DefaultThresholds.CompareAlpha}
	oldBy, oldOrder := armSamples(oldRun)
	newBy, newOrder := armSamples(newRun)
	for _, k := range oldOrder {
		if newBy[k] == nil {
			rep.OnlyOld = append(rep.OnlyOld, k.workload+"/"+k.arm)
			continue
		}
		if c, ok := compareArm(k, oldBy[k], newBy[k], metric); ok {
			rep.Rows = append(rep.Rows, c)
		}
	}
	for _, k := range newOrder {
		if oldBy[k] == nil {
			rep.OnlyNew = append(rep.OnlyNew, k.workload+"/"+k.arm)
		}
	}
	return rep, nil
}

// compareArm compares one arm's samples; ok is false when a side has no
// value of the metric.
func compareArm(k armKey, oldArm, newArm []*Sample, metric string) (ArmComparison, bool) {
	wo, wn := oldArm[0].Workload, newArm[0].Workload
	c := ArmComparison{Workload: k.workload, Arm: k.arm, Kind: ArmTimed}
	if IsExternalArm(k.arm) {
		c.Kind = ArmExternal
	}
	if oldArm[0].BytesMoved > 0 || newArm[0].BytesMoved > 0 {
		c.Kind = ArmBandwidth
	}
	// A copy does not scale with the workload's iterations.
	c.PerIteration = wo.Iterations != wn.Iterations && wo.Iterations > 0 && wn.Iterations > 0 && c.Kind != ArmBandwidth
	ov, nv := compareValues(oldArm, metric, c.PerIteration), compareValues(newArm, metric, c.PerIteration)
	if len(ov) == 0 || len(nv) == 0 {
		return c, false
	}
	so := benchmath.NewSample(ov, &benchmath.DefaultThresholds)
	sn := benchmath.NewSample(nv, &benchmath.DefaultThresholds)
	c.Old = CompareSide{N: len(ov), Median: summaryInterval(so), Iterations: wo.Iterations}
	c.New = CompareSide{N: len(nv), Median: summaryInterval(sn), Iterations: wn.Iterations}
	c.Delta = c.New.Median.Center/c.Old.Median.Center - 1
	cmp := benchmath.AssumeNothing.Compare(so, sn)
	c.P, c.Significant = cmp.P, cmp.P < cmp.Alpha
	for _, w := range cmp.Warnings {
		c.Warnings = append(c.Warnings, w.Error())
	}
	if wo.Nodes != wn.Nodes || wo.Edges != wn.Edges {
		c.Warnings = append(c.Warnings, fmt.Sprintf("the graphs differ: %d nodes and %d edges, then %d and %d", wo.Nodes, wo.Edges, wn.Nodes, wn.Edges))
	}
	return c, true
}

func compareValues(samples []*Sample, metric string, perIteration bool) []float64 {
	var v []float64
	for _, s := range samples {
		x := s.WallNS
		if metric == MetricDeviceNS {
			if s.DeviceNS <= 0 {
				continue
			}
			x = s.DeviceNS
		}
		if perIteration {
			x /= float64(s.Workload.Iterations)
		}
		v = append(v, x)
	}
	return v
}

func summaryInterval(s *benchmath.Sample) Interval {
	sum := benchmath.AssumeNothing.Summary(s, Confidence)
	return Interval{Center: sum.Center, Lo: sum.Lo, Hi: sum.Hi}
}

// plusMinus renders a median as benchstat does: the value, its unit
// suffix and the larger distance to its interval's ends in whole percent,
// "1.81 µs/iteration ± 1%".
func plusMinus(iv Interval, suffix string) string {
	if !finite(iv.Lo) || !finite(iv.Hi) {
		return FormatTime(iv.Center) + suffix + " ± ∞"
	}
	spread := math.Max(iv.Center-iv.Lo, iv.Hi-iv.Center) / iv.Center * 100
	return fmt.Sprintf("%s%s ± %.0f%%", FormatTime(iv.Center), suffix, spread)
}

// DeltaText is the change as benchstat prints it: "-82.68%" when
// significant, "~" otherwise.
func (c ArmComparison) DeltaText() string {
	if !c.Significant {
		return "~"
	}
	return fmt.Sprintf("%+.2f%%", c.Delta*100)
}

// WriteText writes the comparison as a table in benchstat's style: per
// workload and arm, each run's median ± its 95% interval, the change of the
// median where the U test finds one (p < alpha; "~" otherwise), the p-value
// and the sample counts, followed by the warnings and the arms measured in
// one run only.
func (r CompareReport) WriteText(w io.Writer) error {
	fmt.Fprintf(w, "old: %s\nnew: %s\n", quote.Text(r.Old), quote.Text(r.New))
	fmt.Fprintf(w, "medians of %s with 95%% CI; delta where the Mann-Whitney U test gives p < %.2f, else ~\n\n", r.Metric, r.Alpha)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "workload\tarm\told\tnew\tdelta\tp\tn")
	var notes []string
	perIteration := map[string]bool{}
	for _, c := range r.Rows {
		unit := ""
		if c.PerIteration {
			unit = "/iteration"
			if !perIteration[c.Workload] {
				perIteration[c.Workload] = true
				notes = append(notes, fmt.Sprintf("%s: %s iterations, then %s: times compared per iteration",
					c.Workload, GroupDigits(c.Old.Iterations), GroupDigits(c.New.Iterations)))
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%.3f\t%d+%d\n", c.Workload, ArmLabel(c.Arm, c.Kind),
			plusMinus(c.Old.Median, unit), plusMinus(c.New.Median, unit), c.DeltaText(), c.P, c.Old.N, c.New.N)
		for _, warn := range c.Warnings {
			notes = append(notes, fmt.Sprintf("%s/%s: %s", c.Workload, c.Arm, warn))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, only := range []struct {
		name string
		arms []string
	}{{"old", r.OnlyOld}, {"new", r.OnlyNew}} {
		for _, a := range only.arms {
			notes = append(notes, fmt.Sprintf("%s: measured in the %s run only", a, only.name))
		}
	}
	if len(notes) > 0 {
		fmt.Fprintln(w)
	}
	for _, n := range notes {
		if _, err := fmt.Fprintln(w, n); err != nil {
			return err
		}
	}
	return nil
}
