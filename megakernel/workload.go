package megakernel

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"math"

	"github.com/gpuplan/gpuplan/internal/checked"
	"github.com/gpuplan/gpuplan/internal/strictjson"
	"github.com/gpuplan/gpuplan/occupancy"
)

// Workload defaults.
const (
	// DefaultBudgetPercent is the share of the device's memory used as the
	// budget when a workload gives none.
	DefaultBudgetPercent = 90
	// DefaultMaxDeviceIterations bounds the device-side fixed-point loop
	// when a workload gives no max_device_iterations.
	DefaultMaxDeviceIterations = 1024
	// DerivedFusionSteps and DerivedFusionDt are the homotopy scheduler
	// settings used to derive a fusion pressure from the schedule sample
	// when a workload gives none.
	DerivedFusionSteps = 64
	DerivedFusionDt    = 0.5
)

// Workload is the input of `gpuplan plan`: a wave DAG with per-wave memory,
// the resident graph, a device, a budget and a measured schedule sample.
// Decode it with DecodeWorkload; the fields are documented there.
type Workload struct {
	Name              string               `json:"name,omitempty"`
	Description       string               `json:"description,omitempty"`
	Analysis          *string              `json:"analysis"`
	GraphLayoutHash   *uint64              `json:"graph_layout_hash,omitempty"`
	Device            *string              `json:"device,omitempty"`
	DeviceFile        *string              `json:"device_file,omitempty"`
	MemoryBudgetBytes *uint64              `json:"memory_budget_bytes,omitempty"`
	LaunchOverheadNS  *float64             `json:"launch_overhead_ns"`
	Graph             *WorkloadGraph       `json:"graph"`
	ScheduleSample    *WorkloadSample      `json:"schedule_sample"`
	FusionPressure    *float64             `json:"fusion_pressure,omitempty"`
	MaxDeviceIters    *uint32              `json:"max_device_iterations,omitempty"`
	Waves             []WorkloadWave       `json:"waves"`
	Dependencies      []WorkloadDependency `json:"dependencies"`
	// Module, Buffers and Outputs make the waves run kernels (`gpuplan
	// run`): Module is the path of the waves' relocatable PTX, relative to
	// the workload file; every wave then has a Kernel.
	Module  *string          `json:"module,omitempty"`
	Buffers []WorkloadBuffer `json:"buffers,omitempty"`
	Outputs []WorkloadOutput `json:"outputs,omitempty"`
	// BytesMoved is the device bytes one run must read and write at
	// least, for its bandwidth against the copy ceiling (0: not stated).
	BytesMoved uint64 `json:"bytes_moved,omitempty"`

	// Derived by DecodeWorkload.
	kind  AnalysisKind
	waves []FrontierWave
	deps  []Dependency
}

// WorkloadGraph is the resident graph layout.
type WorkloadGraph struct {
	NodeCount    *uint64 `json:"node_count"`
	EdgeCount    *uint64 `json:"edge_count"`
	BytesPerNode *uint64 `json:"bytes_per_node"`
	BytesPerEdge *uint64 `json:"bytes_per_edge"`
}

// WorkloadSample is the measured schedule sample.
type WorkloadSample struct {
	DispatchCostNS  *float64 `json:"dispatch_cost_ns"`
	FrontierDensity *float64 `json:"frontier_density"`
	ReadbackBytes   *uint64  `json:"readback_bytes"`
}

// WorkloadWave is one wave: its id (0..n-1, each exactly once), an optional
// name and its per-wave buffers.
type WorkloadWave struct {
	ID            *int64  `json:"id"`
	Name          string  `json:"name,omitempty"`
	FrontierBytes *uint64 `json:"frontier_bytes"`
	ScratchBytes  *uint64 `json:"scratch_bytes"`
	OutputBytes   *uint64 `json:"output_bytes"`
	// Kernel is the wave's work in a workload with a module; its frontier,
	// scratch and output bytes then default to 0.
	Kernel *WaveKernel `json:"kernel,omitempty"`
}

