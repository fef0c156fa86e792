package frontier

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/gpuplan/gpuplan/internal/quote"
)

// Spec names a benchmark graph: "grid:N", "grid3d:N", "kron:SCALE",
// "road:N", "rgg:N[:DEGREE]" or "file:PATH" (PATH ending in .mtx for Matrix
// Market, otherwise an edge list).
type Spec struct {
	// Kind is "grid", "grid3d", "kron", "road", "rgg" or "file".
	Kind string
	// Size is N for grid, grid3d, road and rgg, SCALE for kron, 0 for file.
	Size int
	// Degree is the expected average degree of an rgg graph (0 means
	// DefaultRGGDegree); other kinds ignore it.
	Degree int
	// Path is the file for Kind "file".
	Path string
}

// specHelp lists the spec forms for error messages.
const specHelp = "use grid:N, grid3d:N, kron:SCALE, road:N, rgg:N[:DEGREE] or file:PATH"

// ParseSpec parses a graph spec such as "grid:2048", "rgg:2000000:8" or
// "file:roads.mtx".
func ParseSpec(s string) (Spec, error) {
	kind, arg, ok := strings.Cut(s, ":")
	if !ok || arg == "" {
		return Spec{}, fmt.Errorf("graph spec %s: want KIND:ARG. Fix: %s", quote.Echo(s), specHelp)
	}
	switch kind {
	case "file":
		return Spec{Kind: kind, Path: arg}, nil
	case "grid", "grid3d", "kron", "road":
		v, err := strconv.Atoi(arg)
		if err != nil || v < 1 {
			return Spec{}, fmt.Errorf("graph spec %s: %s is not a positive integer. Fix: use for example %s:%d", quote.Echo(s), quote.Echo(arg), kind, map[string]int{"grid": 2048, "grid3d": 160, "kron": 22, "road": 2048}[kind])
		}
		return Spec{Kind: kind, Size: v}, nil
	case "rgg":
		return parseRGGSpec(s, arg)
	default:
		return Spec{}, fmt.Errorf("graph spec %s: unknown kind %s. Fix: %s", quote.Echo(s), quote.Echo(kind), specHelp)
	}
}

// parseRGGSpec parses the N[:DEGREE] of an rgg spec.
func parseRGGSpec(s, arg string) (Spec, error) {
	size, deg, hasDeg := strings.Cut(arg, ":")
	n, err := strconv.Atoi(size)
	if err != nil || n < 1 {
		return Spec{}, fmt.Errorf("graph spec %s: point count %s is not a positive integer. Fix: use for example rgg:2000000 or rgg:2000000:8", quote.Echo(s), quote.Echo(size))
	}
	d := DefaultRGGDegree
	if hasDeg {
		if d, err = strconv.Atoi(deg); err != nil || d < 1 {
			return Spec{}, fmt.Errorf("graph spec %s: degree %s is not a positive integer. Fix: use for example rgg:%d:%d", quote.Echo(s), quote.Echo(deg), n, DefaultRGGDegree)
		}
	}
	return Spec{Kind: "rgg", Size: n, Degree: d}, nil
}

// rggDegree returns the spec's degree, DefaultRGGDegree when it has none.
func (s Spec) rggDegree() int {
	if s.Degree == 0 {
		return DefaultRGGDegree
	}
	return s.Degree
}

// Name returns the workload name the spec's graph is reported under, for
// example "grid-2048", "kron-22", "rgg-2000000-8" (the degree is always
// named) or, for a file, its base name without the extension (characters
// other than letters, digits and . _ - become '-').
func (s Spec) Name() string {
	switch s.Kind {
	case "file":
		return fileGraphName(s.Path)
	case "rgg":
		return fmt.Sprintf("rgg-%d-%d", s.Size, s.rggDegree())
	}
	return fmt.Sprintf("%s-%d", s.Kind, s.Size)
}

// fileGraphName derives a graph name from a file path: the base name
// without its extension (the whole base name if that leaves nothing), with
// every character other than a letter, digit, '.', '_' or '-' replaced by
// '-', so the name is a valid evidence token.
func fileGraphName(path string) string {
	base := filepath.Base(path)
	name := strings.TrimSuffix(base, filepath.Ext(base))
	if name == "" {
		name = base
	}
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-' {
			return r
		}
		return '-'
	}, name)
}

// Build generates or loads the spec's graph. seed drives the random
// generators (kron, road, rgg); grids and files ignore it.
func (s Spec) Build(seed uint64, lim Limits) (*CSR, error) {
	switch s.Kind {
	case "grid":
		return Grid(s.Size)
	case "grid3d":
		return Grid3D(s.Size)
	case "kron":
		return Kronecker(s.Size, DefaultEdgeFactor, seed)
	case "road":
		return Road(s.Size, seed)
	case "rgg":
		return RandomGeometric(s.Size, s.rggDegree(), seed)
	case "file":
		return LoadFile(s.Path, lim)
	}
	return nil, fmt.Errorf("graph spec kind %s is unknown. Fix: use grid, grid3d, kron, road, rgg or file", quote.Echo(s.Kind))
}
