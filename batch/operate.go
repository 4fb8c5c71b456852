package batch

import (
	"context"

	"github.com/weft-dev/weft/engine"
)

// result is how the operation went on one run.
type result struct {
	Outcome       Outcome
	Code, Message string
}

// signalID is the id every run's signal of a batch carries: the engine
// accepts it once per run, so acting on a run again after a crash answers
// the first acceptance (see the package doc).
func signalID(batchID string) string { return "batch:" + batchID }

// operate acts on one run of the batch through the engine's call for the
// operation. A refusal for the run's state is the run's outcome; a
// transient failure is answered as an error, to act on the run again later.
// attempted says a delete of the run was sent before (so a run found gone
// was deleted by it).
func (b *Batches) operate(ctx context.Context, r *record, m *member, attempted bool) (result, error) {
	id := signalID(r.BatchID)
	p := engine.ControlParams{TenantID: r.TenantID, RunID: m.RunID, SignalID: &id, Reason: r.Reason, Actor: r.CreatedBy}
	var err error
	switch r.Operation {
	case OpCancel:
		p.Compensate = r.Compensate
		_, err = b.runs.CancelRun(ctx, p)
	case OpPause:
		_, err = b.runs.PauseRun(ctx, p)
	case OpResume:
		_, err = b.runs.ResumeRun(ctx, p)
	case OpRerunFrom:
		p.ActionID = r.FromStep
		_, err = b.runs.RerunRun(ctx, p)
	case OpRetryStep:
		p.ActionID = r.ActionID
		_, err = b.runs.RetryStep(ctx, p)
	case OpSignal:
		_, err = b.runs.SignalRun(ctx, engine.SignalParams{TenantID: r.TenantID, RunID: m.RunID, SignalName: r.SignalName,
			SignalID: &id, Payload: r.Payload, Actor: r.CreatedBy})
	case OpDelete:
		_, err = b.runs.DeleteRun(ctx, engine.DeleteRunParams{TenantID: r.TenantID, RunID: m.RunID, Actor: r.CreatedBy})
		if attempted && engine.CodeOf(err) == engine.CodeNotFound {
			err = nil // deleted by the attempt before a crash
		}
	}
	return classify(ctx, err)
}

// classify answers a run's outcome from its call's error: none is
// SUCCEEDED (a duplicate too: the batch's own earlier acceptance), a
// refusal for the run's state or identity is FAILED with its code and
// message (which carry no payload), and anything transient is an error.
func classify(ctx context.Context, err error) (result, error) {
	if err == nil {
		return result{Outcome: OutcomeSucceeded}, nil
	}
	if ctx.Err() != nil {
		return result{}, ctx.Err()
	}
	switch code := engine.CodeOf(err); code {
	case engine.CodeUnavailable, engine.CodeInternal, engine.CodeSignalAcceptanceIndeterminate, engine.CodeResourceExhausted:
		return result{}, err
	default:
		return result{Outcome: OutcomeFailed, Code: string(code), Message: err.Error()}, nil
	}
}
