package engine

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/engine/internal/dispatch"
	"github.com/weft-dev/weft/engine/internal/pollers"
	"github.com/weft-dev/weft/engine/internal/record"
	"github.com/weft-dev/weft/store"
)

// Who polls (docs/semantics.md#pollers). Each engine remembers in memory the
// workers that poll it (dispatch.Pollers) and writes one small record per
// poller and process to the store, refreshed every PollerRefresh and
// expiring three refreshes later, so that any engine of a cluster lists
// every poller at the cost of the pollers alone. A poller's in-flight tasks
// are the tasks this engine handed it that are still claimed with the
// token it received: a report answered here forgets one at once, one
// answered elsewhere is found out at the next refresh.

// Defaults of the poller records.
const (
	// DefaultPollerRefresh is how often a poller's record is rewritten.
	DefaultPollerRefresh = 10 * time.Second
	// DefaultPollerTTL is how long a poller that stopped polling, holding no
	// task, is still listed.
	DefaultPollerTTL = time.Minute
	// maxListedQueues bounds the queues one listing describes.
	maxListedQueues = 1000
	// pollerSweepEvery is how many refreshes pass between sweeps of the
	// expired records of processes that stopped.
	pollerSweepEvery = 6
)

// listBacklogBudget bounds the ready entries one listing counts over all
// its queues (a variable for the tests' sake).
var listBacklogBudget = StatsCap

// PollerInfo is one worker polling one queue (package pollers).
type PollerInfo = pollers.Info

// QueueInfo describes one queue of one tenant.
type QueueInfo struct {
	TenantID, Queue string
	// Backlog counts the tasks ready now, up to StatsCap — in a listing, up
	// to StatsCap over all its queues, and at least the first of each;
	// BacklogCapped says the count stopped short.
	Backlog       int
	BacklogCapped bool
	// OldestReady is when the oldest ready task became ready, and
	// OldestReadyAge how long it had waited when the queue was read; zero
	// when none is ready.
	OldestReady    time.Time
	OldestReadyAge time.Duration
	// Pollers are the workers polling it, by worker id.
	Pollers []PollerInfo
}

// ListWorkersParams asks for a tenant's queues.
type ListWorkersParams struct {
	TenantID string
}

// DescribeQueueParams names one queue of a tenant.
type DescribeQueueParams struct {
	TenantID string
	// Queue; empty is the default queue.
	Queue string
}

// ListWorkers answers every queue of the tenant that has a poller or a
// ready task, each with its pollers, backlog and oldest ready task, by
// queue name (at most 1,000 queues; their backlogs counted up to StatsCap
// in all, so a listing reads a bounded number of entries).
func (e *Engine) ListWorkers(ctx context.Context, p ListWorkersParams) ([]*QueueInfo, error) {
	if p.TenantID == "" {
		return nil, errTenantRequired()
	}
	return (*queues)(e).list(ctx, p.TenantID)
}

// DescribeQueue answers one queue of the tenant: its pollers, backlog and
// oldest ready task. A queue nobody polls and nothing waits in is described
// empty.
func (e *Engine) DescribeQueue(ctx context.Context, p DescribeQueueParams) (*QueueInfo, error) {
	if p.TenantID == "" {
		return nil, errTenantRequired()
	}
	if p.Queue == "" {
		p.Queue = definition.DefaultQueue
	}
	return (*queues)(e).describe(ctx, p.TenantID, p.Queue)
}

// errTenantRequired refuses a listing without a tenant: it would list every
// tenant's queues.
func errTenantRequired() error {
	return invalid(violation("tenant_id", "tenant_id.required", "tenant_id is required"))
}

// queues answers what the engine knows of queues and their pollers.
type queues Engine

// engine answers the Engine whose queues these are.
func (e *queues) engine() *Engine { return (*Engine)(e) }

// list describes every queue of tenant; of every tenant when tenant is "".
func (e *queues) list(ctx context.Context, tenant string) ([]*QueueInfo, error) {
	polling, err := e.pollersOf(ctx, tenant, "")
	if err != nil {
		return nil, err
	}
	refs, err := e.readyQueues(ctx, tenant)
	if err != nil {
		return nil, err
	}
	for q := range polling {
		refs = append(refs, q)
	}
	refs = pollers.SortRefs(refs)
	refs = refs[:min(len(refs), maxListedQueues)]
	out := make([]*QueueInfo, 0, len(refs))
	budget := listBacklogBudget
	for _, q := range refs {
		info, err := e.describeWith(ctx, q, polling[q], budget)
		if err != nil {
			return nil, err
		}
		budget -= info.Backlog
		out = append(out, info)
	}
	return out, nil
}

