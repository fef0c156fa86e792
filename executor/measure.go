package executor

// MaxMeasuredLaunches bounds the (kernel, launch size) pairs the executor
// keeps launch measurements for, as vyre bounds its measured programs; at
// the bound the pair measured first is forgotten.
const MaxMeasuredLaunches = 4096

// measureKey is one kernel launched over one number of logical elements.
type measureKey struct {
	module   ModuleKey
	kernel   string
	elements uint64
}

// measurements holds, per key, the fastest device time per block width.
type measurements struct {
	byKey map[measureKey]map[uint32]uint64
	order []measureKey
}

// recordLaunchLocked records the device time of a timed single-launch
// dispatch, as vyre's record_launch_measurement does: by kernel, logical
// elements and block width, keeping the fastest time per width. Like vyre it
// refuses a zero time, a block that is not one-dimensional and a width
// outside the kernel's and the device's limits; it reports whether the
// measurement was kept.
func (x *Executor) recordLaunchLocked(k *Kernel, cfg LaunchConfig, ns uint64) bool {
	w := cfg.Block[0]
	limit := min(x.dev.MaxThreadsPerBlock, x.dev.MaxBlockDim[0], k.attrs.MaxThreadsPerBlock)
	if ns == 0 || cfg.Block[1] != 1 || cfg.Block[2] != 1 || w == 0 || int64(w) > int64(limit) {
		return false
	}
	m := &x.measured
	if m.byKey == nil {
		m.byKey = map[measureKey]map[uint32]uint64{}
	}
	key := measureKey{module: k.m.key, kernel: k.name, elements: cfg.elements()}
	widths, ok := m.byKey[key]
	if !ok {
		for len(m.order) >= MaxMeasuredLaunches {
			delete(m.byKey, m.order[0])
			m.order = m.order[1:]
		}
		widths = map[uint32]uint64{}
		m.byKey[key] = widths
		m.order = append(m.order, key)
	}
	if old, ok := widths[w]; !ok || ns < old {
		widths[w] = ns
	}
	return true
}

// LaunchWidthMeasurements returns the fastest device time measured per
// block width (threads of a one-dimensional block) for timed launches of k
// over elements logical elements (LaunchConfig.Elements, or the thread
// count when that is 0), so that a caller can pick a block width from what
// this executor observed (vyre's launch_width_measurements). Only
// dispatches of one launch are recorded. An empty map means nothing was
// measured, never that a width is slow.
func (x *Executor) LaunchWidthMeasurements(k *Kernel, elements uint64) map[uint32]uint64 {
	out := map[uint32]uint64{}
	if k == nil {
		return out
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	for w, ns := range x.measured.byKey[measureKey{module: k.m.key, kernel: k.name, elements: elements}] {
		out[w] = ns
	}
	return out
}
