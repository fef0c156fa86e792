package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuplan/gpuplan/internal/graphbudget"
	"github.com/gpuplan/gpuplan/internal/quote"
)

// withHostMemory makes the commands budget their graphs against m for the
// rest of the test, as on a machine or under a limit with that memory.
func withHostMemory(t *testing.T, m graphbudget.Memory) {
	t.Helper()
	saved := hostMemory
	hostMemory = func() graphbudget.Memory { return m }
	t.Cleanup(func() { hostMemory = saved })
}

// The memories the reproducers run against: a 23 GB machine, and a
// process under ulimit -v 4000000 (the address space its Go runtime maps
// already taken off).
var (
	host23GB     = graphbudget.Memory{Bytes: 23_000_000_000}
	underUlimitV = graphbudget.Memory{Bytes: 2_800_000_000, Bound: "the address-space limit of 4096000000 bytes (ulimit -v)"}
)

// reproCase is one reproducer: a command, its standard input, the host
// memory it budgets against (zero: the real one) and whether it runs from
// an empty directory outside the checkout. "@name" in args is as in
// hostileCase.
type reproCase struct {
	name     string
	args     []string
	stdin    string
	memory   graphbudget.Memory
	outside  bool
	code     int
	stderr   []string
	noStderr []string
	// maxStderr, when set, bounds the bytes of standard error: an echo of
	// a long input is cut.
	maxStderr int
	// progress says that progress lines come before the one error line.
	progress bool
}

