package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/weft-dev/weft/engine"
	"github.com/weft-dev/weft/schedule"
	"github.com/weft-dev/weft/store"
)

// meterName is the instrumentation scope of weftd's own instruments: the
// engine's counts and alerts.
const meterName = "github.com/weft-dev/weft/cmd/weftd"

// statsTimeout bounds the engine's counts at scrape time.
const statsTimeout = 2 * time.Second

// observeEngine exposes the engine's cheap counts on /metrics, read at scrape
// time: runs by status and the queues' depth (from index keys), each queue's
// backlog, oldest ready task and pollers, and the decisions the run's fencing
// epoch refused. When the counts cannot be read, that scrape serves no
// weft_runs, weft_queue_depth or per-queue series rather than zeros, and a
// warning is logged.
func observeEngine(meter metric.Meter, eng *engine.Engine, logger *slog.Logger) error {
	runs, err1 := meter.Int64ObservableGauge("weft.runs", metric.WithUnit("{run}"),
		metric.WithDescription("Runs of every tenant by current status (counted up to 10,000 each)."))
	queue, err2 := meter.Int64ObservableGauge("weft.queue.depth",
		metric.WithDescription("Work waiting: ready tasks in every queue, and runs waiting for a concurrency slot (up to 10,000 each)."))
	stale, err3 := meter.Int64ObservableCounter("weft.stale_owner_commits.rejected", metric.WithUnit("{decision}"),
		metric.WithDescription("Decisions this weftd made as a run's owner that the run's fencing epoch refused (another weftd had taken the run over)."))
	removed, err4 := meter.Int64ObservableCounter("weft.runs.removed", metric.WithUnit("{run}"),
		metric.WithDescription("Finished runs this weftd removed with all their records: expired (retention) or deleted (DeleteRun)."))
	perQueue, err5 := newQueueGauges(meter)
	flow, err6 := newFlowGauges(meter)
	runKeys, err7 := newRunKeyGauges(meter)
	if err := errors.Join(err1, err2, err3, err4, err5, err6, err7); err != nil {
		return fmt.Errorf("engine metrics: %w", err)
	}
	_, err := meter.RegisterCallback(func(ctx context.Context, o metric.Observer) error {
		counted := eng.Counters()
		o.ObserveInt64(stale, counted.StaleCommitsRejected)
		o.ObserveInt64(removed, counted.RunsRemoved)
		flow.observeHeld(o, counted)
		ctx, cancel := context.WithTimeout(ctx, statsTimeout)
		defer cancel()
		stats, err := eng.Stats(ctx)
		if err != nil {
			logger.Warn("engine counts unavailable: weft_runs, weft_queue_depth and the per-queue series left out of this scrape",
				slog.String("error", err.Error()))
			return nil
		}
		for _, s := range engine.AllRunStatuses {
			o.ObserveInt64(runs, int64(stats.RunsByStatus[s]), metric.WithAttributes(attribute.String("status", string(s))))
		}
		o.ObserveInt64(queue, int64(stats.ReadyTasks), metric.WithAttributes(attribute.String("kind", "tasks")))
		o.ObserveInt64(queue, int64(stats.QueuedRuns), metric.WithAttributes(attribute.String("kind", "runs")))
		perQueue.observe(o, stats.Queues)
		flow.observe(o, stats.FlowKeys)
		runKeys.observe(o, stats.RunKeys)
		return nil
	}, runs, queue, stale, removed, perQueue.backlog, perQueue.oldestAge, perQueue.pollers, flow.inUse, flow.backlog, flow.held, flow.fair,
		runKeys.inUse, runKeys.waiting)
	if err != nil {
		return fmt.Errorf("engine metrics: %w", err)
	}
	return nil
}

// observeStore exposes a group-committing store's counts on /metrics:
// weft_store_commit_groups_total, weft_store_commit_batches_total (their
// ratio is the mean group size) and weft_store_commit_retries_total (group
// transactions restarted after a conflict: other weftd processes writing the
// same keys, or PostgreSQL's page-level SERIALIZABLE). A store that does not
// commit in groups serves none of them. A store whose reads retry (SQL) also
// serves weft_store_read_retries_total.
func observeStore(meter metric.Meter, st store.Store) error {
	if err := observeReadRetries(meter, st); err != nil {
		return err
	}
	gc, ok := st.(store.GroupCommitter)
	if !ok {
		return nil
	}
	groups, err1 := meter.Int64ObservableCounter("weft.store.commit.groups", metric.WithUnit("{group}"),
		metric.WithDescription("Group commits: transactions (SQL) or synced writes (Pebble), each carrying one or more Commit calls."))
	batches, err2 := meter.Int64ObservableCounter("weft.store.commit.batches", metric.WithUnit("{batch}"),
		metric.WithDescription("Commit calls the group commits carried."))
	retries, err3 := meter.Int64ObservableCounter("weft.store.commit.retries", metric.WithUnit("{group}"),
		metric.WithDescription("Group transactions restarted after a serialization failure or deadlock."))
	if err := errors.Join(err1, err2, err3); err != nil {
		return fmt.Errorf("store metrics: %w", err)
	}
	_, err := meter.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		s := gc.GroupStats()
		o.ObserveInt64(groups, int64(s.Groups))
		o.ObserveInt64(batches, int64(s.Batches))
		o.ObserveInt64(retries, int64(s.Retries))
		return nil
	}, groups, batches, retries)
	if err != nil {
		return fmt.Errorf("store metrics: %w", err)
	}
	return nil
}

