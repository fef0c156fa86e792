package kronbuild_test

import (
	"fmt"
	"slices"

	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/frontier"
	"github.com/gpuplan/gpuplan/occupancy"
	"github.com/gpuplan/gpuplan/workloads/kronbuild"
)

// Example builds the Graph500 Kronecker graph of scale 12 with the
// kronbuild kernels, here on the executor's CPU fake with the kernels
// emulated (executor.Open(0, ...) in the CUDA build runs the same code on
// a GPU), once with the whole device and once under a 1 MiB budget, which
// builds it in parts, and checks both against the CPU generator; a 64
// KiB budget is refused before anything is allocated.
func Example() {
	dev, _ := occupancy.Lookup("h100")
	x, err := executor.New(kronbuild.NewFake(dev, 1), executor.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer x.Close()
	want, _ := frontier.Kronecker(12, frontier.DefaultEdgeFactor, 1)
	for _, cfg := range []kronbuild.Config{{}, {MaxDeviceBytes: 1 << 20}} {
		r, err := kronbuild.Build(x, 12, frontier.DefaultEdgeFactor, 1, cfg)
		if err != nil {
			fmt.Println(err)
			return
		}
		g := r.Graph
		same := slices.Equal(g.Offsets, want.Offsets) && slices.Equal(g.Targets, want.Targets)
		fmt.Printf("%s: %d vertices, %d of %d generated entries distinct, %d part(s), same as frontier.Kronecker: %t\n",
			g.Name, g.NumVertices(), g.NumEdgeEntries(), r.Plan.Entries, len(r.Plan.Parts), same)
	}
	_, err = kronbuild.Build(x, 12, frontier.DefaultEdgeFactor, 1, kronbuild.Config{MaxDeviceBytes: 64 << 10})
	fmt.Println(err)
	// Output:
	// kron-12: 4096 vertices, 96910 of 130644 generated entries distinct, 1 part(s), same as frontier.Kronecker: true
	// kron-12: 4096 vertices, 96910 of 130644 generated entries distinct, 3 part(s), same as frontier.Kronecker: true
	// kronbuild kron-12 (scale 12): drawing the labels on the device needs 124960 bytes of device memory but the budget is 65536 bytes. Fix: set Config.HostPermutation to draw them on the host (no device scratch), or raise Config.MaxDeviceBytes (0 uses the executor's live budget), free device memory, or build a smaller scale
}
