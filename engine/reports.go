package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/engine/internal/decide"
	"github.com/weft-dev/weft/engine/internal/dispatch"
	"github.com/weft-dev/weft/engine/internal/fault"
	"github.com/weft-dev/weft/engine/internal/record"
	"github.com/weft-dev/weft/engine/runstate"
	"github.com/weft-dev/weft/store"
)

// ReportResult answers a task report.
type ReportResult struct {
	// Duplicate is true when this claim was already reported the same way;
	// nothing changed.
	Duplicate bool
	// WillRetry is true when a failure is followed by another attempt.
	WillRetry bool
	// Tasks were claimed for the reporting worker by eager dispatch
	// (ReportParams.Next).
	Tasks []*Task
}

// CompleteTask records a task's result durably before it answers. With
// r.Next, the tasks the result makes ready that r.Next asks for are claimed
// for the worker in the result's own commit (eager dispatch, dispatch.go) and
// answered with it.
func (e *Engine) CompleteTask(ctx context.Context, r ReportParams) (*ReportResult, error) {
	return reportComplete(ctx, e, r)
}

// reportComplete takes a worker's result: CompleteTask.
func reportComplete(ctx context.Context, e *Engine, r ReportParams) (*ReportResult, error) {
	if err := checkOutput(r.Output, e.cfg.InlineResultLimit); err != nil {
		return nil, err
	}
	if err := checkNext(r); err != nil {
		return nil, err
	}
	eager := eagerSlot(ctx, e, r.Next)
	res, err := report(ctx, e, r, "completed", func(ch *change, t *record.Task, a *definition.Action, st *runstate.StepState) error {
		ch.eager = eager
		switch t.Kind {
		case TaskCompensation:
			return ch.rules().FinishCompensation(a, st, true, nil)
		case TaskVerify:
			return fault.ClaimLost(t.TaskID, t.RunID) // a verify task is answered with ReportVerification
		}
		if st.Reconcile {
			ch.rules().RecordRecon(a, st, decide.Recon{Status: decide.ReconCompleted, Result: r.Output, Key: r.ReconciliationKey})
		}
		return ch.rules().SucceedAttempt(a, st, decide.Attempt{Outcome: runstate.AttemptSucceeded, Output: r.Output,
			Artifacts: r.Artifacts, WorkerID: r.WorkerID, CorrelationID: r.CorrelationID})
	})
	res, err = answerEager(e, eager, res, err)
	if res != nil && len(res.Tasks) > 0 {
		noteHanded(e, r.Next.withDefaults(), res.Tasks)
	}
	return res, err
}

// checkNext refuses a request for next tasks that is not the reporting
// worker's, or that would wait.
func checkNext(r ReportParams) error {
	switch {
	case r.Next == nil:
		return nil
	case r.Next.WorkerID != r.WorkerID:
		return fault.Invalid(fault.Violation("next_tasks.worker_id", "next_tasks.worker", "next_tasks.worker_id must equal worker_id"))
	case r.Next.Wait != 0:
		return fault.Invalid(fault.Violation("next_tasks.wait_ms", "next_tasks.no_wait", "next_tasks.wait_ms must be 0: a completion never waits for tasks"))
	}
	return nil
}

// eagerSlot answers the hand-off slot for a reporting worker's next tasks;
// nil when it asked for none.
func eagerSlot(ctx context.Context, e *Engine, next *PollParams) *dispatch.Slot[*Task] {
	if next == nil {
		return nil
	}
	return slotFor(ctx, e, next.withDefaults())
}

// answerEager adds to a report's answer the tasks eager dispatch claimed for
// the worker. A claim is only ever made by a decision that committed, and a
// committed claim is answered, whatever else the report met — unless the
// call has ended, when they are given back.
func answerEager(e *Engine, s *dispatch.Slot[*Task], res *ReportResult, err error) (*ReportResult, error) {
	if s == nil {
		return res, err
	}
	tasks := e.dispatch.Close(s)
	if len(tasks) == 0 {
		return res, err
	}
	if s.Context().Err() != nil {
		return nil, e.dispatch.Undelivered(s, tasks) // dispatch.go; the result itself is recorded
	}
	if err != nil {
		e.log.Warn("a report failed after its eager claims committed; answering the tasks claimed", slog.String("error", err.Error()))
	}
	if res == nil {
		res = &ReportResult{}
	}
	res.Tasks = tasks
	return res, nil
}

// FailTask records a task's failure; the action's policy decides what follows.
func (e *Engine) FailTask(ctx context.Context, r ReportParams) (*ReportResult, error) {
	return reportFail(ctx, e, r)
}

