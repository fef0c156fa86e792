// Package wjson writes the workload JSON of the examples' generators: the
// fields of a workload with a module (megakernel.DecodeWorkload documents
// them), in a fixed order, one buffer, output, wave and dependency a line,
// so that generated files are deterministic and read like the handwritten
// ones.
package wjson

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Workload is a workload whose waves run the kernels of Module. The
// planning fields (Analysis .. MaxDeviceIterations) are optional for such
// a workload; nil leaves them out.
type Workload struct {
	Name                string   `json:"name,omitempty"`
	Description         string   `json:"description,omitempty"`
	Analysis            *string  `json:"analysis,omitempty"`
	Device              string   `json:"device"`
	LaunchOverheadNS    *float64 `json:"launch_overhead_ns,omitempty"`
	Graph               *Graph   `json:"graph,omitempty"`
	ScheduleSample      *Sample  `json:"schedule_sample,omitempty"`
	MaxDeviceIterations *uint32  `json:"max_device_iterations,omitempty"`
	Module              string   `json:"module"`
	BytesMoved          uint64   `json:"bytes_moved,omitempty"`
	Buffers             []Buffer `json:"buffers"`
	Outputs             []Output `json:"outputs"`
	Waves               []Wave   `json:"waves"`
	Dependencies        []Dep    `json:"dependencies"`
}

// Graph is the resident graph layout of a planning workload.
type Graph struct {
	NodeCount    uint64 `json:"node_count"`
	EdgeCount    uint64 `json:"edge_count"`
	BytesPerNode uint64 `json:"bytes_per_node"`
	BytesPerEdge uint64 `json:"bytes_per_edge"`
}

// Sample is a measured schedule sample.
type Sample struct {
	DispatchCostNS  float64 `json:"dispatch_cost_ns"`
	FrontierDensity float64 `json:"frontier_density"`
	ReadbackBytes   uint64  `json:"readback_bytes"`
}

// Buffer is a named device buffer.
type Buffer struct {
	Name     string `json:"name"`
	Bytes    uint64 `json:"bytes"`
	Init     *Init  `json:"init,omitempty"`
	ReadOnly bool   `json:"read_only,omitempty"`
}

// Init is a random fill (Fill "random"); nil Init means zeros.
type Init struct {
	Fill string   `json:"fill"`
	Seed *uint64  `json:"seed,omitempty"`
	Type string   `json:"type,omitempty"`
	Min  *float64 `json:"min,omitempty"`
	Max  *float64 `json:"max,omitempty"`
}

// Random returns a random fill of type typ from seed.
func Random(seed uint64, typ string) *Init { return &Init{Fill: "random", Seed: &seed, Type: typ} }

// RandomRange returns a random fill of float type typ uniform in [lo, hi).
func RandomRange(seed uint64, typ string, lo, hi float64) *Init {
	in := Random(seed, typ)
	in.Min, in.Max = &lo, &hi
	return in
}

// Output is a buffer read back after a run.
type Output struct {
	Buffer    string   `json:"buffer"`
	Type      string   `json:"type"`
	Tolerance *float64 `json:"tolerance,omitempty"`
}

// Wave is one wave and its kernel. The byte fields are the planning
// fields; nil leaves them out (0).
type Wave struct {
	ID            int     `json:"id"`
	Name          string  `json:"name,omitempty"`
	FrontierBytes *uint64 `json:"frontier_bytes,omitempty"`
	ScratchBytes  *uint64 `json:"scratch_bytes,omitempty"`
	OutputBytes   *uint64 `json:"output_bytes,omitempty"`
	Kernel        Kernel  `json:"kernel"`
}

// Kernel is a wave's function, tiles, block, shared memory and arguments.
type Kernel struct {
	Function    string `json:"function"`
	Tiles       uint64 `json:"tiles"`
	Block       uint64 `json:"block"`
	SharedBytes uint64 `json:"shared_bytes,omitempty"`
	Prologue    bool   `json:"prologue,omitempty"`
	Args        []Arg  `json:"args"`
}

