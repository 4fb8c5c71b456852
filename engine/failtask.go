package engine

import (
	"context"

	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/engine/internal/decide"
	"github.com/weft-dev/weft/engine/internal/record"
	"github.com/weft-dev/weft/engine/runstate"
)

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