// readRetrier is a store whose reads run again after a serialization
// failure (sqlstore.Store).
type readRetrier interface{ ReadRetries() uint64 }

// observeReadRetries serves weft_store_read_retries_total for a store that
// retries its reads.
func observeReadRetries(meter metric.Meter, st store.Store) error {
	rr, ok := st.(readRetrier)
	if !ok {
		return nil
	}
	retries, err := meter.Int64ObservableCounter("weft.store.read.retries", metric.WithUnit("{read}"),
		metric.WithDescription("Reads run again after a serialization failure or a connection that failed before the read was sent."))
	if err == nil {
		_, err = meter.RegisterCallback(func(_ context.Context, o metric.Observer) error {
			o.ObserveInt64(retries, int64(rr.ReadRetries()))
			return nil
		}, retries)
	}
	if err != nil {
		return fmt.Errorf("store metrics: %w", err)
	}
	return nil
}

// observeSchedules exposes each schedule's metrics on /metrics, labelled by
// tenant and schedule and read at scrape time (docs/operations.md#schedule-metrics):
// weft_schedule_fires_total, _skipped_total, _missed_total and _failed_total
// count what this weftd recorded (every decision is recorded by one process,
// so sum them over the cluster), and weft_schedule_fire_lag_seconds is how
// late the schedule's latest fire was submitted after its nominal time (the
// record's, the same on every weftd).
func observeSchedules(meter metric.Meter, sch *schedule.Scheduler) error {
	counter := func(name, help string) (metric.Int64ObservableCounter, error) {
		return meter.Int64ObservableCounter(name, metric.WithUnit("{fire}"), metric.WithDescription(help))
	}
	fires, err1 := counter("weft.schedule.fires", "Schedule fires that started (or found) their run, recorded by this weftd, by tenant and schedule.")
	skipped, err2 := counter("weft.schedule.skipped", "Schedule fires the overlap policy skipped, recorded by this weftd, by tenant and schedule.")
	missed, err3 := counter("weft.schedule.missed", "Nominal times older than the catch-up window when noticed, recorded by this weftd, by tenant and schedule.")
	failed, err4 := counter("weft.schedule.failed", "Schedule fires whose submission was refused for good, recorded by this weftd, by tenant and schedule.")
	lag, err5 := meter.Float64ObservableGauge("weft.schedule.fire.lag", metric.WithUnit("s"),
		metric.WithDescription("How late the schedule's latest fire its spec decided was submitted after its nominal time, by tenant and schedule."))
	if err := errors.Join(err1, err2, err3, err4, err5); err != nil {
		return fmt.Errorf("schedule metrics: %w", err)
	}
	_, err := meter.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		for _, s := range sch.Stats() {
			attrs := metric.WithAttributes(attribute.String("tenant", s.TenantID), attribute.String("schedule", s.ScheduleID))
			o.ObserveInt64(fires, int64(s.Counts.Fires), attrs)
			o.ObserveInt64(skipped, int64(s.Counts.Skipped), attrs)
			o.ObserveInt64(missed, int64(s.Counts.Missed), attrs)
			o.ObserveInt64(failed, int64(s.Counts.Failed), attrs)
			if s.HasLag {
				o.ObserveFloat64(lag, s.LastFireLag.Seconds(), attrs)
			}
		}
		return nil
	}, fires, skipped, missed, failed, lag)
	if err != nil {
		return fmt.Errorf("schedule metrics: %w", err)
	}
	return nil
}

// queueGauges are the per-queue series, labelled by tenant and queue (at
// most 1,000 queues, the engine's listing bound): backlog, the oldest ready
// task's age and the pollers.
type queueGauges struct {
	backlog, pollers metric.Int64ObservableGauge
	oldestAge        metric.Float64ObservableGauge
}

func newQueueGauges(meter metric.Meter) (*queueGauges, error) {
	backlog, err1 := meter.Int64ObservableGauge("weft.queue.backlog", metric.WithUnit("{task}"),
		metric.WithDescription("Tasks ready now and not yet claimed, by tenant and queue (counted up to 10,000 over all queues, at least one each)."))
	oldest, err2 := meter.Float64ObservableGauge("weft.queue.oldest_ready_age", metric.WithUnit("s"),
		metric.WithDescription("How long the oldest ready task of the queue has waited for a worker, by tenant and queue; 0 when none waits."))
	pollers, err3 := meter.Int64ObservableGauge("weft.queue.pollers", metric.WithUnit("{worker}"),
		metric.WithDescription("Workers polling the queue (seen by any weftd within the poller TTL), by tenant and queue."))
	return &queueGauges{backlog: backlog, pollers: pollers, oldestAge: oldest}, errors.Join(err1, err2, err3)
}

