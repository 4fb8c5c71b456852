package engine

import (
	"context"

	"github.com/weft-dev/weft/engine/internal/decide"
	"github.com/weft-dev/weft/engine/internal/fault"
	"github.com/weft-dev/weft/engine/runstate"
)

// ControlParams is an operator's control signal.
type ControlParams struct {
	TenantID string
	RunID    string
	ActionID string
	// SignalID, when non-nil, makes the call idempotent (the rules of docs/semantics.md#signal-idempotency).
	SignalID *string
	Reason   string
	Actor    string
	// Compensate, for CancelRun, asks for the succeeded steps to be compensated
	// before the run ends CANCELLED (docs/semantics.md#cancel-compensation).
	Compensate bool
}

// ControlResult answers a control signal.
type ControlResult struct {
	Result    AcceptedSignal
	Duplicate bool
	Run       *runstate.Snapshot
}

// control delivers a control signal idempotently, applying the rule of
// kind (package decide), and answers the run after it. A refusal is logged
// as SignalRejected and answered as the engine's coded error (refused).
func deliverControl(ctx context.Context, e *Engine, p ControlParams, kind runstate.SignalKind, apply func(*decide.Decision, decide.Control) error) (*ControlResult, error) {
	if err := validateSignalID("signal_id", p.SignalID); err != nil {
		return nil, err
	}
	c := decide.Control{ActionID: p.ActionID, Actor: p.Actor, Reason: p.Reason, Compensate: p.Compensate}
	res, err := deliverSignal(ctx, e, SignalParams{TenantID: p.TenantID, RunID: p.RunID, SignalID: p.SignalID, Actor: p.Actor,
		Compensate: p.Compensate && kind == runstate.SignalCancel},
		kind, func(ch *change, _ AcceptedSignal) error { return fault.Refused(apply(ch.rules(), c)) })
	if err != nil {
		return nil, err
	}
	snap, err := e.GetRun(ctx, GetRunParams{TenantID: p.TenantID, RunID: p.RunID})
	if err != nil {
		return nil, err
	}
	return &ControlResult{Result: res.Result, Duplicate: res.Duplicate, Run: snap}, nil
}

// ApproveRun approves a PENDING run whose definition requires approval.
func (e *Engine) ApproveRun(ctx context.Context, p ControlParams) (*ControlResult, error) {
	return deliverControl(ctx, e, p, runstate.SignalApprove, (*decide.Decision).Approve)
}

// PauseRun stops new scheduling; in-flight tasks finish, for at most
// Config.DrainTimeout (docs/semantics.md#pause-drain).
func (e *Engine) PauseRun(ctx context.Context, p ControlParams) (*ControlResult, error) {
	return deliverControl(ctx, e, p, runstate.SignalPause, func(d *decide.Decision, c decide.Control) error {
		return d.Pause(c, e.cfg.DrainTimeout)
	})
}

// ResumeRun resumes a paused run; nothing completed runs again.
func (e *Engine) ResumeRun(ctx context.Context, p ControlParams) (*ControlResult, error) {
	return deliverControl(ctx, e, p, runstate.SignalResume, (*decide.Decision).Resume)
}

// CancelRun ends a non-terminal run CANCELLED. Rejected while COMPENSATING.
// With p.Compensate, the steps that succeeded and have a hook are compensated
// first, as on failure, and the run ends CANCELLED with the rollback's outcome
// (docs/semantics.md#cancel-compensation).
func (e *Engine) CancelRun(ctx context.Context, p ControlParams) (*ControlResult, error) {
	return deliverControl(ctx, e, p, runstate.SignalCancel, (*decide.Decision).Cancel)
}

// RetryStep opens a new logical attempt for the failed step a HOLD run waits on.
func (e *Engine) RetryStep(ctx context.Context, p ControlParams) (*ControlResult, error) {
	return deliverControl(ctx, e, p, runstate.SignalRetryStep, (*decide.Decision).RetryStep)
}

// SkipStep skips a step that has not started, or the failed step a HOLD run waits on.
func (e *Engine) SkipStep(ctx context.Context, p ControlParams) (*ControlResult, error) {
	return deliverControl(ctx, e, p, runstate.SignalSkipStep, (*decide.Decision).SkipStep)
}

// RerunRun takes an ended run (COMPLETED, FAILED or CANCELLED) back to
// RUNNING from the step p.ActionID: that step and everything downstream of
// it open new logical attempts in the same run, upstream outputs are kept,
// and a step whose earlier attempt may have left a side effect is verified
// before it is dispatched again (docs/semantics.md#rerun). p.SignalID makes
// it idempotent, as every control signal.
func (e *Engine) RerunRun(ctx context.Context, p ControlParams) (*ControlResult, error) {
	if p.ActionID == "" {
		return nil, fault.Invalid(fault.Violation("from_step", "from_step.required", "from_step must name the step to rerun from"))
	}
	return deliverControl(ctx, e, p, runstate.SignalRerun, (*decide.Decision).Rerun)
}