// describe answers one queue of a tenant.
func (e *queues) describe(ctx context.Context, tenant, queue string) (*QueueInfo, error) {
	polling, err := e.pollersOf(ctx, tenant, queue)
	if err != nil {
		return nil, err
	}
	q := pollers.Ref{Tenant: tenant, Queue: queue}
	return e.describeWith(ctx, q, polling[q], StatsCap)
}

// describeWith answers one queue whose pollers are already read, counting
// at most budget of its ready entries (at least one, to find the oldest).
func (e *queues) describeWith(ctx context.Context, q pollers.Ref, polling []PollerInfo, budget int) (*QueueInfo, error) {
	info := &QueueInfo{TenantID: q.Tenant, Queue: q.Queue, Pollers: polling}
	if info.Pollers == nil {
		info.Pollers = []PollerInfo{}
	}
	return info, e.backlog(ctx, info, min(max(budget, 1), StatsCap))
}

// backlog counts the queue's ready tasks, up to limit, and finds the oldest
// in the first entry: entries sort by when they become ready.
func (e *queues) backlog(ctx context.Context, q *QueueInfo, limit int) error {
	now := e.engine().now()
	start, end := record.ReadyTaskRange(q.TenantID, q.Queue, now)
	res, err := e.store.Scan(ctx, &store.ScanParams{Start: start, End: end, Limit: limit})
	if err != nil {
		return err
	}
	q.Backlog, q.BacklogCapped = len(res.Items), res.Next != nil
	if len(res.Items) > 0 {
		q.OldestReady = readyEntryTime(res.Items[0].Key)
		if !q.OldestReady.IsZero() {
			q.OldestReadyAge = max(now.Sub(q.OldestReady), 0)
		}
	}
	return nil
}

// readyEntryTime answers when a ready entry became ready (its not_before);
// zero for a key it cannot read.
func readyEntryTime(key []byte) time.Time {
	parts, err := store.SplitKey(key)
	if err != nil || len(parts) < 4 {
		return time.Time{}
	}
	t, err := store.ParseTime(parts[3])
	if err != nil {
		return time.Time{}
	}
	return t.UTC()
}

// readyQueues answers the queues of tenant (of every tenant when tenant is
// "") that hold ready entries, skipping from one queue to the next with one
// bounded read each: O(queues), never a scan of the entries.
func (e *queues) readyQueues(ctx context.Context, tenant string) ([]pollers.Ref, error) {
	var out []pollers.Ref
	prefix := store.KeyPrefix("op")
	if tenant != "" {
		prefix = store.KeyPrefix("op", tenant)
	}
	start, end := prefix, store.PrefixEnd(prefix)
	for len(out) < maxListedQueues {
		res, err := e.store.Scan(ctx, &store.ScanParams{Start: start, End: end, Limit: 1})
		if err != nil || len(res.Items) == 0 {
			return out, err
		}
		parts, err := store.SplitKey(res.Items[0].Key)
		if err != nil || len(parts) < 3 {
			return out, nil // not ours to read: stop here
		}
		out = append(out, pollers.Ref{Tenant: parts[1], Queue: parts[2]})
		start = store.PrefixEnd(record.QueuePrefix(parts[1], parts[2]))
	}
	return out, nil
}

// pollersOf answers the pollers of a tenant's queue, by queue: of every
// queue when queue is "", of every tenant when tenant is also "". They are
// the unexpired records of the other processes and this one's own from
// memory, merged per worker.
func (e *queues) pollersOf(ctx context.Context, tenant, queue string) (map[pollers.Ref][]PollerInfo, error) {
	now := e.engine().now()
	recs, err := pollers.Live(ctx, e.store, tenant, queue, e.cfg.Owner, record.Version, now, StatsCap)
	if err != nil {
		return nil, err
	}
	for _, p := range e.dispatch.Pollers.Snapshot() {
		if (tenant == "" || p.Tenant == tenant) && (queue == "" || p.Queue == queue) {
			recs = append(recs, e.recordOf(p, now))
		}
	}
	return pollers.Merge(recs), nil
}

// recordOf answers this process's record of a poller at now.
func (e *queues) recordOf(p dispatch.Poller, now time.Time) pollers.Record {
	return pollers.Record{FormatVersion: record.Version, TenantID: p.Tenant, Queue: p.Queue, WorkerID: p.Worker,
		Process: e.cfg.Owner, LastPoll: p.LastPoll.UTC(), Polling: p.Polling > 0, InFlight: len(p.Tokens),
		Names: p.Names, ExpiresAt: now.Add(3 * e.cfg.PollerRefresh)}
}

