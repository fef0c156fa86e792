package megakernel

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/gpuplan/gpuplan/internal/checked"
)

// Limits of a workload whose waves run kernels.
const (
	// MaxWaveArgs is the most arguments one wave function takes (the
	// header's GP_MAX_ARGS).
	MaxWaveArgs = 256
	// MaxBuffers is the most named buffers a workload declares.
	MaxBuffers = 1 << 16
	// MaxWaveTiles is the most tiles of one wave: a launch's grid.x.
	MaxWaveTiles = math.MaxInt32
	// MaxRunTiles is the most tiles of all waves together: the persistent
	// kernel's task queue holds one 8-byte entry per tile.
	MaxRunTiles = 1 << 28
	// MaxBlockThreads is the largest block of a wave.
	MaxBlockThreads = 1024
	// MaxWaveSharedBytes is the most dynamic shared memory of one wave
	// (Hopper's opt-in limit; a device with less refuses it when planned).
	MaxWaveSharedBytes = 227 << 10
	// DefaultRunLaunchOverheadNS is the launch overhead planned for a
	// workload with a module that gives none: one stream launch measured on
	// an H200.
	DefaultRunLaunchOverheadNS = 4400
	// DefaultRunDispatchCostNS is the planned dispatch cost of such a
	// workload's schedule sample until a run measures one.
	DefaultRunDispatchCostNS = 10000
	// DefaultRunAnalysis is the analysis kind of such a workload.
	DefaultRunAnalysis = "custom:0"
)

// Tolerances of float outputs when an output gives none: the relative L2
// error ‖out − ref‖ / ‖ref‖ allowed against the reference.
const (
	DefaultTolerance     = 1e-4
	DefaultTolerance16   = 1e-2
	MaxOutputTolerance   = 1
	minIdentifierMessage = "use letters, digits, '.', '_' and '-', starting with a letter or '_'"
)

