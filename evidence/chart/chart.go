// Package chart draws recorded evidence as PNG or SVG charts: WriteEvidence
// draws the benchmark summaries of package evidence (a panel per workload
// of each run), WriteLoad the throughput-latency curve of load evidence.
//
// It is the only package of gpuplan that imports the plotting library
// (gonum.org/v1/plot, with its fonts, LaTeX renderer and PDF writer), so
// that importing evidence does not pull it in; gpuplan itself links it
// only when built with the chart tag (make build-chart).
package chart

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/gpuplan/gpuplan/evidence"
	"github.com/gpuplan/gpuplan/internal/quote"
	"github.com/gpuplan/gpuplan/internal/stats"

	xfont "golang.org/x/image/font"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Chart formats WriteEvidence accepts.
const (
	PNG = "png"
	SVG = "svg"
)

// Chart geometry, in points: the page width and its side margins, the gap
// between columns, the height of the column titles and of a line of the
// notes below them, of a panel's heading, of one arm's row and of the
// space below a panel.
const (
	chartWidth         = 12 * vg.Inch
	chartMargin        = vg.Length(8)
	chartColumnGap     = vg.Length(8)
	chartTitleHeight   = vg.Length(20)
	chartNoteLine      = vg.Length(13)
	chartHeadingHeight = vg.Length(18)
	chartRowHeight     = vg.Length(16)
	chartPanelGap      = vg.Length(8)
	chartPNGDPI        = 144
)

// Chart text sizes, in points.
const (
	chartFontSize   = 9.5
	chartHeaderSize = 10.5
	chartTickSize   = 8
)

// chartClipRatio bounds an interval panel's axis: its half-width is the
// widest interval's extent, but at most this many times the panel's
// median extent, so that one wide interval cannot flatten the others to
// dots. A bound beyond the axis is drawn as an arrowhead.
const chartClipRatio = 5

// staleTag heads the panel of a stale run.
const staleTag = "STALE: measured on other code"

var (
	staleMarkColor = color.Gray{Y: 0xb4}
	staleTextColor = color.Gray{Y: 0x60}
	staleTagColor  = color.RGBA{R: 0xb2, G: 0x18, B: 0x18, A: 0xff}
	noteColor      = color.Gray{Y: 0x40}
)

// WriteEvidence draws summaries as a PNG or SVG chart with one panel per
// workload of each run, headed by its workload, run label, device,
// iterations and commit, with one row per arm and columns shared by every
// panel:
//
//   - the arm's name, marked "(external)" for a peer tool;
//   - a forest plot of each timed or external arm's median time per run
//     with its 95% interval as a bar, on a log axis of the panel's own
//     range, labelled with units (external arms are triangles);
//   - the arm's time per iteration and per run and its speedup over the
//     baseline with the speedup's interval; a bandwidth arm (the copy
//     ceiling) is written as bandwidth across both columns, never placed
//     on the time axis or given a speedup;
//   - every interval as a percentage of its median on a linear axis of the
//     panel's own scale (chartClipRatio says how an outlier is cut), so
//     that a sub-percent interval is a bar, not a dot;
//   - the interval's bounds in percent.
//
// Every panel has both x axes with tick labels. A stale run (Freshness
// evidence.Stale) is headed by "STALE: measured on other code" and drawn in grey;
// where a run's freshness is unknown the chart says that staleness was
// not checked.
//
// The chart's text is printable: a name (workload, run label, device,
// commit, arm) that is not plain printable text, such as a file name with
// a line break, a control character or invalid UTF-8, is written as a Go
// string literal (quote.Text), and the SVG writer escapes '<', '>', '&'
// and quotes as XML entities, so the SVG is well-formed XML.
func WriteEvidence(w io.Writer, summaries []evidence.WorkloadSummary, format string) (err error) {
	defer func() {
		// The plotting library panics on some degenerate inputs; a chart
		// that cannot be drawn is an error, never a crash.
		if r := recover(); r != nil {
			err = fmt.Errorf("chart: cannot draw these medians (%v). Fix: check the evidence times with gpuplan report without --chart", r)
		}
	}()
	if err := checkFormat(format); err != nil {
		return err
	}
	if len(summaries) == 0 {
		return fmt.Errorf("no evidence to chart. Fix: record evidence under evidence/results/ first")
	}
	if err := chartableMedians(summaries); err != nil {
		return err
	}
	l := layoutChart(summaries)
	return writeCanvas(w, format, chartWidth, l.height, l.draw)
}

