package engine

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/engine/flowcontrol"
	"github.com/weft-dev/weft/engine/internal/decide"
	"github.com/weft-dev/weft/engine/internal/dispatch"
	"github.com/weft-dev/weft/engine/internal/record"
	"github.com/weft-dev/weft/engine/keyspace"
	"github.com/weft-dev/weft/store"
)

// The claim of a flow-controlled task. Before the decision's rule runs,
// its prepare reads the task's concurrency slots (a free one, the lowest
// index nobody holds, or the slot of a holder whose task is no longer
// claimed with the token it recorded) and its throttle bucket; the rule
// decides over those values and the decision's clock: a held task is
// answered as not claimable and stays ready, a claimable one takes its
// slot on an absent-condition (or a condition on the stale holder's
// version) and moves its bucket on a condition on the version read, in the
// batch that claims it. Two claims that read the same slots pick the same
// index, so one of them fails its condition and is made again from fresh
// reads; a limit is never exceeded.
//
// This process remembers which keys hold their tasks back (flowGate): a
// key at its limit until a wake-up of its queue (a slot given back here or
// in another weftd publishes one) or a short while, a throttled key until
// the time its throttle answered, when its queue is woken. Polls skip
// those keys' tasks without reading the store.

// flowHeldError says the task's throttle holds it until RetryAt.
type flowHeldError struct{ retryAt time.Time }

func (e *flowHeldError) Error() string {
	return "throttled until " + e.retryAt.Format(time.RFC3339Nano)
}

// flowRead is what a flow-controlled claim read before its rule.
type flowRead struct {
	// slot is the slot to take (nil: the step has no concurrency), on
	// slotCond; full: every slot is held.
	slot     []byte
	slotCond store.Condition
	full     bool
	// bucketKey is the throttle's bucket (nil: none), read as bucket on
	// bucketCond.
	bucketKey  []byte
	bucket     flowcontrol.Bucket
	bucketCond store.Condition
}

// conflict reports whether err is a lost race on what r read.
func (r *flowRead) conflict(err error) bool {
	return (r.slot != nil && conflictOn(err, r.slot)) || (r.bucketKey != nil && conflictOn(err, r.bucketKey))
}

// claimFlow claims a ready flow-controlled task for a poll, or answers nil
// when flow control holds it (or it is not claimable).
func claimFlow(ctx context.Context, e *Engine, t *record.Task, version uint64, p PollParams, names map[string]bool, fair *fairTake) (*Task, error) {
	if t.Flow.Err != "" || t.Kind != TaskActivity {
		return nil, nil // its attempt fails (startTimedOut)
	}
	run, err := e.records.LoadRun(ctx, t.RunID)
	if err != nil {
		return nil, nil //nolint:nilerr // a run gone or unreadable: its task is not claimable now
	}
	a := run.Action(t.ActionID)
	s := flowStepOf(run, t.ActionID)
	if a == nil || s == nil {
		return nil, nil
	}
	queue := dispatch.QueueKey(t.TenantID, t.Queue)
	gate := flowGateKeys(run, a, t)
	if e.flow.holds(gate, queue, clockNow(e)) {
		return nil, nil
	}
	var (
		r    flowRead
		task *Task
	)
	_, err = commitDecision(ctx, e, decision{
		runID: t.RunID, actor: decide.WorkerActor(p.WorkerID),
		prepare: func(ctx context.Context, _ bool) (string, bool, error) {
			task = nil // an earlier attempt's claim did not commit
			var err error
			if r, err = readFlow(ctx, e, run, a, t); err != nil {
				return "", false, err
			}
			if fair != nil {
				if err := fair.read(ctx, e.store); err != nil {
					return "", false, err
				}
			}
			if r.full {
				e.flow.heldFull.Add(1)
				e.flow.holdFull(gate[0], queue, clockNow(e))
				return "", true, nil
			}
			return t.RunID, false, nil
		},
		decide: func(ch *change) error {
			ch.require(store.IfVersion(record.TaskKey(t.TaskID), version))
			var cerr error
			if task, cerr = claimTask(ch, t.Fresh(), p.WorkerID, names[verifyKey(t.Activity)], nil); cerr != nil || task == nil {
				return cerr
			}
			if err := takeFlow(ch, s, &r, t, task.Token); err != nil {
				return err
			}
			takeFair(ch, fair, t.FairWeight)
			return nil
		},
		lostRace:  func(err error) bool { return r.conflict(err) || fair.conflict(err) },
		contended: func() error { return errSkipTask },
	})
	var held *flowHeldError
	var cf *store.ConditionFailedError
	switch {
	case errors.As(err, &held):
		e.flow.heldThrottle.Add(1)
		e.flow.holdUntil(gate[1], held.retryAt, func() { e.dispatch.Wake(queue) })
		return nil, nil
	case errors.Is(err, errSkipTask) || errors.As(err, &cf) || CodeOf(err) == CodeNotFound:
		return nil, nil
	case err != nil:
		return nil, err
	}
	return task, nil
}

