package engine

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/engine/internal/admission"
	"github.com/weft-dev/weft/engine/internal/cache"
	"github.com/weft-dev/weft/engine/internal/decide"
	"github.com/weft-dev/weft/engine/internal/dispatch"
	"github.com/weft-dev/weft/engine/internal/ownership"
	"github.com/weft-dev/weft/engine/internal/queues"
	"github.com/weft-dev/weft/engine/internal/record"
	"github.com/weft-dev/weft/engine/keyspace"
	"github.com/weft-dev/weft/engine/runlog"
	"github.com/weft-dev/weft/engine/runstate"
	"github.com/weft-dev/weft/internal/clock"
	"github.com/weft-dev/weft/lease"
	"github.com/weft-dev/weft/store"
)

// Clock is the engine's time source (the project's one clock.Clock); tests
// inject a clock they move by hand so that no test sleeps for time to pass.
type Clock = clock.Clock

// SystemClock is the wall clock, in UTC.
type SystemClock = clock.System

// CompletionPolicy checks a manual completion before it is applied (the separation-of-duties check of
// docs/semantics.md#manual-completion). It answers nil to allow, or an error to deny.
type CompletionPolicy func(ctx context.Context, run *RunInfo, req *ManualCompletionParams) error

// RunInfo is what a completion policy knows of a run.
type RunInfo struct {
	RunID       string
	TenantID    string
	SubmittedBy string
}

// runInfo answers what a completion policy knows of run.
func runInfo(r *record.Run) *RunInfo {
	return &RunInfo{RunID: r.RunID, TenantID: r.TenantID, SubmittedBy: r.SubmittedBy}
}

