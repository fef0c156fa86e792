//go:build !cuda

package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpuplan/gpuplan/evidence"
	"github.com/gpuplan/gpuplan/internal/input"
	"github.com/gpuplan/gpuplan/internal/ptxsym"
	"github.com/gpuplan/gpuplan/workloads/wavedag"
)

const quickstart = "../../examples/quickstart/quickstart.json"

// A build without CUDA runs the examples on the CPU emulation: the plan,
// every arm checked against the Go references, the table, the evidence and
// the outputs.
func TestRunQuickstartOnTheEmulation(t *testing.T) {
	dir := t.TempDir()
	csv, outDir := filepath.Join(dir, "run.csv"), filepath.Join(dir, "out")
	out, errs, code := runCLI(t, "", "run", quickstart, "--samples", "10", "-o", csv, "--out", outDir, "--source-root", "../..")
	require.Equal(t, exitOK, code, errs)
	for _, want := range []string{"Megakernel plan: quickstart", "Tile plan (persistent waits arm)", "Run: quickstart on the CPU emulation",
		"streams", "graph-pdl", "barriers", "waits", "4 launches -> 4", "counter waits ->", "every sample checked against the CPU reference"} {
		require.Contains(t, out, want)
	}
	f, err := os.Open(csv)
	require.NoError(t, err)
	defer f.Close()
	rows, err := evidence.ReadSamples(csv, f)
	require.NoError(t, err)
	require.Len(t, rows, 10*len(wavedag.Arms()))
	for _, r := range rows {
		require.Equal(t, "quickstart", r.Workload.Name)
		require.Equal(t, uint64(4), r.Workload.Iterations)
		require.Equal(t, rows[0].Checksum, r.Checksum)
	}
	manifest, err := os.ReadFile(filepath.Join(outDir, wavedag.OutputsManifest))
	require.NoError(t, err)
	var m struct {
		Outputs []wavedag.OutputFile `json:"outputs"`
	}
	require.NoError(t, json.Unmarshal(manifest, &m))
	require.Len(t, m.Outputs, 1)
	y, err := os.ReadFile(filepath.Join(outDir, m.Outputs[0].File))
	require.NoError(t, err)
	require.Len(t, y, m.Outputs[0].Bytes)
	require.NotEqual(t, make([]byte, len(y)), y, "the outputs are not zeros")
}

func TestRunGeneratedAndTools(t *testing.T) {
	out, errs, code := runCLI(t, "", "run", "gen:chain:30:3", "--samples", "2", "--arms", "waits,streams", "--source-root", "../..")
	require.Equal(t, exitOK, code, errs)
	require.Contains(t, out, "Run: chain-30-3")

	header, _, code := runCLI(t, "", "run", "--header")
	require.Equal(t, exitOK, code)
	require.Equal(t, string(wavedag.Header()), header)
	require.Contains(t, header, "#define GP_WAVE")

	dir := t.TempDir()
	_, errs, code = runCLI(t, "", "run", "gen:wide:40:80:3", "--emit-ptx", dir)
	require.Equal(t, exitOK, code, errs)
	for _, sm := range []string{"sm_80", "sm_90"} {
		for _, name := range []string{"synthetic.ptx", wavedag.LaunchInputName, wavedag.DispatchInputName, wavedag.RuntimeInputName} {
			data, err := os.ReadFile(filepath.Join(dir, sm, name))
			require.NoError(t, err)
			m, err := ptxsym.Parse(data)
			require.NoError(t, err, name)
			if name == wavedag.LaunchInputName {
				require.Equal(t, sm, m.Target)
			}
		}
	}
	dump := filepath.Join(dir, "wide.json")
	_, errs, code = runCLI(t, "", "run", "gen:wide:40:80:3", "--dump-workload", dump)
	require.Equal(t, exitOK, code, errs)
	js, err := os.ReadFile(dump)
	require.NoError(t, err)
	require.True(t, json.Valid(js))
}

