package wavedag

import (
	"encoding/binary"
	"fmt"
	"math"
	"sort"

	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/megakernel"
)

// hostMemory is the CPU reference's device memory: host buffers at
// addresses of their own.
type hostMemory struct {
	base []executor.DevPtr
	bufs [][]byte
}

// refBase is the first address of the reference's memory.
const refBase = executor.DevPtr(1) << 40

func (m *hostMemory) add(b []byte) executor.DevPtr {
	p := refBase
	if n := len(m.base); n > 0 {
		p = m.base[n-1] + executor.DevPtr((uint64(len(m.bufs[n-1]))+511)&^255)
	}
	m.base, m.bufs = append(m.base, p), append(m.bufs, b)
	return p
}

// Bytes resolves [ptr, ptr+n) inside one buffer.
func (m *hostMemory) Bytes(ptr executor.DevPtr, n uint64) ([]byte, error) {
	i := sort.Search(len(m.base), func(i int) bool { return m.base[i] > ptr }) - 1
	if i >= 0 {
		off := uint64(ptr - m.base[i])
		if off <= uint64(len(m.bufs[i])) && n <= uint64(len(m.bufs[i]))-off {
			return m.bufs[i][off : off+n], nil
		}
	}
	return nil, fmt.Errorf("%d bytes at %#x are not inside one buffer", n, uint64(ptr))
}

// Reference runs the program on the CPU with the Go references of its
// wave functions: from the buffers' initial contents, wave by wave in the
// barrier plan's order (a topological order), each wave's tiles in
// ascending order. It returns the outputs, in the workload's order.
func Reference(p *Program, funcs map[string]HostFunc) ([][]byte, error) {
	refs := make([]HostFunc, len(p.Funcs))
	for i, f := range p.Funcs {
		fn, ok := funcs[f]
		if !ok {
			return nil, fmt.Errorf("wave function %s has no Go reference. Fix: register its HostFunc, or compare the arms with each other (no reference)", f)
		}
		refs[i] = fn
	}
	mem := &hostMemory{}
	addr := make([]executor.DevPtr, len(p.Workload.Buffers))
	bufs := make([][]byte, len(addr))
	for i := range addr {
		bufs[i] = p.InitialContents(i)
		addr[i] = mem.add(bufs[i])
	}
	var shared []byte
	for _, g := range p.Plan.Groups {
		for _, v := range g {
			k := p.wave(v).Kernel
			slots := make([]byte, 8*max(len(k.Args), 1))
			for j := range k.Args {
				a := &k.Args[j]
				slot := a.Slot()
				if a.Kind() == megakernel.ArgBuffer {
					slot = uint64(addr[a.BufferIndex()]) + a.Offset
				}
				binary.LittleEndian.PutUint64(slots[8*j:], slot)
			}
			args := mem.add(slots)
			if uint64(len(shared)) < k.SharedBytes {
				shared = make([]byte, k.SharedBytes)
			}
			for tile := range *k.Tiles {
				clear(shared)
				t := &Tile{Index: uint32(tile), Count: uint32(*k.Tiles), Threads: uint32(*k.Block), args: args, mem: mem, shared: shared[:k.SharedBytes]}
				if err := callTile(k.Function, refs[p.waveFn[v]], t); err != nil {
					return nil, fmt.Errorf("%s: %w", p.WaveLabel(v), err)
				}
			}
		}
	}
	out := make([][]byte, len(p.Workload.Outputs))
	for i, o := range p.Workload.Outputs {
		out[i] = bufs[p.Workload.BufferIndexOf(o.Buffer)]
	}
	return out, nil
}

// Mismatch is an output that differs from the reference.
type Mismatch struct {
	Output string
	Detail string
}

// Error names the output and ends with a "Fix:" sentence.
func (m *Mismatch) Error() string {
	return fmt.Sprintf("output %s %s. Fix: a wave ran before a producer it reads finished, or a wave function differs from its reference; run the arms one at a time to find which", m.Output, m.Detail)
}

// Compare checks got against want for output o: float types within the
// output's tolerance (the relative L2 error; NaN never passes), the others
// exactly. It returns nil or a *Mismatch.
func Compare(o megakernel.WorkloadOutput, got, want []byte) error {
	if len(got) != len(want) {
		return &Mismatch{Output: o.Buffer, Detail: fmt.Sprintf("has %d bytes, the reference %d", len(got), len(want))}
	}
	t := o.OutputType()
	if !t.Float() {
		size := int(t.Size())
		for i := 0; i < len(got); i += size {
			if string(got[i:i+size]) != string(want[i:i+size]) {
				return &Mismatch{Output: o.Buffer, Detail: fmt.Sprintf("differs first at element %d (%s): %s, the reference %s", i/size, t, element(t, got[i:]), element(t, want[i:]))}
			}
		}
		return nil
	}
	var num, den float64
	first := -1
	for i := 0; i < int(uint64(len(got))/t.Size()); i++ {
		g, w := floatAt(t, got, i), floatAt(t, want, i)
		if math.IsNaN(g) && !math.IsNaN(w) || math.IsInf(g, 0) && g != w {
			return &Mismatch{Output: o.Buffer, Detail: fmt.Sprintf("element %d is %v, the reference %v", i, g, w)}
		}
		d := g - w
		if d != 0 && first < 0 {
			first = i
		}
		if !math.IsNaN(d) {
			num += d * d
		}
		den += w * w
	}
	rel := math.Sqrt(num)
	if den > 0 {
		rel /= math.Sqrt(den)
	}
	if tol := o.OutputTolerance(); rel > tol {
		return &Mismatch{Output: o.Buffer, Detail: fmt.Sprintf("has a relative L2 error of %.3g against the reference, above its tolerance %.3g (first difference at element %d: %v, the reference %v)",
			rel, tol, first, floatAt(t, got, first), floatAt(t, want, first))}
	}
	return nil
}

func floatAt(t megakernel.ElementType, b []byte, i int) float64 {
	switch t {
	case megakernel.TypeF64:
		return math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
	case megakernel.TypeBF16:
		return float64(BF16Float(binary.LittleEndian.Uint16(b[2*i:])))
	}
	return float64(math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:])))
}

func element(t megakernel.ElementType, b []byte) string {
	switch t {
	case megakernel.TypeU32:
		return fmt.Sprint(binary.LittleEndian.Uint32(b))
	case megakernel.TypeI32:
		return fmt.Sprint(int32(binary.LittleEndian.Uint32(b)))
	case megakernel.TypeU64:
		return fmt.Sprint(binary.LittleEndian.Uint64(b))
	}
	return fmt.Sprintf("%#02x", b[0])
}
