package chart

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/gpuplan/gpuplan/evidence"
)

// relativeSummary is a workload with one timed arm per half-width, each a
// 95% interval of ± that many percent around a 1 ms median.
func relativeSummary(name string, halfWidths ...float64) evidence.WorkloadSummary {
	ws := evidence.WorkloadSummary{File: name + ".csv", Run: name, Workload: evidence.Workload{Name: name, Iterations: 10}, Metric: evidence.MetricWallNS, Baseline: "a0"}
	for i, h := range halfWidths {
		ws.Arms = append(ws.Arms, evidence.ArmSummary{Arm: fmt.Sprintf("a%d", i), N: 12,
			Median: evidence.Interval{Center: 1e6 * (1 + float64(i)), Lo: 1e6 * (1 + float64(i)) * (1 - h/100), Hi: 1e6 * (1 + float64(i)) * (1 + h/100)}})
	}
	return ws
}

// liveSummaries are the summaries of the committed evidence, nil where
// there is none.
func liveSummaries(t *testing.T) []evidence.WorkloadSummary {
	files, err := evidence.LoadResults(filepath.Join("..", "results"))
	require.NoError(t, err)
	s, err := evidence.Summarize(files, evidence.MetricWallNS, "host-loop")
	require.NoError(t, err)
	return s
}

// chartCases are the summaries the layout tests draw.
func chartCases(t *testing.T) map[string][]evidence.WorkloadSummary {
	cases := map[string][]evidence.WorkloadSummary{
		"report":   reportSummaries(t, evidence.MetricWallNS),
		"external": externalSummaries(t),
		"mixed":    {relativeSummary("narrow", 0.25, 1), relativeSummary("wide", 20), relativeSummary("one", 0.05)},
	}
	if live := liveSummaries(t); len(live) > 0 {
		cases["evidence/results"] = live
	}
	return cases
}

// barPoints is the width in points of the interval bar of row i of a
// panel's interval plot, as drawn: cut at the axis's ends.
func barPoints(l *chartLayout, p *chartPanel, i int) vg.Length {
	lo, hi, ok := relativeCI(p.arms[i].a)
	if !ok {
		return 0
	}
	c := draw.Canvas{Rectangle: vg.Rectangle{Max: vg.Point{X: l.cols.ci.width(), Y: 100}}}
	c = p.ci.DataCanvas(c)
	x, _ := p.ci.Transforms(&c)
	return x(min(hi, p.ci.X.Max)) - x(max(lo, p.ci.X.Min))
}

// pointsToPixels converts points to CSS pixels (96 per inch).
func pointsToPixels(l vg.Length) float64 { return float64(l) * 96 / 72 }

// Every panel has both x axes, each with at least two tick labels that do
// not overlap and stay within the axis.
func TestChartEveryPanelHasAxes(t *testing.T) {
	for name, s := range chartCases(t) {
		t.Run(name, func(t *testing.T) {
			l := layoutChart(s)
			require.Len(t, l.panels, len(s))
			for _, p := range l.panels {
				for _, ax := range []struct {
					name  string
					ticks axisTicks
					lo    float64
					hi    float64
				}{
					{"time", p.time.X.Tick.Marker.(axisTicks), p.time.X.Min, p.time.X.Max},
					{"interval", p.ci.X.Tick.Marker.(axisTicks), p.ci.X.Min, p.ci.X.Max},
				} {
					labels := assertTickLabels(t, ax.ticks, ax.lo, ax.hi)
					assert.GreaterOrEqual(t, len(labels), 2, "%s: the %s axis has labels %q", p.ws.Label(), ax.name, labels)
				}
				assert.Positive(t, float64(p.timeAxis))
				assert.Positive(t, float64(p.ciAxis))
			}
		})
	}
}

// assertTickLabels checks that the labels of an axis's ticks keep apart
// and within the axis, and returns them.
func assertTickLabels(t *testing.T, ticks axisTicks, lo, hi float64) []string {
	t.Helper()
	st := chartText(chartTickSize, false, nil, draw.XCenter)
	var labels []string
	var boxes []span
	for _, tk := range ticks.Ticks(lo, hi) {
		if tk.Label == "" {
			continue
		}
		x, half := ticks.pos(tk.Value, lo, hi), st.Width(tk.Label)/2
		box := span{x - half, x + half}
		assert.False(t, overlaps(box, boxes), "label %q overlaps another", tk.Label)
		assert.GreaterOrEqual(t, float64(box.x0), 0.0, tk.Label)
		assert.LessOrEqual(t, float64(box.x1), float64(ticks.width), tk.Label)
		boxes, labels = append(boxes, box), append(labels, tk.Label)
	}
	return labels
}

