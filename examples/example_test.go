package examples_test

import (
	"fmt"
	"os"

	"github.com/gpuplan/gpuplan/workloads/wavedag"
)

// Example parses the quickstart workload, its module read relative to the
// workload file's directory, and prints its waves and the tile plan's
// tasks: the four waves have 16 tiles each, but the tile plan runs square
// and axpy, joined tile by tile, as one fused unit, so the persistent
// kernel's queue holds 3 x 16 tasks.
func Example() {
	data, err := os.ReadFile("quickstart/quickstart.json")
	if err != nil {
		fmt.Println(err)
		return
	}
	p, err := wavedag.Parse("quickstart/quickstart.json", data, wavedag.DirFiles("quickstart", 0), wavedag.LoadOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("waves:", p.Waves())
	fmt.Println("tile-plan tasks:", p.Plan.Tiles.Tasks)
	// Output:
	// waves: 4
	// tile-plan tasks: 48
}
