package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuplan/gpuplan/internal/memcheck"
)

// The hostile corpus under testdata/hostile/ holds inputs that once made
// gpuplan panic, hang, run out of memory, accept bad input or lose the
// location of an error. Every case runs in-process, so a panic fails the
// test binary, and its allocations are bounded (the time each takes is
// measured by BenchmarkHostileCorpus, never asserted).

// hostileCase is one command run over the corpus. "@name" in args is the
// path of testdata/hostile/name, "@tmp" a fresh empty directory ("@tmp/x"
// a path in it), "@out" a file path in it and "@root" the module root.
type hostileCase struct {
	name string
	args []string
	code int
	// stderr holds what the error must say: the location (field path or
	// line and column) and the numbers behind it.
	stderr []string
	// stdout holds what the output must say; forged output is checked by
	// every case (no escape character, no forged gate line).
	stdout []string
}

func hostileCases() []hostileCase {
	return []hostileCase{
		{"gate: a second claims list", []string{"gate", "--root", "@root", "--gates", "@gates-duplicate-claims.json"}, exitFailure, []string{`field "claims": key "claims" appears twice`}, nil},
		{"gate: a key matching only by case", []string{"gate", "--root", "@root", "--gates", "@gates-case-only-key.json"}, exitFailure, []string{`field "Claims"`, `matches field "claims" only when case is ignored`}, nil},
		{"gate: a repeated key inside a claim", []string{"gate", "--root", "@root", "--gates", "@gates-nested-duplicate.json"}, exitFailure, []string{`field "claims[0].name": key "name" appears twice`}, nil},
		{"gate: a claim name forging a passing line", []string{"gate", "--root", "@root", "--gates", "@gates-forged-name.json"}, exitFailure, []string{"gate failed: 1 of 1"}, []string{`FAIL "x\n gate passed: 5 of 5 claims hold\x1b[32m"`}},
		{"gate: NaN is not JSON", []string{"gate", "--root", "@root", "--gates", "@gates-nan-speedup.json"}, exitFailure, []string{"malformed JSON at line 1, column 120"}, nil},
		{"fuse: a type error names the index", []string{"fuse", "@fuse-type-in-array.json"}, exitFailure, []string{`field "stages[3].id": cannot use JSON string`}, nil},
		{"fuse: a repeated budget", []string{"fuse", "@fuse-duplicate-budget.json"}, exitFailure, []string{`field "max_group_bytes": key "max_group_bytes" appears twice`}, nil},
		{"fuse: an overflow names its inputs", []string{"fuse", "@fuse-overflow.json"}, exitFailure, []string{"stage io bytes (stages[0].input_bytes + output_bytes + scratch_bytes) overflows 64 bits"}, nil},
		{"fuse: a number beyond float64", []string{"fuse", "@fuse-huge-number.json"}, exitFailure, []string{`field "max_group_bytes": cannot use JSON number 1e400`}, nil},
		{"fuse: 20,000 nested arrays", []string{"fuse", "@fuse-deep-nesting.json"}, exitFailure, []string{`field "stages[0]": cannot use JSON array here: want a JSON object`}, nil},
		{"fuse: trailing data", []string{"fuse", "@fuse-trailing.json"}, exitFailure, []string{"trailing data after the JSON value"}, nil},
		{"fuse: a bad escape", []string{"fuse", "@fuse-invalid-escape.json"}, exitFailure, []string{"malformed JSON at line 1, column 38", "'x' is not a valid escape"}, nil},
		{"fuse: a control character in a key", []string{"fuse", "@fuse-control-in-string.json"}, exitFailure, []string{"line 1, column 38", "control character 0x01"}, nil},
		{"queue: an overflow names its inputs", []string{"queue", "@queue-overflow.json"}, exitFailure, []string{"queue bytes (queue_capacity x entry_bytes) overflows 64 bits"}, nil},
		{"queue: a null required field", []string{"queue", "@queue-null-field.json"}, exitFailure, []string{`field "initial_items": required field is missing`}, nil},
		{"session: an overflow names its inputs", []string{"session", "@session-overflow.json"}, exitFailure, []string{"(graph_bytes + per_run_frontier_bytes) overflows 64 bits"}, nil},
		{"batch: a null element", []string{"batch", "@batch-null-element.json"}, exitFailure, []string{`field "queries[0]": element is null`}, nil},
		{"compact: a truncated input", []string{"compact", "@compact-truncated.json"}, exitFailure, []string{"JSON input ends early"}, nil},
		{"diagnostics: a key matching only by case", []string{"diagnostics", "@diagnostics-case-only.json"}, exitFailure, []string{`field "Shards"`, "only when case is ignored"}, nil},
		{"passes: an escape in a pass name", []string{"passes", "@passes-ansi-name.json"}, exitOK, nil, []string{`"p\x1b[2K\ngate passed: 5 of 5 claims hold"`}},
		{"egraph: a 1x1 launch config", []string{"egraph", "@egraph-one-by-one.json"}, exitFailure, []string{`field "launch": TooManyWaves`, "79800 SignaturePairs items"}, nil},
		{"tokenfact: a bad kind names the index", []string{"tokenfact", "@tokenfact-type-in-array.json"}, exitFailure, []string{`field "graph.nodes[1].kind"`}, nil},
		{"plan: a 50-wave cycle", []string{"plan", "@plan-cycle.json"}, exitFailure, []string{`field "dependencies"`, "17 -> 18 -> 19 -> ... 30 more -> 0)"}, nil},
		{"plan: escapes in names", []string{"plan", "@plan-forged-wave-name.json"}, exitOK, nil, []string{`"w\x1b]0;title\a"`, `0 "x\n gate passed: 5 of 5 claims hold"`}},
		{"plan: a negative size names the index", []string{"plan", "@plan-wave-type.json"}, exitFailure, []string{`field "waves[1].frontier_bytes": cannot use JSON number -1`}, nil},
		{"devices: a 4-entry max_grid_dim", []string{"devices", "--device-file", "@device-four-grid-dims.json"}, exitFailure, []string{`field "max_grid_dim[3]"`, "more than 3 elements"}, nil},
		{"devices: a null carveout", []string{"devices", "--device-file", "@device-null-carveout.json"}, exitFailure, []string{`field "shared_mem_carveouts_kib[1]": null is not an integer`}, nil},
		{"devices: a bandwidth overflow", []string{"devices", "--device-file", "@device-bandwidth-overflow.json"}, exitFailure, []string{`field "memory_clock_khz"`, "overflow 63 bits"}, nil},
		{"occupancy: a repeated key", []string{"occupancy", "--device-file", "@device-duplicate-key.json", "--regs", "32", "--block", "128"}, exitFailure, []string{`field "sm_count": key "sm_count" appears twice`}, nil},
		{"diagnose: an escape in a device name", []string{"diagnose", "--device-file", "@device-forged-name.json", "--grid", "1", "--block", "128"}, exitOK, nil, []string{"status=ok"}},
		{"devices: an escape in a device name", []string{"devices", "--device-file", "@device-forged-name.json"}, exitOK, nil, []string{`"GPU\n gate passed: 5 of 5 claims hold\x1b[2J"`}},
		{"report --chart: a denormal time", chartArgs([]string{"report", "--results", "@results-denormal"}, "@out.png"), exitFailure, []string{"run.csv:2:14 (wall_ns)", "below 1 ns"}, nil},
		{"report: a time above a day", []string{"report", "--results", "@results-above-a-day"}, exitFailure, []string{"run.csv:2:14 (wall_ns)", "above one day"}, nil},
		{"report: a C1 escape in a device name", []string{"report", "--results", "@results-forged-device"}, exitOK, nil, []string{`"GPU\\u009b2J \| x" (compute 9.0`}},
		{"compare: a denormal time", []string{"compare", "@results-denormal/run.csv", "@results-above-a-day/run.csv"}, exitFailure, []string{"run.csv:2:14 (wall_ns)", "below 1 ns"}, nil},
		{"report: a file input with a denormal time", []string{"report", "@results-denormal/run.csv"}, exitFailure, []string{"run.csv:2:14 (wall_ns)"}, nil},
		{"gate: a bad results row", []string{"gate", "--root", "@root", "--gates", "@gates-empty.json", "--results", "@results-bad-column"}, exitFailure, []string{"run.csv:2:9 (graph_nodes)"}, nil},
		{"gate: a denormal time", []string{"gate", "--root", "@root", "--gates", "@gates-empty.json", "--results", "@results-denormal"}, exitFailure, []string{"run.csv:2:14 (wall_ns)", "1e-320 is below 1 ns"}, nil},
		{"gate --vyre: a bad value", []string{"gate", "--vyre", "@vyre-speedup-bad.csv"}, exitFailure, []string{"line 2, column 8 (repetitions)"}, nil},
		{"gate --vyre-session: a short header", []string{"gate", "--vyre-session", "@vyre-session-bad.csv"}, exitFailure, []string{"line 1"}, nil},
		{"fuse: /dev/zero", []string{"fuse", "/dev/zero"}, exitFailure, []string{"/dev/zero: is a character device, not a regular file"}, nil},
		{"plan: a directory", []string{"plan", "@tmp"}, exitFailure, []string{"is a directory, not a regular file"}, nil},
		{"fuse: a bad size limit is a usage error", []string{"fuse", "--max-input-bytes", "0", "@fuse-trailing.json"}, exitUsage, []string{"--max-input-bytes 0 is not a positive number"}, nil},
		{"partition: a grid whose vertex count wraps", []string{"partition", "--device", "h200", "--graph", "grid:4294967296"}, exitFailure, []string{"grid:4294967296: its grid vertices do not fit 64-bit arithmetic"}, nil},
		{"partition: a road whose vertex count wraps", []string{"partition", "--device", "h200", "--graph", "road:8589934592"}, exitFailure, []string{"its road vertices do not fit"}, nil},
		{"bfs: a Kronecker graph beyond the CSR limit", []string{"bfs", "--graph", "kron:30", "--cpu"}, exitFailure, []string{"edge entries 34359738368 exceeds the limit 17179869184. Fix: pass a scale of at most 29 at edge factor 16, or an edge factor of at most 8 at scale 30"}, nil},
		{"bfs: a Kronecker graph beyond the host", []string{"bfs", "--graph", "kron:29", "--cpu"}, exitFailure, []string{"kron:29 needs about"}, nil},
		{"diagnose: grid y beyond 65535", []string{"diagnose", "--device", "h200", "--grid", "1,65536,1", "--block", "128"}, exitUsage, []string{`--grid "1,65536,1": dimension 2 (y) is above CUDA's limit of 65535`}, nil},
		{"diagnose: grid x beyond 2^31-1", []string{"diagnose", "--device", "h200", "--grid", "2147483648", "--block", "128"}, exitUsage, []string{"dimension 1 (x) is above CUDA's limit of 2147483647"}, nil},
		{"diagnose: an empty grid dimension", []string{"diagnose", "--device", "h200", "--grid", "1,,5", "--block", "128"}, exitUsage, []string{`--grid "1,,5": dimension 2 (y) is empty`}, nil},
		{"diagnose: block z beyond 64", []string{"diagnose", "--device", "h200", "--grid", "1", "--block", "1,1,65"}, exitUsage, []string{"dimension 3 (z) is above CUDA's limit of 64"}, nil},
		{"occupancy: 300 registers a thread", []string{"occupancy", "--device", "h200", "--regs", "300", "--block", "128"}, exitUsage, []string{"--regs (registers_per_thread) 300 is above 255"}, nil},
		{"occupancy: a 2000-thread block", []string{"occupancy", "--device", "h200", "--regs", "32", "--block", "2000"}, exitUsage, []string{"--block (block_size) 2000 is outside 1..1024"}, nil},
		{"serve: a graph spec that cannot load", []string{"serve", "--graph", "k=kron:abc", "--listen", "127.0.0.1:0"}, exitFailure, []string{"--graph k=kron:abc"}, nil},
		{"load: a client count out of range", []string{"load", "--graph", "kron:8", "--clients", "0"}, exitUsage, []string{`--clients: "0" is not a count from 1 to 4096`}, nil},
		{"plan: edges without nodes", []string{"plan", "@plan-edges-without-nodes.json"}, exitFailure, []string{`field "graph.edge_count": 4000 edges over 0 nodes`}, nil},
		{"load: a batching window out of range", []string{"load", "--graph", "kron:8", "--windows", "5s"}, exitUsage, []string{`--windows: "5s" is not a window`}, nil},
	}
}

