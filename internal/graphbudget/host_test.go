package graphbudget

import (
	"errors"
	"fmt"
	"os"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuplan/gpuplan/frontier"
)

// file is a file of a test file system.
func file(s string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(s)} }

// The files every case below starts from: 20 GiB free on the machine.
const meminfo20GiB = "MemTotal:       24000000 kB\nMemAvailable:   20971520 kB\n"

func TestHostMemory(t *testing.T) {
	const gib = 1 << 30
	tests := []struct {
		name      string
		files     fstest.MapFS
		asLimit   uint64
		wantBytes uint64
		wantBound string
	}{
		{name: "nothing known", files: fstest.MapFS{}},
		{name: "MemAvailable only", files: fstest.MapFS{"proc/meminfo": file(meminfo20GiB)}, wantBytes: 20 * gib},
		{
			name: "a cgroup v2 limit below the machine's free memory",
			files: fstest.MapFS{
				"proc/meminfo":                             file(meminfo20GiB),
				"proc/self/cgroup":                         file("0::/ci/job\n"),
				"sys/fs/cgroup/ci/job/memory.max":          file("8589934592\n"),
				"sys/fs/cgroup/ci/job/memory.current":      file("3221225472\n"),
				"sys/fs/cgroup/ci/job/memory.stat":         file("anon 1073741824\ninactive_file 2147483648\nactive_file 5\n"),
				"sys/fs/cgroup/ci/memory.max":              file("max\n"),
				"sys/fs/cgroup/ci/memory.current":          file("3221225472\n"),
				"sys/fs/cgroup/cgroup.controllers":         file("memory\n"),
				"sys/fs/cgroup/unified/cgroup.controllers": file(""),
			},
			// 8 GiB less the 1 GiB that cannot be reclaimed.
			wantBytes: 7 * gib,
			wantBound: "the cgroup memory limit of 8589934592 bytes (/sys/fs/cgroup/ci/job/memory.max)",
		},
		{
			name: "a parent cgroup's limit is lower",
			files: fstest.MapFS{
				"proc/meminfo":                         file(meminfo20GiB),
				"proc/self/cgroup":                     file("0::/a/b\n"),
				"sys/fs/cgroup/a/b/memory.max":         file("17179869184\n"),
				"sys/fs/cgroup/a/b/memory.current":     file("1073741824\n"),
				"sys/fs/cgroup/a/memory.max":           file("4294967296\n"),
				"sys/fs/cgroup/a/memory.current":       file("1073741824\n"),
				"sys/fs/cgroup/a/b/memory.stat":        file("garbage\n"),
				"sys/fs/cgroup/a/memory.stat":          file("inactive_file lots\n"),
				"sys/fs/cgroup/a/b/memory.swap.max":    file("0\n"),
				"sys/fs/cgroup/a/b/memory.pressure":    file(""),
				"sys/fs/cgroup/a/b/cgroup.controllers": file("memory\n"),
			},
			wantBytes: 3 * gib,
			wantBound: "the cgroup memory limit of 4294967296 bytes (/sys/fs/cgroup/a/memory.max)",
		},
		{
			name: "a cgroup namespace's root under the unified mount beside v1",
			files: fstest.MapFS{
				"proc/meminfo":                         file(meminfo20GiB),
				"proc/self/cgroup":                     file("4:memory:/\n0::/\n"),
				"sys/fs/cgroup/unified/memory.max":     file("2147483648"),
				"sys/fs/cgroup/unified/memory.current": file("0"),
			},
			wantBytes: 2 * gib,
			wantBound: "the cgroup memory limit of 2147483648 bytes (/sys/fs/cgroup/unified/memory.max)",
		},
		{
			name: "a cgroup v1 memory controller",
			files: fstest.MapFS{
				"proc/meminfo":     file(meminfo20GiB),
				"proc/self/cgroup": file("9:name=systemd:/\n4:cpu,memory:/docker/abc\n1:cpuset:/\n"),
				"sys/fs/cgroup/memory/docker/abc/memory.limit_in_bytes": file("6442450944\n"),
				"sys/fs/cgroup/memory/docker/abc/memory.usage_in_bytes": file("2147483648\n"),
				"sys/fs/cgroup/memory/docker/abc/memory.stat":           file("cache 5\ninactive_file 1\ntotal_inactive_file 1073741824\n"),
				"sys/fs/cgroup/memory/docker/memory.limit_in_bytes":     file("9223372036854771712\n"),
				"sys/fs/cgroup/memory/docker/memory.usage_in_bytes":     file("2147483648\n"),
				"sys/fs/cgroup/memory/memory.limit_in_bytes":            file("9223372036854771712\n"),
				"sys/fs/cgroup/memory/memory.usage_in_bytes":            file("2147483648\n"),
			},
			wantBytes: 5 * gib,
			wantBound: "the cgroup memory limit of 6442450944 bytes (/sys/fs/cgroup/memory/docker/abc/memory.limit_in_bytes)",
		},
		{
			name: "v1 without a limit, and a path the mount does not show",
			files: fstest.MapFS{
				"proc/meminfo":     file(meminfo20GiB),
				"proc/self/cgroup": file("4:memory:/process_api/x\n"),
				"sys/fs/cgroup/memory/memory.limit_in_bytes": file("9223372036854771712\n"),
				"sys/fs/cgroup/memory/memory.usage_in_bytes": file("1\n"),
			},
			wantBytes: 20 * gib,
		},
		{
			name: "a cgroup over its limit leaves nothing",
			files: fstest.MapFS{
				"proc/meminfo":                      file(meminfo20GiB),
				"proc/self/cgroup":                  file("0::/full\n"),
				"sys/fs/cgroup/full/memory.max":     file("1073741824"),
				"sys/fs/cgroup/full/memory.current": file("2147483648"),
			},
			wantBytes: 1,
			wantBound: "the cgroup memory limit of 1073741824 bytes (/sys/fs/cgroup/full/memory.max)",
		},
		{
			name: "a cgroup limit without a usage is left out",
			files: fstest.MapFS{
				"proc/meminfo":                   file(meminfo20GiB),
				"proc/self/cgroup":               file("0::/x\nnot a line\n::\n"),
				"sys/fs/cgroup/x/memory.max":     file("1073741824"),
				"sys/fs/cgroup/x/memory.current": file("-"),
			},
			wantBytes: 20 * gib,
		},
		{
			name: "the address-space limit less what is mapped",
			files: fstest.MapFS{
				"proc/meminfo":    file(meminfo20GiB),
				"proc/self/statm": file("262144 1000 500 1 0 2000 0\n"),
			},
			asLimit:   4096000000,
			wantBytes: 4096000000 - 262144*4096,
			wantBound: "the address-space limit of 4096000000 bytes (ulimit -v)",
		},
		{
			name:      "the address-space limit with nothing else known",
			files:     fstest.MapFS{"proc/self/statm": file("bad\n")},
			asLimit:   3 * gib,
			wantBytes: 3 * gib,
			wantBound: "the address-space limit of 3221225472 bytes (ulimit -v)",
		},
		{
			name: "an address-space limit above the free memory",
			files: fstest.MapFS{
				"proc/meminfo":    file(meminfo20GiB),
				"proc/self/statm": file("1024 1 1 1 0 1 0\n"),
			},
			asLimit:   64 * gib,
			wantBytes: 20 * gib,
		},
		{
			name:      "all of the address space mapped",
			files:     fstest.MapFS{"proc/meminfo": file(meminfo20GiB), "proc/self/statm": file("1048576 1 1 1 0 1 0\n")},
			asLimit:   1 * gib,
			wantBytes: 1,
			wantBound: "the address-space limit of 1073741824 bytes (ulimit -v)",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := hostMemory(tc.files, tc.asLimit, 4096)
			assert.Equal(t, Memory{Bytes: tc.wantBytes, Bound: tc.wantBound}, got)
		})
	}
}