// Config configures an Engine.
type Config struct {
	// Store is where everything is kept.
	Store store.Store
	// Clock defaults to SystemClock.
	Clock Clock
	// Logger receives structured lines without payloads.
	Logger *slog.Logger
	// InlineResultLimit caps an inline step output (default 256 KiB); larger
	// outputs must travel as artifact references.
	InlineResultLimit int
	// DrainTimeout bounds a pause's drain (default 5 minutes, docs/semantics.md#pause-drain).
	DrainTimeout time.Duration
	// PollInterval is how often a long poll and the timer loop look at the
	// store for work that another process made ready (default 200 ms); with
	// a Notifier, a long poll usually hears of it sooner.
	PollInterval time.Duration
	// Notifier, when set, tells the other engines that share the store
	// which queues and runs each commit woke, so that their long polls and
	// event watches need not wait for PollInterval (see Notifier and Wake).
	// Nil: only this engine's own commits wake its waiters.
	Notifier Notifier
	// CompletionPolicy defaults to separation of duties: the actor may not be
	// the run's submitter.
	CompletionPolicy CompletionPolicy
	// SignalRetention is how long an accepted signal's response answers
	// duplicates (default 7 days); retention then removes it, and a retry is
	// a new signal.
	SignalRetention time.Duration
	// Retention is how long a finished run is kept before the retention
	// pass removes it with every record it owns (default DefaultRetention,
	// 30 days); a definition's own retention overrides it. RetainForever
	// keeps finished runs until DeleteRun (docs/semantics.md#retention).
	Retention time.Duration
	// Leases avoid duplicate background work between engines (default: in
	// process, for the embedded deployment; Redis in a cluster).
	Leases lease.Manager
	// LeaseTTL is how long a run's lease lives unless renewed (default 10s).
	LeaseTTL time.Duration
	// Owner names this engine in leases and emitted_by (default: random).
	Owner string
	// Limits cap concurrently started runs; Backpressure is what a definition
	// without its own mode does at a limit (default QUEUE); Delay is how far
	// DELAY pushes an over-limit run's activities (default 5s).
	Limits       Limits
	Backpressure definition.BackpressureMode
	Delay        time.Duration
	// Outbox enqueues every appended event for export in the same batch
	// (the transactional outbox of docs/semantics.md#outbox); an export worker publishes
	// and removes the entries. Off: no entries are written.
	Outbox bool
	// OutboxCache, with Outbox, is told the outbox entries of every decision
	// once its commit succeeded, with their events as stored, so that an
	// export worker in this process resolves them from memory
	// (runlog.OutboxCache; export.Config.OutboxCache). Nil: none is kept.
	OutboxCache *runlog.OutboxCache
	// Ownership is the checkpoint ownership mode (default single-owner, the
	// embedded deployment; clusters use cas-required).
	Ownership Ownership
	// validateEvent replaces the schema check of every event the engine is
	// about to append (docs/semantics.md#event-validation), for tests in this
	// package only; nil is eventpb.Check, the proto's rules.
	validateEvent func(*runstate.Event) error
	// poisonArenas fills every decision's arena with poison when it is
	// given back, instead of clearing it (arena.go), for tests in this
	// package only.
	poisonArenas bool
	// inTenure, when set, is called by every background decision once it
	// holds the run's tenure, before it decides (tests: a tenure that ends
	// under a decision).
	inTenure func(runID string)
	// Alerts receives the spec's operational alerts (AlertProjectorLagHigh,
	// ...), with identifiers only. Default: a WARN line on Logger.
	Alerts AlertFunc
	// WriteLatencyBudget, FailOpenEventClasses and NeverFailOpenEventClasses
	// are the budget of docs/semantics.md#write-latency-budget (default 3s, [StepStarted],
	// [StepCompleted, StepFailed]); docs/semantics.md says what each means.
	WriteLatencyBudget        time.Duration
	FailOpenEventClasses      []string
	NeverFailOpenEventClasses []string
	// PollerRefresh is how often this engine rewrites the record of each
	// worker polling it, so that every engine can list it (default 10s; a
	// record expires three refreshes after it was written). PollerTTL is
	// how long a worker that stopped polling and holds no task is still
	// listed (default 1 minute). docs/semantics.md#pollers.
	PollerRefresh time.Duration
	PollerTTL     time.Duration
	// ScheduleToStartTimeout bounds how long an activity's or compensation's
	// task may wait in its queue for a worker when its action sets no
	// schedule_to_start_timeout_ms (docs/semantics.md#schedule-to-start).
	// Zero: no bound (weftd's --schedule-to-start-timeout defaults to 5m).
	ScheduleToStartTimeout time.Duration
	// Observer is told of submissions, decisions, claims and attempts, for
	// traces and metrics (observe.go). Nil: nothing is observed, at no cost.
	Observer Observer
	// MaxWorkflowDepth caps how deeply runs nest through sub-workflow steps:
	// a step of a run at this depth that would start a child fails
	// (docs/semantics.md#sub-workflows). Default DefaultMaxWorkflowDepth.
	MaxWorkflowDepth int
	// MaxFanOut caps a forEach list's length: a longer one fails its step
	// VALIDATION (docs/semantics.md#for-each). Default
	// definition.DefaultMaxFanOut (1,000), at most definition.MaxFanOutLimit.
	MaxFanOut int
}

// Defaults.
const (
	DefaultInlineResultLimit = 256 << 10
	DefaultDrainTimeout      = 5 * time.Minute
	DefaultPollInterval      = 200 * time.Millisecond
	DefaultLeaseTTL          = 10 * time.Second
)

