package engine

import (
	"context"
	"errors"
	"time"

	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/engine/internal/dispatch"
	"github.com/weft-dev/weft/engine/internal/fault"
	"github.com/weft-dev/weft/engine/internal/pollers"
	"github.com/weft-dev/weft/engine/internal/queues"
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
)

// listBacklogBudget bounds the ready entries one listing counts over all
// its queues (a variable for the tests' sake).
var listBacklogBudget = StatsCap

// PollerInfo is one worker polling one queue (package pollers).
type PollerInfo = pollers.Info

// QueueInfo describes one queue of one tenant (package queues): its
// backlog, up to StatsCap (in a listing, up to StatsCap over all its
// queues), its oldest ready task and its pollers.
type QueueInfo = queues.Info

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
	return listQueues(ctx, e, p.TenantID)
}

// DescribeQueue answers one queue of the tenant: its pollers, backlog,
// oldest ready task and the flow-control keys of its tasks
// (docs/semantics.md#flow-visibility). A queue nobody polls and nothing waits in is described
// empty.
func (e *Engine) DescribeQueue(ctx context.Context, p DescribeQueueParams) (*QueueInfo, error) {
	if p.TenantID == "" {
		return nil, errTenantRequired()
	}
	if p.Queue == "" {
		p.Queue = definition.DefaultQueue
	}
	q, err := describeQueue(ctx, e, p.TenantID, p.Queue)
	if err != nil {
		return nil, err
	}
	if err := describeFlow(ctx, e, q); err != nil {
		return nil, err
	}
	return q, describeFair(ctx, e, q)
}

// errTenantRequired refuses a listing without a tenant: it would list every
// tenant's queues.
func errTenantRequired() error {
	return fault.Invalid(fault.Violation("tenant_id", "tenant_id.required", "tenant_id is required"))
}

// desk answers the queues' desk over this engine's store and pollers.
func queueDesk(e *Engine) *queues.Desk {
	return &queues.Desk{Store: e.store, Pollers: &e.dispatch.Pollers, Owner: e.cfg.Owner, Refresh: e.cfg.PollerRefresh,
		TTL: e.cfg.PollerTTL, Budget: listBacklogBudget, Now: func() time.Time { return clockNow(e) }, Sweep: &e.pollerSweep}
}

// list describes every queue of tenant; of every tenant when tenant is "".
func listQueues(ctx context.Context, e *Engine, tenant string) ([]*QueueInfo, error) {
	return queueDesk(e).List(ctx, tenant)
}

// describe answers one queue of a tenant.
func describeQueue(ctx context.Context, e *Engine, tenant, queue string) (*QueueInfo, error) {
	return queueDesk(e).Describe(ctx, tenant, queue)
}

// polled records a poll of p beginning now; the answer records its end and
// the tasks it answered.
func beginPoll(e *Engine, p PollParams) func(tasks []*Task) {
	key := dispatch.PollerKey{Tenant: p.TenantID, Queue: p.Queue, Worker: p.WorkerID}
	names := make([]string, 0, len(p.Activities)+len(p.Compensations)+len(p.Verifiable))
	for n := range p.taskNames() {
		names = append(names, n)
	}
	end := e.dispatch.Pollers.Begin(key, names, clockNow(e))
	return func(tasks []*Task) {
		noteHanded(e, p, tasks)
		end(clockNow(e))
	}
}

// handed records the tasks handed to a poller, in flight until reported.
func noteHanded(e *Engine, p PollParams, tasks []*Task) {
	tokens := make([]string, 0, len(tasks))
	for _, t := range tasks {
		tokens = append(tokens, t.Token)
	}
	e.dispatch.Pollers.Handed(dispatch.PollerKey{Tenant: p.TenantID, Queue: p.Queue, Worker: p.WorkerID}, tokens)
}

// publishPollers writes this process's poller records that are due and
// sweeps expired ones now and then (queues.Desk.Publish).
func publishPollers(ctx context.Context, e *Engine) error {
	return queueDesk(e).Publish(ctx, func(ctx context.Context, tokens []string) ([]string, error) {
		return settledTokens(ctx, e, tokens)
	})
}

// settledTokens answers the tokens whose tasks are no longer claimed with
// them: reported (perhaps to another process), timed out, given back.
func settledTokens(ctx context.Context, e *Engine, tokens []string) ([]string, error) {
	var gone []string
	for _, token := range tokens {
		taskID, err := parseToken(token)
		if err != nil {
			gone = append(gone, token)
			continue
		}
		t, _, err := e.records.Task(ctx, taskID) // its record, or the claim its step keeps
		switch {
		case errors.Is(err, store.ErrNotFound):
			gone = append(gone, token)
		case err != nil:
			return nil, err
		case t.State != record.TaskClaimed || t.Token != token:
			gone = append(gone, token)
		default:
			ended, err := reportedByCheckpoint(ctx, e, t)
			if err != nil {
				return nil, err
			}
			if ended {
				gone = append(gone, token)
			}
		}
	}
	return gone, nil
}

// reportedByCheckpoint reports whether a report ended the claim the task
// record t shows claimed, as its run's checkpoint says (claimEnded); a run
// that is gone ended it too.
func reportedByCheckpoint(ctx context.Context, e *Engine, t *record.Task) (bool, error) {
	if t.Kind != TaskActivity || t.Flow != nil || t.FairKey != "" {
		return false, nil // its report writes its record
	}
	s, _, err := e.records.LoadCheckpoint(ctx, t.RunID)
	switch {
	case CodeOf(err) == CodeNotFound:
		return true, nil
	case err != nil:
		return false, err
	}
	return claimEnded(s, t) != "", nil
}

// PollerRecordsPrefix begins every poller record (wk:): a weftd's record of
// a worker that polls it, which belongs to no run.
func PollerRecordsPrefix() []byte { return pollers.Prefix() }