// WorkloadDependency says wave After starts once wave Before has finished.
// In a workload with a module, Tiles may narrow it to the producer tiles
// each consumer tile reads (default: all of them).
type WorkloadDependency struct {
	Before *int64   `json:"before"`
	After  *int64   `json:"after"`
	Tiles  *TileMap `json:"tiles,omitempty"`
}

// WorkloadError is a workload problem found after decoding: Field is the
// JSON path (for example "dependencies[3].after") and Err the cause, whose
// message ends with a "Fix:" sentence. errors.As reaches Err.
type WorkloadError struct {
	Source string
	Field  string
	Err    error
}

// Error prefixes the wrapped error, which ends with a "Fix:" sentence, with the source and field.
func (e *WorkloadError) Error() string {
	// The same "source: field "x": " layout as strictjson's decoding errors;
	// the cause already carries the Fix.
	return (&strictjson.Error{Source: e.Source, Field: e.Field, Msg: e.Err.Error()}).Error()
}

// Unwrap returns the underlying error.
func (e *WorkloadError) Unwrap() error { return e.Err }

func fieldErr(source, field, fix, format string, args ...any) error {
	return &strictjson.Error{Source: source, Field: field, Msg: fmt.Sprintf(format, args...), Fix: fix}
}

// DecodeWorkload decodes a workload strictly (unknown fields, trailing data
// and type mismatches are *strictjson.Error) and validates it. source names
// the input in messages.
//
// Fields: analysis (required: dataflow, ifds, reaching_definitions,
// liveness, points_to, parser_frontend or custom:<n>); exactly one of device
// (a built-in profile name) and device_file (a profile JSON path, resolved
// by the caller); memory_budget_bytes (default: 90% of the device memory);
// launch_overhead_ns (required, finite, >= 0); graph {node_count,
// edge_count, bytes_per_node, bytes_per_edge} (required); schedule_sample
// {dispatch_cost_ns > 0, frontier_density in [0,1], readback_bytes}
// (required); fusion_pressure in [0,1] (default: derived from the sample
// with ScheduleFusionPressure, DerivedFusionSteps steps of
// DerivedFusionDt); max_device_iterations (default
// DefaultMaxDeviceIterations); graph_layout_hash (default: a hash of the
// graph layout); waves [{id, name, frontier_bytes, scratch_bytes,
// output_bytes}] (required, at least one; ids 0..n-1 each once);
// dependencies [{before, after}] (ids of listed waves, no self
// dependencies).
//
// A workload whose waves run kernels (`gpuplan run`) adds module (the path
// of the waves' relocatable PTX, resolved by the caller), buffers [{name,
// bytes, init}] with init {fill: zeros | random (seed, type, min, max) |
// file (path)}, outputs [{buffer, type, tolerance}], a kernel {function,
// tiles, block (a multiple of 32), shared_bytes, prologue, args [{buffer,
// offset, bytes} | {u32|i32|u64|i64|f32|f64: value}]} on every wave and
// tiles ("all", "same" or "block:K") on dependencies. Such a workload may
// leave out analysis (DefaultRunAnalysis), launch_overhead_ns
// (DefaultRunLaunchOverheadNS), graph (the buffers' bytes as the resident
// state), schedule_sample (DefaultRunDispatchCostNS, density 1, the
// outputs' bytes read back) and each wave's frontier, scratch and output
// bytes (0).
func DecodeWorkload(source string, data []byte) (*Workload, error) {
	var w Workload
	if err := strictjson.Decode(source, data, &w); err != nil {
		return nil, err
	}
	if w.Module != nil {
		if err := w.validateRunDefaults(source); err != nil {
			return nil, err
		}
	} else if err := w.noRunFields(source); err != nil {
		return nil, err
	}
	if err := w.validate(source); err != nil {
		return nil, err
	}
	if w.Module != nil {
		if err := w.validateRun(source); err != nil {
			return nil, err
		}
	}
	return &w, nil
}

