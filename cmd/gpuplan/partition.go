package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/frontier"
	"github.com/gpuplan/gpuplan/internal/bytesize"
	"github.com/gpuplan/gpuplan/internal/graphbudget"
	"github.com/gpuplan/gpuplan/occupancy"
	"github.com/gpuplan/gpuplan/partition"
	"github.com/gpuplan/gpuplan/planners"
	"github.com/gpuplan/gpuplan/workloads/partbfs"
)

const partitionAbout = `Plan a breadth-first search over a graph spread across several GPUs.

The graph's vertices are cut into one range per device (1D partitioning),
on 64-vertex boundaries: blocked (equal vertex counts) or edges (equal
adjacency entries, degree-balanced). Each device keeps its range's
adjacency lists and levels resident, with frontier bitmaps and exchange
buffers; its bytes are checked against its memory budget (90% of the
device's memory, the executor's rule), and a part that does not fit is an
error naming the device and every number of its layout.

After every level the devices exchange their frontier: a bottom-up level
all-gathers every device's frontier bitmap slice; a top-down level first
all-gathers each device's count of vertices found for every other device,
then every pair sends those vertices as a queue (4 bytes each) or as the
receiver's bitmap slice, whichever is smaller. The plan predicts every
level's exchange for one traversal (from --root, or a root chosen by
--seed), with each level's direction from the direction-optimizing BFS's
planner. 'gpuplan bench frontier --devices N' measures it.

Devices: --device NAME (a built-in profile, see 'gpuplan devices') for all
--devices N of them, or --device NAME,NAME,... one per device; or
--device-memory BYTES (for example 141GB or 80GiB) for every device.

Graphs: grid:N, grid3d:N, kron:SCALE, road:N, rgg:N[:DEGREE], file:PATH, as bench.`

// partitionOptions are the parsed flags of "gpuplan partition".
type partitionOptions struct {
	spec     frontier.Spec
	devices  []partition.Device
	strategy partition.Strategy
	root     int64
	seed     uint64
}

// partitionReport is the JSON output.
type partitionReport struct {
	Graph      partitionGraph                `json:"graph"`
	Plan       partition.Plan                `json:"plan"`
	Prediction *partition.ExchangePrediction `json:"prediction,omitempty"`
}

type partitionGraph struct {
	Name        string `json:"name"`
	Vertices    int    `json:"vertices"`
	EdgeEntries int    `json:"edge_entries"`
}

func runPartition(e *env, args []string) error {
	f := e.newFlags("partition", "partition --graph SPEC [--devices N] (--device NAME[,NAME...] | --device-memory BYTES) [--strategy blocked|edges] [--root R] [--json]", partitionAbout)
	graph := f.String("graph", "", "graph `SPEC`: grid:N, grid3d:N, kron:SCALE, road:N, rgg:N[:DEGREE] or file:PATH")
	count := f.Int("devices", 2, "number of devices `N`")
	names := f.String("device", "", "built-in device profile `NAME` for every device, or one name per device separated by commas")
	memory := f.String("device-memory", "", "memory of every device in `BYTES` (for example 141GB or 80GiB), instead of --device")
	strategy := f.String("strategy", "edges", "blocked (equal vertex counts) or edges (equal edge entries)")
	o := &partitionOptions{}
	f.Int64Var(&o.root, "root", -1, "the traversal whose exchange is predicted starts at vertex `R` (default: a root chosen by --seed)")
	f.Uint64Var(&o.seed, "seed", 1, "seed for the graph generators and the root choice")
	if err := f.parse(args); err != nil {
		return err
	}
	if err := f.noArgs(); err != nil {
		return err
	}
	if len(strings.Split(*names, ",")) > 1 && !setFlags(f)["devices"] {
		*count = len(strings.Split(*names, ",")) // a list of names sets the count
	}
	if err := o.parse(*graph, *count, *names, *memory, *strategy); err != nil {
		return err
	}
	if o.root < -1 {
		return usagef("gpuplan partition: --root %d is negative. Fix: give a vertex id of 0 or more, or leave the flag out for a root chosen by --seed", o.root)
	}
	m := hostMemory()
	if err := m.Explain(graphbudget.Check(o.spec, *graph, m.Bytes, 1)); err != nil {
		return err
	}
	g, err := o.spec.Build(o.seed, frontier.DefaultLimits())
	if err != nil {
		return err
	}
	g.Name = o.spec.Name()
	rep, err := o.plan(g)
	if err != nil {
		return err
	}
	if f.json {
		return writeJSON(e.stdout, rep)
	}
	return writePartition(e.stdout, rep)
}

