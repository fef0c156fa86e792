package main

import (
	"fmt"
	"io"
	"maps"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/gpuplan/gpuplan/internal/quote"
	"github.com/gpuplan/gpuplan/internal/stats"
	"github.com/gpuplan/gpuplan/workloads/bfs"
)

// benchExtra are the flags of "gpuplan bench frontier" for the direction
// mode, the check mode, the megakernel's fixed run-ahead, multi-source
// passes and the peers.
type benchExtra struct {
	direction   string
	check       string
	fixedAhead  bool
	keep        int
	topDown     bool
	async       bool
	tune        bool
	batch       int
	batchWidth  int
	peerGunrock string
	peerDir     string
	peerTimeout time.Duration
	peerSamples int
	// peers are the --peer NAME=PATH flags, in order.
	peers []bfs.PeerConfig
}

// define declares the flags.
func (x *benchExtra) define(f *flags, o *benchOptions) {
	f.StringVar(&x.direction, "direction", string(bfs.DirectionAuto), "level directions: auto (planners.PlanBFSDirection decides every level; graphs of average degree under 5 stay top-down) or top-down")
	f.StringVar(&x.check, "check", string(bfs.CheckAuto), fmt.Sprintf("how every root's reference levels are established: auto (reference on graphs of at most %d adjacency entries, graph500 on larger ones), reference (the CPU reference BFS from every root) or graph500 (no CPU BFS: each root's first GPU traversal validated the Graph500 way and held as the reference)", uint64(bfs.ReferenceMaxEntries)))
	f.BoolVar(&x.fixedAhead, "mega-fixed-ahead", false, "megakernel: keep the run-ahead depth at --mega-ahead instead of adapting it")
	f.IntVar(&x.keep, "mega-keep", 0, fmt.Sprintf("megakernel: a block's keep budget, the most `EDGES` of its own discoveries it keeps for its next level: %d or %d (0: %d)", bfs.DefaultMegakernelKeep, bfs.MaxMegakernelKeep, bfs.DefaultMegakernelKeep))
	f.BoolVar(&x.topDown, "mega-top-down", false, "megakernel: run every level top-down, running ahead, even where the other arms are direction-optimizing")
	f.BoolVar(&x.async, "mega-async", false, "megakernel: run the top-down levels without grid barriers, within a window of --mega-ahead - 1 labels over the lowest pending label (blocks of at most 512 threads; with --direction auto, give --mega-top-down too)")
	f.BoolVar(&x.tune, "mega-tune", true, "megakernel: before timing, measure candidate settings (run-ahead depths, keep budgets, without grid barriers where it can and, where direction-optimizing, level-synchronous against top-down) from the first root and run the fastest (off when --mega-ahead, --mega-fixed-ahead, --mega-keep, --mega-top-down or --mega-async is given, unless --mega-tune is too)")
	f.IntVar(&x.batch, "batch", 0, "also measure multi-source BFS from `K` roots (the roots: --roots defaults to K), against the K single-root traversals (0: no)")
	f.IntVar(&x.batchWidth, "batch-width", 0, "multi-source roots per pass: 32 or 64 (0: the planner picks)")
	f.Func("peer", fmt.Sprintf("run the peer BFS code `NAME=PATH` (NAME one of %s; PATH its bundle's driver binary) on the same graph and roots as the external arm NAME; repeatable", strings.Join(bfs.PeerNames(), ", ")), x.addPeer)
	f.StringVar(&x.peerGunrock, "peer-gunrock", "", "the same as --peer gunrock=`PATH`")
	f.StringVar(&x.peerDir, "peer-dir", "", "write the graph (.mtx) and roots for the peers into `DIR` and keep them (default: a temporary directory, removed)")
	f.DurationVar(&x.peerTimeout, "peer-timeout", bfs.DefaultPeerTimeout, "the longest one peer's run may take")
	f.IntVar(&x.peerSamples, "peer-samples", 0, "each peer's samples, each one run from every root (0: --samples)")
}

