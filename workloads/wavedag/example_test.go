package wavedag_test

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/gpuplan/gpuplan/examples/quickstart"
	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/workloads/wavedag"
)

// Example runs the quickstart's four waves in every arm and reads the
// answer back. On a GPU, open the executor with executor.Open(0,
// executor.Options{}) instead: here the CPU emulation runs the waves' Go
// references.
func Example() {
	p, err := wavedag.Load("../../examples/quickstart/quickstart.json", wavedag.LoadOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	x, err := executor.New(wavedag.NewFake(p.Device, quickstart.Funcs(), 1), executor.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer x.Close()
	s, err := wavedag.Open(x, p, wavedag.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	for _, arm := range wavedag.Arms() {
		if err := s.Reset(); err != nil { // every run starts from the initial buffers
			fmt.Println(err)
			return
		}
		r, err := s.Run(arm)
		if err == nil {
			err = s.CheckPlan(r) // launches, barriers, counter waits and tasks as planned
		}
		if err != nil {
			fmt.Println(err)
			return
		}
		out, err := s.Outputs()
		if err != nil {
			fmt.Println(err)
			return
		}
		y := out[0] // the workload's one output, y, as f32
		fmt.Printf("%-9s y[0] = %.6f, y[4095] = %.6f\n", arm, f32(y, 0), f32(y, 4095))
	}
	// Output:
	// streams   y[0] = 1.185129, y[4095] = 2.042227
	// graph     y[0] = 1.185129, y[4095] = 2.042227
	// graph-pdl y[0] = 1.185129, y[4095] = 2.042227
	// barriers  y[0] = 1.185129, y[4095] = 2.042227
	// waits     y[0] = 1.185129, y[4095] = 2.042227
}

func f32(b []byte, i int) float32 { return math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:])) }
