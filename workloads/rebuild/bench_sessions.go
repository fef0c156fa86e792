package rebuild

import (
	"errors"
	"fmt"
	"slices"

	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/megakernel"
	"github.com/gpuplan/gpuplan/workloads/harness"
)

// checkBenchArms refuses a benchmark configuration's arms when there are none,
// when one is unknown or when one is listed twice.
func checkBenchArms(name string, arms []Arm) error {
	if len(arms) == 0 {
		return fmt.Errorf("rebuild bench of %s: BenchConfig.Arms is empty. Fix: name at least one arm, or leave it nil for DefaultArms", name)
	}
	for i, a := range arms {
		if _, err := ParseArm(string(a)); err != nil {
			return fmt.Errorf("rebuild bench of %s: BenchConfig.Arms: %w", name, err)
		}
		if slices.Contains(arms[:i], a) {
			return fmt.Errorf("rebuild bench of %s: BenchConfig.Arms lists %s twice. Fix: list each arm once", name, a)
		}
	}
	return nil
}

// openSessions opens the sessions the arms run on, side by side on x, so
// that their samples interleave: the full rounds' (Config.Incremental off)
// when a full-round arm is measured, then the incremental rounds'
// (Config.Incremental on: the same buffers and the incremental ones) when
// an incremental arm is. Each uploads its own copy of the e-graph. The
// second is planned against the memory the first leaves (incBudget), so
// that its memory plan refuses it, before anything of it is allocated,
// when the two do not fit together.
func (b *bench) openSessions(x *executor.Executor) error {
	cfg := b.cfg.Session
	cfg.Incremental = false
	var err error
	if slices.ContainsFunc(b.cfg.Arms, func(a Arm) bool { return !a.IsIncremental() }) {
		if b.full, err = NewSession(x, b.g, b.name, cfg); err != nil {
			return err
		}
		b.res.Plans = b.full.Plans()
	}
	if !slices.ContainsFunc(b.cfg.Arms, Arm.IsIncremental) {
		return nil
	}
	return b.openIncremental(x, cfg)
}

// openIncremental opens the incremental rounds' session beside the full
// rounds' one, if that is open.
func (b *bench) openIncremental(x *executor.Executor, cfg Config) error {
	cfg.Incremental = true
	resident := x.ResidentBytes()
	if b.full != nil {
		var err error
		if cfg.MaxResidentBytes, err = incBudget(x, cfg.MaxResidentBytes); err != nil {
			return err
		}
	}
	s, err := NewSession(x, b.g, b.name, cfg)
	var over *megakernel.OverBudgetError
	if b.full != nil && errors.As(err, &over) {
		return fmt.Errorf("the incremental rounds' session of %s beside the full rounds' one (%d bytes resident): %w; or measure the incremental arms and the full-round arms in runs of their own (BenchConfig.Arms, --arms)", b.name, resident, err)
	}
	if err != nil {
		return err
	}
	b.inc = s
	if b.full == nil {
		b.res.Plans = s.Plans()
		return nil
	}
	p := s.Plans()
	b.res.IncrementalPlans = &p
	b.cfg.Log("sessions: the full rounds' holds %d bytes, the incremental rounds' %d beside it", b.full.Plans().Memory.RequiredBytes, p.Memory.RequiredBytes)
	return nil
}

// incBudget is the memory budget of a session opened beside resident
// ones: the live budget less the bytes already resident (what the
// executor would still allocate), capped at limit when limit is not 0,
// and at least 1 (0 would mean no cap).
func incBudget(x *executor.Executor, limit uint64) (uint64, error) {
	budget, err := harness.Budget(x, 0)
	if err != nil {
		return 0, err
	}
	left := budget - min(budget, x.ResidentBytes())
	if limit != 0 {
		left = min(left, limit)
	}
	return max(left, 1), nil
}

// closeSessions frees the sessions' buffers.
func (b *bench) closeSessions() {
	for _, s := range b.sessions() {
		_ = s.Close()
	}
}

// sessions returns the open sessions, the full rounds' first.
func (b *bench) sessions() []*Session {
	var out []*Session
	for _, s := range []*Session{b.full, b.inc} {
		if s != nil {
			out = append(out, s)
		}
	}
	return out
}

// session returns the session an arm runs on.
func (b *bench) session(a Arm) *Session {
	if a.IsIncremental() {
		return b.inc
	}
	return b.full
}
