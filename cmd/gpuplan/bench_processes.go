package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/executor/nccl"
	"github.com/gpuplan/gpuplan/executor/nccl/rendezvous"
	"github.com/gpuplan/gpuplan/workloads/harness"
	"github.com/gpuplan/gpuplan/workloads/partbfs"
)

// defaultLaunchTimeout is --launch-timeout's default: the longest a
// launch of one process per GPU may take, reference BFS included.
const defaultLaunchTimeout = time.Hour

// visibleDevicesEnv is the variable that limits the GPUs a CUDA process
// sees.
const visibleDevicesEnv = "CUDA_VISIBLE_DEVICES"

// rankStart starts rank of a --processes launch with vars (KEY=VALUE)
// added to the environment, its standard output and error into stdout and
// stderr, and returns a wait that returns once the rank has exited, with
// its failure. ctx's end stops the rank.
type rankStart func(ctx context.Context, rank int, vars []string, stdout, stderr io.Writer) (wait func() error, err error)

// execRank starts every rank as a child process of this executable (or
// e.child's command) running "gpuplan" with args.
func (e *env) execRank(args []string) rankStart {
	return func(ctx context.Context, _ int, vars []string, stdout, stderr io.Writer) (func() error, error) {
		cmd, err := e.childCommand(ctx, args)
		if err != nil {
			return nil, err
		}
		if cmd.Env == nil {
			cmd.Env = os.Environ()
		}
		cmd.Env = append(cmd.Env, vars...)
		cmd.Stdout, cmd.Stderr = stdout, stderr
		cmd.WaitDelay = 5 * time.Second
		if err := cmd.Start(); err != nil {
			return nil, err
		}
		return cmd.Wait, nil
	}
}

// checkProcesses reads --processes and --launch-timeout. With the rank
// environment set (GPUPLAN_RANK and the rest, rendezvous.FromEnv) this
// process is one rank, and the world size is the part count; otherwise
// --processes needs --devices N > 1.
func (o *benchOptions) checkProcesses(e *env, set map[string]bool) error {
	if !o.processes {
		if set["launch-timeout"] {
			return usagef("gpuplan bench frontier: --launch-timeout applies only with --processes. Fix: add --devices N --processes, or drop --launch-timeout")
		}
		return nil
	}
	switch {
	case o.simulate > 0:
		return usagef("gpuplan bench frontier: --processes and --simulate-devices %d exclude each other: the simulation runs every partition in one process on one GPU. Fix: run one process per GPU with --devices N --processes, or drop --processes", o.simulate)
	case o.launchTimeout <= 0:
		return usagef("gpuplan bench frontier: --launch-timeout %v is not positive. Fix: give the longest the launch may take, for example %v (the default)", o.launchTimeout, defaultLaunchTimeout)
	}
	if _, ok := e.lookup(rendezvous.RankEnv); !ok {
		if o.devices < 2 {
			return usagef("gpuplan bench frontier: --processes needs --devices N with N > 1 (one process per GPU). Fix: add --devices N, or start every process as a rank with %s, %s and %s set", rendezvous.RankEnv, rendezvous.WorldSizeEnv, rendezvous.AddressEnv)
		}
		return nil
	}
	cfg, err := rendezvous.FromEnv(e.lookup)
	if err != nil {
		return usagef("gpuplan bench frontier --processes: %v", err)
	}
	switch {
	case cfg.WorldSize > partbfs.MaxParts:
		return usagef("gpuplan bench frontier --processes: %s=%d is above %d parts. Fix: run at most %d ranks", rendezvous.WorldSizeEnv, cfg.WorldSize, partbfs.MaxParts, partbfs.MaxParts)
	case set["devices"] && o.devices != cfg.WorldSize:
		return usagef("gpuplan bench frontier: --devices %d but %s=%d. Fix: give every rank the world size as --devices, or leave --devices out", o.devices, rendezvous.WorldSizeEnv, cfg.WorldSize)
	}
	o.rank, o.devices = &cfg, cfg.WorldSize
	return nil
}

