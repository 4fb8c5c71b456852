package decide

import (
	"cmp"
	"encoding/json"
	"time"

	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/engine/runstate"
)

// Activity result reconciliation (docs/semantics.md#reconciliation). An
// activity is reconcilable when the worker that claims it declares it
// verifiable (it derives an idempotency key and has a verify function). For
// such an activity the engine keeps a reconciliation record per scheduled
// operation, written in the same batch as the change it describes, so a
// result is durable before it is acknowledged. When an attempt ended in a
// way that may have left a side effect behind (timed out, or failed after a
// possible side effect), the engine does not redispatch: it hands out a
// verify task first, and acts on its VerifyState. Activities that are not
// reconcilable keep at-least-once dispatch and get no record.

// ReconStatus is a reconciliation record's status (docs/semantics.md#reconciliation).
type ReconStatus string

// The reconciliation statuses.
const (
	ReconCompleted     ReconStatus = "completed"
	ReconFailed        ReconStatus = "failed"
	ReconCancelled     ReconStatus = "cancelled"
	ReconTimedOut      ReconStatus = "timed-out"
	ReconIndeterminate ReconStatus = "indeterminate"
)

// Recon is what a decision knows of, and writes to, a step's
// reconciliation record.
type Recon struct {
	// Logical is the logical attempt the record is of.
	Logical int
	Status  ReconStatus
	Result  json.RawMessage
	Err     *runstate.StepError
	// Key is the idempotency key the worker reported; "" keeps the one recorded.
	Key string
	// Diagnostic, when set, replaces the recorded one.
	Diagnostic string
	// CreatedAt is when the record was first written.
	CreatedAt time.Time
}

// needsVerify reports whether the next dispatch of a reconcilable step must
// be a verify task: its last attempt may have left a side effect behind.
func needsVerify(status ReconStatus) bool {
	return status == ReconTimedOut || status == ReconIndeterminate
}

// reconOf answers the record of a reconcilable step, as prepared and as the
// decision has since recorded it.
func (c *core) reconOf(st *runstate.StepState) (Recon, bool) {
	if !st.Reconcile {
		return Recon{}, false
	}
	r, ok := c.prepared.Recons[st.ActionID]
	if !ok || r.Logical != st.LogicalAttempt {
		return Recon{}, false
	}
	return r, true
}

// recordRecon writes the step's reconciliation record with u's status,
// result and error, keeping the recorded key, diagnostic and creation time
// unless u has its own.
func (c *core) recordRecon(a *definition.Action, st *runstate.StepState, u Recon) {
	u.Logical, u.CreatedAt = st.LogicalAttempt, c.now
	if prev, ok := c.reconOf(st); ok {
		u.Key, u.Diagnostic, u.CreatedAt = cmp.Or(u.Key, prev.Key), cmp.Or(u.Diagnostic, prev.Diagnostic), prev.CreatedAt
	}
	if c.prepared.Recons == nil {
		c.prepared.Recons = make(map[string]Recon, 1)
	}
	c.prepared.Recons[st.ActionID] = u
	c.rec.RecordRecon(a, st, u)
}

// Recon answers a reconcilable step's record as the decision knows it: as
// prepared, and as the decision has since recorded it.
func (d *Decision) Recon(st *runstate.StepState) (Recon, bool) { return d.core().reconOf(st) }

// RecordRecon writes a reconcilable step's record as a worker's report
// leaves it (docs/semantics.md#reconciliation).
func (d *Decision) RecordRecon(a *definition.Action, st *runstate.StepState, u Recon) {
	d.core().recordRecon(a, st, u)
}

// scheduleVerify persists a verify task for the step.
func (c *core) scheduleVerify(a *definition.Action, st *runstate.StepState) {
	st.NextAttemptAt = time.Time{}
	st.TaskID, st.ReadyKey = c.rec.NewTask(TaskVerify, a, st, c.now)
	st.Verifying = true
	c.rec.Changed()
}

// ApplyVerify applies a verifier's answer: the verify table of
// docs/semantics.md#reconciliation.
func (d *Decision) ApplyVerify(a *definition.Action, st *runstate.StepState, state runstate.VerifyState, result json.RawMessage, diagnostic string) error {
	st.TaskID, st.Verifying = "", false
	rec, _ := d.core().reconOf(st)
	d.rec.Emit(runstate.EvStepVerified, st.ActionID, st.LogicalAttempt, st.EngineAttempt, runstate.EventData{
		VerifyState: string(state), ReconciliationKey: rec.Key, Reason: diagnostic})
	switch {
	case state == runstate.VerifyNotCompleted:
		// No side effect happened: dispatch again.
		return d.core().scheduleAttempt(a, st, d.now)
	case state == runstate.VerifyCompletedWithResult && len(result) > 0:
		d.core().recordRecon(a, st, Recon{Status: ReconCompleted, Result: result, Diagnostic: diagnostic})
		if err := d.core().succeedStep(st, result, nil, "reconciliation"); err != nil {
			return err
		}
		return d.core().advance()
	case state == runstate.VerifyCompletedWithResult:
		return d.core().failReconciled(a, st, definition.ErrorReconciliationIndeterminate, "verifier contradiction: completed-with-result without a result")
	case state == runstate.VerifyCompletedResultUnavailable:
		return d.core().failReconciled(a, st, definition.ErrorReconciliationResultUnavailable, "the side effect completed but its result cannot be reconstructed")
	default:
		return d.core().failReconciled(a, st, definition.ErrorReconciliationIndeterminate, "the verifier cannot tell whether the side effect completed")
	}
}

// VerifierUnavailable fails a step whose verify task failed or timed out
// (why): it cannot be told whether the side effect happened.
func (d *Decision) VerifierUnavailable(a *definition.Action, st *runstate.StepState, why string) error {
	st.TaskID, st.Verifying = "", false
	return d.core().failReconciled(a, st, definition.ErrorReconciliationIndeterminate, "verifier unavailable: the verify task "+why)
}

// failReconciled fails a step on a reconciliation outcome: never redispatched
// silently; on_failure decides (HOLD lets an operator look first).
func (c *core) failReconciled(a *definition.Action, st *runstate.StepState, class definition.ErrorClass, message string) error {
	stepErr := &runstate.StepError{Class: class, Message: message}
	c.recordRecon(a, st, Recon{Status: ReconIndeterminate, Err: stepErr, Diagnostic: message})
	if err := c.failStep(a, st, stepErr); err != nil {
		return err
	}
	return c.advance()
}
