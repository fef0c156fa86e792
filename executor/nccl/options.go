package nccl

import (
	"fmt"
	"time"

	"github.com/gpuplan/gpuplan/executor"
)

// Options configure Open, NewUniqueID and OpenRank.
type Options struct {
	// Library is the NCCL library to load; empty means $GPUPLAN_NCCL_LIBRARY,
	// else libnccl.so.2 from the loader's search path.
	Library string
	// Env is the environment NCCL_NVLS_ENABLE is set in (nil: the
	// process's).
	Env Environment
	// InitTimeout bounds OpenRank's wait for every rank to join the
	// communicator (zero: DefaultInitTimeout). With NCCL 2.14 and later the
	// communicator is created non-blocking and aborted at the timeout; an
	// older NCCL blocks in ncclCommInitRank without one.
	InitTimeout time.Duration
	// CollectiveTimeout bounds every collective of a communicator opened
	// with OpenRank (zero: DefaultCollectiveTimeout); at the timeout the
	// communicator is aborted and the collective fails with a
	// *TimeoutError.
	CollectiveTimeout time.Duration
}

// environment returns Env or the process environment.
//
//lint:ignore U1000 used by Open in the cuda build
func (o Options) environment() Environment {
	if o.Env != nil {
		return o.Env
	}
	return executor.OSEnvironment{}
}

// rankDevices returns the CUDA ordinal of every executor's device and
// refuses two ranks on one device (NCCL runs one rank per device).
func rankDevices(xs []*executor.Executor) ([]int, error) {
	if err := checkExecutors(xs); err != nil {
		return nil, err
	}
	devs := make([]int, len(xs))
	seen := map[int]int{}
	for i, x := range xs {
		devs[i] = x.Device().Ordinal
		if j, ok := seen[devs[i]]; ok {
			return nil, argErr(fmt.Sprintf("executors[%d]", i), "is on device %d like executors[%d], and NCCL runs one rank per device (to run several partitions on one device, exchange through device copies instead)", devs[i], j)
		}
		seen[devs[i]] = i
	}
	return devs, nil
}
