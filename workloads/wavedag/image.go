package wavedag

import (
	"encoding/binary"
	"fmt"

	"github.com/gpuplan/gpuplan/internal/checked"
	"github.com/gpuplan/gpuplan/megakernel"
	"github.com/gpuplan/gpuplan/planners"
)

// Section is a byte range of the plan image or the run state.
type Section struct {
	Offset uint64 `json:"offset"`
	Bytes  uint64 `json:"bytes"`
}

// Image is the plan image the persistent schedulers read, as the bytes
// uploaded once per session, and the layout of the run state they write.
type Image struct {
	// Plan holds the wave, wait, unit, order, task and group tables, each
	// 16-byte aligned.
	Plan                                      []byte
	Waves, Waits, Units, Order, Tasks, Groups Section
	// BarrierTasks are the barriers arm's (wave, tile) tasks, group after
	// group; Groups holds each group's first task and the end.
	BarrierTasks Section
	// ArgSlots is the argument slots of every wave, in wave id order.
	ArgSlots uint64
	// State is the run state's layout: control words, per-wave counters,
	// per-tile flags and watchdog records.
	StateBytes                 uint64
	Ctl, Counters, Flags, Diag Section
	NTasks, NGroups, FlagTiles uint64
	Queue                      planners.DeviceWorkQueueBackpressurePlan
	waveArgFirst               []uint64
}

// BuildImage lays out the plan image of a program: the tile plan's waits,
// units, order and task queue (sized by the work-queue planner, one drain)
// for the waits arm, and the barrier plan's groups for the barriers arm.
func BuildImage(p *Program) (*Image, error) {
	tp, w := p.Plan.Tiles, p.Workload
	n := len(w.Waves)
	im := &Image{waveArgFirst: make([]uint64, n)}
	flagFirst := make([]uint64, n)
	for v := range n {
		im.waveArgFirst[v] = im.ArgSlots
		im.ArgSlots += uint64(len(p.wave(v).Kernel.Args))
		if tp.Flags[v] {
			flagFirst[v] = im.FlagTiles
			im.FlagTiles += *p.wave(v).Kernel.Tiles
		}
	}
	if im.FlagTiles > 1<<32-1 {
		return nil, fmt.Errorf("%s: %d flagged tiles do not fit the 32-bit flag index. Fix: read fewer single tiles (\"all\" needs no flag)", p.Source, im.FlagTiles)
	}
	var err error
	im.Queue, err = planners.PlanDeviceWorkQueueBackpressure(planners.DeviceWorkQueueProfile{InitialItems: tp.Tasks,
		QueueCapacity: max(tp.Tasks, 1), EntryBytes: taskWords * 4, ControlBytes: ctlWords * 8, BudgetBytes: p.Plan.BudgetBytes}, max(tp.Tasks, 1))
	if err != nil {
		return nil, &megakernel.WorkloadError{Source: p.Source, Field: "waves", Err: err}
	}
	im.NTasks = tp.Tasks
	im.NGroups = uint64(len(p.Plan.Groups))
	var b imageBuilder
	im.Waves = b.section(uint64(n) * waveWords)
	for v := range n {
		k := p.wave(v).Kernel
		bits := uint32(0)
		if k.Prologue {
			bits |= wavePrologue
		}
		if tp.Flags[v] {
			bits |= wavePublishes
		}
		b.put(uint32(p.waveFn[v]), uint32(*k.Tiles), uint32(*k.Block), bits, uint32(tp.WaitStart[v]),
			uint32(tp.WaitStart[v+1]-tp.WaitStart[v]), uint32(im.waveArgFirst[v]), uint32(flagFirst[v]))
	}
	im.Waits = b.section(uint64(len(tp.Waits)) * waitWords)
	for _, wt := range tp.Waits {
		b.put(uint32(wt.Producer), uint32(wt.Map.Kind), uint32(wt.Map.Block), 0)
	}
	im.Units = b.section(uint64(len(tp.Units)) * unitWords)
	for _, u := range tp.Units {
		b.put(uint32(u.First), uint32(u.Count), uint32(u.Tiles), 0)
	}
	im.Order = b.section(uint64(len(tp.Order)))
	for _, v := range tp.Order {
		b.put(uint32(v))
	}
	im.Tasks = b.section(tp.Tasks * taskWords)
	for u, unit := range tp.Units {
		for t := range unit.Tiles {
			b.put(uint32(u), uint32(t))
		}
	}
	im.Groups = b.section(im.NGroups + 1)
	var first uint64
	for _, g := range p.Plan.Groups {
		b.put(uint32(first))
		for _, v := range g {
			first += *p.wave(v).Kernel.Tiles
		}
	}
	b.put(uint32(first))
	im.BarrierTasks = b.section(first * taskWords)
	for _, g := range p.Plan.Groups {
		for _, v := range g {
			for t := range *p.wave(v).Kernel.Tiles {
				b.put(uint32(v), uint32(t))
			}
		}
	}
	b.section(4) // every section, even an empty one, starts inside the buffer
	b.put(0, 0, 0, 0)
	im.Plan = b.buf
	return im, im.layoutState(uint64(n))
}

// layoutState lays out the run state: control words, counters, flags and
// watchdog records, each 128-byte aligned.
func (im *Image) layoutState(waves uint64) error {
	var off uint64
	next := func(bytes uint64) Section {
		s := Section{Offset: off, Bytes: bytes}
		off += (bytes + 127) &^ 127
		return s
	}
	im.Ctl = next(ctlWords * 8)
	im.Counters = next(max(waves, 1) * 8)
	im.Flags = next(max(im.FlagTiles, 1) * 4)
	im.Diag = next(diagMax * diagWords * 8)
	im.StateBytes = off
	return nil
}

// Bytes returns the device bytes of the image, the state and the argument
// slots.
func (im *Image) Bytes() (uint64, error) {
	return checked.Sum("plan image bytes", uint64(len(im.Plan)), im.StateBytes, im.ArgSlots*8)
}

// imageBuilder appends uint32 words in 16-byte aligned sections.
type imageBuilder struct{ buf []byte }

// section starts a section of words uint32 words.
func (b *imageBuilder) section(words uint64) Section {
	for len(b.buf)%16 != 0 {
		b.buf = append(b.buf, 0)
	}
	return Section{Offset: uint64(len(b.buf)), Bytes: max(words*4, 4)}
}

func (b *imageBuilder) put(words ...uint32) {
	for _, w := range words {
		b.buf = binary.LittleEndian.AppendUint32(b.buf, w)
	}
}
