// Package graphbudget estimates, before a graph spec is built, the host
// memory its generator will take at its peak, in checked arithmetic, and
// refuses a spec whose graph does not fit the memory available: a size
// whose product would wrap, or a graph larger than the machine, is an
// error with the numbers and a fix instead of a crash or an out-of-memory
// death.
//
// The estimates follow what each generator allocates: the graph's
// offsets (8 bytes a vertex) and targets (4 bytes an adjacency entry), and
// what the build holds beside them. A Kronecker graph draws its edge list
// and builds its CSR as a file load does (frontier.LoadBytes: 28 bytes an
// edge, 12 a vertex); a road graph adds its lattice's permutation and
// union-find (12 bytes a vertex); a random geometric graph its points and
// cell grid (64 bytes a point) and about 5 bytes an expected adjacency
// entry. A file's spec is estimated by its loader, which reads its size
// first.
package graphbudget

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"strconv"

	"github.com/gpuplan/gpuplan/frontier"
	"github.com/gpuplan/gpuplan/internal/checked"
)

// Error is a spec whose graph does not fit: its estimated peak bytes and
// the bytes available, and Bound, the limit of the process that sets them
// when it is not the machine's free memory (Memory.Bound).
type Error struct {
	Spec      string
	Bytes     uint64
	Available uint64
	Bound     string
}

// Error names the spec, the estimate, the memory available and the limit
// that sets it, and ends with a "Fix:".
func (e *Error) Error() string {
	free := e.Bytes + e.Bytes/9 + 1
	if e.Bound != "" {
		return fmt.Sprintf("%s needs about %d bytes of host memory to build, but %d are available within %s. Fix: ask for a smaller graph, or raise that limit so that at least %d bytes are free within it",
			e.Spec, e.Bytes, e.Available, e.Bound, free)
	}
	return fmt.Sprintf("%s needs about %d bytes of host memory to build, but %d are available. Fix: ask for a smaller graph, or build it on a machine with at least %d bytes free",
		e.Spec, e.Bytes, e.Available, free)
}

// Bytes estimates the peak host memory of building spec's graph; a file
// spec is 0 (its loader checks its own budget). A size whose product does
// not fit 64 bits is a *checked.OverflowError.
func Bytes(spec frontier.Spec) (uint64, error) {
	n := uint64(max(spec.Size, 0))
	switch spec.Kind {
	case "grid":
		nv, err := checked.Mul(n, n, "grid vertices")
		if err != nil {
			return 0, err
		}
		entries, err := checked.Mul(nv, 4, "grid adjacency entries")
		if err != nil {
			return 0, err
		}
		return csrBytes(nv, entries)
	case "grid3d":
		return grid3DBytes(n)
	case "kron":
		if n > 62 {
			return 0, &checked.OverflowError{Field: "kronecker vertices"}
		}
		edges, err := checked.Mul(uint64(frontier.DefaultEdgeFactor), 1<<n, "kronecker edges")
		if err != nil {
			return 0, err
		}
		return frontier.LoadBytes(0, 1<<n, edges)
	case "road":
		nv, err := checked.Mul(n, n, "road vertices")
		if err != nil {
			return 0, err
		}
		return roadBytes(nv)
	case "rgg":
		return rggBytes(n, uint64(max(spec.Degree, 1)))
	}
	return 0, nil
}

// grid3DBytes is the n x n x n grid's CSR: six entries a vertex.
func grid3DBytes(n uint64) (uint64, error) {
	nv, err := checked.Mul(n, n, "grid3d vertices")
	if err == nil {
		nv, err = checked.Mul(nv, n, "grid3d vertices")
	}
	if err != nil {
		return 0, err
	}
	entries, err := checked.Mul(nv, 6, "grid3d adjacency entries")
	if err != nil {
		return 0, err
	}
	return csrBytes(nv, entries)
}

// csrBytes is a CSR's offsets (uint64) and targets (int32) in host memory.
func csrBytes(vertices, entries uint64) (uint64, error) {
	off, err := checked.Mul(vertices+1, 8, "offset bytes")
	if err != nil {
		return 0, err
	}
	tgt, err := checked.Mul(entries, 4, "target bytes")
	if err != nil {
		return 0, err
	}
	return checked.Add(off, tgt, "graph bytes")
}

// roadBytes is a road graph of nv vertices: about 1.6 edges a vertex
// built as a load does, and the lattice's edge permutation and union-find.
func roadBytes(nv uint64) (uint64, error) {
	edges, err := checked.Mul(nv, 2, "road edges")
	if err != nil {
		return 0, err
	}
	build, err := frontier.LoadBytes(0, nv, edges)
	if err != nil {
		return 0, err
	}
	lattice, err := checked.Mul(nv, 12, "road lattice bytes")
	if err != nil {
		return 0, err
	}
	return checked.Add(build, lattice, "road bytes")
}

// rggBytes is a random geometric graph of n points of the given expected
// degree.
func rggBytes(n, degree uint64) (uint64, error) {
	points, err := checked.Mul(n, 64, "rgg point bytes")
	if err != nil {
		return 0, err
	}
	entries, err := checked.Mul(n, degree, "rgg adjacency entries")
	if err != nil {
		return 0, err
	}
	adj, err := checked.Mul(entries, 5, "rgg adjacency bytes")
	if err != nil {
		return 0, err
	}
	return checked.Add(points, adj, "rgg bytes")
}

// Check refuses a spec whose estimate overflows, or whose build peak plus
// copies more copies of the graph (what the caller builds from it) exceeds
// nine tenths of available, the bytes of host memory free (0: unknown, only
// overflow is refused); the tenth left covers the runtime.
func Check(spec frontier.Spec, text string, available uint64, copies int) error {
	if err := checkGenerator(spec); err != nil {
		return err
	}
	need, err := Bytes(spec)
	if err == nil {
		var more uint64
		if more, err = copiesBytes(spec, copies); err == nil {
			need, err = checked.Add(need, more, "graph bytes")
		}
	}
	return checkNeed(text, need, available, err)
}