func TestRunRefuses(t *testing.T) {
	dir := t.TempDir()
	noModule := filepath.Join(dir, "plain.json")
	require.NoError(t, os.WriteFile(noModule, defaultPlanWorkload, 0o644))
	// A module of functions without Go references cannot run on the
	// emulation.
	foreign := filepath.Join(dir, "foreign.json")
	ptx, err := os.ReadFile("../../workloads/wavedag/testdata/kernels/testwaves.ptx")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "testwaves.ptx"), ptx, 0o644))
	require.NoError(t, os.WriteFile(foreign, []byte(`{"device": "h200", "module": "testwaves.ptx",
		"buffers": [{"name": "a", "bytes": 1024}], "outputs": [{"buffer": "a", "type": "u32"}],
		"waves": [{"id": 0, "kernel": {"function": "t_seed", "tiles": 1, "block": 256, "args": [{"buffer": "a"}, {"u32": 256}, {"u32": 1}]}}],
		"dependencies": []}`), 0o644))
	cases := []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"no workload", []string{"run"}, exitUsage, []string{"expected one workload file or gen:SPEC"}},
		{"bad samples", []string{"run", quickstart, "--samples", "0"}, exitUsage, []string{"--samples 0 is outside 1..100000"}},
		{"bad arm", []string{"run", quickstart, "--arms", "waits,fast"}, exitUsage, []string{`arm "fast" is unknown`}},
		{"bad watchdog", []string{"run", quickstart, "--watchdog", "0s"}, exitUsage, []string{"--watchdog 0s is outside"}},
		{"bad register cap", []string{"run", quickstart, "--max-regs", "300"}, exitUsage, []string{"--max-regs 300 is outside 16..255", "Fix:"}},
		{"register cap too low", []string{"run", quickstart, "--max-regs", "8"}, exitUsage, []string{"--max-regs 8 is outside"}},
		{"register cap not a count", []string{"run", quickstart, "--max-regs", "many"}, exitUsage, []string{"--max-regs many is neither auto nor a count", "Fix: use auto"}},
		{"bad spec", []string{"run", "gen:spiral:3"}, exitUsage, []string{"Fix:"}},
		{"no module", []string{"run", noModule}, exitFailure, []string{`field "module"`, "gpuplan plan plans it as it is"}},
		{"missing file", []string{"run", filepath.Join(dir, "nope.json")}, exitFailure, []string{"nope.json"}},
		{"no reference", []string{"run", foreign, "--samples", "2"}, exitFailure, []string{"this build has no CUDA", "Fix: make build-cuda"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, errs, code := runCLI(t, "", c.args...)
			require.Equal(t, c.code, code, errs)
			for _, w := range c.want {
				require.Contains(t, errs, w)
			}
			require.False(t, strings.Contains(errs, "panic"), errs)
		})
	}
}

// testChildEnv makes TestRunFindFaultChild run, in a child process of
// testChild: "gpuplan" runs gpuplan with the child's arguments, any
// other value is printed as the child's line.
const testChildEnv = "GPUPLAN_TEST_FAULT_CHILD"

// testChild makes findFaultWave run this test binary, as
// TestRunFindFaultChild in mode (see testChildEnv): an env's child.
func testChild(mode string) func(ctx context.Context, args []string) (*exec.Cmd, error) {
	return func(ctx context.Context, args []string) (*exec.Cmd, error) {
		cmd := exec.CommandContext(ctx, os.Args[0], append([]string{"-test.run=^TestRunFindFaultChild$", "-test.count=1", "--"}, args...)...)
		cmd.Env = append(os.Environ(), testChildEnv+"="+mode)
		return cmd, nil
	}
}

// TestRunFindFaultChild is the child process of testChild.
func TestRunFindFaultChild(t *testing.T) {
	switch mode := os.Getenv(testChildEnv); mode {
	case "":
		t.Skip("runs only in the child process of testChild")
	case "gpuplan":
		os.Exit(run(os.Stdout, os.Stderr, flag.Args()))
	default:
		fmt.Println(mode)
		os.Exit(exitOK)
	}
}