// svgTextAt is a text of an SVG chart and its height on the page, the
// page's top being the largest.
type svgTextAt struct {
	y    float64
	text string
}

// svgTextsAt returns the texts of an SVG written by vgsvg, which flips
// the y axis of every text (y="-123.4" transform="scale(1, -1)").
func svgTextsAt(t *testing.T, data []byte) []svgTextAt {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(data))
	var out []svgTextAt
	var y float64
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			return out
		}
		require.NoError(t, err)
		switch tok := tok.(type) {
		case xml.StartElement:
			for _, a := range tok.Attr {
				if tok.Name.Local == "text" && a.Name.Local == "y" {
					v, err := strconv.ParseFloat(a.Value, 64)
					require.NoError(t, err)
					y = -v
				}
			}
		case xml.CharData:
			if s := strings.TrimSpace(string(tok)); s != "" {
				out = append(out, svgTextAt{y, s})
			}
		}
	}
}

var (
	timeTickLabel     = regexp.MustCompile(`^\d+(\.\d+)? (ns|µs|ms|s)$`)
	intervalTickLabel = regexp.MustCompile(`^([+-]\d+(\.\d+)?%|0)$`)
)

// In the SVG, every panel's own rows carry both axes' tick labels: below
// its heading and above the next panel's.
func TestChartSVGAxisUnderEveryPanel(t *testing.T) {
	for name, s := range chartCases(t) {
		t.Run(name, func(t *testing.T) {
			var buf bytes.Buffer
			require.NoError(t, WriteEvidence(&buf, s, SVG))
			texts := svgTextsAt(t, buf.Bytes())
			var headings []float64
			for i := range s {
				y, ok := textY(texts, chartHeading(&s[i]))
				require.True(t, ok, "no heading for %s", s[i].Label())
				headings = append(headings, y)
			}
			headings = append(headings, -1e9)
			for i := range s {
				times, intervals := 0, 0
				for _, tx := range texts {
					if tx.y < headings[i] && tx.y > headings[i+1] {
						times += boolInt(timeTickLabel.MatchString(tx.text))
						intervals += boolInt(intervalTickLabel.MatchString(tx.text))
					}
				}
				assert.GreaterOrEqual(t, times, 2, "%s: time tick labels", s[i].Label())
				assert.GreaterOrEqual(t, intervals, 2, "%s: interval tick labels", s[i].Label())
			}
		})
	}
}

func textY(texts []svgTextAt, text string) (float64, bool) {
	for _, t := range texts {
		if t.text == text {
			return t.y, true
		}
	}
	return 0, false
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Each panel's interval axis has its own scale, so that a sub-percent
// interval is a bar, even beside a wide one or in a chart with a panel of
// wide intervals.
func TestChartIntervalScalePerPanel(t *testing.T) {
	tests := []struct {
		name      string
		summaries []evidence.WorkloadSummary
		panel     int
		row       int
		minPixels float64
		cut       []int // rows whose interval is cut at the axis's ends
	}{
		{"beside a panel of ±20%", []evidence.WorkloadSummary{relativeSummary("narrow", 0.25, 1), relativeSummary("wide", 20)}, 0, 0, 30, nil},
		{"beside ±3% in its panel", []evidence.WorkloadSummary{relativeSummary("w", 0.25, 3)}, 0, 0, 12, nil},
		{"beside a ±12% outlier", []evidence.WorkloadSummary{relativeSummary("w", 0.25, 0.4, 0.3, 12)}, 0, 0, 12, []int{3}},
		{"alone", []evidence.WorkloadSummary{relativeSummary("w", 0.25)}, 0, 0, 100, nil},
		{"a 0.1% interval beside ±1%", []evidence.WorkloadSummary{relativeSummary("w", 0.05, 1, 0.5)}, 0, 0, 8, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := layoutChart(tc.summaries)
			p := &l.panels[tc.panel]
			px := pointsToPixels(barPoints(l, p, tc.row))
			assert.Greater(t, px, tc.minPixels, "the interval of row %d spans %.1f px", tc.row, px)
			for i := range p.arms {
				_, hi, _ := relativeCI(p.arms[i].a)
				assert.Equal(t, slicesContains(tc.cut, i), hi > p.ci.X.Max, "row %d cut", i)
			}
		})
	}
}