// Arg is one argument: a buffer (with an offset and the bytes from there
// the wave touches, both optional) or a scalar. Build it with Buf, BufAt,
// U32 or F32.
type Arg struct {
	Buffer string   `json:"buffer,omitempty"`
	Offset uint64   `json:"offset,omitempty"`
	Bytes  uint64   `json:"bytes,omitempty"`
	U32    *uint32  `json:"u32,omitempty"`
	F32    *float32 `json:"f32,omitempty"`
}

// Buf is an argument pointing at the start of buffer name.
func Buf(name string) Arg { return Arg{Buffer: name} }

// BufAt is an argument pointing n bytes of buffer name from byte off.
func BufAt(name string, off, n uint64) Arg { return Arg{Buffer: name, Offset: off, Bytes: n} }

// U32 is a u32 scalar argument.
func U32(v uint32) Arg { return Arg{U32: &v} }

// F32 is an f32 scalar argument.
func F32(v float32) Arg { return Arg{F32: &v} }

// Dep is a dependency; Tiles is "" (all), "same" or "block:K".
type Dep struct {
	Before int    `json:"before"`
	After  int    `json:"after"`
	Tiles  string `json:"tiles,omitempty"`
}

// Ptr returns a pointer to v, for the optional fields.
func Ptr[T any](v T) *T { return &v }

// Marshal writes w: top-level fields one a line, arrays one element a
// line, with a space after every ':' and ',' as in the handwritten
// examples, and a final newline. It fails only on a value JSON cannot
// hold (a NaN or infinite float).
func Marshal(w *Workload) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString("{\n")
	first := true
	field := func(key string, v any) error {
		if !first {
			b.WriteString(",\n")
		}
		first = false
		fmt.Fprintf(&b, "  %q: ", key)
		return value(&b, v)
	}
	opt := func(key string, ok bool, v any) error {
		if !ok {
			return nil
		}
		return field(key, v)
	}
	for _, err := range []error{
		opt("name", w.Name != "", w.Name),
		opt("description", w.Description != "", w.Description),
		opt("analysis", w.Analysis != nil, w.Analysis),
		field("device", w.Device),
		opt("launch_overhead_ns", w.LaunchOverheadNS != nil, w.LaunchOverheadNS),
		opt("graph", w.Graph != nil, w.Graph),
		opt("schedule_sample", w.ScheduleSample != nil, w.ScheduleSample),
		opt("max_device_iterations", w.MaxDeviceIterations != nil, w.MaxDeviceIterations),
		field("module", w.Module),
		opt("bytes_moved", w.BytesMoved > 0, w.BytesMoved),
		array(&b, &first, "buffers", w.Buffers),
		array(&b, &first, "outputs", w.Outputs),
		array(&b, &first, "waves", w.Waves),
		array(&b, &first, "dependencies", w.Dependencies),
	} {
		if err != nil {
			return nil, err
		}
	}
	b.WriteString("\n}\n")
	return b.Bytes(), nil
}

// array writes key's elements one a line.
func array[T any](b *bytes.Buffer, first *bool, key string, xs []T) error {
	if !*first {
		b.WriteString(",\n")
	}
	*first = false
	fmt.Fprintf(b, "  %q: [", key)
	for i := range xs {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString("\n    ")
		if err := value(b, xs[i]); err != nil {
			return fmt.Errorf("%s[%d]: %w", key, i, err)
		}
	}
	if len(xs) > 0 {
		b.WriteString("\n  ")
	}
	b.WriteString("]")
	return nil
}

// value writes v compactly, with a space after each ':' and ',' outside
// strings.
func value(b *bytes.Buffer, v any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return err
	}
	inString, escaped := false, false
	for _, c := range raw {
		b.WriteByte(c)
		switch {
		case inString && escaped:
			escaped = false
		case inString && c == '\\':
			escaped = true
		case c == '"':
			inString = !inString
		case !inString && (c == ':' || c == ','):
			b.WriteByte(' ')
		}
	}
	return nil
}
