package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/weft-dev/weft/engine/definition"
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
	// (TaskReport.Next).
	Tasks []*Task
}

// CompleteTask records a task's result durably before it answers. With
// r.Next, the tasks the result makes ready that r.Next asks for are claimed
// for the worker in the result's own commit (eager dispatch, handoff.go) and
// answered with it.
func (e *Engine) CompleteTask(ctx context.Context, r TaskReport) (*ReportResult, error) {
	if err := e.checkOutput(r.Output); err != nil {
		return nil, err
	}
	if err := checkNext(r); err != nil {
		return nil, err
	}
	eager := e.eagerSlot(ctx, r.Next)
	res, err := e.report(ctx, r, "completed", func(ch *change, t *taskRecord, a *definition.Action, st *runstate.StepState) {
		ch.eager = eager
		res := attemptResult{outcome: runstate.AttemptSucceeded, output: r.Output, artifacts: r.Artifacts, workerID: r.WorkerID,
			correlationID: r.CorrelationID}
		switch t.Kind {
		case TaskCompensation:
			ch.finishCompensationAttempt(a, st, true, nil)
		case TaskVerify:
			ch.err = claimLost(t.TaskID, t.RunID) // a verify task is answered with ReportVerification
		default:
			if st.Reconcile {
				ch.recordRecon(a, st, reconCompleted, r.Output, nil, r.ReconciliationKey, "")
			}
			ch.succeedAttempt(a, st, res)
		}
	})
	return e.answerEager(eager, res, err)
}

// checkNext refuses a request for next tasks that is not the reporting
// worker's, or that would wait.
func checkNext(r TaskReport) error {
	switch {
	case r.Next == nil:
		return nil
	case r.Next.WorkerID != r.WorkerID:
		return invalid(violation("next_tasks.worker_id", "next_tasks.worker", "next_tasks.worker_id must equal worker_id"))
	case r.Next.Wait != 0:
		return invalid(violation("next_tasks.wait_ms", "next_tasks.no_wait", "next_tasks.wait_ms must be 0: a completion never waits for tasks"))
	}
	return nil
}

// eagerSlot answers the hand-off slot for a reporting worker's next tasks;
// nil when it asked for none.
func (e *Engine) eagerSlot(ctx context.Context, next *PollParams) *handOffSlot {
	if next == nil {
		return nil
	}
	return e.wake.handOffs.slotFor(ctx, next.withDefaults())
}

