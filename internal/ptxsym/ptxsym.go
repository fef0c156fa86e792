// Package ptxsym reads the symbols of a PTX module: its ISA version and
// target, its kernel entries, the device functions it defines and those it
// declares .extern, each with its parameter types. It is what a linker
// needs to know before linking relocatable PTX, so that a missing or
// mismatched function is reported by name before the driver is asked.
package ptxsym

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Param is one parameter of a function: its PTX type (b32, u64, f32, ...),
// and for an array parameter its element count.
type Param struct {
	Type  string
	Array int
}

// String renders the parameter as PTX does, without its name.
func (p Param) String() string {
	if p.Array > 0 {
		return fmt.Sprintf(".param .%s [%d]", p.Type, p.Array)
	}
	return ".param ." + p.Type
}

// Func is a function or entry: its name, its parameters and, for a
// device function, its return parameters.
type Func struct {
	Name    string
	Params  []Param
	Returns []Param
}

// Signature renders the function's prototype without parameter names.
func (f Func) Signature() string {
	var b strings.Builder
	if len(f.Returns) > 0 {
		b.WriteString("(" + joinParams(f.Returns) + ") ")
	}
	b.WriteString(f.Name + "(" + joinParams(f.Params) + ")")
	return b.String()
}

func joinParams(ps []Param) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = p.String()
	}
	return strings.Join(s, ", ")
}

// SameSignature reports whether two prototypes take and return the same
// parameter types.
func SameSignature(a, b Func) bool {
	eq := func(x, y []Param) bool {
		if len(x) != len(y) {
			return false
		}
		for i := range x {
			if normType(x[i].Type) != normType(y[i].Type) || x[i].Array != y[i].Array {
				return false
			}
		}
		return true
	}
	return eq(a.Params, b.Params) && eq(a.Returns, b.Returns)
}

// normType maps a PTX type to its bit width, the only thing the calling
// convention fixes (.b32, .u32 and .s32 are passed alike; .f32 is not).
func normType(t string) string {
	if strings.HasPrefix(t, "f") {
		return t
	}
	return t[1:]
}

// Module is the symbols of one PTX module.
type Module struct {
	// Version is the .version directive as major*10+minor.
	Version int
	// Target is the first .target operand, for example "sm_80".
	Target string
	// Entries are the kernel entry points.
	Entries []Func
	// Funcs are the visible device functions the module defines.
	Funcs []Func
	// Externs are the device functions it declares and another module
	// must define.
	Externs []Func
}

// Func returns the visible device function of that name.
func (m *Module) Func(name string) (Func, bool) {
	for _, f := range m.Funcs {
		if f.Name == name {
			return f, true
		}
	}
	return Func{}, false
}

var (
	versionRE = regexp.MustCompile(`(?m)^\s*\.version\s+(\d+)\.(\d+)`)
	targetRE  = regexp.MustCompile(`(?m)^\s*\.target\s+([A-Za-z0-9_]+)`)
	// declRE matches a function or entry header up to its parameter list:
	// linkage, kind, optional return list, name.
	declRE  = regexp.MustCompile(`(?m)^[ \t]*((?:\.(?:visible|extern|weak)[ \t]+)*)\.(func|entry)[ \t\r\n]*(\([^)]*\))?[ \t\r\n]*([A-Za-z_$%][A-Za-z0-9_$]*)[ \t\r\n]*(\([^)]*\))?`)
	paramRE = regexp.MustCompile(`\.param\s+(?:\.align\s+\d+\s+)?\.(\w+)\s+(?:\.ptr\s+(?:\.\w+\s+)*)?(?:\.align\s+\d+\s+)?[A-Za-z_$%][\w$]*\s*(?:\[(\d+)\])?`)
	// commentRE removes // comments and /* */ blocks.
	commentRE = regexp.MustCompile(`(?s)/\*.*?\*/|//[^\n]*`)
)

// MaxBytes is the largest PTX Parse reads.
const MaxBytes = 256 << 20