// WithDefaults answers the config with unset fields defaulted.
func (c Config) WithDefaults() Config {
	c.Clock = cmp.Or[Clock](c.Clock, SystemClock{})
	c.Logger = cmp.Or(c.Logger, slog.New(slog.DiscardHandler))
	c.InlineResultLimit = cmp.Or(c.InlineResultLimit, DefaultInlineResultLimit)
	c.DrainTimeout = cmp.Or(c.DrainTimeout, DefaultDrainTimeout)
	c.PollInterval = cmp.Or(c.PollInterval, DefaultPollInterval)
	if c.CompletionPolicy == nil {
		c.CompletionPolicy = SeparationOfDuties
	}
	if c.Leases == nil {
		c.Leases = lease.NewLocal(c.Clock.Now)
	}
	c.LeaseTTL = cmp.Or(c.LeaseTTL, DefaultLeaseTTL)
	c.Owner = cmp.Or(c.Owner, "engine-"+decide.RandomToken()[:12])
	c.Backpressure = cmp.Or(c.Backpressure, DefaultBackpressure)
	c.Delay = cmp.Or(c.Delay, DefaultDelay)
	c.SignalRetention = cmp.Or(c.SignalRetention, DefaultSignalRetention)
	c.Retention = cmp.Or(c.Retention, DefaultRetention)
	c.Ownership = cmp.Or(c.Ownership, SingleOwner)
	c.MaxWorkflowDepth = cmp.Or(c.MaxWorkflowDepth, DefaultMaxWorkflowDepth)
	c.MaxFanOut = min(cmp.Or(c.MaxFanOut, definition.DefaultMaxFanOut), definition.MaxFanOutLimit)
	if c.Alerts == nil {
		c.Alerts = LogAlerts(c.Logger)
	}
	if c.PollerRefresh == 0 {
		c.PollerRefresh = DefaultPollerRefresh
	}
	if c.PollerTTL == 0 {
		c.PollerTTL = DefaultPollerTTL
	}
	return c.budgetDefaults()
}

func (c Config) validate() error {
	if c.Store == nil {
		return errors.New("engine: a store is required")
	}
	if c.InlineResultLimit < 1024 {
		return fmt.Errorf("inline result limit must be at least 1024 bytes, got %d", c.InlineResultLimit)
	}
	if c.ScheduleToStartTimeout < 0 {
		return fmt.Errorf("schedule-to-start timeout must be zero (none) or positive, got %s", c.ScheduleToStartTimeout)
	}
	if c.PollInterval < time.Millisecond {
		return fmt.Errorf("poll interval must be at least 1ms, got %s", c.PollInterval)
	}
	if c.Retention != RetainForever && c.Retention < MinRetention {
		return fmt.Errorf("retention must be at least %s (or RetainForever), got %s", MinRetention, c.Retention)
	}
	if err := c.latencyBudget().Validate(); err != nil {
		return err
	}
	return ownership.Check(c.Ownership, c.Store.Capabilities())
}

// Engine drives runs. It is safe for concurrent use.
type Engine struct {
	cfg   Config
	store store.Store
	// records reads run records, checkpoints and task records through the
	// caches of what this engine committed or read (engine/internal/cache).
	records cache.Records
	clock   Clock
	log     *slog.Logger
	locks   locks
	// dispatch carries committed decisions to the polls and watches that
	// wait on them: wake-ups, hand-offs, queue hints.
	dispatch *dispatch.Dispatcher[*Task]
	own      tenures
	// alert raises an alert now: Config.Alerts.
	alert AlertFunc
	// pollerSweep paces the sweep of expired poller records (pollers.go).
	pollerSweep queues.Pacer
	// arenas recycles the memory decisions record in (arena.go).
	arenas arenas
	// flow remembers the flow-control keys holding their tasks back
	// (flowclaim.go).
	flow flowGate
	// runQueueKick asks Run for a run-queue pass now: a committed decision
	// gave a run's concurrency slots back (runqueue.go).
	runQueueKick chan struct{}
}

// New builds an engine over cfg.Store. It fails before anything else can
// happen — no lease, no recovery loop, no queue poll — when the ownership mode
// needs a capability the store lacks (CheckpointOwnershipCapabilityError).
func New(cfg Config) (*Engine, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	e := &Engine{cfg: cfg, store: cfg.Store, records: cache.New(cfg.Store), clock: cfg.Clock, log: cfg.Logger, own: newTenures(cfg),
		runQueueKick: make(chan struct{}, 1),
		alert:        cfg.Alerts}
	dcfg := dispatch.Config[*Task]{Now: cfg.Clock.Now, Interval: cfg.PollInterval, Log: cfg.Logger,
		Hints: cfg.Ownership == SingleOwner, GiveBack: func(tasks []*Task) { giveBack(e, tasks) }}
	if cfg.Notifier != nil {
		dcfg.Publisher = cfg.Notifier
	}
	e.dispatch = dispatch.New(dcfg)
	e.arenas.poison = cfg.poisonArenas
	return e, nil
}

