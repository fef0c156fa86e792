package main

import (
	"flag"
	"fmt"
	"time"

	"github.com/gpuplan/gpuplan/frontier"
	"github.com/gpuplan/gpuplan/internal/graphbudget"
	"github.com/gpuplan/gpuplan/internal/quote"
	"github.com/gpuplan/gpuplan/workloads/bfsquery"
	"github.com/gpuplan/gpuplan/workloads/kronbuild"
)

// Where --build-on builds a kron:SCALE graph.
const (
	buildOnAuto = "auto"
	buildOnCPU  = "cpu"
	buildOnGPU  = "gpu"
)

// graphBuild is where a command builds its kron graphs (--build-on) and
// on which device. A command answering on the CPU (--cpu) builds on the
// CPU unless --build-on gpu says otherwise.
type graphBuild struct {
	on     string
	device int
	cpu    bool
}

// addBuildOnFlag adds --build-on to f.
func addBuildOnFlag(f *flag.FlagSet, b *graphBuild) {
	f.StringVar(&b.on, "build-on", buildOnAuto, "where a kron:SCALE graph is generated and built: gpu, cpu, or auto (the GPU in a CUDA build, else the CPU); both give the same graph")
}

// check refuses an unknown --build-on value.
func (b graphBuild) check(cmd string) error {
	switch b.on {
	case buildOnAuto, buildOnCPU, buildOnGPU:
		return nil
	}
	return usagef("gpuplan %s: --build-on %s is not auto, cpu or gpu. Fix: use --build-on gpu to build kron graphs on the GPU, cpu for the CPU", cmd, quote.Echo(b.on))
}

// onGPU reports whether spec is built on the GPU: a kron graph, with
// --build-on gpu, or auto in a CUDA build when the GPU build takes its
// parameters (kronbuild.Check).
func (b graphBuild) onGPU(spec frontier.Spec) bool {
	if spec.Kind != "kron" {
		return false
	}
	return b.on == buildOnGPU || (b.on == buildOnAuto && buildHasCUDA && !b.cpu && kronbuild.Check(spec.Size, frontier.DefaultEdgeFactor) == nil)
}

// build generates or loads spec's graph, a kron graph on the GPU where
// onGPU says so (the same CSR as on the CPU).
func (b graphBuild) build(spec frontier.Spec, seed uint64, lim frontier.Limits, logf func(string, ...any)) (*frontier.CSR, error) {
	if !b.onGPU(spec) {
		return spec.Build(seed, lim)
	}
	x, err := openBenchExecutor(b.device)
	if err != nil {
		return nil, fmt.Errorf("building %s on the GPU: %w (or build it on the CPU: --build-on cpu)", spec.Name(), err)
	}
	defer x.Close()
	r, err := kronbuild.Build(x, spec.Size, frontier.DefaultEdgeFactor, seed, kronbuild.Config{})
	if err != nil {
		return nil, err
	}
	logf("graph %s built on the GPU in %s", spec.Name(), buildTimes(r.Times))
	return r.Graph, nil
}

// buildTimes is a GPU build's times on one line.
func buildTimes(t kronbuild.Times) string {
	ms := func(d time.Duration) string { return d.Round(10 * time.Microsecond).String() }
	return fmt.Sprintf("%s (labels %s, count %s, generate %s, sort %s, CSR %s on the device; readback %s)",
		ms(t.Total), ms(t.Permutation), ms(t.Count), ms(t.Generate), ms(t.Sort), ms(t.CSR), ms(t.Readback))
}

// load is bfsquery.LoadSpec with kron graphs built where b says.
func (b graphBuild) load(spec string, seed uint64, lim frontier.Limits, logf func(string, ...any)) (*frontier.CSR, bool, error) {
	// A spec that is not a kron graph built on the GPU (directed:PATH and
	// bad specs too) is LoadSpec's to read or refuse.
	s, err := frontier.ParseSpec(spec)
	if err != nil {
		return bfsquery.LoadSpec(spec, seed, lim)
	}
	if err := b.checkHost(s, spec, 0); err != nil {
		return nil, false, err
	}
	if !b.onGPU(s) {
		return bfsquery.LoadSpec(spec, seed, lim)
	}
	g, err := b.build(s, seed, lim, logf)
	if err != nil {
		return nil, false, err
	}
	g.Name = s.Name()
	return g, false, nil
}

// checkHost refuses spec when the host's memory does not hold its build
// and copies more copies of the graph: the CPU build's peak
// (graphbudget.Check), or only the graph read back when it is built on the
// GPU (graphbudget.CheckBuilt). The refusal names the limit that bounds the
// memory (hostMemory).
func (b graphBuild) checkHost(spec frontier.Spec, text string, copies int) error {
	m := hostMemory()
	if b.onGPU(spec) {
		return m.Explain(graphbudget.CheckBuilt(spec, text, m.Bytes, copies))
	}
	return m.Explain(graphbudget.Check(spec, text, m.Bytes, copies))
}

// hostMemory is the host memory the commands budget their graphs and
// e-graphs against (graphbudget.Host: the machine's free memory within the
// process's cgroup and address-space limits).
var hostMemory = graphbudget.Host

// checkHostBytes refuses need bytes of what over the host memory
// (graphbudget.CheckBytes), naming the limit that bounds it.
func checkHostBytes(what string, need uint64) error {
	m := hostMemory()
	return m.Explain(graphbudget.CheckBytes(what, need, m.Bytes))
}
