package partbfs

import (
	"fmt"
	"slices"
	"time"

	"github.com/gpuplan/gpuplan/frontier"
	"github.com/gpuplan/gpuplan/partition"
	"github.com/gpuplan/gpuplan/workloads/bfs"
	"github.com/gpuplan/gpuplan/workloads/harness"
)

// DefaultSamples is the timed samples of a benchmark run.
const DefaultSamples = harness.DefaultSamples

// BenchConfig is one run of the benchmark protocol.
type BenchConfig struct {
	// Session configures the session.
	Session Config
	// Samples is the timed samples (0: DefaultSamples); a sample is one
	// traversal from every root.
	Samples int
	// Reporting is the run's progress and log.
	harness.Reporting
}

// StepSummary is one level step of one root: the planner's predicted
// exchange against the measured one, and its median exchange time.
type StepSummary struct {
	Root       int32  `json:"root"`
	Level      uint64 `json:"level"`
	Direction  string `json:"direction"`
	Collective string `json:"collective"`
	// QueuePairs and BitmapPairs are the measured step's pair forms.
	QueuePairs  uint64 `json:"queue_pairs"`
	BitmapPairs uint64 `json:"bitmap_pairs"`
	// PredictedBytes is partition.PredictExchange's; MeasuredBytes
	// what the transport moved (the same in every sample).
	PredictedBytes uint64 `json:"predicted_bytes"`
	MeasuredBytes  uint64 `json:"measured_bytes"`
	// MedianExchangeNs and MedianStepNs are medians over the samples.
	MedianExchangeNs float64 `json:"median_exchange_ns"`
	MedianStepNs     float64 `json:"median_step_ns"`
}

// Summary condenses a benchmark run.
type Summary struct {
	Workload    string         `json:"workload"`
	Nodes       int            `json:"nodes"`
	Edges       uint64         `json:"edges"`
	Roots       []bfs.RootStat `json:"roots"`
	TotalLevels uint64         `json:"total_levels"`
	Samples     int            `json:"samples"`
	Device      string         `json:"device"`
	// Devices is the part count; Simulated is true when they share one
	// device.
	Devices   int  `json:"devices"`
	Simulated bool `json:"simulated"`
	// Processes is true when every device ran in a process of its own
	// (BenchRank); the times are then rank 0's.
	Processes bool   `json:"processes,omitempty"`
	Arm       string `json:"arm"`
	// MedianSampleNs is the median of one sample (every root);
	// MedianRootNs the median over roots of each root's median; LevelNs
	// the sample median over every root's levels.
	MedianSampleNs float64 `json:"median_sample_ns"`
	MedianRootNs   float64 `json:"median_root_ns"`
	LevelNs        float64 `json:"per_level_ns"`
	// GTEPS is the harmonic mean over roots of traversed edges over the
	// root's median time, in 10^9 edges per second.
	GTEPS float64 `json:"gteps_hmean"`
	// ExchangeBytes and PredictedBytes are one sample's measured and
	// predicted exchange; MedianExchangeNs its median exchange time and
	// ExchangeShare that over the median sample.
	ExchangeBytes    uint64  `json:"exchange_bytes"`
	PredictedBytes   uint64  `json:"predicted_bytes"`
	MedianExchangeNs float64 `json:"median_exchange_ns"`
	ExchangeShare    float64 `json:"exchange_share"`
	// MaxStepDeviation is the largest |measured - predicted| / predicted
	// over the steps (0 when every step matched).
	MaxStepDeviation float64  `json:"max_step_deviation"`
	Notes            []string `json:"notes,omitempty"`
}

// BenchResult is everything one benchmark run measured and planned.
type BenchResult struct {
	Summary Summary `json:"summary"`
	// Samples are the traversal arm's samples, then the exchange arm's
	// (its bytes moved set).
	Samples           []harness.Sample `json:"-"`
	ReferenceChecksum string           `json:"reference_checksum"`
	Plan              partition.Plan   `json:"plan"`
	Steps             []StepSummary    `json:"steps"`
}

// ArmNames returns the evidence arms of a run over parts devices: the
// traversal ("partitioned-pN", or "simulated-pN" on one device) and its
// exchange ("exchange-pN", "simulated-exchange-pN").
func ArmNames(parts int, simulated bool) (traversal, exchange string) {
	if simulated {
		return fmt.Sprintf("simulated-p%d", parts), fmt.Sprintf("simulated-exchange-p%d", parts)
	}
	return fmt.Sprintf("partitioned-p%d", parts), fmt.Sprintf("exchange-p%d", parts)
}

