package bfs

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/gpuplan/gpuplan/internal/quote"
)

// PeerKind is one peer BFS code the benchmark runs as an external arm: the
// arm's name, the prefix of the lines its binary prints (PREFIX_GRAPH once,
// then one PREFIX line per timed run, each a list of key=value fields), how
// its binary is built, and how it is invoked on the benchmark's graph file
// and roots.
type PeerKind struct {
	// Name is the arm's name (an evidence.ExternalArms entry).
	Name string
	// Prefix starts the binary's output lines, for example "GAPBS_BFS".
	Prefix string
	// Build says which binary to pass and how to build it.
	Build string
	// args returns the binary's arguments and extra environment for the
	// input, with every root run repeat times.
	args func(in peerInput, repeat int) (args, env []string)
	// sampleMajor says the runs come sample by sample (every root once,
	// then again); else root by root (each root repeat times in a row).
	sampleMajor bool
}

// peerInput is the benchmark's graph and roots as a peer reads them.
type peerInput struct {
	graph, roots string
	list         []int32
}

// PeerKinds returns the peers the benchmark knows, by name: Gunrock
// essentials (push, level-synchronous), the GAP benchmark suite's CPU BFS
// (direction-optimizing, OpenMP), GSWITCH (direction-optimizing,
// autotuned) and BLEST (tensor-core pull BFS, with an untimed reordering),
// each the driver binary of its peer bundle.
func PeerKinds() []PeerKind {
	rootsFile := func(in peerInput, repeat int) []string {
		return []string{"-R", "@" + in.roots, "-n", strconv.Itoa(repeat), "-w", "1"}
	}
	return []PeerKind{
		{Name: "gunrock", Prefix: "GUNROCK_BFS", Build: "the bundle's `./run.sh build`, which writes $BUILD_DIR/bin/bfs", sampleMajor: true,
			args: func(in peerInput, repeat int) ([]string, []string) {
				return []string{"-m", in.graph, "-s", sampleMajorSources(in.list, repeat)}, []string{"GUNROCK_WARMUP=1"}
			}},
		{Name: "gapbs", Prefix: "GAPBS_BFS", Build: "the bundle's `./run.sh build`, which writes $BUILD_DIR/bfs_roots",
			args: func(in peerInput, repeat int) ([]string, []string) {
				return []string{"-f", in.graph, "-s", "-R", "@" + in.roots, "-n", strconv.Itoa(repeat), "-D", "1"}, nil
			}},
		{Name: "gswitch", Prefix: "GSWITCH_BFS", Build: "the bundle's `./run.sh build`, which writes $BUILD_DIR/bfs_roots",
			args: func(in peerInput, repeat int) ([]string, []string) {
				return append([]string{in.graph}, rootsFile(in, repeat)...), nil
			}},
		{Name: "blest", Prefix: "BLEST_BFS", Build: "the bundle's `./run.sh build`, which writes $BUILD_DIR/blest_roots",
			args: func(in peerInput, repeat int) ([]string, []string) {
				return append([]string{in.graph}, rootsFile(in, repeat)...), nil
			}},
	}
}

// PeerNames returns the names of PeerKinds.
func PeerNames() []string {
	var names []string
	for _, k := range PeerKinds() {
		names = append(names, k.Name)
	}
	return names
}

// LookupPeer returns the peer named name.
func LookupPeer(name string) (PeerKind, error) {
	kinds := PeerKinds()
	if i := slices.IndexFunc(kinds, func(k PeerKind) bool { return k.Name == name }); i >= 0 {
		return kinds[i], nil
	}
	return PeerKind{}, fmt.Errorf("unknown peer %s. Fix: use one of %s", quote.Echo(name), strings.Join(PeerNames(), ", "))
}

// sampleMajorSources lists every root once per sample, sample by sample.
func sampleMajorSources(roots []int32, samples int) string {
	var sb strings.Builder
	for s := range samples {
		for i, r := range roots {
			if s > 0 || i > 0 {
				sb.WriteByte(',')
			}
			sb.WriteString(strconv.Itoa(int(r)))
		}
	}
	return sb.String()
}