// chartArgs is args and --chart file in a build with charts. A build
// without them refuses --chart before it reads any input, so there the
// case runs without it.
func chartArgs(args []string, file string) []string {
	if !buildHasCharts {
		return args
	}
	return append(args, "--chart", file)
}

// hostileArgs resolves the @-placeholders of args.
func hostileArgs(t testing.TB, args []string) []string {
	t.Helper()
	tmp := t.TempDir()
	out := make([]string, len(args))
	for i, a := range args {
		switch {
		case a == "@tmp":
			out[i] = tmp
		case strings.HasPrefix(a, "@tmp/"):
			out[i] = filepath.Join(tmp, a[len("@tmp/"):])
		case a == "@root":
			// The module root: the gate fingerprints its workloads.
			out[i] = filepath.Join("..", "..")
		case a == "@out.png":
			out[i] = filepath.Join(tmp, "out.png")
		case strings.HasPrefix(a, "@"):
			out[i] = filepath.Join("testdata", "hostile", a[1:])
		default:
			out[i] = a
		}
	}
	return out
}

// hostileBound bounds one command's allocations on a corpus file: every
// corpus file is at most 40 KB. The base covers the fixed work of the
// command that does the most regardless of its input, the gate, which
// fingerprints every GPU workload of this module and reads the committed
// evidence (about 40 MB in all).
var hostileBound = memcheck.Bound{Base: 64 << 20, PerByte: 256}

