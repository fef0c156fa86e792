//go:build cuda

package wavedag

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/internal/gputest"
)

// openGPU opens p on device 0, with its own executor.
func openGPU(t *testing.T, p *Program, opts Options) (*Session, *executor.Executor) {
	t.Helper()
	x := gputest.Open(t)
	s, err := Open(x, p, opts)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.Close()) })
	return s, x
}

func TestGPUArmsMatchTheReference(t *testing.T) {
	p := parseTest(t, testWorkload(t, nil))
	want, err := Reference(p, testFuncs())
	require.NoError(t, err)
	for _, grid := range []uint32{0, 1, 3} {
		s, x := openGPU(t, p, Options{Grid: grid})
		for round := range 3 {
			for _, arm := range DeviceArms(x) {
				require.NoError(t, s.Reset())
				r, err := s.Run(arm)
				require.NoError(t, err, "grid %d arm %s round %d", grid, arm, round)
				require.NoError(t, s.CheckPlan(r), "grid %d arm %s", grid, arm)
				got, err := s.Outputs()
				require.NoError(t, err)
				for i, o := range p.Workload.Outputs {
					require.NoError(t, Compare(o, got[i], want[i]), "grid %d arm %s round %d", grid, arm, round)
				}
			}
		}
	}
}

func TestGPUWatchdogReportsTheWaits(t *testing.T) {
	p := parseTest(t, testWorkload(t, nil))
	s, x := openGPU(t, p, Options{Watchdog: 200 * time.Millisecond})
	im := s.Image()
	bad := append([]byte(nil), im.Plan...)
	bad[im.Waits.Offset+uint64(p.Plan.Tiles.WaitStart[7])*waitWords*4] = 7 // wave 7 waits on itself
	require.NoError(t, x.Upload(s.planBuf, bad))
	t0 := time.Now()
	_, err := s.Run(ArmWaits)
	var we *WatchdogError
	require.ErrorAs(t, err, &we)
	require.Less(t, time.Since(t0), 5*time.Second, "the watchdog ends the run")
	require.NotEmpty(t, we.Records)
	require.Equal(t, 7, we.Records[0].Wave)
	t.Log(err)
	require.NoError(t, x.Upload(s.planBuf, im.Plan))
	require.NoError(t, s.Reset())
	r, err := s.Run(ArmWaits)
	require.NoError(t, err)
	require.NoError(t, s.CheckPlan(r))
}

// faultChildEnv makes TestGPUFaultChild run: it is set only in the
// process TestGPUFaultIsFoundOnAFreshContext starts.
const faultChildEnv = "WAVEDAG_FAULT_CHILD"

// faultingProgram is testWorkload with an illegal address: wave 3 reads
// blocks of 2^20 words from a producer it takes for 2^30 words long.
func faultingProgram(t *testing.T) *Program {
	return parseTest(t, testWorkload(t, func(w obj) {
		args := w["waves"].([]obj)[3]["kernel"].(obj)["args"].([]obj)
		args[3], args[4] = u32(1<<30), u32(1<<20)
	}))
}

// After a sticky fault this process cannot use CUDA again, not even in a
// fresh private context, so the wave is found in a new process: this test
// binary, running TestGPUFaultChild. Any GPU test after this one in the
// same process fails, so it stays the last of this file.
func TestGPUFaultIsFoundOnAFreshContext(t *testing.T) {
	p := faultingProgram(t)
	x, err := executor.Open(0, executor.Options{PrivateContext: true})
	if err != nil {
		gputest.Unavailable(t, err)
	}
	s, err := Open(x, p, Options{})
	require.NoError(t, err)
	_, err = s.Run(ArmStreams)
	var fe *FaultError
	require.ErrorAs(t, err, &fe)
	_ = s.Close()
	_ = x.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestGPUFaultChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), faultChildEnv+"=1")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "the child process:\n%s", out)
	require.Contains(t, strings.Split(string(out), "\n"), "fault-wave: 3", "the child process:\n%s", out)
}

// TestGPUFaultChild is the new process of
// TestGPUFaultIsFoundOnAFreshContext: it looks for the faulting wave and
// prints it.
func TestGPUFaultChild(t *testing.T) {
	if os.Getenv(faultChildEnv) == "" {
		t.Skip("runs only in the process TestGPUFaultIsFoundOnAFreshContext starts")
	}
	p := faultingProgram(t)
	x, err := executor.Open(0, executor.Options{PrivateContext: true})
	require.NoError(t, err, "a fresh process opens the device")
	defer x.Close()
	v, err := IsolateFault(x, p, Options{})
	require.NoError(t, err)
	fmt.Printf("fault-wave: %d\n", v)
}
