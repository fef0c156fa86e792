package main

import (
	"errors"
	"fmt"
	"text/tabwriter"

	"github.com/gpuplan/gpuplan/egraph"
	"github.com/gpuplan/gpuplan/internal/strictjson"
	"github.com/gpuplan/gpuplan/occupancy"
)

// egraphInput is the JSON input of `gpuplan egraph`: a snapshot plus
// optional launch limits and PTX target.
type egraphInput struct {
	Rows      []egraph.Row         `json:"rows"`
	Children  []uint32             `json:"children"`
	OpArities []uint32             `json:"op_arities"`
	Launch    *egraph.LaunchConfig `json:"launch,omitempty"`
	TargetSM  *uint32              `json:"target_sm,omitempty"`
	// MemoryBudgetBytes bounds the candidate pairs' equivalence output.
	MemoryBudgetBytes *uint64 `json:"memory_budget_bytes,omitempty"`
}

// egraphOutput is the --json output.
type egraphOutput struct {
	Upload       egraph.UploadPlan             `json:"upload"`
	Words        uint64                        `json:"words"`
	Work         []egraph.Wave                 `json:"work_waves"`
	TotalBlocks  uint64                        `json:"work_total_blocks"`
	Buckets      egraph.SignatureBucketPlan    `json:"signature_buckets"`
	Output       egraph.EquivalenceOutputPlan  `json:"equivalence_output"`
	Slab         egraph.ScratchSlab            `json:"scratch_slab"`
	Equivalences egraph.StructuralEquivalences `json:"structural_equivalences"`
	Union        egraph.UnionCompactionPlan    `json:"union_compaction"`
	TargetSM     uint32                        `json:"target_sm,omitempty"`
	PTXVersion   string                        `json:"ptx_version,omitempty"`
}

const egraphAbout = `Pack an e-graph snapshot into the single-buffer device image (nine u32
sections) and plan the equality-saturation kernels over it: the scan
waves, the equal-signature buckets and their candidate-pair waves, the
CPU reference of structural equivalence, union compaction (each e-class
maps to the smallest id of its component) and the scratch slab. This is
one saturation round: merges that only appear after rewriting children
(congruence) show up when the rewritten snapshot is planned again.

Input (JSON object, every field required unless marked optional):
  rows[]       {eclass_id, language_op_id, children_offset, children_len}
  children     child e-class ids, shared by all rows
  op_arities   arity of every op id (4294967295 = any arity)
  launch       optional {threads_per_block, max_blocks_per_launch};
               default 256 and 65535, at most 1024 and 2147483647
  target_sm    optional compute capability as major*10+minor, for the PTX
               ISA version
  memory_budget_bytes  optional bound on the candidate pairs' equivalence
               output, 8 bytes a pair (default 268435456: 32 Mi pairs); rows
               sharing one signature make n(n-1)/2 pairs, and a plan above
               the budget is refused before the pairs are compared

Example: gpuplan egraph cmd/gpuplan/testdata/egraph/snapshot.json`

func runEgraph(e *env, args []string) error {
	if len(args) > 0 && args[0] == "rebuild" {
		return runEgraphRebuild(e, args[1:])
	}
	var in egraphInput
	f, source, err := e.jsonInput("egraph", egraphAbout, args, &in)
	if err != nil {
		return err
	}
	cfg := egraph.DefaultLaunchConfig()
	if in.Launch != nil {
		cfg = *in.Launch
	}
	if err := checkEgraphLaunch(source, cfg); err != nil {
		return err
	}
	var out egraphOutput
	if in.TargetSM != nil {
		out.TargetSM = *in.TargetSM
		if out.PTXVersion, err = occupancy.PTXVersionForTarget(int(*in.TargetSM)); err != nil {
			return &strictjson.Error{Source: source, Field: "target_sm", Msg: err.Error()}
		}
	}
	img, err := egraph.PackDeviceImage(&egraph.Snapshot{Rows: in.Rows, Children: in.Children, OpArities: in.OpArities})
	if err != nil {
		return err
	}
	if out.Upload, err = egraph.PlanDeviceUploadFromImage(img); err != nil {
		return err
	}
	out.Words = uint64(len(img.Words))
	view, err := egraph.NewKernelView(0, out.Upload)
	if err != nil {
		return err
	}
	work, err := egraph.PlanKernelWork(view, cfg)
	if err != nil {
		return launchError(source, err)
	}
	out.Work, out.TotalBlocks = work.Waves, work.TotalBlocks
	if out.Buckets, err = egraph.PlanSignatureBuckets(img, view, cfg); err != nil {
		return launchError(source, err)
	}
	budget := uint64(egraph.DefaultCandidatePairBudgetBytes)
	if in.MemoryBudgetBytes != nil {
		budget = *in.MemoryBudgetBytes
	}
	if err := out.Buckets.CheckPairBudget(budget); err != nil {
		return &strictjson.Error{Source: source, Field: "rows", Msg: err.Error()}
	}
	if out.Output, err = egraph.PlanStructuralEquivalenceOutput(&out.Buckets); err != nil {
		return err
	}
	if out.Slab, err = egraph.PlanScratchSlab(&out.Buckets, out.Output); err != nil {
		return err
	}
	if out.Equivalences, err = egraph.CollectStructuralEquivalences(img, &out.Buckets); err != nil {
		return err
	}
	if out.Union, err = egraph.PlanUnionCompaction(out.Equivalences.Equivalences, cfg); err != nil {
		return launchError(source, err)
	}
	emptyToSlices(&out)
	return writePlan(e.stdout, f, out, func(tw *tabwriter.Writer) { writeEgraphText(tw, out) })
}