func reproCases() []reproCase {
	wraps := func(cmd ...string) []string { return cmd }
	return []reproCase{
		// Graph sizes whose products wrap 64 bits.
		{name: "partition: road:4294967296", args: wraps("partition", "--device", "h200", "--graph", "road:4294967296"), code: exitFailure,
			stderr: []string{"graph spec road:4294967296: its road vertices do not fit 64-bit arithmetic"}},
		{name: "partition: grid:8589934592", args: wraps("partition", "--device", "h200", "--graph", "grid:8589934592"), code: exitFailure,
			stderr: []string{"graph spec grid:8589934592: its grid vertices do not fit 64-bit arithmetic"}},
		{name: "bench frontier: grid:4294967296, before any device", args: wraps("bench", "frontier", "--graph", "grid:4294967296"), code: exitFailure,
			stderr: []string{"gpuplan bench: graph spec grid:4294967296: its grid vertices do not fit 64-bit arithmetic"}, noStderr: []string{"CUDA"}},
		{name: "bench frontier: road:4294967296", args: wraps("bench", "frontier", "--graph", "road:4294967296"), code: exitFailure,
			stderr: []string{"graph spec road:4294967296: its road vertices do not fit"}, noStderr: []string{"CUDA"}},
		{name: "bench frontier: grid:8589934592", args: wraps("bench", "frontier", "--graph", "grid:8589934592"), code: exitFailure,
			stderr: []string{"graph spec grid:8589934592: its grid vertices do not fit"}, noStderr: []string{"CUDA"}},
		{name: "bench frontier --devices 2: grid:4294967296", args: wraps("bench", "frontier", "--graph", "grid:4294967296", "--devices", "2"), code: exitFailure,
			stderr: []string{"graph spec grid:4294967296: its grid vertices do not fit"}, noStderr: []string{"CUDA"}},

		// Graphs larger than the memory: refused before anything is built
		// or a device opened.
		{name: "bench frontier: kron:26 on 23 GB", args: wraps("bench", "frontier", "--graph", "kron:26", "--build-on", "cpu"), memory: host23GB, code: exitFailure,
			stderr: []string{"graph spec kron:26 needs about 39996882964 bytes of host memory to build, but 23000000000 are available"}, noStderr: []string{"CUDA"}},
		{name: "bench frontier: grid:32767 on 23 GB", args: wraps("bench", "frontier", "--graph", "grid:32767"), memory: host23GB, code: exitFailure,
			stderr: []string{"graph spec grid:32767 needs about 51536461888 bytes"}},
		{name: "bench frontier: rgg:200000000:8 on 23 GB", args: wraps("bench", "frontier", "--graph", "rgg:200000000:8"), memory: host23GB, code: exitFailure,
			stderr: []string{"graph spec rgg:200000000:8 needs about 30080000008 bytes"}},
		{name: "partition: kron:26 on 23 GB", args: wraps("partition", "--device", "h200", "--graph", "kron:26"), memory: host23GB, code: exitFailure,
			stderr: []string{"graph spec kron:26 needs about 39996882964 bytes"}},
		{name: "bfs: grid:32767 on 23 GB", args: wraps("bfs", "--cpu", "--graph", "grid:32767"), memory: host23GB, code: exitFailure,
			stderr: []string{"graph spec grid:32767 needs about 25768230944 bytes"}},
		{name: "bfs: rgg:200000000:8 on 23 GB", args: wraps("bfs", "--cpu", "--graph", "rgg:200000000:8"), memory: host23GB, code: exitFailure,
			stderr: []string{"graph spec rgg:200000000:8 needs about 20800000000 bytes"}},
		{name: "bfs: rgg:200000000:8 under ulimit -v", args: wraps("bfs", "--cpu", "--graph", "rgg:200000000:8"), memory: underUlimitV, code: exitFailure,
			stderr: []string{"but 2800000000 are available within the address-space limit of 4096000000 bytes (ulimit -v). Fix: ask for a smaller graph, or raise that limit"}},
		{name: "egraph rebuild: gen:100000000 under ulimit -v", args: wraps("egraph", "rebuild", "gen:100000000"), memory: underUlimitV, code: exitFailure,
			stderr: []string{"gen:100000000 needs about 12800000000 bytes of host memory to build, but 2800000000 are available within the address-space limit"}},
		{name: "bench egraph: gen:100000000 under ulimit -v", args: wraps("bench", "egraph", "--egraph", "gen:100000000"), memory: underUlimitV, code: exitFailure,
			stderr: []string{"--egraph gen:100000000 needs about 12800000000 bytes"}, noStderr: []string{"CUDA", "e-nodes"}},
		{name: "bench kron: scale 26 with its CPU reference on 23 GB", args: wraps("bench", "kron", "--scale", "26"), memory: host23GB, code: exitFailure,
			stderr: []string{"--scale 26 at --edge-factor 16 needs about 39996882964 bytes of host memory for the CPU reference build", "Fix: add --cpu-samples -1", "needs about 18253611024 bytes"}},
		{name: "bench kron: scale 28 without a CPU build on 23 GB", args: wraps("bench", "kron", "--scale", "28", "--cpu-samples", "-1"), memory: host23GB, code: exitFailure,
			stderr: []string{"--scale 28 at --edge-factor 16 needs about 73014444048 bytes"}, noStderr: []string{"--cpu-samples -1"}},

		// Launch shapes.
		{name: "diagnose: --block missing", args: wraps("diagnose", "--device", "h200", "--grid", "1,65536,1"), code: exitUsage,
			stderr: []string{"--block is required beside --grid"}},

		// Text after the closing brace of a JSON input, and claims that
		// would hold on a slower candidate.
		{name: "devices: text after the profile", args: wraps("devices", "--device-file", "@device-trailing-text.json"), code: exitFailure,
			stderr: []string{"trailing data after the JSON value at line 2, column 1 (byte 827)"}},
		{name: "devices: a NUL after {}", args: wraps("devices", "--device-file", "@device-nul-after-object.json"), code: exitFailure,
			stderr: []string{"trailing data after the JSON value at line 1, column 3 (byte 2)"}},
		{name: "gate: text after the claims", args: wraps("gate", "--root", "@root", "--gates", "@gates-trailing-text.json"), code: exitFailure,
			stderr: []string{"gates-trailing-text.json: trailing data after the JSON value at line 2, column 1 (byte 15)"}},
		{name: "plan: text after the workload", args: wraps("plan", "@plan-trailing-text.json"), code: exitFailure,
			stderr: []string{"plan-trailing-text.json: trailing data after the JSON value at line 66, column 1 (byte 1200)"}},
		{name: "gate: --gates - reads standard input", args: wraps("gate", "--root", "@root", "--gates", "-"), stdin: `{"claims": []} x`, code: exitFailure,
			stderr: []string{"<stdin>: trailing data after the JSON value at line 1, column 16 (byte 15)"}},
		{name: "gate: min_speedup 0.5 without no_regression", args: wraps("gate", "--root", "@root", "--gates", "@gates-speedup-below-one.json"), code: exitFailure,
			stderr: []string{`field "claims[0].min_speedup"`, "min_speedup 0.5, below 1", `add "no_regression": true`}},
		{name: "gate: a --root that is not there", args: wraps("gate", "--root", "@no-such-root"), code: exitFailure,
			stderr: []string{`--root "testdata/hostile/no-such-root": no such directory`}},

		// bench's flags.
		{name: "bench: --metrics with --devices 2", args: wraps("bench", "frontier", "--graph", "grid:4", "--devices", "2", "--metrics", "m.prom"), code: exitUsage,
			stderr: []string{"--metrics does not apply with --devices 2"}},
		{name: "bench: --mega-ahead with --devices 2", args: wraps("bench", "frontier", "--graph", "grid:4", "--devices", "2", "--mega-ahead", "2"), code: exitUsage,
			stderr: []string{"--mega-ahead does not apply with --devices 2"}},
		{name: "bench: --arms with --simulate-devices 2", args: wraps("bench", "frontier", "--graph", "grid:4", "--simulate-devices", "2", "--arms", "host-loop"), code: exitUsage,
			stderr: []string{"--arms does not apply with --simulate-devices 2"}},
		{name: "bench egraph outside a checkout: its flags first", args: wraps("bench", "egraph", "--egraph", "gen:10", "-o", "x.csv", "--samples", "0"), outside: true, code: exitUsage,
			stderr: []string{"--samples 0 is outside 1..100000"}},
		{name: "bench egraph outside a checkout: no go.mod", args: wraps("bench", "egraph", "--egraph", "gen:10", "-o", "x.csv"), outside: true, code: exitFailure,
			stderr: []string{"holds go.mod, so the module root is unknown"}},
	}
}