// noRunFields refuses the fields of a workload with a module in one
// without.
func (w *Workload) noRunFields(src string) error {
	fix := "add \"module\": \"waves.ptx\" (the waves' relocatable PTX) to run kernels, or remove the field"
	switch {
	case len(w.Buffers) > 0:
		return fieldErr(src, "buffers", fix, "buffers are given without a module")
	case len(w.Outputs) > 0:
		return fieldErr(src, "outputs", fix, "outputs are given without a module")
	case w.BytesMoved > 0:
		return fieldErr(src, "bytes_moved", fix, "bytes_moved is given without a module")
	}
	for i, wv := range w.Waves {
		if wv.Kernel != nil {
			return fieldErr(src, fmt.Sprintf("waves[%d].kernel", i), fix, "a kernel is given without a module")
		}
	}
	for i, d := range w.Dependencies {
		if d.Tiles != nil {
			return fieldErr(src, fmt.Sprintf("dependencies[%d].tiles", i), fix, "a tile map is given without a module")
		}
	}
	return nil
}

func finiteIn(v float64, lo, hi float64) bool { return checked.Finite(v) && v >= lo && v <= hi }

// requiredField is one field a workload must give: its name in its
// object, whether the input gives it (a non-null value; for a string, a
// non-empty one) and the fix that says what to add.
type requiredField struct {
	name  string
	given bool
	fix   string
}

// checkRequired is the one check of required workload fields: the first of
// fields the input does not give is strictjson's required-field error
// (strictjson.Required), naming its path, at(name), and ending in the fix.
// The path is only built for the error.
func checkRequired(src string, at func(name string) string, fields ...requiredField) error {
	for _, f := range fields {
		if !f.given {
			return strictjson.Required(src, at(f.name), f.fix)
		}
	}
	return nil
}

// topLevel is the path of a top-level field: its name.
func topLevel(name string) string { return name }

// validate checks the planning fields after decoding, in the order the
// fields are documented, and derives the analysis kind, the waves indexed
// by id and the dependencies.
func (w *Workload) validate(src string) error {
	for _, check := range []func(src string) error{w.validateAnalysis, w.validateDevice, w.validateLaunch,
		w.validateGraph, w.validateSample, w.validateTuning, w.validateWaves, w.validateDependencies} {
		if err := check(src); err != nil {
			return err
		}
	}
	return nil
}

func (w *Workload) validateAnalysis(src string) error {
	if err := checkRequired(src, topLevel, requiredField{"analysis", w.Analysis != nil,
		"add \"analysis\": \"dataflow\" (or ifds, reaching_definitions, liveness, points_to, parser_frontend, custom:<n>)"}); err != nil {
		return err
	}
	kind, err := ParseAnalysisKind(*w.Analysis)
	if err != nil {
		return &WorkloadError{Source: src, Field: "analysis", Err: err}
	}
	w.kind = kind
	return nil
}

// validateDevice checks that exactly one of device and device_file is
// given, and not empty.
func (w *Workload) validateDevice(src string) error {
	if err := checkRequired(src, topLevel, requiredField{"device", w.Device != nil || w.DeviceFile != nil,
		"add \"device\": \"h100-sxm\" (a built-in profile) or \"device_file\": \"profile.json\""}); err != nil {
		return err
	}
	switch {
	case w.Device != nil && w.DeviceFile != nil:
		return fieldErr(src, "device_file", "give either device or device_file, not both", "both device and device_file are set")
	case w.Device != nil && *w.Device == "":
		return fieldErr(src, "device", "name a built-in profile such as \"h100-sxm\"", "device is empty")
	case w.DeviceFile != nil && *w.DeviceFile == "":
		return fieldErr(src, "device_file", "give the path of a device profile JSON file", "device_file is empty")
	}
	return nil
}

func (w *Workload) validateLaunch(src string) error {
	if err := checkRequired(src, topLevel, requiredField{"launch_overhead_ns", w.LaunchOverheadNS != nil,
		"add the measured per-launch overhead in nanoseconds (about 4000 for a stream launch on Hopper)"}); err != nil {
		return err
	}
	if !finiteIn(*w.LaunchOverheadNS, 0, math.MaxFloat64) {
		return fieldErr(src, "launch_overhead_ns", "give a finite overhead >= 0 in nanoseconds", "launch overhead %v is negative", *w.LaunchOverheadNS)
	}
	return nil
}

