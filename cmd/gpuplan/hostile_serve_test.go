package main

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuplan/gpuplan/internal/graphbudget"
)

// warnBurst is the request warnings a server logs in each period
// (bfsserve's bound).
const warnBurst = 5

// gpuplan load repeats a --url it cannot scrape or list graphs from
// quoted and cut, once: a 3000-byte path makes one short line.
func TestLoadURLIsQuotedAndCut(t *testing.T) {
	url, _, _ := startServe(t, "--graph", "g=grid:4", "--cpu", "--listen", "127.0.0.1:0")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	closed := "http://" + l.Addr().String()
	require.NoError(t, l.Close())
	long := strings.Repeat("a", 3000)
	tests := []struct {
		name, url, want string
	}{
		{"a long path on the server", url + "/" + long, `aaa"...: status 404. Fix: point at a gpuplan server`},
		{"a long path where nothing listens", closed + "/" + long, `aaa"...: connect: connection refused. Fix: check that the server is running`},
		{"an escape in the path", closed + "/\x1b[2J\nx", `--url: URL: "` + closed + `/\x1b[2J\nx" is not an http:// URL. Fix:`},
		{"a long host", "http://" + long + ".example/", `host "aaa`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, errs, code := runCLI(t, "", "load", "--graph", "grid:4", "--url", tc.url, "--clients", "1", "--duration", "100ms")
			require.Equal(t, exitFailure, code, errs)
			assert.Contains(t, errs, tc.want)
			assert.Less(t, len(errs), 600, errs)
			assert.NotContains(t, errs, strings.Repeat("a", 300))
			assert.Equal(t, 1, strings.Count(errs, "\n"), "%q", errs)
			assertNoForgedLine(t, errs)
		})
	}
}

// gpuplan load on graphs of 4 vertices or fewer answers its serial
// setting's queries (the default budget holds a query of --targets 16 with
// parents), where every one was refused with 503, the command exited 0 and
// wrote a WARN line per refusal; a setting whose every query is refused
// fails the command with one line naming it and the first refusal, the
// warnings before it bounded.
func TestLoadOnTinyGraphs(t *testing.T) {
	path := filepath.Join(t.TempDir(), "three.el")
	require.NoError(t, os.WriteFile(path, []byte("0 1\n1 2\n"), 0o644))
	tests := []struct {
		name  string
		args  []string
		code  int
		last  string
		lines int // the most lines of standard error
	}{
		{"grid:2", []string{"--graph", "grid:2"}, exitOK, "", 4},
		{"a 3-vertex edge list", []string{"--graph", "file:" + path}, exitOK, "", 4},
		{"a 3-vertex directed list", []string{"--graph", "directed:" + path}, exitOK, "", 4},
		{"grid:2, more targets than the budget holds", []string{"--graph", "grid:2", "--targets", "65536"}, exitFailure,
			"gpuplan load: 1 of 2 settings answered no query, the server refused every one: grid-2 serial window 0s clients 1 (", 4 + 2*warnBurst},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"load", "--cpu", "--clients", "1", "--windows", "0", "--duration", "300ms", "--warmup", "0"}, tc.args...)
			out, errs, code := runCLI(t, "", args...)
			require.Equal(t, tc.code, code, "stdout:\n%s\nstderr:\n%s", out, errs)
			lines := strings.Split(strings.TrimSpace(errs), "\n")
			assert.LessOrEqual(t, len(lines), tc.lines, errs)
			if tc.code == exitOK {
				assert.NotContains(t, errs, "WARN")
				assert.Regexp(t, `serial, 1 clients: \d+ queries/s, .*; [1-9]\d* answered, .* 0 refused, 0 failed`, errs)
				return
			}
			last := lines[len(lines)-1]
			assert.True(t, strings.HasPrefix(last, tc.last), last)
			assert.Contains(t, last, `the first refusal: refused with 503: "query: the query alone needs`)
			assert.Contains(t, last, ". Fix: ask for fewer --targets")
			assert.Contains(t, errs, `msg="failed or refused requests not logged"`)
		})
	}
}

// gpuplan bfs --cpu counts the traversal's working set
// (bfsquery.CPUWorkingSet) with the answers against the host memory, and
// refuses before any traversal runs a graph whose answers fit but whose
// traversal does not, naming both, where it ran out of memory (grid:8000
// under ulimit -v 4000000 died with exit 2).
func TestBFSCountsTheTraversalAgainstTheMemory(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		memory graphbudget.Memory
		code   int
		want   string
	}{
		{"one root with parents", []string{"--graph", "grid:1000", "--parents"}, graphbudget.Memory{Bytes: 30_000_000}, exitFailure,
			"the answers of 1 roots over 1000000 vertices or targets each need about 8000000 bytes of host memory and their traversal about 20000212 more, 28000212 in all, but 30000000 are available. Fix:"},
		{"two roots in a pass", []string{"--graph", "grid:1000", "--roots", "2"}, graphbudget.Memory{Bytes: 40_000_000, Bound: "the address-space limit of 40000000 bytes (ulimit -v)"}, exitFailure,
			"need about 8000000 bytes of host memory and their traversal about 48000416 more, 56000416 in all, but 40000000 are available within the address-space limit of 40000000 bytes (ulimit -v)"},
		{"a directed graph's transpose", []string{"--graph", "directed:@edges", "--root-ids", "0"}, graphbudget.Memory{Bytes: 100}, exitFailure,
			"their traversal about "},
		{"within the memory", []string{"--graph", "grid:1000", "--roots", "2"}, graphbudget.Memory{Bytes: 100_000_000}, exitOK, "2 roots answered"},
	}
	edges := filepath.Join(t.TempDir(), "edges.el")
	require.NoError(t, os.WriteFile(edges, []byte(strings.Repeat("0 1\n1 2\n", 8)), 0o644))
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			withHostMemory(t, tc.memory)
			args := append([]string{"bfs", "--cpu", "-o", filepath.Join(t.TempDir(), "a.bin")}, tc.args...)
			for i, a := range args {
				args[i] = strings.Replace(a, "@edges", edges, 1)
			}
			_, errs, code := runCLI(t, "", args...)
			require.Equal(t, tc.code, code, errs)
			assert.Contains(t, errs, tc.want)
			if tc.code != exitOK {
				assert.NotContains(t, errs, "answered", "refused before the traversal")
				lines := strings.Split(strings.TrimSpace(errs), "\n")
				assert.Contains(t, lines[len(lines)-1], "Fix: ask for fewer roots")
			}
		})
	}
}