// ProcessArmNames returns the evidence arms of a run over parts devices
// with one process per device (BenchRank): the traversal
// ("process-per-gpu-pN") and its exchange ("process-per-gpu-exchange-pN").
func ProcessArmNames(parts int) (traversal, exchange string) {
	return fmt.Sprintf("process-per-gpu-p%d", parts), fmt.Sprintf("process-per-gpu-exchange-p%d", parts)
}

// traverser is what the benchmark protocol traverses with: a Session over
// every part, or one rank's RankSession.
type traverser interface {
	Plan() partition.Plan
	Config() Config
	// checkedRun runs from root and holds the levels against the
	// reference ref, outside the run's timed region. The run's exchange
	// bytes are every part's (each step's too when steps is set).
	checkedRun(root int32, ref []int32, steps bool) (Run, error)
}

// bench is the state of one run.
type bench struct {
	cfg   BenchConfig
	s     traverser
	g     *frontier.CSR
	roots []int32
	stats []bfs.RootStat
	refs  [][]int32
	preds []partition.ExchangePrediction
	res   *BenchResult
	// trav and exch are the arms; device describes the devices.
	trav, exch, device string
	// times[i][k] are root i's step k's exchange and step times, over
	// the samples; rootWall[i] root i's wall times.
	exchangeNs, stepNs [][][]float64
	rootWall           [][]float64
}

// Bench runs the benchmark protocol on g from roots over the devices: the
// CPU reference of every root and the planner's predicted exchange; a
// session; every root once, untimed, its levels checked against the
// reference; then Samples timed samples, each traversal's levels checked
// again outside the timed region. Every step's measured exchange is held
// against the prediction.
func Bench(devs *Devices, g *frontier.CSR, roots []int32, cfg BenchConfig) (*BenchResult, error) {
	b, err := newBench(g, roots, cfg)
	if err != nil {
		return nil, err
	}
	s, err := NewSession(devs, g, b.cfg.Session)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	parts := len(devs.Executors)
	dev := devs.Executors[0].Device()
	b.trav, b.exch = ArmNames(parts, devs.Simulated)
	b.device = fmt.Sprintf("%dx %s (cc %d.%d)", parts, dev.Name, dev.Major, dev.Minor)
	if devs.Simulated {
		b.device = fmt.Sprintf("%s (cc %d.%d), %d parts simulated on it", dev.Name, dev.Major, dev.Minor, parts)
	}
	b.res.Summary.Simulated = devs.Simulated
	return b.protocol(s)
}

// newBench checks the roots and computes every root's CPU reference.
func newBench(g *frontier.CSR, roots []int32, cfg BenchConfig) (*bench, error) {
	if len(roots) == 0 {
		return nil, fmt.Errorf("partitioned benchmark of %s has no roots. Fix: pass at least one root", g.Name)
	}
	harness.Fill(&cfg.Samples, DefaultSamples)
	cfg.Log = harness.LogOr(cfg.Log)
	b := &bench{cfg: cfg, g: g, roots: roots, res: &BenchResult{}}
	t0 := time.Now()
	var err error
	if b.stats, b.refs, err = bfs.Reference(g, roots); err != nil {
		return nil, err
	}
	cfg.Log("CPU reference BFS from %d roots (%s)", len(roots), time.Since(t0).Round(time.Millisecond))
	return b, nil
}

// protocol runs the prediction, the warm-up and the samples on s, and
// summarizes them.
func (b *bench) protocol(s traverser) (*BenchResult, error) {
	b.s = s
	b.res.Plan = s.Plan()
	for _, step := range []func() error{b.predict, b.warmUp, b.measure} {
		if err := step(); err != nil {
			return nil, err
		}
	}
	b.summarize()
	return b.res, nil
}

// predict computes every root's predicted exchange.
func (b *bench) predict() error {
	for i, r := range b.roots {
		p, err := partition.PredictExchange(b.res.Plan, partition.Traversal{Offsets: b.g.Offsets, Targets: b.g.Targets,
			Levels: b.refs[i], Root: r, Params: b.s.Config().Direction})
		if err != nil {
			return err
		}
		b.preds = append(b.preds, p)
	}
	return nil
}

