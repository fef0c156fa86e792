package rendezvous_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/gpuplan/gpuplan/executor/nccl/rendezvous"
)

// ExampleExchange runs three ranks (goroutines here, processes in a real
// run) that meet through an address file on one machine: rank 0 makes the
// payload, a free loopback port is picked, and every rank returns the same
// payload.
func ExampleExchange() {
	dir, _ := os.MkdirTemp("", "rendezvous")
	defer os.RemoveAll(dir)
	const world = 3
	got := make([]rendezvous.Payload, world)
	errs := make([]error, world)
	var wg sync.WaitGroup
	for rank := range world {
		cfg := rendezvous.Config{Rank: rank, WorldSize: world, File: filepath.Join(dir, "rendezvous.addr"),
			DeviceKey: "NVIDIA H200|580.159.04", Timeout: 5 * time.Second}
		wg.Go(func() {
			got[rank], errs[rank] = rendezvous.Exchange(context.Background(), cfg, func() (rendezvous.Payload, error) {
				var p rendezvous.Payload // ncclGetUniqueId's bytes in a real run
				copy(p[:], "unique id")
				return p, nil
			})
		})
	}
	wg.Wait()
	for rank := range world {
		fmt.Printf("rank %d: %q %v\n", rank, got[rank][:9], errs[rank])
	}
	// Output:
	// rank 0: "unique id" <nil>
	// rank 1: "unique id" <nil>
	// rank 2: "unique id" <nil>
}
