// Package kernelabi declares the interface between Go and a module of CUDA
// kernels once, in Go, and derives every other view of it from that one
// declaration: the launch arguments the host passes, the decoding of those
// arguments by a kernel's Go emulation, the C header the CUDA sources
// include, and the check that a compiled PTX module's entry points take
// exactly those parameters.
//
// A kernel's parameters are a struct type whose fields, in order, are its
// parameters. A struct is generic over the pointer type P, so that the host
// fills it with executor.Buffer handles and the emulation decodes it with
// executor.DevPtr addresses:
//
//	type InitParams[P executor.Buffer | executor.DevPtr] struct {
//		Level P      `c:"int *level"`
//		N     uint64 `c:"unsigned long long n"`
//	}
//
// Every parameter is 8 bytes wide, as the executor passes it: a pointer
// (the type parameter P), uint64, int64 or float64. The `c` tag is the
// parameter's C declaration, copied into the generated header.
//
// Parameters that several kernels share are a struct of their own,
// embedded where they stand in each kernel's list; its `c` tag names the
// macro the header defines for the group, which each kernel's parameter
// list then names instead of repeating the group:
//
//	type StateParams[P executor.Buffer | executor.DevPtr] struct {
//		Level P      `c:"int *level"`
//		N     uint64 `c:"unsigned long long n"`
//	}
//
//	type StepParams[P executor.Buffer | executor.DevPtr] struct {
//		StateParams[P] `c:"STATE_PARAMS"`
//		Depth uint64   `c:"unsigned long long depth"`
//	}
package kernelabi

import (
	"fmt"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/gpuplan/gpuplan/executor"
)

// Ptr is the pointer type of a kernel parameter struct: executor.Buffer on
// the host, executor.DevPtr in the kernels' Go emulation.
type Ptr interface {
	executor.Buffer | executor.DevPtr
}

// CopyParams are the parameters of a module's copy kernel of 16-byte words,
// its copy-bandwidth ceiling: N16 words from Src to Dst.
type CopyParams[P Ptr] struct {
	Src P      `c:"const uint4 *__restrict__ src"`
	Dst P      `c:"uint4 *__restrict__ dst"`
	N16 uint64 `c:"unsigned long long n16"`
}

// Module is the ABI of one PTX module: its kernels and the constants the
// host code and the kernels share.
type Module struct {
	// Name names the module (for example "bfs"); the header's include guard
	// and messages use it.
	Name string
	// Doc is the header's opening comment.
	Doc string
	// Kernels are the module's entry points.
	Kernels []Kernel
	// Consts are emitted as macros, in order.
	Consts []Const
}

// Kernel is one entry point.
type Kernel struct {
	// Name is the extern "C" entry name.
	Name string
	// Doc describes the kernel in the header.
	Doc string
	// Params is a value of the kernel's parameter struct type (any
	// instantiation: only the fields' order, kinds and tags are used).
	Params any
}

// Const is a value shared by the host and the kernels.
type Const struct {
	// Name is the C macro name (for example CTL_LINE).
	Name string
	// Value is the constant.
	Value uint64
	// Doc describes it in the header.
	Doc string
	// Tunable emits the macro under #ifndef, so that a build may override
	// it with -D to experiment; the committed PTX uses Value.
	Tunable bool
}

// param is one parameter: a field of a parameter struct, or of a group
// embedded in it.
type param struct {
	field string
	// index is the field's index path in the parameter struct.
	index []int
	decl  string
	kind  reflect.Kind
	ptr   bool
	// groups are the macros of the embedded groups the field lies in,
	// outermost first: none for a field of the struct itself.
	groups []string
}

var (
	bufferType = reflect.TypeFor[executor.Buffer]()
	devPtrType = reflect.TypeFor[executor.DevPtr]()
	identRE    = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
)

// params reads a parameter struct's fields, an embedded group's in its
// place.
func params(v any) ([]param, error) {
	t := reflect.TypeOf(v)
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || t.Kind() != reflect.Struct {
		return nil, fmt.Errorf("kernel parameters are %v, not a struct. Fix: declare a struct whose fields are the parameters in order", t)
	}
	if c, ok := paramCache.Load(t); ok {
		return c.(cachedParams).ps, c.(cachedParams).err
	}
	ps, err := fields(t, nil, nil)
	paramCache.Store(t, cachedParams{ps, err})
	return ps, err
}

// paramCache holds each parameter struct type's parameters (cachedParams),
// read once: an emulation decodes every launch's arguments. Callers do not
// modify what params returns.
var paramCache sync.Map

type cachedParams struct {
	ps  []param
	err error
}