// observe records every queue's series.
func (g *queueGauges) observe(o metric.Observer, queues []*engine.QueueInfo) {
	for _, q := range queues {
		attrs := metric.WithAttributes(attribute.String("tenant", q.TenantID), attribute.String("queue", q.Queue))
		o.ObserveInt64(g.backlog, int64(q.Backlog), attrs)
		o.ObserveFloat64(g.oldestAge, q.OldestReadyAge.Seconds(), attrs)
		o.ObserveInt64(g.pollers, int64(len(q.Pollers)), attrs)
	}
}

// flowGauges are the flow-control series (docs/operations.md#flow-metrics):
// per key, labelled by tenant, scope and key — the top 20 keys of each kind
// and one series named "other" per tenant for the rest, so the series stay
// bounded whatever the keys — a concurrency key's slots held and a throttle
// key's backlog; and this weftd's claims flow control held back, by kind.
type flowGauges struct {
	inUse   metric.Int64ObservableGauge
	backlog metric.Float64ObservableGauge
	held    metric.Int64ObservableCounter
	// fair is a fairness key's ready tasks (docs/semantics.md#fairness).
	fair metric.Int64ObservableGauge
}

func newFlowGauges(meter metric.Meter) (*flowGauges, error) {
	inUse, err1 := meter.Int64ObservableGauge("weft.flow.slots_in_use", metric.WithUnit("{task}"),
		metric.WithDescription("Tasks in flight holding a step concurrency key's slots, by tenant, scope and key (the top 20 keys; the rest summed as key other)."))
	backlog, err2 := meter.Float64ObservableGauge("weft.flow.throttle.backlog", metric.WithUnit("s"),
		metric.WithDescription("How far a step throttle key's bucket runs ahead of now (a task arriving now waits this long beyond the burst), by tenant, scope and key (the top 20; the rest's largest as key other)."))
	held, err3 := meter.Int64ObservableCounter("weft.flow.claims.held", metric.WithUnit("{claim}"),
		metric.WithDescription("Claims this weftd found held back by flow control, by kind (concurrency: the key at its limit; throttle: no token)."))
	fair, err4 := meter.Int64ObservableGauge("weft.fairness.backlog", metric.WithUnit("{task}"),
		metric.WithDescription("Ready tasks of a fairness key, by tenant, scope (queue:{queue}) and key (the top 20 keys; the rest summed as key other)."))
	return &flowGauges{inUse: inUse, backlog: backlog, held: held, fair: fair}, errors.Join(err1, err2, err3, err4)
}

// observe records every key's series.
func (g *flowGauges) observe(o metric.Observer, keys []engine.FlowKeyStat) {
	for _, k := range keys {
		attrs := metric.WithAttributes(attribute.String("tenant", k.TenantID), attribute.String("scope", k.Scope), attribute.String("key", k.Key))
		switch k.Kind {
		case "concurrency":
			o.ObserveInt64(g.inUse, int64(k.InUse), attrs)
		case "fairness":
			o.ObserveInt64(g.fair, int64(k.Ready), attrs)
		default:
			o.ObserveFloat64(g.backlog, k.Ahead.Seconds(), attrs)
		}
	}
}

// runKeyGauges are the run concurrency series (docs/operations.md#flow-metrics):
// per key, labelled by tenant, plan and key — the top 20 keys by runs
// started and waiting, and one series named "other" per tenant for the
// rest — the runs holding a slot and the runs QUEUED.
type runKeyGauges struct {
	inUse, waiting metric.Int64ObservableGauge
}

func newRunKeyGauges(meter metric.Meter) (*runKeyGauges, error) {
	inUse, err1 := meter.Int64ObservableGauge("weft.run_concurrency.in_use", metric.WithUnit("{run}"),
		metric.WithDescription("Runs started holding a slot of a run concurrency key, by tenant, plan and key (the top 20 keys; the rest summed as key other)."))
	waiting, err2 := meter.Int64ObservableGauge("weft.run_concurrency.waiting", metric.WithUnit("{run}"),
		metric.WithDescription("Runs QUEUED on a run concurrency key, by tenant, plan and key (the top 20 keys; the rest summed as key other)."))
	return &runKeyGauges{inUse: inUse, waiting: waiting}, errors.Join(err1, err2)
}

// observe records every key's series.
func (g *runKeyGauges) observe(o metric.Observer, keys []engine.FlowKeyStat) {
	for _, k := range keys {
		attrs := metric.WithAttributes(attribute.String("tenant", k.TenantID), attribute.String("plan", strings.TrimPrefix(k.Scope, "plan:")),
			attribute.String("key", k.Key))
		o.ObserveInt64(g.inUse, int64(k.InUse), attrs)
		o.ObserveInt64(g.waiting, int64(k.Waiting), attrs)
	}
}

// observeHeld records the held claims' counters.
func (g *flowGauges) observeHeld(o metric.Observer, c engine.Counters) {
	o.ObserveInt64(g.held, c.FlowHeldConcurrency, metric.WithAttributes(attribute.String("kind", "concurrency")))
	o.ObserveInt64(g.held, c.FlowHeldThrottle, metric.WithAttributes(attribute.String("kind", "throttle")))
}
