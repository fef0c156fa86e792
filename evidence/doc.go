// Package evidence provides the evidence CSV formats, their validation, and
// the release gates that judge measured speedups.
//
// It covers three formats:
//
//   - vyre's megakernel speedup CSV (14 columns, and the later 15-column
//     variant) with vyre's validation, proof and formatter;
//   - vyre's 17-column resident graph session CSV, converted to the speedup
//     CSV through planners.PlanResidentGraphSession;
//   - gpuplan's own evidence CSV: one row per measured sample, which
//     `gpuplan gate` checks against the claims in evidence/gates.json and
//     `gpuplan report` turns into a Markdown table (and, through package
//     evidence/chart, which holds the plotting, a chart).
//
// # vyre compatibility
//
// ValidateSpeedupSamples, ValidateSpeedupCSV and FormatSpeedupCSV port
// vyre-driver-cuda 0.6.1's megakernel_speedup_gate: the same constants,
// header, per-sample checks in the same order (the first failure wins) and
// the same proof. Errors are *SpeedupError whose Kind carries vyre's variant
// name. One quirk is fixed: vyre's CSV path does not check the required
// speedup, so a NaN threshold passes everything; here a NaN, infinite, zero
// or negative required speedup is InvalidRequiredSpeedup on every path.
// Line numbers in vyre CSV errors follow vyre: blank lines are dropped first
// and the header is line 1. Beyond vyre, an error about the CSV's text also
// names the 1-based column and its header name: a header at its first
// column that differs, a row with the wrong number of fields at its first
// missing or extra column (with both counts), a bad value, and the
// InvalidTiming of a NaN, infinite, zero or negative time. The error kinds
// and the order of the checks are vyre's. ConvertSessionCSV is vyre's
// --format-resident-graph-speedup-csv; its errors name lines and columns of
// the session CSV (*SessionCSVError, and *SpeedupError for InvalidTiming).
//
// # gpuplan's evidence format (version 1)
//
// A UTF-8 CSV file (RFC 4180 quoting; lines starting with '#' are comments)
// whose first record is exactly SampleCSVHeader:
//
//	gpuplan_version,gpuplan_commit,source_fingerprint,device_name,compute_capability,driver_version,date,workload,graph_nodes,graph_edges,iterations,arm,sample,wall_ns,device_ns,checksum,timed_uploads,timed_allocations,timed_host_syncs,bytes_moved
//
// Each following record is one measured sample (one timed repetition of one
// arm on one workload):
//
//	column               meaning                                        rule
//	gpuplan_version      version of the gpuplan build                    token ("devel" for a source build)
//	gpuplan_commit       VCS commit of the build                         token ("unknown" when not embedded)
//	source_fingerprint   WorkloadFingerprint of the measured workload    "sha256:" + 64 lowercase hex digits
//	device_name          device name as the driver reports it            printable text, quoted if it has a comma
//	compute_capability   MAJOR.MINOR                                     two integers, e.g. 9.0
//	driver_version       driver version                                  token, e.g. 580.159.04
//	date                 when the sample was taken                       RFC 3339, written in UTC
//	workload             input name, e.g. grid-2048 or rmat-20           token
//	graph_nodes          nodes of the input graph                        integer >= 0
//	graph_edges          edges of the input graph                        integer >= 0
//	iterations           BFS levels, or fixed-point iterations           integer >= 0
//	arm                  execution strategy (open set)                   [a-z0-9-]+, e.g. host-loop, device-loop, megakernel
//	sample               index of the sample within (workload, arm)      integer >= 0, unique
//	wall_ns              host wall-clock time of the timed region        number in [1, 86400e9]: 1 ns to one day
//	device_ns            CUDA-event time of the timed region             0 = not recorded, else as wall_ns
//	checksum             hash of the result                              token; compared arms must agree
//	timed_uploads        input uploads inside the timed region           integer >= 0; pollution
//	timed_allocations    allocations inside the timed region             integer >= 0; pollution
//	timed_host_syncs     host syncs beyond the arm's own control flow    integer >= 0; pollution
//	bytes_moved          device bytes moved (bandwidth arms), else 0     integer >= 0
//
// A token is a non-empty run of letters, digits and . _ - : +. Numbers are
// decimal; integers have no sign; floats are written in shortest round-trip
// form without an exponent, and NaN, infinities and negative times are
// rejected, and so is a time below MinPlausibleNS (1 ns: no timer resolves
// less) or above MaxPlausibleNS (a day): such a value is a recording error
// (seconds written as nanoseconds, a denormal), not evidence.
//
// LoadResults reads every *.csv under the results directory, each at most
// DefaultResultFileLimit bytes (LoadResultsLimit sets another limit). A
// file that is not a regular file (a FIFO, a device) is refused, and so is
// a symbolic link whose target lies outside the results directory.
//
// One file is one benchmark run: every row carries the same version, commit,
// fingerprint, device, compute capability and driver (a file that mixes
// devices is malformed), each workload has one size, and (workload, arm,
// sample) never repeats. The arms of one workload are measured in the same
// process, interleaved, on resident inputs; the timed region holds only the
// work of the arm, so a non-zero pollution counter marks the sample as
// unusable for a claim.
//
// Auxiliary measurements use the same rows. A bandwidth ceiling is an arm of
// its own, conventionally copy-ceiling, with bytes_moved set; its bandwidth
// is bytes_moved / device_ns (or wall_ns when device_ns is 0). Reports show
// it as a bandwidth with its interval, never as a speedup (it does not do
// the workload's work); claims may compare it like any other arm. Arms
// named in ExternalArms (gunrock, egg) are peer tools measured beside
// gpuplan's own arms; reports mark them "(external)".
//
// Producers use Writer (NewWriter, Write, Flush) or WriteSamples, which
// apply the same rules as ReadSamples, so a written file always reads back.
// Errors are *FormatError with the source, line, column (1-based field
// number), field name and a "Fix:" sentence; a row with too few or too many
// fields is reported at its first missing or extra column, with both
// counts.
//
// # Staleness: the source fingerprint
//
// WorkloadFingerprint hashes the code a GPU workload measures: the workload
// package under WorkloadsDir (for example workloads/bfs) and every package
// of the module it imports, found from the import graph in every build
// configuration, with their C, CUDA and PTX sources and their kernels
// folders. Go is hashed as its token stream (comments and layout aside,
// build directives and the cgo preamble kept), C and CUDA without comments
// or whitespace, PTX without comments, line information or debug sections.
// The benchmark records its workload's fingerprint in every row; the gate
// recomputes every workload's (SourceFingerprints) and accepts evidence
// whose fingerprint is one of them, so a change to one workload leaves
// another's evidence fresh, a changed comment leaves all of it fresh, and a
// changed default in a package the workload imports makes it stale. This
// works on a checkout without git history and is immune to rebases.
//
// # Gates
//
// evidence/gates.json states claims:
//
//	{
//	  "claims": [
//	    {"name": "megakernel beats the host loop on grid-2048",
//	     "workload": "grid-2048", "baseline": "host-loop", "candidate": "megakernel",
//	     "metric": "wall_ns", "min_speedup": 5},
//	    {"name": "megakernel costs at most 2 us per level on grid-2048",
//	     "workload": "grid-2048", "candidate": "megakernel",
//	     "metric": "wall_ns", "max_ns_per_iteration": 2000}
//	  ]
//	}
//
// The speedup is baseline time / candidate time on the chosen metric
// (wall_ns or device_ns). A per-iteration claim (max_ns_per_iteration, no
// baseline, no min_speedup) judges one arm: its time divided by the
// workload's iterations (the rows' iterations column: BFS levels, waves).
// min_speedup is at least 1; a claim that only bounds a slowdown sets
// "no_regression": true, and its min_speedup in (0, 1] then means the
// candidate is at most 1/min_speedup times slower than the baseline.
// Optional fields: "file" picks one results file
// (relative to the results directory), "device" requires a device name,
// and "min_effect" states the smallest effect that matters on a speedup
// claim (below).
//
// # Minimum effect
//
// "min_effect": e on a speedup claim requires the candidate to be faster
// than the baseline by at least the fraction e beyond noise: the lower
// bound of the speedup's 95% interval must reach 1+e as well as
// min_speedup, so the claim is judged against max(min_speedup, 1+e)
// (Claim.RequiredSpeedup; "min_speedup": 1, "min_effect": 0.05 holds only
// when the candidate is at least 1.05x the baseline at the interval's
// lower end, about 4.8% less time). e is a finite fraction in (0, 1);
// a larger effect is a min_speedup. ParseGates refuses min_effect on a
// per-iteration claim (there is no baseline to differ from), on a
// no-regression bound (which allows the candidate to be slower), and
// where 1+e is at most min_speedup (it would change nothing).
//
// # Checks and outcomes
//
// CheckClaims judges each claim against the evidence files under
// evidence/results/, in this order, and the first failing step fails it:
//
//  1. evidence exists: at least one row of each arm on the workload;
//  2. one run: all of it comes from one file, hence one device, one
//     commit and one build (the claim's "file" picks among several);
//     compared arms on different devices or commits fail;
//  3. not stale: the rows' source_fingerprint equals the current tree's;
//  4. equal checksums across every sample of both arms;
//  5. no pollution: every counter is 0 on every sample;
//  6. at least MinSamplesPerArm (10) samples per arm, and device_ns
//     recorded when the metric is device_ns;
//  7. the strongest peer: a claim whose baseline is a peer tool
//     (ExternalArms: gunrock, egg) is refused when the same file holds
//     another peer arm, other than the candidate, with a lower median on
//     the claim's workload (and device), on the claim's metric, or on
//     wall_ns when a peer lacks device_ns; the error names the stronger
//     peer (a tie is not stronger);
//  8. the comparison, with three outcomes. For a speedup claim, with R
//     its required speedup (min_speedup, or 1+min_effect when larger) and
//     [lo, hi] the 95% confidence interval of the ratio of medians: it
//     holds (PASS) when lo >= R, fails (FAIL) when hi < R, and is unknown
//     (UNKNOWN) when lo < R <= hi. For a per-iteration claim, every row
//     states the same non-zero iterations and, with B its
//     max_ns_per_iteration and [lo, hi] the 95% confidence interval of the
//     median time per iteration: it holds when hi <= B, fails when lo > B,
//     and is unknown when lo <= B < hi. Where the point estimate lies
//     inside the interval does not matter: an interval across the bound
//     is unknown whether its median meets the bound or misses it.
//
// An unknown verdict says about how many samples per arm would settle it
// (SamplesToSettle). The interval's half-width shrinks as 1/sqrt(n), so
// with h the distance from the point estimate to the interval's end on the
// bound's side, d the distance from the point estimate to the bound and n
// the samples per arm (the larger arm's count, so that every arm's share
// of the width shrinks enough), n' = ceil(n * (h/d)^2), at least n+1. An
// estimate above MaxSettleSamples (10000), or a point estimate on the
// bound, is reported as such: the claim's bound lies within noise of the
// measured value, and the fix is to change the code or the bound, not to
// run more. The estimate is a guide (the median's interval comes from
// order statistics, so it moves in steps), not a promise.
//
// The interval comes from golang.org/x/perf/benchmath, the statistics behind
// benchstat, so the gate and benchstat agree on what the medians and their
// intervals are. benchmath gives a distribution-free interval for each
// arm's median (order statistics, no normality assumption, deterministic: no
// resampling, no seed). Each arm's interval is taken at confidence
// sqrt(0.95); the arms are measured independently, so both intervals hold
// together with probability at least 0.95, and whenever they do the ratio of
// the true medians lies in [baseline.lo / candidate.hi, baseline.hi /
// candidate.lo]. The claim must hold at that lower end. This is
// conservative (a bootstrap would give a narrower interval) and exact to
// reproduce, which is what a release gate wants. With 10 samples per arm
// the per-arm interval spans the 2nd to 9th order statistics.
//
// Each verdict line starts with PASS, FAIL or UNKNOWN (Outcome). Any FAIL
// or UNKNOWN claim makes `gpuplan gate` exit non-zero, since an unknown
// claim is not a held claim; its line names the claim, what was observed
// and what was required, and an UNKNOWN line ends with "Fix: run more:
// about N samples per arm would settle it". With no claims and no
// results, the gate passes and says that no evidence is recorded. A
// malformed file under evidence/results/ fails the gate with its line,
// column and fix.
package evidence