// takeFlow is the flow-control rule of a claim, over what readFlow read
// and the decision's clock: the throttle lets the task go or answers when
// to come back; a task that goes takes its slot and moves its bucket in
// the claim's batch.
func takeFlow(c *change, s *flowStep, r *flowRead, t *record.Task, token string) error {
	if r.bucketKey != nil {
		next, d := s.throttle.Take(r.bucket, c.now)
		if !d.Allowed {
			return &flowHeldError{retryAt: d.RetryAt}
		}
		b, _ := next.MarshalBinary()
		c.require(r.bucketCond)
		c.ops = append(c.ops, store.Put(r.bucketKey, b))
	}
	if r.slot != nil {
		c.require(r.slotCond)
		c.ops = append(c.ops, store.Put(r.slot, []byte(token)))
		if st := decide.StepOfTask(c.state, t.ActionID, t.TaskID); st != nil {
			st.FlowSlot = string(r.slot)
			c.dirty = true
		}
	}
	return nil
}

// readFlow reads a task's concurrency slots and throttle bucket.
func readFlow(ctx context.Context, e *Engine, run *record.Run, a *definition.Action, t *record.Task) (flowRead, error) {
	var r flowRead
	if a.Concurrency != nil {
		slot, cond, err := freeFlowSlot(ctx, e, run, a, t.Flow.ConcurrencyKey)
		if err != nil {
			return r, err
		}
		if slot == nil {
			r.full = true
			return r, nil
		}
		r.slot, r.slotCond = slot, cond
	}
	if a.Throttle != nil {
		r.bucketKey = bucketKey(run, a, t.Flow.ThrottleKey)
		it, err := e.store.Get(ctx, r.bucketKey)
		switch {
		case errors.Is(err, store.ErrNotFound):
			r.bucketCond = store.IfAbsent(r.bucketKey)
		case err != nil:
			return r, err
		default:
			if err := r.bucket.UnmarshalBinary(it.Value); err != nil {
				r.bucket = flowcontrol.Bucket{} // an unreadable bucket is full: it is rewritten
			}
			r.bucketCond = store.IfVersion(r.bucketKey, it.Version)
		}
	}
	return r, nil
}

// maxStaleChecks bounds the holders a claim that finds every slot held
// checks for a task no longer claimed.
const maxStaleChecks = 16

