package harness_test

import (
	"fmt"

	"github.com/gpuplan/gpuplan/workloads/harness"
)

// The interleaved timed samples of a benchmark of three arms: the order
// rotates every sample, and each sample reports its progress.
func ExampleInterleave() {
	arms := []string{"host-loop", "device-loop", "megakernel"}
	var rows []harness.Sample
	progress := func(done, total int, label string) { fmt.Printf("%d/%d %s\n", done, total, label) }
	err := harness.Interleave("grid-512", arms, 2, progress, func(smp, a int) error {
		rows = append(rows, harness.Sample{Arm: arms[a], Index: uint64(smp)})
		return nil
	})
	fmt.Println(err, len(rows), rows[3].Arm)
	// Output:
	// 1/6 grid-512 host-loop sample 1/2
	// 2/6 grid-512 device-loop sample 1/2
	// 3/6 grid-512 megakernel sample 1/2
	// 4/6 grid-512 device-loop sample 2/2
	// 5/6 grid-512 megakernel sample 2/2
	// 6/6 grid-512 host-loop sample 2/2
	// <nil> 6 device-loop
}

// A copy ceiling's repeated launches: one untimed warm-up, then the timed
// ones, each an evidence sample.
func ExampleRepeat() {
	launch := 0
	ns, err := harness.Repeat(3, func() (uint64, error) {
		launch++
		return uint64(1000 * launch), nil
	})
	for i, v := range ns {
		s := harness.Sample{Arm: harness.ArmCopyCeiling, Index: uint64(i), DeviceNs: float64(v), Checksum: "copy"}
		fmt.Println(s.Arm, s.Index, s.DeviceNs)
	}
	fmt.Println(err)
	// Output:
	// copy-ceiling 0 2000
	// copy-ceiling 1 3000
	// copy-ceiling 2 4000
	// <nil>
}
