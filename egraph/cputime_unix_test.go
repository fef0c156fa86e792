//go:build unix

package egraph

import "syscall"

// processCPUSeconds returns the user and system CPU time of the process,
// which on a shared machine says more about a benchmark than its wall
// time.
func processCPUSeconds() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}