// flagReproCases are reproducers of the command line itself: flag names,
// values and commands that package flag, or a list flag, used to repeat
// raw or whole.
func flagReproCases() []reproCase {
	long := strings.Repeat("a", 1000)
	wraps := func(cmd ...string) []string { return cmd }
	return []reproCase{
		{name: "an escape in an undefined flag", args: wraps("devices", "--\x1b[2Jx"), code: exitUsage,
			stderr: []string{`flag provided but not defined: -"\x1b[2Jx"`}},
		{name: "a 1000-byte flag value", args: wraps("occupancy", "--device", "h200", "--regs", "32", "--block", long), code: exitUsage,
			stderr: []string{`aaaa"... for flag -block: parse error`}, maxStderr: 512},
		{name: "a 1000-byte undefined flag", args: wraps("devices", "--"+long), code: exitUsage, maxStderr: 512},
		{name: "a 1000-byte command", args: wraps(long), code: exitUsage, stderr: []string{"unknown command"}, maxStderr: 512},
		{name: "serve: a --graph without a name has one fix", args: wraps("serve", "--graph", "kron:8"), code: exitUsage,
			stderr: []string{`--graph: "kron:8" is not NAME=SPEC. Fix: name the graph`}, noStderr: []string{"invalid value", "Fix: run"}},
		{name: "serve: a 1000-byte graph name", args: wraps("serve", "--graph", long+"=kron:8"), code: exitUsage,
			stderr: []string{"graph name"}, maxStderr: 512},
		{name: "serve: a 1000-byte log level", args: wraps("serve", "--graph", "k=grid:4", "--log-level", long), code: exitUsage,
			stderr: []string{"gpuplan serve: --log-level"}, maxStderr: 512},
		{name: "bench: a 1000-byte peer name", args: wraps("bench", "frontier", "--graph", "grid:8", "--peer", long+"=x"), code: exitUsage,
			stderr: []string{"--peer: unknown peer"}, maxStderr: 512},
		{name: "load: a 1000-byte client list", args: wraps("load", "--graph", "kron:8", "--clients", long), code: exitUsage, maxStderr: 512},
		{name: "load: an empty client count", args: wraps("load", "--graph", "kron:8", "--clients", "1,,2"), code: exitUsage,
			stderr: []string{`--clients: "" is not a count`}},
		{name: "load: --source-root without -o", args: wraps("load", "--graph", "kron:8", "--source-root", "."), code: exitUsage,
			stderr: []string{"--source-root names the code whose fingerprint -o records"}},
		{name: "load: -o a directory", args: wraps("load", "--graph", "kron:8", "-o", "@tmp"), code: exitUsage,
			stderr: []string{"is a directory. Fix: name a file to write"}},
		{name: "bfs: --roots 0", args: wraps("bfs", "--cpu", "--graph", "grid:8", "--roots", "0"), code: exitUsage, stderr: []string{"--roots 0 is outside 1..65536. Fix:"}},
		{name: "bfs: --max-depth -2", args: wraps("bfs", "--cpu", "--graph", "grid:8", "--max-depth", "-2"), code: exitUsage, stderr: []string{"--max-depth -2 is outside"}},
		{name: "bfs: --format xml", args: wraps("bfs", "--cpu", "--graph", "grid:8", "--format", "xml"), code: exitUsage, stderr: []string{`--format "xml" is not csv`}},
		{name: "bfs: --device -1", args: wraps("bfs", "--cpu", "--graph", "grid:8", "--device", "-1"), code: exitUsage, stderr: []string{"--device -1 is negative"}},
		{name: "bfs: no --graph", args: wraps("bfs", "--cpu"), code: exitUsage, stderr: []string{"--graph is required"}},
		{name: "bfs: an empty root id", args: wraps("bfs", "--cpu", "--graph", "grid:8", "--root-ids", "1,,2"), code: exitUsage,
			stderr: []string{`gpuplan bfs: --root-ids: "" is not a vertex id`}},
		{name: "bfs: -o a directory", args: wraps("bfs", "--cpu", "--graph", "grid:8", "-o", "@tmp"), code: exitUsage,
			stderr: []string{"-o ", "is a directory. Fix: name a file to write"}, noStderr: []string{"answered"}},
		{name: "bfs: 64 roots of a million vertices as JSON, before any traversal", args: wraps("bfs", "--cpu", "--graph", "grid:1000", "--roots", "64", "--json"), code: exitUsage,
			stderr: []string{"are 64000000 rows, too many for standard output"}, noStderr: []string{"answered"}, progress: true},
		{name: "bfs: 2000 roots of a million vertices under ulimit -v", args: wraps("bfs", "--cpu", "--graph", "grid:1000", "--roots", "2000", "-o", "@tmp/x.bin"), memory: underUlimitV, code: exitFailure,
			stderr:   []string{"the answers of 2000 roots over 1000000 vertices or targets each need about 8000000000 bytes of host memory and their traversal about 8040416000 more, 16040416000 in all, but 2800000000 are available within the address-space limit"},
			noStderr: []string{"answered", "gpuplan bfs: gpuplan bfs"}, progress: true},
		{name: "bfs: an escape in -o", args: wraps("bfs", "--cpu", "--graph", "grid:8", "-o", "@tmp/no/x\x1b[2J\n.csv"), code: exitFailure,
			stderr: []string{`x\x1b[2J\n.csv": open: no such file or directory. Fix:`}, progress: true},
		{name: "egraph rebuild: an escape in -o", args: wraps("egraph", "rebuild", "gen:10", "-o", "@tmp/no/x\x1b[2J.txt"), code: exitFailure,
			stderr: []string{`x\x1b[2J.txt": open: no such file or directory`}},
		{name: "report: an escape in --output", args: wraps("report", "--output", "@tmp/no/x\x1b[2J.md", "../../evidence/testdata/results/grid-demo.csv"), code: exitFailure,
			stderr: []string{`x\x1b[2J.md": open: no such file or directory`}},
		{name: "partition: --root -2", args: wraps("partition", "--device", "h200", "--graph", "grid:8", "--root", "-2"), code: exitUsage,
			stderr: []string{"--root -2 is negative"}},
	}
}