func (w *Workload) validateGraph(src string) error {
	if err := checkRequired(src, topLevel, requiredField{"graph", w.Graph != nil,
		"add \"graph\": {\"node_count\", \"edge_count\", \"bytes_per_node\", \"bytes_per_edge\"}"}); err != nil {
		return err
	}
	g := w.Graph
	count := func(name string, v *uint64) requiredField {
		return requiredField{name, v != nil, "add graph." + name + " (an unsigned integer)"}
	}
	if err := checkRequired(src, func(name string) string { return "graph." + name },
		count("node_count", g.NodeCount), count("edge_count", g.EdgeCount),
		count("bytes_per_node", g.BytesPerNode), count("bytes_per_edge", g.BytesPerEdge)); err != nil {
		return err
	}
	if *g.NodeCount == 0 && *g.EdgeCount > 0 {
		return fieldErr(src, "graph.edge_count", "give the graph's node count, or 0 edges for a graph of none",
			"%d edges over 0 nodes: an edge needs two endpoints", *g.EdgeCount)
	}
	return nil
}

func (w *Workload) validateSample(src string) error {
	if err := checkRequired(src, topLevel, requiredField{"schedule_sample", w.ScheduleSample != nil,
		"add \"schedule_sample\": {\"dispatch_cost_ns\", \"frontier_density\", \"readback_bytes\"}"}); err != nil {
		return err
	}
	s := w.ScheduleSample
	if err := checkRequired(src, func(name string) string { return "schedule_sample." + name },
		requiredField{"dispatch_cost_ns", s.DispatchCostNS != nil, "add the measured dispatch cost in nanoseconds"},
		requiredField{"frontier_density", s.FrontierDensity != nil, "add the measured active fraction of the frontier, in [0, 1]"},
		requiredField{"readback_bytes", s.ReadbackBytes != nil, "add the bytes read back per dispatch (0 if none)"}); err != nil {
		return err
	}
	switch {
	case !finiteIn(*s.DispatchCostNS, math.SmallestNonzeroFloat64, math.MaxFloat64):
		return fieldErr(src, "schedule_sample.dispatch_cost_ns", "give a positive dispatch cost in nanoseconds", "dispatch cost %v is not positive", *s.DispatchCostNS)
	case !finiteIn(*s.FrontierDensity, 0, 1):
		return fieldErr(src, "schedule_sample.frontier_density", "give the active fraction of the frontier, between 0 and 1", "frontier density %v is outside [0, 1]", *s.FrontierDensity)
	}
	return nil
}

// validateTuning checks the optional fusion pressure and iteration budget.
func (w *Workload) validateTuning(src string) error {
	if w.FusionPressure != nil && !finiteIn(*w.FusionPressure, 0, 1) {
		return fieldErr(src, "fusion_pressure", "give a fusion pressure between 0 and 1, or leave it out to derive it", "fusion pressure %v is outside [0, 1]", *w.FusionPressure)
	}
	if w.MaxDeviceIters != nil && *w.MaxDeviceIters == 0 {
		return &WorkloadError{Source: src, Field: "max_device_iterations", Err: &EmptyIterationBudgetError{}}
	}
	return nil
}

// validateWaves checks the waves and indexes them by id.
func (w *Workload) validateWaves(src string) error {
	if err := checkRequired(src, topLevel, requiredField{"waves", len(w.Waves) > 0,
		"list at least one wave: {\"id\": 0, \"frontier_bytes\": ..., \"scratch_bytes\": ..., \"output_bytes\": ...}"}); err != nil {
		return err
	}
	n := len(w.Waves)
	if n > MaxWaves {
		return fieldErr(src, "waves", fmt.Sprintf("plan at most %d waves", MaxWaves), "%d waves do not fit 32-bit wave ids", n)
	}
	w.waves = make([]FrontierWave, n)
	seen := make([]int, n) // seen[id] is the position of the wave with that id, or -1
	for i := range seen {
		seen[i] = -1
	}
	idFix := fmt.Sprintf("give every wave an id in [0, %d)", n)
	for i := range w.Waves {
		if err := w.validateWave(src, i, seen, idFix); err != nil {
			return err
		}
	}
	return nil
}

