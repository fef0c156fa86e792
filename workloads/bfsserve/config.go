package bfsserve

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/gpuplan/gpuplan/workloads/bfsquery"
)

// Defaults and bounds of Config.
const (
	// DefaultWindow is how long a graph's first queued query waits for
	// others to share its multi-source pass.
	DefaultWindow = 200 * time.Microsecond
	// MaxWindow bounds the batching window.
	MaxWindow = time.Second
	// DefaultMaxBatch is the most distinct roots one batch takes: one
	// multi-source pass of 64 roots.
	DefaultMaxBatch = bfsquery.DefaultBatchWidth
	// MaxMaxBatch bounds MaxBatch.
	MaxMaxBatch = 4096
	// DefaultQueueDepth is the queries a graph holds queued before it
	// refuses more with 429.
	DefaultQueueDepth = 4096
	// MaxQueueDepth bounds QueueDepth.
	MaxQueueDepth = 1 << 20
	// DefaultMaxBodyBytes is the largest request body.
	DefaultMaxBodyBytes = 1 << 20
	// DefaultTimeout is a request's deadline, its queueing included.
	DefaultTimeout = 30 * time.Second
	// DefaultMaxJSONLevels is the most levels one JSON answer carries; an
	// answer over every vertex of a larger graph is refused with a pointer
	// to the binary levels download.
	DefaultMaxJSONLevels = 1 << 16
	// DefaultMaxBatchQueries is the most queries one batch request holds.
	DefaultMaxBatchQueries = 1024
	// BudgetTargets is the targets of the smallest query the default
	// budget holds for each query of a full batch, with parents, beside
	// one over every vertex: on a graph of fewer vertices than a query's
	// targets (gpuplan load sends 16), that query is the larger.
	BudgetTargets = 1 << 10
	// DefaultRecoverBackoff is the first wait between attempts to reopen
	// the graphs after a fault; it doubles up to 30 s.
	DefaultRecoverBackoff = 100 * time.Millisecond
	// DefaultRecoverAttempts is how many times the server tries to reopen
	// the graphs after a fault before it gives up.
	DefaultRecoverAttempts = 5
)

// Config configures a Server. Its zero value is valid: every field left
// zero takes its default.
type Config struct {
	// Window is the batching window: a graph's first queued query waits at
	// most this long for others before its batch runs (0: DefaultWindow;
	// NoWindow runs whatever is queued at once). The wait applies while
	// queries overlap: a query that finds the graph idle, after a batch of
	// one root, runs at once unless WaitAlone is set.
	Window time.Duration
	// WaitAlone makes a query that finds the graph idle wait the window
	// too.
	WaitAlone bool
	// MaxBatch is the most distinct roots of one batch (0:
	// DefaultMaxBatch); 1 serves the queries one at a time.
	MaxBatch int
	// QueueDepth is the queries each graph holds queued (0:
	// DefaultQueueDepth); beyond it a query is refused with 429.
	QueueDepth int
	// MaxBodyBytes is the largest request body (0: DefaultMaxBodyBytes);
	// a larger one is refused with 413.
	MaxBodyBytes int64
	// Timeout is each request's deadline (0: DefaultTimeout); a query not
	// answered by then fails with 504.
	Timeout time.Duration
	// BudgetBytes is the memory one batch may hold: the graph plus, for
	// each query, its multi-source state, its root's levels and its answer
	// (0: a full batch of MaxBatch queries, each over every vertex or of
	// BudgetTargets targets, with parents, whichever needs more). The
	// multi-query plan splits a batch into groups that fit; a query that
	// alone does not fit is refused with 503 and the plan's numbers. New
	// refuses a budget that does not hold a graph and one query of one
	// target.
	BudgetBytes uint64
	// MaxJSONLevels is the most levels one JSON answer carries (0:
	// DefaultMaxJSONLevels).
	MaxJSONLevels int
	// MaxBatchQueries is the most queries one batch request holds (0:
	// DefaultMaxBatchQueries).
	MaxBatchQueries int
	// RecoverBackoff is the first wait between attempts to reopen the
	// graphs after a fault (0: DefaultRecoverBackoff).
	RecoverBackoff time.Duration
	// RecoverAttempts is how many times the server tries to reopen the
	// graphs after a fault before it gives up (0: DefaultRecoverAttempts).
	// Once it gives up, Health says StatusFailed, every query is refused
	// with 503 and Server.Failed is closed: the process must be restarted.
	// A reopening that fails with a lost context (executor.ContextLost)
	// gives up at once, whatever the attempts left: on a real GPU a sticky
	// fault ends the process's use of CUDA, so no retry can succeed.
	RecoverAttempts int
	// Logger receives the structured logs (nil: discarded).
	Logger *slog.Logger
	// Registry holds the server's metrics (nil: a registry of its own,
	// with the Go runtime's and the process's collectors).
	Registry *prometheus.Registry
}

