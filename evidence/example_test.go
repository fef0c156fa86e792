package evidence_test

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/gpuplan/gpuplan/evidence"
)

func ExampleValidateSpeedupSamples() {
	base := evidence.SpeedupSample{BackendID: "cuda", DeviceMemoryBytes: 32 << 30, ComputeCapabilityMajor: 12,
		GraphNodes: 10_000, GraphEdges: 80_000, Repetitions: 64,
		HostOrchestratedNS: 1e6, ResidentMegakernelNS: 1e4, SetupNS: 250_000}
	slow := base
	slow.HostOrchestratedNS = 5e5
	_, err := evidence.ValidateSpeedupSamples([]evidence.SpeedupSample{base, slow}, 100)
	fmt.Println(err)
	// vyre's CSV path let a NaN threshold pass everything; here it is rejected.
	_, err = evidence.ValidateSpeedupSamples([]evidence.SpeedupSample{base, base}, math.NaN())
	fmt.Println(err)
	// Output:
	// sample 1: observed speedup 50x is below the required 100x. Fix: improve the resident megakernel or lower the claim
	// required speedup NaN is not a finite positive number. Fix: pass a required speedup greater than 0, such as 100
}

func ExampleSpeedupCI() {
	host := []float64{11.9e6, 12.0e6, 11.8e6, 12.1e6, 11.95e6, 12.05e6, 11.85e6, 12.2e6, 11.9e6, 12.0e6}
	mega := []float64{1.19e6, 1.2e6, 1.18e6, 1.21e6, 1.2e6, 1.22e6, 1.19e6, 1.2e6, 1.21e6, 1.2e6}
	ci := evidence.SpeedupCI(host, mega)
	fmt.Printf("speedup %.2fx, 95%% CI [%.2fx, %.2fx]\n", ci.Center, ci.Lo, ci.Hi)
	// Output:
	// speedup 9.98x, 95% CI [9.79x, 10.17x]
}

func ExampleWorkloadFingerprint() {
	root, err := os.MkdirTemp("", "fingerprint")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(root)
	write := func(rel, text string) {
		p := filepath.Join(root, rel)
		_ = os.MkdirAll(filepath.Dir(p), 0o755)
		_ = os.WriteFile(p, []byte(text), 0o644)
	}
	write("go.mod", "module example.com/m\n")
	write("workloads/w/w.go", "package w\n\nconst Ahead = 4\n")
	write("workloads/w/kernels/w.cu", "__global__ void w() {}\n")
	before, _ := evidence.WorkloadFingerprint(root, "workloads/w")
	write("README.md", "docs do not matter\n")
	write("workloads/w/kernels/w.cu", "// neither do comments\n__global__ void w() {}\n")
	same, _ := evidence.WorkloadFingerprint(root, "workloads/w")
	write("workloads/w/w.go", "package w\n\nconst Ahead = 32\n")
	after, _ := evidence.WorkloadFingerprint(root, "workloads/w")
	fmt.Println(len(before), before == same, before == after)
	// Output:
	// 71 true false
}

func ExampleLoadResultsLimit() {
	dir, _ := os.MkdirTemp("", "results")
	defer os.RemoveAll(dir)
	_ = os.Symlink("/dev/zero", filepath.Join(dir, "zero.csv"))
	_, err := evidence.LoadResultsLimit(dir, evidence.DefaultResultFileLimit)
	// The message names the link, its target and the folder.
	fmt.Println(strings.Contains(err.Error(), "zero.csv: leads to /dev/zero, outside"))
	// Output:
	// true
}
