package decide

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/engine/runstate"
)

// openSignalWait makes a wait-for-signal step wait, consuming at once a
// matching signal that was accepted earlier.
func (c *core) openSignalWait(a *definition.Action, st *runstate.StepState) error {
	if err := c.rec.MoveStep(st, runstate.StepWaitingSignal); err != nil {
		return err
	}
	st.WaitingSignal = a.WaitForSignal.SignalName
	st.StartedAt = c.now
	data := runstate.EventData{Status: string(runstate.StepWaitingSignal), SignalName: st.WaitingSignal}
	if t := a.WaitForSignal.Timeout.D(); t > 0 {
		data.Deadline = c.now.Add(t)
		c.rec.SetTimer(Timer{Kind: TimerWait, Ref: st.ActionID, Due: data.Deadline})
	}
	c.rec.Emit(runstate.EvStepWaiting, st.ActionID, st.LogicalAttempt, 0, data)
	return c.consumeSignals()
}

// AcceptSignal queues a user signal the run accepted, with its payload, and
// hands it to a step waiting for its name. A run that has ended accepts none.
func (d *Decision) AcceptSignal(sig runstate.PendingSignal, payload json.RawMessage) error {
	if s := d.state.Status; s.Terminal() {
		return illegal(Move{RunID: d.run.ID, Status: s, From: string(s), To: "signal", Signal: sig.Name,
			Why: "run " + d.run.ID + " is " + string(s) + " and accepts no signals"})
	}
	if d.prepared.Payloads == nil {
		d.prepared.Payloads = make(map[string]json.RawMessage, 1)
	}
	d.prepared.Payloads[sig.StorageKey] = payload
	d.state.Signals = append(d.state.Signals, sig)
	if err := d.core().consumeSignals(); err != nil {
		return err
	}
	return d.core().advance()
}

// consumeSignals hands accepted signals, in acceptance order, to the steps
// waiting for their names, in dispatch order.
func (c *core) consumeSignals() error {
	s := c.state
	for _, a := range c.run.actionsInOrder() {
		st := s.Step(a.ID)
		if st.Status != runstate.StepWaitingSignal {
			continue
		}
		for i, sig := range s.Signals {
			if sig.Name != st.WaitingSignal {
				continue
			}
			payload, ok := c.prepared.Payloads[sig.StorageKey]
			if !ok {
				return fmt.Errorf("decide: run %s: the payload of signal %q was not read before the decision", c.run.ID, sig.ID)
			}
			s.Signals = append(s.Signals[:i:i], s.Signals[i+1:]...)
			c.rec.Emit(runstate.EvSignalConsumed, st.ActionID, st.LogicalAttempt, 0, runstate.EventData{SignalName: sig.Name, SignalID: sig.ID})
			c.clearWaitTimer(a, st)
			if err := c.succeedStep(st, payload, nil, "signal:"+sig.ID); err != nil {
				return err
			}
			break
		}
	}
	return nil
}

// openManualWait makes a step wait for a person, with a fresh opaque token.
func (c *core) openManualWait(a *definition.Action, st *runstate.StepState) error {
	if err := c.rec.MoveStep(st, runstate.StepWaitingManual); err != nil {
		return err
	}
	st.CompletionToken, st.Manual = RandomToken(), nil
	if st.StartedAt.IsZero() {
		st.StartedAt = c.now
	}
	data := runstate.EventData{Status: string(runstate.StepWaitingManual), CompletionToken: st.CompletionToken, Output: st.Output}
	if t := a.ManualTimeout.D(); t > 0 {
		data.Deadline = c.now.Add(t)
		c.rec.SetTimer(Timer{Kind: TimerWait, Ref: st.ActionID, Due: data.Deadline})
	}
	c.rec.Emit(runstate.EvStepWaiting, st.ActionID, st.LogicalAttempt, 0, data)
	return nil
}

