package engine

import (
	"context"
	"errors"

	"github.com/weft-dev/weft/engine/internal/cache"
	"github.com/weft-dev/weft/engine/internal/dispatch"
	"github.com/weft-dev/weft/engine/internal/fault"
	"github.com/weft-dev/weft/engine/internal/record"
	"github.com/weft-dev/weft/engine/runlog"
	"github.com/weft-dev/weft/engine/runstate"
	"github.com/weft-dev/weft/store"
)

// maxMutateRetries bounds how often one decision is re-made after losing a
// compare-and-set race or an ambiguous commit.
const maxMutateRetries = 32

// decision is one mutating call's part in the commit pipeline
// (commitDecision): which run it changes, as whom, what it reads and how it
// decides.
type decision struct {
	// runID is the run it changes; prepare may name it instead.
	runID string
	actor string
	// fromStore makes even the first attempt decide on the store's
	// checkpoint (drive: a tenure's fence must see the store's epoch).
	fromStore bool
	// prepare, when set, reads what the decision needs besides the run and
	// its checkpoint (a task record) before each attempt: from the store
	// when fresh (every attempt after the first), so that a decision made
	// again never sees what its earlier attempt read or changed. It answers
	// the run to change, or done when the call is answered without a
	// commit.
	prepare func(ctx context.Context, fresh bool) (runID string, done bool, err error)
	// decide is the decision: it changes the run through the change, and
	// answers an error to commit nothing.
	decide func(*change) error
	// lostRace, when set, reports whether a failed attempt lost a race on
	// what prepare read: the decision is made again from fresh reads.
	lostRace func(err error) bool
	// newRun, for a submission, is the run the decision creates: its state
	// starts as initial, and the batch requires that no checkpoint exists.
	newRun  *record.Run
	initial *runstate.State
	// contended answers a decision that lost every race (default: the run
	// is changing too fast).
	contended func() error
	// removal: the decision is a batch of the run's removal (retention.go),
	// the only kind that sees a run being removed; to every other the run
	// is not found.
	removal bool
	// noRules: the decision applies no rule (a heartbeat, a removal batch),
	// so nothing is read for them (prepare).
	noRules bool
}

// mutate makes and commits a decision about a run (commitDecision).
func mutate(ctx context.Context, e *Engine, runID, actor string, decide func(*change) error) (*change, error) {
	return commitDecision(ctx, e, decision{runID: runID, actor: actor, decide: decide})
}

// commitDecision is the one commit pipeline every mutating path goes
// through — the shared "load, decide under the run's lock, commit" of every
// call's file: the call's own reads (d.prepare), then under the run's lock
// the run and its checkpoint, what the rules read (prepare.go), the
// decision (d.decide), the batch with its conditions and fencing epoch, the
// commit, and the settling of the decision's effects. A lost race on the
// checkpoint (or on what prepare read), a retryable store error, or a commit
// whose outcome is unknown, is resolved by reading again and deciding again,
// never by blindly re-sending: decisions are made from the state they read,
// so one that was already applied decides nothing the second time. An error
// from decide is answered without committing anything.
//
// The first decision is made on the checkpoint this engine last committed or
// read, when it has one, without reading the store (decisions from the
// cache): the commit's condition on the checkpoint's version is what proves
// it current, so a stale one — another engine committed since — decides
// nothing. A decision from the cache that does not commit (an error, nothing
// to do, a failed condition) is made again on the store's state before it
// is answered, so nothing is ever answered from a stale state.
func commitDecision(ctx context.Context, e *Engine, d decision) (*change, error) {
	fresh := d.fromStore
	for range maxMutateRetries {
		runID := d.runID
		if d.prepare != nil {
			id, done, err := d.prepare(ctx, fresh)
			if err != nil || done {
				return nil, err
			}
			runID = id
		}
		ch, retry, err := decideOnce(ctx, e, runID, d, fresh)
		if !retry && (err == nil || d.lostRace == nil || !d.lostRace(err)) {
			return ch, err
		}
		fresh = true
	}
	if d.contended != nil {
		return nil, d.contended()
	}
	return nil, fault.Unavailable(d.runID, "run "+d.runID+" is changing too fast; retry")
}

// startingState answers the state a decision starts from and its version:
// a new run's initial state, the cached checkpoint unless fresh (cached
// true), else the store's.
func startingState(ctx context.Context, e *Engine, runID string, d decision, fresh bool) (*record.Run, *runstate.State, uint64, bool, error) {
	if d.newRun != nil {
		return d.newRun, d.initial.Clone(), 0, false, nil
	}
	run, err := e.records.LoadRun(ctx, runID)
	if err != nil {
		return nil, nil, 0, false, err
	}
	state, version, cached, err := e.records.CheckpointToDecideOn(ctx, runID, fresh)
	if err == nil && state.Removing && !d.removal {
		return nil, nil, 0, false, cache.RunNotFound(runID)
	}
	return run, state, version, cached, err
}

