package bfsserve

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/internal/quote"
	"github.com/gpuplan/gpuplan/workloads/bfsquery"
)

// Residency is what one opening keeps resident: the graphs the server
// answers over, the executor they share (nil on the CPU) and what releases
// them.
type Residency struct {
	// Graphs are served under their names (bfsquery.Graph.Name).
	Graphs []*bfsquery.Graph
	// Executor is the GPU executor the graphs are resident on, whose
	// telemetry /metrics exports; nil when they answer on the CPU.
	Executor *executor.Executor
	// Close releases the graphs and the executor (nil: nothing to do).
	Close func() error
}

// Opener opens the residency: at start, and again after a fault on the
// GPU, once the failed one is closed (a new context, every graph uploaded
// again). Every opening must hold the same graphs.
type Opener func(ctx context.Context) (*Residency, error)

// namePattern is what a graph's name may hold: it is a path segment of the
// API and a label of the metrics.
var namePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// CheckName reports whether name can name a served graph: 1 to 64 letters,
// digits, '.', '_' or '-', the first a letter or digit.
func CheckName(name string) error {
	if !namePattern.MatchString(name) {
		return fmt.Errorf("graph name %s is not 1 to 64 letters, digits, '.', '_' or '-' starting with a letter or digit. Fix: name it like kron22 or road-usa", quote.Echo(name))
	}
	return nil
}

// graphInfo is what the server knows of a graph between openings.
type graphInfo struct {
	Name     string `json:"name"`
	Vertices int    `json:"vertices"`
	Edges    int64  `json:"edges"`
	Directed bool   `json:"directed"`
	Backend  string `json:"backend"`
	// Resident is the adjacency bytes kept resident.
	Resident uint64 `json:"resident_bytes"`
}

// Info describes a resident graph as GET /v1/graphs lists it.
func Info(g *bfsquery.Graph) GraphInfo {
	backend := "cpu"
	if g.OnGPU() {
		backend = "gpu"
	}
	return graphInfo{Name: g.Name(), Vertices: g.Vertices(), Edges: g.Edges(), Directed: g.Directed(), Backend: backend, Resident: g.ResidentBytes()}
}

// index checks a residency's graphs and returns them by name.
func (r *Residency) index() (map[string]*bfsquery.Graph, []graphInfo, error) {
	if r == nil || len(r.Graphs) == 0 {
		return nil, nil, errors.New("the residency holds no graph. Fix: open at least one graph")
	}
	byName := make(map[string]*bfsquery.Graph, len(r.Graphs))
	infos := make([]graphInfo, 0, len(r.Graphs))
	for _, g := range r.Graphs {
		if g == nil {
			return nil, nil, errors.New("the residency holds a nil graph. Fix: open every graph it lists")
		}
		if err := CheckName(g.Name()); err != nil {
			return nil, nil, err
		}
		if byName[g.Name()] != nil {
			return nil, nil, fmt.Errorf("two graphs are named %q. Fix: give every graph its own name", g.Name())
		}
		byName[g.Name()] = g
		infos = append(infos, Info(g))
	}
	return byName, infos, nil
}

// sameGraphs checks that a reopened residency holds the graphs the first
// one did.
func sameGraphs(want, got []graphInfo) error {
	if len(want) != len(got) {
		return fmt.Errorf("the reopened residency holds %d graphs, not %d. Fix: open the same graphs every time", len(got), len(want))
	}
	for i := range want {
		w, g := want[i], got[i]
		w.Backend, g.Backend = "", ""
		if w != g {
			return fmt.Errorf("the reopened graph %q differs from the first one opened (%d vertices, %d edges, not %d and %d). Fix: open the same graphs every time", g.Name, g.Vertices, g.Edges, w.Vertices, w.Edges)
		}
	}
	return nil
}

// names lists the graphs' names for an error's Fix.
func names(infos []graphInfo) string {
	out := make([]string, len(infos))
	for i, g := range infos {
		out[i] = g.Name
	}
	return strings.Join(out, ", ")
}

// closeResidency releases r.
func closeResidency(r *Residency) error {
	if r == nil || r.Close == nil {
		return nil
	}
	return r.Close()
}
