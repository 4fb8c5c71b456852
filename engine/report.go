package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/engine/internal/cache"
	"github.com/weft-dev/weft/engine/internal/decide"
	"github.com/weft-dev/weft/engine/internal/fault"
	"github.com/weft-dev/weft/engine/internal/record"
	"github.com/weft-dev/weft/engine/runstate"
	"github.com/weft-dev/weft/store"
)

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
		eagerTokens     []string // a duplicate completion's eager claims
	}{tenantID: r.TenantID, token: r.Token}
	_, err = commitDecision(ctx, e, decision{
		actor: decide.WorkerActor(r.WorkerID),
		prepare: func(ctx context.Context, fresh bool) (string, bool, error) {
			t, version, cached, err := e.records.ClaimedTask(ctx, taskID, rc.token, fresh)
			rc.t, rc.version, rc.cached, rc.answer, rc.eagerTokens = t, version, cached, nil, nil
			switch {
			case errors.Is(err, store.ErrNotFound):
				return "", false, fault.ClaimLost(taskID, "")
			case err != nil:
				return "", false, err
			case t.TenantID != rc.tenantID:
				return "", false, fault.ClaimLost(taskID, "")
			case t.State == record.TaskDone && t.Token == rc.token && t.Result == result:
				rc.answer = &ReportResult{Duplicate: true}
				rc.eagerTokens = t.EagerTokens
				return "", true, nil
			case t.State != record.TaskClaimed || t.Token != rc.token:
				return "", false, fault.ClaimLost(taskID, t.RunID)
			}
			return t.RunID, false, nil
		},
		decide: func(ch *change) error {
			rc.answer, rc.eagerTokens = nil, nil
			if ended := claimEnded(ch.state, rc.t); ended != "" {
				if ended != result {
					return fault.ClaimLost(taskID, rc.t.RunID)
				}
				rc.answer = &ReportResult{Duplicate: true}
				rc.eagerTokens = eagerTokensOf(ch.state, rc.t)
				return nil
			}
			key := record.TaskKey(taskID) // its condition's, and its write's when it has one
			ch.require(cache.TaskUnchanged(taskID, rc.version))
			st := decide.StepOfTask(ch.state, rc.t.ActionID, taskID)
			if st == nil {
				return fault.ClaimLost(taskID, rc.t.RunID)
			}
			t := rc.t.Fresh()
			endClaim(ch, t, result)
			if t.Kind == TaskActivity {
				releaseFlowSlot(ch, st, t.Queue)
			}
			if err := apply(ch, t, ch.run.Action(t.ActionID), st); err != nil {
				return err
			}
			finishTask(ch, key, t, result)
			return nil
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
		e.records.ForgetTask(taskID)         // a claim that ended, whether its record says so or not
	}
	switch {
	case err != nil:
		return nil, err
	case rc.answer != nil:
		if len(rc.eagerTokens) > 0 {
			giveBackEager(e, rc.eagerTokens) // completetask.go
		}
		return rc.answer, nil
	}
	return &ReportResult{}, nil
}

// endClaim ends the claim t records, as a worker's report with result
// ends it: its timers go, and an eager claim's token leaves the step whose
// completion claimed it.
func endClaim(c *change, t *record.Task, result string) {
	clearDeadline(c, t)
	if !t.HeartbeatDue.IsZero() {
		c.clearTimer(t.HeartbeatDue, record.TimerHeartbeat, t.TaskID)
	}
	dropEagerToken(c, t)
	endCheckpointClaim(c, t)
	observeAttemptEnd(c, t, result)
}

// finishTask records at key (t's TaskKey) that a report ended t's claim
// with result, once the report's rules ran: the record says done, unless
// the checkpoint they changed already says so (claimEnded), when the
// record is left claimed and nothing is written.
func finishTask(c *change, key []byte, t *record.Task, result string) {
	if claimEnded(c.state, t) == result {
		return
	}
	t.State, t.Result = record.TaskDone, result
	c.put(key, t)
}

// claimEnded answers how a worker's report ended the claim that the task
// record t shows, as the run's checkpoint s says: the record's Result when
// it is done; for a claimed record, "completed" or "failed" when its step
// no longer holds the task and the step's attempt evidence for the task's
// attempt says it succeeded or failed. Such a report wrote no task record
// (finishTask): it is the checkpoint that says the claim ended. "" when no
// report ended the claim: it is still claimed, or it ended another way
// (timed out, given back, retired), which wrote the record.
//
// It answers for activity tasks outside flow control and fairness only:
// the reports of every other kind write their record, whose readers
// (flowview.go, fair.go) list claimed records without a checkpoint.
// Every reader of a task record that acts on a claim asks it: a report
// (a duplicate), a heartbeat, a heartbeat timer, the poller's in-flight
// accounting (settledTokens) and retention.
func claimEnded(s *runstate.State, t *record.Task) string {
	switch {
	case t.State == record.TaskDone:
		return t.Result
	case t.State != record.TaskClaimed || t.Kind != TaskActivity || t.Flow != nil || t.FairKey != "":
		return ""
	}
	st := s.Step(t.ActionID)
	if st == nil || st.TaskID == t.TaskID {
		return ""
	}
	for i := len(st.Attempts) - 1; i >= 0; i-- {
		if a := &st.Attempts[i]; a.LogicalAttempt == t.LogicalAttempt && a.EngineAttempt == t.EngineAttempt {
			switch a.Outcome {
			case runstate.AttemptSucceeded:
				return "completed"
			case runstate.AttemptFailed:
				return "failed"
			}
			return ""
		}
	}
	return ""
}

// ReportParams is a worker's report on a claimed task.
type ReportParams struct {
	TenantID  string
	Token     string
	WorkerID  string
	Output    json.RawMessage
	Artifacts []runstate.ArtifactRef
	// For failures.
	ErrorClass         definition.ErrorClass
	Code               string
	Message            string
	SideEffectPossible bool
	ReconciliationKey  string
	// RetryAfter is the worker's earliest time for the next attempt, from
	// now (docs/semantics.md#retry-after).
	RetryAfter time.Duration
	// CorrelationID is the reporting call's correlation id, recorded with
	// the attempt's evidence (StepAttemptRecorded).
	CorrelationID string
	// Next, on a completion, asks for the worker's next tasks (eager
	// dispatch): the reporting worker's own, with no Wait. Nil: none.
	Next *PollParams
	// SearchAttributes, on a completion, are set on the run in the
	// result's own commit (docs/semantics.md#search-attributes).
	SearchAttributes []runstate.SearchAttribute
}

// parseToken answers the task a token names.
func parseToken(token string) (string, error) {
	i := strings.LastIndexByte(token, '#')
	if i <= 0 {
		return "", fault.InvalidArgument("task_token is not a Weft task token",
			fault.Violation("task_token", "task_token.format", "task_token is not a Weft task token"))
	}
	return token[:i], nil
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
