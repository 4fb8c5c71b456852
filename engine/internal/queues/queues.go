package queues

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"time"

	"github.com/weft-dev/weft/engine/internal/dispatch"
	"github.com/weft-dev/weft/engine/internal/pollers"
	"github.com/weft-dev/weft/engine/internal/record"
	"github.com/weft-dev/weft/engine/keyspace"
	"github.com/weft-dev/weft/store"
)

const (
	// maxListed bounds the queues one listing describes.
	maxListed = 1000
	// sweepEvery is how many refreshes pass between sweeps of the expired
	// records of processes that stopped.
	sweepEvery = 6
	// statsCap bounds one queue's backlog count.
	statsCap = store.MaxScanLimit
)

// Info describes one queue of one tenant.
type Info struct {
	TenantID, Queue string
	// Backlog counts the tasks ready now, up to the store's scan limit — in
	// a listing, up to the listing's budget over all its queues, and at
	// least the first of each; BacklogCapped says the count stopped short.
	Backlog       int
	BacklogCapped bool
	// OldestReady is when the oldest ready task became ready, and
	// OldestReadyAge how long it had waited when the queue was read; zero
	// when none is ready.
	OldestReady    time.Time
	OldestReadyAge time.Duration
	// Pollers are the workers polling it, by worker id.
	Pollers []pollers.Info
	// FlowKeys are the flow-control keys of its tasks, when described
	// (docs/semantics.md#flow-visibility): filled by the engine.
	FlowKeys []FlowKey
	// FairKeys are the fairness keys of its ready tasks, when described
	// (docs/semantics.md#fairness): filled by the engine. FairOther counts
	// the ready tasks read of keys beyond those listed.
	FairKeys  []FairKey
	FairOther int
}

// FairKey is one fairness key of a queue's ready tasks at one priority.
type FairKey struct {
	Priority int
	Key      string
	// Backlog counts its ready tasks (of those read); Weight is the
	// weight of its oldest.
	Backlog int
	Weight  float64
}

// FlowKey is one step concurrency key or throttle key of a queue's tasks:
// the tasks it holds back and, for a concurrency key, its slots in use and
// limit, for a throttle its rate, tokens and next release.
type FlowKey struct {
	// Kind is "concurrency" or "throttle"; Scope "tenant" or "plan:{id}".
	Kind, Scope, Key string
	// Waiting counts the queue's ready tasks with the key (up to the
	// description's scan).
	Waiting int
	// InUse and Limit: a concurrency key's slots held and its limit.
	InUse, Limit int
	// Rate, Burst and Tokens: a throttle's rate ("100/1m"), burst and the
	// tasks it would let go now; NextRelease is when it next has a token
	// (now when it has one).
	Rate          string
	Burst, Tokens int
	NextRelease   time.Time
}

// Desk answers what one process knows of queues and their pollers.
type Desk struct {
	Store   store.Store
	Pollers *dispatch.Pollers
	// Owner names this process in its poller records.
	Owner string
	// Refresh is how often a poller's record is rewritten; TTL how long a
	// poller that stopped polling, holding no task, is still listed.
	Refresh, TTL time.Duration
	// Budget bounds the ready entries one listing counts over all its queues.
	Budget int
	Now    func() time.Time
	// Sweep paces the sweep of expired poller records.
	Sweep *Pacer
}

// List describes every queue of tenant that has a poller or a ready task,
// by queue name; of every tenant when tenant is "".
func (d *Desk) List(ctx context.Context, tenant string) ([]*Info, error) {
	polling, err := d.pollersOf(ctx, tenant, "")
	if err != nil {
		return nil, err
	}
	refs, err := d.readyQueues(ctx, tenant)
	if err != nil {
		return nil, err
	}
	for q := range polling {
		refs = append(refs, q)
	}
	refs = pollers.SortRefs(refs)
	refs = refs[:min(len(refs), maxListed)]
	out := make([]*Info, 0, len(refs))
	budget := d.Budget
	for _, q := range refs {
		info, err := d.describeWith(ctx, q, polling[q], budget)
		if err != nil {
			return nil, err
		}
		budget -= info.Backlog
		out = append(out, info)
	}
	return out, nil
}