// validateWave checks waves[i] (idFix is the fix of a missing id) and
// records it under its id.
func (w *Workload) validateWave(src string, i int, seen []int, idFix string) error {
	wv, n := w.Waves[i], len(w.Waves)
	f := func(name string) string { return fmt.Sprintf("waves[%d].%s", i, name) }
	if err := checkRequired(src, f, requiredField{"id", wv.ID != nil, idFix},
		requiredField{"frontier_bytes", wv.FrontierBytes != nil, "give the wave's frontier bytes (0 if none)"},
		requiredField{"scratch_bytes", wv.ScratchBytes != nil, "give the wave's scratch bytes (0 if none)"},
		requiredField{"output_bytes", wv.OutputBytes != nil, "give the wave's output bytes (0 if none)"}); err != nil {
		return err
	}
	id := *wv.ID
	renumber := func() string { return fmt.Sprintf("number the waves 0..%d, each exactly once", n-1) }
	if id < 0 || id >= int64(n) {
		return fieldErr(src, f("id"), renumber(), "wave id %d is out of range [0, %d)", id, n)
	}
	if seen[id] >= 0 {
		return fieldErr(src, f("id"), renumber(), "wave id %d is already used by waves[%d]", id, seen[id])
	}
	seen[id] = i
	w.waves[id] = FrontierWave{FrontierBytes: *wv.FrontierBytes, ScratchBytes: *wv.ScratchBytes, OutputBytes: *wv.OutputBytes}
	return nil
}

func (w *Workload) validateDependencies(src string) error {
	if len(w.Dependencies) > MaxDependencies {
		return fieldErr(src, "dependencies", fmt.Sprintf("give at most %d dependencies", MaxDependencies), "%d dependencies do not fit 32-bit offsets", len(w.Dependencies))
	}
	w.deps = make([]Dependency, len(w.Dependencies))
	for i := range w.Dependencies {
		if err := w.validateDependency(src, i); err != nil {
			return err
		}
	}
	return nil
}

// validateDependency checks dependencies[i] against the waves.
func (w *Workload) validateDependency(src string, i int) error {
	d, n := w.Dependencies[i], len(w.Waves)
	f := func(name string) string { return fmt.Sprintf("dependencies[%d].%s", i, name) }
	if err := checkRequired(src, f,
		requiredField{"before", d.Before != nil, "give the id of the wave that must finish first"},
		requiredField{"after", d.After != nil, "give the id of the wave that waits"}); err != nil {
		return err
	}
	for _, e := range []struct {
		name string
		v    int64
	}{{"before", *d.Before}, {"after", *d.After}} {
		if e.v < 0 || e.v >= int64(n) {
			return fieldErr(src, f(e.name), fmt.Sprintf("use the id of a listed wave, 0..%d", n-1), "unknown wave id %d (the workload has %d waves)", e.v, n)
		}
	}
	if *d.Before == *d.After {
		return &WorkloadError{Source: src, Field: fmt.Sprintf("dependencies[%d]", i), Err: &SelfDependencyError{Wave: int(*d.Before), Index: i}}
	}
	w.deps[i] = Dependency{Before: int(*d.Before), After: int(*d.After)}
	return nil
}

// WaveName returns the wave's name from the workload, or "" when it has
// none.
func (w *Workload) WaveName(id int) string {
	if i := w.waveIndex(id); i >= 0 {
		return w.Waves[i].Name
	}
	return ""
}

// waveIndex returns the position in Waves of the wave with the given id.
func (w *Workload) waveIndex(id int) int {
	for i, wv := range w.Waves {
		if wv.ID != nil && *wv.ID == int64(id) {
			return i
		}
	}
	return -1
}

// Kind returns the decoded analysis kind.
func (w *Workload) Kind() AnalysisKind { return w.kind }