func slicesContains(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// A stale run's panel is tagged and greyed; a fresh run's is not; where
// freshness is unknown the chart says that staleness was not checked.
func TestChartMarksStaleRuns(t *testing.T) {
	tests := []struct {
		name      string
		freshness []evidence.Freshness
		note      string
	}{
		{"one stale", []evidence.Freshness{evidence.Stale, evidence.Fresh}, `1 of 2 panels are marked "STALE: measured on other code"`},
		{"all fresh", []evidence.Freshness{evidence.Fresh, evidence.Fresh}, "No run is stale"},
		{"unknown", []evidence.Freshness{evidence.FreshnessUnknown, evidence.FreshnessUnknown}, "Staleness not checked"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := reportSummaries(t, evidence.MetricWallNS)
			require.Len(t, s, len(tc.freshness))
			for i := range s {
				s[i].Freshness = tc.freshness[i]
			}
			var buf bytes.Buffer
			require.NoError(t, WriteEvidence(&buf, s, SVG))
			texts := svgTextsAt(t, buf.Bytes())
			var all []string
			for _, tx := range texts {
				all = append(all, tx.text)
			}
			assert.Contains(t, strings.Join(all, "\n"), tc.note)
			l := layoutChart(s)
			for i, f := range tc.freshness {
				headingY, ok := textY(texts, chartHeading(&s[i]))
				require.True(t, ok)
				tagged := false
				for _, tx := range texts {
					tagged = tagged || (tx.text == staleTag && tx.y == headingY)
				}
				assert.Equal(t, f == evidence.Stale, tagged, "panel %d tagged", i)
				for _, r := range l.panels[i].arms {
					assert.Equal(t, f == evidence.Stale, r.color == staleMarkColor, "panel %d arm %s grey", i, r.a.Arm)
				}
			}
			assert.Equal(t, tc.freshness[0] == evidence.Stale, strings.Contains(buf.String(), "#B4B4B4"), "grey marks in the SVG")
		})
	}
}

// The chart stays 12 inches wide and no taller than the chart it replaced
// (1.3 inches and 0.3 inches per heading or arm).
func TestChartSizeBounded(t *testing.T) {
	for name, s := range chartCases(t) {
		t.Run(name, func(t *testing.T) {
			rows := len(s)
			for _, ws := range s {
				rows += len(ws.Arms)
			}
			l := layoutChart(s)
			assert.LessOrEqual(t, float64(l.height), float64(1.3*vg.Inch+0.3*vg.Inch*vg.Length(rows)))
			var buf bytes.Buffer
			require.NoError(t, WriteEvidence(&buf, s, SVG))
			assert.Contains(t, buf.String(), fmt.Sprintf(`width="%gpt"`, float64(chartWidth)))
		})
	}
}

// Tick labels: round values with their units, thinned to fit.
func TestAxisTicks(t *testing.T) {
	tests := []struct {
		name   string
		ticks  axisTicks
		lo, hi float64
		want   []string
	}{
		{"log, a decade", axisTicks{log: true, width: 250, format: fmtTickTime}, 0.67e6, 10.5e6, []string{"1 ms", "2 ms", "5 ms"}},
		{"log, three decades", axisTicks{log: true, width: 200, format: fmtTickTime}, 70e3, 40e6, []string{"100 µs", "1 ms", "10 ms"}},
		{"log, narrow", axisTicks{log: true, width: 200, format: fmtTickTime}, 1.42e6, 1.85e6, []string{"1.5 ms", "1.6 ms", "1.7 ms", "1.8 ms"}},
		{"percent", axisTicks{width: 180, format: fmtTickPercent}, -3.36, 3.36, []string{"-2%", "0", "+2%"}},
		{"sub-percent", axisTicks{width: 180, format: fmtTickPercent}, -0.28, 0.28, []string{"-0.2%", "0", "+0.2%"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			labels := assertTickLabels(t, tc.ticks, tc.lo, tc.hi)
			for _, w := range tc.want {
				assert.Contains(t, labels, w)
			}
			for _, width := range []vg.Length{120, 400} {
				narrow := tc.ticks
				narrow.width = width
				assert.GreaterOrEqual(t, len(assertTickLabels(t, narrow, tc.lo, tc.hi)), 2, "width %v", width)
			}
		})
	}
}

