package rebuild

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gpuplan/gpuplan/egraph"
	"github.com/gpuplan/gpuplan/internal/input"
	"github.com/gpuplan/gpuplan/workloads/harness"
)

// Peer defaults.
const (
	// DefaultPeerSamples is the egg peer's repetitions, one per run of the
	// peer binary.
	DefaultPeerSamples = 10
	// DefaultPeerTimeout bounds one run of the peer binary.
	DefaultPeerTimeout = 10 * time.Minute
	// peerName is the name the peer's output files get.
	peerName = "peer"
	// peerFileLimit bounds the peer's dump and partition files.
	peerFileLimit = 16 << 30
	// peerOutputLimit bounds what the peer prints.
	peerOutputLimit = 1 << 20
)

// PeerConfig configures the egg peer: egg's own rebuild, timed by the
// egg-bench baseline on the same host, on the same dump.
type PeerConfig struct {
	// Path is the egg-bench binary.
	Path string `json:"path"`
	// Args are the egg-bench options that reproduce the dump (nil: derived
	// from the dump's header comments by EggArgsFromDump). The options
	// --reps, --out and --name are the peer's own.
	Args []string `json:"args"`
	// Samples is the repetitions (0: DefaultPeerSamples): each one a run of
	// egg-bench with --reps 1, which times egg's T1 (rebuild() alone) and
	// T2 (the dump's unions and rebuild()) once each.
	Samples int `json:"samples"`
	// DumpSHA256 is the hex SHA-256 of the dump the GPU arms measured;
	// every run's dump must have it.
	DumpSHA256 string `json:"dump_sha256"`
	// Timeout bounds one run (0: DefaultPeerTimeout).
	Timeout time.Duration `json:"timeout"`
}

// PeerSample is one repetition of the egg peer.
type PeerSample struct {
	Index int `json:"index"`
	// T2Ns is egg's time for all the dump's union calls plus rebuild(), the
	// like-for-like number; T1Ns is rebuild() alone, and T1ColdNs the
	// process's first rebuild().
	T2Ns     float64 `json:"t2_ns"`
	T1Ns     float64 `json:"t1_ns"`
	T1ColdNs float64 `json:"t1_cold_ns"`
	// Checksum identifies egg's partition up to renaming
	// (PartitionChecksum); DistinctNodes is egg's e-node count after it.
	Checksum      string `json:"checksum"`
	DistinctNodes int    `json:"distinct_nodes"`
	// DumpSHA256 is the hex SHA-256 of the dump the run wrote.
	DumpSHA256 string `json:"dump_sha256"`
}

// PeerError is a failure of the egg peer: a missing or failing binary, a
// dump that is not the one measured, or output it cannot read.
type PeerError struct {
	Path string
	Msg  string
	Fix  string
}

// Error names the binary and ends with a Fix.
func (e *PeerError) Error() string {
	return fmt.Sprintf("egg peer %s: %s. Fix: %s", e.Path, e.Msg, e.Fix)
}

var (
	headerRE = regexp.MustCompile(`(SimpleScheduler|BackoffScheduler), (\d+) iterations`)
	exprRE   = regexp.MustCompile(`^#\s*expr\s+(.+)$`)
)

// EggArgsFromDump derives the egg-bench options that reproduce a dump from
// its header comments (head is the start of the dump): the scheduler and
// the iterations of the line egg-bench writes after the magic, and one
// --expr per "# expr" line. A dump egg-bench truncated with --node-limit
// does not say so; its SHA-256 will then differ, and PeerConfig.Args must
// give the options.
func EggArgsFromDump(head []byte) ([]string, error) {
	var args, exprs []string
	sc := bufio.NewScanner(bytes.NewReader(head))
	for line := 0; sc.Scan(); line++ {
		s := strings.TrimSpace(sc.Text())
		if line > 0 && !strings.HasPrefix(s, "#") && s != "" {
			break
		}
		if m := headerRE.FindStringSubmatch(s); m != nil && args == nil {
			sched := "simple"
			if m[1] == "BackoffScheduler" {
				sched = "backoff"
			}
			args = []string{"--iters", m[2], "--scheduler", sched}
		}
		if m := exprRE.FindStringSubmatch(s); m != nil {
			exprs = append(exprs, "--expr", m[1])
		}
	}
	if args == nil || exprs == nil {
		return nil, &PeerError{Path: "(dump header)", Msg: "the dump's header does not name egg-bench's scheduler, iterations and start terms",
			Fix: "pass the egg-bench options that reproduced the dump, for example --peer-args '--preset 1e6'"}
	}
	return append(args, exprs...), nil
}