// fields reads the fields of struct type t, which lies at index path at in
// the parameter struct, inside the groups named by groups.
func fields(t reflect.Type, at []int, groups []string) ([]param, error) {
	var out []param
	for i := range t.NumField() {
		f := t.Field(i)
		index := slices.Concat(at, []int{i})
		tag := strings.TrimSpace(f.Tag.Get("c"))
		if f.Anonymous && f.Type.Kind() == reflect.Struct {
			if !identRE.MatchString(tag) {
				return nil, fmt.Errorf("parameter group %s.%s has tag %q, not a macro name. Fix: tag the embedded struct with the name of the macro its parameters get, for example `c:\"STATE_PARAMS\"`", t.Name(), f.Name, tag)
			}
			sub, err := fields(f.Type, index, slices.Concat(groups, []string{tag}))
			if err != nil {
				return nil, err
			}
			out = append(out, sub...)
			continue
		}
		p := param{field: f.Name, index: index, decl: tag, kind: f.Type.Kind(), groups: groups}
		switch {
		case f.Type == bufferType || f.Type == devPtrType:
			p.ptr = true
		case f.Type.Kind() == reflect.Uint64 || f.Type.Kind() == reflect.Int64 || f.Type.Kind() == reflect.Float64:
		default:
			return nil, fmt.Errorf("parameter %s.%s has type %v. Fix: use the pointer type parameter, uint64, int64 or float64 (every parameter is 8 bytes)", t.Name(), f.Name, f.Type)
		}
		if p.decl == "" {
			return nil, fmt.Errorf("parameter %s.%s has no `c` tag. Fix: tag it with its C declaration, for example `c:\"unsigned long long n\"`", t.Name(), f.Name)
		}
		out = append(out, p)
	}
	return out, nil
}

// Args returns the launch arguments of a parameter struct filled with
// executor.Buffer handles, in field order.
func Args(v any) ([]executor.Arg, error) {
	rv := reflect.Indirect(reflect.ValueOf(v))
	ps, err := params(v)
	if err != nil {
		return nil, err
	}
	args := make([]executor.Arg, len(ps))
	for i, p := range ps {
		f := rv.FieldByIndex(p.index)
		switch {
		case f.Type() == bufferType:
			args[i] = executor.Ptr(f.Interface().(executor.Buffer))
		case p.ptr:
			return nil, fmt.Errorf("parameter %s holds a device address. Fix: fill host-side parameters with executor.Buffer handles", p.field)
		case p.kind == reflect.Uint64:
			args[i] = executor.U64(f.Uint())
		case p.kind == reflect.Int64:
			args[i] = executor.I64(f.Int())
		default:
			args[i] = executor.F64(f.Float())
		}
	}
	return args, nil
}

// MustArgs is Args for parameter structs whose type is known to be valid
// (checked by Module.Validate in the package's tests): an error is a
// programming error and panics.
func MustArgs(v any) []executor.Arg {
	a, err := Args(v)
	if err != nil {
		panic(err)
	}
	return a
}

// Decode fills the parameter struct dst (a pointer, with executor.DevPtr
// pointers) from the 8-byte values a launch passed.
func Decode(vals []uint64, dst any) error {
	rv := reflect.ValueOf(dst)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return fmt.Errorf("decode target is %T. Fix: pass a pointer to the parameter struct", dst)
	}
	ps, err := params(dst)
	if err != nil {
		return err
	}
	if len(vals) != len(ps) {
		return fmt.Errorf("%s: the launch passed %d arguments, the ABI declares %d. Fix: launch with the declared parameters", rv.Elem().Type().Name(), len(vals), len(ps))
	}
	s := rv.Elem()
	for i, p := range ps {
		f := s.FieldByIndex(p.index)
		switch {
		case f.Type() == devPtrType, p.kind == reflect.Uint64:
			f.SetUint(vals[i])
		case p.ptr:
			return fmt.Errorf("parameter %s is a Buffer handle. Fix: decode into the executor.DevPtr instantiation", p.field)
		case p.kind == reflect.Int64:
			f.SetInt(int64(vals[i]))
		default:
			f.SetFloat(math.Float64frombits(vals[i]))
		}
	}
	return nil
}

// declName returns the identifier a C declaration ends with.
func declName(decl string) string {
	i := strings.LastIndexFunc(decl, func(r rune) bool {
		return !(r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
	})
	n := decl[i+1:]
	if !identRE.MatchString(n) {
		return ""
	}
	return n
}

// Index returns the position in the launch arguments of the named field
// of the parameter struct v (a field of an embedded group counts where the
// group stands), or an error naming the field.
func Index(v any, field string) (int, error) {
	t := reflect.TypeOf(v)
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t != nil && t.Kind() == reflect.Struct {
		if f, ok := t.FieldByName(field); ok {
			ps, err := params(v)
			if err != nil {
				return 0, err
			}
			if i := slices.IndexFunc(ps, func(p param) bool { return slices.Equal(p.index, f.Index) }); i >= 0 {
				return i, nil
			}
		}
	}
	return 0, fmt.Errorf("parameter struct %v has no field %s. Fix: name a declared parameter", t, field)
}

// MustIndex is Index for a field known to be declared (checked by the
// package's tests): an error is a programming error and panics.
func MustIndex(v any, field string) int {
	i, err := Index(v, field)
	if err != nil {
		panic(err)
	}
	return i
}

// SplitArgs returns the launch arguments of a kernel that follows the
// executor's split-dispatch convention without its last two parameters,
// which must be declared phase_begin and phase_end:
// executor.DispatchWithGridSyncSplit appends them per launch.
func SplitArgs(v any) ([]executor.Arg, error) {
	ps, err := params(v)
	if err != nil {
		return nil, err
	}
	n := len(ps)
	if n < 2 || declName(ps[n-2].decl) != "phase_begin" || declName(ps[n-1].decl) != "phase_end" {
		return nil, fmt.Errorf("%T does not end with phase_begin and phase_end. Fix: declare the split-dispatch phase range as the last two parameters", v)
	}
	args, err := Args(v)
	if err != nil {
		return nil, err
	}
	return args[:n-2], nil
}
