package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/internal/input"
	"github.com/gpuplan/gpuplan/workloads/wavedag"
)

// faultWavePrefix starts the one line --find-fault prints.
const faultWavePrefix = "fault-wave: "

// findFaultTimeout bounds the child process that looks for the faulting
// wave: it links the program and runs each wave once.
const findFaultTimeout = 2 * time.Minute

// childCommand returns the command that runs gpuplan with args in a child
// process: e.child when set (tests: a test binary is not gpuplan), else
// this executable.
func (e *env) childCommand(ctx context.Context, args []string) (*exec.Cmd, error) {
	if e.child != nil {
		return e.child(ctx, args)
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	return exec.CommandContext(ctx, exe, args...), nil
}

// runFindFault is --find-fault: it runs p's waves one at a time, each
// waited for, and prints the first that faults (or none) as one line.
func runFindFault(e *env, o *runOptions, p *wavedag.Program) error {
	x, backend, err := openRunExecutor(o.device, p)
	if err != nil {
		return err
	}
	// After a fault the context is lost and closing it may fail; the
	// process exits next.
	defer func() { _ = x.Close() }()
	e.benchLogf("%s on %s: running the waves one at a time", p.Name(), backend)
	v, err := wavedag.IsolateFault(x, p, o.bench.Session)
	if err != nil {
		return err
	}
	found := "none"
	if v >= 0 {
		found = strconv.Itoa(v)
		e.benchLogf("%s faults", p.WaveLabel(v))
	}
	_, err = fmt.Fprintf(e.stdout, "%s%s\n", faultWavePrefix, found)
	return err
}

// runFailure reports a failed run. After a fault it looks for the wave in
// a child process, since this one cannot use CUDA again; after a hang it
// leaves the executor alone (its wait is still blocked) and the process
// exits.
func runFailure(e *env, o *runOptions, src *runSource, x *executor.Executor, err error) error {
	var hang *wavedag.HangError
	if errors.As(err, &hang) {
		return err
	}
	_ = x.Close()
	var fault *wavedag.FaultError
	if !errors.As(err, &fault) {
		return err
	}
	e.benchLogf("a kernel faulted in arm %s; running the waves one at a time in a child process to find it (this process cannot use CUDA again)", fault.Arm)
	v, ferr := findFaultWave(e, o, src)
	switch {
	case ferr != nil:
		e.benchLogf("the faulting wave was not found: %v. Fix: run gpuplan run --find-fault on the same workload, or find the access with compute-sanitizer --tool memcheck", ferr)
		v = -1
	case v < 0:
		e.benchLogf("no wave faulted when the waves ran one at a time: the fault needs them running together (in arm %s)", fault.Arm)
	default:
		fault.WaveLabel = src.p.WaveLabel(v)
	}
	fault.Wave = v
	return fault
}

// findFaultWave runs "gpuplan run --find-fault" on the run's workload in a
// child process, under findFaultTimeout, and returns the wave it names
// (-1: none).
func findFaultWave(e *env, o *runOptions, src *runSource) (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), findFaultTimeout)
	defer cancel()
	cmd, err := e.childCommand(ctx, findFaultArgs(o, e.inputLimit))
	if err != nil {
		return -1, err
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = time.Second
	if o.spec == input.Stdin {
		// The child reads the workload this process read.
		cmd.Stdin = bytes.NewReader(src.json)
	}
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return -1, fmt.Errorf("the child process did not finish within %s", findFaultTimeout)
		}
		return -1, fmt.Errorf("the child process failed (%v): %s", err, lastLine(stderr.String()))
	}
	return parseFaultWave(stdout.String(), src.p.Waves())
}

// findFaultArgs is the child's command line: the run's workload and the
// flags that shape its session, with --find-fault.
func findFaultArgs(o *runOptions, inputLimit int64) []string {
	s := o.bench.Session
	return []string{"run", "--find-fault",
		"--device", strconv.Itoa(o.device),
		"--grid", strconv.FormatUint(uint64(s.Grid), 10),
		"--streams", strconv.Itoa(s.Streams),
		"--max-regs", strconv.Itoa(s.MaxRegisters),
		"--watchdog", s.Watchdog.String(),
		"--" + maxInputFlag, strconv.FormatInt(inputLimit, 10),
		"--", o.spec}
}

// parseFaultWave reads the line --find-fault prints for a program of
// waves waves: the wave, or -1 for none.
func parseFaultWave(out string, waves int) (int, error) {
	line := strings.TrimSpace(out)
	found, ok := strings.CutPrefix(line, faultWavePrefix)
	if !ok || strings.ContainsAny(found, "\r\n") {
		return -1, fmt.Errorf("the child process printed %q, not one %q line", clip(line), strings.TrimSpace(faultWavePrefix))
	}
	if found == "none" {
		return -1, nil
	}
	v, err := strconv.ParseUint(found, 10, 31)
	if err != nil || v >= uint64(waves) || strconv.FormatUint(v, 10) != found {
		return -1, fmt.Errorf("the child process named wave %q, not one of the program's %d waves", found, waves)
	}
	return int(v), nil
}

// maxChildMessage bounds the child's output quoted in a message.
const maxChildMessage = 500

// lastLine is the last non-empty line of s, clipped.
func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = strings.TrimSpace(s[i+1:])
	}
	return clip(s)
}

// clip bounds s to maxChildMessage bytes.
func clip(s string) string {
	if len(s) <= maxChildMessage {
		return s
	}
	return strings.ToValidUTF8(s[:maxChildMessage], "") + "..."
}
