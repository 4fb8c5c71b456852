package engine

import (
	"context"
	"encoding/json"
	"strconv"
	"time"

	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/engine/internal/decide"
	"github.com/weft-dev/weft/engine/internal/fault"
	"github.com/weft-dev/weft/engine/internal/record"
	"github.com/weft-dev/weft/engine/keyspace"
	"github.com/weft-dev/weft/engine/runstate"
)

// reconRecord is the reconciliation record of docs/semantics.md#reconciliation.
type reconRecord struct {
	FormatVersion  int                 `json:"version"`
	WorkflowID     string              `json:"workflow_id"`
	ActivityName   string              `json:"activity_name"`
	OperationID    string              `json:"operation_id"`
	IdempotencyKey string              `json:"idempotency_key,omitempty"`
	Status         decide.ReconStatus  `json:"status"`
	Result         json.RawMessage     `json:"result,omitempty"`
	Error          *runstate.StepError `json:"error,omitempty"`
	Diagnostic     string              `json:"diagnostic,omitempty"`
	CreatedAt      time.Time           `json:"created_at"`
	UpdatedAt      time.Time           `json:"updated_at"`
}

// reconKey is the record's key: its own additive prefix, scoped by workflow,
// activity and operation; the worker's idempotency key is in the record.
func reconKey(runID, activity, operationID string) []byte {
	return keyspace.Recon.Key(runID, activity, operationID)
}

// operationID is the scheduled operation's identifier (operationId of
// docs/semantics.md#reconciliation), stable for an action's logical attempt.
func operationID(runID, actionID string, logical int) string {
	return runID + "/" + actionID + "/" + strconv.Itoa(logical)
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
	return reportVerify(ctx, e, r)
}

// reportVerify takes a verifier's answer: ReportVerification.
func reportVerify(ctx context.Context, e *Engine, r VerifyParams) (*ReportResult, error) {
	if len(r.Result) > 0 {
		if err := checkOutput(r.Result, e.cfg.InlineResultLimit); err != nil {
			return nil, err
		}
	}
	return report(ctx, e, ReportParams{TenantID: r.TenantID, Token: r.Token, WorkerID: r.WorkerID}, "verified:"+string(r.State),
		func(ch *change, t *record.Task, a *definition.Action, st *runstate.StepState) error {
			if t.Kind != TaskVerify {
				return fault.ClaimLost(t.TaskID, t.RunID)
			}
			return ch.rules().ApplyVerify(a, st, r.State, r.Result, r.Diagnostic)
		})
}