// benchProcesses runs the partitioned BFS with one process per GPU: as
// one rank when the rank environment is set, else by launching one rank
// per device.
func benchProcesses(e *env, o *benchOptions) error {
	if o.rank != nil {
		return benchRank(e, o, *o.rank)
	}
	return launchRanks(e, o)
}

// unavailable turns the executor's "no CUDA" error into the partitioned
// bench's, with its fix.
func unavailable(err error) error {
	var ue *executor.UnavailableError
	if errors.As(err, &ue) {
		return fmt.Errorf("%s Fix: run a CUDA build (make build-cuda) on a machine with NVIDIA GPUs, or plan the partition offline with 'gpuplan partition'", ue.Reason)
	}
	return err
}

// launchRanks checks that -o can be fingerprinted and that the devices
// are present, then starts rank i of
// --devices N with GPUPLAN_RANK=i, GPUPLAN_WORLD_SIZE=N, an address file
// in a temporary directory (GPUPLAN_RENDEZVOUS_FILE, where rank 0 writes
// its loopback address) and CUDA_VISIBLE_DEVICES naming GPU i alone;
// every rank runs the per-rank bench and rank 0 writes the outputs. Each
// rank's log lines are copied to stderr after "rank i: ". It waits for
// every rank within --launch-timeout (SIGINT or SIGTERM stops them too);
// once one rank fails it stops the others, and it fails naming the rank
// that failed first, with its last line.
func launchRanks(e *env, o *benchOptions) error {
	if _, err := evidenceFingerprint(o.out, o.sourceRoot, partbfsWorkload); err != nil {
		return err
	}
	if err := driverLibraryError(); err != nil {
		return unavailable(err)
	}
	present, err := o.opener.Count()
	if err != nil {
		return unavailable(err)
	}
	if present < o.devices {
		return &partbfs.TooFewDevicesError{Asked: o.devices, Present: present}
	}
	dir, err := os.MkdirTemp("", "gpuplan-rendezvous-")
	if err != nil {
		return fmt.Errorf("gpuplan bench frontier --processes: cannot make the rendezvous directory: %w. Fix: set TMPDIR to a writable directory", err)
	}
	defer os.RemoveAll(dir)
	base, stop := e.interruptContext()
	defer stop()
	ctx, cancel := context.WithTimeout(base, o.launchTimeout)
	defer cancel()
	visible := visibleDevices(e, o.devices)
	e.benchLogf("launching %d ranks, one process per GPU (%s %s), within %v", o.devices, visibleDevicesEnv, strings.Join(visible, ", "), o.launchTimeout)
	logs := &rankLogs{w: e.stderr}
	waits := make([]func() error, o.devices)
	for i := range o.devices {
		vars := []string{rendezvous.RankEnv + "=" + strconv.Itoa(i), rendezvous.WorldSizeEnv + "=" + strconv.Itoa(o.devices),
			rendezvous.FileEnv + "=" + filepath.Join(dir, "rendezvous.addr"), visibleDevicesEnv + "=" + visible[i]}
		stdout := io.Discard
		if i == 0 {
			stdout = e.stdout
		}
		if waits[i], err = o.startRank(ctx, i, vars, stdout, logs.rank(i)); err != nil {
			cancel()
			waitAll(waits[:i])
			return fmt.Errorf("gpuplan bench frontier --processes: cannot start rank %d: %w. Fix: check that this executable can be run again (its path is os.Executable's)", i, err)
		}
	}
	errs, first := waitRanks(waits, cancel)
	logs.flush()
	return ranksError(ctx, o, errs, first, logs)
}

// visibleDevices returns the CUDA_VISIBLE_DEVICES value of each of n
// ranks: the i-th entry of this process's list where it sets one, else i.
func visibleDevices(e *env, n int) []string {
	out := make([]string, n)
	list, _ := e.lookup(visibleDevicesEnv)
	entries := strings.Split(list, ",")
	for i := range out {
		out[i] = strconv.Itoa(i)
		if strings.TrimSpace(list) != "" && i < len(entries) {
			out[i] = strings.TrimSpace(entries[i])
		}
	}
	return out
}