// apply checks the flags and sets them on the options; set names the
// flags given on the command line.
func (x *benchExtra) apply(o *benchOptions, set map[string]bool) error {
	dir, err := bfs.ParseDirection(x.direction)
	if err != nil {
		return usagef("gpuplan bench frontier: --direction: %v", err)
	}
	if o.bench.Check, err = bfs.ParseCheckMode(x.check); err != nil {
		return usagef("gpuplan bench frontier: --check: %v", err)
	}
	sc := &o.bench.Session
	sc.Direction, sc.MegakernelFixedAhead, sc.MegakernelKeep, sc.MegakernelTopDown, sc.MegakernelAsync = dir, x.fixedAhead, x.keep, x.topDown, x.async
	o.bench.Tune = x.tune && (set["mega-tune"] || !(set["mega-ahead"] || set["mega-fixed-ahead"] || set["mega-keep"] || set["mega-top-down"] || set["mega-async"]))
	switch {
	case x.keep != 0 && x.keep != bfs.DefaultMegakernelKeep && x.keep != bfs.MaxMegakernelKeep:
		return usagef("gpuplan bench frontier: --mega-keep %d is not 0, %d or %d. Fix: use %d or %d edges, or 0 for the default", x.keep, bfs.DefaultMegakernelKeep, bfs.MaxMegakernelKeep, bfs.DefaultMegakernelKeep, bfs.MaxMegakernelKeep)
	case x.batch < 0 || x.batch > 4096:
		return usagef("gpuplan bench frontier: --batch %d is outside 0..4096. Fix: use for example 64 (0 measures no batch)", x.batch)
	case x.batchWidth != 0 && x.batchWidth != 32 && x.batchWidth != 64:
		return usagef("gpuplan bench frontier: --batch-width %d is not 0, 32 or 64. Fix: use 32 or 64 roots per pass, or 0 to let the planner pick", x.batchWidth)
	case x.batchWidth != 0 && x.batch == 0:
		return usagef("gpuplan bench frontier: --batch-width needs --batch K. Fix: add --batch K to measure a multi-source batch, or drop --batch-width")
	case x.peerTimeout <= 0:
		return usagef("gpuplan bench frontier: --peer-timeout %v is not positive. Fix: give the longest the Gunrock run may take, for example %v (the default)", x.peerTimeout, bfs.DefaultPeerTimeout)
	case (x.peerDir != "" || x.peerSamples != 0) && x.peerGunrock == "" && len(x.peers) == 0:
		return usagef("gpuplan bench frontier: --peer-dir and --peer-samples need a peer. Fix: add --peer NAME=PATH (or --peer-gunrock PATH), or drop them")
	case set["peer-timeout"] && x.peerGunrock == "" && len(x.peers) == 0:
		return usagef("gpuplan bench frontier: --peer-timeout needs a peer: it bounds a peer's run. Fix: add --peer NAME=PATH (or --peer-gunrock PATH), or drop --peer-timeout")
	case x.peerSamples < 0 || x.peerSamples > 100000:
		return usagef("gpuplan bench frontier: --peer-samples %d is outside 0..100000. Fix: give the peers' samples, or 0 for as many as --samples", x.peerSamples)
	}
	if x.batch > 0 {
		if !set["roots"] && len(o.rootIDs) == 0 {
			o.roots = x.batch
		}
		if o.roots != x.batch {
			return usagef("gpuplan bench frontier: --batch %d with %d roots. Fix: measure a batch from as many roots as it has (drop --roots, or give --roots %d)", x.batch, o.roots, x.batch)
		}
		o.bench.Batch, o.bench.BatchWidth = x.batch, x.batchWidth
	}
	peers := x.peers
	if x.peerGunrock != "" {
		peers = append([]bfs.PeerConfig{{Kind: bfs.PeerArm, Binary: x.peerGunrock}}, peers...)
	}
	seen := map[string]bool{}
	for _, p := range peers {
		if seen[p.Kind] {
			return usagef("gpuplan bench frontier: peer %s is given twice (--peer-gunrock is --peer gunrock=PATH). Fix: give each peer once", p.Kind)
		}
		seen[p.Kind] = true
		p.Dir, p.Timeout, p.Samples = x.peerDir, x.peerTimeout, x.peerSamples
		o.bench.Peers = append(o.bench.Peers, p)
	}
	return nil
}

