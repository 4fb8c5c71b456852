package engine

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"time"

	"github.com/weft-dev/weft/engine/internal/acceptance"
	"github.com/weft-dev/weft/engine/internal/decide"
	"github.com/weft-dev/weft/engine/internal/record"
	"github.com/weft-dev/weft/engine/internal/retention"
	"github.com/weft-dev/weft/engine/keyspace"
	"github.com/weft-dev/weft/engine/runlog"
	"github.com/weft-dev/weft/engine/runstate"
	"github.com/weft-dev/weft/store"
)

// Retention (docs/semantics.md#retention): a finished run is indexed by when
// it expires, in the batch that ends it, so the background pass visits only
// the runs that have expired; the pass removes each one and every record it
// owns, in bounded batches, each a fenced decision of the run's owner.

// Retention defaults and bounds.
const (
	// DefaultRetention is how long a finished run is kept when neither the
	// deployment nor its definition says otherwise.
	DefaultRetention = 30 * 24 * time.Hour
	// RetainForever, as Config.Retention, keeps finished runs until
	// DeleteRun removes them (a definition's own retention still applies).
	RetainForever time.Duration = -1
	// MinRetention is the shortest deployment retention.
	MinRetention = time.Second
	// ExportWait is how long the pass waits before it looks again at an
	// expired run whose events are not all exported yet.
	ExportWait = retention.ExportWait
)

// retentionOf answers how long a finished run is kept: its definition's
// retention, else the deployment's (RetainForever: kept).
func (c Config) retentionOf(run *record.Run) time.Duration {
	if d := run.Definition.Retention.D(); d > 0 {
		return d
	}
	return c.Retention
}

// indexForRetention is what the commit pipeline adds to the decision that
// ends a run (its status becomes terminal): the run's expiry, in the
// checkpoint and in the rx: index, in the same batch. The decision that
// reruns an ended run takes its expiry away again (docs/semantics.md#rerun).
func indexForRetention(c *change, from runstate.RunStatus) {
	if c.e == nil {
		return
	}
	if from.Terminal() && !c.state.Status.Terminal() && !c.state.RetainUntil.IsZero() {
		c.del(retention.ExpiryKey(c.state.RetainUntil, c.run.RunID))
		c.state.RetainUntil = time.Time{}
		c.dirty = true
		return
	}
	if from.Terminal() || !c.state.Status.Terminal() {
		return
	}
	keep := c.e.cfg.retentionOf(c.run)
	if keep == RetainForever {
		return
	}
	c.state.RetainUntil = c.now.Add(keep)
	c.ops = append(c.ops, store.Put(retention.ExpiryKey(c.state.RetainUntil, c.run.RunID), nil))
	c.dirty = true
}

