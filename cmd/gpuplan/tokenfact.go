package main

import (
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/gpuplan/gpuplan/frontier"
	"github.com/gpuplan/gpuplan/internal/strictjson"
	"github.com/gpuplan/gpuplan/megakernel"
)

// tokenfactInput is the JSON input of `gpuplan tokenfact`.
type tokenfactInput struct {
	Graph            tokenfactGraphInput    `json:"graph"`
	Frontier         tokenfactFrontierInput `json:"frontier"`
	Device           megakernel.DeviceKey   `json:"device"`
	AnalysisKind     string                 `json:"analysis_kind"`
	GraphLayoutHash  uint64                 `json:"graph_layout_hash"`
	Sample           tokenfactSampleInput   `json:"sample"`
	BudgetBytes      uint64                 `json:"budget_bytes"`
	LaunchOverheadNS float64                `json:"launch_overhead_ns"`
	FusionPressure   float64                `json:"fusion_pressure"`
	GraphReuse       *frontier.GraphReuse   `json:"graph_reuse,omitempty"`
	QueueSizing      *frontier.QueueSizing  `json:"queue_sizing,omitempty"`
}

type tokenfactGraphInput struct {
	Nodes           []frontier.TokenFactNode `json:"nodes"`
	Edges           []frontier.TokenFactEdge `json:"edges"`
	PayloadBytes    uint32                   `json:"payload_bytes"`
	NodeRecordBytes uint64                   `json:"node_record_bytes"`
	EdgeRecordBytes uint64                   `json:"edge_record_bytes"`
}

type tokenfactFrontierInput struct {
	Nodes                []frontier.IRNode       `json:"nodes"`
	Dependencies         []frontier.IRDependency `json:"dependencies"`
	FrontierBytesPerItem uint64                  `json:"frontier_bytes_per_item"`
	ScratchBytesPerItem  uint64                  `json:"scratch_bytes_per_item"`
	OutputBytesPerWave   uint64                  `json:"output_bytes_per_wave"`
}

type tokenfactSampleInput struct {
	DispatchCostNS  float64 `json:"dispatch_cost_ns"`
	FrontierDensity float64 `json:"frontier_density"`
	ReadbackBytes   uint64  `json:"readback_bytes"`
}

// tokenfactOutput is the --json output: the graph layout, the frontier IR
// waves and the execution envelope, all in snake_case.
type tokenfactOutput struct {
	Layout   frontier.TokenFactGraphLayout `json:"layout"`
	IRWaves  []frontier.FrontierWave       `json:"frontier_ir_waves"`
	CUDA     frontier.CudaFrontierInput    `json:"cuda_frontier"`
	Frontier tokenfactFrontierOutput       `json:"frontier_plan"`
	Queue    any                           `json:"work_queue"`
	Envelope tokenfactEnvelopeOutput       `json:"envelope"`
}

type tokenfactFrontierOutput struct {
	Topology               megakernel.Topology         `json:"topology"`
	Decision               megakernel.TopologyDecision `json:"decision"`
	Memory                 megakernel.MemoryPlan       `json:"memory"`
	DowngradedToSparse     bool                        `json:"downgraded_to_sparse"`
	GlobalBarriers         int                         `json:"global_barriers"`
	Groups                 [][]int                     `json:"groups"`
	Layers                 int                         `json:"layers"`
	PeakFrontierBytes      uint64                      `json:"peak_frontier_bytes"`
	PeakScratchBytes       uint64                      `json:"peak_scratch_bytes"`
	PeakOutputBytes        uint64                      `json:"peak_output_bytes"`
	AmortizedReadbackBytes uint64                      `json:"amortized_readback_bytes"`
	MaxGroupWidth          int                         `json:"max_group_width"`
}

type tokenfactEnvelopeOutput struct {
	QueueSizing             frontier.QueueSizing `json:"queue_sizing"`
	TotalActiveItems        uint64               `json:"total_active_items"`
	ExpansionItems          uint64               `json:"expansion_items"`
	ResidentPayloadBytes    uint64               `json:"resident_payload_bytes"`
	ResidentWorkQueueBytes  uint64               `json:"resident_work_queue_bytes"`
	TotalRequiredBytes      uint64               `json:"total_required_bytes"`
	BudgetBytes             uint64               `json:"budget_bytes"`
	GraphReuse              frontier.GraphReuse  `json:"graph_reuse"`
	ResidentGraphBytes      uint64               `json:"resident_graph_bytes"`
	GraphUploadBytes        uint64               `json:"graph_upload_bytes"`
	AvoidedGraphUploadBytes uint64               `json:"avoided_graph_upload_bytes"`
	TotalResidentBytes      uint64               `json:"total_resident_bytes"`
}