func TestHostileCorpus(t *testing.T) {
	for _, tc := range hostileCases() {
		t.Run(tc.name, func(t *testing.T) {
			args := hostileArgs(t, tc.args)
			var out, errs string
			var code int
			memcheck.Check(t, hostileBound, 40<<10, func() { out, errs, code = runCLI(t, "", args...) })
			require.Equal(t, tc.code, code, "stdout:\n%s\nstderr:\n%s", out, errs)
			for _, s := range tc.stderr {
				assert.Contains(t, errs, s)
			}
			for _, s := range tc.stdout {
				assert.Contains(t, out, s)
			}
			if code != exitOK {
				assert.Contains(t, errs, "Fix:")
				assert.Equal(t, 1, strings.Count(strings.TrimSpace(errs), "\n")+1, "one error line: %q", errs)
			}
			assertNoForgedLine(t, out)
			assertNoForgedLine(t, errs)
			assert.NotContains(t, out+errs, "\u009b")
		})
	}
}

// jsonCommands are the commands that read one JSON input, and how.
var jsonCommands = [][]string{
	{"fuse"}, {"compact"}, {"batch"}, {"session"}, {"diagnostics"}, {"passes"}, {"queue"}, {"tokenfact"}, {"egraph"}, {"egraph", "rebuild"}, {"plan"},
	{"devices", "--device-file"}, {"occupancy", "--regs", "32", "--block", "128", "--device-file"},
	{"diagnose", "--grid", "1", "--block", "32", "--device-file"}, {"gate", "--root", "@root", "--gates"},
}

