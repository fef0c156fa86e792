package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuplan/gpuplan/evidence"
	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/frontier"
	"github.com/gpuplan/gpuplan/internal/syncbuf"
	"github.com/gpuplan/gpuplan/occupancy"
	"github.com/gpuplan/gpuplan/workloads/bfs"
	"github.com/gpuplan/gpuplan/workloads/bfsquery"
	"github.com/gpuplan/gpuplan/workloads/bfsserve"
)

var servingOn = regexp.MustCompile(`on (http://127\.0\.0\.1:\d+)`)

// startServe runs "gpuplan serve" until the test ends and returns its
// base URL and its standard error.
func startServe(t *testing.T, args ...string) (string, *syncbuf.Buffer, func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var stdout, stderr syncbuf.Buffer
	e := &env{stdout: &stdout, stderr: &stderr, ctx: ctx}
	done := make(chan error, 1)
	go func() { done <- runServe(e, args) }()
	var url string
	require.Eventually(t, func() bool {
		if m := servingOn.FindStringSubmatch(stderr.String()); m != nil {
			url = m[1]
			return true
		}
		select {
		case err := <-done:
			done <- err
			return true
		default:
			return false
		}
	}, 30*time.Second, 5*time.Millisecond)
	require.NotEmpty(t, url, "serve failed to start: %s", stderr.String())
	var once sync.Once
	var stopErr error
	stop := func() error {
		once.Do(func() { cancel(); stopErr = <-done })
		return stopErr
	}
	t.Cleanup(func() { _ = stop() })
	return url, &stderr, stop
}

func TestServeCommand(t *testing.T) {
	edges := filepath.Join(t.TempDir(), "d.txt")
	require.NoError(t, os.WriteFile(edges, []byte("0 1\n1 2\n2 0\n3 0\n"), 0o644))
	url, stderr, stop := startServe(t, "--graph", "g=grid:4", "--graph", "web=directed:"+edges, "--cpu", "--listen", "127.0.0.1:0", "--log-format", "text")

	resp, err := http.Get(url + "/v1/graphs")
	require.NoError(t, err)
	var gs bfsserve.GraphsResponse
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&gs))
	resp.Body.Close()
	require.Len(t, gs.Graphs, 2)
	assert.Equal(t, 16, gs.Graphs[0].Vertices)
	assert.Equal(t, int64(4), gs.Graphs[1].Edges)
	assert.Equal(t, bfsserve.DefaultWindow.Nanoseconds(), gs.Batching.WindowNS)

	resp, err = http.Post(url+"/v1/graphs/g/bfs", "application/json", strings.NewReader(`{"root": 0, "targets": [15, 3], "parents": true}`))
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.JSONEq(t, `{"root":0,"levels":[6,3],"parents":[11,2],"reached":16,"depth":6}`, string(body))

	resp, err = http.Post(url+"/v1/graphs/web/reach", "application/json", strings.NewReader(`{"root": 0, "targets": [2, 3]}`))
	require.NoError(t, err)
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.JSONEq(t, `{"root":0,"reachable":[true,false],"reached":3}`, string(body))

	require.NoError(t, stop())
	logs := stderr.String()
	assert.Contains(t, logs, "graph g (grid:4): 16 vertices")
	assert.Contains(t, logs, "shutting down")
	assert.Contains(t, logs, `msg=stopped`, "structured logs")
}