// parse checks the flags and resolves the devices.
func (o *partitionOptions) parse(graph string, count int, names, memory, strategy string) error {
	if graph == "" {
		return usagef("gpuplan partition: --graph is required, for example --graph kron:20. Fix: name the graph (run 'gpuplan partition --help')")
	}
	spec, err := frontier.ParseSpec(graph)
	if err != nil {
		return usagef("gpuplan partition: --graph: %v", err)
	}
	o.spec = spec
	if o.strategy, err = partition.ParseStrategy(strategy); err != nil {
		return usagef("gpuplan partition: --strategy: %v", err)
	}
	if count < 1 || count > partition.MaxDevices {
		return usagef("gpuplan partition: --devices %d is outside 1..%d. Fix: give the number of devices to spread the graph over", count, partition.MaxDevices)
	}
	switch {
	case names != "" && memory != "":
		return usagef("gpuplan partition: give either --device or --device-memory, not both. Fix: drop one of the two flags")
	case names == "" && memory == "":
		return usagef("gpuplan partition: missing --device NAME or --device-memory BYTES. Fix: add --device h200 (known: %s) or --device-memory 141GB", strings.Join(occupancy.ProfileNames(), ", "))
	case memory != "":
		bytes, err := bytesize.Parse(memory)
		if err != nil {
			return usagef("gpuplan partition: --device-memory: %v", err)
		}
		for range count {
			o.devices = append(o.devices, partition.Device{Name: "custom " + strings.TrimSpace(memory), BudgetBytes: executor.TotalResidentBudget(bytes)})
		}
		return nil
	}
	return o.parseNames(names, count)
}

// parseNames resolves --device: one name for every device, or one per
// device.
func (o *partitionOptions) parseNames(names string, count int) error {
	list := strings.Split(names, ",")
	if len(list) > 1 && len(list) != count {
		return usagef("gpuplan partition: --device names %d devices but --devices is %d. Fix: name one device for all, or one per device", len(list), count)
	}
	for d := range count {
		name := strings.TrimSpace(list[min(d, len(list)-1)])
		p, err := lookupProfile(name, "use one of the known names, or --device-memory BYTES for a device that is none of them")
		if err != nil {
			return usagef("gpuplan partition: --device: %v", err)
		}
		o.devices = append(o.devices, partition.Device{Name: p.Short, BudgetBytes: executor.TotalResidentBudget(uint64(p.Device.TotalMemoryBytes))})
	}
	return nil
}

// plan plans the partition and predicts one traversal's exchange.
func (o *partitionOptions) plan(g *frontier.CSR) (*partitionReport, error) {
	plan, err := partition.New(partition.Request{Offsets: g.Offsets, Devices: o.devices, Strategy: o.strategy, ScratchBytes: partbfs.ControlBytes})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", g.Name, err)
	}
	rep := &partitionReport{Graph: partitionGraph{Name: g.Name, Vertices: g.NumVertices(), EdgeEntries: g.NumEdgeEntries()}, Plan: plan}
	root, err := o.pickRoot(g)
	if err != nil {
		return nil, err
	}
	levels, err := frontier.BFS(g, root)
	if err != nil {
		return nil, err
	}
	pred, err := partition.PredictExchange(plan, partition.Traversal{Offsets: g.Offsets, Targets: g.Targets,
		Levels: levels, Root: root, Params: planners.DefaultDirectionParams()})
	if err != nil {
		return nil, err
	}
	rep.Prediction = &pred
	return rep, nil
}

// pickRoot returns --root, or a root with edges chosen by --seed.
func (o *partitionOptions) pickRoot(g *frontier.CSR) (int32, error) {
	if o.root >= 0 {
		if err := frontier.CheckRoot(g, o.root); err != nil {
			return 0, err
		}
		return int32(o.root), nil
	}
	roots, err := frontier.Roots(g, 1, o.seed)
	if err != nil {
		return 0, err
	}
	return roots[0], nil
}

// writePartition writes the plan and the prediction as text.
func writePartition(w io.Writer, rep *partitionReport) error {
	p := rep.Plan
	fmt.Fprintf(w, "graph      %s: %d vertices, %d edge entries\n", rep.Graph.Name, rep.Graph.Vertices, rep.Graph.EdgeEntries)
	fmt.Fprintf(w, "partition  %s over %d devices, boundaries on 64-vertex words, bitmap slices of %d words\n", p.Strategy, len(p.Parts), p.SliceWords)
	fmt.Fprintf(w, "balance    largest part %.2fx the mean vertices, %.2fx the mean edge entries\n\n",
		float64(p.VertexImbalanceBPS)/1e4, float64(p.EdgeImbalanceBPS)/1e4)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "device\tname\tvertices\tfirst\tend\tedge entries\tresident bytes\tbudget bytes\tuse")
	for _, part := range p.Parts {
		fmt.Fprintf(tw, "%d\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%.1f%%\n", part.Device, part.Name, part.Vertices, part.First, part.End,
			part.EdgeEntries, part.ResidentBytes, part.BudgetBytes, 100*float64(part.ResidentBytes)/float64(part.BudgetBytes))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nexchange per level, bytes between devices:\n")
	fmt.Fprintf(w, "  bottom-up  all-gather of every frontier slice: %d\n", p.Exchange.AllGatherBytes)
	fmt.Fprintf(w, "  top-down   all-gather of the counts: %d, then per pair a queue (4 bytes a vertex) or the bitmap slice: at most %d\n",
		p.Exchange.CountBytes, p.Exchange.BitmapBytes)
	if rep.Prediction == nil {
		return nil
	}
	pred := rep.Prediction
	fmt.Fprintf(w, "\ntraversal from root %d: %d level steps, %d bytes exchanged in all\n", pred.Root, len(pred.Levels), pred.TotalBytes)
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "level\tdirection\tcollective\tqueue/bitmap pairs\tbytes\treason")
	for _, l := range pred.Levels {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%d/%d\t%d\t%s\n", l.Decision.Level, l.Decision.Direction, l.Collective, l.QueuePairs, l.BitmapPairs, l.Bytes, l.Decision.Reason)
	}
	return tw.Flush()
}