// waitAll waits for every rank at once and returns their errors, by rank.
func waitAll(waits []func() error) []error {
	errs := make([]error, len(waits))
	var wg sync.WaitGroup
	for i, w := range waits {
		wg.Go(func() { errs[i] = w() })
	}
	wg.Wait()
	return errs
}

// waitRanks waits for every rank and returns their errors, by rank, and
// the first rank that failed (-1: none). Once a rank has failed the others
// cannot finish, so stop (which ends their context) stops them.
func waitRanks(waits []func() error, stop func()) ([]error, int) {
	type exit struct {
		rank int
		err  error
	}
	exits := make(chan exit, len(waits))
	for i, w := range waits {
		go func() { exits <- exit{i, w()} }()
	}
	errs, first := make([]error, len(waits)), -1
	for range waits {
		x := <-exits
		errs[x.rank] = x.err
		if x.err != nil && first < 0 {
			first = x.rank
			stop()
		}
	}
	return errs, first
}

// ranksError is the launch's failure: the deadline, or the first rank
// that failed, with its last log line, and the ranks that ended with an
// error after it; nil when every rank succeeded.
func ranksError(ctx context.Context, o *benchOptions, errs []error, first int, logs *rankLogs) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) && first < 0 {
		return fmt.Errorf("gpuplan bench frontier --processes: the %d ranks did not finish within --launch-timeout %v. Fix: raise --launch-timeout, or read the ranks' log lines for the one that stalled", o.devices, o.launchTimeout)
	}
	if first < 0 {
		return nil
	}
	msg := fmt.Sprintf("rank %d failed (%v): %s", first, errs[first], logs.last(first))
	var others []string
	for i, err := range errs {
		if err != nil && i != first {
			others = append(others, strconv.Itoa(i))
		}
	}
	if len(others) == 1 {
		msg += fmt.Sprintf("; rank %s ended with an error after it (stopped by the launcher, or failing on its own: its log lines say which)", others[0])
	} else if len(others) > 1 {
		msg += fmt.Sprintf("; ranks %s ended with errors after it (stopped by the launcher, or failing on their own: their log lines say which)", strings.Join(others, ", "))
	}
	return fmt.Errorf("gpuplan bench frontier --processes: %s. Fix: fix what rank %d reports and run again", msg, first)
}

// rankLogs copies the ranks' output lines to w, each after "rank i: ",
// whole lines at a time, and keeps every rank's last line.
type rankLogs struct {
	mu    sync.Mutex
	w     io.Writer
	ranks []*rankLog
}

// rankLog is one rank's partial line and last line.
type rankLog struct {
	l        *rankLogs
	rank     int
	partial  bytes.Buffer
	lastLine string
}

// maxRankLine bounds one buffered line of a rank's output.
const maxRankLine = 64 << 10

// rank returns the writer of rank i's output.
func (l *rankLogs) rank(i int) io.Writer {
	l.mu.Lock()
	defer l.mu.Unlock()
	r := &rankLog{l: l, rank: i}
	l.ranks = append(l.ranks, r)
	return r
}

// Write copies every whole line of p, buffering the rest.
func (r *rankLog) Write(p []byte) (int, error) {
	r.l.mu.Lock()
	defer r.l.mu.Unlock()
	for _, b := range p {
		if b != '\n' {
			if r.partial.Len() < maxRankLine {
				r.partial.WriteByte(b)
			}
			continue
		}
		r.emit()
	}
	return len(p), nil
}

// emit writes the buffered line (under the lock).
func (r *rankLog) emit() {
	line := strings.TrimRight(r.partial.String(), "\r")
	r.partial.Reset()
	fmt.Fprintf(r.l.w, "rank %d: %s\n", r.rank, line)
	if strings.TrimSpace(line) != "" {
		r.lastLine = line
	}
}

// flush writes every rank's unfinished line.
func (l *rankLogs) flush() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, r := range l.ranks {
		if r.partial.Len() > 0 {
			r.emit()
		}
	}
}

