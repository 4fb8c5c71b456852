package engine

import (
	"context"
	"encoding/json"
	"strconv"
	"time"

	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/engine/runstate"
	"github.com/weft-dev/weft/store"
)

// Activity result reconciliation (docs/semantics.md#reconciliation). An activity is reconcilable when
// the worker that claims it declares it verifiable (it derives an idempotency
// key and has a verify function). For such an activity the engine keeps a
// reconciliation record per scheduled operation, written in the same batch as
// the change it describes, so a result is durable before it is acknowledged.
// When an attempt ended in a way that may have left a side effect behind
// (timed out, or failed after a possible side effect), the engine does not
// redispatch: it hands out a verify task first, and acts on its VerifyState.
// Activities that are not reconcilable keep at-least-once dispatch and get
// no record.

// Reconciliation statuses (docs/semantics.md#reconciliation).
const (
	reconCompleted     = "completed"
	reconFailed        = "failed"
	reconCancelled     = "cancelled"
	reconTimedOut      = "timed-out"
	reconIndeterminate = "indeterminate"
)

// reconRecord is the reconciliation record of docs/semantics.md#reconciliation.
type reconRecord struct {
	FormatVersion  int                 `json:"version"`
	WorkflowID     string              `json:"workflow_id"`
	ActivityName   string              `json:"activity_name"`
	OperationID    string              `json:"operation_id"`
	IdempotencyKey string              `json:"idempotency_key,omitempty"`
	Status         string              `json:"status"`
	Result         json.RawMessage     `json:"result,omitempty"`
	Error          *runstate.StepError `json:"error,omitempty"`
	Diagnostic     string              `json:"diagnostic,omitempty"`
	CreatedAt      time.Time           `json:"created_at"`
	UpdatedAt      time.Time           `json:"updated_at"`
}

// reconKey is the record's key: its own additive prefix, scoped by workflow,
// activity and operation; the worker's idempotency key is in the record.
func reconKey(runID, activity, operationID string) []byte {
	return store.Key("rec", runID, activity, operationID)
}

// operationID is the scheduled operation's identifier (operationId of
// docs/semantics.md#reconciliation), stable for an action's logical attempt.
func operationID(runID, actionID string, logical int) string {
	return runID + "/" + actionID + "/" + strconv.Itoa(logical)
}

// reconRecordOf reads the step's record during a decision (nil when absent).
func (c *recorder) reconRecordOf(a *definition.Action, st *runstate.StepState) *reconRecord {
	key := reconKey(c.run.RunID, a.Activity, operationID(c.run.RunID, a.ID, st.LogicalAttempt))
	item, err := c.e.store.Get(c.ctx, key)
	if err != nil {
		return nil
	}
	for i := len(c.ops) - 1; i >= 0; i-- { // this decision's own write wins
		if string(c.ops[i].Key) == string(key) {
			item.Value = c.ops[i].Value
			break
		}
	}
	var r reconRecord
	if json.Unmarshal(item.Value, &r) != nil {
		return nil
	}
	return &r
}

// recordRecon writes the step's reconciliation record with a new status.
func (c *recorder) recordRecon(a *definition.Action, st *runstate.StepState, status string, result json.RawMessage, stepErr *runstate.StepError, key, diagnostic string) {
	op := operationID(c.run.RunID, a.ID, st.LogicalAttempt)
	r := c.reconRecordOf(a, st)
	if r == nil {
		r = &reconRecord{FormatVersion: recordVersion, WorkflowID: c.run.RunID, ActivityName: a.Activity, OperationID: op, CreatedAt: c.now}
	}
	r.Status, r.Result, r.Error, r.UpdatedAt = status, result, stepErr, c.now
	if key != "" {
		r.IdempotencyKey = key
	}
	if diagnostic != "" {
		r.Diagnostic = diagnostic
	}
	c.put(reconKey(c.run.RunID, a.Activity, op), r)
}

// needsVerify reports whether the next dispatch of a reconcilable step must
// be a verify task: its last attempt may have left a side effect behind.
func needsVerify(status string) bool {
	return status == reconTimedOut || status == reconIndeterminate
}

