package main

import (
	"github.com/gpuplan/gpuplan/evidence"
	"github.com/gpuplan/gpuplan/internal/input"
)

const compareAbout = `Compare two evidence runs as benchstat compares two benchmark files: for
every arm of every workload measured in both, each run's median with its
95% confidence interval, the change of the median, and the p-value of the
Mann-Whitney U test (golang.org/x/perf/benchmath, as benchstat). A change
is shown only where p < 0.05; otherwise "~". Where the runs state different
iterations for a workload (another set of roots), times are compared per
iteration. Either input may be - for standard input.

Example:
  gpuplan compare old/grid-2048.csv evidence/results/grid-2048.csv`

func runCompare(e *env, args []string) error {
	f := e.newFlags("compare", "compare [--metric wall_ns|device_ns] [--json] OLD.csv NEW.csv", compareAbout)
	metric := f.String("metric", evidence.MetricWallNS, "time to compare: wall_ns or device_ns")
	limit := evidenceLimitFlag(f)
	if err := f.parse(args); err != nil {
		return err
	}
	if f.NArg() != 2 {
		return usagef("gpuplan compare: want two evidence files, OLD and NEW, got %d arguments. Fix: run 'gpuplan compare OLD.csv NEW.csv'", f.NArg())
	}
	if f.Arg(0) == input.Stdin && f.Arg(1) == input.Stdin {
		return usagef("gpuplan compare: both inputs are standard input. Fix: name at least one file")
	}
	if *metric != evidence.MetricWallNS && *metric != evidence.MetricDeviceNS {
		return usagef("gpuplan compare: --metric %q is unknown. Fix: use wall_ns or device_ns", *metric)
	}
	oldRun, err := e.loadEvidenceFile(f.Arg(0), *limit)
	if err != nil {
		return err
	}
	newRun, err := e.loadEvidenceFile(f.Arg(1), *limit)
	if err != nil {
		return err
	}
	rep, err := evidence.Compare(oldRun, newRun, *metric)
	if err != nil {
		return err
	}
	if f.json {
		return writeJSON(e.stdout, compareJSON(rep))
	}
	return rep.WriteText(e.stdout)
}

type compareSideJSON struct {
	N          int           `json:"n"`
	Median     *intervalJSON `json:"median_ns"`
	Iterations uint64        `json:"iterations"`
}

type compareRowJSON struct {
	Workload     string          `json:"workload"`
	Arm          string          `json:"arm"`
	Kind         string          `json:"kind"`
	PerIteration bool            `json:"per_iteration"`
	Old          compareSideJSON `json:"old"`
	New          compareSideJSON `json:"new"`
	Delta        float64         `json:"delta"`
	P            float64         `json:"p"`
	Significant  bool            `json:"significant"`
	Warnings     []string        `json:"warnings"`
}

type compareReportJSON struct {
	Old     string           `json:"old"`
	New     string           `json:"new"`
	Metric  string           `json:"metric"`
	Alpha   float64          `json:"alpha"`
	Rows    []compareRowJSON `json:"rows"`
	OnlyOld []string         `json:"only_old"`
	OnlyNew []string         `json:"only_new"`
}

func compareJSON(r evidence.CompareReport) compareReportJSON {
	out := compareReportJSON{Old: r.Old, New: r.New, Metric: r.Metric, Alpha: r.Alpha,
		Rows: []compareRowJSON{}, OnlyOld: nonNil(r.OnlyOld), OnlyNew: nonNil(r.OnlyNew)}
	side := func(s evidence.CompareSide) compareSideJSON {
		return compareSideJSON{N: s.N, Median: intervalOf(&s.Median), Iterations: s.Iterations}
	}
	for _, c := range r.Rows {
		out.Rows = append(out.Rows, compareRowJSON{Workload: c.Workload, Arm: c.Arm, Kind: c.Kind.String(), PerIteration: c.PerIteration,
			Old: side(c.Old), New: side(c.New), Delta: c.Delta, P: c.P, Significant: c.Significant, Warnings: nonNil(c.Warnings)})
	}
	return out
}