func TestHostIsWithinMemAvailable(t *testing.T) {
	m := Host()
	assert.Equal(t, m.Bytes, Available())
	if m.Bound == "" && m.Bytes > 0 {
		assert.Equal(t, m.Bytes, hostMemory(os.DirFS("/"), 0, 4096).Bytes, "unbounded: the machine's free memory")
	}
}

// TestExplainNamesTheBound checks that a refusal against a process limit
// names it and asks for it to be raised, and that Explain leaves other
// errors alone.
func TestExplainNamesTheBound(t *testing.T) {
	spec := frontier.Spec{Kind: "kron", Size: 26}
	ulimit := Memory{Bytes: 2_800_000_000, Bound: "the address-space limit of 4096000000 bytes (ulimit -v)"}
	tests := []struct {
		name string
		m    Memory
		err  error
		want string
	}{
		{"a process limit", ulimit, Check(spec, "kron:26", ulimit.Bytes, 0),
			"graph spec kron:26 needs about 30870077452 bytes of host memory to build, but 2800000000 are available within the address-space limit of 4096000000 bytes (ulimit -v). Fix: ask for a smaller graph, or raise that limit so that at least 34300086058 bytes are free within it"},
		{"the machine's free memory", Memory{Bytes: 2_800_000_000}, Check(spec, "kron:26", 2_800_000_000, 0),
			"graph spec kron:26 needs about 30870077452 bytes of host memory to build, but 2800000000 are available. Fix: ask for a smaller graph, or build it on a machine with at least 34300086058 bytes free"},
		{"a check against other bytes", ulimit, CheckBytes("gen:5", 100, 10),
			"gen:5 needs about 100 bytes of host memory to build, but 10 are available. Fix: ask for a smaller graph, or build it on a machine with at least 112 bytes free"},
		{"the check of an e-graph", ulimit, CheckBytes("gen:5", 1<<40, ulimit.Bytes),
			"gen:5 needs about 1099511627776 bytes of host memory to build, but 2800000000 are available within the address-space limit of 4096000000 bytes (ulimit -v). Fix: ask for a smaller graph, or raise that limit so that at least 1221679586418 bytes are free within it"},
		{"a wrapped error keeps its message", ulimit, fmt.Errorf("loading: %w", CheckBytes("gen:5", 1<<40, ulimit.Bytes)),
			"loading: gen:5 needs about 1099511627776 bytes of host memory to build, but 2800000000 are available. Fix: ask for a smaller graph, or build it on a machine with at least 1221679586418 bytes free"},
		{"another error", ulimit, errors.New("x. Fix: y"), "x. Fix: y"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.EqualError(t, tc.m.Explain(tc.err), tc.want)
		})
	}
	assert.NoError(t, ulimit.Explain(nil))
}