var (
	symbolRE = regexp.MustCompile(`^[A-Za-z_$][A-Za-z0-9_$]*$`)
	nameRE   = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.-]*$`)
)

// WorkloadBuffer is a named device buffer of a workload whose waves run
// kernels: its size and initial contents (zeros unless Init says
// otherwise). ReadOnly says no wave writes it (weights, say): a run need
// not restore it before the next.
type WorkloadBuffer struct {
	Name     string      `json:"name"`
	Bytes    *uint64     `json:"bytes"`
	Init     *BufferInit `json:"init,omitempty"`
	ReadOnly bool        `json:"read_only,omitempty"`
}

// BufferInit is a buffer's initial contents. Fill is "zeros", "random"
// (Seed, Type and for float types the range [Min, Max)) or "file" (Path,
// relative to the workload file, holding exactly the buffer's bytes).
type BufferInit struct {
	Fill string   `json:"fill"`
	Seed *uint64  `json:"seed,omitempty"`
	Type string   `json:"type,omitempty"`
	Min  *float64 `json:"min,omitempty"`
	Max  *float64 `json:"max,omitempty"`
	Path string   `json:"path,omitempty"`
}

// Buffer fills.
const (
	FillZeros  = "zeros"
	FillRandom = "random"
	FillFile   = "file"
)

// ElementType is the type of a buffer's elements, for random fills and for
// checking outputs.
type ElementType string

// Element types.
const (
	TypeBytes ElementType = "bytes"
	TypeU32   ElementType = "u32"
	TypeI32   ElementType = "i32"
	TypeU64   ElementType = "u64"
	TypeF32   ElementType = "f32"
	TypeF64   ElementType = "f64"
	TypeBF16  ElementType = "bf16"
)

var elementTypes = []ElementType{TypeBytes, TypeU32, TypeI32, TypeU64, TypeF32, TypeF64, TypeBF16}

// Size returns the element's bytes.
func (t ElementType) Size() uint64 {
	switch t {
	case TypeU32, TypeI32, TypeF32:
		return 4
	case TypeU64, TypeF64:
		return 8
	case TypeBF16:
		return 2
	}
	return 1
}

// Float reports whether the type is a floating-point type.
func (t ElementType) Float() bool { return t == TypeF32 || t == TypeF64 || t == TypeBF16 }

func parseElementType(s string) (ElementType, bool) {
	for _, t := range elementTypes {
		if string(t) == s {
			return t, true
		}
	}
	return "", false
}

func elementTypeList() string {
	s := make([]string, len(elementTypes))
	for i, t := range elementTypes {
		s[i] = string(t)
	}
	return strings.Join(s, ", ")
}

// WorkloadOutput names a buffer read back after a run and written out: its
// element type says how it is compared with the reference (float types
// within Tolerance, the relative L2 error; the others exactly).
type WorkloadOutput struct {
	Buffer    string   `json:"buffer"`
	Type      string   `json:"type,omitempty"`
	Tolerance *float64 `json:"tolerance,omitempty"`
}

// WaveKernel is the work of one wave: Function in the workload's module,
// run once per tile by a block of Block threads (a multiple of 32), with
// SharedBytes of dynamic shared memory and the argument block Args.
// Prologue says the function calls gp_wait itself and may start before
// its producers finish.
type WaveKernel struct {
	Function    string    `json:"function"`
	Tiles       *uint64   `json:"tiles"`
	Block       *uint64   `json:"block"`
	SharedBytes uint64    `json:"shared_bytes,omitempty"`
	Prologue    bool      `json:"prologue,omitempty"`
	Args        []WaveArg `json:"args"`
}

// WaveArg is one argument: a buffer reference (Buffer, an Offset into it
// and optionally the Bytes the wave touches from there) or exactly one
// scalar.
type WaveArg struct {
	Buffer *string   `json:"buffer,omitempty"`
	Offset uint64    `json:"offset,omitempty"`
	Bytes  *uint64   `json:"bytes,omitempty"`
	U32    *uint32   `json:"u32,omitempty"`
	I32    *int32    `json:"i32,omitempty"`
	U64    *uint64   `json:"u64,omitempty"`
	I64    *int64    `json:"i64,omitempty"`
	F32    *float32  `json:"f32,omitempty"`
	F64    *float64  `json:"f64,omitempty"`
	kind   ArgKind   // set by validation
	buf    int       // the buffer's index, for buffer arguments
	scalar uint64    // the 8-byte slot of a scalar
	_      [0]func() // not comparable
}

// ArgKind says what an argument slot holds.
type ArgKind uint8

// Argument kinds.
const (
	ArgBuffer ArgKind = iota + 1
	ArgScalar
)

// TileMap says which producer tiles each tile of the consumer reads: every
// one (TileAll, the default), the one with the same index (TileSame), or
// the block [t·Block, (t+1)·Block) (TileBlock). JSON: "all", "same",
// "block:K".
type TileMap struct {
	Kind  TileMapKind
	Block uint64
}

// TileMapKind names a TileMap form.
type TileMapKind uint8

// Tile map forms.
const (
	TileAll TileMapKind = iota
	TileSame
	TileBlock
)

// String returns the JSON spelling.
func (m TileMap) String() string {
	switch m.Kind {
	case TileSame:
		return "same"
	case TileBlock:
		return "block:" + strconv.FormatUint(m.Block, 10)
	}
	return "all"
}

// MarshalText writes the JSON spelling.
func (m TileMap) MarshalText() ([]byte, error) { return []byte(m.String()), nil }

// UnmarshalText reads "all", "same" or "block:K" with K >= 1.
func (m *TileMap) UnmarshalText(b []byte) error {
	s := string(b)
	switch {
	case s == "all":
		*m = TileMap{Kind: TileAll}
	case s == "same":
		*m = TileMap{Kind: TileSame}
	case strings.HasPrefix(s, "block:"):
		k, err := strconv.ParseUint(s[len("block:"):], 10, 64)
		if err != nil || k == 0 || k > MaxWaveTiles {
			return fmt.Errorf("tile map %q has no block size in 1..%d. Fix: write \"block:K\", for example \"block:4\"", s, MaxWaveTiles)
		}
		*m = TileMap{Kind: TileBlock, Block: k}
	default:
		return fmt.Errorf("tile map %q is not \"all\", \"same\" or \"block:K\". Fix: use one of those", s)
	}
	return nil
}

// Producers returns the producer tiles [lo, hi) tile t of a consumer reads
// from a producer of p tiles.
func (m TileMap) Producers(t, p uint64) (lo, hi uint64) {
	switch m.Kind {
	case TileSame:
		return t, t + 1
	case TileBlock:
		lo = min(t*m.Block, p)
		return lo, min(lo+m.Block, p)
	}
	return 0, p
}

// HasModule reports whether the workload's waves run kernels of a module
// (a workload for `gpuplan run`).
func (w *Workload) HasModule() bool { return w.Module != nil }

// validateRunDefaults fills the planning fields a workload with a module
// may leave out: the analysis kind, the launch overhead, the resident state
// (the buffers' bytes) and the schedule sample.
func (w *Workload) validateRunDefaults(src string) error {
	if w.Analysis == nil {
		a := DefaultRunAnalysis
		w.Analysis = &a
	}
	if w.LaunchOverheadNS == nil {
		v := float64(DefaultRunLaunchOverheadNS)
		w.LaunchOverheadNS = &v
	}
	var total, readback uint64
	for i, b := range w.Buffers {
		f := func(name string) string { return fmt.Sprintf("buffers[%d].%s", i, name) }
		if err := checkRequired(src, f, requiredField{"bytes", b.Bytes != nil, "give the buffer's size in bytes"}); err != nil {
			return err
		}
		var err error
		if total, err = checked.Add(total, *b.Bytes, "buffer bytes"); err != nil {
			return &WorkloadError{Source: src, Field: f("bytes"), Err: checked.Inputs(err, "the sum of buffers[].bytes")}
		}
	}
	if w.Graph == nil {
		one, zero := uint64(1), uint64(0)
		w.Graph = &WorkloadGraph{NodeCount: &total, EdgeCount: &zero, BytesPerNode: &one, BytesPerEdge: &zero}
	}
	if w.ScheduleSample == nil {
		cost, density := float64(DefaultRunDispatchCostNS), 1.0
		for _, o := range w.Outputs {
			if i := w.bufferIndex(o.Buffer); i >= 0 && w.Buffers[i].Bytes != nil {
				readback = checked.SaturatingAdd(readback, *w.Buffers[i].Bytes)
			}
		}
		w.ScheduleSample = &WorkloadSample{DispatchCostNS: &cost, FrontierDensity: &density, ReadbackBytes: &readback}
	}
	for i := range w.Waves {
		wv := &w.Waves[i]
		if wv.Kernel == nil {
			continue
		}
		zero := uint64(0)
		for _, p := range []**uint64{&wv.FrontierBytes, &wv.ScratchBytes, &wv.OutputBytes} {
			if *p == nil {
				*p = &zero
			}
		}
	}
	return nil
}

// BufferIndexOf returns the position in Buffers of the named buffer, or
// -1.
func (w *Workload) BufferIndexOf(name string) int { return w.bufferIndex(name) }

// bufferIndex returns the position of the named buffer, or -1.
func (w *Workload) bufferIndex(name string) int {
	for i, b := range w.Buffers {
		if b.Name == name {
			return i
		}
	}
	return -1
}

// validateRun checks the module, buffers, outputs, every wave's kernel and
// the dependencies' tile maps of a workload with a module. It runs after
// the planning fields are valid, so wave ids and dependency endpoints are
// known to be in range.
func (w *Workload) validateRun(src string) error {
	if *w.Module == "" {
		return fieldErr(src, "module", "give the path of the waves' relocatable PTX (nvcc -rdc=true -ptx), relative to the workload file", "module is empty")
	}
	if err := w.validateBuffers(src); err != nil {
		return err
	}
	if err := w.validateOutputs(src); err != nil {
		return err
	}
	var tiles uint64
	for i := range w.Waves {
		if err := w.validateWaveKernel(src, i); err != nil {
			return err
		}
		tiles = checked.SaturatingAdd(tiles, *w.Waves[i].Kernel.Tiles)
	}
	if tiles > MaxRunTiles {
		return fieldErr(src, "waves", fmt.Sprintf("give the waves at most %d tiles together", MaxRunTiles), "the waves have %d tiles together", tiles)
	}
	for i, d := range w.Dependencies {
		if err := w.validateTileMap(src, i, d); err != nil {
			return err
		}
	}
	return nil
}

func (w *Workload) validateBuffers(src string) error {
	if len(w.Buffers) > MaxBuffers {
		return fieldErr(src, "buffers", fmt.Sprintf("declare at most %d buffers", MaxBuffers), "%d buffers", len(w.Buffers))
	}
	seen := make(map[string]int, len(w.Buffers))
	for i, b := range w.Buffers {
		f := func(name string) string { return fmt.Sprintf("buffers[%d].%s", i, name) }
		if err := checkRequired(src, f, requiredField{"name", b.Name != "", "give the buffer a name that waves' arguments refer to"}); err != nil {
			return err
		}
		switch {
		case !nameRE.MatchString(b.Name) || len(b.Name) > 128:
			return fieldErr(src, f("name"), minIdentifierMessage+", at most 128 characters", "buffer name %q is not a plain name", clipName(b.Name))
		case *b.Bytes == 0:
			return fieldErr(src, f("bytes"), "give the buffer at least one byte, or remove it", "buffer %s has 0 bytes", b.Name)
		}
		if j, dup := seen[b.Name]; dup {
			return fieldErr(src, f("name"), "give every buffer its own name", "buffer name %s is already used by buffers[%d]", b.Name, j)
		}
		seen[b.Name] = i
		if err := validateInit(src, f("init"), b); err != nil {
			return err
		}
	}
	return nil
}

func validateInit(src, field string, b WorkloadBuffer) error {
	in := b.Init
	if in == nil {
		return nil
	}
	sub := func(name string) string { return field + "." + name }
	if err := checkRequired(src, sub, requiredField{"fill", in.Fill != "", "give \"zeros\", \"random\" or \"file\""}); err != nil {
		return err
	}
	switch in.Fill {
	case FillZeros:
		if in.Seed != nil || in.Type != "" || in.Min != nil || in.Max != nil || in.Path != "" {
			return fieldErr(src, field, "give a zeros fill no other field", "a zeros fill has seed, type, min, max or path")
		}
	case FillFile:
		if err := checkRequired(src, sub, requiredField{"path", in.Path != "", "give the file holding the buffer's bytes, relative to the workload file"}); err != nil {
			return err
		}
		if in.Seed != nil || in.Type != "" || in.Min != nil || in.Max != nil {
			return fieldErr(src, field, "give a file fill only its path", "a file fill has seed, type, min or max")
		}
	case FillRandom:
		return validateRandomInit(src, field, b)
	default:
		return fieldErr(src, sub("fill"), "use \"zeros\", \"random\" or \"file\"", "fill %q is unknown", clipName(in.Fill))
	}
	return nil
}

func validateRandomInit(src, field string, b WorkloadBuffer) error {
	in := b.Init
	sub := func(name string) string { return field + "." + name }
	if err := checkRequired(src, sub, requiredField{"seed", in.Seed != nil, "give the random fill a seed (any unsigned integer), so runs are repeatable"}); err != nil {
		return err
	}
	if in.Path != "" {
		return fieldErr(src, sub("path"), "remove path from a random fill", "a random fill has a path")
	}
	t := TypeBytes
	if in.Type != "" {
		var ok bool
		if t, ok = parseElementType(in.Type); !ok {
			return fieldErr(src, sub("type"), "use one of "+elementTypeList(), "element type %q is unknown", clipName(in.Type))
		}
	}
	if *b.Bytes%t.Size() != 0 {
		return fieldErr(src, "buffers", fmt.Sprintf("make buffer %s's bytes a multiple of %d, the size of %s", b.Name, t.Size(), t), "buffer %s has %d bytes", b.Name, *b.Bytes)
	}
	if !t.Float() {
		if in.Min != nil || in.Max != nil {
			return fieldErr(src, field, "give min and max only with a float type (f32, f64, bf16); integer fills use every value", "type %s has min or max", t)
		}
		return nil
	}
	lo, hi := -1.0, 1.0
	if in.Min != nil {
		lo = *in.Min
	}
	if in.Max != nil {
		hi = *in.Max
	}
	if !checked.Finite(lo) || !checked.Finite(hi) || lo >= hi || math.Abs(lo) > 1e30 || math.Abs(hi) > 1e30 {
		return fieldErr(src, field, "give finite min < max within ±1e30 (default -1 and 1)", "range [%v, %v) is empty or not finite", lo, hi)
	}
	return nil
}

func (w *Workload) validateOutputs(src string) error {
	seen := map[string]int{}
	for i, o := range w.Outputs {
		f := func(name string) string { return fmt.Sprintf("outputs[%d].%s", i, name) }
		if err := checkRequired(src, f, requiredField{"buffer", o.Buffer != "", "name the buffer to read back"}); err != nil {
			return err
		}
		b := w.bufferIndex(o.Buffer)
		if b < 0 {
			return fieldErr(src, f("buffer"), "name a buffer listed under buffers", "unknown buffer %q", clipName(o.Buffer))
		}
		if j, dup := seen[o.Buffer]; dup {
			return fieldErr(src, f("buffer"), "read each buffer back once", "buffer %s is already read back by outputs[%d]", o.Buffer, j)
		}
		seen[o.Buffer] = i
		t := TypeBytes
		if o.Type != "" {
			var ok bool
			if t, ok = parseElementType(o.Type); !ok {
				return fieldErr(src, f("type"), "use one of "+elementTypeList(), "element type %q is unknown", clipName(o.Type))
			}
		}
		if *w.Buffers[b].Bytes%t.Size() != 0 {
			return fieldErr(src, f("type"), fmt.Sprintf("pick a type whose size divides buffer %s's %d bytes", o.Buffer, *w.Buffers[b].Bytes), "%s elements are %d bytes", t, t.Size())
		}
		if o.Tolerance != nil {
			if !t.Float() {
				return fieldErr(src, f("tolerance"), "remove the tolerance: integer and byte outputs are compared exactly", "type %s has a tolerance", t)
			}
			if !finiteIn(*o.Tolerance, 0, MaxOutputTolerance) {
				return fieldErr(src, f("tolerance"), "give a relative L2 error in [0, 1], for example 1e-4", "tolerance %v is outside [0, 1]", *o.Tolerance)
			}
		}
	}
	return nil
}

// OutputType returns the element type of output i (bytes by default).
func (o WorkloadOutput) OutputType() ElementType {
	if t, ok := parseElementType(o.Type); ok {
		return t
	}
	return TypeBytes
}

// OutputTolerance returns the output's tolerance: its own, or the default
// of its type (0 for exact types).
func (o WorkloadOutput) OutputTolerance() float64 {
	t := o.OutputType()
	switch {
	case o.Tolerance != nil:
		return *o.Tolerance
	case t == TypeBF16:
		return DefaultTolerance16
	case t.Float():
		return DefaultTolerance
	}
	return 0
}

// validateWaveKernel checks waves[i]'s kernel: its required fields first,
// then their values.
func (w *Workload) validateWaveKernel(src string, i int) error {
	wv := w.Waves[i]
	k := wv.Kernel
	if err := checkRequired(src, func(name string) string { return fmt.Sprintf("waves[%d].%s", i, name) }, requiredField{"kernel", k != nil,
		"give every wave of a workload with a module its kernel: {\"function\", \"tiles\", \"block\", \"args\"}"}); err != nil {
		return err
	}
	f := func(name string) string { return fmt.Sprintf("waves[%d].kernel.%s", i, name) }
	if err := checkRequired(src, f,
		requiredField{"function", k.Function != "", "name the wave's device function in the module (declared with GP_WAVE)"},
		requiredField{"tiles", k.Tiles != nil, "give the number of tiles (blocks) the wave runs"},
		requiredField{"block", k.Block != nil, "give the threads per tile, a multiple of 32 up to 1024"}); err != nil {
		return err
	}
	switch {
	case !symbolRE.MatchString(k.Function) || len(k.Function) > 256:
		return fieldErr(src, f("function"), "name an extern \"C\" device function: letters, digits, '_' and '$'", "function name %q is not a PTX symbol", clipName(k.Function))
	case strings.HasPrefix(k.Function, "gp_"):
		return fieldErr(src, f("function"), "rename the function: names starting with gp_ belong to gpuplan's runtime", "function %s uses the reserved prefix gp_", k.Function)
	case *k.Tiles == 0 || *k.Tiles > MaxWaveTiles:
		return fieldErr(src, f("tiles"), fmt.Sprintf("give 1 to %d tiles", MaxWaveTiles), "wave %d has %d tiles", *wv.ID, *k.Tiles)
	case *k.Block == 0 || *k.Block > MaxBlockThreads || *k.Block%32 != 0:
		return fieldErr(src, f("block"), "give a multiple of 32 from 32 to 1024", "block of %d threads", *k.Block)
	case k.SharedBytes > MaxWaveSharedBytes:
		return fieldErr(src, f("shared_bytes"), fmt.Sprintf("give at most %d bytes of dynamic shared memory", MaxWaveSharedBytes), "%d bytes", k.SharedBytes)
	case len(k.Args) > MaxWaveArgs:
		return fieldErr(src, f("args"), fmt.Sprintf("pass at most %d arguments; put more in a buffer", MaxWaveArgs), "%d arguments", len(k.Args))
	}
	for j := range k.Args {
		if err := w.validateArg(src, fmt.Sprintf("waves[%d].kernel.args[%d]", i, j), &k.Args[j]); err != nil {
			return err
		}
	}
	return nil
}

func (w *Workload) validateArg(src, field string, a *WaveArg) error {
	set := 0
	for _, p := range []bool{a.Buffer != nil, a.U32 != nil, a.I32 != nil, a.U64 != nil, a.I64 != nil, a.F32 != nil, a.F64 != nil} {
		if p {
			set++
		}
	}
	if set != 1 {
		return fieldErr(src, field, "give exactly one of buffer, u32, i32, u64, i64, f32 and f64", "the argument sets %d of them", set)
	}
	if a.Buffer == nil {
		if a.Offset != 0 || a.Bytes != nil {
			return fieldErr(src, field, "give offset and bytes only with a buffer", "a scalar argument has offset or bytes")
		}
		a.kind, a.scalar = ArgScalar, scalarSlot(a)
		return a.checkFloat(src, field)
	}
	b := w.bufferIndex(*a.Buffer)
	if b < 0 {
		return fieldErr(src, field+".buffer", "name a buffer listed under buffers", "unknown buffer %q", clipName(*a.Buffer))
	}
	size := *w.Buffers[b].Bytes
	if a.Offset >= size {
		return fieldErr(src, field+".offset", fmt.Sprintf("give an offset below buffer %s's %d bytes", *a.Buffer, size), "offset %d is outside buffer %s", a.Offset, *a.Buffer)
	}
	if a.Bytes != nil && (*a.Bytes == 0 || *a.Bytes > size-a.Offset) {
		return fieldErr(src, field+".bytes", fmt.Sprintf("give 1 to %d bytes (buffer %s has %d bytes from offset %d)", size-a.Offset, *a.Buffer, size-a.Offset, a.Offset),
			"offset %d plus %d bytes is outside buffer %s of %d bytes", a.Offset, *a.Bytes, *a.Buffer, size)
	}
	a.kind, a.buf = ArgBuffer, b
	return nil
}

func (a *WaveArg) checkFloat(src, field string) error {
	if (a.F32 != nil && !checked.Finite(float64(*a.F32))) || (a.F64 != nil && !checked.Finite(*a.F64)) {
		return fieldErr(src, field, "give a finite number", "the float argument is not finite")
	}
	return nil
}

// scalarSlot is a scalar's 8-byte argument slot.
func scalarSlot(a *WaveArg) uint64 {
	switch {
	case a.U32 != nil:
		return uint64(*a.U32)
	case a.I32 != nil:
		return uint64(int64(*a.I32))
	case a.U64 != nil:
		return *a.U64
	case a.I64 != nil:
		return uint64(*a.I64)
	case a.F32 != nil:
		return uint64(math.Float32bits(*a.F32))
	}
	return math.Float64bits(*a.F64)
}

// Kind returns what the validated argument holds.
func (a *WaveArg) Kind() ArgKind { return a.kind }

// BufferIndex returns the position in Workload.Buffers of a buffer
// argument's buffer.
func (a *WaveArg) BufferIndex() int { return a.buf }

// Slot returns a scalar argument's 8-byte slot.
func (a *WaveArg) Slot() uint64 { return a.scalar }

func (w *Workload) validateTileMap(src string, i int, d WorkloadDependency) error {
	if d.Tiles == nil || d.Tiles.Kind == TileAll {
		return nil
	}
	field := fmt.Sprintf("dependencies[%d].tiles", i)
	before, after := w.Waves[w.waveIndex(int(*d.Before))].Kernel, w.Waves[w.waveIndex(int(*d.After))].Kernel
	p, c := *before.Tiles, *after.Tiles
	switch d.Tiles.Kind {
	case TileSame:
		if p != c {
			return fieldErr(src, field, "use \"same\" only between waves of equal tile counts, or \"block:K\" or \"all\"",
				"wave %d has %d tiles and wave %d has %d", *d.Before, p, *d.After, c)
		}
	case TileBlock:
		if lo, _ := d.Tiles.Producers(c-1, p); lo >= p {
			return fieldErr(src, field, fmt.Sprintf("give a block of at most %d tiles, so that every one of wave %d's %d tiles reads at least one of wave %d's %d", max(1, (p-1)/max(1, c-1)), *d.After, c, *d.Before, p),
				"tile %d of wave %d would read no tile of wave %d", c-1, *d.After, *d.Before)
		}
	}
	return nil
}

// DependencyTiles returns the tile map of dependency i (TileAll when the
// dependency gives none).
func (w *Workload) DependencyTiles(i int) TileMap {
	if d := w.Dependencies[i]; d.Tiles != nil {
		return *d.Tiles
	}
	return TileMap{}
}

// clipName shortens a name echoed in an error to 64 bytes.
func clipName(s string) string {
	if len(s) <= 64 {
		return s
	}
	return s[:61] + "..."
}