// FrontierWaves returns the waves indexed by id.
func (w *Workload) FrontierWaves() []FrontierWave { return w.waves }

// WaveDependencies returns the validated dependencies in input order.
func (w *Workload) WaveDependencies() []Dependency { return w.deps }

// LayoutHash returns graph_layout_hash, or FNV-1a over the graph layout.
func (w *Workload) LayoutHash() uint64 {
	if w.GraphLayoutHash != nil {
		return *w.GraphLayoutHash
	}
	h := fnv.New64a()
	var buf [8]byte
	for _, v := range []uint64{*w.Graph.NodeCount, *w.Graph.EdgeCount, *w.Graph.BytesPerNode, *w.Graph.BytesPerEdge} {
		binary.LittleEndian.PutUint64(buf[:], v)
		h.Write(buf[:])
	}
	return h.Sum64()
}

// WorkloadPlan is everything `gpuplan plan` prints.
type WorkloadPlan struct {
	Name        string `json:"name,omitempty"`
	Description string `json:"description,omitempty"`
	Analysis    string `json:"analysis"`
	Device      struct {
		Name             string    `json:"name"`
		Profile          string    `json:"profile,omitempty"`
		TotalMemoryBytes int64     `json:"total_memory_bytes"`
		Key              DeviceKey `json:"key"`
	} `json:"device"`
	GraphLayoutHash      uint64         `json:"graph_layout_hash"`
	BudgetBytes          uint64         `json:"budget_bytes"`
	BudgetSource         string         `json:"budget_source"`
	ResidentGraphBytes   uint64         `json:"resident_graph_bytes"`
	LaunchOverheadNS     float64        `json:"launch_overhead_ns"`
	Sample               ScheduleSample `json:"schedule_sample"`
	FusionPressure       float64        `json:"fusion_pressure"`
	FusionPressureSource string         `json:"fusion_pressure_source"`

	WaveNames []string `json:"wave_names"`
	// Layers are the dependency layers (Kahn discovery order); Groups are
	// the barrier groups after the memory split.
	Layers         [][]int `json:"layers"`
	Groups         [][]int `json:"barrier_groups"`
	GlobalBarriers int     `json:"global_barriers"`
	// Waits[v] lists the producers wave v waits on in the per-producer form.
	Waits     [][]int   `json:"producer_waits"`
	WaitStats WaitStats `json:"producer_wait_stats"`

	PeakFrontierBytes      uint64 `json:"peak_frontier_bytes"`
	PeakScratchBytes       uint64 `json:"peak_scratch_bytes"`
	PeakOutputBytes        uint64 `json:"peak_output_bytes"`
	AmortizedReadbackBytes uint64 `json:"amortized_readback_bytes"`
	MaxGroupWidth          int    `json:"max_group_width"`

	Execution   ExecutionPlan   `json:"execution"`
	Explanation string          `json:"explanation"`
	Convergence ConvergencePlan `json:"convergence"`
	// Tiles is the tile plan of a workload with a module: how the
	// persistent waits arm runs it.
	Tiles *TilePlan `json:"tiles,omitempty"`

	waves []FrontierWave
	deps  []Dependency
}

