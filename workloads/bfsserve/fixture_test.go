package bfsserve

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/frontier"
	"github.com/gpuplan/gpuplan/occupancy"
	"github.com/gpuplan/gpuplan/workloads/bfs"
	"github.com/gpuplan/gpuplan/workloads/bfsquery"
)

// fixture holds the test graphs and opens them on fresh fake GPUs (one
// per opening, as a recovery opens a new context) or on the CPU.
type fixture struct {
	t     testing.TB
	kron  *frontier.CSR // undirected
	dir   *frontier.CSR // directed
	mu    sync.Mutex
	fakes []*executor.Fake
	// hold, when set, makes every opening after the first wait until it
	// closes; failOpens fails that many openings after the first, with
	// openErr (nil: "no device yet").
	hold      chan struct{}
	failOpens int
	openErr   error
	opens     int
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	kron, err := frontier.Kronecker(9, 8, 3)
	require.NoError(t, err)
	kron.Name = "kron"
	rng := rand.New(rand.NewPCG(4, 5))
	var b strings.Builder
	for range 1200 {
		fmt.Fprintf(&b, "%d %d\n", rng.IntN(300), rng.IntN(300))
	}
	dir, err := bfsquery.ReadDirected(strings.NewReader(b.String()), "d.txt", int64(b.Len()), frontier.Limits{})
	require.NoError(t, err)
	dir.Name = "web"
	return &fixture{t: t, kron: kron, dir: dir}
}

// gpu opens both graphs on a new fake GPU.
func (f *fixture) gpu(ctx context.Context) (*Residency, error) {
	f.mu.Lock()
	f.opens++
	n, hold, openErr := f.opens, f.hold, f.openErr
	fail := n > 1 && f.failOpens > 0
	if fail {
		f.failOpens--
	}
	f.mu.Unlock()
	if n > 1 && hold != nil {
		select {
		case <-hold:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if fail && openErr != nil {
		return nil, openErr
	}
	if fail {
		return nil, errors.New("no device yet")
	}
	dev, err := occupancy.Lookup("h200")
	if err != nil {
		return nil, err
	}
	dev.TotalMemoryBytes = 8 << 30
	fake := bfs.NewFake(dev, uint64(n))
	x, err := executor.New(fake, executor.Options{})
	if err != nil {
		return nil, err
	}
	kg, err := bfsquery.Open(x, f.kron, bfsquery.Options{})
	if err != nil {
		return nil, errors.Join(err, x.Close())
	}
	dg, err := bfsquery.Open(x, f.dir, bfsquery.Options{Directed: true})
	if err != nil {
		return nil, errors.Join(err, kg.Close(), x.Close())
	}
	f.mu.Lock()
	f.fakes = append(f.fakes, fake)
	f.mu.Unlock()
	return &Residency{Graphs: []*bfsquery.Graph{kg, dg}, Executor: x, Close: func() error {
		return errors.Join(kg.Close(), dg.Close(), x.Close())
	}}, nil
}

// cpu opens both graphs on the CPU reference.
func (f *fixture) cpu(context.Context) (*Residency, error) {
	kg, err := bfsquery.OpenCPU(f.kron, bfsquery.Options{})
	if err != nil {
		return nil, err
	}
	dg, err := bfsquery.OpenCPU(f.dir, bfsquery.Options{Directed: true})
	if err != nil {
		return nil, err
	}
	return &Residency{Graphs: []*bfsquery.Graph{kg, dg}}, nil
}

// smallBudget returns a budget that holds the kron graph resident on the
// CPU and one query of one target, with 64 bytes to spare.
func (f *fixture) smallBudget() uint64 {
	t := f.t
	t.Helper()
	cpu, err := bfsquery.OpenCPU(f.kron, bfsquery.Options{})
	require.NoError(t, err)
	small := cpu.Footprint(bfsquery.Query{Targets: []int32{1}})
	return cpu.ResidentBytes() + small.Frontier + small.Output + 64
}

// fake returns the fake GPU of the latest opening.
func (f *fixture) fake() *executor.Fake {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.fakes[len(f.fakes)-1]
}

// start runs a server over open on a loopback port and returns it with
// its base URL; the test's end shuts it down.
func (f *fixture) start(cfg Config, open Opener) (*Server, string) {
	t := f.t
	t.Helper()
	s, err := New(context.Background(), cfg, open)
	require.NoError(t, err)
	l, err := Listen("127.0.0.1:0")
	require.NoError(t, err)
	served := make(chan error, 1)
	go func() { served <- s.Serve(l) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		require.NoError(t, s.Shutdown(ctx))
		require.NoError(t, <-served)
	})
	return s, "http://" + l.Addr().String()
}

// reply is a response read whole.
type reply struct {
	status int
	header http.Header
	body   []byte
}

// apiError decodes an error response.
func (r reply) apiError(t *testing.T) Error {
	t.Helper()
	return decodeReply[Error](t, r)
}

// decodeReply decodes a JSON response body as a T.
func decodeReply[T any](t *testing.T, r reply) T {
	t.Helper()
	var v T
	require.NoError(t, json.Unmarshal(r.body, &v), "body %s", r.body)
	return v
}

// call sends a request and reads the response.
func call(t *testing.T, ctx context.Context, method, url, body string) reply {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return reply{status: resp.StatusCode, header: resp.Header, body: b}
}

// post sends a JSON body.
func post(t *testing.T, url string, v any) reply {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return call(t, context.Background(), http.MethodPost, url, string(bytes.TrimSpace(b)))
}

// wantLevels returns the reference's answer of q on g.
func wantLevels(t *testing.T, g *frontier.CSR, q bfsquery.Query) []int32 {
	t.Helper()
	all, err := frontier.BFS(g, q.Root)
	require.NoError(t, err)
	out := make([]int32, len(q.Targets))
	for i, v := range q.Targets {
		l := all[v]
		if q.MaxDepth != bfsquery.NoDepthLimit && l > q.MaxDepth {
			l = bfsquery.Unreached
		}
		out[i] = l
	}
	return out
}

// reference caches the CPU reference's levels per root.
func reference(g *frontier.CSR) func(int32) ([]int32, error) {
	var mu sync.Mutex
	cache := map[int32][]int32{}
	return func(root int32) ([]int32, error) {
		mu.Lock()
		defer mu.Unlock()
		if l, ok := cache[root]; ok {
			return l, nil
		}
		l, err := frontier.BFS(g, root)
		cache[root] = l
		return l, err
	}
}

// loadConfig is the load of the load tests against the server at url:
// eight clients sending 150 queries over the kron graph from 40 roots,
// every answer checked against the CPU reference.
func (f *fixture) loadConfig(url string) LoadConfig {
	t := f.t
	t.Helper()
	roots, err := frontier.Roots(f.kron, 40, 2)
	require.NoError(t, err)
	return LoadConfig{URL: url, Graph: "kron", Clients: 8, Queries: 150, Roots: roots, Vertices: f.kron.NumVertices(),
		MaxDepth: bfsquery.NoDepthLimit, Seed: 3, CheckEvery: 1, Reference: reference(f.kron)}
}

// eventually polls cond until it holds or 10 s pass.
func eventually(t *testing.T, cond func() bool, msg string) {
	t.Helper()
	require.Eventually(t, cond, 10*time.Second, 2*time.Millisecond, msg)
}
