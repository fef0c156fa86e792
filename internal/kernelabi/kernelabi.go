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
package kernelabi

import (
	"bytes"
	"fmt"
	"maps"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"github.com/gpuplan/gpuplan/executor"
)

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

// param is one field of a parameter struct.
type param struct {
	field string
	decl  string
	kind  reflect.Kind
	ptr   bool
}

var (
	bufferType = reflect.TypeFor[executor.Buffer]()
	devPtrType = reflect.TypeFor[executor.DevPtr]()
	identRE    = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
)

// params reads a parameter struct's fields.
func params(v any) ([]param, error) {
	t := reflect.TypeOf(v)
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || t.Kind() != reflect.Struct {
		return nil, fmt.Errorf("kernel parameters are %v, not a struct. Fix: declare a struct whose fields are the parameters in order", t)
	}
	out := make([]param, 0, t.NumField())
	for i := range t.NumField() {
		f := t.Field(i)
		p := param{field: f.Name, decl: strings.TrimSpace(f.Tag.Get("c")), kind: f.Type.Kind()}
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
		f := rv.Field(i)
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
		f := s.Field(i)
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

// Validate checks the module: a name, unique kernel names, valid parameter
// structs with C declarations whose names are unique per kernel, and
// unique constant names that are C identifiers.
func (m Module) Validate() error {
	if !identRE.MatchString(m.Name) {
		return fmt.Errorf("module name %q is not an identifier. Fix: name the module like its .cu file", m.Name)
	}
	seen := map[string]bool{}
	for i, k := range m.Kernels {
		if !identRE.MatchString(k.Name) || seen[k.Name] {
			return fmt.Errorf("kernels[%d].name %q is empty, not an identifier or repeated. Fix: give each kernel its extern \"C\" name once", i, k.Name)
		}
		seen[k.Name] = true
		ps, err := params(k.Params)
		if err != nil {
			return fmt.Errorf("kernel %s: %w", k.Name, err)
		}
		names := map[string]bool{}
		for _, p := range ps {
			n := declName(p.decl)
			if n == "" || names[n] {
				return fmt.Errorf("kernel %s: parameter %s declares %q, whose name is missing or repeated. Fix: end each `c` tag with a unique parameter name", k.Name, p.field, p.decl)
			}
			names[n] = true
		}
	}
	for i, c := range m.Consts {
		if !identRE.MatchString(c.Name) || seen[c.Name] {
			return fmt.Errorf("consts[%d].name %q is empty, not an identifier or repeated. Fix: give each constant a unique C macro name", i, c.Name)
		}
		seen[c.Name] = true
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

// ParamsMacro returns the name of the macro holding kernel name's parameter
// list: the upper-cased name and _PARAMS.
func ParamsMacro(name string) string { return strings.ToUpper(name) + "_PARAMS" }

// Header renders the C header of the module: the constants as macros and,
// for each kernel, a macro with its parameter list, which the CUDA source
// uses as `extern "C" __global__ void name(NAME_PARAMS)`. A kernel with the
// same parameter list as an earlier one gets that kernel's macro by name.
func (m Module) Header() ([]byte, error) {
	if err := m.Validate(); err != nil {
		return nil, err
	}
	var b bytes.Buffer
	guard := "GPUPLAN_" + strings.ToUpper(m.Name) + "_ABI_H"
	b.WriteString("// Code generated by go generate from the kernel ABI declared in Go. DO NOT EDIT.\n")
	comment(&b, m.Doc, "")
	fmt.Fprintf(&b, "#ifndef %s\n#define %s\n", guard, guard)
	for _, c := range m.Consts {
		if c.Doc != "" {
			b.WriteString("\n")
			comment(&b, c.Doc, "")
		}
		lit := fmt.Sprintf("%du", c.Value)
		if c.Value > math.MaxUint32 {
			lit = fmt.Sprintf("%dull", c.Value)
		}
		if c.Tunable {
			fmt.Fprintf(&b, "#ifndef %s\n#define %s %s\n#endif\n", c.Name, c.Name, lit)
		} else {
			fmt.Fprintf(&b, "#define %s %s\n", c.Name, lit)
		}
	}
	// A kernel whose parameter list an earlier kernel already has names
	// that kernel's macro instead of repeating the list.
	seen := map[string]string{}
	for _, k := range m.Kernels {
		ps, _ := params(k.Params)
		b.WriteString("\n")
		comment(&b, k.Doc, "")
		decls := make([]string, len(ps))
		for i, p := range ps {
			decls[i] = p.decl
		}
		list := strings.Join(decls, ", \\\n    ")
		if first, ok := seen[list]; ok {
			fmt.Fprintf(&b, "#define %s %s\n", ParamsMacro(k.Name), first)
			continue
		}
		seen[list] = ParamsMacro(k.Name)
		fmt.Fprintf(&b, "#define %s \\\n    %s\n", ParamsMacro(k.Name), list)
	}
	fmt.Fprintf(&b, "\n#endif  // %s\n", guard)
	return b.Bytes(), nil
}

// comment writes text as // lines.
func comment(b *bytes.Buffer, text, indent string) {
	for _, line := range strings.Split(strings.TrimSpace(text), "\n") {
		if text == "" {
			return
		}
		line = strings.TrimRight(line, " ")
		if line == "" {
			fmt.Fprintf(b, "%s//\n", indent)
			continue
		}
		fmt.Fprintf(b, "%s// %s\n", indent, line)
	}
}

var (
	entryRE = regexp.MustCompile(`\.visible\s+\.entry\s+([A-Za-z_$][A-Za-z0-9_$]*)\s*\(([^)]*)\)`)
	paramRE = regexp.MustCompile(`\.param\s+\.(\w+)`)
)

// CheckPTX checks a compiled module against the ABI: every declared kernel
// is an entry of the PTX with exactly as many parameters as its struct has
// fields, each 8 bytes wide (.u64), and the PTX has no entry the ABI does
// not declare.
func (m Module) CheckPTX(ptx []byte) error {
	entries := map[string][]string{}
	for _, e := range entryRE.FindAllSubmatch(ptx, -1) {
		var kinds []string
		for _, p := range paramRE.FindAllSubmatch(e[2], -1) {
			kinds = append(kinds, string(p[1]))
		}
		entries[string(e[1])] = kinds
	}
	var errs []string
	for _, k := range m.Kernels {
		ps, err := params(k.Params)
		if err != nil {
			return fmt.Errorf("kernel %s: %w", k.Name, err)
		}
		kinds, ok := entries[k.Name]
		if !ok {
			errs = append(errs, fmt.Sprintf("kernel %s is declared in Go but is not an entry of the PTX", k.Name))
			continue
		}
		delete(entries, k.Name)
		if len(kinds) != len(ps) {
			errs = append(errs, fmt.Sprintf("kernel %s takes %d parameters in the PTX, %d in the Go ABI", k.Name, len(kinds), len(ps)))
		}
		for i, kd := range kinds {
			if kd != "u64" && kd != "b64" {
				errs = append(errs, fmt.Sprintf("kernel %s parameter %d is .%s in the PTX, not 8 bytes", k.Name, i, kd))
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(entries)) {
		errs = append(errs, fmt.Sprintf("PTX entry %s is not declared in the Go ABI", name))
	}
	if len(errs) > 0 {
		return fmt.Errorf("module %s: %s. Fix: declare the kernels once in Go, regenerate the header (go generate) and the PTX (make ptx)", m.Name, strings.Join(errs, "; "))
	}
	return nil
}

// Index returns the position of the named field in the parameter struct
// v, or an error naming the field.
func Index(v any, field string) (int, error) {
	t := reflect.TypeOf(v)
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t != nil && t.Kind() == reflect.Struct {
		if f, ok := t.FieldByName(field); ok && len(f.Index) == 1 {
			return f.Index[0], nil
		}
	}
	return 0, fmt.Errorf("parameter struct %v has no field %s. Fix: name a declared parameter", t, field)
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