// PlanWorkload plans a decoded workload on dev (profile is the profile name
// shown in the output, may be empty). It is a pure function of its inputs:
// PlanFrontierExecution through cache (nil: a single-use cache),
// PlanProducerWaits and PlanDeviceConvergence. Every error is a
// *WorkloadError naming the workload field to change.
func PlanWorkload(source string, w *Workload, dev occupancy.Device, profile string, cache *PlanCache) (*WorkloadPlan, error) {
	if w == nil || w.waves == nil {
		return nil, errors.New("workload was not decoded. Fix: obtain it from DecodeWorkload")
	}
	p := &WorkloadPlan{Name: w.Name, Description: w.Description, Analysis: w.kind.String(),
		GraphLayoutHash: w.LayoutHash(), LaunchOverheadNS: *w.LaunchOverheadNS, waves: w.waves, deps: w.deps}
	p.Device.Name, p.Device.Profile, p.Device.TotalMemoryBytes = dev.Name, profile, dev.TotalMemoryBytes
	p.Device.Key = DeviceKeyFor(dev)

	if err := p.setBudget(source, w, dev); err != nil {
		return nil, err
	}
	if err := p.setFusionPressure(w); err != nil {
		return nil, workloadErr(source, "schedule_sample", err)
	}
	graph := GraphShape{NodeCount: *w.Graph.NodeCount, EdgeCount: *w.Graph.EdgeCount}
	gb, err := GraphLayoutBytes(graph, *w.Graph.BytesPerNode, *w.Graph.BytesPerEdge)
	if err != nil {
		return nil, workloadErr(source, "graph", err)
	}
	p.ResidentGraphBytes = gb

	if err := p.planSchedule(source, w, graph, cache); err != nil {
		return nil, err
	}
	if w.HasModule() {
		tp, err := PlanTiles(w.TileRequest(p.BudgetBytes))
		if err != nil {
			return nil, workloadErr(source, "waves", err)
		}
		p.Tiles = &tp
	}
	return p, nil
}

// workloadErr wraps err as a *WorkloadError about field of source.
func workloadErr(source, field string, err error) error {
	return &WorkloadError{Source: source, Field: field, Err: err}
}

// setBudget sets the memory budget: the workload's memory_budget_bytes, or
// DefaultBudgetPercent of the device memory when the workload gives none.
func (p *WorkloadPlan) setBudget(source string, w *Workload, dev occupancy.Device) error {
	if w.MemoryBudgetBytes != nil {
		p.BudgetBytes, p.BudgetSource = *w.MemoryBudgetBytes, "workload"
		return nil
	}
	if dev.TotalMemoryBytes <= 0 {
		return fieldErr(source, "memory_budget_bytes", "set memory_budget_bytes, or use a device profile with total_memory_bytes",
			"the device profile gives no total memory to take %d%% of", DefaultBudgetPercent)
	}
	b, ok := checked.MulDiv(uint64(dev.TotalMemoryBytes), DefaultBudgetPercent, 100)
	if !ok {
		return workloadErr(source, "memory_budget_bytes", &checked.OverflowError{Field: "default memory budget bytes", Inputs: "the device's total_memory_bytes x 90%"})
	}
	p.BudgetBytes, p.BudgetSource = b, fmt.Sprintf("%d%% of device memory", DefaultBudgetPercent)
	return nil
}

// setFusionPressure sets the schedule sample and the fusion pressure: the
// workload's own, or one the homotopy scheduler derives from the sample.
func (p *WorkloadPlan) setFusionPressure(w *Workload) error {
	s := w.ScheduleSample
	p.Sample = ScheduleSample{DispatchCostNS: *s.DispatchCostNS, FrontierDensity: *s.FrontierDensity, ReadbackBytes: *s.ReadbackBytes}
	if w.FusionPressure != nil {
		p.FusionPressure, p.FusionPressureSource = *w.FusionPressure, "workload"
		return nil
	}
	out, err := ScheduleFusionPressure([]ScheduleSample{p.Sample}, p.LaunchOverheadNS, DerivedFusionSteps, DerivedFusionDt)
	if err != nil {
		return err
	}
	p.FusionPressure = out[0]
	p.FusionPressureSource = fmt.Sprintf("derived from the schedule sample by the homotopy scheduler, %d steps of dt %g", DerivedFusionSteps, DerivedFusionDt)
	return nil
}

