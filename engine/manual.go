package engine

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/engine/runstate"
	"github.com/weft-dev/weft/store"
)

// ManualCompletionParams is the manual completion of docs/semantics.md#manual-completion.
type ManualCompletionParams struct {
	TenantID        string
	RunID           string
	ActionID        string
	CompletionToken string
	Outcome         runstate.ManualOutcome
	// ActorUserID is the person completing the action, as the caller
	// declared; recorded beside Principal.
	ActorUserID string
	// Principal is the authenticated principal the call runs as (the bearer
	// token's name); empty when the server authenticates nobody. Separation
	// of duties is decided on it (docs/semantics.md#separation-of-duties).
	Principal    string
	CompletedAt  time.Time
	Notes        string
	EvidenceRefs []string
	Output       json.RawMessage
}

// ManualCompletionResult answers a manual completion.
type ManualCompletionResult struct {
	Result    runstate.ManualResult
	Duplicate bool
}

// SeparationOfDuties is the default completion policy: the principal
// completing a manual action may not be the one that submitted the run. It is
// decided on the authenticated principal, never on the declared actor, which
// a caller can write freely; only a server that authenticates nobody (where
// Principal is empty) falls back on the declared actor
// (docs/semantics.md#separation-of-duties).
func SeparationOfDuties(_ context.Context, run *RunInfo, req *ManualCompletionParams) error {
	if run.SubmittedBy != "" && req.completedBy() == run.SubmittedBy {
		return errPermissionDenied(run.RunID, req.ActionID, "separation of duties: the run's submitter may not complete its manual actions")
	}
	return nil
}

// completedBy names who completes: the authenticated principal, or the
// declared actor on a server that authenticates nobody.
func (m *ManualCompletionParams) completedBy() string { return completer(m.Principal, m.ActorUserID) }

func completer(principal, actor string) string {
	if principal != "" {
		return principal
	}
	return actor
}

// openManualWait makes a step wait for a person, with a fresh opaque token.
func (c *change) openManualWait(a *definition.Action, st *runstate.StepState) error {
	if err := c.setStep(st, runstate.StepWaitingManual); err != nil {
		return err
	}
	st.CompletionToken, st.Manual = randomToken(), nil
	if st.StartedAt.IsZero() {
		st.StartedAt = c.now
	}
	data := runstate.EventData{Status: string(runstate.StepWaitingManual), CompletionToken: st.CompletionToken, Output: st.Output}
	if t := a.ManualTimeout.D(); t > 0 {
		data.Deadline = c.now.Add(t)
		c.setTimer(timerRecord{RunID: c.run.RunID, Kind: timerWait, Ref: st.ActionID, Due: data.Deadline})
	}
	c.emit(runstate.EvStepWaiting, st.ActionID, st.LogicalAttempt, 0, data)
	return nil
}

// clearWaitTimer removes a wait's timeout once the wait ends.
func (c *recorder) clearWaitTimer(a *definition.Action, st *runstate.StepState) {
	var t definition.Duration
	if a.WaitForSignal != nil {
		t = a.WaitForSignal.Timeout
	} else {
		t = a.ManualTimeout
	}
	if t > 0 && !st.StartedAt.IsZero() {
		c.clearTimer(st.StartedAt.Add(t.D()), timerWait, st.ActionID)
	}
}

// waitTimedOut fails a manual or signal wait that outlived its timeout.
func (c *change) waitTimedOut(actionID string) error {
	st, a := c.state.Step(actionID), c.run.action(actionID)
	if st == nil || (st.Status != runstate.StepWaitingManual && st.Status != runstate.StepWaitingSignal) {
		return nil
	}
	if err := c.failStep(a, st, &runstate.StepError{Class: definition.ErrorTimeout, Message: "wait exceeded its timeout"}); err != nil {
		return err
	}
	return c.advance()
}

