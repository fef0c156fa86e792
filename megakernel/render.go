package megakernel

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/gpuplan/gpuplan/internal/quote"
)

// Text rendering limits: longer lists are elided with a count.
const (
	textMaxGroups  = 64
	textMaxMembers = 8
	textMaxWaits   = 64
	// MaxDOTWaves is the largest plan WriteDOT draws; Graphviz layouts of
	// more waves are unreadable and slow.
	MaxDOTWaves = 5000
)

// humanBytes renders b with a binary unit, for example "768.0 MiB".
func humanBytes(b uint64) string {
	const unit = 1024
	if b < unit {
		return fmt.Sprintf("%d B", b)
	}
	units := []string{"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	v := float64(b) / unit
	i := 0
	for v >= unit && i < len(units)-1 {
		v /= unit
		i++
	}
	return fmt.Sprintf("%.1f %s", v, units[i])
}

// groupedInt renders n with thousands separators.
func groupedInt(n uint64) string {
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

// plural renders "1 wave" or "3 waves".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

func yesNo(v bool) string {
	if v {
		return "yes"
	}
	return "no"
}

func (p *WorkloadPlan) waveLabel(id int) string {
	if n := p.WaveNames[id]; n != "" {
		return fmt.Sprintf("%d %s", id, quote.Text(n))
	}
	return strconv.Itoa(id)
}

// WriteText writes the plan as readable tables.
func (p *WorkloadPlan) WriteText(out io.Writer) error {
	w := bufio.NewWriter(out)
	p.writeHeader(w)
	p.writeGroups(w)
	p.writeWaits(w)
	if p.Tiles != nil {
		p.writeTiles(w)
	}
	p.writeTopology(w)
	p.writeMemory(w)
	c := p.Convergence
	fmt.Fprintf(w, "\nConvergence: device loop of at most %s; %s; the %d-byte changed flag is read once at the end (%s); %d host polls per iteration\n",
		plural(int(c.MaxDeviceIterations), "iteration", "iterations"), plural(int(c.HostSyncPoints), "host sync", "host syncs"),
		c.ChangedFlagReadbackBytes, c.ReadbackPolicy, c.HostIterationPolls)
	return w.Flush()
}

// writeHeader writes the plan's title and its inputs: analysis, device,
// memory budget, resident graph, schedule sample and fusion pressure.
func (p *WorkloadPlan) writeHeader(w *bufio.Writer) {
	title := quote.Text(p.Name)
	if p.Name == "" {
		title = "workload"
	}
	fmt.Fprintf(w, "Megakernel plan: %s\n", title)
	if p.Description != "" {
		fmt.Fprintf(w, "  %s\n", quote.Text(p.Description))
	}
	k := p.Device.Key
	dev := quote.Text(p.Device.Name)
	if p.Device.Profile != "" {
		dev = fmt.Sprintf("%s [%s]", dev, quote.Text(p.Device.Profile))
	}
	fmt.Fprintf(w, "  analysis         %s, graph layout hash %#016x\n", quote.Text(p.Analysis), p.GraphLayoutHash)
	fmt.Fprintf(w, "  device           %s: sm %d.%d, warp %d, grid sync %s, tensor cores %s, max workgroup %d\n",
		dev, k.SMMajor, k.SMMinor, k.WarpSize, yesNo(k.SupportsGridSync), yesNo(k.SupportsTensorCores), k.MaxWorkgroupSize)
	fmt.Fprintf(w, "  memory budget    %s (%s B, %s)\n", humanBytes(p.BudgetBytes), groupedInt(p.BudgetBytes), p.BudgetSource)
	fmt.Fprintf(w, "  resident graph   %s (%s B)\n", humanBytes(p.ResidentGraphBytes), groupedInt(p.ResidentGraphBytes))
	fmt.Fprintf(w, "  schedule sample  dispatch %g ns, frontier density %g, readback %s; launch overhead %g ns\n",
		p.Sample.DispatchCostNS, p.Sample.FrontierDensity, humanBytes(p.Sample.ReadbackBytes), p.LaunchOverheadNS)
	fmt.Fprintf(w, "  fusion pressure  %.4f (%s)\n", p.FusionPressure, p.FusionPressureSource)
}

// writeGroups writes the barrier groups table, eliding groups past
// textMaxGroups.
func (p *WorkloadPlan) writeGroups(w *bufio.Writer) {
	split := ""
	if len(p.Groups) > len(p.Layers) {
		split = fmt.Sprintf(" (the memory split added %d)", len(p.Groups)-len(p.Layers))
	}
	fmt.Fprintf(w, "\nBarrier groups: %s in %s -> %s%s, %s\n",
		plural(len(p.WaveNames), "wave", "waves"), plural(len(p.Layers), "dependency layer", "dependency layers"),
		plural(len(p.Groups), "group", "groups"), split, plural(p.GlobalBarriers, "grid-wide barrier", "grid-wide barriers"))
	fmt.Fprintf(w, "  %-5s  %-5s  %-10s  %-10s  %-10s  %s\n", "group", "width", "frontier", "scratch", "output", "waves (Kahn discovery order)")
	for g, members := range p.Groups {
		if g == textMaxGroups {
			fmt.Fprintf(w, "  ... %d more groups (use --json for all)\n", len(p.Groups)-g)
			break
		}
		p.writeGroupRow(w, g, members)
	}
}

// writeGroupRow writes one barrier group: its width, its summed frontier,
// scratch and output bytes, and its first textMaxMembers waves.
func (p *WorkloadPlan) writeGroupRow(w *bufio.Writer, g int, members []int) {
	var f, s, o uint64
	labels := make([]string, 0, min(len(members), textMaxMembers)+1)
	for i, id := range members {
		wv := p.waves[id]
		f, s, o = f+wv.FrontierBytes, s+wv.ScratchBytes, o+wv.OutputBytes
		if i < textMaxMembers {
			labels = append(labels, p.waveLabel(id))
		}
	}
	if len(members) > textMaxMembers {
		labels = append(labels, fmt.Sprintf("... +%d more", len(members)-textMaxMembers))
	}
	fmt.Fprintf(w, "  %-5d  %-5d  %-10s  %-10s  %-10s  %s\n", g, len(members), humanBytes(f), humanBytes(s), humanBytes(o), strings.Join(labels, ", "))
}

// writeWaits writes the per-producer waits table, eliding waiting waves
// past textMaxWaits, and how many waves start at once.
func (p *WorkloadPlan) writeWaits(w *bufio.Writer) {
	st := p.WaitStats
	fmt.Fprintf(w, "\nPer-producer waits: 0 grid-wide barriers, %s for %s (%d duplicate and %d implied waits dropped)\n",
		plural(st.Waits, "counter wait", "counter waits"), plural(st.Dependencies, "dependency", "dependencies"), st.DuplicatesDropped, st.RedundantDropped)
	if !st.ReductionComplete {
		fmt.Fprintf(w, "  (the implied-wait reduction stopped at its work cap; the remaining waits are still correct)\n")
	}
	fmt.Fprintf(w, "  %-28s  %s\n", "wave", "waits on")
	shown := 0
	for v, ws := range p.Waits {
		if len(ws) == 0 {
			continue
		}
		if shown == textMaxWaits {
			fmt.Fprintf(w, "  ... %d more waiting waves (use --json for all)\n", st.WaitingWaves-shown)
			break
		}
		labels := make([]string, len(ws))
		for i, q := range ws {
			labels[i] = p.waveLabel(q)
		}
		fmt.Fprintf(w, "  %-28s  %s\n", p.waveLabel(v), strings.Join(labels, ", "))
		shown++
	}
	if starts := len(p.WaveNames) - st.WaitingWaves; starts > 0 {
		if starts == 1 {
			fmt.Fprintf(w, "  (1 wave waits on nothing and starts at once)\n")
		} else {
			fmt.Fprintf(w, "  (%d waves wait on nothing and start at once)\n", starts)
		}
	}
}

// writeTopology writes the selected execution topology, why it was
// selected (or downgraded) and the pressures behind the decision.
func (p *WorkloadPlan) writeTopology(w *bufio.Writer) {
	e := p.Execution
	d := e.Decision
	if e.DowngradedToSparse {
		fmt.Fprintf(w, "\nTopology: %s, downgraded: %s (%s) was selected but its memory plan is over the budget\n", e.Topology, d.Topology, d.Reason())
	} else {
		fmt.Fprintf(w, "\nTopology: %s (%s)\n", e.Topology, d.Reason())
	}
	fmt.Fprintf(w, "  memory pressure %d bps, average degree %d bps, launch pressure %d bps\n",
		d.MemoryPressureBPS, d.AverageDegreeBPS, d.LaunchPressureBPS)
	fmt.Fprintf(w, "  %s\n", p.Explanation)
}

// writeMemory writes the memory plan of the selected topology, one row per
// buffer kind.
func (p *WorkloadPlan) writeMemory(w *bufio.Writer) {
	m := p.Execution.Memory
	fmt.Fprintf(w, "\nMemory plan (%s):\n", p.Execution.Topology)
	row := func(name string, b uint64, note string) {
		fmt.Fprintf(w, "%s\n", strings.TrimRight(fmt.Sprintf("  %-18s  %10s  %s", name, humanBytes(b), note), " "))
	}
	row("resident graph", m.GraphBytes, "")
	row("frontier", m.FrontierBytes, "peak over barrier groups")
	row("scratch", m.ScratchBytes, fmt.Sprintf("peak %s, scaled for the topology", humanBytes(p.PeakScratchBytes)))
	row("output", m.OutputBytes, "peak over barrier groups")
	row("required", m.RequiredBytes, fmt.Sprintf("of %s budget, pressure %d bps", humanBytes(m.BudgetBytes), m.MemoryPressureBPS))
	row("amortized readback", p.AmortizedReadbackBytes, "widest group "+plural(p.MaxGroupWidth, "wave", "waves"))
}

// writeTiles writes the tile plan of a workload with a module.
func (p *WorkloadPlan) writeTiles(w *bufio.Writer) {
	t := p.Tiles
	flags := 0
	for _, f := range t.Flags {
		if f {
			flags++
		}
	}
	fmt.Fprintf(w, "\nTile plan (persistent waits arm): %s in %s of %s; %s, %d finer waits dropped; %s publish per-tile flags\n",
		plural(int(t.Tasks), "task", "tasks"), plural(len(t.Units), "unit", "units"), plural(len(t.Order), "wave", "waves"),
		plural(int(t.CounterWaits), "counter wait", "counter waits"), t.Dropped, plural(flags, "wave", "waves"))
	shown := 0
	for u := range t.Units {
		if t.Units[u].Count < 2 {
			continue
		}
		if shown == textMaxWaits {
			fmt.Fprintf(w, "  ... more fused units (use --json for all)\n")
			break
		}
		labels := make([]string, 0, t.Units[u].Count)
		for _, v := range t.UnitWaves(u) {
			labels = append(labels, p.waveLabel(int(v)))
		}
		fmt.Fprintf(w, "  fused  %s tiles: %s\n", groupedInt(t.Units[u].Tiles), strings.Join(labels, " + "))
		shown++
	}
}