func TestWriteEvidence(t *testing.T) {
	s := reportSummaries(t, evidence.MetricWallNS)
	var buf bytes.Buffer
	require.NoError(t, WriteEvidence(&buf, s, PNG))
	img, err := png.Decode(bytes.NewReader(buf.Bytes()))
	require.NoError(t, err)
	assert.Equal(t, 12*chartPNGDPI, img.Bounds().Dx())

	buf.Reset()
	require.NoError(t, WriteEvidence(&buf, s, SVG))
	svg := buf.String()
	assert.True(t, strings.HasPrefix(strings.TrimSpace(svg), "<?xml"), svg[:40])
	for _, want := range []string{
		"grid-512 · run run", "rmat-16 · run run", ">megakernel<", ">copy-ceiling<", "· baseline<",
		"10.22x [9.92x, 10.32x]", "1.14 µs/iteration", "bandwidth 3,185.6 GB/s", "not a speedup", "% of the median",
	} {
		assert.True(t, strings.Contains(svg, want), "the chart lacks %q", want)
	}
	// The copy ceiling is never a speedup: no label gives it one.
	for _, line := range strings.Split(svg, "\n") {
		if strings.Contains(line, "GB/s") {
			assert.NotRegexp(t, `\d+\.\d\dx`, line)
		}
	}

	// One sample per arm: no finite interval, still a chart that says so.
	few := []evidence.ResultFile{{Path: "x.csv", Samples: []evidence.Sample{testSample("host-loop", 0, 1e6), testSample("megakernel", 0, 1e5)}}}
	fs, err := evidence.Summarize(few, evidence.MetricWallNS, "host-loop")
	require.NoError(t, err)
	buf.Reset()
	require.NoError(t, WriteEvidence(&buf, fs, SVG))
	assert.Contains(t, buf.String(), "too few samples for a 95% CI")

	require.ErrorContains(t, WriteEvidence(&buf, s, "gif"), "Fix:")
	require.ErrorContains(t, WriteEvidence(&buf, nil, PNG), "Fix:")

	if dir := os.Getenv("GPUPLAN_CHART_DIR"); dir != "" {
		f, err := os.Create(filepath.Join(dir, "report.png"))
		require.NoError(t, err)
		require.NoError(t, WriteEvidence(f, s, PNG))
		require.NoError(t, f.Close())
	}
}

// The two plots of a panel share its rows: their data areas must span the
// rows' height exactly, or a row's interval would sit beside another row's
// name and text.
func TestChartPanelsAlign(t *testing.T) {
	for _, s := range [][]evidence.WorkloadSummary{reportSummaries(t, evidence.MetricWallNS), externalSummaries(t)} {
		l := layoutChart(s)
		dc := draw.New(vgimg.New(chartWidth, l.height))
		top := l.height - l.top
		for _, p := range l.panels {
			rowsTop := top - chartHeadingHeight
			rowsBottom := rowsTop - p.rowsHeight()
			time := p.time.DataCanvas(columnCanvas(dc, l.cols.time, rowsBottom-p.timeAxis, rowsTop))
			ci := p.ci.DataCanvas(columnCanvas(dc, l.cols.ci, rowsBottom-p.ciAxis, rowsTop))
			for _, c := range []draw.Canvas{time, ci} {
				assert.InDelta(t, float64(rowsTop), float64(c.Max.Y), 0.01)
				assert.InDelta(t, float64(rowsBottom), float64(c.Min.Y), 0.01)
			}
			assert.InDelta(t, float64(l.cols.time.width()), float64(time.Size().X), 0.01, "no label widens the time axis")
			assert.InDelta(t, float64(l.cols.ci.width()), float64(ci.Size().X), 0.01, "no label widens the interval axis")
			assert.Less(t, float64(time.Max.X), float64(l.cols.text.x0))
			assert.Less(t, float64(l.cols.text.x1), float64(ci.Min.X))
			top -= p.height()
		}
	}
}

// A peer tool's row is marked external.
func TestWriteEvidenceMarksExternalArms(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, WriteEvidence(&buf, externalSummaries(t), SVG))
	assert.Contains(t, buf.String(), ">gunrock (external)<")
}