// scheduleVerify persists a verify task for the step.
func (c *change) scheduleVerify(a *definition.Action, st *runstate.StepState) {
	st.NextAttemptAt = time.Time{}
	t := c.newTask(a, st, TaskVerify, a.Activity, a.Queue, a.Timeout, c.now)
	st.TaskID, st.ReadyKey = t.TaskID, t.readyKey()
	st.Verifying = true
	c.dirty = true
}

// VerifyParams is a worker's answer to a verify task.
type VerifyParams struct {
	TenantID   string
	Token      string
	WorkerID   string
	State      runstate.VerifyState
	Result     json.RawMessage
	Diagnostic string
}

// ReportVerification applies the verify table of docs/semantics.md#reconciliation to the step.
func (e *Engine) ReportVerification(ctx context.Context, r VerifyParams) (*ReportResult, error) {
	return workers{e}.verify(ctx, r)
}

// verify takes a verifier's answer: ReportVerification.
func (e workers) verify(ctx context.Context, r VerifyParams) (*ReportResult, error) {
	if len(r.Result) > 0 {
		if err := checkOutput(r.Result, e.cfg.InlineResultLimit); err != nil {
			return nil, err
		}
	}
	return e.report(ctx, ReportParams{TenantID: r.TenantID, Token: r.Token, WorkerID: r.WorkerID}, "verified:"+string(r.State),
		func(ch *change, t *taskRecord, a *definition.Action, st *runstate.StepState) error {
			if t.Kind != TaskVerify {
				return claimLost(t.TaskID, t.RunID)
			}
			return ch.applyVerify(a, st, r)
		})
}

// applyVerify is the decision a verification makes.
func (c *change) applyVerify(a *definition.Action, st *runstate.StepState, r VerifyParams) error {
	st.TaskID, st.Verifying = "", false
	rec := c.reconRecordOf(a, st)
	key := ""
	if rec != nil {
		key = rec.IdempotencyKey
	}
	c.emit(runstate.EvStepVerified, st.ActionID, st.LogicalAttempt, st.EngineAttempt, runstate.EventData{
		VerifyState: string(r.State), ReconciliationKey: key, Reason: r.Diagnostic})
	switch {
	case r.State == runstate.VerifyNotCompleted:
		// No side effect happened: dispatch again.
		if err := c.scheduleAttempt(a, st, c.now); err != nil {
			return err
		}
	case r.State == runstate.VerifyCompletedWithResult && len(r.Result) > 0:
		c.recordRecon(a, st, reconCompleted, r.Result, nil, "", r.Diagnostic)
		if err := c.succeedStep(st, r.Result, nil, "reconciliation"); err != nil {
			return err
		}
		if err := c.advance(); err != nil {
			return err
		}
	case r.State == runstate.VerifyCompletedWithResult:
		if err := c.failReconciled(a, st, definition.ErrorReconciliationIndeterminate, "verifier contradiction: completed-with-result without a result"); err != nil {
			return err
		}
	case r.State == runstate.VerifyCompletedResultUnavailable:
		if err := c.failReconciled(a, st, definition.ErrorReconciliationResultUnavailable, "the side effect completed but its result cannot be reconstructed"); err != nil {
			return err
		}
	default:
		if err := c.failReconciled(a, st, definition.ErrorReconciliationIndeterminate, "the verifier cannot tell whether the side effect completed"); err != nil {
			return err
		}
	}
	return nil
}

// failReconciled fails a step on a reconciliation outcome: never redispatched
// silently; on_failure decides (HOLD lets an operator look first).
func (c *change) failReconciled(a *definition.Action, st *runstate.StepState, class definition.ErrorClass, message string) error {
	stepErr := &runstate.StepError{Class: class, Message: message}
	c.recordRecon(a, st, reconIndeterminate, nil, stepErr, "", message)
	if err := c.failStep(a, st, stepErr); err != nil {
		return err
	}
	return c.advance()
}

// reconRecordOfReconciled answers the record of a reconcilable step, or nil.
func (c *recorder) reconRecordOfReconciled(a *definition.Action, st *runstate.StepState) *reconRecord {
	if !st.Reconcile {
		return nil
	}
	return c.reconRecordOf(a, st)
}
