package evidence

import (
	"fmt"
	"image/color"
	"io"
	"math"

	"github.com/gpuplan/gpuplan/internal/quote"
	"github.com/gpuplan/gpuplan/internal/stats"

	xfont "golang.org/x/image/font"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Chart formats WriteChart accepts.
const (
	ChartPNG = "png"
	ChartSVG = "svg"
)

// Chart geometry: the whole width, the share of it the time panel takes,
// the height of one row and the space for titles and axes.
const (
	chartWidth      = 12 * vg.Inch
	chartTimeShare  = 0.72
	chartRowHeight  = 0.3 * vg.Inch
	chartFrame      = 1.3 * vg.Inch
	chartPNGDPI     = 144
	chartFontSize   = 10
	chartHeaderSize = 10.5
)

// chartRow is one row of the chart: a heading naming a workload and its
// run, or one arm of that workload.
type chartRow struct {
	header string
	ws     *WorkloadSummary
	arm    *ArmSummary
	color  color.Color
}

// WriteChart draws summaries as a PNG or SVG chart with one row per arm,
// grouped under a heading per workload and run (its label, device and
// iterations). The left panel is a forest plot: each timed or external
// arm's median time per run on a log scale, its 95% interval as a bar, and
// a label with its time per iteration and its speedup over the baseline
// arm with the speedup's interval; bandwidth arms (the copy ceiling) are
// written as bandwidth, never placed on the time axis or given a speedup.
// The right panel draws every interval to scale as a percentage of its
// median, so intervals too narrow to see on the log axis are visible
// there, with their bounds written beside them. External arms are drawn as
// triangles and marked "(external)".
//
// The chart's text is printable: a name (workload, run label, device,
// commit, arm) that is not plain printable text, such as a file name with
// a line break, a control character or invalid UTF-8, is written as a Go
// string literal (quote.Text), and the SVG writer escapes '<', '>', '&'
// and quotes as XML entities, so the SVG is well-formed XML.
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
	if err := chartableMedians(summaries); err != nil {
		return err
	}
	rows := chartRows(summaries)
	left, err := timePanel(rows, summaries[0].Metric)
	if err != nil {
		return err
	}
	right, err := precisionPanel(rows)
	if err != nil {
		return err
	}
	height := chartFrame + chartRowHeight*vg.Length(len(rows))
	return writeCanvas(w, format, chartWidth, height, func(dc draw.Canvas) {
		split := chartWidth * chartTimeShare
		left.Draw(draw.Crop(dc, 0, split-chartWidth, 0, 0))
		right.Draw(draw.Crop(dc, split, 0, 0, 0))
	})
}

// writeCanvas draws on a PNG or SVG canvas of the given size and writes
// it to w.
func writeCanvas(w io.Writer, format string, width, height vg.Length, drawOn func(draw.Canvas)) error {
	var cw vg.CanvasWriterTo
	if format == ChartPNG {
		cw = vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(width, height), vgimg.UseDPI(chartPNGDPI))}
	} else {
		cw = vgsvg.New(width, height)
	}
	drawOn(draw.New(cw))
	_, err := cw.WriteTo(w)
	return err
}

// chartableMedians refuses a median that a log scale cannot show (zero,
// negative or not finite), naming the arm.
func chartableMedians(summaries []WorkloadSummary) error {
	for _, ws := range summaries {
		for _, a := range ws.Arms {
			if m := a.Median.Center; !finite(m) || m/1e6 <= 0 {
				return fmt.Errorf("chart: arm %s of workload %s has median %g ns, which a log scale cannot show. Fix: check the evidence file %s",
					quote.Text(a.Arm), quote.Text(ws.Workload.Name), m, quote.Text(ws.File))
			}
		}
	}
	return nil
}