// TestHostileReproducers runs each reproducer of the hardening issues in
// process: it exits with its class (1 bad input, 2 bad invocation), in one
// line that names the flag, field, file and line or byte, and ends with a
// fix.
func TestHostileReproducers(t *testing.T) {
	for _, tc := range append(reproCases(), flagReproCases()...) {
		t.Run(tc.name, func(t *testing.T) { runRepro(t, tc) })
	}
}

// runRepro runs one reproducer and checks its refusal.
func runRepro(t *testing.T, tc reproCase) {
	t.Helper()
	args := hostileArgs(t, tc.args)
	if tc.outside {
		for i, a := range args {
			if strings.HasPrefix(a, "testdata") {
				abs, err := filepath.Abs(a)
				require.NoError(t, err)
				args[i] = abs
			}
		}
		t.Chdir(t.TempDir())
	}
	if tc.memory != (graphbudget.Memory{}) {
		withHostMemory(t, tc.memory)
	}
	out, errs, code := runCLI(t, tc.stdin, args...)
	require.Equal(t, tc.code, code, "stdout:\n%s\nstderr:\n%s", out, errs)
	for _, s := range tc.stderr {
		assert.Contains(t, errs, s)
	}
	for _, s := range tc.noStderr {
		assert.NotContains(t, errs, s)
	}
	assert.Contains(t, errs, "Fix:")
	if tc.maxStderr > 0 {
		assert.LessOrEqual(t, len(errs), tc.maxStderr, errs)
	}
	lines := strings.Split(strings.TrimSpace(errs), "\n")
	if tc.progress {
		lines = lines[len(lines)-1:]
		assert.Contains(t, lines[0], "Fix:")
	}
	assert.Len(t, lines, 1, "one error line: %q", errs)
	assertNoForgedLine(t, out)
	assertNoForgedLine(t, errs)
}