// --find-fault on the emulation, where no wave faults: one line, no plan.
func TestRunFindFaultOnTheEmulation(t *testing.T) {
	for _, spec := range []string{quickstart, "gen:chain:30:3"} {
		out, errs, code := runCLI(t, "", "run", spec, "--find-fault")
		require.Equal(t, exitOK, code, errs)
		require.Equal(t, "fault-wave: none\n", out)
		require.Contains(t, errs, "running the waves one at a time")
	}
	_, errs, code := runCLI(t, "", "run", "gen:spiral:3", "--find-fault")
	require.Equal(t, exitUsage, code)
	require.Contains(t, errs, "Fix:")
}

// The child process runs the run's workload, read from a file, generated,
// or read from standard input again.
func TestFindFaultWaveInAChild(t *testing.T) {
	qs, err := os.ReadFile(quickstart)
	require.NoError(t, err)
	cases := []struct {
		name, spec string
		stdin      string
		dir        string
		err        string
	}{
		{"file", quickstart, "", "", ""},
		{"generated", "gen:wide:40:80:3", "", "", ""},
		{"standard input", "-", string(qs), filepath.Dir(quickstart), ""},
		{"the child fails", filepath.Join(t.TempDir(), "gone.json"), "", "", "the child process failed (exit status 1): gpuplan run: "},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.dir != "" {
				t.Chdir(c.dir)
			}
			e := &env{stderr: io.Discard, stdin: strings.NewReader(c.stdin), inputLimit: input.DefaultJSONLimit, child: testChild("gpuplan")}
			o, _, err := parseRunArgs(e, []string{c.spec})
			require.NoError(t, err)
			src, err := loadRunProgram(e, c.spec)
			if c.err != "" {
				// The workload is gone; the child finds it gone too.
				require.Error(t, err)
				src = &runSource{p: mustLoad(t, quickstart)}
			} else {
				require.NoError(t, err)
			}
			v, err := findFaultWave(e, o, src)
			if c.err != "" {
				require.ErrorContains(t, err, c.err)
				require.ErrorContains(t, err, "gone.json")
				return
			}
			require.NoError(t, err)
			require.Equal(t, -1, v)
		})
	}
}

// runFailure names the wave the child finds, and keeps the fault as it
// was when the child cannot find it.
func TestRunFailureFindsTheWaveInAChild(t *testing.T) {
	p := mustLoad(t, quickstart)
	cases := []struct {
		name, child string
		wave        int
		label, log  string
	}{
		{"found", "fault-wave: 2", 2, p.WaveLabel(2), "in a child process"},
		{"none", "fault-wave: none", -1, "", "no wave faulted when the waves ran one at a time"},
		{"garbled", "fault-wave: 17", -1, "", "the faulting wave was not found: the child process named wave \"17\""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var logs strings.Builder
			e := &env{stderr: &logs, inputLimit: input.DefaultJSONLimit, child: testChild(c.child)}
			o, _, err := parseRunArgs(e, []string{quickstart})
			require.NoError(t, err)
			x, _, err := openRunExecutor(0, p)
			require.NoError(t, err)
			fault := &wavedag.FaultError{Arm: wavedag.ArmWaits, Program: p.Name(), Err: errors.New("illegal address")}
			err = runFailure(e, o, &runSource{p: p}, x, fault)
			require.Same(t, fault, err)
			require.Equal(t, c.wave, fault.Wave)
			require.Equal(t, c.label, fault.WaveLabel)
			require.Contains(t, logs.String(), c.log)
			if c.label != "" {
				require.Contains(t, err.Error(), "in "+c.label)
			}
		})
	}
}

// mustLoad loads the workload file path.
func mustLoad(t *testing.T, path string) *wavedag.Program {
	src, err := loadRunProgram(&env{inputLimit: input.DefaultJSONLimit}, path)
	require.NoError(t, err)
	return src.p
}