// chartRows lays the summaries out top to bottom, one colour per arm name.
func chartRows(summaries []WorkloadSummary) []chartRow {
	colors := map[string]color.Color{}
	var rows []chartRow
	for i := range summaries {
		ws := &summaries[i]
		rows = append(rows, chartRow{header: chartHeading(ws), ws: ws})
		for j := range ws.Arms {
			a := &ws.Arms[j]
			if colors[a.Arm] == nil {
				colors[a.Arm] = plotutil.Color(len(colors))
			}
			rows = append(rows, chartRow{ws: ws, arm: a, color: colors[a.Arm]})
		}
	}
	return rows
}

// chartHeading is the heading of a workload's rows; its names are quoted
// where they are not plain printable text.
func chartHeading(ws *WorkloadSummary) string {
	return fmt.Sprintf("%s · run %s · %s (%s) · %s iterations · commit %s",
		quote.Text(ws.Workload.Name), quote.Text(ws.Run), quote.Text(ws.Device), ws.Compute,
		groupDigits(ws.Workload.Iterations), quote.Text(shortCommit(ws.Commit)))
}

// rowY is the y coordinate of row i: row 0 at the top.
func rowY(i int) float64 { return -float64(i) }

// newPanel returns a plot with the chart's fonts, rows on the y axis
// (labelled when labels is set) and a vertical grid.
func newPanel(title, xLabel string, rows []chartRow, labels bool) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font.Size = vg.Points(chartFontSize + 1)
	p.X.Label.Text = xLabel
	p.X.Label.TextStyle.Font.Size = vg.Points(chartFontSize)
	p.X.Tick.Label.Font.Size = vg.Points(chartFontSize - 1)
	p.Y.Tick.Label.Font.Size = vg.Points(chartFontSize)
	p.Y.Min, p.Y.Max = rowY(len(rows)-1)-0.7, rowY(0)+0.7
	ticks := make(plot.ConstantTicks, 0, len(rows))
	for i, r := range rows {
		label := ""
		if labels && r.arm != nil {
			label = armLabel(quote.Text(r.arm.Arm), r.arm.Kind)
		}
		ticks = append(ticks, plot.Tick{Value: rowY(i), Label: label})
	}
	p.Y.Tick.Marker = ticks
	p.Y.Tick.Length = 0
	grid := plotter.NewGrid()
	grid.Horizontal.Color = nil
	p.Add(grid)
	return p
}

// intervalPoints are points with horizontal interval bars; it implements
// plotter.XYer and plotter.XErrorer.
type intervalPoints struct {
	plotter.XYs
	lo, hi []float64
}

// XError returns the distances from point i to its interval's ends.
func (p intervalPoints) XError(i int) (float64, float64) {
	return p.XYs[i].X - p.lo[i], p.hi[i] - p.XYs[i].X
}

func (p *intervalPoints) add(x, y, lo, hi float64) {
	p.XYs = append(p.XYs, plotter.XY{X: x, Y: y})
	p.lo, p.hi = append(p.lo, lo), append(p.hi, hi)
}

// addPoint draws one point with its interval bar in colour c; external arms
// get a hollow triangle.
func addPoint(p *plot.Plot, pts intervalPoints, c color.Color, kind ArmKind) error {
	eb, err := plotter.NewXErrorBars(pts)
	if err != nil {
		return chartBug(err)
	}
	eb.LineStyle.Color, eb.LineStyle.Width, eb.CapWidth = c, vg.Points(2), vg.Points(9)
	sc, err := plotter.NewScatter(pts.XYs)
	if err != nil {
		return chartBug(err)
	}
	sc.GlyphStyle = draw.GlyphStyle{Color: c, Radius: vg.Points(3.5), Shape: draw.CircleGlyph{}}
	if kind == ArmExternal {
		sc.GlyphStyle.Shape, sc.GlyphStyle.Radius = draw.PyramidGlyph{}, vg.Points(5)
	}
	p.Add(eb, sc)
	return nil
}

func chartBug(err error) error {
	return fmt.Errorf("chart: %w. Fix: report this as a bug", err)
}

