package executor

import (
	"strconv"
	"strings"
)

// ProfilerRange names a phase of the executor's work that it marks as an
// NVTX range in the CUDA build, so that Nsight Systems timelines show
// gpuplan's phases by name (vyre marks its host and resident dispatches the
// same way). Each range covers the driver calls of one executor call on the
// driver thread.
type ProfilerRange int

// The executor's profiler ranges.
const (
	// RangeUpload covers an upload batch: staging, copies and its wait.
	RangeUpload ProfilerRange = iota
	// RangeDownload covers a download batch: copies, its wait and the
	// copies out of staging.
	RangeDownload
	// RangeLaunch covers the enqueue of a dispatch: parameter uploads,
	// output clears, timing events and launches.
	RangeLaunch
	// RangeWait covers waiting for a dispatch (and the readback of
	// LaunchRead).
	RangeWait
	// RangeHostLoop covers a whole host-driven loop (RunHostLoop).
	RangeHostLoop
	// RangeSequence covers a resident sequence (RunSequence).
	RangeSequence
	// RangeAsyncUpload covers enqueueing an asynchronous upload from pinned
	// caller memory.
	RangeAsyncUpload
	// RangeSyncUploads covers waiting for the asynchronous uploads.
	RangeSyncUploads
	// RangeBorrowedFallback covers a dispatch run through host staging.
	RangeBorrowedFallback
	numProfilerRanges
)

// ProfilerRangeSpec describes one profiler range: the label Nsight shows
// and the phase it covers.
type ProfilerRangeSpec struct {
	Range       ProfilerRange `json:"-"`
	Name        string        `json:"name"`
	Description string        `json:"description"`
}

// profilerRanges is the catalog, indexed by ProfilerRange.
var profilerRanges = [numProfilerRanges]ProfilerRangeSpec{
	{RangeUpload, "gpuplan.upload", "Upload batch: pinned staging, host-to-device copies and one wait."},
	{RangeDownload, "gpuplan.download", "Download batch: device-to-host copies, one wait and the copies out of staging."},
	{RangeLaunch, "gpuplan.launch", "Dispatch enqueue: parameter uploads, output clears, timing events and kernel launches."},
	{RangeWait, "gpuplan.wait", "Wait for a dispatch, with LaunchRead's readback."},
	{RangeHostLoop, "gpuplan.host_loop", "A host-driven loop of launches, small readbacks and syncs."},
	{RangeSequence, "gpuplan.sequence", "A resident sequence: prefix and repeated steps and ranged readbacks, one wait."},
	{RangeAsyncUpload, "gpuplan.upload_async", "Enqueue of an asynchronous upload from pinned caller memory."},
	{RangeSyncUploads, "gpuplan.synchronize_uploads", "Wait for the queued asynchronous uploads."},
	{RangeBorrowedFallback, "gpuplan.borrowed_fallback", "A dispatch run through host staging instead of resident buffers."},
}

// ProfilerRanges returns the catalog of the executor's profiler ranges.
func ProfilerRanges() []ProfilerRangeSpec { return profilerRanges[:] }

// String returns the range's label, or "ProfilerRange(n)" for an unknown
// value.
func (r ProfilerRange) String() string {
	if r >= 0 && r < numProfilerRanges {
		return profilerRanges[r].Name
	}
	return "ProfilerRange(" + strconv.Itoa(int(r)) + ")"
}

// validRangeLabel reports whether name can be an NVTX label: non-empty,
// without NUL bytes (the label is passed as a C string), in the gpuplan.
// namespace.
func validRangeLabel(name string) bool {
	return len(name) > len("gpuplan.") && strings.HasPrefix(name, "gpuplan.") && !strings.ContainsRune(name, 0)
}

// rangeMarker is implemented by backends that can mark profiler ranges:
// the CUDA backend through NVTX (when libnvToolsExt loads), the fake by
// recording them. Both calls run on the driver thread.
type rangeMarker interface {
	// rangesAvailable reports whether ranges can be marked at all (the
	// CUDA backend: whether libnvToolsExt was loaded).
	rangesAvailable() bool
	pushRange(r ProfilerRange)
	popRange()
}

// rangePush opens r when the backend marks ranges and they are enabled.
// It must be called on the driver thread (inside onDriver).
func (x *Executor) rangePush(r ProfilerRange) {
	if x.ranges != nil {
		x.ranges.pushRange(r)
	}
}

// rangePop closes the innermost range opened by rangePush.
func (x *Executor) rangePop() {
	if x.ranges != nil {
		x.ranges.popRange()
	}
}

// ProfilerRangesActive reports whether the executor marks its phases as
// profiler ranges: in the CUDA build when libnvToolsExt could be loaded and
// Options.DisableProfilerRanges is not set.
func (x *Executor) ProfilerRangesActive() bool { return x.ranges != nil }