// last returns rank i's last line, clipped.
func (l *rankLogs) last(i int) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, r := range l.ranks {
		if r.rank == i && r.lastLine != "" {
			return clip(r.lastLine)
		}
	}
	return "no output"
}

// benchRank is one rank of a run with one process per GPU: it opens
// --device (the rank's GPU; the launcher shows each rank only its own),
// meets the other ranks through the rendezvous (rank 0 makes the NCCL id
// and listens), opens its NCCL rank, builds the graph and runs
// partbfs.BenchRank. Rank 0 writes the evidence, the summary and the
// table as the one-process --devices N does; the other ranks write none.
func benchRank(e *env, o *benchOptions, cfg rendezvous.Config) error {
	logf := e.benchLogf
	fingerprint := ""
	if cfg.Rank == 0 {
		var err error
		if fingerprint, err = evidenceFingerprint(o.out, o.sourceRoot, partbfsWorkload); err != nil {
			return err
		}
	}
	if err := driverLibraryError(); err != nil {
		return unavailable(err)
	}
	x, err := o.opener.Open(o.device)
	if err != nil {
		return unavailable(fmt.Errorf("partitioned BFS rank %d: opening device %d: %w", cfg.Rank, o.device, err))
	}
	defer x.Close()
	ctx := e.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	comm, err := joinRanks(ctx, o, x, cfg)
	if err != nil {
		return err
	}
	defer comm.Close()
	logf("rank %d of %d on %s, device %d", cfg.Rank, cfg.WorldSize, x.Device().Name, o.device)
	g, roots, err := o.graphAndRoots(logf)
	if err != nil {
		return err
	}
	bar := &progressBar{w: e.stderr, on: o.progress && cfg.Rank == 0}
	res, err := partbfs.BenchRank(x, g, roots, partbfs.Rank{Rank: cfg.Rank, Ranks: cfg.WorldSize, Comm: comm},
		partbfs.BenchConfig{Session: partbfs.Config{Strategy: o.strategy}, Samples: o.bench.Samples, Reporting: harness.Reporting{Progress: bar.update, Log: logf}})
	if err != nil {
		return err
	}
	if cfg.Rank != 0 {
		logf("rank %d done; rank 0 writes the results", cfg.Rank)
		return nil
	}
	prov := benchProvenance(x, fingerprint)
	prov.DeviceName = fmt.Sprintf("%dx %s", cfg.WorldSize, prov.DeviceName)
	res.Summary.Device = fmt.Sprintf("%s, driver %s", res.Summary.Device, prov.DriverVersion)
	logf("transport: %s, one process per GPU", rankTransportName(comm))
	return writePartitionedOutputs(e, o, res, prov, g)
}

// joinRanks meets the other ranks (rendezvous.Exchange: rank 0 makes the
// communicator's id with the opener and hands it to every rank) and opens
// this rank's communicator. The device key is the GPU's name and driver
// version, so that rank 0 refuses a rank on another model or driver; ctx
// ends the rendezvous early.
func joinRanks(ctx context.Context, o *benchOptions, x *executor.Executor, cfg rendezvous.Config) (nccl.RankCollectives, error) {
	cfg.DeviceKey = x.Device().Name + "|" + o.opener.DriverVersion(o.device)
	payload, err := rendezvous.Exchange(ctx, cfg, func() (rendezvous.Payload, error) {
		id, err := o.opener.UniqueID()
		return rendezvous.Payload(id), err
	})
	if err != nil {
		return nil, err
	}
	comm, err := o.opener.Rank(x, nccl.UniqueID(payload), cfg.Rank, cfg.WorldSize)
	if err != nil {
		return nil, fmt.Errorf("partitioned BFS rank %d of %d: %w", cfg.Rank, cfg.WorldSize, err)
	}
	return comm, nil
}

// rankTransportName says what the ranks exchange over.
func rankTransportName(c nccl.RankCollectives) string {
	if v, ok := c.(interface{ Version() string }); ok && v.Version() != "" {
		return "NCCL " + v.Version()
	}
	return fmt.Sprintf("%T", c)
}