// textLabels collects the chart's text; heading labels are bold.
type textLabels struct {
	xy     plotter.XYLabels
	bold   []bool
	xAlign []draw.XAlignment
}

func (t *textLabels) add(x, y float64, text string, bold bool, align draw.XAlignment) {
	t.xy.XYs = append(t.xy.XYs, plotter.XY{X: x, Y: y})
	t.xy.Labels = append(t.xy.Labels, text)
	t.bold, t.xAlign = append(t.bold, bold), append(t.xAlign, align)
}

func (t *textLabels) addTo(p *plot.Plot) error {
	if len(t.xy.Labels) == 0 {
		return nil
	}
	lab, err := plotter.NewLabels(t.xy)
	if err != nil {
		return chartBug(err)
	}
	for i := range lab.TextStyle {
		st := &lab.TextStyle[i]
		st.Color, st.XAlign, st.YAlign = color.Black, t.xAlign[i], draw.YCenter
		st.Font.Size = vg.Points(chartFontSize - 0.5)
		if t.bold[i] {
			st.Font.Weight, st.Font.Size = xfont.WeightBold, vg.Points(chartHeaderSize)
		}
	}
	p.Add(lab)
	return nil
}

// timeRange returns the unit for the time axis and its bounds in that unit.
func timeRange(rows []chartRow) (scale float64, unit string, lo, hi float64) {
	lo, hi = math.Inf(1), 0
	for _, r := range rows {
		if r.arm == nil || r.arm.Kind == ArmBandwidth {
			continue
		}
		m := r.arm.Median
		l, h := m.Center, m.Center
		if finite(m.Lo) && m.Lo > 0 && finite(m.Hi) {
			l, h = m.Lo, m.Hi
		}
		lo, hi = math.Min(lo, l), math.Max(hi, h)
	}
	if hi == 0 {
		return 1e6, "ms", 1, 10
	}
	scale, unit, _ = stats.TimeUnit(lo)
	return scale, unit, lo / scale, hi / scale
}

// timePanel is the forest plot of median times per run.
func timePanel(rows []chartRow, metric string) (*plot.Plot, error) {
	scale, unit, lo, hi := timeRange(rows)
	p := newPanel(fmt.Sprintf("Median %s per run with its 95%% CI (log scale); label: time per iteration, speedup over the baseline [95%% CI]", metric),
		fmt.Sprintf("median time per run (%s, log scale)", unit), rows, true)
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = logTicks{}
	// Headings start at the left edge; leave room for the labels right of
	// the slowest arm (the plot shrinks the data area to fit them).
	p.X.Min, p.X.Max = lo/2.5, hi*1.1
	var text textLabels
	for i, r := range rows {
		y := rowY(i)
		switch {
		case r.arm == nil:
			text.add(p.X.Min, y, r.header, true, draw.XLeft)
		case r.arm.Kind == ArmBandwidth:
			text.add(p.X.Min, y, bandwidthText(r.arm), false, draw.XLeft)
		default:
			if err := addTimeRow(p, &text, r, y, scale); err != nil {
				return nil, err
			}
		}
	}
	if err := text.addTo(p); err != nil {
		return nil, err
	}
	return p, nil
}

func addTimeRow(p *plot.Plot, text *textLabels, r chartRow, y, scale float64) error {
	m := r.arm.Median
	var pts intervalPoints
	x, right := m.Center/scale, m.Center/scale
	if finite(m.Lo) && m.Lo > 0 && finite(m.Hi) {
		pts.add(x, y, m.Lo/scale, m.Hi/scale)
		right = m.Hi / scale
	} else {
		pts.add(x, y, x, x)
	}
	if err := addPoint(p, pts, r.color, r.arm.Kind); err != nil {
		return err
	}
	text.add(right*1.06, y, armRowText(r), false, draw.XLeft)
	return nil
}