// polled records a poll of p beginning now; the answer records its end and
// the tasks it answered.
func (e *queues) polled(p PollParams) func(tasks []*Task) {
	key := dispatch.PollerKey{Tenant: p.TenantID, Queue: p.Queue, Worker: p.WorkerID}
	names := make([]string, 0, len(p.Activities)+len(p.Compensations)+len(p.Verifiable))
	for n := range p.taskNames() {
		names = append(names, n)
	}
	end := e.dispatch.Pollers.Begin(key, names, e.engine().now())
	return func(tasks []*Task) {
		e.handed(p, tasks)
		end(e.engine().now())
	}
}

// handed records the tasks handed to a poller, in flight until reported.
func (e *queues) handed(p PollParams, tasks []*Task) {
	tokens := make([]string, 0, len(tasks))
	for _, t := range tasks {
		tokens = append(tokens, t.Token)
	}
	e.dispatch.Pollers.Handed(dispatch.PollerKey{Tenant: p.TenantID, Queue: p.Queue, Worker: p.WorkerID}, tokens)
}

// publishPollers writes the records of this process's pollers that are new
// or due for refresh, with their in-flight tasks checked against the store,
// and deletes the records of pollers gone quiet. Every few refreshes it
// also sweeps the expired records of processes that stopped. Cost: the
// pollers due, plus their in-flight tasks; the sweep, every poller record.
func (e *background) publishPollers(ctx context.Context) error {
	now := e.engine().now()
	var ops []store.Op
	var settled []func()
	for _, p := range e.dispatch.Pollers.Due(now.Add(-e.cfg.PollerRefresh)) {
		key := pollers.Key(p.Tenant, p.Queue, p.Worker, e.cfg.Owner)
		if e.dispatch.Pollers.Forget(p.PollerKey, now.Add(-e.cfg.PollerTTL)) {
			ops = append(ops, store.Delete(key))
			continue
		}
		gone, err := e.settledTokens(ctx, p.Tokens)
		if err != nil {
			return err
		}
		p.Tokens = slices.DeleteFunc(p.Tokens, func(t string) bool { return slices.Contains(gone, t) })
		value, err := json.Marshal((*queues)(e).recordOf(p, now))
		if err != nil {
			return err
		}
		ops = append(ops, store.Put(key, value))
		settled = append(settled, func() { e.dispatch.Pollers.Settled(p.PollerKey, gone, now) })
	}
	if len(ops) > 0 {
		if _, err := e.store.Commit(ctx, &store.Batch{Ops: ops}); err != nil {
			return err
		}
	}
	for _, s := range settled {
		s()
	}
	return e.sweepPollers(ctx, now)
}

// settledTokens answers the tokens whose tasks are no longer claimed with
// them: reported (perhaps to another process), timed out, given back.
func (e *background) settledTokens(ctx context.Context, tokens []string) ([]string, error) {
	var gone []string
	for _, token := range tokens {
		taskID, err := parseToken(token)
		if err != nil {
			gone = append(gone, token)
			continue
		}
		t, _, err := e.records.loadTask(ctx, taskID)
		switch {
		case errors.Is(err, store.ErrNotFound):
			gone = append(gone, token)
		case err != nil:
			return nil, err
		case t.State != record.TaskClaimed || t.Token != token:
			gone = append(gone, token)
		}
	}
	return gone, nil
}

// sweepPollers deletes the expired poller records of every process, at most
// once every pollerSweepEvery refreshes. A record refreshed meanwhile is
// kept: each delete is conditioned on the version read, where the store can.
func (e *background) sweepPollers(ctx context.Context, now time.Time) error {
	if !e.pollerSweep.due(now, pollerSweepEvery*e.cfg.PollerRefresh) {
		return nil
	}
	return pollers.Sweep(ctx, e.store, record.Version, now)
}

// pacer answers due at most once per interval.
type pacer struct {
	mu   sync.Mutex
	last time.Time
}

// due answers whether interval has passed since it last answered true.
func (p *pacer) due(now time.Time, interval time.Duration) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.last.IsZero() && now.Sub(p.last) < interval {
		return false
	}
	p.last = now
	return true
}

// PollerRecordsPrefix begins every poller record (wk:): a weftd's record of
// a worker that polls it, which belongs to no run.
func PollerRecordsPrefix() []byte { return pollers.Prefix() }