// reportFail takes a worker's failure: FailTask.
func reportFail(ctx context.Context, e *Engine, r ReportParams) (*ReportResult, error) {
	stepErr := &runstate.StepError{Class: definition.NormalizeClass(r.ErrorClass), Code: r.Code, Message: r.Message}
	var willRetry bool
	res, err := report(ctx, e, r, "failed", func(ch *change, t *record.Task, a *definition.Action, st *runstate.StepState) error {
		switch t.Kind {
		case TaskCompensation:
			return ch.rules().FinishCompensation(a, st, false, stepErr)
		case TaskVerify:
			return ch.rules().VerifierUnavailable(a, st, "failed")
		}
		if st.Reconcile {
			status := decide.ReconFailed
			if r.SideEffectPossible {
				status = decide.ReconIndeterminate
			}
			ch.rules().RecordRecon(a, st, decide.Recon{Status: status, Err: stepErr, Key: r.ReconciliationKey})
		}
		keepHeartbeatDetails(st, t)
		if err := ch.rules().FailAttempt(a, st, decide.Attempt{Outcome: runstate.AttemptFailed, Err: stepErr, WorkerID: r.WorkerID,
			CorrelationID: r.CorrelationID, RetryAfter: r.RetryAfter}); err != nil {
			return err
		}
		willRetry = st.TaskID == "" && !st.NextAttemptAt.IsZero()
		return nil
	})
	if res != nil {
		res.WillRetry = willRetry
	}
	return res, err
}

// keepHeartbeatDetails keeps, for the step's next engine attempt, the
// details of the last heartbeat of an activity attempt that ends: its own
// when it sent any, else those of the attempts before it
// (docs/semantics.md#heartbeat-details).
func keepHeartbeatDetails(st *runstate.StepState, t *record.Task) {
	if t.Kind == TaskActivity && len(t.HeartbeatDetails) > 0 {
		st.HeartbeatDetails = t.HeartbeatDetails
	}
}

// checkJSON enforces the inline limit on a JSON value a worker sends
// (docs/semantics.md#artifacts-and-secrets), naming its field; hint, when
// not empty, says what to do instead.
func checkJSON(v json.RawMessage, field string, limit int, hint string) error {
	if len(v) > limit {
		msg := fmt.Sprintf("%s is %d bytes, over the inline limit of %d", field, len(v), limit)
		if hint != "" {
			msg += "; " + hint
		}
		return fault.PayloadTooLarge(msg,
			fault.Violation(field, field+".max_bytes", "%s is %d bytes, over the inline limit of %d", field, len(v), limit))
	}
	if len(v) > 0 && !json.Valid(v) {
		return fault.Invalid(fault.Violation(field, field+".json", "%s must be valid JSON", field))
	}
	return nil
}

// checkOutput enforces the inline result limit (docs/semantics.md#artifacts-and-secrets).
func checkOutput(out json.RawMessage, limit int) error {
	return checkJSON(out, "output", limit, "send it as an artifact reference")
}

// report applies a worker's report on the claim its token names. A report
// with the claim's token after the claim was reported the same way is a
// duplicate and changes nothing; any other stale report is refused.
func report(ctx context.Context, e *Engine, r ReportParams, result string,
	apply func(*change, *record.Task, *definition.Action, *runstate.StepState) error) (*ReportResult, error) {
	taskID, err := parseToken(r.Token)
	if err != nil {
		return nil, err
	}
	// What the decision's steps share, in one allocation rather than one
	// per variable its closures capture.
	rc := &struct {
		tenantID, token string
		t               *record.Task
		version         uint64
		cached          bool
		answer          *ReportResult
	}{tenantID: r.TenantID, token: r.Token}
	_, err = e.commitDecision(ctx, decision{
		actor: decide.WorkerActor(r.WorkerID),
		prepare: func(ctx context.Context, fresh bool) (string, bool, error) {
			t, version, cached, err := e.records.ClaimedTask(ctx, taskID, rc.token, fresh)
			rc.t, rc.version, rc.cached = t, version, cached
			switch {
			case errors.Is(err, store.ErrNotFound):
				return "", false, fault.ClaimLost(taskID, "")
			case err != nil:
				return "", false, err
			case t.TenantID != rc.tenantID:
				return "", false, fault.ClaimLost(taskID, "")
			case t.State == record.TaskDone && t.Token == rc.token && t.Result == result:
				rc.answer = &ReportResult{Duplicate: true}
				return "", true, nil
			case t.State != record.TaskClaimed || t.Token != rc.token:
				return "", false, fault.ClaimLost(taskID, t.RunID)
			}
			return t.RunID, false, nil
		},
		decide: func(ch *change) error {
			key := record.TaskKey(taskID) // its condition's and its write's
			ch.require(store.IfVersion(key, rc.version))
			st := decide.StepOfTask(ch.state, rc.t.ActionID, taskID)
			if st == nil {
				return fault.ClaimLost(taskID, rc.t.RunID)
			}
			t := rc.t.Fresh()
			ch.finishTask(key, t, result)
			return apply(ch, t, ch.run.Action(t.ActionID), st)
		},
		lostRace: func(err error) bool {
			if conflictOn(err, record.TaskKey(taskID)) || (rc.cached && CodeOf(err) == CodeTaskClaimLost) {
				e.records.ForgetTask(taskID) // a heartbeat, a timer or another engine changed the task: look again
				return true
			}
			return false
		},
		contended: func() error { return fault.Contended("", taskID) },
	})
	if err == nil || CodeOf(err) == CodeTaskClaimLost {
		e.dispatch.Pollers.Reported(r.Token) // no longer in flight (pollers.go)
	}
	switch {
	case err != nil:
		return nil, err
	case rc.answer != nil:
		return rc.answer, nil
	}
	return &ReportResult{}, nil
}