// Parse reads a module's symbols. It fails on PTX with no .version
// directive or a parameter list it cannot read.
func Parse(ptx []byte) (*Module, error) {
	if len(ptx) > MaxBytes {
		return nil, fmt.Errorf("the PTX has %d bytes, more than %d. Fix: split the module", len(ptx), MaxBytes)
	}
	text := commentRE.ReplaceAllString(string(ptx), "")
	v := versionRE.FindStringSubmatch(text)
	if v == nil {
		return nil, fmt.Errorf("no .version directive. Fix: pass PTX text, as nvcc -ptx writes it")
	}
	major, _ := strconv.Atoi(v[1])
	minor, _ := strconv.Atoi(v[2])
	m := &Module{Version: major*10 + minor}
	if t := targetRE.FindStringSubmatch(text); t != nil {
		m.Target = t[1]
	}
	for _, d := range declRE.FindAllStringSubmatch(text, -1) {
		linkage, kind, rets, name, params := d[1], d[2], d[3], d[4], d[5]
		f := Func{Name: name, Params: parseParams(params), Returns: parseParams(rets)}
		switch {
		case kind == "entry":
			m.Entries = append(m.Entries, f)
		case strings.Contains(linkage, ".extern"):
			m.Externs = append(m.Externs, f)
		case strings.Contains(linkage, ".visible") || strings.Contains(linkage, ".weak"):
			m.Funcs = append(m.Funcs, f)
		}
	}
	return m, nil
}

func parseParams(list string) []Param {
	var out []Param
	for _, p := range paramRE.FindAllStringSubmatch(list, -1) {
		n, _ := strconv.Atoi(p[2])
		out = append(out, Param{Type: p[1], Array: n})
	}
	return out
}

// LinkIssue is a problem a link of several modules would hit.
type LinkIssue struct {
	// Kind is "undefined", "multiple" or "prototype".
	Kind string
	// Name is the function; Input the module that declares or defines it;
	// Other the module with the definition it clashes with.
	Name, Input, Other string
	// Want and Got are the declared and defined prototypes (prototype
	// issues).
	Want, Got string
}

// String renders the issue in the driver linker's words.
func (i LinkIssue) String() string {
	switch i.Kind {
	case "undefined":
		return fmt.Sprintf("error   : Undefined reference to '%s' in '%s'", i.Name, i.Input)
	case "multiple":
		return fmt.Sprintf("error   : Multiple definition of '%s' in '%s', first defined in '%s'", i.Name, i.Input, i.Other)
	}
	return fmt.Sprintf("error   : Prototype doesn't match for '%s' in '%s', first defined in '%s' (declared %s, defined %s)", i.Name, i.Input, i.Other, i.Want, i.Got)
}

// Named is a parsed module with the name the link calls it by.
type Named struct {
	Name   string
	Module *Module
}

// CheckLink lists what linking the modules would refuse: a function
// declared .extern that no module defines, a function two modules define,
// and a declaration whose prototype differs from the definition.
func CheckLink(mods []Named) []LinkIssue {
	type def struct {
		f     Func
		input string
	}
	defs := map[string]def{}
	var issues []LinkIssue
	for _, m := range mods {
		for _, f := range m.Module.Funcs {
			if d, ok := defs[f.Name]; ok {
				issues = append(issues, LinkIssue{Kind: "multiple", Name: f.Name, Input: m.Name, Other: d.input})
				continue
			}
			defs[f.Name] = def{f: f, input: m.Name}
		}
	}
	for _, m := range mods {
		for _, e := range m.Module.Externs {
			d, ok := defs[e.Name]
			switch {
			case !ok:
				issues = append(issues, LinkIssue{Kind: "undefined", Name: e.Name, Input: m.Name})
			case !SameSignature(e, d.f):
				issues = append(issues, LinkIssue{Kind: "prototype", Name: e.Name, Input: m.Name, Other: d.input, Want: e.Signature(), Got: d.f.Signature()})
			}
		}
	}
	return issues
}