// handedTasks answers the tasks a decision that did not commit claimed for
// waiting polls, when its commit's outcome is unknown (err): the claims may
// have committed, and their polls will never get them, so they are given
// back (giveBack, which leaves a claim that did not commit as it is).
func handedTasks(eff *dispatch.Effects[*Task], err error) []*Task {
	if !errors.Is(err, store.ErrOutcomeUnknown) {
		return nil
	}
	var tasks []*Task
	for _, h := range eff.HandOffs {
		if h.Task != nil {
			tasks = append(tasks, h.Task)
		}
	}
	return tasks
}

// decideOnce makes and commits one decision under the run's lock, and
// answers whether it must be made again (a lost race on the checkpoint, an
// unknown outcome, or a decision from the cache that did not commit). The
// tasks it hands to waiting polls are delivered only if it committed.
func decideOnce(ctx context.Context, e *Engine, runID string, d decision, fresh bool) (ch *change, retry bool, err error) {
	unlock := e.locks.lock(runID)
	defer unlock()
	run, state, version, cached, err := startingState(ctx, e, runID, d, fresh)
	if err != nil {
		return nil, false, err
	}
	now := clockNow(e)
	if d.newRun != nil {
		now = d.newRun.CreatedAt
	}
	ch = newChange(e, ctx, run, state, now, d.actor)
	ch.newRun = d.newRun != nil
	observeDecision(ch)
	useArena(ch, e.arenas.take())
	defer giveArenaBack(ch) // deferred first, so run last: after the effects settle
	committed := false
	defer func() {
		if !committed {
			undelivered := handedTasks(ch.effects(), err)
			e.dispatch.Settle(ch.effects(), false) // its hand-offs' room goes back
			if len(undelivered) > 0 {
				go giveBack(e, undelivered) // after the run's lock, which giving back takes
			}
		}
	}()
	defer observeEnd(ch, &committed, &err)
	if !d.noRules {
		if ch.prepared, err = prepare(ctx, e, run, state); err != nil {
			return ch, false, err
		}
	}
	from, indexed := state.Status, indexedOf(state)
	if d.newRun != nil {
		indexed = indexedFields{}
	}
	children := childStepsOf(ch)
	if err = d.decide(ch); err != nil {
		return ch, cached, err
	}
	indexForRetention(ch, from)
	indexForSearch(ch, indexed)
	syncChildren(ch, from, children)
	notifyParent(ch, from)
	if err := handOff(ch); err != nil {
		return ch, cached, err
	}
	recordEagerClaims(ch)
	if !ch.dirty && len(ch.ops) == 0 {
		return ch, cached, nil
	}
	if ch.outbox, err = outboxWrite(ctx, e, ch, fresh); err != nil {
		return ch, false, err
	}
	batch, err := batchOf(ch, version)
	if err != nil {
		return ch, cached, err
	}
	settleRider := store.Ride(ctx, batch) // the call's audit record commits with its decision
	res, err := commitObserved(ctx, ch, batch)
	settleRider(err)
	if err != nil {
		e.records.ForgetCheckpoint(runID) // it may be stale, or the commit may have applied
		e.records.ForgetTasks(ch.taskPuts)
	}
	var cf *store.ConditionFailedError
	switch {
	case err == nil:
		committed = true
		if ch.dirty && !ch.removesRun {
			e.records.CheckpointCommitted(runID, res.Versions[0], ch.state)
		}
		e.records.TasksCommitted(ch.taskPuts, batch, res)
		e.records.ClaimsCommitted(ch.claims)
		e.cfg.OutboxCache.Committed(batch, res, ch.appended)
		e.dispatch.Settle(ch.effects(), true)
		if ch.slotsFreed {
			kickRunQueue(e)
		}
		for _, a := range ch.alerts {
			e.alert(ch.ctx, a.name, a.attrs...)
		}
		return ch, false, nil
	case conflictOn(err, runlog.CheckpointKey(runID)), errors.Is(err, store.ErrOutcomeUnknown), errors.Is(err, store.ErrRetryable):
		return ch, true, err
	case conflictOn(err, runlog.RunOutboxKey(runID)):
		// The run's outbox entry was not as the decision took it: the export
		// worker deleted it, or another engine put it. Made again, the
		// decision reads it.
		e.cfg.OutboxCache.Forget(runID)
		return ch, true, err
	case cached && errors.As(err, &cf):
		return ch, true, err // decided on the cache: decide again on the store's state
	default:
		return ch, false, err
	}
}

// conflictOn reports whether err is a failed condition on key.
func conflictOn(err error, key []byte) bool {
	var cf *store.ConditionFailedError
	return errors.As(err, &cf) && string(cf.Key) == string(key)
}