// writeCanvas draws on a PNG or SVG canvas of the given size and writes
// it to w.
func writeCanvas(w io.Writer, format string, width, height vg.Length, drawOn func(draw.Canvas)) error {
	var cw vg.CanvasWriterTo
	if format == PNG {
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
func chartableMedians(summaries []evidence.WorkloadSummary) error {
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

// chartArm is one arm's row of a panel, in its colour.
type chartArm struct {
	a     *evidence.ArmSummary
	color color.Color
}

// chartPanel is one workload of one run: a heading, then a row per arm
// across the columns. Its two plots share the rows and have an x axis
// each, of heights timeAxis and ciAxis.
type chartPanel struct {
	ws               *evidence.WorkloadSummary
	arms             []chartArm
	time, ci         *plot.Plot
	timeAxis, ciAxis vg.Length
}

func (p *chartPanel) stale() bool { return p.ws.Freshness == evidence.Stale }

func (p *chartPanel) rowsHeight() vg.Length { return chartRowHeight * vg.Length(len(p.arms)) }

// height is the panel's height on the page, the gap below it included.
func (p *chartPanel) height() vg.Length {
	return chartHeadingHeight + p.rowsHeight() + max(p.timeAxis, p.ciAxis) + chartPanelGap
}

// rowCenter is the y coordinate of row i's center, below the rows' top.
func rowCenter(top vg.Length, i int) vg.Length {
	return top - (vg.Length(i)+0.5)*chartRowHeight
}

// span is a column's extent across the page.
type span struct{ x0, x1 vg.Length }

func (s span) width() vg.Length { return s.x1 - s.x0 }

// chartColumns are the columns every panel shares: arm names, the time
// plot, the time labels, the interval plot and the interval bounds.
type chartColumns struct {
	label, time, text, ci, bounds span
}

// chartLayout is the whole chart: its columns, the lines of the notes at
// its top and their height, its panels top to bottom and its height.
type chartLayout struct {
	summaries []evidence.WorkloadSummary
	cols      chartColumns
	notes     []string
	top       vg.Length
	panels    []chartPanel
	height    vg.Length
}

// layoutChart sizes the columns to their text, wraps the notes and builds
// each panel's plots.
func layoutChart(summaries []evidence.WorkloadSummary) *chartLayout {
	notes := "Each panel has its own axes. Triangles are external arms (peer tools); an arrowhead marks a bound beyond the panel's % axis (its value is written beside it). " +
		evidence.FreshnessNote(summaries, "panels", strconv.Quote(staleTag)+" and drawn in grey")
	l := &chartLayout{summaries: summaries, panels: chartPanels(summaries),
		notes: wrapText(notes, noteStyle(), chartWidth-2*chartMargin)}
	l.top = chartTitleHeight + chartNoteLine*vg.Length(len(l.notes)) + 4
	l.height = l.top
	l.cols = layoutColumns(l.panels)
	for i := range l.panels {
		p := &l.panels[i]
		p.time = timePlot(p.arms, l.cols.time.width())
		p.ci = intervalPlot(p.arms, l.cols.ci.width())
		p.timeAxis, p.ciAxis = axisHeight(p.time, l.cols.time.width()), axisHeight(p.ci, l.cols.ci.width())
		l.height += p.height()
	}
	return l
}

// chartPanels makes a panel per summary, one colour per arm name across
// the chart, grey for the arms of stale runs.
func chartPanels(summaries []evidence.WorkloadSummary) []chartPanel {
	colors := map[string]color.Color{}
	panels := make([]chartPanel, len(summaries))
	for i := range summaries {
		p := &panels[i]
		p.ws = &summaries[i]
		for j := range p.ws.Arms {
			a := &p.ws.Arms[j]
			if colors[a.Arm] == nil {
				colors[a.Arm] = plotutil.Color(len(colors))
			}
			c := colors[a.Arm]
			if p.stale() {
				c = staleMarkColor
			}
			p.arms = append(p.arms, chartArm{a: a, color: c})
		}
	}
	return panels
}

// layoutColumns sizes the text columns to their widest text (within
// bounds) and gives the rest of the page to the two plots.
func layoutColumns(panels []chartPanel) chartColumns {
	st := chartText(chartFontSize, false, color.Black, draw.XLeft)
	var label, txt, bounds vg.Length
	for i := range panels {
		for _, r := range panels[i].arms {
			label = max(label, st.Width(evidence.ArmLabel(quote.Text(r.a.Arm), r.a.Kind)))
			if r.a.Kind != evidence.ArmBandwidth {
				txt = max(txt, st.Width(armRowText(panels[i].ws, r.a)))
			}
			bounds = max(bounds, st.Width(boundsText(r.a)))
		}
	}
	label, txt, bounds = clamp(label, 40, 170), clamp(txt, 120, 290), clamp(bounds, 60, 110)
	free := chartWidth - 2*chartMargin - 4*chartColumnGap - label - txt - bounds
	x := chartMargin
	next := func(w vg.Length) span {
		s := span{x, x + w}
		x += w + chartColumnGap
		return s
	}
	return chartColumns{label: next(label), time: next(free * 0.52), text: next(txt), ci: next(free * 0.48), bounds: next(bounds)}
}

func clamp(x, lo, hi vg.Length) vg.Length { return min(max(x, lo), hi) }

func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

// chartText is the chart's text style, centred on its y coordinate.
func chartText(size float64, bold bool, c color.Color, align draw.XAlignment) text.Style {
	f := font.From(plot.DefaultFont, vg.Points(size))
	if bold {
		f.Weight = xfont.WeightBold
	}
	return text.Style{Color: c, Font: f, XAlign: align, YAlign: draw.YCenter, Handler: plot.DefaultTextHandler}
}

// chartHeading is the heading of a workload's panel; its names are quoted
// where they are not plain printable text.
func chartHeading(ws *evidence.WorkloadSummary) string {
	return fmt.Sprintf("%s · run %s · %s (%s) · %s iterations · commit %s",
		quote.Text(ws.Workload.Name), quote.Text(ws.Run), quote.Text(ws.Device), ws.Compute,
		evidence.GroupDigits(ws.Workload.Iterations), quote.Text(evidence.ShortCommit(ws.Commit)))
}

// draw draws the titles and notes, then the panels top to bottom.
func (l *chartLayout) draw(dc draw.Canvas) {
	top := dc.Max.Y
	l.drawTop(dc, top)
	y := top - l.top
	for i := range l.panels {
		l.drawPanel(dc, &l.panels[i], y)
		y -= l.panels[i].height()
	}
}

// drawTop writes the columns' titles, what the marks mean and whether
// staleness was checked.
func (l *chartLayout) drawTop(dc draw.Canvas, top vg.Length) {
	title := chartText(chartFontSize, true, color.Black, draw.XLeft)
	y := top - chartTitleHeight/2
	dc.FillText(title, vg.Point{X: l.cols.time.x0, Y: y}, fmt.Sprintf("median %s per run, 95%% CI (log scale)", l.summaries[0].Metric))
	dc.FillText(title, vg.Point{X: l.cols.text.x0, Y: y}, "per iteration · per run · speedup [95% CI]")
	dc.FillText(title, vg.Point{X: l.cols.ci.x0, Y: y}, "95% CI, % of the median")
	for i, line := range l.notes {
		dc.FillText(noteStyle(), vg.Point{X: chartMargin, Y: top - chartTitleHeight - chartNoteLine*(vg.Length(i)+0.5)}, line)
	}
}

func noteStyle() text.Style { return chartText(chartFontSize-0.5, false, noteColor, draw.XLeft) }

// wrapText breaks s at spaces into lines at most width wide in style st
// (a word wider than that alone on its line).
func wrapText(s string, st text.Style, width vg.Length) []string {
	var lines []string
	line := ""
	for _, word := range strings.Fields(s) {
		switch {
		case line == "":
			line = word
		case st.Width(line+" "+word) <= width:
			line += " " + word
		default:
			lines, line = append(lines, line), word
		}
	}
	return append(lines, line)
}

// drawPanel draws one panel below top: its heading, its two plots and the
// text of each row.
func (l *chartLayout) drawPanel(dc draw.Canvas, p *chartPanel, top vg.Length) {
	drawHeading(dc, p, top-chartHeadingHeight/2)
	rowsTop := top - chartHeadingHeight
	rowsBottom := rowsTop - p.rowsHeight()
	p.time.Draw(columnCanvas(dc, l.cols.time, rowsBottom-p.timeAxis, rowsTop))
	p.ci.Draw(columnCanvas(dc, l.cols.ci, rowsBottom-p.ciAxis, rowsTop))
	ink := color.Color(color.Black)
	if p.stale() {
		ink = staleTextColor
	}
	name := chartText(chartFontSize, false, ink, draw.XRight)
	left := chartText(chartFontSize-0.5, false, ink, draw.XLeft)
	center := chartText(chartFontSize-0.5, false, ink, draw.XCenter)
	for i, r := range p.arms {
		y := rowCenter(rowsTop, i)
		dc.FillText(name, vg.Point{X: l.cols.label.x1, Y: y}, evidence.ArmLabel(quote.Text(r.a.Arm), r.a.Kind))
		if r.a.Kind == evidence.ArmBandwidth {
			dc.FillText(left, vg.Point{X: l.cols.time.x0, Y: y}, bandwidthText(r.a))
		} else {
			dc.FillText(left, vg.Point{X: l.cols.text.x0, Y: y}, armRowText(p.ws, r.a))
		}
		if b := boundsText(r.a); b != "" {
			dc.FillText(left, vg.Point{X: l.cols.bounds.x0, Y: y}, b)
		} else {
			dc.FillText(center, vg.Point{X: (l.cols.ci.x0 + l.cols.ci.x1) / 2, Y: y}, fmt.Sprintf("n=%d: too few samples for a 95%% CI", r.a.N))
		}
	}
}

// drawHeading writes a panel's heading centred on y, after the stale tag
// where the run is stale.
func drawHeading(dc draw.Canvas, p *chartPanel, y vg.Length) {
	x, ink := chartMargin, color.Color(color.Black)
	if p.stale() {
		tag := chartText(chartHeaderSize, true, staleTagColor, draw.XLeft)
		dc.FillText(tag, vg.Point{X: x, Y: y}, staleTag)
		x += tag.Width(staleTag) + 8
		ink = staleTextColor
	}
	dc.FillText(chartText(chartHeaderSize, true, ink, draw.XLeft), vg.Point{X: x, Y: y}, chartHeading(p.ws))
}

// columnCanvas is the part of dc in column s between y0 and y1.
func columnCanvas(dc draw.Canvas, s span, y0, y1 vg.Length) draw.Canvas {
	return draw.Crop(dc, s.x0-dc.Min.X, s.x1-dc.Max.X, y0-dc.Min.Y, y1-dc.Max.Y)
}

// rowY is the y coordinate of row i in a panel's plots: row 0 at the top.
func rowY(i int) float64 { return -float64(i) }

// newChartPlot returns a plot of a panel's rows with no title and no y
// axis, so that its data area spans its canvas's width and the rows'
// height exactly, an x axis labelled by ticks and a vertical grid.
func newChartPlot(rows int, ticks plot.Ticker) *plot.Plot {
	p := plot.New()
	p.BackgroundColor = nil
	p.HideY()
	p.Y.Padding = 0
	p.Y.Min, p.Y.Max = rowY(rows-1)-0.5, rowY(0)+0.5
	p.X.Padding = vg.Points(2)
	p.X.Tick.Marker = ticks
	p.X.Tick.Length = vg.Points(3)
	p.X.Tick.Label.Font.Size = vg.Points(chartTickSize)
	grid := plotter.NewGrid()
	grid.Horizontal.Color = nil
	p.Add(grid)
	return p
}

// axisHeight is the height of p's x axis on a canvas width wide.
func axisHeight(p *plot.Plot, width vg.Length) vg.Length {
	c := draw.Canvas{Rectangle: vg.Rectangle{Max: vg.Point{X: width, Y: 1000}}}
	return p.DataCanvas(c).Min.Y
}

// timePlot is a panel's forest plot: each timed or external arm's median
// time per run in ns with its 95% interval, on a log axis of the panel's
// own range.
func timePlot(arms []chartArm, width vg.Length) *plot.Plot {
	lo, hi := timeExtent(arms)
	p := newChartPlot(len(arms), axisTicks{log: true, width: width, format: fmtTickTime})
	p.X.Scale = plot.LogScale{}
	p.X.Min, p.X.Max = lo, hi
	for i, r := range arms {
		if r.a.Kind == evidence.ArmBandwidth {
			continue
		}
		m := r.a.Median
		mark := intervalMark{y: rowY(i), x: m.Center, lo: m.Center, hi: m.Center, color: r.color, kind: r.a.Kind}
		if finite(m.Lo) && m.Lo > 0 && finite(m.Hi) {
			mark.lo, mark.hi = m.Lo, m.Hi
		}
		p.Add(mark)
	}
	return p
}

// timeExtent is the time axis's range in ns: the timed and external arms'
// intervals (their medians where an interval is infinite), or, in a panel
// of bandwidth arms alone, the bandwidth arms' median times; widened a
// little on a log scale.
func timeExtent(arms []chartArm) (lo, hi float64) {
	lo, hi = math.Inf(1), 0
	for _, bandwidth := range []bool{false, true} {
		for _, r := range arms {
			if (r.a.Kind == evidence.ArmBandwidth) != bandwidth {
				continue
			}
			m := r.a.Median
			l, h := m.Center, m.Center
			if finite(m.Lo) && m.Lo > 0 && finite(m.Hi) {
				l, h = m.Lo, m.Hi
			}
			lo, hi = math.Min(lo, l), math.Max(hi, h)
		}
		if hi > 0 {
			break
		}
	}
	pad := math.Max(math.Pow(hi/lo, 0.06), 1.04)
	return lo / pad, hi * pad
}

// intervalPlot draws each arm's 95% interval as a percentage of its
// median on a linear axis of the panel's own scale.
func intervalPlot(arms []chartArm, width vg.Length) *plot.Plot {
	s := intervalHalfWidth(arms) * 1.12
	p := newChartPlot(len(arms), axisTicks{width: width, format: fmtTickPercent})
	p.X.Min, p.X.Max = -s, s
	for i, r := range arms {
		if lo, hi, ok := relativeCI(r.a); ok {
			p.Add(intervalMark{y: rowY(i), lo: lo, hi: hi, color: r.color, kind: r.a.Kind, thin: true})
		}
	}
	return p
}

// intervalHalfWidth is the extent in percent that a panel's interval axis
// spans either side of 0: the widest interval's extent from its median,
// but at most chartClipRatio times the median extent of the panel's
// intervals, and at least 0.01%.
func intervalHalfWidth(arms []chartArm) float64 {
	var ext []float64
	for _, r := range arms {
		if lo, hi, ok := relativeCI(r.a); ok {
			ext = append(ext, math.Max(-lo, hi))
		}
	}
	if len(ext) == 0 {
		return 0.5
	}
	slices.Sort(ext)
	median := ext[len(ext)/2]
	if len(ext)%2 == 0 {
		median = (ext[len(ext)/2-1] + median) / 2
	}
	return math.Max(math.Min(ext[len(ext)-1], chartClipRatio*median), 0.01)
}

// intervalMark is one row's median at x with its 95% interval bar from lo
// to hi: a cap at each bound inside the axis, an arrowhead where the
// bound lies beyond it. The median is a dot (a triangle for an external
// arm), or with thin a short line across the bar, which hides no part of
// a narrow bar.
type intervalMark struct {
	y, x, lo, hi float64
	color        color.Color
	kind         evidence.ArmKind
	thin         bool
}

// Plot implements plot.Plotter.
func (m intervalMark) Plot(c draw.Canvas, p *plot.Plot) {
	tx, ty := p.Transforms(&c)
	y := ty(m.y)
	line := draw.LineStyle{Color: m.color, Width: vg.Points(1.8)}
	if m.hi > m.lo {
		lo, hi := tx(math.Max(m.lo, p.X.Min)), tx(math.Min(m.hi, p.X.Max))
		c.StrokeLine2(line, lo, y, hi, y)
		barEnd(&c, line, lo, y, m.lo < p.X.Min, -1)
		barEnd(&c, line, hi, y, m.hi > p.X.Max, 1)
	}
	if m.thin {
		c.StrokeLine2(draw.LineStyle{Color: m.color, Width: vg.Points(1.2)}, tx(m.x), y-5, tx(m.x), y+5)
		return
	}
	g := draw.GlyphStyle{Color: m.color, Radius: vg.Points(3), Shape: draw.CircleGlyph{}}
	if m.kind == evidence.ArmExternal {
		g.Shape, g.Radius = draw.PyramidGlyph{}, vg.Points(4.5)
	}
	c.DrawGlyphNoClip(g, vg.Point{X: tx(m.x), Y: y})
}

// barEnd ends a bar at x with a cap, or with an arrowhead pointing out
// (dir -1 left, 1 right) where the bound lies beyond the axis.
func barEnd(c *draw.Canvas, line draw.LineStyle, x, y vg.Length, beyond bool, dir vg.Length) {
	const half = 3.5
	if !beyond {
		c.StrokeLine2(line, x, y-half, x, y+half)
		return
	}
	c.FillPolygon(line.Color, []vg.Point{{X: x, Y: y}, {X: x - dir*6, Y: y - half}, {X: x - dir*6, Y: y + half}})
}

// armRowText is the text of a timed or external arm's row: its time per
// iteration and per run and its speedup with the interval.
func armRowText(ws *evidence.WorkloadSummary, a *evidence.ArmSummary) string {
	s := evidence.FormatTime(a.Median.Center) + "/run"
	if a.PerIteration != nil {
		s = evidence.FormatTime(a.PerIteration.Center) + "/iteration · " + s
	}
	switch {
	case a.Speedup != nil:
		s += fmt.Sprintf(" · %.2fx %s", a.Speedup.Center, evidence.FormatSpeedupCI(*a.Speedup))
	case a.Arm == ws.Baseline:
		s += " · baseline"
	}
	if a.N < evidence.MinSamplesPerArm {
		s += fmt.Sprintf(" · n=%d", a.N)
	}
	return s
}

func bandwidthText(a *evidence.ArmSummary) string {
	return fmt.Sprintf("bandwidth %s GB/s %s (device memory copy; not a speedup) · %s per copy",
		evidence.FormatGBs(a.Bandwidth.Center), evidence.FormatGBsCI(*a.Bandwidth), evidence.FormatTime(a.Median.Center))
}

// relativeCI returns an arm's interval as percentages of its center: the
// time interval, or the bandwidth interval for bandwidth arms.
func relativeCI(a *evidence.ArmSummary) (lo, hi float64, ok bool) {
	iv := a.Median
	if a.Kind == evidence.ArmBandwidth {
		iv = *a.Bandwidth
	}
	if !finite(iv.Lo) || !finite(iv.Hi) || iv.Center <= 0 {
		return 0, 0, false
	}
	return (iv.Lo/iv.Center - 1) * 100, (iv.Hi/iv.Center - 1) * 100, true
}

// boundsText writes an arm's interval in percent of its median, for
// example "-0.13% / +0.21%", with a third decimal where both bounds are
// below 0.1%; "" where the interval is infinite.
func boundsText(a *evidence.ArmSummary) string {
	lo, hi, ok := relativeCI(a)
	if !ok {
		return ""
	}
	format := "%+.2f%% / %+.2f%%"
	if math.Max(-lo, hi) < 0.1 {
		format = "%+.3f%% / %+.3f%%"
	}
	return fmt.Sprintf(format, lo, hi)
}

// fmtTickTime writes a time axis's tick in its own unit, for example
// "500 µs" or "1.5 ms".
func fmtTickTime(ns float64) string {
	scale, unit, _ := stats.TimeUnit(ns)
	return strconv.FormatFloat(ns/scale, 'g', 4, 64) + " " + unit
}

// fmtTickPercent writes an interval axis's tick, for example "-0.5%",
// "0" or "+2%".
func fmtTickPercent(v float64) string {
	switch {
	case v == 0:
		return "0"
	case v > 0:
		return "+" + strconv.FormatFloat(v, 'g', 3, 64) + "%"
	}
	return strconv.FormatFloat(v, 'g', 3, 64) + "%"
}

// axisTicks labels an axis width wide with as many ticks as fit without
// their labels overlapping or passing the axis's ends. On a log axis with
// three or more of 1, 2 and 5 times a power of ten in range it labels
// powers of ten first, then 5, 2 and 3 times them (logCandidates);
// elsewhere it labels ticks at a round linear step, zero first
// (linearCandidates). format writes a label.
type axisTicks struct {
	log    bool
	width  vg.Length
	format func(float64) string
}

// tickCandidate is a tick and its rank: lower ranks are labelled first; a
// negative rank is never labelled.
type tickCandidate struct {
	v    float64
	rank int
}

// tickLabelGap is the least space between two tick labels.
const tickLabelGap = vg.Length(6)

// Ticks implements plot.Ticker.
func (t axisTicks) Ticks(lo, hi float64) []plot.Tick {
	if t.log {
		if cands := logCandidates(lo, hi); roundTicks(cands) >= 3 {
			return t.label(cands, lo, hi)
		}
	}
	return t.label(linearCandidates(lo, hi), lo, hi)
}

// roundTicks counts the candidates at 1, 2 or 5 times a power of ten.
func roundTicks(cands []tickCandidate) int {
	n := 0
	for _, c := range cands {
		if c.rank >= 0 && c.rank <= 2 {
			n++
		}
	}
	return n
}

// logCandidates are k times each power of ten in [lo, hi] for k in 1..9;
// 4 and 6 to 9 are labelled only where the range spans less than 1.3
// decades.
func logCandidates(lo, hi float64) []tickCandidate {
	other := -1
	if math.Log10(hi/lo) < 1.3 {
		other = 4
	}
	rank := [10]int{1: 0, 5: 1, 2: 2, 3: 3, 4: other, 6: other, 7: other, 8: other, 9: other}
	var out []tickCandidate
	for e := math.Floor(math.Log10(lo)); math.Pow(10, e) <= hi; e++ {
		for k := 1; k < 10; k++ {
			v := float64(k) * math.Pow(10, e)
			if e < 0 {
				v = float64(k) / math.Pow(10, -e) // 0.3, not 0.30000000000000004
			}
			if v >= lo && v <= hi {
				out = append(out, tickCandidate{v: v, rank: rank[k]})
			}
		}
	}
	return out
}

// linearCandidates are ticks at a round step (1, 2, 2.5 or 5 times a power
// of ten) that divides [lo, hi] into about six, ranked by their distance
// from zero in steps, with unlabelled ticks halfway between them.
func linearCandidates(lo, hi float64) []tickCandidate {
	step := roundStep((hi - lo) / 6)
	var out []tickCandidate
	for i := math.Ceil(lo / step * 2); i/2*step <= hi; i++ {
		c := tickCandidate{v: i / 2 * step, rank: -1}
		if math.Mod(i, 2) == 0 {
			c.rank = int(math.Abs(i / 2))
		}
		out = append(out, c)
	}
	return out
}

// roundStep is the least of 1, 2, 2.5 and 5 times a power of ten that is
// at least x (x > 0).
func roundStep(x float64) float64 {
	p := math.Pow(10, math.Floor(math.Log10(x)))
	for _, m := range []float64{1, 2, 2.5, 5} {
		if m*p >= x {
			return m * p
		}
	}
	return 10 * p
}

// label labels the candidates in rank order where their labels fit.
func (t axisTicks) label(cands []tickCandidate, lo, hi float64) []plot.Tick {
	st := chartText(chartTickSize, false, color.Black, draw.XCenter)
	order := make([]int, len(cands))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cands[a].rank - cands[b].rank })
	ticks := make([]plot.Tick, len(cands))
	var taken []span
	for _, i := range order {
		ticks[i].Value = cands[i].v
		if cands[i].rank < 0 {
			continue
		}
		label := t.format(cands[i].v)
		x, half := t.pos(cands[i].v, lo, hi), st.Width(label)/2
		box := span{x - half, x + half}
		if box.x0 < 0 || box.x1 > t.width || overlaps(box, taken) {
			continue
		}
		taken = append(taken, box)
		ticks[i].Label = label
	}
	return ticks
}

// pos is v's distance from the axis's left end.
func (t axisTicks) pos(v, lo, hi float64) vg.Length {
	if t.log {
		return t.width * vg.Length(math.Log(v/lo)/math.Log(hi/lo))
	}
	return t.width * vg.Length((v-lo)/(hi-lo))
}

// overlaps reports whether box comes within tickLabelGap of any of taken.
func overlaps(box span, taken []span) bool {
	for _, o := range taken {
		if box.x0 < o.x1+tickLabelGap && o.x0 < box.x1+tickLabelGap {
			return true
		}
	}
	return false
}

// checkFormat refuses a chart format other than PNG and SVG.
func checkFormat(format string) error {
	if format != PNG && format != SVG {
		return fmt.Errorf("chart format %q is unknown. Fix: use png or svg", format)
	}
	return nil
}