// RandomToken answers an unguessable opaque token.
func RandomToken() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// clearWaitTimer removes a wait's timeout once the wait ends.
func (c *core) clearWaitTimer(a *definition.Action, st *runstate.StepState) {
	if t, ok := WaitTimer(a, st); ok {
		c.rec.ClearTimer(t)
	}
}

// WaitTimer answers the timeout timer of the step's manual or signal wait,
// if the wait has one.
func WaitTimer(a *definition.Action, st *runstate.StepState) (Timer, bool) {
	t := a.ManualTimeout
	if a.WaitForSignal != nil {
		t = a.WaitForSignal.Timeout
	}
	return Timer{Kind: TimerWait, Ref: st.ActionID, Due: st.StartedAt.Add(t.D())}, t > 0 && !st.StartedAt.IsZero()
}

// waitTimedOut fails a manual or signal wait that outlived its timeout.
func (c *core) waitTimedOut(actionID string) error {
	st, a := c.state.Step(actionID), c.run.action(actionID)
	if st == nil || (st.Status != runstate.StepWaitingManual && st.Status != runstate.StepWaitingSignal) {
		return nil
	}
	if err := c.failStep(a, st, &runstate.StepError{Class: definition.ErrorTimeout, Message: "wait exceeded its timeout"}); err != nil {
		return err
	}
	return c.advance()
}

// ApplyManual is the transition an accepted manual completion makes; the
// step keeps the accepted result (who, the principal, notes and evidence).
// by names who completed it.
func (d *Decision) ApplyManual(st *runstate.StepState, r runstate.ManualResult, by string, output json.RawMessage) error {
	a := d.run.action(st.ActionID)
	d.state.SignalCount++
	d.rec.Emit(runstate.EvSignalAccepted, st.ActionID, d.state.SignalCount, 0, runstate.EventData{SignalKind: runstate.SignalManual,
		CompletionToken: r.CompletionToken, ManualOutcome: string(r.Outcome), Actor: r.ActorUserID, AcceptedAt: d.now,
		Principal: r.Principal, Notes: r.Notes, EvidenceRefs: r.EvidenceRefs})
	st.Manual = &r
	d.core().clearWaitTimer(a, st)
	var err error
	switch r.Outcome {
	case runstate.ManualSucceeded:
		out := output
		if len(out) == 0 {
			out = st.Output
		}
		err = d.core().succeedStep(st, out, st.Artifacts, "manual:"+by)
	case runstate.ManualFailed:
		err = d.core().failStep(a, st, &runstate.StepError{Class: definition.ErrorUnknown, Code: "manual_failed", Message: "completed as failed by " + by})
	default:
		err = d.core().cancelStep(st, "cancelled by "+by)
		if err == nil && a.OnFailure != definition.OnFailureSkip && d.state.Failing == "" {
			d.state.Failing = st.ActionID
		}
	}
	if err != nil {
		return err
	}
	return d.core().advance()
}

// ManualRefusal answers why a completion of st with outcome and token is
// refused, or nil: the step is not waiting for a person, or token is not
// its open wait's (docs/semantics.md#manual-completion).
func (d *Decision) ManualRefusal(st *runstate.StepState, outcome runstate.ManualOutcome, token string) error {
	switch {
	case st.Status != runstate.StepWaitingManual:
		return illegal(StepMove(d.run.ID, st.ActionID, st.Status, runstate.StepStatus(outcome)))
	case st.CompletionToken != token:
		return refuse(Conflict, Move{RunID: d.run.ID, ActionID: st.ActionID,
			Why: "completion_token does not match the open wait of action " + st.ActionID})
	}
	return nil
}

// Rejected logs a refused signal or manual completion (SignalRejected),
// against the step it named ("" for the run); data says what was refused,
// by whom and why.
func (d *Decision) Rejected(stepID string, data runstate.EventData) {
	d.state.SignalCount++
	d.rec.Emit(runstate.EvSignalRejected, stepID, d.state.SignalCount, 0, data)
}