// finishTask marks a claimed task done, written at key (its TaskKey), and
// clears its timers.
func (c *recorder) finishTask(key []byte, t *record.Task, result string) {
	c.clearTimer(t.Deadline, record.TimerAttempt, t.TaskID)
	if !t.HeartbeatDue.IsZero() {
		c.clearTimer(t.HeartbeatDue, record.TimerHeartbeat, t.TaskID)
	}
	t.State, t.Result = record.TaskDone, result
	c.put(key, t)
	c.observeAttemptEnd(t, result)
}

// HeartbeatResult answers a heartbeat.
type HeartbeatResult struct {
	CancelRequested bool
	Deadline        time.Time
}

// HeartbeatParams names the claim a worker's heartbeat keeps alive.
type HeartbeatParams struct {
	TenantID string
	// Token is the claim's token, as the task carried it.
	Token string
	// Details are the activity's progress, JSON; nil keeps those the claim
	// has (docs/semantics.md#heartbeat-details).
	Details json.RawMessage
}

// HeartbeatTask keeps a claim alive. It touches only the task record; the
// heartbeat timer, when it fires, looks at the last heartbeat.
func (e *Engine) HeartbeatTask(ctx context.Context, p HeartbeatParams) (*HeartbeatResult, error) {
	return reportHeartbeat(ctx, e, p)
}

// reportHeartbeat keeps a claim alive: HeartbeatTask.
func reportHeartbeat(ctx context.Context, e *Engine, p HeartbeatParams) (*HeartbeatResult, error) {
	tenantID, token := p.TenantID, p.Token
	taskID, err := parseToken(token)
	if err != nil {
		return nil, err
	}
	if err := checkJSON(p.Details, "details", e.cfg.InlineResultLimit, ""); err != nil {
		return nil, err
	}
	var (
		t       *record.Task
		version uint64
		answer  *HeartbeatResult
	)
	_, err = e.commitDecision(ctx, decision{
		noRules: true,
		prepare: func(ctx context.Context, _ bool) (string, bool, error) {
			var err error
			t, version, err = e.records.LoadTask(ctx, taskID)
			switch {
			case errors.Is(err, store.ErrNotFound) || (err == nil && t.TenantID != tenantID):
				return "", false, fault.ClaimLost(taskID, "")
			case err != nil:
				return "", false, err
			case t.State != record.TaskClaimed || t.Token != token:
				answer = &HeartbeatResult{CancelRequested: true}
				return "", true, nil
			}
			return t.RunID, false, nil
		},
		decide: func(ch *change) error {
			if ch.state.Status.Terminal() {
				answer = &HeartbeatResult{CancelRequested: true, Deadline: t.Deadline}
				return nil
			}
			answer = &HeartbeatResult{Deadline: t.Deadline}
			t := t.Fresh()
			t.HeartbeatAt = ch.now
			if len(p.Details) > 0 {
				t.HeartbeatDetails = p.Details
			}
			ch.require(store.IfVersion(record.TaskKey(taskID), version))
			ch.put(record.TaskKey(taskID), t)
			return nil
		},
		lostRace:  func(err error) bool { return conflictOn(err, record.TaskKey(taskID)) },
		contended: func() error { return fault.Contended("", taskID) },
	})
	if err != nil {
		return nil, err
	}
	return answer, nil
}
