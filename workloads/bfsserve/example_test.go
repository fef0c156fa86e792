package bfsserve_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/gpuplan/gpuplan/frontier"
	"github.com/gpuplan/gpuplan/workloads/bfsquery"
	"github.com/gpuplan/gpuplan/workloads/bfsserve"
)

// A server over one graph, answered by the CPU reference (bfsquery.Open
// keeps it on a GPU instead): a client asks for the levels of three
// targets from vertex 0 of a 4x4 grid, with their parents.
func Example() {
	g, err := frontier.Grid(4)
	if err != nil {
		panic(err)
	}
	g.Name = "grid"
	open := func(context.Context) (*bfsserve.Residency, error) {
		r, err := bfsquery.OpenCPU(g, bfsquery.Options{})
		return &bfsserve.Residency{Graphs: []*bfsquery.Graph{r}, Close: r.Close}, err
	}
	s, err := bfsserve.New(context.Background(), bfsserve.Config{Window: time.Millisecond}, open)
	if err != nil {
		panic(err)
	}
	l, err := bfsserve.Listen("127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	go func() { _ = s.Serve(l) }()
	defer func() { _ = s.Shutdown(context.Background()) }()

	url := "http://" + l.Addr().String() + "/v1/graphs/grid/bfs"
	resp, err := http.Post(url, "application/json", strings.NewReader(`{"root": 0, "targets": [5, 15, 3], "parents": true}`))
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	fmt.Println(resp.Status)
	fmt.Print(string(body))
	// Output:
	// 200 OK
	// {"root":0,"levels":[2,6,3],"parents":[1,11,2],"reached":16,"depth":6}
}

// RunLoad drives a server with concurrent clients and checks a sample of
// the answers against the CPU reference.
func ExampleRunLoad() {
	g, _ := frontier.Grid(8)
	g.Name = "grid"
	open := func(context.Context) (*bfsserve.Residency, error) {
		r, err := bfsquery.OpenCPU(g, bfsquery.Options{})
		return &bfsserve.Residency{Graphs: []*bfsquery.Graph{r}}, err
	}
	s, _ := bfsserve.New(context.Background(), bfsserve.Config{}, open)
	l, _ := bfsserve.Listen("127.0.0.1:0")
	go func() { _ = s.Serve(l) }()
	defer func() { _ = s.Shutdown(context.Background()) }()

	roots, _ := frontier.Roots(g, 16, 1)
	res, err := bfsserve.RunLoad(context.Background(), bfsserve.LoadConfig{
		URL: "http://" + l.Addr().String(), Graph: "grid", Clients: 4, Queries: 100,
		Roots: roots, Vertices: g.NumVertices(), MaxDepth: bfsquery.NoDepthLimit, Seed: 1,
		CheckEvery: 1, Reference: func(root int32) ([]int32, error) { return frontier.BFS(g, root) },
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Answered >= 100, res.Failed, res.Mismatches)
	// Output: true 0 0
}
