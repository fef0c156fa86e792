package occupancy

import (
	"testing"
)

// BenchmarkComputeSweep evaluates 32 block sizes x 256 register counts x 64
// shared-memory sizes (524,288 points) on the H100 SXM profile per
// iteration; it reports ns per point next to ns per full sweep (ns/op).
func BenchmarkComputeSweep(b *testing.B) {
	d, err := Lookup("h100-sxm")
	if err != nil {
		b.Fatal(err)
	}
	const points = 32 * 256 * 64
	b.ReportAllocs()
	sink := 0
	for b.Loop() {
		for bs := 32; bs <= 1024; bs += 32 {
			for regs := range 256 {
				for s := range 64 {
					r, err := compute(&d, Kernel{RegistersPerThread: regs, DynamicSharedBytes: s * 3584, OptIn: true}, bs)
					if err != nil {
						b.Fatal(err)
					}
					sink += r.ActiveBlocksPerSM
				}
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/points, "ns/point")
	if sink < 0 {
		b.Fatal(sink)
	}
}

// BenchmarkCompute measures one public Compute call (with device validation).
func BenchmarkCompute(b *testing.B) {
	d, _ := Lookup("h200")
	k := Kernel{RegistersPerThread: 10, DynamicSharedBytes: 20000}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Compute(d, k, 96); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMaxPotentialBlockSize measures the driver-order search on one
// profile.
func BenchmarkMaxPotentialBlockSize(b *testing.B) {
	d, _ := Lookup("h200")
	k := Kernel{RegistersPerThread: 72, DynamicSharedBytes: 12000}
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := MaxPotentialBlockSize(d, k); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEstimateOccupancy measures vyre's simplified estimate.
func BenchmarkEstimateOccupancy(b *testing.B) {
	d := Blackwell5090Default()
	u := KernelResourceUsage{RegsPerThread: 64, SharedBytesPerBlock: 4096}
	b.ReportAllocs()
	for b.Loop() {
		_ = EstimateOccupancy(d, u, 256)
	}
}

// BenchmarkLookup measures a profile lookup by alias (it builds the table).
func BenchmarkLookup(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Lookup("H200-SXM-141GB"); err != nil {
			b.Fatal(err)
		}
	}
}
