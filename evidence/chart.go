package evidence

import (
	"fmt"
	"image/color"
	"io"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Chart formats WriteChart accepts.
const (
	ChartPNG = "png"
	ChartSVG = "svg"
)

// armPoints are one arm's medians with their interval bounds, in ms.
type armPoints struct {
	plotter.XYs
	lo, hi []float64
}

// YError returns the distances from the median to the interval's ends.
func (a armPoints) YError(i int) (float64, float64) {
	return a.XYs[i].Y - a.lo[i], a.hi[i] - a.XYs[i].Y
}

// WriteChart draws summaries as a PNG or SVG chart: one group per workload
// (and run), one point per arm at its median time on a log scale, a bar for
// its 95% interval, and the speedup over the baseline arm written above
// each point. Arms whose interval is infinite (too few samples) get no bar.
func WriteChart(w io.Writer, summaries []WorkloadSummary, format string) (err error) {
	defer func() {
		// The plotting library panics on some degenerate inputs; a chart
		// that cannot be drawn is an error, never a crash.
		if r := recover(); r != nil {
			err = fmt.Errorf("chart: cannot draw these medians (%v). Fix: check the evidence times with gpuplan report without --chart", r)
		}
	}()
	if format != ChartPNG && format != ChartSVG {
		return fmt.Errorf("chart format %q is unknown. Fix: use png or svg", format)
	}
	if len(summaries) == 0 {
		return fmt.Errorf("no evidence to chart. Fix: record evidence under evidence/results/ first")
	}
	p := plot.New()
	metric := summaries[0].Metric
	p.Title.Text = fmt.Sprintf("Median %s per arm, 95%% CI; labels: speedup over the baseline arm", metric)
	p.Y.Label.Text = "median time (ms, log scale)"
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	p.Legend.Top = true
	p.Legend.Left = false

	var arms []string
	armIndex := map[string]int{}
	for _, ws := range summaries {
		for _, a := range ws.Arms {
			if _, ok := armIndex[a.Arm]; !ok {
				armIndex[a.Arm] = len(arms)
				arms = append(arms, a.Arm)
			}
		}
	}
	width := 0.8 / float64(len(arms))
	pts := make([]armPoints, len(arms))
	var labels plotter.XYLabels
	minY, maxY := math.Inf(1), 0.0
	ticks := make(plot.ConstantTicks, len(summaries))
	for i, ws := range summaries {
		ticks[i] = plot.Tick{Value: float64(i), Label: fmt.Sprintf("%s\n%s", ws.Workload.Name, ws.Device)}
		for _, a := range ws.Arms {
			k := armIndex[a.Arm]
			x := float64(i) + (float64(k)-float64(len(arms)-1)/2)*width
			y := a.Median.Center / 1e6
			if !finite(y) || y <= 0 {
				return fmt.Errorf("chart: arm %s of workload %s has median %g ns, which a log scale cannot show. Fix: check the evidence file %s", a.Arm, ws.Workload.Name, a.Median.Center, ws.File)
			}
			lo, hi := a.Median.Lo/1e6, a.Median.Hi/1e6
			if !finite(lo) || !finite(hi) || lo <= 0 {
				lo, hi = y, y
			}
			pts[k].XYs = append(pts[k].XYs, plotter.XY{X: x, Y: y})
			pts[k].lo = append(pts[k].lo, lo)
			pts[k].hi = append(pts[k].hi, hi)
			minY, maxY = math.Min(minY, lo), math.Max(maxY, hi)
			text := "baseline"
			if a.Speedup != nil {
				text = fmt.Sprintf("%.2fx", a.Speedup.Center)
			}
			labels.XYs = append(labels.XYs, plotter.XY{X: x, Y: hi * 1.12})
			labels.Labels = append(labels.Labels, text)
		}
	}
	for k, arm := range arms {
		if len(pts[k].XYs) == 0 {
			continue
		}
		c := plotutil.Color(k)
		sc, err := plotter.NewScatter(pts[k].XYs)
		if err != nil {
			return fmt.Errorf("chart: %w. Fix: report this as a bug", err)
		}
		sc.GlyphStyle = draw.GlyphStyle{Color: c, Radius: vg.Points(4), Shape: draw.CircleGlyph{}}
		eb, err := plotter.NewYErrorBars(pts[k])
		if err != nil {
			return fmt.Errorf("chart: %w. Fix: report this as a bug", err)
		}
		eb.LineStyle.Color = c
		eb.LineStyle.Width = vg.Points(1.5)
		p.Add(eb, sc)
		p.Legend.Add(arm, sc)
	}
	lab, err := plotter.NewLabels(labels)
	if err != nil {
		return fmt.Errorf("chart: %w. Fix: report this as a bug", err)
	}
	for i := range lab.TextStyle {
		lab.TextStyle[i].Color = color.Black
		lab.TextStyle[i].XAlign = -0.5
	}
	p.Add(lab)
	p.Add(plotter.NewGrid())
	p.X.Tick.Marker = ticks
	p.X.Min, p.X.Max = -0.6, float64(len(summaries))-0.4
	p.Y.Min, p.Y.Max = minY/1.6, maxY*2.2
	wd := vg.Length(math.Max(6, 1.8*float64(len(summaries))+2)) * vg.Inch
	wt, err := p.WriterTo(wd, 4.5*vg.Inch, format)
	if err != nil {
		return fmt.Errorf("chart: %w. Fix: report this as a bug", err)
	}
	_, err = wt.WriteTo(w)
	return err
}