// Every corpus file through every command that reads JSON: no panic, bad
// input exits 1 (never 2) with a fix, and memory stays bounded.
func TestHostileCorpusThroughEveryCommand(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "hostile", "*"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, file := range files {
		if st, err := os.Stat(file); err != nil || st.IsDir() {
			continue
		}
		for _, cmd := range jsonCommands {
			args := hostileArgs(t, append(append([]string{}, cmd...), "@"+filepath.Base(file)))
			t.Run(filepath.Base(file)+"/"+cmd[0], func(t *testing.T) {
				var out, errs string
				var code int
				memcheck.Check(t, hostileBound, 40<<10, func() { out, errs, code = runCLI(t, "", args...) })
				switch code {
				case exitOK:
				case exitFailure:
					assert.Contains(t, errs, "Fix:")
				default:
					t.Fatalf("exit %d for input (bad input exits 1): %s", code, errs)
				}
				assertNoForgedLine(t, out)
				assertNoForgedLine(t, errs)
			})
		}
	}
}

// Special files and generated inputs too large to commit.
func TestHostileSpecialAndLargeInputs(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "in.fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	gates := filepath.Join("testdata", "hostile", "gates-empty.json")
	results := filepath.Join(dir, "results")
	require.NoError(t, os.Mkdir(results, 0o755))
	require.NoError(t, os.Symlink("/dev/zero", filepath.Join(results, "zero.csv")))
	cycle := cycleWorkload(100_000)
	tests := []struct {
		name, stdin string
		args        []string
		stderr      string
		maxStderr   int
	}{
		{"gate: a FIFO as gates file", "", []string{"gate", "--root", dir, "--gates", fifo}, "named pipe (FIFO), not a regular file", 0},
		{"gate: a link to /dev/zero in the results", "", []string{"gate", "--root", dir, "--gates", gates, "--results", results}, "zero.csv: leads to /dev/zero", 0},
		{"report: a link to /dev/zero in the results", "", []string{"report", "--results", results}, "zero.csv: leads to /dev/zero", 0},
		{"egraph: 10,000 identical leaves", identicalLeavesJSON(10000, ""), []string{"egraph", "-"}, "49995000 candidate pairs", 0},
		{"plan: a 100,000-wave cycle", cycle, []string{"plan", "-"}, "... 99980 more -> 0)", 1000},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var errs string
			var code int
			memcheck.Check(t, memcheck.Bound{Base: 16 << 20, PerByte: 256}, len(tc.stdin), func() { _, errs, code = runCLI(t, tc.stdin, tc.args...) })
			assert.Equal(t, exitFailure, code, errs)
			assert.Contains(t, errs, tc.stderr)
			assert.Contains(t, errs, "Fix:")
			if tc.maxStderr > 0 {
				assert.Less(t, len(errs), tc.maxStderr)
			}
		})
	}
}