// Describe answers one queue of a tenant.
func (d *Desk) Describe(ctx context.Context, tenant, queue string) (*Info, error) {
	polling, err := d.pollersOf(ctx, tenant, queue)
	if err != nil {
		return nil, err
	}
	q := pollers.Ref{Tenant: tenant, Queue: queue}
	return d.describeWith(ctx, q, polling[q], statsCap)
}

// describeWith answers one queue whose pollers are already read, counting
// at most budget of its ready entries (at least one, to find the oldest).
func (d *Desk) describeWith(ctx context.Context, q pollers.Ref, polling []pollers.Info, budget int) (*Info, error) {
	info := &Info{TenantID: q.Tenant, Queue: q.Queue, Pollers: polling}
	if info.Pollers == nil {
		info.Pollers = []pollers.Info{}
	}
	return info, d.backlog(ctx, info, min(max(budget, 1), statsCap))
}

// backlog counts the queue's ready tasks, up to limit, and finds the oldest
// in the first entry: entries sort by when they become ready.
func (d *Desk) backlog(ctx context.Context, q *Info, limit int) error {
	now := d.Now()
	for prio, lane := range record.Lanes(q.Queue) { // every priority's lane (docs/semantics.md#priority)
		start, end := record.ReadyTaskRange(q.TenantID, lane, now)
		res, err := d.Store.Scan(ctx, &store.ScanParams{Start: start, End: end, Limit: max(limit-q.Backlog, 1)})
		if err != nil {
			return err
		}
		if q.Backlog >= limit { // counted up to limit: a later lane with any entry only says so
			q.BacklogCapped = q.BacklogCapped || len(res.Items) > 0
		} else {
			q.Backlog += len(res.Items)
			q.BacklogCapped = q.BacklogCapped || res.Next != nil
		}
		if len(res.Items) > 0 {
			if at := readyEntryTime(res.Items[0].Key); !at.IsZero() && (q.OldestReady.IsZero() || at.Before(q.OldestReady)) {
				q.OldestReady = at
			}
		}
		if err := d.fairBacklog(ctx, q, prio+1, limit, now); err != nil {
			return err
		}
	}
	if !q.OldestReady.IsZero() {
		q.OldestReadyAge = max(now.Sub(q.OldestReady), 0)
	}
	return nil
}