// planSchedule plans w's dependency layers, barrier groups (through
// cache), per-producer waits and device convergence loop, and records them
// in p. Every error is a *WorkloadError naming the field to change.
func (p *WorkloadPlan) planSchedule(source string, w *Workload, graph GraphShape, cache *PlanCache) error {
	layered, err := PlanBarriers(len(w.waves), w.deps)
	if err != nil {
		return workloadErr(source, "dependencies", err)
	}
	id := PlanIdentity{GraphLayoutHash: p.GraphLayoutHash, Kind: w.kind, Device: p.Device.Key}
	fp, err := PlanFrontierExecution(cache, FrontierExecutionRequest{Identity: id, Sample: p.Sample, Graph: graph,
		BytesPerNode: *w.Graph.BytesPerNode, BytesPerEdge: *w.Graph.BytesPerEdge, Waves: w.waves, Dependencies: w.deps,
		BudgetBytes: p.BudgetBytes, LaunchOverheadNS: p.LaunchOverheadNS, FusionPressure: p.FusionPressure})
	if err != nil {
		return workloadErr(source, w.frontierErrField(err), err)
	}
	waits, err := PlanProducerWaits(len(w.waves), w.deps)
	if err != nil {
		return workloadErr(source, "dependencies", err)
	}
	iters := uint32(DefaultMaxDeviceIterations)
	if w.MaxDeviceIters != nil {
		iters = *w.MaxDeviceIters
	}
	conv, err := PlanDeviceConvergence(iters, ChangedFlagBytes, 0)
	if err != nil {
		return workloadErr(source, "max_device_iterations", err)
	}
	p.setSchedule(w, &layered, &fp, &waits)
	p.Convergence = conv
	return nil
}

// frontierErrField names the workload field a PlanFrontierExecution error
// is about: the wave of a barrier group over the budget, the budget itself,
// or the waves.
func (w *Workload) frontierErrField(err error) string {
	var gob *GroupOverBudgetError
	var ob *OverBudgetError
	switch {
	case errors.As(err, &gob) && gob.Wave >= 0:
		return fmt.Sprintf("waves[%d]", w.waveIndex(gob.Wave))
	case errors.As(err, &gob), errors.As(err, &ob):
		return "memory_budget_bytes"
	}
	return "waves"
}

// setSchedule records the wave names, the dependency layers, the frontier
// execution plan fp and the per-producer waits in p.
func (p *WorkloadPlan) setSchedule(w *Workload, layered *BarrierPlan, fp *FrontierExecutionPlan, waits *ProducerWaitPlan) {
	p.WaveNames = make([]string, len(w.waves))
	for _, wv := range w.Waves {
		p.WaveNames[*wv.ID] = wv.Name
	}
	p.Layers = layered.Groups()
	p.Groups = fp.Barriers.Groups()
	p.GlobalBarriers = fp.Barriers.GlobalBarriers
	p.Waits = make([][]int, waits.WaveCount())
	for v := range p.Waits {
		p.Waits[v] = make([]int, 0, len(waits.Waits(v)))
		for _, q := range waits.Waits(v) {
			p.Waits[v] = append(p.Waits[v], int(q))
		}
	}
	p.WaitStats = waits.Stats
	p.PeakFrontierBytes, p.PeakScratchBytes, p.PeakOutputBytes = fp.PeakFrontierBytes, fp.PeakScratchBytes, fp.PeakOutputBytes
	p.AmortizedReadbackBytes, p.MaxGroupWidth = fp.AmortizedReadbackBytes, fp.MaxGroupWidth
	p.Execution = fp.Execution
	p.Explanation = fp.Execution.Decision.StableExplanation()
}

// TileRequest returns the tile plan's input for a decoded workload with a
// module, each fused unit's bytes bounded by budget.
func (w *Workload) TileRequest(budget uint64) TileRequest {
	req := TileRequest{Waves: make([]TileWave, len(w.waves)), BudgetBytes: budget}
	for _, wv := range w.Waves {
		k, f := wv.Kernel, w.waves[*wv.ID]
		req.Waves[*wv.ID] = TileWave{Tiles: *k.Tiles, Threads: *k.Block, SharedBytes: k.SharedBytes, Prologue: k.Prologue,
			FrontierBytes: f.FrontierBytes, ScratchBytes: f.ScratchBytes, OutputBytes: f.OutputBytes}
	}
	req.Dependencies = make([]TileDependency, len(w.deps))
	for i, d := range w.deps {
		req.Dependencies[i] = TileDependency{Before: d.Before, After: d.After, Map: w.DependencyTiles(i)}
	}
	return req
}