// armRowText is the label beside an arm's point: its time per iteration
// and its speedup with the interval.
func armRowText(r chartRow) string {
	a := r.arm
	s := fmtTime(a.Median.Center) + "/run"
	if a.PerIteration != nil {
		s = fmtTime(a.PerIteration.Center) + "/iteration · " + s
	}
	switch {
	case a.Speedup != nil:
		s += fmt.Sprintf(" · %.2fx %s", a.Speedup.Center, fmtSpeedupCI(*a.Speedup))
	case a.Arm == r.ws.Baseline:
		s += " · baseline"
	}
	if a.N < MinSamplesPerArm {
		s += fmt.Sprintf(" · n=%d", a.N)
	}
	return s
}

func bandwidthText(a *ArmSummary) string {
	return fmt.Sprintf("bandwidth %s GB/s %s (device memory copy; not a speedup) · %s per copy",
		fmtGBs(a.Bandwidth.Center), fmtGBsCI(*a.Bandwidth), fmtTime(a.Median.Center))
}

// relativeCI returns an arm's interval as percentages of its center: the
// time interval, or the bandwidth interval for bandwidth arms.
func relativeCI(a *ArmSummary) (lo, hi float64, ok bool) {
	iv := a.Median
	if a.Kind == ArmBandwidth {
		iv = *a.Bandwidth
	}
	if !finite(iv.Lo) || !finite(iv.Hi) || iv.Center <= 0 {
		return 0, 0, false
	}
	return (iv.Lo/iv.Center - 1) * 100, (iv.Hi/iv.Center - 1) * 100, true
}

// precisionPanel draws each interval to scale relative to its median.
func precisionPanel(rows []chartRow) (*plot.Plot, error) {
	p := newPanel("95% CI to scale, % of the median", "% of the median", rows, false)
	p.Y.LineStyle.Width = 0
	span := 0.5
	for _, r := range rows {
		if r.arm == nil {
			continue
		}
		if lo, hi, ok := relativeCI(r.arm); ok {
			span = math.Max(span, math.Max(-lo, hi))
		}
	}
	p.X.Min, p.X.Max = -span*1.15, span*1.15
	var text textLabels
	for i, r := range rows {
		if r.arm == nil {
			continue
		}
		y := rowY(i)
		lo, hi, ok := relativeCI(r.arm)
		if !ok {
			text.add(0, y, fmt.Sprintf("n=%d: too few samples for a 95%% CI", r.arm.N), false, draw.XCenter)
			continue
		}
		var pts intervalPoints
		pts.add(0, y, lo, hi)
		if err := addPoint(p, pts, r.color, r.arm.Kind); err != nil {
			return nil, err
		}
		text.add(hi+span*0.06, y, fmt.Sprintf("%+.2f%% / %+.2f%%", lo, hi), false, draw.XLeft)
	}
	if err := text.addTo(p); err != nil {
		return nil, err
	}
	return p, nil
}

// logTicks labels 1, 2 and 5 times each power of ten in range, and every
// integer multiple where the range spans less than a decade.
type logTicks struct{}

// Ticks returns the ticks between lo and hi (both positive).
func (logTicks) Ticks(lo, hi float64) []plot.Tick {
	var ticks []plot.Tick
	labelled := 0
	for e := math.Floor(math.Log10(lo)); math.Pow(10, e) <= hi; e++ {
		for k := 1.0; k < 10; k++ {
			v := k * math.Pow(10, e)
			if e < 0 {
				v = k / math.Pow(10, -e) // 0.3, not 0.30000000000000004
			}
			if v < lo || v > hi {
				continue
			}
			t := plot.Tick{Value: v}
			if k == 1 || k == 2 || k == 5 {
				t.Label = fmt.Sprint(v)
				labelled++
			}
			ticks = append(ticks, t)
		}
	}
	if labelled < 3 {
		for i := range ticks {
			ticks[i].Label = fmt.Sprint(ticks[i].Value)
		}
	}
	return ticks
}
