package bfsserve

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpuplan/gpuplan/workloads/bfsquery"
)

// BenchmarkServeOverhead times one client's query on the CPU reference
// answered directly (bfsquery.Graph.Query) and through the server on
// loopback (HTTP, JSON, the batcher), so that the difference is what the
// server adds to a query's latency.
func BenchmarkServeOverhead(b *testing.B) {
	f := newFixture(b)
	targets := "[1, 7, 30, 99, 150, 200, 255, 300, 320, 360, 400, 420, 450, 480, 500, 511]"
	b.Run("direct", func(b *testing.B) {
		g, err := bfsquery.OpenCPU(f.kron, bfsquery.Options{})
		require.NoError(b, err)
		q := bfsquery.Query{Root: 3, MaxDepth: bfsquery.NoDepthLimit, Targets: []int32{1, 7, 30, 99, 150, 200, 255, 300, 320, 360, 400, 420, 450, 480, 500, 511}}
		for b.Loop() {
			if _, err := g.Query(context.Background(), q); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, mode := range []struct {
		name string
		cfg  Config
	}{{"serial", Config{MaxBatch: 1}}, {"batched", Config{}}} {
		b.Run("http-"+mode.name, func(b *testing.B) {
			_, url := f.start(mode.cfg, f.cpu)
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1, DisableCompression: true}}
			body := []byte(fmt.Sprintf(`{"root": 3, "targets": %s}`, targets))
			for b.Loop() {
				resp, err := client.Post(url+"/v1/graphs/kron/bfs", "application/json", bytes.NewReader(body))
				if err != nil {
					b.Fatal(err)
				}
				if _, err := io.Copy(io.Discard, resp.Body); err != nil {
					b.Fatal(err)
				}
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					b.Fatalf("status %d", resp.StatusCode)
				}
			}
		})
	}
}