const tokenfactAbout = `Plan a frontier run over a device-resident token/fact graph (vyre
token_fact_frontier_execution): build the token/fact CSR and its byte
envelope, layer the frontier-typed IR into waves (Kahn layers sorted by
domain parser < semantic < dataflow < diagnostic, then id), size the
device work queue, and plan the megakernel (barriers, memory split,
topology) within what the payload and queue leave of the budget.

Input (JSON object, every field required unless marked optional):
  graph.nodes[]        {id, kind, payload_offset, payload_len}; kind is token,
                       macro_expansion, semantic, fact or diagnostic
  graph.edges[]        {from, to, kind}; kind is token_flow, macro_expansion,
                       semantic_fact, fact_dependency or diagnostic_provenance
  graph.payload_bytes  length of the payload arena (bytes)
  graph.node_record_bytes, graph.edge_record_bytes   device record widths
  frontier.nodes[]     {id, domain, active_items}; domain is parser,
                       semantic, dataflow or diagnostic
  frontier.dependencies[]   {before, after} node ids
  frontier.frontier_bytes_per_item, frontier.scratch_bytes_per_item,
  frontier.output_bytes_per_wave
  device               {sm_major, sm_minor, warp_size, supports_grid_sync,
                        supports_tensor_cores, max_workgroup_size}
  analysis_kind        dataflow, ifds, reaching_definitions, liveness,
                       points_to, parser_frontend or custom:<integer>
  graph_layout_hash    plan-cache identity of the graph layout
  sample               {dispatch_cost_ns > 0, frontier_density in [0,1],
                        readback_bytes}
  budget_bytes, launch_overhead_ns (>= 0), fusion_pressure (in [0,1])
  graph_reuse          optional: cold_upload (default) or warm_resident
  queue_sizing         optional: release (vyre 0.6.1, default) or
                       expansion_headroom (post-0.6.1: queue room for
                       frontier expansion from the out-degree profile)

Example: gpuplan tokenfact cmd/gpuplan/testdata/tokenfact/chain.json`

func runTokenfact(e *env, args []string) error {
	var in tokenfactInput
	f, source, err := e.jsonInput("tokenfact", tokenfactAbout, args, &in)
	if err != nil {
		return err
	}
	req, err := tokenfactCheck(source, &in)
	if err != nil {
		return err
	}
	g, err := frontier.BuildTokenFactGraph(in.Graph.Nodes, in.Graph.Edges, in.Graph.PayloadBytes)
	if err != nil {
		return fmt.Errorf("graph: %w", err)
	}
	layout, err := frontier.AdaptTokenFactGraphLayout(g, in.Graph.NodeRecordBytes, in.Graph.EdgeRecordBytes)
	if err != nil {
		return fmt.Errorf("graph: %w", err)
	}
	ir, err := frontier.PlanFrontierTypedIR(in.Frontier.Nodes, in.Frontier.Dependencies)
	if err != nil {
		return fmt.Errorf("frontier: %w", err)
	}
	cuda, err := frontier.AdaptFrontierTypedIRToCUDA(ir, in.Frontier.FrontierBytesPerItem, in.Frontier.ScratchBytesPerItem, in.Frontier.OutputBytesPerWave)
	if err != nil {
		return fmt.Errorf("frontier: %w", err)
	}
	req.Layout, req.Frontier = layout, cuda
	reuse := frontier.ColdUpload
	if in.GraphReuse != nil {
		reuse = *in.GraphReuse
	}
	env, err := frontier.PlanTokenFactFrontierExecutionEnvelope(nil, req, reuse)
	if err != nil {
		return err
	}
	p := env.Plan
	fp := p.Frontier
	out := tokenfactOutput{
		Layout: layout, IRWaves: ir.Waves, CUDA: cuda, Queue: p.WorkQueue,
		Frontier: tokenfactFrontierOutput{
			Topology: fp.Execution.Topology, Decision: fp.Execution.Decision, Memory: fp.Execution.Memory,
			DowngradedToSparse: fp.Execution.DowngradedToSparse, GlobalBarriers: fp.Barriers.GlobalBarriers,
			Groups: fp.Barriers.Groups(), Layers: fp.Layers, PeakFrontierBytes: fp.PeakFrontierBytes,
			PeakScratchBytes: fp.PeakScratchBytes, PeakOutputBytes: fp.PeakOutputBytes,
			AmortizedReadbackBytes: fp.AmortizedReadbackBytes, MaxGroupWidth: fp.MaxGroupWidth,
		},
		Envelope: tokenfactEnvelopeOutput{
			QueueSizing: p.QueueSizing, TotalActiveItems: p.TotalActiveItems, ExpansionItems: p.ExpansionItems,
			ResidentPayloadBytes: p.ResidentPayloadBytes, ResidentWorkQueueBytes: p.ResidentWorkQueueBytes,
			TotalRequiredBytes: p.TotalRequiredBytes, BudgetBytes: in.BudgetBytes, GraphReuse: env.GraphReuse,
			ResidentGraphBytes: env.ResidentGraphBytes, GraphUploadBytes: env.GraphUploadBytes,
			AvoidedGraphUploadBytes: env.AvoidedGraphUploadBytes, TotalResidentBytes: env.TotalResidentBytes,
		},
	}
	if out.Frontier.Groups == nil {
		out.Frontier.Groups = [][]int{}
	}
	return writePlan(e.stdout, f, out, func(tw *tabwriter.Writer) { writeTokenfactText(tw, g, out) })
}