// CompleteManualAction applies docs/semantics.md#manual-completion: idempotent on (run, action,
// token), with duplicates recognised before the state check — also one
// accepted while this call waited its turn, so concurrent retries all get the
// original result — then the completion policy, then the transition, with the
// token matched to the open wait. A refusal for the run's state, the token or
// the policy is logged as SignalRejected.
func (e *Engine) CompleteManualAction(ctx context.Context, m ManualCompletionParams) (*ManualCompletionResult, error) {
	run, err := e.runFor(ctx, m.TenantID, m.RunID)
	if err != nil {
		return nil, err
	}
	if len(m.Output) > 0 {
		if err := checkOutput(m.Output, e.cfg.InlineResultLimit); err != nil {
			return nil, err
		}
	}
	key := manualCompletionKey(m.RunID, m.ActionID, m.CompletionToken)
	if prior, err := e.priorManual(ctx, key); prior != nil || err != nil {
		return prior, err
	}
	denied := e.cfg.CompletionPolicy(ctx, run.info(), &m)
	if denied != nil && !isRejection(denied) {
		return nil, denied
	}
	var result runstate.ManualResult
	var rejected error
	_, err = e.mutate(ctx, m.RunID, "operator:"+m.completedBy(), func(ch *change) error {
		rejected = nil // a decision made again decides afresh
		if _, err := ch.e.store.Get(ch.ctx, key); err == nil {
			return errDuplicateManual // accepted while this request waited its turn
		}
		st := ch.state.Step(m.ActionID)
		if st == nil {
			return noAction(m.RunID, m.ActionID)
		}
		if rejected = manualRefusal(st, m, denied); rejected != nil {
			ch.rejectManual(m, rejected)
			return nil
		}
		result = runstate.ManualResult{RunID: m.RunID, ActionID: m.ActionID, CompletionToken: m.CompletionToken,
			Outcome: m.Outcome, ActorUserID: m.ActorUserID, AcceptedAt: ch.now, Principal: m.Principal,
			Notes: m.Notes, EvidenceRefs: m.EvidenceRefs}
		ch.require(store.IfAbsent(key))
		ch.put(key, result)
		return ch.applyManual(st, result, m.Output)
	})
	if errors.Is(err, errDuplicateManual) || conflictOn(err, key) {
		return e.priorManual(ctx, key)
	}
	if err == nil && rejected != nil {
		err = rejected
	}
	if err != nil {
		return nil, err
	}
	return &ManualCompletionResult{Result: result}, nil
}

// errDuplicateManual ends a decision that found the completion already accepted.
var errDuplicateManual = errors.New("manual completion already accepted")

// manualRefusal answers why a manual completion is refused, or nil: the
// completion policy's denial, a step that is not waiting for a person, or a
// token that is not the open wait's.
func manualRefusal(st *runstate.StepState, m ManualCompletionParams, denied error) error {
	switch {
	case denied != nil:
		return denied
	case st.Status != runstate.StepWaitingManual:
		return errIllegalTransition(stepMove(m.RunID, m.ActionID, st.Status, runstate.StepStatus(m.Outcome)))
	case st.CompletionToken != m.CompletionToken:
		return errOperationConflict(m.RunID, m.ActionID, "completion_token does not match the open wait of action "+m.ActionID)
	}
	return nil
}

// rejectManual logs a refused manual completion against its step.
func (c *recorder) rejectManual(m ManualCompletionParams, err error) {
	c.state.SignalCount++
	c.emit(runstate.EvSignalRejected, m.ActionID, c.state.SignalCount, 0, runstate.EventData{SignalKind: runstate.SignalManual,
		Actor: m.ActorUserID, Principal: m.Principal, Reason: err.Error()})
}

// priorManual answers a stored manual completion, or nil.
func (e *Engine) priorManual(ctx context.Context, key []byte) (*ManualCompletionResult, error) {
	item, err := e.store.Get(ctx, key)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var r runstate.ManualResult
	if err := json.Unmarshal(item.Value, &r); err != nil {
		return nil, err
	}
	return &ManualCompletionResult{Result: r, Duplicate: true}, nil
}

// applyManual is the transition a manual completion makes; the step keeps
// the accepted result (who, the principal, notes and evidence).
func (c *change) applyManual(st *runstate.StepState, r runstate.ManualResult, output json.RawMessage) error {
	a := c.run.action(st.ActionID)
	c.state.SignalCount++
	c.emit(runstate.EvSignalAccepted, st.ActionID, c.state.SignalCount, 0, runstate.EventData{SignalKind: runstate.SignalManual,
		CompletionToken: r.CompletionToken, ManualOutcome: string(r.Outcome), Actor: r.ActorUserID, AcceptedAt: c.now,
		Principal: r.Principal, Notes: r.Notes, EvidenceRefs: r.EvidenceRefs})
	st.Manual = &r
	c.clearWaitTimer(a, st)
	by := completer(r.Principal, r.ActorUserID)
	switch r.Outcome {
	case runstate.ManualSucceeded:
		out := output
		if len(out) == 0 {
			out = st.Output
		}
		if err := c.succeedStep(st, out, st.Artifacts, "manual:"+by); err != nil {
			return err
		}
	case runstate.ManualFailed:
		if err := c.failStep(a, st, &runstate.StepError{Class: definition.ErrorUnknown, Code: "manual_failed", Message: "completed as failed by " + by}); err != nil {
			return err
		}
	default:
		if err := c.cancelStep(st, "cancelled by "+by); err != nil {
			return err
		}
		if a.OnFailure != definition.OnFailureSkip && c.state.Failing == "" {
			c.state.Failing = st.ActionID
		}
	}
	return c.advance()
}