// addPeer reads one --peer NAME=PATH.
func (x *benchExtra) addPeer(v string) error {
	name, path, ok := strings.Cut(v, "=")
	if !ok || path == "" {
		return fmt.Errorf("%s is not NAME=PATH. Fix: give the peer's name and its driver binary, for example gapbs=/tmp/gapbs-build/bfs_roots", quote.Echo(v))
	}
	if !slices.Contains(bfs.PeerNames(), name) {
		return fmt.Errorf("unknown peer %s. Fix: use one of %s", quote.Echo(name), strings.Join(bfs.PeerNames(), ", "))
	}
	x.peers = append(x.peers, bfs.PeerConfig{Kind: name, Binary: path})
	return nil
}

// writeBenchExtras writes the summary lines of the megakernel's barriers
// and lowered labels, the directions, the multi-source arm and the peer.
func writeBenchExtras(w io.Writer, s *bfs.Summary, res *bfs.BenchResult) {
	if m := s.Megakernel; m != nil {
		fmt.Fprintf(w, "megakernel: %.2f levels per grid barrier (%d levels, %d barriers), %.3f labels lowered per vertex per root, deepest run-ahead %d, %d reruns\n",
			m.LevelsPerBarrier, m.Levels, m.Barriers, m.RelabelsPerVertex, m.MaxAhead, m.Reruns)
		how := "as configured"
		if t := res.Tuning; t != nil {
			how = fmt.Sprintf("tuned from root %d over %d candidates", t.Root, len(t.Trials))
		}
		fmt.Fprintf(w, "megakernel setting: %s (%s)\n", res.Megakernel, how)
	}
	if s.DirectionLevels > 0 {
		which := "every arm's"
		if res.Megakernel.TopDown {
			which = "every arm's but the top-down megakernel's"
		}
		fmt.Fprintf(w, "directions: %d of %d levels bottom-up (planners.PlanBFSDirection); %s decisions equal %s\n",
			s.BottomUpLevels, s.DirectionLevels, which, referenceDecisions(res.Checks))
	} else {
		fmt.Fprintln(w, "directions: every level top-down")
	}
	if ms := res.MultiSource; ms != nil {
		fmt.Fprintf(w, "multi-source: %d roots in %d passes of %d (%d levels, %d pulled): %.2fx the throughput of %s's single-root traversals\n",
			ms.Run.Roots, ms.Run.Passes, ms.Plan.Width, ms.Run.Levels, ms.Run.PullLevels, s.MultiSourceSpeedup, s.FastestArm)
	}
	for _, p := range res.Peers {
		pre := ""
		if ns := p.PreprocessingNs(); ns > 0 {
			pre = fmt.Sprintf("; its untimed preprocessing took %s (%s)", stats.FormatNs(ns), preprocessingText(p.Output.Preprocessing))
		}
		fmt.Fprintf(w, "%s (external, the same .mtx file and roots, its own timer): %s is %.2fx faster%s; %s\n",
			p.Peer, s.FastestArm, s.PeerSpeedups[p.Peer], pre, p.Checked)
	}
}

// referenceDecisions names whose decisions the arms' were held to: the
// CPU reference's, or, when any root was checked the Graph500 way, its
// validated first traversal's.
func referenceDecisions(checks []bfs.RootCheck) string {
	for _, c := range checks {
		if c.Check == bfs.CheckGraph500 {
			return fmt.Sprintf("each root's validated first traversal's (check graph500, arm %s)", c.Arm)
		}
	}
	return "the CPU reference's"
}

// preprocessingText lists a peer's preprocessing steps in seconds, by name.
func preprocessingText(steps map[string]float64) string {
	names := slices.Sorted(maps.Keys(steps))
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = fmt.Sprintf("%s %.3g s", n, steps[n])
	}
	return strings.Join(parts, ", ")
}

// reflectNil reports whether v is a nil pointer or an empty slice, which
// the evidence leaves out.
func reflectNil(v any) bool {
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Pointer, reflect.Slice:
		return rv.IsNil() || rv.Kind() == reflect.Slice && rv.Len() == 0
	}
	return false
}
