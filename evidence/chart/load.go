package chart

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"sort"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/gpuplan/gpuplan/evidence"
	"github.com/gpuplan/gpuplan/internal/quote"
)

// WriteLoad draws the throughput-latency curve of load rows as a PNG
// or SVG: one line per graph, mode and window through its client counts,
// answered queries per second across and the p99 latency (solid) and the
// p50 (dashed) up, both on log scales, each point labelled with its
// client count. The legend's names (graph, backend, mode) are quoted
// (quote.Text) where they are not plain printable text, so the chart's
// text is printable and the SVG is well-formed XML.
func WriteLoad(w io.Writer, rows []evidence.LoadRow, format string) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("chart: cannot draw these load rows (%v). Fix: check them with gpuplan report without --chart", r)
		}
	}()
	if err := checkFormat(format); err != nil {
		return err
	}
	series := loadSeries(rows)
	if len(series) == 0 {
		return fmt.Errorf("no load row answered a query, so there is no curve to draw. Fix: run gpuplan load first")
	}
	p := plot.New()
	p.Title.Text = "BFS query server: throughput and latency"
	p.X.Label.Text = "answered queries per second"
	p.Y.Label.Text = "latency (ms): p99 solid, p50 dashed"
	p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
	p.X.Tick.Marker, p.Y.Tick.Marker = plot.LogTicks{Prec: -1}, plot.LogTicks{Prec: -1}
	p.Legend.Top = true
	for i, s := range series {
		if err := addLoadSeries(p, s, plotutil.Color(i)); err != nil {
			return err
		}
	}
	return writeCanvas(w, format, 10*vg.Inch, 6*vg.Inch, p.Draw)
}

// loadSeriesRows is one curve: the rows of one graph, backend, mode and
// window, by client count.
type loadSeriesRows struct {
	name string
	rows []*evidence.LoadRow
}

// loadSeries groups the rows that answered queries into curves.
func loadSeries(rows []evidence.LoadRow) []loadSeriesRows {
	index := map[string]int{}
	var out []loadSeriesRows
	for i := range rows {
		r := &rows[i]
		if r.Answered == 0 || r.QPS <= 0 || r.P50NS == 0 {
			continue
		}
		name := fmt.Sprintf("%s %s %s", quote.Text(r.Graph), quote.Text(r.Backend), quote.Text(r.Mode))
		if r.Mode == evidence.LoadBatched {
			name += " window " + time.Duration(r.WindowNS).String()
		}
		k, ok := index[name]
		if !ok {
			k = len(out)
			index[name] = k
			out = append(out, loadSeriesRows{name: name})
		}
		out[k].rows = append(out[k].rows, r)
	}
	for _, s := range out {
		sort.Slice(s.rows, func(a, b int) bool { return s.rows[a].Clients < s.rows[b].Clients })
	}
	return out
}

// addLoadSeries draws one curve's p99 and p50 lines and labels its points.
func addLoadSeries(p *plot.Plot, s loadSeriesRows, c color.Color) error {
	p99, p50 := make(plotter.XYs, len(s.rows)), make(plotter.XYs, len(s.rows))
	labels := plotter.XYLabels{XYs: make(plotter.XYs, len(s.rows)), Labels: make([]string, len(s.rows))}
	for i, r := range s.rows {
		p99[i] = plotter.XY{X: r.QPS, Y: math.Max(float64(r.P99NS)/1e6, 1e-6)}
		p50[i] = plotter.XY{X: r.QPS, Y: math.Max(float64(r.P50NS)/1e6, 1e-6)}
		labels.XYs[i], labels.Labels[i] = p99[i], fmt.Sprintf(" %d", r.Clients)
	}
	line, points, err := plotter.NewLinePoints(p99)
	if err != nil {
		return err
	}
	line.Color, points.Color = c, c
	dashed, err := plotter.NewLine(p50)
	if err != nil {
		return err
	}
	dashed.Color, dashed.Dashes = c, []vg.Length{vg.Points(4), vg.Points(3)}
	text, err := plotter.NewLabels(labels)
	if err != nil {
		return err
	}
	p.Add(line, points, dashed, text)
	p.Legend.Add(s.name, line, points)
	return nil
}