// cycleWorkload is a plan workload whose n waves form one cycle.
func cycleWorkload(n int) string {
	var b strings.Builder
	b.WriteString(`{"analysis":"dataflow","device":"h100","launch_overhead_ns":4000,"graph":{"node_count":10,"edge_count":10,"bytes_per_node":8,"bytes_per_edge":8},"schedule_sample":{"dispatch_cost_ns":1000,"frontier_density":0.5,"readback_bytes":4},"waves":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"id":%d,"frontier_bytes":1,"scratch_bytes":1,"output_bytes":1}`, i)
	}
	b.WriteString(`],"dependencies":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"before":%d,"after":%d}`, i, (i+1)%n)
	}
	b.WriteString(`]}`)
	return b.String()
}

// fuseStagesJSON is a fuse input of n stages.
func fuseStagesJSON(n int) string {
	var b strings.Builder
	b.WriteString(`{"max_group_bytes": 1000000, "stages": [`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"id":%d,"layout_hash":%d,"input_bytes":64,"output_bytes":32,"scratch_bytes":8,"requires_host_materialization":false}`, i, i%3)
	}
	b.WriteString(`]}`)
	return b.String()
}

// A large input is decoded once: the whole run of fuse --json allocates
// a small multiple of the input (about 24 bytes per input byte, output
// included). Measured on a 10^6-stage input of 121 MB, gpuplan fuse peaked
// at 347 MB resident, against 1.24 GB with the second, generic decode it
// used to make for the required-field check.
func TestLargeInputIsDecodedOnce(t *testing.T) {
	in := fuseStagesJSON(100_000)
	var code int
	memcheck.Check(t, memcheck.Bound{Base: 4 << 20, PerByte: 40}, len(in), func() { _, _, code = runCLI(t, in, "fuse", "--json", "-") })
	assert.Equal(t, exitOK, code)
}

// BenchmarkHostileCorpus measures the time and memory of every corpus case
// and of the large generated inputs (the 10^6-stage fuse input is the
// issue's 10^6-element case).
func BenchmarkHostileCorpus(b *testing.B) {
	for _, tc := range hostileCases() {
		b.Run(tc.name, func(b *testing.B) {
			args := hostileArgs(b, tc.args)
			b.ReportAllocs()
			for b.Loop() {
				runCLI(b, "", args...)
			}
		})
	}
	large := []struct {
		name, stdin string
		args        []string
	}{
		{"egraph 10,000 identical leaves", identicalLeavesJSON(10000, ""), []string{"egraph", "-"}},
		{"plan 100,000-wave cycle", cycleWorkload(100_000), []string{"plan", "-"}},
		{"fuse 10^6 stages", fuseStagesJSON(1_000_000), []string{"fuse", "--json", "-"}},
	}
	for _, l := range large {
		b.Run(l.name, func(b *testing.B) {
			b.SetBytes(int64(len(l.stdin)))
			b.ReportAllocs()
			for b.Loop() {
				runCLI(b, l.stdin, l.args...)
			}
		})
	}
}