// fairBacklog counts the ready tasks of a priority's fair sub-lanes
// (docs/semantics.md#fairness) into q's backlog, up to limit: their
// entries sort by key first, so each is checked to be due at now.
func (d *Desk) fairBacklog(ctx context.Context, q *Info, priority, limit int, now time.Time) error {
	start, end := record.FairLanesRange(q.TenantID, q.Queue, priority)
	var after []byte
	for {
		res, err := d.Store.Scan(ctx, &store.ScanParams{Start: start, End: end, After: after, Limit: max(min(limit-q.Backlog, store.MaxScanLimit), 1)})
		if err != nil {
			return err
		}
		for _, it := range res.Items {
			at := readyEntryTime(it.Key)
			if at.IsZero() || at.After(now) {
				continue
			}
			if q.Backlog >= limit {
				q.BacklogCapped = true
				return nil
			}
			q.Backlog++
			if q.OldestReady.IsZero() || at.Before(q.OldestReady) {
				q.OldestReady = at
			}
		}
		if res.Next == nil || len(res.Items) == 0 {
			return nil
		}
		if q.Backlog >= limit {
			q.BacklogCapped = true
			return nil
		}
		after = res.Next
	}
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
func (d *Desk) readyQueues(ctx context.Context, tenant string) ([]pollers.Ref, error) {
	var out []pollers.Ref
	prefix := keyspace.Ready.KeyPrefix()
	if tenant != "" {
		prefix = keyspace.Ready.KeyPrefix(tenant)
	}
	start, end := prefix, store.PrefixEnd(prefix)
	for len(out) < maxListed {
		res, err := d.Store.Scan(ctx, &store.ScanParams{Start: start, End: end, Limit: 1})
		if err != nil || len(res.Items) == 0 {
			return out, err
		}
		parts, err := store.SplitKey(res.Items[0].Key)
		if err != nil || len(parts) < 3 {
			return out, nil // not ours to read: stop here
		}
		queue := record.QueueOfLane(parts[2])
		if ref := (pollers.Ref{Tenant: parts[1], Queue: queue}); !slices.Contains(out, ref) {
			out = append(out, ref) // a priority's lane is its queue's
		}
		start = store.PrefixEnd(record.QueuePrefix(parts[1], parts[2]))
		if queue != parts[2] { // a lane "{queue}~…": past every other lane of the queue at once
			start = store.PrefixEnd(append(keyspace.Ready.KeyPrefix(parts[1]), store.EscapeComponent(queue+"~")...))
		}
	}
	return out, nil
}

// pollersOf answers the pollers of a tenant's queue, by queue: of every
// queue when queue is "", of every tenant when tenant is also "". They are
// the unexpired records of the other processes and this one's own from
// memory, merged per worker.
func (d *Desk) pollersOf(ctx context.Context, tenant, queue string) (map[pollers.Ref][]pollers.Info, error) {
	now := d.Now()
	recs, err := pollers.Live(ctx, d.Store, tenant, queue, d.Owner, record.Version, now, statsCap)
	if err != nil {
		return nil, err
	}
	for _, p := range d.Pollers.Snapshot() {
		if (tenant == "" || p.Tenant == tenant) && (queue == "" || p.Queue == queue) {
			recs = append(recs, d.recordOf(p, now))
		}
	}
	return pollers.Merge(recs), nil
}

// recordOf answers this process's record of a poller at now.
func (d *Desk) recordOf(p dispatch.Poller, now time.Time) pollers.Record {
	return pollers.Record{FormatVersion: record.Version, TenantID: p.Tenant, Queue: p.Queue, WorkerID: p.Worker,
		Process: d.Owner, LastPoll: p.LastPoll.UTC(), Polling: p.Polling > 0, InFlight: len(p.Tokens),
		Names: p.Names, ExpiresAt: now.Add(3 * d.Refresh)}
}

// Publish writes the records of this process's pollers that are new or due
// for refresh, with their in-flight tasks checked against the store
// (settled answers the tokens no longer claimed), and deletes the records
// of pollers gone quiet. Every few refreshes it also sweeps the expired
// records of processes that stopped. Cost: the pollers due, plus their
// in-flight tasks; the sweep, every poller record.
func (d *Desk) Publish(ctx context.Context, settled func(context.Context, []string) ([]string, error)) error {
	now := d.Now()
	var ops []store.Op
	var done []func()
	for _, p := range d.Pollers.Due(now.Add(-d.Refresh)) {
		key := pollers.Key(p.Tenant, p.Queue, p.Worker, d.Owner)
		if d.Pollers.Forget(p.PollerKey, now.Add(-d.TTL)) {
			ops = append(ops, store.Delete(key))
			continue
		}
		gone, err := settled(ctx, p.Tokens)
		if err != nil {
			return err
		}
		p.Tokens = slices.DeleteFunc(p.Tokens, func(t string) bool { return slices.Contains(gone, t) })
		value, err := json.Marshal(d.recordOf(p, now))
		if err != nil {
			return err
		}
		ops = append(ops, store.Put(key, value))
		done = append(done, func() { d.Pollers.Settled(p.PollerKey, gone, now) })
	}
	if len(ops) > 0 {
		if _, err := d.Store.Commit(ctx, &store.Batch{Ops: ops}); err != nil {
			return err
		}
	}
	for _, s := range done {
		s()
	}
	return d.sweep(ctx, now)
}

// sweep deletes the expired poller records of every process, at most once
// every sweepEvery refreshes. A record refreshed meanwhile is kept: each
// delete is conditioned on the version read, where the store can.
func (d *Desk) sweep(ctx context.Context, now time.Time) error {
	if !d.Sweep.due(now, sweepEvery*d.Refresh) {
		return nil
	}
	return pollers.Sweep(ctx, d.Store, record.Version, now)
}

// Pacer answers due at most once per interval.
type Pacer struct {
	mu   sync.Mutex
	last time.Time
}

// due answers whether interval has passed since it last answered true.
func (p *Pacer) due(now time.Time, interval time.Duration) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.last.IsZero() && now.Sub(p.last) < interval {
		return false
	}
	p.last = now
	return true
}