// RunEggPeer runs the egg peer cfg.Samples times, each time with --reps 1
// into a fresh folder, and returns its samples. Every run must succeed,
// print its SUMMARY line, and write the dump measured (same SHA-256) and
// a partition that reads back; anything else is a *PeerError. log, when
// set, gets a line per run.
func RunEggPeer(cfg PeerConfig, log func(string, ...any)) ([]PeerSample, error) {
	if cfg.Samples == 0 {
		cfg.Samples = DefaultPeerSamples
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultPeerTimeout
	}
	if err := checkPeerArgs(cfg); err != nil {
		return nil, err
	}
	if log == nil {
		log = func(string, ...any) {}
	}
	out := make([]PeerSample, 0, cfg.Samples)
	for i := range cfg.Samples {
		s, err := runPeerOnce(cfg, i)
		if err != nil {
			return nil, err
		}
		log("egg peer run %d/%d: T2 %.3f ms, T1 %.3f ms", i+1, cfg.Samples, s.T2Ns/1e6, s.T1Ns/1e6)
		out = append(out, s)
	}
	return out, nil
}

// checkPeerArgs refuses a configuration the peer cannot run.
func checkPeerArgs(cfg PeerConfig) error {
	switch {
	case cfg.Path == "":
		return &PeerError{Path: "(none)", Msg: "no egg-bench binary was named", Fix: "pass --peer-egg PATH"}
	case cfg.Samples < 1:
		return &PeerError{Path: cfg.Path, Msg: fmt.Sprintf("%d samples", cfg.Samples), Fix: "ask for at least one sample (10 for the gate)"}
	case len(cfg.DumpSHA256) != 64:
		return &PeerError{Path: cfg.Path, Msg: "the measured dump's SHA-256 is unknown", Fix: "run the peer on a dump file (file:PATH)"}
	}
	for _, a := range cfg.Args {
		if slices.Contains([]string{"--reps", "--out", "--name"}, a) {
			return &PeerError{Path: cfg.Path, Msg: fmt.Sprintf("the option %s is the peer's own", a), Fix: "leave --reps, --out and --name out of the peer's options"}
		}
	}
	if harness.CheckExecutable(cfg.Path) != nil {
		return &PeerError{Path: cfg.Path, Msg: "it is not an executable file", Fix: "build egg-bench (its README's build.sh) and pass its path"}
	}
	return nil
}

// runPeerOnce runs egg-bench once into a temporary folder.
func runPeerOnce(cfg PeerConfig, index int) (PeerSample, error) {
	dir, cleanup, err := harness.TempDir("gpuplan-egg-peer-")
	if err != nil {
		return PeerSample{}, err
	}
	defer cleanup()
	ctx, cancel := context.WithTimeout(context.Background(), cfg.Timeout)
	defer cancel()
	args := append(slices.Clone(cfg.Args), "--reps", "1", "--out", dir, "--name", peerName)
	stdout, stderr := &harness.LimitedBuffer{Limit: peerOutputLimit}, &harness.LimitedBuffer{Limit: peerOutputLimit}
	if err := harness.Command(ctx, cfg.Path, args, nil, stdout, stderr); err != nil {
		msg := fmt.Sprintf("run %d (%s) failed: %v; it printed: %s", index+1, strings.Join(args, " "), err, harness.LastLines(stderr.String()+stdout.String(), 5))
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			msg = fmt.Sprintf("run %d took longer than %s", index+1, cfg.Timeout)
		}
		return PeerSample{}, &PeerError{Path: cfg.Path, Msg: msg, Fix: "run egg-bench by hand with the same options to see why"}
	}
	if stdout.Over() {
		return PeerSample{}, &PeerError{Path: cfg.Path, Msg: fmt.Sprintf("run %d printed more than %d bytes, so its SUMMARY line may be lost", index+1, peerOutputLimit),
			Fix: "run egg-bench by hand with the same options to see what it prints"}
	}
	s, err := parsePeerSummary(cfg.Path, stdout.String())
	if err != nil {
		return s, err
	}
	s.Index = index
	if err := s.readOutputs(cfg, dir); err != nil {
		return s, err
	}
	return s, nil
}

