package wavedag

import (
	"fmt"
	"strings"
	"time"

	"github.com/gpuplan/gpuplan/executor"
)

// WaitRecord is one block's wait at the moment the watchdog gave up: tile
// Tile of wave Wave waited on Producer's completion counter (Kind
// DiagCounter: Observed of Target, which is epoch x tiles), on the done
// flag of Producer's tile ProducerTile (DiagFlag: the flag holds the epoch
// of the run that finished it), or at the grid barrier after group
// ProducerTile (DiagBarrier: Observed blocks of Target arrived).
type WaitRecord struct {
	Wave         int    `json:"wave"`
	Tile         uint64 `json:"tile"`
	Kind         int    `json:"kind"`
	Producer     uint64 `json:"producer"`
	ProducerTile uint64 `json:"producer_tile"`
	Observed     uint64 `json:"observed"`
	Target       uint64 `json:"target"`
	WaitedNs     uint64 `json:"waited_ns"`
}

// MaxRecordsShown is the most wait records a WatchdogError's message
// lists.
const MaxRecordsShown = 8

// WatchdogError is a persistent run that stopped making progress: a block
// waited longer than the watchdog's budget, and every block then recorded
// what it was waiting for and left. The run's state was reset, so the
// session can run again.
type WatchdogError struct {
	Arm     Arm
	Program *Program
	Budget  time.Duration
	// Found is the records the blocks wrote (Records holds at most
	// diagMax of them).
	Found   uint64
	Records []WaitRecord
}

// Describe renders one record with the waves' names.
func (e *WatchdogError) Describe(r WaitRecord) string {
	label := func(v uint64) string {
		if v < uint64(e.Program.Waves()) {
			return e.Program.WaveLabel(int(v))
		}
		return fmt.Sprintf("wave %d", v)
	}
	who := fmt.Sprintf("%s tile %d", label(uint64(r.Wave)), r.Tile)
	switch r.Kind {
	case DiagBarrier:
		return fmt.Sprintf("a block at the grid barrier after group %d (%d of %d blocks arrived)", r.ProducerTile, r.Observed, r.Target)
	case DiagFlag:
		return fmt.Sprintf("%s waits on %s's tile %d (its done flag holds run %d, this is run %d)", who, label(r.Producer), r.ProducerTile, r.Observed, r.Target)
	}
	tiles := uint64(1)
	if r.Producer < uint64(e.Program.Waves()) {
		tiles = *e.Program.wave(int(r.Producer)).Kernel.Tiles
	}
	// The counter is cumulative over runs: this run started at target -
	// tiles.
	var done uint64
	if base := r.Target - min(tiles, r.Target); r.Observed > base {
		done = r.Observed - base
	}
	return fmt.Sprintf("%s waits on %s's counter (%d of its %d tiles done in this run)", who, label(r.Producer), done, tiles)
}

// Error lists the waits and ends with a "Fix:" sentence.
func (e *WatchdogError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "arm %s of %s stopped making progress: a block waited more than the watchdog's %s, and %d blocks were waiting", e.Arm, e.Program.Name(), e.Budget, e.Found)
	for i, r := range e.Records {
		if i == MaxRecordsShown {
			fmt.Fprintf(&b, "; ... %d more", len(e.Records)-i)
			break
		}
		b.WriteString("; " + e.Describe(r))
	}
	b.WriteString(". Fix: a producer never finished: check that every wave function returns and does not wait on a tile of its own wave, and the dependencies' tile maps; raise --watchdog if a wave legitimately runs longer (the run was aborted and its state reset)")
	return b.String()
}

// HangError is a run the host stopped waiting for: a wave function that
// does not return. The device context cannot be recovered.
type HangError struct {
	Arm     Arm
	Program string
	Timeout time.Duration
}

// Error says so and ends with a "Fix:" sentence.
func (e *HangError) Error() string {
	return fmt.Sprintf("arm %s of %s did not finish within %s: a wave function does not return, so the device context cannot be recovered and this process must exit. Fix: find the wave with `gpuplan run --arms streams` and compute-sanitizer, or raise --watchdog if it legitimately runs that long",
		e.Arm, e.Program, e.Timeout)
}

// FaultError is a kernel fault (an illegal address, say) in an arm. The
// device context is lost: the session, its executor and every buffer on
// it can no longer be used, and after a sticky fault the process cannot
// use CUDA again (IsolateFault runs in a new process).
type FaultError struct {
	Arm     Arm
	Program string
	Err     error
	// Wave is the faulting wave when a run wave by wave found it (-1:
	// unknown).
	Wave      int
	WaveLabel string
}

// Error names the arm (and the wave once known) and ends with a "Fix:"
// sentence.
func (e *FaultError) Error() string {
	at := ""
	if e.WaveLabel != "" {
		at = " in " + e.WaveLabel + " (found by running the waves one at a time in a new process)"
	}
	return fmt.Sprintf("a kernel faulted in arm %s of %s%s: %v; the device context is lost, so nothing more can run in it. Fix: check the wave's buffer arguments, offsets and bytes against what its function touches (compute-sanitizer --tool memcheck names the access)",
		e.Arm, e.Program, at, e.Err)
}

// Unwrap returns the driver's error.
func (e *FaultError) Unwrap() error { return e.Err }

// IsolateFault finds the wave that faults: on x, it opens p and runs its
// waves one at a time in Kahn order, each launch waited for, until one
// fails. It returns that wave, or -1 when none does.
//
// x must belong to a process that has not faulted: after a sticky fault
// (an illegal address) the process cannot use CUDA again, not even in a
// fresh context of its own (measured on an H200 with driver 580, cuCtxCreate
// then fails with CUresult 700 or 715, as the CUDA documentation says of
// CUDA_ERROR_ILLEGAL_ADDRESS). Run it in a new process: gpuplan run does,
// with "gpuplan run --find-fault".
func IsolateFault(x *executor.Executor, p *Program, opts Options) (int, error) {
	s, err := Open(x, p, opts)
	if err != nil {
		return -1, err
	}
	defer s.Close()
	st, err := x.NewStream()
	if err != nil {
		return -1, err
	}
	defer st.Close()
	for _, layer := range p.Plan.Layers {
		for _, v := range layer {
			cfg, args := s.launchArgs(v)
			err := st.Launch(s.wrappers[v], cfg, args...)
			if err == nil {
				err = st.Synchronize()
			}
			if err != nil {
				s.lost = err
				return v, nil
			}
		}
	}
	return -1, nil
}