// locks are this process's locks: one per run (hashed), and one per run
// request for submissions. A holder of a submission's lock may then take a
// run's, never the other way round.
type locks struct {
	byRun        [runLockStripes]sync.Mutex
	bySubmission [64]sync.Mutex
}

// runLockStripes is how many run locks there are. A decision holds its run's
// lock until its commit settles (a database round trip or more), so two runs
// that hash to one lock wait for each other's commits: with 16 runs in
// flight, 4,096 stripes make that one decision in about 270 rather than one
// in 17 (256 stripes).
const runLockStripes = 4096

// lock serialises this process's changes to one run, so that its own writers
// do not lose compare-and-set races to each other. Correctness never rests on
// it: every change is a conditional batch on the checkpoint's version.
func (e *locks) lock(runID string) func() { return lockHashed(e.byRun[:], runID) }

// lockSubmission serialises this process's submissions of one run request,
// for stores that cannot check its key's absence in the commit.
func (e *locks) lockSubmission(rrKey []byte) func() { return lockHashed(e.bySubmission[:], rrKey) }

// lockHashed locks the mutex of mutexes that key hashes to.
func lockHashed[K ~string | ~[]byte](mutexes []sync.Mutex, key K) func() {
	m := &mutexes[stripe(key, len(mutexes))]
	m.Lock()
	return m.Unlock
}

// stripe answers which of n locks key takes: its FNV-1a hash modulo n.
func stripe[K ~string | ~[]byte](key K, n int) int {
	h := uint32(2166136261)
	for i := range len(key) {
		h ^= uint32(key[i])
		h *= 16777619
	}
	return int(h % uint32(n))
}

// clockNow answers the engine's time, in UTC, to the millisecond (what the API
// and the persisted format carry).
func clockNow(e *Engine) time.Time { return e.clock.Now().UTC().Truncate(time.Millisecond) }

// newRunID answers a time-ordered run identifier.
func newRunID() string {
	id, err := uuid.NewV7()
	if err != nil {
		return "run-" + uuid.NewString()
	}
	return "run-" + id.String()
}

// The engine's background work, done by Run and Tick: due timers
// (fireDueTimers) and deadline index entries (fireDueDeadlines), interrupted triggers (recoverTriggers), signal and run
// retention (expireSignals, expireRuns), and giving the leases up when the
// engine stops (releaseAll). Each is a decision through the commit pipeline,
// driven as the run's owner (drive).

// engine answers the Engine whose background work this is.

// Run does the engine's background work (timers, recovery) until ctx ends,
// and returns once the round in progress has finished, so that a caller can
// close the store after it.
func (e *Engine) Run(ctx context.Context) {
	t := time.NewTicker(e.cfg.PollInterval)
	defer t.Stop()
	defer releaseAll(e)
	for {
		if err := e.Tick(ctx); err != nil && ctx.Err() == nil {
			e.log.Warn("engine tick", slog.String("error", err.Error()))
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-e.runQueueKick: // a run gave its slots back: a queued run may start now, not a tick later
			if _, err := dequeueAndStart(ctx, e); err != nil && ctx.Err() == nil {
				e.log.Warn("run queue", slog.String("error", err.Error()))
			}
			continue
		}
	}
}

// Tick does one round of background work: fires due timers, finishes
// interrupted triggers, removes expired signal records and expired runs,
// writes the records of the workers polling this engine (pollers.go) and
// deletes idle throttle buckets (flowclaim.go). Tests
// call it after advancing a fake clock.
func (e *Engine) Tick(ctx context.Context) error {
	_, queueErr := dequeueAndStart(ctx, e)
	return errors.Join(fireDueTimers(ctx, e), fireDueDeadlines(ctx, e), recoverTriggers(ctx, e), expireSignals(ctx, e), expireRuns(ctx, e),
		publishPollers(ctx, e), sweepIdleBuckets(ctx, e), queueErr)
}