// NoWindow is a Window that does not wait: a batch takes the queries
// already queued.
const NoWindow time.Duration = -1

// ConfigError is a Config field out of range: Field names it (the Go
// field, for example "Window"), Msg says why and Fix what to do.
type ConfigError struct {
	Field string
	Msg   string
	Fix   string
}

// Error names the field and ends with a "Fix:" sentence.
func (e *ConfigError) Error() string { return fmt.Sprintf("%s: %s. Fix: %s", e.Field, e.Msg, e.Fix) }

// withDefaults checks c and fills in its defaults.
func (c Config) withDefaults() (Config, error) {
	bad := func(field, msg, fix string) (Config, error) {
		return Config{}, &ConfigError{Field: field, Msg: msg, Fix: fix}
	}
	switch {
	case c.Window < NoWindow || c.Window > MaxWindow:
		return bad("Window", fmt.Sprintf("%s is outside 0..%s", c.Window, MaxWindow), "give a batching window from 0 (no wait) to 1s, for example 200us")
	case c.MaxBatch < 0 || c.MaxBatch > MaxMaxBatch:
		return bad("MaxBatch", fmt.Sprintf("%d roots is outside 1..%d", c.MaxBatch, MaxMaxBatch), "give 1 (one query at a time) to 4096 roots per batch, for example 64")
	case c.QueueDepth < 0 || c.QueueDepth > MaxQueueDepth:
		return bad("QueueDepth", fmt.Sprintf("%d is outside 1..%d", c.QueueDepth, MaxQueueDepth), "give a queue depth from 1 to 1048576")
	case c.MaxBodyBytes < 0:
		return bad("MaxBodyBytes", fmt.Sprintf("%d is negative", c.MaxBodyBytes), "give a positive size, or 0 for the default 1 MiB")
	case c.Timeout < 0:
		return bad("Timeout", fmt.Sprintf("%s is negative", c.Timeout), "give a positive deadline, or 0 for the default 30s")
	case c.MaxJSONLevels < 0:
		return bad("MaxJSONLevels", fmt.Sprintf("%d is negative", c.MaxJSONLevels), "give a positive count, or 0 for the default")
	case c.MaxBatchQueries < 0 || c.MaxBatchQueries > bfsquery.MaxBatchRoots:
		return bad("MaxBatchQueries", fmt.Sprintf("%d is outside 1..%d", c.MaxBatchQueries, bfsquery.MaxBatchRoots), "give 1 to 65536 queries per batch request")
	case c.RecoverBackoff < 0:
		return bad("RecoverBackoff", fmt.Sprintf("%s is negative", c.RecoverBackoff), "give a positive wait, or 0 for the default")
	case c.RecoverAttempts < 0:
		return bad("RecoverAttempts", fmt.Sprintf("%d is negative", c.RecoverAttempts), fmt.Sprintf("give a positive count of attempts to reopen the graphs, or 0 for the default %d", DefaultRecoverAttempts))
	}
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	def(&c.MaxBatch, DefaultMaxBatch)
	def(&c.QueueDepth, DefaultQueueDepth)
	def(&c.MaxJSONLevels, DefaultMaxJSONLevels)
	def(&c.MaxBatchQueries, DefaultMaxBatchQueries)
	def(&c.RecoverAttempts, DefaultRecoverAttempts)
	switch c.Window {
	case 0:
		c.Window = DefaultWindow
	case NoWindow:
		c.Window = 0
	}
	if c.MaxBodyBytes == 0 {
		c.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	if c.RecoverBackoff == 0 {
		c.RecoverBackoff = DefaultRecoverBackoff
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c, nil
}