// runChecked runs one traversal from roots[i] and checks its levels, and
// its levels and steps against the reference's and the prediction's,
// outside the run's timed region; with steps set the steps' exchange
// bytes are every part's.
func (b *bench) runChecked(i int, steps bool) (Run, error) {
	r, err := b.s.checkedRun(b.roots[i], b.refs[i], steps)
	if err != nil {
		return r, err
	}
	if r.Levels != b.stats[i].Levels || len(r.Steps) != len(b.preds[i].Levels) {
		return r, fmt.Errorf("partitioned BFS from root %d: %d levels in %d steps, the reference %d levels and the prediction %d steps. Fix: this is a bug in the step loop", b.roots[i], r.Levels, len(r.Steps), b.stats[i].Levels, len(b.preds[i].Levels))
	}
	return r, nil
}

// checkedRun runs from root and holds the levels against ref.
func (s *Session) checkedRun(root int32, ref []int32, _ bool) (Run, error) {
	run := func() (Run, error) { return s.Run(root) }
	levels := func(Run) ([]int32, error) { return s.Levels() }
	return harness.Checked(run, levels, func(_ Run, lv []int32) error {
		if !slices.Equal(lv, ref) {
			return fmt.Errorf("partitioned BFS from root %d: the levels differ from the CPU reference (%v). Fix: this is a kernel or exchange bug; rerun with the one-device simulation to isolate it", root, frontier.Validate(s.g, root, lv))
		}
		return nil
	})
}

// warmUp runs every root once and records each step's exchange.
func (b *bench) warmUp() error {
	t0 := time.Now()
	for i := range b.roots {
		r, err := b.runChecked(i, true)
		if err != nil {
			return err
		}
		for k, st := range r.Steps {
			p := b.preds[i].Levels[k]
			b.res.Steps = append(b.res.Steps, StepSummary{Root: b.roots[i], Level: st.Exchange.Decision.Level,
				Direction: st.Exchange.Decision.Direction.String(), Collective: st.Exchange.Collective.String(),
				QueuePairs: st.Exchange.QueuePairs, BitmapPairs: st.Exchange.BitmapPairs, PredictedBytes: p.Bytes, MeasuredBytes: st.MeasuredBytes})
		}
	}
	b.cfg.Log("correctness: %d roots give levels identical to the CPU reference over %d parts (%s)", len(b.roots), len(b.res.Plan.Parts), time.Since(t0).Round(time.Millisecond))
	return nil
}

// measure takes the timed samples.
func (b *bench) measure() error {
	trav, exch := b.trav, b.exch
	b.exchangeNs, b.stepNs, b.rootWall = make([][][]float64, len(b.roots)), make([][][]float64, len(b.roots)), make([][]float64, len(b.roots))
	for i := range b.roots {
		b.exchangeNs[i], b.stepNs[i] = make([][]float64, len(b.preds[i].Levels)), make([][]float64, len(b.preds[i].Levels))
	}
	var rows, xrows []harness.Sample
	err := harness.Interleave(b.g.Name, []string{trav}, b.cfg.Samples, b.cfg.Progress, func(smp, _ int) error {
		row, xrow, err := b.sample(uint64(smp), trav, exch)
		rows, xrows = append(rows, row), append(xrows, xrow)
		return err
	})
	if err != nil {
		return err
	}
	b.res.Samples = append(rows, xrows...)
	return nil
}

// sample is one traversal from every root.
func (b *bench) sample(index uint64, trav, exch string) (harness.Sample, harness.Sample, error) {
	row := harness.Sample{Arm: trav, Index: index}
	xrow := harness.Sample{Arm: exch, Index: index, Checksum: "exchange"}
	sums := make([]uint64, len(b.roots))
	for i := range b.roots {
		r, err := b.runChecked(i, false)
		if err != nil {
			return row, xrow, err
		}
		sums[i] = b.stats[i].Checksum
		row.WallNs += float64(r.WallNs)
		xrow.WallNs += float64(r.ExchangeNs)
		xrow.BytesMoved += r.ExchangeBytes
		b.rootWall[i] = append(b.rootWall[i], float64(r.WallNs))
		for k, st := range r.Steps {
			b.exchangeNs[i][k] = append(b.exchangeNs[i][k], float64(st.ExchangeNs))
			b.stepNs[i][k] = append(b.stepNs[i][k], float64(st.StepNs))
		}
	}
	row.Checksum = bfs.CombinedChecksum(sums)
	return row, xrow, nil
}