// Counters are what this engine counted since it started, for metrics.
type Counters struct {
	// StaleCommitsRejected counts decisions this engine made as a run's
	// owner that the fencing epoch refused, because another engine had
	// taken over (drive.go).
	StaleCommitsRejected int64
	// RunsRemoved counts the runs whose removal (by retention or DeleteRun)
	// this engine finished (retention.go).
	RunsRemoved int64
	// FlowHeldConcurrency and FlowHeldThrottle count the claims this engine
	// found held back by a concurrency key at its limit or a throttle
	// without a token (flowclaim.go).
	FlowHeldConcurrency, FlowHeldThrottle int64
}

// Counters answers this engine's counters; unlike Stats it reads no store.
func (e *Engine) Counters() Counters {
	return Counters{StaleCommitsRejected: e.own.stale.Load(), RunsRemoved: e.own.removed.Load(),
		FlowHeldConcurrency: e.flow.heldFull.Load(), FlowHeldThrottle: e.flow.heldThrottle.Load()}
}

// StatsCap bounds each count Stats makes: a count at the cap means "at least".
const StatsCap = store.MaxScanLimit

// Stats is a cheap picture of the store's work, for metrics.
type Stats struct {
	// RunsByStatus counts runs of every tenant by their current status.
	RunsByStatus map[runstate.RunStatus]int
	// ReadyTasks counts tasks waiting in a queue (due or not yet due).
	ReadyTasks int
	// QueuedRuns counts runs waiting for a concurrency slot.
	QueuedRuns int
	// Queues describes every queue of every tenant that has a poller or a
	// ready task (at most 1,000; ListWorkers says what each holds).
	Queues []*QueueInfo
	// FlowKeys are the step concurrency keys by slots held and the
	// throttle keys by backlog, the top 20 of each kind and the rest as one
	// series named "other" per tenant (flowview.go); then the fairness
	// keys by ready tasks, likewise (kind "fairness", scope
	// "queue:{queue}", fair.go).
	FlowKeys []FlowKeyStat
	// RunKeys are the run concurrency keys by runs started and queued, the
	// top 20 and the rest as one series named "other" per tenant
	// (runconcurrency.go).
	RunKeys []FlowKeyStat
}

// AllRunStatuses lists every run status, in lifecycle order.
var AllRunStatuses = []runstate.RunStatus{runstate.RunPending, runstate.RunApproved, runstate.RunQueued, runstate.RunRunning, runstate.RunBlocked, runstate.RunPaused,
	runstate.RunCompensating, runstate.RunCompleted, runstate.RunFailed, runstate.RunCancelled}

// Stats counts runs by status and the queues' depth, each up to StatsCap,
// from index keys alone (no checkpoint is read), and describes each queue
// with its pollers.
func (e *Engine) Stats(ctx context.Context) (*Stats, error) {
	out := &Stats{RunsByStatus: map[runstate.RunStatus]int{}}
	for _, s := range AllRunStatuses {
		n, err := count(ctx, e.store, keyspace.RunStatus.KeyPrefix(string(s)))
		if err != nil {
			return nil, err
		}
		out.RunsByStatus[s] = n
	}
	var err error
	if out.ReadyTasks, err = count(ctx, e.store, keyspace.Ready.KeyPrefix()); err != nil {
		return nil, err
	}
	if out.QueuedRuns, err = count(ctx, e.store, admission.QueuePrefix()); err != nil {
		return nil, err
	}
	if out.Queues, err = listQueues(ctx, e, ""); err != nil {
		return nil, err
	}
	if out.RunKeys, err = runKeyStats(ctx, e); err != nil {
		return nil, err
	}
	if out.FlowKeys, err = flowStats(ctx, e); err != nil {
		return nil, err
	}
	fair, err := fairStats(ctx, e)
	if err != nil {
		return nil, err
	}
	out.FlowKeys = append(out.FlowKeys, fair...)
	return out, nil
}

// count counts the keys under a prefix, up to StatsCap.
func count(ctx context.Context, st store.Store, prefix []byte) (int, error) {
	res, err := st.Scan(ctx, &store.ScanParams{Prefix: prefix, Limit: StatsCap})
	if err != nil {
		return 0, err
	}
	return len(res.Items), nil
}