// expireRuns is the retention pass: it removes the runs whose expiry has
// passed, up to retention.PassRuns of them.
func expireRuns(ctx context.Context, e *Engine) error {
	expired, err := retention.ExpiredAt(ctx, e.store, clockNow(e))
	if err != nil {
		return err
	}
	var errs []error
	for _, x := range expired {
		if _, err := removeRun(ctx, e, x.Key, x.RunID); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// removeRun goes on removing the run its index entry names, batch by
// batch, for as long as this engine owns the run and up to
// retention.BatchesPerPass batches. It answers whether the run is gone. A
// batch whose tenure ended under it (another decision of this engine — the
// retention pass and DeleteRun race for one run — gave the lease up) takes
// the lease again and goes on.
func removeRun(ctx context.Context, e *Engine, indexKey []byte, runID string) (bool, error) {
	var from retention.Cursor // where the previous batch of this pass stopped
	for range retention.BatchesPerPass {
		var step retention.Step
		next := from
		how, err := driveWith(ctx, e, runID, true, func(ch *change) error {
			var err error
			step, next, err = retention.Batch(ch.ctx, ch.e.store, removal{ch}, runRecords(runID), indexKey, from, ch.now)
			return err
		})
		var cf *store.ConditionFailedError
		switch {
		case how == tenureEnded:
			continue // nothing committed: the same batch again, under a new tenure
		case errors.As(err, &cf):
			return false, nil // the entry moved (DeleteRun) or another engine removed the run
		case CodeOf(err) == CodeNotFound:
			return true, deleteOrphan(ctx, e, indexKey) // the run is gone already
		case err != nil || how == notOwner:
			return false, err
		}
		from = next
		switch step {
		case retention.Gone:
			forgetRun(e, runID)
			e.own.removed.Add(1)
			e.log.Info("retention removed a run", slog.String("run_id", runID))
			return true, nil
		case retention.Waits:
			return false, nil
		}
	}
	return false, nil
}

// runGone reports whether the run's record is gone from the store: its
// removal finished, whoever finished it.
func runGone(ctx context.Context, e *Engine, runID string) (bool, error) {
	_, err := e.store.Get(ctx, record.RunKey(runID))
	switch {
	case errors.Is(err, store.ErrNotFound):
		return true, nil
	case err != nil:
		return false, err
	}
	return false, nil
}

// forgetRun drops a removed run from the caches.
func forgetRun(e *Engine, runID string) {
	e.records.ForgetRun(runID)
}

// removal is one batch of a run's removal (retention.Run), on the change
// that records it.
type removal struct{ c *change }

func (r removal) Finished() bool               { return r.c.state.Status.Terminal() }
func (r removal) Hidden() bool                 { return r.c.state.Removing }
func (r removal) Require(cond store.Condition) { r.c.require(cond) }
func (r removal) Delete(key []byte)            { r.c.del(key) }

// Reindex moves the run's index entry from old (nil: none) to at.
func (r removal) Reindex(old []byte, at time.Time) {
	c := r.c
	if old != nil {
		c.del(old)
	}
	c.state.RetainUntil = at
	c.ops = append(c.ops, store.Put(retention.ExpiryKey(at, c.run.RunID), nil))
	c.dirty = true
}

// Hide makes the run invisible: from this batch on every read and every
// other decision answers not found (docs/semantics.md#retention), its run
// request may be submitted again, and it is neither listed nor counted.
func (r removal) Hide() {
	c := r.c
	s, run := c.state, c.run
	s.Removing = true
	c.dirty = true
	c.del(record.RunRequestKey(run.TenantID, run.ProjectID, run.EnvironmentID, run.Definition.PlanID, run.Definition.PlanVersion, run.RunRequestID))
	// An older weftd's run has a run index entry whatever layout its
	// checkpoint names now; for any other run this deletes nothing.
	c.del(record.RunIndexKey(run.TenantID, run.CreatedAt, run.RunID))
	unindexRun(c)
	c.del(record.PendingTriggerKey(run.RunID))
	if !s.QueuedAt.IsZero() {
		dequeueKeyed(c, run, s)
	}
	c.releaseSlots()
}

// runRecords names the records a run owns beside its record and checkpoint,
// in the order a removal deletes them, and its outbox entries. The export
// worker's retry records (obr:) are named here because the engine cannot
// import export; dead letters (dlq:) are the operator's and stay.
func runRecords(runID string) retention.Records {
	return retention.Records{Outbox: runlog.RunOutboxPrefix(runID), Owned: [][]byte{
		runlog.EventPrefix(runID),
		runlog.IdemPrefix(runID),
		record.TaskPrefix(runID),
		acceptance.PayloadPrefix(runID),
		acceptance.RecordPrefix(runID),
		keyspace.Recon.KeyPrefix(runID),
		acceptance.ManualPrefix(runID),
		keyspace.OutboxRetry.KeyPrefix(runID),
	}}
}

// Derived deletes what a record names outside the run's prefixes.
func (r removal) Derived(prefix []byte, value []byte) {
	c := r.c
	switch string(prefix) {
	case string(record.TaskPrefix(c.run.RunID)):
		var t record.Task
		if record.DecodeTask(value, &t) != nil {
			return
		}
		if t.State == record.TaskReady {
			c.del(t.ReadyKey())
		}
		if t.State == record.TaskClaimed && claimEnded(c.state, &t) != "" {
			return // its report removed its timers and wrote no record
		}
		if !t.Deadline.IsZero() {
			clearDeadline(c, &t)
		}
		if !t.HeartbeatDue.IsZero() {
			c.clearTimer(t.HeartbeatDue, record.TimerHeartbeat, t.TaskID)
		}
	case string(acceptance.RecordPrefix(c.run.RunID)):
		var r acceptance.Record
		if json.Unmarshal(value, &r) == nil && !r.ExpiresAt.IsZero() {
			c.del(acceptance.ExpiryKey(r.ExpiresAt, r.RunID, r.SignalName, r.SignalID))
		}
	}
}

// Finish deletes the run's timers that its checkpoint can name, its
// checkpoint, its record and its index entry: the run is gone. A timer it
// cannot name (a pause's drain, a compensation's backoff, the attempt timer
// of a task a cancel retired) is deleted when it falls due and finds no run
// (fire).
func (r removal) Finish(indexKey []byte) {
	c := r.c
	s := c.state
	if !s.Deadline.IsZero() {
		c.clearTimer(s.Deadline, record.TimerWorkflow, "")
	}
	for _, st := range s.Steps {
		if !st.NextAttemptAt.IsZero() {
			c.clearTimer(st.NextAttemptAt, record.TimerBackoff, st.ActionID)
		}
		if !st.WakeAt.IsZero() && st.Status == runstate.StepRunning {
			c.clearTimer(st.WakeAt, record.TimerSleep, st.ActionID) // a sleep that never woke (docs/semantics.md#sleep)
		}
		if !st.ClaimHeartbeatDue.IsZero() { // a claim its step keeps (checkpointclaim.go), which has no record to name it
			c.clearTimer(st.ClaimHeartbeatDue, record.TimerHeartbeat, checkpointClaimTask(c.run.RunID, st))
		}
		if a := c.run.Action(st.ActionID); a != nil {
			if t, ok := decide.WaitTimer(a, st); ok {
				c.clearTimer(t.Due, record.TimerWait, t.Ref)
			}
		}
	}
	c.del(indexKey)
	c.del(runlog.CheckpointKey(c.run.RunID))
	c.del(record.RunKey(c.run.RunID))
	c.removesRun = true
}