// freeFlowSlot answers the slot of a concurrency key a claim may take and
// the condition it takes it on: the lowest index below the limit nobody
// holds (absent), or, with every slot held, one whose holder's task is no
// longer claimed with the token it recorded (on the slot's version); nil
// when the key is at its limit.
func freeFlowSlot(ctx context.Context, e *Engine, run *record.Run, a *definition.Action, key string) ([]byte, store.Condition, error) {
	held, err := flowHolders(ctx, e.store, slotPrefix(run, a, key))
	if err != nil {
		return nil, store.Condition{}, err
	}
	limit := a.Concurrency.Limit
	if len(held) < limit {
		taken := make(map[string]bool, len(held))
		for _, it := range held {
			taken[string(it.Key)] = true
		}
		for i := range limit {
			if k := slotKey(run, a, key, i); !taken[string(k)] {
				return k, store.IfAbsent(k), nil
			}
		}
	}
	for i, it := range held {
		if i >= maxStaleChecks {
			break
		}
		stale, err := staleHolder(ctx, e, string(it.Value))
		if err != nil {
			return nil, store.Condition{}, err
		}
		if stale {
			return it.Key, store.IfVersion(it.Key, it.Version), nil
		}
	}
	return nil, store.Condition{}, nil
}

// flowHolders answers every held slot under prefix.
func flowHolders(ctx context.Context, st store.Store, prefix []byte) ([]store.Item, error) {
	var out []store.Item
	var after []byte
	for {
		res, err := st.Scan(ctx, &store.ScanParams{Prefix: prefix, After: after, Limit: store.MaxScanLimit})
		if err != nil {
			return nil, err
		}
		out = append(out, res.Items...)
		if res.Next == nil {
			return out, nil
		}
		after = res.Next
	}
}

// staleHolder reports whether the task a slot names by its claim token is
// no longer claimed with that token (a slot every way out of a claim gives
// back: this finds one that was not, such as a run removed meanwhile).
func staleHolder(ctx context.Context, e *Engine, token string) (bool, error) {
	taskID, err := parseToken(token)
	if err != nil {
		return true, nil //nolint:nilerr // not a token: nobody holds the slot
	}
	it, err := e.store.Get(ctx, record.TaskKey(taskID))
	if errors.Is(err, store.ErrNotFound) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	var t record.Task
	if err := record.DecodeTask(it.Value, &t); err != nil {
		return false, nil //nolint:nilerr // unreadable: left to its owner
	}
	return t.State != record.TaskClaimed || t.Token != token, nil
}

// flowHeldNow reports whether flow control holds a ready task now: its
// concurrency key at its limit, or its throttle without a token. Read
// before the schedule-to-start timer's decision, which then waits again
// instead of failing the attempt.
func flowHeldNow(ctx context.Context, e *Engine, t *record.Task) (bool, error) {
	if t == nil || t.Flow == nil || t.Flow.Err != "" || t.State != record.TaskReady {
		return false, nil
	}
	run, err := e.records.LoadRun(ctx, t.RunID)
	if err != nil {
		return false, nil //nolint:nilerr // the timer's decision finds the run gone
	}
	a, s := run.Action(t.ActionID), flowStepOf(run, t.ActionID)
	if a == nil || s == nil {
		return false, nil
	}
	r, err := readFlow(ctx, e, run, a, t)
	if err != nil || r.full {
		return r.full, err
	}
	return r.bucketKey != nil && s.throttle.Tokens(r.bucket, clockNow(e)) == 0, nil
}

// flowGateKeys names the keys a task waits on in this process's gate: its
// concurrency key's slots and its throttle's bucket ("" when it has none).
func flowGateKeys(run *record.Run, a *definition.Action, t *record.Task) [2]string {
	var g [2]string
	if a.Concurrency != nil {
		g[0] = string(slotPrefix(run, a, t.Flow.ConcurrencyKey))
	}
	if a.Throttle != nil {
		g[1] = string(bucketKey(run, a, t.Flow.ThrottleKey))
	}
	return g
}

// flowGate is what this process remembers of the keys that hold their
// tasks back, so that polls skip those tasks without reading the store:
// keys at their limit by queue, until the queue is woken or a short while
// has passed; throttled keys until their throttle's time.
type flowGate struct {
	mu    sync.Mutex
	full  map[string]map[string]time.Time // queue → key → until
	timed map[string]time.Time            // key → until
	sweep []byte                          // where the idle-bucket sweep resumes
	// heldFull and heldThrottle count the claims held back (Counters).
	heldFull, heldThrottle atomic.Int64
}

