package main

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuplan/gpuplan/internal/input"
	"github.com/gpuplan/gpuplan/workloads/wavedag"
)

func TestParseFaultWave(t *testing.T) {
	cases := []struct {
		name string
		out  string
		want int
		err  string
	}{
		{"a wave", "fault-wave: 3\n", 3, ""},
		{"the first wave", "fault-wave: 0", 0, ""},
		{"the last wave", "fault-wave: 9\n", 9, ""},
		{"none", "fault-wave: none\n", -1, ""},
		{"surrounding space", "\n fault-wave: 4 \n\n", 4, ""},
		{"empty", "", -1, `printed "", not one "fault-wave:" line`},
		{"another line", "Megakernel plan: x\n", -1, "not one"},
		{"two lines", "fault-wave: 3\nfault-wave: 4\n", -1, "not one"},
		{"noise first", "warning\nfault-wave: 3\n", -1, "not one"},
		{"not a number", "fault-wave: three\n", -1, `named wave "three"`},
		{"negative", "fault-wave: -1\n", -1, `named wave "-1"`},
		{"signed", "fault-wave: +3\n", -1, `named wave "+3"`},
		{"past the waves", "fault-wave: 10\n", -1, "not one of the program's 10 waves"},
		{"huge", "fault-wave: 99999999999999999999\n", -1, "named wave"},
		{"no space", "fault-wave:3\n", -1, "not one"},
		{"a leading zero", "fault-wave: 03\n", -1, `named wave "03"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v, err := parseFaultWave(c.out, 10)
			if c.err != "" {
				require.ErrorContains(t, err, c.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, c.want, v)
		})
	}
}

func TestParseFaultWaveClipsLongOutput(t *testing.T) {
	_, err := parseFaultWave(strings.Repeat("x", 10*maxChildMessage), 10)
	require.Error(t, err)
	require.Less(t, len(err.Error()), 2*maxChildMessage)
}

func TestLastLine(t *testing.T) {
	cases := []struct{ in, want string }{
		{"", ""},
		{"one", "one"},
		{"bench: x\ngpuplan run: it failed. Fix: y\n\n", "gpuplan run: it failed. Fix: y"},
		{strings.Repeat("é", maxChildMessage), strings.Repeat("é", maxChildMessage/2) + "..."},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, lastLine(c.in))
	}
}

// The child's command line parses back to the session the run used, the
// workload last, after "--", whatever it looks like.
func TestFindFaultArgs(t *testing.T) {
	cases := []struct {
		name  string
		args  []string
		limit int64
	}{
		{"defaults", []string{"w.json"}, input.DefaultJSONLimit},
		{"session flags", []string{"gen:chain:30:3", "--grid", "12", "--streams", "3", "--max-regs", "64", "--watchdog", "1m30s", "--device", "2"}, input.DefaultJSONLimit},
		{"run-only flags dropped", []string{"w.json", "--samples", "7", "--arms", "waits", "--json", "-o", "x.csv", "--out", "dir", "--copy-mib", "8"}, input.DefaultJSONLimit},
		{"standard input", []string{"-", "--max-input-bytes", "4096"}, 4096},
		{"a workload named like a flag", []string{"--", "-w.json"}, input.DefaultJSONLimit},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := &env{stderr: &strings.Builder{}}
			o, _, err := parseRunArgs(e, c.args)
			require.NoError(t, err)
			require.Equal(t, c.limit, e.inputLimit)

			args := findFaultArgs(o, e.inputLimit)
			require.Equal(t, "run", args[0])
			require.Equal(t, []string{"--", o.spec}, args[len(args)-2:])
			child := &env{stderr: &strings.Builder{}}
			co, _, err := parseRunArgs(child, args[1:])
			require.NoError(t, err, "%q", args)
			require.True(t, co.findFault)
			require.Equal(t, o.spec, co.spec)
			require.Equal(t, o.device, co.device)
			require.Equal(t, o.bench.Session, co.bench.Session)
			require.Equal(t, e.inputLimit, child.inputLimit)
			require.False(t, co.json, "the child prints its line as text")
		})
	}
}

func TestFindFaultArgsKeepTheSession(t *testing.T) {
	o := &runOptions{spec: "w.json", device: 1, bench: wavedag.BenchConfig{Session: wavedag.Options{
		Grid: 8, Streams: 2, MaxRegisters: 48, Watchdog: 250 * time.Millisecond}}}
	require.Equal(t, []string{"run", "--find-fault", "--device", "1", "--grid", "8", "--streams", "2", "--max-regs", "48",
		"--watchdog", "250ms", "--max-input-bytes", "99", "--", "w.json"}, findFaultArgs(o, 99))
}

// FuzzParseFaultWave: any child output either names a wave of the program,
// none (-1), or is an error ending in no panic; a wave it names is one
// the output spells in decimal.
func FuzzParseFaultWave(f *testing.F) {
	for _, s := range []string{"fault-wave: 3\n", "fault-wave: none", "fault-wave: +3", "", "fault-wave: 99999999999999999999", "x\nfault-wave: 1"} {
		f.Add(s, 10)
	}
	f.Fuzz(func(t *testing.T, out string, waves int) {
		if waves < 1 || waves > 1<<20 {
			return
		}
		v, err := parseFaultWave(out, waves)
		switch {
		case err != nil:
			require.Equal(t, -1, v)
		case v == -1:
			require.Equal(t, faultWavePrefix+"none", strings.TrimSpace(out))
		default:
			require.Less(t, v, waves)
			require.Equal(t, faultWavePrefix+strconv.Itoa(v), strings.TrimSpace(out))
		}
	})
}
