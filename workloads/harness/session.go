package harness

import (
	"fmt"
	"reflect"
	"unsafe"

	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/megakernel"
)

// BlockSizeFix is the fix of a block size out of range: the kernels take
// whole warps, at most 1,024 threads.
const BlockSizeFix = "Fix: use a multiple of 32 from 32 to 1024"

// ValidBlockSize reports whether threads is a block size the kernels take:
// a multiple of 32 from 32 to 1024.
func ValidBlockSize(threads int) bool {
	return threads >= 32 && threads <= 1024 && threads%32 == 0
}

// Fill sets *v to d when it is 0: a Config field's default.
func Fill(v *int, d int) {
	if *v == 0 {
		*v = d
	}
}

// ConfigError is the error of a Config field out of range: "<workload>
// config <field> = <v>: <fix>", where fix starts with "Fix:".
func ConfigError(workload, field string, v int, fix string) error {
	return fmt.Errorf("%s config %s = %d: %s", workload, field, v, fix)
}

// Budget returns the memory budget a session's plans use: the executor's
// live resident budget, which is never exceeded, capped at limit when limit
// is not 0 (a Config's MaxResidentBytes).
func Budget(x *executor.Executor, limit uint64) (uint64, error) {
	budget, err := x.Budget()
	if err != nil {
		return 0, err
	}
	if limit != 0 {
		budget = min(budget, limit)
	}
	return budget, nil
}

// PlanMemory plans a session's resident memory with the sparse topology,
// whose scratch is not scaled: the session allocates exactly what it plans.
// A request over its budget fails with *megakernel.OverBudgetError wrapped
// with what (for example "BFS over grid-512").
func PlanMemory(what string, req megakernel.MemoryRequest) (megakernel.MemoryPlan, error) {
	plan, err := megakernel.PlanMemoryBudget(megakernel.SparseFrontier, req)
	if err != nil {
		return megakernel.MemoryPlan{}, fmt.Errorf("%s: %w", what, err)
	}
	return plan, nil
}

// Entry is one entry point of a module, and where LoadKernels stores it.
type Entry struct {
	Dst  **executor.Kernel
	Name string
}

// LoadKernels loads the module ptx on x and every entry point, in order.
// On an error the module already loaded is returned with it.
func LoadKernels(x *executor.Executor, ptx []byte, entries []Entry) (*executor.Module, error) {
	mod, err := x.LoadModule(ptx)
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		if *e.Dst, err = mod.Kernel(e.Name); err != nil {
			return mod, err
		}
	}
	return mod, nil
}

// GridCap bounds the cooperative grid of a persistent kernel (a
// megakernel) whose grid barrier counts its blocks' arrivals.
type GridCap struct {
	// BlocksPerSM caps the co-resident blocks per SM; the occupancy model
	// and the driver bound it from above.
	BlocksPerSM int
	// MaxBlocks is the most blocks the barrier counts.
	MaxBlocks uint32
	// Kernel names the kernel ("BFS megakernel") and Field the Config
	// field that sets BlocksPerSM, in the error of a grid over MaxBlocks.
	Kernel, Field string
}

// PersistentGrid sizes k's cooperative grid of blocks of threads from the
// occupancy model (cross-checked with the driver), capped at
// c.BlocksPerSM blocks per SM, and refuses a grid of more than c.MaxBlocks
// blocks.
func PersistentGrid(x *executor.Executor, k *executor.Kernel, threads int, c GridCap) (executor.GridPlan, error) {
	g, err := x.CooperativeGrid(k, threads, 0)
	if err != nil {
		return g, err
	}
	if c.BlocksPerSM < g.BlocksPerSM {
		g.BlocksPerSM = c.BlocksPerSM
		g.GridBlocks = uint32(c.BlocksPerSM * g.SMCount)
	}
	if g.GridBlocks > c.MaxBlocks {
		return g, fmt.Errorf("%s grid of %d blocks: its barrier counts arrivals in 16 bits. Fix: cap it at %d blocks with Config.%s or larger blocks", c.Kernel, g.GridBlocks, c.MaxBlocks, c.Field)
	}
	return g, nil
}

// Allocate allocates one buffer of sizes[i] bytes into each bufs[i], in
// order, and checks that they add up to the memory plan's required bytes:
// a session holds exactly its plan. what names the session ("BFS
// session") in the error of a mismatch. Buffers allocated before an error
// stay allocated: Free frees them.
func Allocate(x *executor.Executor, what string, bufs []*executor.Buffer, sizes []uint64, required uint64) error {
	if len(bufs) != len(sizes) {
		return fmt.Errorf("%s has %d buffers but %d sizes. Fix: this is a bug in the session's memory request; report it", what, len(bufs), len(sizes))
	}
	var total uint64
	for i, b := range bufs {
		var err error
		if *b, err = x.Alloc(sizes[i]); err != nil {
			return err
		}
		total += sizes[i]
	}
	if total != required {
		return fmt.Errorf("%s allocated %d bytes but its memory plan requires %d. Fix: this is a bug in the session's memory request; report it", what, total, required)
	}
	return nil
}

// Buffers returns the executor.Buffer fields of the struct v points to, in
// declaration order: a session's buffers struct, for Allocate and Free.
// Other fields are skipped. v not a pointer to a struct is a programming
// error and panics.
func Buffers(v any) []*executor.Buffer {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.Elem().Kind() != reflect.Struct {
		panic(fmt.Sprintf("harness.Buffers of %T: not a pointer to a struct", v))
	}
	s := rv.Elem()
	var out []*executor.Buffer
	for i := range s.NumField() {
		// The fields are a workload's own, unexported: their addresses
		// are taken without the exported-field check of Interface.
		if f := s.Field(i); f.Type() == reflect.TypeFor[executor.Buffer]() {
			out = append(out, (*executor.Buffer)(f.Addr().UnsafePointer()))
		}
	}
	return out
}

// Free frees every allocated buffer of bufs (ID not 0) and zeroes it, so
// that freeing again does nothing. It returns the first error.
func Free(x *executor.Executor, bufs []*executor.Buffer) error {
	var first error
	for _, b := range bufs {
		if b.ID == 0 {
			continue
		}
		if err := x.Free(*b); err != nil && first == nil {
			first = err
		}
		*b = executor.Buffer{}
	}
	return first
}

// Open sets a session up on x in the order every workload shares: plan
// first (the memory plan: an input that does not fit is refused there,
// before anything is loaded or allocated), then every step in order
// (loading the kernels, planning the launches, allocating exactly the
// planned buffers, the one upload of the input). When a step fails, closeFn
// frees what the steps set up. Open returns the telemetry of the whole
// setup.
func Open(x *executor.Executor, plan func() error, steps []func() error, closeFn func() error) (executor.TelemetrySnapshot, error) {
	before := x.Telemetry()
	if err := plan(); err != nil {
		return executor.TelemetrySnapshot{}, err
	}
	for _, step := range steps {
		if err := step(); err != nil {
			_ = closeFn()
			return executor.TelemetrySnapshot{}, err
		}
	}
	return x.Telemetry().Sub(before), nil
}

// BytesOf views a slice of 4-byte values as bytes, for an upload: the
// bytes are the slice's own memory, not a copy.
func BytesOf[T int32 | uint32](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), 4*len(s))
}