func TestServeRefuses(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer busy.Close()
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"serve"}, exitUsage, "no graph to serve"},
		{[]string{"serve", "--graph", "kron:10"}, exitUsage, "is not NAME=SPEC"},
		{[]string{"serve", "--graph", "a b=kron:10"}, exitUsage, "graph name"},
		{[]string{"serve", "--graph", "k=kron:8", "--graph", "k=grid:4"}, exitUsage, "given twice"},
		{[]string{"serve", "--graph", "k=kron:abc", "--listen", "127.0.0.1:0"}, exitFailure, "--graph k=kron:abc"},
		{[]string{"serve", "--graph", "k=file:/no/such/file", "--listen", "127.0.0.1:0"}, exitFailure, "--graph k=file:/no/such/file"},
		{[]string{"serve", "--graph", "k=grid:4", "--listen", busy.Addr().String()}, exitFailure, "in use"},
		{[]string{"serve", "--graph", "k=grid:4", "--listen", "nowhere"}, exitFailure, "HOST:PORT"},
		{[]string{"serve", "--graph", "k=grid:4", "--window", "2s"}, exitUsage, "--window 2s"},
		{[]string{"serve", "--graph", "k=grid:4", "--max-batch", "0"}, exitUsage, "--max-batch 0"},
		{[]string{"serve", "--graph", "k=grid:4", "--queue", "0"}, exitUsage, "--queue 0"},
		{[]string{"serve", "--graph", "k=grid:4", "--timeout", "0s"}, exitUsage, "--timeout"},
		{[]string{"serve", "--graph", "k=grid:4", "--log-level", "loud"}, exitUsage, "--log-level"},
		{[]string{"serve", "--graph", "k=grid:4", "--log-format", "xml"}, exitUsage, "--log-format"},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			_, errs, code := runCLI(t, "", c.args...)
			assert.Equal(t, c.code, code, errs)
			assert.Contains(t, errs, c.want)
			assert.Contains(t, errs, "Fix")
		})
	}
}

// TestServeExitsWhenTheServerFails faults the fake GPU under "gpuplan
// serve", whose reopening then finds the context lost, as every new
// context of the process does on a real GPU after a sticky fault: the
// command shuts down and fails with the cause and the restart Fix.
func TestServeExitsWhenTheServerFails(t *testing.T) {
	var stderr syncbuf.Buffer
	e := &env{stdout: io.Discard, stderr: &stderr, ctx: t.Context()}
	o, err := parseServeArgs(e, []string{"--graph", "g=grid:8", "--listen", "127.0.0.1:0", "--log-format", "text"})
	require.NoError(t, err)
	o.cfg.RecoverBackoff = time.Millisecond
	graphs, err := loadServedGraphs(e, o.graphs, o.seed, o.limits, o.build)
	require.NoError(t, err)
	l, err := bfsserve.Listen(o.listen)
	require.NoError(t, err)
	open, fake := lostAfterFirstOpen(graphs[0])
	cmds := []command{{name: "serve", run: func(e *env, _ []string) error { return serveOn(e, o, l, open, "1 graph from the fake GPU") }}}
	code := make(chan int, 1)
	go func() { code <- runCommand(e, cmds, "serve", nil) }()
	require.Eventually(t, func() bool { return strings.Contains(stderr.String(), "serving 1 graph") }, 10*time.Second, 5*time.Millisecond)
	url := "http://" + l.Addr().String()

	fake().Fail("cuLaunchKernel", 700)
	resp, err := http.Post(url+"/v1/graphs/g/bfs", "application/json", strings.NewReader(`{"root": 0, "targets": [1]}`))
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusInternalServerError, resp.StatusCode, "the faulted batch fails")
	select {
	case c := <-code:
		assert.Equal(t, exitFailure, c)
	case <-time.After(10 * time.Second):
		require.FailNow(t, "serve did not exit", stderr.String())
	}
	logs := strings.TrimSpace(stderr.String())
	assert.Contains(t, logs, "the server failed; shutting down")
	assert.Contains(t, logs, "msg=stopped", "the graceful shutdown ran")
	assert.Contains(t, logs, "gpuplan serve: the server failed: the GPU context cannot be reopened in this process")
	assert.Contains(t, logs, "cuCtxCreate", "the cause is named")
	assert.True(t, strings.HasSuffix(logs, "Fix: restart gpuplan serve (run it under a supervisor that restarts it on failure, e.g. systemd Restart=on-failure)"), logs)
	_, err = net.DialTimeout("tcp", l.Addr().String(), time.Second)
	assert.Error(t, err, "the port is closed")
}