// launchError names the launch field for an error of the launch config
// (zero sizes, too many waves); other errors pass through.
func launchError(source string, err error) error {
	var waves *egraph.TooManyWavesError
	var zt egraph.ZeroThreadsPerBlockError
	var zb egraph.ZeroMaxBlocksPerLaunchError
	switch {
	case errors.As(err, &waves), errors.As(err, &zt), errors.As(err, &zb):
		return &strictjson.Error{Source: source, Field: "launch", Msg: err.Error()}
	}
	return err
}

// emptyToSlices makes empty lists print as [] rather than null in JSON.
func emptyToSlices(o *egraphOutput) {
	if o.Work == nil {
		o.Work = []egraph.Wave{}
	}
	if o.Buckets.Buckets == nil {
		o.Buckets.Buckets = []egraph.SignatureBucket{}
		o.Buckets.BucketRows = []uint32{}
		o.Buckets.PairWaves = []egraph.Wave{}
	}
	if o.Equivalences.Equivalences == nil {
		o.Equivalences.Equivalences = []egraph.EclassPair{}
	}
	if o.Union.UniquePairs == nil {
		o.Union.UniquePairs = []egraph.EclassPair{}
	}
	if o.Union.AffectedEclasses == nil {
		o.Union.AffectedEclasses = []uint32{}
	}
	if o.Union.CanonicalRewrites == nil {
		o.Union.CanonicalRewrites = []egraph.CanonicalRewrite{}
	}
	if o.Union.Waves == nil {
		o.Union.Waves = []egraph.Wave{}
	}
}

func writeEgraphText(tw *tabwriter.Writer, o egraphOutput) {
	l := o.Upload.Layout
	fmt.Fprintf(tw, "device image\t%d rows, %d children, %d e-classes: %d words, %d bytes\n", l.RowCount, l.ChildCount, l.GroupCount, o.Words, o.Upload.ByteLen)
	for i, s := range l.Spans {
		fmt.Fprintf(tw, "  %s\toffset %d, %d bytes\n", egraph.Section(i), s.Offset, s.ByteLen)
	}
	fmt.Fprintf(tw, "scan waves\twaves %d, blocks %d\n", len(o.Work), o.TotalBlocks)
	for _, w := range o.Work {
		fmt.Fprintf(tw, "  %s\titems [%d, %d), blocks %d x %d threads\n", w.Pass, w.FirstItem, w.FirstItem+w.ItemCount, w.Blocks, w.ThreadsPerBlock)
	}
	b := o.Buckets
	fmt.Fprintf(tw, "signature buckets\tbuckets %d, candidate pairs %d, pair waves %d, blocks %d\n", len(b.Buckets), b.CandidatePairCount, len(b.PairWaves), b.TotalBlocks)
	fmt.Fprintf(tw, "equivalence output\tup to %d pairs: %d B pairs + %d B counter; scratch slab %d B\n", o.Output.MaxEquivalences, o.Output.PairBytes, o.Output.CounterBytes, o.Slab.ByteLen)
	q := o.Equivalences
	fmt.Fprintf(tw, "structural merges\tunique e-class pairs %d (exact %d, redundant %d, rejected %d)\n", len(q.Equivalences), q.ExactPairCount, q.RedundantPairCount, q.RejectedCandidatePairCount)
	u := o.Union
	fmt.Fprintf(tw, "union compaction\trewrites %d, affected e-classes %d\n", len(u.CanonicalRewrites), len(u.AffectedEclasses))
	const show = 8
	for i, r := range u.CanonicalRewrites {
		if i == show {
			fmt.Fprintf(tw, "\t... %d more rewrites (see --json)\n", len(u.CanonicalRewrites)-show)
			break
		}
		fmt.Fprintf(tw, "  e-class %d\t-> %d\n", r.EclassID, r.Representative)
	}
	if o.PTXVersion != "" {
		fmt.Fprintf(tw, "ptx\tsm_%d: PTX ISA %s, entry %q\n", o.TargetSM, o.PTXVersion, egraph.KernelEntrySymbol)
	}
}
