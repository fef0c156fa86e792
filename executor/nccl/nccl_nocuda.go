//go:build !cuda

package nccl

import "github.com/gpuplan/gpuplan/executor"

// Available reports whether this build can open an NCCL communicator (the
// CUDA build).
const Available = false

// Comm is an NCCL communicator; a build without CUDA has none.
type Comm struct{}

// noCUDAError is the error of every call of a build without CUDA.
type noCUDAError struct{}

// Error says what is missing and ends with a "Fix:" sentence.
func (noCUDAError) Error() string {
	return "nccl: gpuplan was built without CUDA support, so NCCL cannot be loaded. Fix: rebuild with `make build-cuda` (go build -tags cuda)"
}

// Is makes errors.Is(err, ErrUnavailable) true.
func (noCUDAError) Is(target error) bool { return target == ErrUnavailable }

func unavailable() error { return noCUDAError{} }

// Open checks the executors and fails: this build has no CUDA.
func Open(xs []*executor.Executor, opts Options) (*Comm, error) {
	if _, err := rankDevices(xs); err != nil {
		return nil, err
	}
	return nil, unavailable()
}

// Version returns "".
func (c *Comm) Version() string { return "" }

// Ranks returns 0.
func (c *Comm) Ranks() int { return 0 }

// Reserve fails: this build has no CUDA.
func (c *Comm) Reserve(uint64) error { return unavailable() }

// AllGather fails: this build has no CUDA.
func (c *Comm) AllGather(send, recv []Region) (Stats, error) { return Stats{}, unavailable() }

// SendRecv fails: this build has no CUDA.
func (c *Comm) SendRecv(ts []Transfer) (Stats, error) { return Stats{}, unavailable() }

// Close does nothing.
func (c *Comm) Close() error { return nil }

var _ RankCollectives = (*RankComm)(nil)

// RankComm is an NCCL communicator with one local rank; a build without
// CUDA has none.
type RankComm struct{}

// NewUniqueID fails: this build has no CUDA.
func NewUniqueID(opts Options) (UniqueID, error) { return UniqueID{}, unavailable() }

// OpenRank checks its arguments and fails: this build has no CUDA.
func OpenRank(x *executor.Executor, id UniqueID, rank, ranks int, opts Options) (*RankComm, error) {
	if err := checkRankOpen(x, rank, ranks); err != nil {
		return nil, err
	}
	return nil, unavailable()
}

// Version returns "".
func (c *RankComm) Version() string { return "" }

// Rank returns 0.
func (c *RankComm) Rank() int { return 0 }

// Ranks returns 0.
func (c *RankComm) Ranks() int { return 0 }

// AllGather fails: this build has no CUDA.
func (c *RankComm) AllGather(send, recv Region) (Stats, error) { return Stats{}, unavailable() }

// SendRecv fails: this build has no CUDA.
func (c *RankComm) SendRecv(sends, recvs []PeerRegion) (Stats, error) {
	return Stats{}, unavailable()
}

// Close does nothing.
func (c *RankComm) Close() error { return nil }