// lostAfterFirstOpen opens g on a fake GPU once; every later opening
// fails with a lost context. fake returns the opened GPU.
func lostAfterFirstOpen(g servedGraph) (bfsserve.Opener, func() *executor.Fake) {
	var mu sync.Mutex
	var fake *executor.Fake
	open := func(context.Context) (*bfsserve.Residency, error) {
		mu.Lock()
		defer mu.Unlock()
		if fake != nil {
			return nil, &executor.DriverError{Call: "cuCtxCreate", Code: 715, Name: "CUDA_ERROR_ILLEGAL_INSTRUCTION", Fix: "Fix: restart the process."}
		}
		dev, err := occupancy.Lookup("h100")
		if err != nil {
			return nil, err
		}
		fake = bfs.NewFake(dev, 1)
		x, err := executor.New(fake, executor.Options{})
		if err != nil {
			return nil, err
		}
		bg, err := bfsquery.Open(x, g.csr, bfsquery.Options{Directed: g.directed})
		if err != nil {
			return nil, errors.Join(err, x.Close())
		}
		return &bfsserve.Residency{Graphs: []*bfsquery.Graph{bg}, Executor: x, Close: func() error { return errors.Join(bg.Close(), x.Close()) }}, nil
	}
	return open, func() *executor.Fake {
		mu.Lock()
		defer mu.Unlock()
		return fake
	}
}

func TestLoadCommand(t *testing.T) {
	dir := t.TempDir()
	csv, svg := filepath.Join(dir, "load.csv"), filepath.Join(dir, "load.svg")
	args := []string{"load", "--graph", "kron:9", "--cpu", "--clients", "1,4", "--windows", "0,100us",
		"--duration", "300ms", "--warmup", "50ms", "--check-every", "2", "-o", csv}
	if buildHasCharts {
		args = append(args, "--chart", svg)
	}
	out, errs, code := runCLI(t, "", args...)
	require.Equal(t, exitOK, code, errs)
	assert.Contains(t, out, "| kron-9 | cpu | serial | 0s | 4 |")
	assert.Contains(t, out, "batched / serial")
	assert.Contains(t, errs, "kron-9 batched window 100µs, 4 clients:")
	assert.Regexp(t, `4 clients: .*; per batch \(\d+ batches\) traverse [0-9.]+[µm]?s, setup 0s, read 0s, answer [0-9.]+[nµm]?s`, errs, "the CPU reads nothing back")
	f, err := os.Open(csv)
	require.NoError(t, err)
	defer f.Close()
	rows, err := evidence.ReadLoadCSV(csv, f)
	require.NoError(t, err)
	require.Len(t, rows, 6, "two client counts, serial and two windows each")
	g, err := frontier.Kronecker(9, frontier.DefaultEdgeFactor, 1)
	require.NoError(t, err)
	for _, r := range rows {
		assert.Equal(t, uint64(g.NumVertices()), r.Nodes)
		assert.Positive(t, r.Answered, r.Key())
		assert.Positive(t, r.Checked, r.Key())
		assert.Zero(t, r.Mismatches, r.Key())
		assert.Equal(t, "none", r.Provenance.DriverVersion)
	}
	if buildHasCharts {
		chart, err := os.ReadFile(svg)
		require.NoError(t, err)
		assert.Contains(t, string(chart), "<svg")
		// gpuplan report draws the curve of load evidence again.
		again := filepath.Join(dir, "again.svg")
		_, errs, code = runCLI(t, "", "report", csv, "--chart", again, "--output", filepath.Join(dir, "load.md"))
		require.Equal(t, exitOK, code, errs)
		chart, err = os.ReadFile(again)
		require.NoError(t, err)
		assert.Contains(t, string(chart), "kron-9 cpu batched window 100µs")
	}

	out, errs, code = runCLI(t, "", "report", csv)
	require.Equal(t, exitOK, code, errs)
	assert.Contains(t, out, "| kron-9 | cpu | batched | 100µs | 4 |")
}