// The gate's bounds: how long a full key is skipped at most without a
// wake-up of its queue (a wake-up from another weftd may be lost), and how
// many keys it remembers of each kind.
const (
	gateFullHold = time.Second
	gateMaxKeys  = 100_000
)

// holds reports whether the gate holds either of keys at now.
func (g *flowGate) holds(keys [2]string, queue string, now time.Time) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if k := keys[0]; k != "" {
		if until, ok := g.full[queue][k]; ok {
			if now.Before(until) {
				return true
			}
			delete(g.full[queue], k)
		}
	}
	if k := keys[1]; k != "" {
		if until, ok := g.timed[k]; ok {
			if now.Before(until) {
				return true
			}
			delete(g.timed, k)
		}
	}
	return false
}

// holdFull holds a concurrency key at its limit until its queue is woken,
// or gateFullHold has passed.
func (g *flowGate) holdFull(key, queue string, now time.Time) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.full == nil {
		g.full = map[string]map[string]time.Time{}
	}
	m := g.full[queue]
	if m == nil || len(m) >= gateMaxKeys {
		m = map[string]time.Time{}
		g.full[queue] = m
	}
	m[key] = now.Add(gateFullHold)
}

// holdUntil holds a throttled key until at, and wakes its queue then
// (once per key and time).
func (g *flowGate) holdUntil(key string, at time.Time, wake func()) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if until, ok := g.timed[key]; ok && !at.After(until) {
		return
	}
	if g.timed == nil || len(g.timed) >= gateMaxKeys {
		g.timed = map[string]time.Time{}
	}
	g.timed[key] = at
	time.AfterFunc(time.Until(at), wake)
}

// woke forgets the full keys of queues that were woken: a slot may have
// been given back.
func (g *flowGate) woke(queues ...string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, q := range queues {
		delete(g.full, q)
	}
}

// sweepIdleBuckets bounds how many throttle buckets one Tick looks at.
const sweepIdleBucketsMax = 1024

// sweepIdleBuckets deletes throttle buckets that are idle (full: the same
// as none), each on a condition on the version read, so that a claim that
// moved one meanwhile keeps it. It visits at most sweepIdleBucketsMax
// buckets per Tick, resuming where the last Tick stopped.
func sweepIdleBuckets(ctx context.Context, e *Engine) error {
	after := e.flow.sweepAfter()
	res, err := e.store.Scan(ctx, &store.ScanParams{Prefix: keyspace.FlowThrottle.KeyPrefix(), After: after, Limit: sweepIdleBucketsMax})
	if err != nil {
		return err
	}
	e.flow.sweptTo(res.Next)
	now := clockNow(e)
	var conds []store.Condition
	var ops []store.Op
	for _, it := range res.Items {
		var b flowcontrol.Bucket
		if b.UnmarshalBinary(it.Value) == nil && b.Idle(now) {
			conds = append(conds, store.IfVersion(it.Key, it.Version))
			ops = append(ops, store.Delete(it.Key))
		}
	}
	for i := range ops { // one at a time: a busy key's failed condition keeps the others
		if _, err := commitChecked(ctx, e.store, &store.Batch{Conditions: conds[i : i+1], Ops: ops[i : i+1]}); err != nil {
			var cf *store.ConditionFailedError
			if !errors.As(err, &cf) {
				return err
			}
		}
	}
	return nil
}

// sweepAfter answers where the idle-bucket sweep resumes (nil: the start).
func (g *flowGate) sweepAfter() []byte {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.sweep
}

// sweptTo records where the sweep stopped (nil: it went through).
func (g *flowGate) sweptTo(next []byte) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.sweep = next
}
