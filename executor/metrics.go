package executor

// Metric is one backend counter under a stable name.
type Metric struct {
	Name  string `json:"name"`
	Value uint64 `json:"value"`
}

// MetricSnapshot returns the backend's counters by stable names, in a fixed
// order (vyre's backend_metric_snapshot): the module cache's entries, hits
// and misses, then the timed-dispatch counters. vyre reports its PTX source
// cache in the first three; gpuplan compiles no PTX at run time (kernels
// are PTX already), so its counterpart is the module cache, named
// cuda_module_cache_*. The other names are vyre's.
func (x *Executor) MetricSnapshot() []Metric {
	x.mu.Lock()
	entries, hits, misses := uint64(len(x.modOrder)), x.modHits, x.modMisses
	x.mu.Unlock()
	t := x.tel.Snapshot()
	return []Metric{
		{"cuda_module_cache_entries", entries},
		{"cuda_module_cache_hits", hits},
		{"cuda_module_cache_misses", misses},
		{"cuda_timed_dispatches", t.TimedDispatches},
		{"cuda_timed_device_measurements", t.TimedDeviceMeasurements},
		{"cuda_timed_dispatches_missing_device_time", t.TimedDispatchesMissingDeviceTime},
		{"cuda_timed_wall_ns_total", t.TimedWallNs},
		{"cuda_timed_device_ns_total", t.TimedDeviceNs},
		{"cuda_timed_device_ns_max", t.TimedDeviceNsMax},
		{"cuda_timed_enqueue_ns_total", t.TimedEnqueueNs},
		{"cuda_timed_wait_ns_total", t.TimedWaitNs},
	}
}