// TestLoadDrivesARunningServer runs "gpuplan load --url" against
// "gpuplan serve", with a short soak: no leak, every answer right.
func TestLoadDrivesARunningServer(t *testing.T) {
	url, _, _ := startServe(t, "--graph", "k9=kron:9", "--cpu", "--listen", "127.0.0.1:0", "--window", "100us")
	out, errs, code := runCLI(t, "", "load", "--graph", "kron:9", "--url", url, "--name", "k9", "--clients", "3",
		"--duration", "400ms", "--warmup", "0s", "--soak", "--json")
	require.Equal(t, exitOK, code, errs)
	var rep struct {
		Settings []struct {
			Setting string              `json:"setting"`
			Result  bfsserve.LoadResult `json:"result"`
			Leaks   []string            `json:"leaks"`
		} `json:"settings"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &rep), out)
	require.Len(t, rep.Settings, 1)
	s := rep.Settings[0]
	assert.Equal(t, "k9 batched window 100µs clients 3", s.Setting)
	assert.Positive(t, s.Result.Answered)
	assert.Positive(t, s.Result.Abandoned, "the soak abandons queries")
	assert.Zero(t, s.Result.Mismatches)
	assert.Empty(t, s.Leaks)

	_, errs, code = runCLI(t, "", "load", "--graph", "kron:10", "--url", url, "--name", "k9", "--clients", "1", "--duration", "100ms")
	assert.Equal(t, exitFailure, code)
	assert.Contains(t, errs, "--graph kron:10 has 1024 vertices but the server's graph \"k9\" has 512")
	_, errs, code = runCLI(t, "", "load", "--graph", "kron:9", "--url", url, "--name", "nope", "--clients", "1", "--duration", "100ms")
	assert.Equal(t, exitFailure, code)
	assert.Contains(t, errs, `serves no graph "nope"`)
}

func TestLoadRefuses(t *testing.T) {
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"load"}, exitUsage, "--graph is required"},
		{[]string{"load", "--graph", "grid:4", "--clients", "0"}, exitUsage, `--clients: "0" is not a count from 1 to 4096`},
		{[]string{"load", "--graph", "grid:4", "--clients", "8,x"}, exitUsage, `"x" is not a count`},
		{[]string{"load", "--graph", "grid:4", "--clients", "5000"}, exitUsage, "from 1 to 4096"},
		{[]string{"load", "--graph", "grid:4", "--windows", "2s"}, exitUsage, `--windows: "2s" is not a window`},
		{[]string{"load", "--graph", "grid:4", "--duration", "0s"}, exitUsage, "--duration 0s"},
		{[]string{"load", "--graph", "grid:4", "--disconnect", "2"}, exitUsage, "--disconnect 2"},
		{[]string{"load", "--graph", "grid:4", "--url", "http://127.0.0.1:1", "--windows", "1ms"}, exitUsage, "--url drives a running one"},
		{[]string{"load", "--graph", "grid:4", "--url", "http://127.0.0.1:1", "-o", "x.csv"}, exitUsage, "-o records evidence"},
		{[]string{"load", "--graph", "grid:4", "--name", "g"}, exitUsage, "--name names the graph"},
		{[]string{"load", "--graph", "grid:4", "--chart", "x.gif"}, exitUsage, "--chart"},
		{[]string{"load", "--graph", "grid:4", "--url", "http://10.0.0.1:8080"}, exitFailure, "not a loopback address"},
		{[]string{"load", "--graph", "grid:4", "--url", "http://127.0.0.1:1"}, exitFailure, "check that the server is running"},
		{[]string{"load", "--graph", "spiral:4"}, exitFailure, "spiral"},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			_, errs, code := runCLI(t, "", c.args...)
			assert.Equal(t, c.code, code, errs)
			assert.Contains(t, errs, c.want)
			assert.Contains(t, errs, "Fix")
		})
	}
}