// CheckBuilt is Check for a graph built away from the host (a Kronecker
// graph built on the GPU) and read back: the host holds its CSR
// (GraphBytes) and copies more of it, not the CPU build's peak.
func CheckBuilt(spec frontier.Spec, text string, available uint64, copies int) error {
	if err := checkGenerator(spec); err != nil {
		return err
	}
	need, err := copiesBytes(spec, max(copies, 0)+1)
	return checkNeed(text, need, available, err)
}

// checkGenerator refuses the parameters the generator itself refuses
// (frontier.CheckKronecker for a kron spec, at the default edge factor),
// so that a scale out of range is named as such, not as a memory estimate.
func checkGenerator(spec frontier.Spec) error {
	if spec.Kind == "kron" {
		return frontier.CheckKronecker(spec.Size, frontier.DefaultEdgeFactor)
	}
	return nil
}

// copiesBytes is copies copies of spec's graph (GraphBytes).
func copiesBytes(spec frontier.Spec, copies int) (uint64, error) {
	graph, err := GraphBytes(spec)
	if err != nil {
		return 0, err
	}
	return checked.Mul(graph, uint64(max(copies, 0)), "graph copies")
}

// checkNeed refuses the need bytes of spec text over the budget, or the
// error computing them (an overflow named by its field, with a fix).
func checkNeed(text string, need, available uint64, err error) error {
	var oe *checked.OverflowError
	if errors.As(err, &oe) {
		return fmt.Errorf("graph spec %s: its %s do not fit 64-bit arithmetic. Fix: ask for a smaller graph", text, oe.Field)
	}
	if err != nil {
		return err
	}
	return CheckBytes("graph spec "+text, need, available)
}

// CheckBytes refuses need bytes over nine tenths of available (0: unknown,
// nothing refused), naming what needs them.
func CheckBytes(what string, need, available uint64) error {
	if available > 0 && need > available-available/10 {
		return &Error{Spec: what, Bytes: need, Available: available}
	}
	return nil
}

// KroneckerBytes estimates a Kronecker graph of 2^scale vertices and
// edgeFactor edges a vertex (frontier.Kronecker's parameters, any edge
// factor): build is the peak host memory of building it on the CPU, as
// Bytes estimates a kron spec, and graph its CSR, as GraphBytes does. For
// the default edge factor they are Bytes and GraphBytes of kron:scale.
func KroneckerBytes(scale, edgeFactor int) (build, graph uint64, err error) {
	if scale < 0 || scale > 58 || edgeFactor < 0 {
		return 0, 0, &checked.OverflowError{Field: "kronecker adjacency entries"}
	}
	n := uint64(1) << scale
	edges, err := checked.Mul(uint64(edgeFactor), n, "kronecker edges")
	if err != nil {
		return 0, 0, err
	}
	if build, err = frontier.LoadBytes(0, n, edges); err != nil {
		return 0, 0, err
	}
	entries, err := checked.Mul(edges, 2, "kronecker adjacency entries")
	if err != nil {
		return 0, 0, err
	}
	graph, err = csrBytes(n, entries)
	return build, graph, err
}

// eNodeBytes is the peak host memory an e-node takes while an e-graph is
// generated and rebuilt: its node, children, hash-cons entry, union-find
// and worklist slots, with room for the rebuild's copies.
const eNodeBytes = 128

// EGraphBytes estimates the peak host memory of generating and rebuilding
// an e-graph of nodes e-nodes.
func EGraphBytes(nodes int) (uint64, error) {
	return checked.Mul(uint64(max(nodes, 0)), eNodeBytes, "e-graph bytes")
}

// GraphBytes bounds the built graph's offsets and targets: exact for a
// grid, the generated edges twice (both directions) for a Kronecker graph,
// two edges a vertex both ways for a road graph, and the expected entries
// with a fifth more for a random geometric graph. A file spec is 0.
func GraphBytes(spec frontier.Spec) (uint64, error) {
	n := uint64(max(spec.Size, 0))
	var vertices, entries uint64
	var err error
	switch spec.Kind {
	case "grid", "road":
		if vertices, err = checked.Mul(n, n, spec.Kind+" vertices"); err == nil {
			entries, err = checked.Mul(vertices, 4, spec.Kind+" adjacency entries")
		}
	case "grid3d":
		return grid3DBytes(n)
	case "kron":
		if n > 58 {
			return 0, &checked.OverflowError{Field: "kronecker adjacency entries"}
		}
		vertices, entries = 1<<n, 2*uint64(frontier.DefaultEdgeFactor)<<n
	case "rgg":
		vertices = n
		if entries, err = checked.Mul(n, uint64(max(spec.Degree, 1)), "rgg adjacency entries"); err == nil {
			entries, err = checked.Add(entries, entries/5, "rgg adjacency entries")
		}
	default:
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	return csrBytes(vertices, entries)
}

// Available returns the host memory available to a new allocation,
// Host().Bytes: 0 where the system does not say.
func Available() uint64 { return Host().Bytes }

// parseMemAvailable reads "MemAvailable: N kB" from a meminfo text.
func parseMemAvailable(data []byte) uint64 {
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		f := bytes.Fields(sc.Bytes())
		if len(f) >= 2 && string(f[0]) == "MemAvailable:" {
			kb, err := strconv.ParseUint(string(f[1]), 10, 64)
			if err != nil || kb > 1<<50 {
				return 0
			}
			return kb << 10
		}
	}
	return 0
}