// TestTenMegabyteVertexID reads an edge list whose second line's vertex id
// is 10 MB long: the refusal names the file and line and quotes the id cut
// to about 200 bytes.
func TestTenMegabyteVertexID(t *testing.T) {
	path := filepath.Join(t.TempDir(), "long-id.el")
	require.NoError(t, os.WriteFile(path, []byte("0 1\n"+strings.Repeat("9", 10<<20)+" 2\n"), 0o644))
	quoted := regexp.MustCompile(`vertex id ("9+")\.\.\. is not an integer`)
	for _, args := range [][]string{
		{"partition", "--device", "h200", "--graph", "file:" + path},
		{"bfs", "--cpu", "--graph", "file:" + path},
	} {
		t.Run(args[0], func(t *testing.T) {
			_, errs, code := runCLI(t, "", args...)
			require.Equal(t, exitFailure, code, errs)
			assert.Contains(t, errs, "long-id.el:2: vertex id ")
			m := quoted.FindStringSubmatch(errs)
			require.NotNil(t, m, errs)
			assert.LessOrEqual(t, len(m[1])+len("..."), quote.MaxEcho)
			assert.Greater(t, len(m[1]), quote.MaxEcho/2)
			assert.Less(t, len(errs), 512)
			assert.Contains(t, errs, "Fix:")
		})
	}
}