// parsePeerSummary reads the times of the SUMMARY line egg-bench prints.
func parsePeerSummary(path, stdout string) (PeerSample, error) {
	var s PeerSample
	var line string
	for _, l := range strings.Split(stdout, "\n") {
		if strings.HasPrefix(l, "SUMMARY ") {
			line = l
		}
	}
	fields := map[string]string{}
	for _, f := range strings.Fields(line) {
		if k, v, ok := strings.Cut(f, "="); ok {
			fields[k] = v
		}
	}
	ms := func(key string, dst *float64) error {
		v, err := strconv.ParseFloat(fields[key], 64)
		if err != nil || v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			return &PeerError{Path: path, Msg: fmt.Sprintf("its SUMMARY line has no time %s (got %q)", key, fields[key]),
				Fix: "use the egg-bench baseline of egg 0.9.5, which prints t1_rebuild_ms_median and t2_unions_rebuild_ms_median"}
		}
		*dst = v * 1e6
		return nil
	}
	if fields["reps"] != "1" {
		return s, &PeerError{Path: path, Msg: fmt.Sprintf("its SUMMARY line says reps=%q, not 1", fields["reps"]), Fix: "use an egg-bench that honours --reps"}
	}
	for _, m := range []struct {
		key string
		dst *float64
	}{{"t2_unions_rebuild_ms_median", &s.T2Ns}, {"t1_rebuild_ms_median", &s.T1Ns}, {"t1_cold_ms", &s.T1ColdNs}} {
		if err := ms(m.key, m.dst); err != nil {
			return s, err
		}
	}
	return s, nil
}

// readOutputs checks the run's dump against the measured one and reads its
// partition.
func (s *PeerSample) readOutputs(cfg PeerConfig, dir string) error {
	sum, err := fileSHA256(filepath.Join(dir, peerName+".pre.txt"))
	if err != nil {
		return &PeerError{Path: cfg.Path, Msg: fmt.Sprintf("its dump could not be read: %v", err), Fix: "check that egg-bench writes NAME.pre.txt under --out"}
	}
	s.DumpSHA256 = sum
	if sum != cfg.DumpSHA256 {
		return &PeerError{Path: cfg.Path, Msg: fmt.Sprintf("with the options %q it wrote a dump whose SHA-256 is %s, not the measured file's %s", strings.Join(cfg.Args, " "), sum, cfg.DumpSHA256),
			Fix: "pass the egg-bench options that reproduce the dump (--peer-args), or measure the dump egg-bench writes"}
	}
	f, err := input.Open(filepath.Join(dir, peerName+".post.txt"), nil, peerFileLimit)
	if err != nil {
		return &PeerError{Path: cfg.Path, Msg: fmt.Sprintf("its partition could not be read: %v", err), Fix: "check that egg-bench writes NAME.post.txt under --out"}
	}
	defer f.Close()
	p, err := egraph.ReadPartition(f)
	if err != nil {
		return &PeerError{Path: cfg.Path, Msg: fmt.Sprintf("its partition is malformed: %v", err), Fix: "use the egg-bench baseline of egg 0.9.5"}
	}
	s.Checksum, s.DistinctNodes = PartitionChecksum(p.Classes), p.DistinctNodes
	return nil
}

// fileSHA256 returns the hex SHA-256 of a file, read in a bounded way.
func fileSHA256(path string) (string, error) {
	f, err := input.Open(path, nil, peerFileLimit)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