// tokenfactCheck validates the scalar inputs and builds the request.
func tokenfactCheck(source string, in *tokenfactInput) (frontier.TokenFactExecutionRequest, error) {
	kind, err := megakernel.ParseAnalysisKind(in.AnalysisKind)
	if err != nil {
		return frontier.TokenFactExecutionRequest{}, &strictjson.Error{Source: source, Field: "analysis_kind", Msg: err.Error()}
	}
	s := in.Sample
	req := frontier.TokenFactExecutionRequest{
		Identity:    megakernel.PlanIdentity{GraphLayoutHash: in.GraphLayoutHash, Kind: kind, Device: in.Device},
		Sample:      megakernel.ScheduleSample{DispatchCostNS: s.DispatchCostNS, FrontierDensity: s.FrontierDensity, ReadbackBytes: s.ReadbackBytes},
		BudgetBytes: in.BudgetBytes, LaunchOverheadNS: in.LaunchOverheadNS, FusionPressure: in.FusionPressure,
	}
	// The planner checks the float inputs too; checking them here reports
	// them before the graph is built, as input errors of this file.
	if err := req.CheckFloatInputs(); err != nil {
		var fe *frontier.InvalidFloatError
		if errors.As(err, &fe) {
			err = &strictjson.Error{Source: source, Field: fe.Field, Msg: fmt.Sprintf("%v is not %s", fe.Value, fe.Want), Fix: fe.Fix}
		}
		return frontier.TokenFactExecutionRequest{}, err
	}
	if in.QueueSizing != nil {
		req.QueueSizing = *in.QueueSizing
	}
	return req, nil
}

func writeTokenfactText(tw *tabwriter.Writer, g *frontier.TokenFactGraph, out tokenfactOutput) {
	l, fp, ev := out.Layout, out.Frontier, out.Envelope
	fmt.Fprintf(tw, "token/fact graph\t%d nodes (token %d, fact %d), %d edges, max out-degree %d\n",
		l.GraphShape.NodeCount, g.TokenCount, g.FactCount, l.GraphShape.EdgeCount, l.MaxOutDegree)
	fmt.Fprintf(tw, "graph layout\tnodes %d B + edges %d B + payload %d B = %d B resident\n", l.NodeBytes, l.EdgeBytes, l.PayloadBytes, l.ResidentBytes)
	fmt.Fprintf(tw, "frontier IR\t%d waves, %d active items\n", len(out.IRWaves), ev.TotalActiveItems)
	const show = 8
	for i, w := range out.IRWaves {
		if i == show {
			fmt.Fprintf(tw, "\t... %d more waves (see --json)\n", len(out.IRWaves)-show)
			break
		}
		doms := make([]string, len(w.Domains))
		for k, d := range w.Domains {
			doms[k] = d.String()
		}
		c := out.CUDA.Waves[i]
		fmt.Fprintf(tw, "  wave %d\t%s nodes [%s], %d items; frontier %d B, scratch %d B, output %d B\n",
			w.Index, strings.Join(doms, "+"), joinUints(w.NodeIDs), w.ActiveItems, c.FrontierBytes, c.ScratchBytes, c.OutputBytes)
	}
	fmt.Fprintf(tw, "barriers\t%d global barriers over %d groups, max group width %d\n", fp.GlobalBarriers, len(fp.Groups), fp.MaxGroupWidth)
	down := ""
	if fp.DowngradedToSparse {
		down = ", downgraded to SparseFrontier"
	}
	fmt.Fprintf(tw, "topology\t%s (%s)%s\n", fp.Topology, fp.Decision.Reason(), down)
	fmt.Fprintf(tw, "frontier memory\t%d B of %d B scheduler budget (graph %d, frontier %d, scratch %d, output %d)\n",
		fp.Memory.RequiredBytes, fp.Memory.BudgetBytes, fp.Memory.GraphBytes, fp.Memory.FrontierBytes, fp.Memory.ScratchBytes, fp.Memory.OutputBytes)
	fmt.Fprintf(tw, "work queue\t%s sizing, %d B resident (%d expansion items), final-only host sync\n", ev.QueueSizing, ev.ResidentWorkQueueBytes, ev.ExpansionItems)
	fmt.Fprintf(tw, "payload\t%d B\n", ev.ResidentPayloadBytes)
	fmt.Fprintf(tw, "total required\t%d B of %d B budget\n", ev.TotalRequiredBytes, ev.BudgetBytes)
	fmt.Fprintf(tw, "graph reuse\t%s: upload %d B, avoided %d B\n", ev.GraphReuse, ev.GraphUploadBytes, ev.AvoidedGraphUploadBytes)
}
