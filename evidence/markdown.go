package evidence

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/gpuplan/gpuplan/internal/quote"
	"github.com/gpuplan/gpuplan/internal/stats"
)

func fmtScaled(ns, scale float64, format string) string {
	if math.IsInf(ns, 0) || math.IsNaN(ns) {
		return "∞"
	}
	return fmt.Sprintf(format, ns/scale)
}

// FormatSpeedupCI renders a speedup interval, for example "[11.42x, 11.90x]".
func FormatSpeedupCI(iv Interval) string {
	if iv.Lo <= 0 && !finite(iv.Hi) {
		return tooFew
	}
	bound := func(x float64) string {
		if !finite(x) {
			return "∞"
		}
		return fmt.Sprintf("%.2fx", x)
	}
	return "[" + bound(iv.Lo) + ", " + bound(iv.Hi) + "]"
}

// FormatGBsCI renders a bandwidth interval, for example "[2,741.2, 2,759.1]".
func FormatGBsCI(iv Interval) string {
	if !finite(iv.Lo) || !finite(iv.Hi) {
		return tooFew
	}
	return "[" + FormatGBs(iv.Lo) + ", " + FormatGBs(iv.Hi) + "]"
}

// FormatTime renders a time in ns with its unit, for example "1.81 µs".
func FormatTime(ns float64) string {
	scale, unit, format := stats.TimeUnit(ns)
	return fmtScaled(ns, scale, format) + " " + unit
}

// tooFew is what tables print for an interval that is infinite because the
// arm has too few samples.
const tooFew = "too few samples"

// fmtTimeCI renders an interval in the unit of its center, for example
// "[1.80, 1.82] µs".
func fmtTimeCI(iv Interval) string {
	if !finite(iv.Lo) || !finite(iv.Hi) {
		return tooFew
	}
	scale, unit, format := stats.TimeUnit(iv.Center)
	return fmt.Sprintf("[%s, %s] %s", fmtScaled(iv.Lo, scale, format), fmtScaled(iv.Hi, scale, format), unit)
}

// FormatGBs renders a bandwidth in GB/s with thousands separators.
func FormatGBs(x float64) string {
	if math.IsInf(x, 0) || math.IsNaN(x) {
		return "∞"
	}
	if x < 0 || x >= 1e15 {
		return fmt.Sprintf("%.1f", x)
	}
	tenths := uint64(math.Round(x * 10))
	return GroupDigits(tenths/10) + "." + strconv.FormatUint(tenths%10, 10)
}

// GroupDigits renders n with thousands separators, for example "48,425".
func GroupDigits(n uint64) string {
	s := strconv.FormatUint(n, 10)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// ShortCommit is commit c cut to its first 12 bytes (12 hex digits of a
// hash), as tables and charts print it.
func ShortCommit(c string) string {
	if len(c) > 12 {
		return c[:12]
	}
	return c
}

func mdEscape(s string) string {
	// quote.Text first: a name with a line break or an escape is quoted.
	// Brackets are escaped so that a name cannot become a link or an
	// image ("![x](https://host/p.png)" would load from host where the
	// report is rendered), and '&' so that an entity in a name ("&lt;")
	// prints as written instead of as the character it names.
	return mdReplacer.Replace(quote.Text(s))
}

var mdReplacer = strings.NewReplacer(`\`, `\\`, "|", `\|`, "*", `\*`, "_", `\_`, "`", "\\`", "[", `\[`, "]", `\]`, "&", "&amp;", "<", "&lt;")

// staleSuffix marks the heading of a stale run's section.
const staleSuffix = " (stale: measured on other code)"

// MarkdownTable renders summaries as Markdown: one section per workload of
// each run, headed by the workload and run label, stating the device,
// commit and size, with a table of the timed and external arms (sample
// count, median time with its 95% interval, time per iteration with its
// interval, speedup over the baseline with its interval) and, where the
// run measured one, a table of bandwidth arms in GB/s. The heading of a
// stale run (Freshness Stale) ends in "(stale: measured on other code)"
// and its section says why; the closing notes count the stale runs, or
// say that staleness was not checked where a run's freshness is unknown.
func MarkdownTable(summaries []WorkloadSummary) string {
	var b strings.Builder
	if len(summaries) == 0 {
		b.WriteString("No evidence recorded.\n")
		return b.String()
	}
	for i, ws := range summaries {
		if i > 0 {
			b.WriteByte('\n')
		}
		writeMarkdownSection(&b, ws)
	}
	metric := summaries[0].Metric
	fmt.Fprintf(&b, "\nMedians of %s with 95%% intervals (benchmath, distribution-free). Per iteration is the median over the workload's iterations (BFS levels). "+
		"Speedup is the baseline arm's median over the arm's; its interval is conservative (see package evidence). "+
		"Bandwidth arms measure device memory bandwidth (bytes moved over time) and have no speedup. Arms marked (external) are peer tools.\n", metric)
	b.WriteString("\n" + FreshnessNote(summaries, "sections", strings.TrimSpace(staleSuffix)) + "\n")
	return b.String()
}

func writeMarkdownSection(b *strings.Builder, ws WorkloadSummary) {
	w := ws.Workload
	heading, stale := mdEscape(ws.Label()), ""
	if ws.Freshness == Stale {
		heading += staleSuffix
		stale = " **Stale:** its source fingerprint is none of the current tree's, so it was measured on other code, and the gate judges no claim on it."
	}
	fmt.Fprintf(b, "### %s\n\n", heading)
	fmt.Fprintf(b, "%s (compute %s, driver %s), commit %s; %s nodes, %s edges, %s iterations; metric %s; file %s.%s\n\n",
		mdEscape(ws.Device), ws.Compute, mdEscape(ws.Driver), mdEscape(ShortCommit(ws.Commit)),
		GroupDigits(w.Nodes), GroupDigits(w.Edges), GroupDigits(w.Iterations), ws.Metric, mdEscape(ws.File), stale)
	b.WriteString("| arm | n | median | 95% CI | per iteration | 95% CI | speedup | 95% CI |\n")
	b.WriteString("|---|--:|--:|---|--:|---|--:|---|\n")
	var bandwidth []ArmSummary
	for _, a := range ws.Arms {
		if a.Kind == ArmBandwidth {
			bandwidth = append(bandwidth, a)
			continue
		}
		perIt, perItCI := "—", ""
		if a.PerIteration != nil {
			perIt, perItCI = FormatTime(a.PerIteration.Center), fmtTimeCI(*a.PerIteration)
		}
		speed, speedCI := "baseline", ""
		if a.Speedup != nil {
			speed = fmt.Sprintf("%.2fx", a.Speedup.Center)
			speedCI = FormatSpeedupCI(*a.Speedup)
		}
		fmt.Fprintf(b, "| %s | %d | %s | %s | %s | %s | %s | %s |\n", ArmLabel(mdEscape(a.Arm), a.Kind), a.N,
			FormatTime(a.Median.Center), fmtTimeCI(a.Median), perIt, perItCI, speed, speedCI)
	}
	if len(bandwidth) == 0 {
		return
	}
	b.WriteString("\n| bandwidth arm | n | bandwidth | 95% CI (GB/s) | median time | 95% CI |\n")
	b.WriteString("|---|--:|--:|---|--:|---|\n")
	for _, a := range bandwidth {
		fmt.Fprintf(b, "| %s | %d | %s GB/s | %s | %s | %s |\n", mdEscape(a.Arm), a.N,
			FormatGBs(a.Bandwidth.Center), FormatGBsCI(*a.Bandwidth), FormatTime(a.Median.Center), fmtTimeCI(a.Median))
	}
}