// TestKroneckerBytes checks the estimates of any edge factor against those
// of kron specs at the default one, and that they grow with the factor.
func TestKroneckerBytes(t *testing.T) {
	for scale := 0; scale <= 62; scale++ {
		spec := frontier.Spec{Kind: "kron", Size: scale}
		build, graph, err := KroneckerBytes(scale, frontier.DefaultEdgeFactor)
		wantBuild, errBuild := Bytes(spec)
		wantGraph, errGraph := GraphBytes(spec)
		if errBuild != nil || errGraph != nil {
			assert.Error(t, err, "scale %d", scale)
			continue
		}
		require.NoError(t, err, "scale %d", scale)
		assert.Equal(t, wantBuild, build, "scale %d", scale)
		assert.Equal(t, wantGraph, graph, "scale %d", scale)
		if scale <= 30 {
			b32, g32, err := KroneckerBytes(scale, 32)
			require.NoError(t, err)
			assert.Greater(t, b32, build)
			assert.Greater(t, g32, graph)
		}
	}
	for _, bad := range [][2]int{{-1, 16}, {59, 16}, {30, -1}, {58, 1 << 40}} {
		_, _, err := KroneckerBytes(bad[0], bad[1])
		assert.Error(t, err, "%v", bad)
	}
}

// FuzzHostMemory reads any meminfo, cgroup and statm contents: the memory
// is never above the machine's free memory or the address-space limit
// where they are known, is unknown only where nothing is, and names a
// bound exactly when a process limit sets it.
func FuzzHostMemory(f *testing.F) {
	f.Add(meminfo20GiB, "0::/a\n", "8589934592\n", "1073741824\n", "inactive_file 5\n", "262144 1 1\n", uint64(4096000000))
	f.Add("MemAvailable: 1 kB\n", "4:memory:/x\n", "9223372036854771712", "0", "", "", uint64(0))
	f.Add("", "0::/\n", "max", "1", "inactive_file 99999999999", "x", uint64(1))
	f.Fuzz(func(t *testing.T, meminfo, cgroup, limit, usage, stat, statm string, asLimit uint64) {
		fsys := fstest.MapFS{
			"proc/meminfo":     file(meminfo),
			"proc/self/cgroup": file(cgroup),
			"proc/self/statm":  file(statm),
		}
		for _, dir := range []string{"sys/fs/cgroup/a", "sys/fs/cgroup", "sys/fs/cgroup/memory/x", "sys/fs/cgroup/memory"} {
			fsys[dir+"/memory.max"], fsys[dir+"/memory.limit_in_bytes"] = file(limit), file(limit)
			fsys[dir+"/memory.current"], fsys[dir+"/memory.usage_in_bytes"] = file(usage), file(usage)
			fsys[dir+"/memory.stat"] = file(stat)
		}
		m := hostMemory(fsys, asLimit, 4096)
		free := parseMemAvailable([]byte(meminfo))
		if free > 0 {
			require.LessOrEqual(t, m.Bytes, free)
		}
		if asLimit > 0 {
			require.LessOrEqual(t, m.Bytes, asLimit)
		}
		if m.Bound == "" {
			require.Equal(t, free, m.Bytes)
		} else {
			require.Positive(t, m.Bytes)
			require.True(t, free == 0 || m.Bytes < free, "%+v below %d", m, free)
		}
	})
}