// answerEager adds to a report's answer the tasks eager dispatch claimed for
// the worker. A claim is only ever made by a decision that committed, and a
// committed claim is answered, whatever else the report met — unless the
// call has ended, when they are given back.
func (e *Engine) answerEager(s *handOffSlot, res *ReportResult, err error) (*ReportResult, error) {
	if s == nil {
		return res, err
	}
	tasks := e.wake.handOffs.close(s)
	if len(tasks) == 0 {
		return res, err
	}
	if s.ctx.Err() != nil {
		return nil, e.undelivered(s.ctx, tasks) // undelivered.go; the result itself is recorded
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
func (e *Engine) FailTask(ctx context.Context, r TaskReport) (*ReportResult, error) {
	stepErr := &runstate.StepError{Class: definition.NormalizeClass(r.ErrorClass), Code: r.Code, Message: r.Message}
	var willRetry bool
	res, err := e.report(ctx, r, "failed", func(ch *change, t *taskRecord, a *definition.Action, st *runstate.StepState) {
		switch t.Kind {
		case TaskCompensation:
			ch.finishCompensationAttempt(a, st, false, stepErr)
			return
		case TaskVerify:
			st.TaskID, st.Verifying = "", false
			ch.failReconciled(a, st, definition.ErrorReconciliationIndeterminate, "verifier unavailable: the verify task failed")
			return
		}
		if st.Reconcile {
			status := reconFailed
			if r.SideEffectPossible {
				status = reconIndeterminate
			}
			ch.recordRecon(a, st, status, nil, stepErr, r.ReconciliationKey, "")
		}
		ch.failAttempt(a, st, attemptResult{outcome: runstate.AttemptFailed, err: stepErr, workerID: r.WorkerID,
			correlationID: r.CorrelationID})
		willRetry = st.TaskID == "" && !st.NextAttemptAt.IsZero()
	})
	if res != nil {
		res.WillRetry = willRetry
	}
	return res, err
}

// checkOutput enforces the inline result limit (spec 004 §2).
func (e *Engine) checkOutput(out json.RawMessage) error {
	if len(out) > e.cfg.InlineResultLimit {
		return &Error{Code: CodePayloadTooLarge,
			Message: fmt.Sprintf("output is %d bytes, over the inline limit of %d; send it as an artifact reference", len(out), e.cfg.InlineResultLimit),
			Violations: []FieldViolation{violation("output", "output.max_bytes",
				"output is %d bytes, over the inline limit of %d", len(out), e.cfg.InlineResultLimit)}}
	}
	if len(out) > 0 && !json.Valid(out) {
		return invalid(violation("output", "output.json", "output must be valid JSON"))
	}
	return nil
}

// report applies a worker's report on the claim its token names. A report
// with the claim's token after the claim was reported the same way is a
// duplicate and changes nothing; any other stale report is refused.
func (e *Engine) report(ctx context.Context, r TaskReport, result string,
	apply func(*change, *taskRecord, *definition.Action, *runstate.StepState)) (*ReportResult, error) {
	taskID, err := parseToken(r.Token)
	if err != nil {
		return nil, err
	}
	for range maxMutateRetries {
		t, version, cached, err := e.claimedTask(ctx, taskID, r.Token) // taskcache.go
		if errors.Is(err, store.ErrNotFound) {
			return nil, claimLost(taskID, "")
		}
		if err != nil {
			return nil, err
		}
		if t.TenantID != r.TenantID {
			return nil, claimLost(taskID, "")
		}
		if t.State == taskDone && t.Token == r.Token && t.Result == result {
			return &ReportResult{Duplicate: true}, nil
		}
		if t.State != taskClaimed || t.Token != r.Token {
			return nil, claimLost(taskID, t.RunID)
		}
		_, err = e.mutate(ctx, t.RunID, "activity-worker:"+r.WorkerID, func(ch *change) error {
			ch.require(store.IfVersion(taskKey(taskID), version))
			st := ch.state.Step(t.ActionID)
			if st == nil || (st.TaskID != taskID && st.CompTaskID != taskID) {
				return claimLost(taskID, t.RunID)
			}
			t := t.fresh()
			ch.finishTask(t, result)
			apply(ch, t, ch.run.action(t.ActionID), st)
			return nil
		})
		if conflictOn(err, taskKey(taskID)) || (cached && CodeOf(err) == CodeTaskClaimLost) {
			e.tasks.remove(taskID)
			continue // a heartbeat, a timer or another engine changed the task: look again
		}
		if err != nil {
			return nil, err
		}
		return &ReportResult{}, nil
	}
	return nil, &Error{Code: CodeUnavailable, Message: "task " + taskID + " is contended; retry"}
}

// finishTask marks a claimed task done and clears its timers.
func (c *change) finishTask(t *taskRecord, result string) {
	c.clearTimer(t.Deadline, timerAttempt, t.TaskID)
	if !t.HeartbeatDue.IsZero() {
		c.clearTimer(t.HeartbeatDue, timerHeartbeat, t.TaskID)
	}
	t.State, t.Result = taskDone, result
	c.put(taskKey(t.TaskID), t)
}

func claimLost(taskID, runID string) *Error {
	return &Error{Code: CodeTaskClaimLost, RunID: runID,
		Message: "task " + taskID + " is no longer claimed by this token (timed out, cancelled or already reported)"}
}

// HeartbeatResult answers a heartbeat.
type HeartbeatResult struct {
	CancelRequested bool
	Deadline        time.Time
}

// HeartbeatTask keeps a claim alive. It touches only the task record; the
// heartbeat timer, when it fires, looks at the last heartbeat.
func (e *Engine) HeartbeatTask(ctx context.Context, tenantID, token string) (*HeartbeatResult, error) {
	taskID, err := parseToken(token)
	if err != nil {
		return nil, err
	}
	for range maxMutateRetries {
		t, version, err := e.loadTask(ctx, taskID)
		if errors.Is(err, store.ErrNotFound) || (err == nil && t.TenantID != tenantID) {
			return nil, claimLost(taskID, "")
		}
		if err != nil {
			return nil, err
		}
		if t.State != taskClaimed || t.Token != token {
			return &HeartbeatResult{CancelRequested: true}, nil
		}
		state, _, err := e.loadCheckpoint(ctx, t.RunID)
		if err != nil {
			return nil, err
		}
		if state.Status.Terminal() {
			return &HeartbeatResult{CancelRequested: true, Deadline: t.Deadline}, nil
		}
		t.HeartbeatAt = e.now()
		body, _ := json.Marshal(t)
		unlock := e.lock(t.RunID)
		_, err = e.commit(ctx, &store.Batch{
			Conditions: []store.Condition{store.IfVersion(taskKey(taskID), version)},
			Ops:        []store.Op{store.Put(taskKey(taskID), body)},
		})
		e.tasks.remove(taskID) // the cached record, if any, is no longer current
		unlock()
		if conflictOn(err, taskKey(taskID)) || errors.Is(err, store.ErrOutcomeUnknown) {
			continue
		}
		if err != nil {
			return nil, err
		}
		return &HeartbeatResult{Deadline: t.Deadline}, nil
	}
	return nil, &Error{Code: CodeUnavailable, Message: "task " + taskID + " is contended; retry"}
}
