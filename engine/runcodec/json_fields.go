package runcodec

import (
	"strconv"

	"github.com/weft-dev/weft/engine/runstate"
)

// The JSON encoding of an event, field by field as encoding/json writes
// runstate.Event (tags, omitempty and omitzero, string escaping, times):
// a property test holds the two byte for byte together.

// appendJSONEvent appends a Event as encoding/json writes it.
func appendJSONEvent(b []byte, v *runstate.Event) ([]byte, error) {
	var err error
	b = append(b, '{')
	first := true
	b = appendJSONKey(b, &first, "\"event_type\":")
	b = appendJSONString(b, string(v.Type))
	b = appendJSONKey(b, &first, "\"event_id\":")
	b = appendJSONString(b, string(v.ID))
	b = appendJSONKey(b, &first, "\"run_id\":")
	b = appendJSONString(b, string(v.RunID))
	b = appendJSONKey(b, &first, "\"run_seq\":")
	b = strconv.AppendUint(b, v.Seq, 10)
	b = appendJSONKey(b, &first, "\"idempotency_key\":")
	b = appendJSONString(b, string(v.IdempotencyKey))
	b = appendJSONKey(b, &first, "\"emitted_at\":")
	if b, err = appendJSONTime(b, v.EmittedAt); err != nil {
		return b, err
	}
	if !v.OccurredAt.IsZero() {
		b = appendJSONKey(b, &first, "\"occurred_at\":")
		if b, err = appendJSONTime(b, v.OccurredAt); err != nil {
			return b, err
		}
	}
	b = appendJSONKey(b, &first, "\"emitted_by\":")
	b = appendJSONString(b, string(v.EmittedBy))
	b = appendJSONKey(b, &first, "\"step_id\":")
	b = appendJSONString(b, string(v.StepID))
	b = appendJSONKey(b, &first, "\"logical_attempt_id\":")
	b = strconv.AppendInt(b, int64(v.LogicalAttempt), 10)
	if v.EngineAttempt != 0 {
		b = appendJSONKey(b, &first, "\"engine_attempt_id\":")
		b = strconv.AppendInt(b, int64(v.EngineAttempt), 10)
	}
	b = appendJSONKey(b, &first, "\"plan_version\":")
	b = appendJSONString(b, string(v.PlanVersion))
	b = appendJSONKey(b, &first, "\"data\":")
	if b, err = appendJSONEventData(b, &v.Data); err != nil {
		return b, err
	}
	return append(b, '}'), nil
}

// appendJSONEventData appends a EventData as encoding/json writes it.
func appendJSONEventData(b []byte, v *runstate.EventData) ([]byte, error) {
	var err error
	b = append(b, '{')
	first := true
	if v.Status != "" {
		b = appendJSONKey(b, &first, "\"status\":")
		b = appendJSONString(b, string(v.Status))
	}
	if v.Substatus != "" {
		b = appendJSONKey(b, &first, "\"substatus\":")
		b = appendJSONString(b, string(v.Substatus))
	}
	if v.Reason != "" {
		b = appendJSONKey(b, &first, "\"reason\":")
		b = appendJSONString(b, string(v.Reason))
	}
	if v.Actor != "" {
		b = appendJSONKey(b, &first, "\"actor\":")
		b = appendJSONString(b, string(v.Actor))
	}
	if v.WorkerID != "" {
		b = appendJSONKey(b, &first, "\"worker_id\":")
		b = appendJSONString(b, string(v.WorkerID))
	}
	if v.TaskID != "" {
		b = appendJSONKey(b, &first, "\"task_id\":")
		b = appendJSONString(b, string(v.TaskID))
	}
	if v.Queue != "" {
		b = appendJSONKey(b, &first, "\"queue\":")
		b = appendJSONString(b, string(v.Queue))
	}
	if !v.NotBefore.IsZero() {
		b = appendJSONKey(b, &first, "\"not_before\":")
		if b, err = appendJSONTime(b, v.NotBefore); err != nil {
			return b, err
		}
	}
	if !v.StartedAt.IsZero() {
		b = appendJSONKey(b, &first, "\"started_at\":")
		if b, err = appendJSONTime(b, v.StartedAt); err != nil {
			return b, err
		}
	}
	if !v.CompletedAt.IsZero() {
		b = appendJSONKey(b, &first, "\"completed_at\":")
		if b, err = appendJSONTime(b, v.CompletedAt); err != nil {
			return b, err
		}
	}
	if !v.Deadline.IsZero() {
		b = appendJSONKey(b, &first, "\"deadline\":")
		if b, err = appendJSONTime(b, v.Deadline); err != nil {
			return b, err
		}
	}
	if len(v.Output) != 0 {
		b = appendJSONKey(b, &first, "\"output\":")
		if b, err = appendJSONRaw(b, v.Output); err != nil {
			return b, err
		}
	}
	if len(v.Artifacts) != 0 {
		b = appendJSONKey(b, &first, "\"artifacts\":")
		b = append(b, '[')
		for i := range v.Artifacts {
			if i > 0 {
				b = append(b, ',')
			}
			if b, err = appendJSONArtifactRef(b, &v.Artifacts[i]); err != nil {
				return b, err
			}
		}
		b = append(b, ']')
	}
	if v.Error != nil {
		b = appendJSONKey(b, &first, "\"error\":")
		if b, err = appendJSONStepError(b, v.Error); err != nil {
			return b, err
		}
	}
	if v.RunError != nil {
		b = appendJSONKey(b, &first, "\"run_error\":")
		if b, err = appendJSONRunError(b, v.RunError); err != nil {
			return b, err
		}
	}
	if v.Attempt != nil {
		b = appendJSONKey(b, &first, "\"attempt\":")
		if b, err = appendJSONAttempt(b, v.Attempt); err != nil {
			return b, err
		}
	}
	if v.WillRetry {
		b = appendJSONKey(b, &first, "\"will_retry\":")
		b = strconv.AppendBool(b, v.WillRetry)
	}
	if !v.NextAttemptAt.IsZero() {
		b = appendJSONKey(b, &first, "\"next_attempt_at\":")
		if b, err = appendJSONTime(b, v.NextAttemptAt); err != nil {
			return b, err
		}
	}
	if v.CompletionToken != "" {
		b = appendJSONKey(b, &first, "\"completion_token\":")
		b = appendJSONString(b, string(v.CompletionToken))
	}
	if v.SignalKind != "" {
		b = appendJSONKey(b, &first, "\"signal_kind\":")
		b = appendJSONString(b, string(v.SignalKind))
	}
	if v.SignalName != "" {
		b = appendJSONKey(b, &first, "\"signal_name\":")
		b = appendJSONString(b, string(v.SignalName))
	}
	if v.SignalID != "" {
		b = appendJSONKey(b, &first, "\"signal_id\":")
		b = appendJSONString(b, string(v.SignalID))
	}
	if v.SignalStorageKey != "" {
		b = appendJSONKey(b, &first, "\"signal_storage_key\":")
		b = appendJSONString(b, string(v.SignalStorageKey))
	}
	if !v.AcceptedAt.IsZero() {
		b = appendJSONKey(b, &first, "\"accepted_at\":")
		if b, err = appendJSONTime(b, v.AcceptedAt); err != nil {
			return b, err
		}
	}
	if v.ManualOutcome != "" {
		b = appendJSONKey(b, &first, "\"manual_outcome\":")
		b = appendJSONString(b, string(v.ManualOutcome))
	}
	if v.Principal != "" {
		b = appendJSONKey(b, &first, "\"principal\":")
		b = appendJSONString(b, string(v.Principal))
	}
	if v.CorrelationID != "" {
		b = appendJSONKey(b, &first, "\"correlation_id\":")
		b = appendJSONString(b, string(v.CorrelationID))
	}
	if v.Notes != "" {
		b = appendJSONKey(b, &first, "\"notes\":")
		b = appendJSONString(b, string(v.Notes))
	}
	if len(v.EvidenceRefs) != 0 {
		b = appendJSONKey(b, &first, "\"evidence_refs\":")
		b = appendJSONStrings(b, v.EvidenceRefs)
	}
	if v.InFlightTasks != 0 {
		b = appendJSONKey(b, &first, "\"in_flight_tasks\":")
		b = strconv.AppendInt(b, int64(v.InFlightTasks), 10)
	}
	if v.TimedOut {
		b = appendJSONKey(b, &first, "\"timed_out\":")
		b = strconv.AppendBool(b, v.TimedOut)
	}
	if v.NewLogicalAttempt != 0 {
		b = appendJSONKey(b, &first, "\"new_logical_attempt\":")
		b = strconv.AppendInt(b, int64(v.NewLogicalAttempt), 10)
	}
	if v.Operation != "" {
		b = appendJSONKey(b, &first, "\"operation\":")
		b = appendJSONString(b, string(v.Operation))
	}
	if v.OperationKey != "" {
		b = appendJSONKey(b, &first, "\"operation_key\":")
		b = appendJSONString(b, string(v.OperationKey))
	}
	if v.FailedActionID != "" {
		b = appendJSONKey(b, &first, "\"failed_action_id\":")
		b = appendJSONString(b, string(v.FailedActionID))
	}
	if len(v.CompensationOrder) != 0 {
		b = appendJSONKey(b, &first, "\"compensation_order\":")
		b = appendJSONStrings(b, v.CompensationOrder)
	}
	if v.CompensationOutcome != "" {
		b = appendJSONKey(b, &first, "\"compensation_outcome\":")
		b = appendJSONString(b, string(v.CompensationOutcome))
	}
	if v.Cancellation != nil {
		b = appendJSONKey(b, &first, "\"cancellation\":")
		if b, err = appendJSONCancellation(b, v.Cancellation); err != nil {
			return b, err
		}
	}
	if len(v.WaitingOn) != 0 {
		b = appendJSONKey(b, &first, "\"waiting_on\":")
		b = appendJSONStrings(b, v.WaitingOn)
	}
	if v.Source != "" {
		b = appendJSONKey(b, &first, "\"source\":")
		b = appendJSONString(b, string(v.Source))
	}
	if v.Context != nil {
		b = appendJSONKey(b, &first, "\"context\":")
		if b, err = appendJSONRunContext(b, v.Context); err != nil {
			return b, err
		}
	}
	if v.PlanID != "" {
		b = appendJSONKey(b, &first, "\"plan_id\":")
		b = appendJSONString(b, string(v.PlanID))
	}
	if v.PlanSHA256 != "" {
		b = appendJSONKey(b, &first, "\"plan_sha256\":")
		b = appendJSONString(b, string(v.PlanSHA256))
	}
	if v.RunRequestID != "" {
		b = appendJSONKey(b, &first, "\"run_request_id\":")
		b = appendJSONString(b, string(v.RunRequestID))
	}
	if v.VerifyState != "" {
		b = appendJSONKey(b, &first, "\"verify_state\":")
		b = appendJSONString(b, string(v.VerifyState))
	}
	if v.ReconciliationKey != "" {
		b = appendJSONKey(b, &first, "\"reconciliation_key\":")
		b = appendJSONString(b, string(v.ReconciliationKey))
	}
	if v.Compensate {
		b = appendJSONKey(b, &first, "\"compensate\":")
		b = strconv.AppendBool(b, v.Compensate)
	}
	if v.CancelRequested {
		b = appendJSONKey(b, &first, "\"cancel_requested\":")
		b = strconv.AppendBool(b, v.CancelRequested)
	}
	return append(b, '}'), nil
}

// appendJSONArtifactRef appends a ArtifactRef as encoding/json writes it.
func appendJSONArtifactRef(b []byte, v *runstate.ArtifactRef) ([]byte, error) {
	var err error
	b = append(b, '{')
	first := true
	b = appendJSONKey(b, &first, "\"uri\":")
	b = appendJSONString(b, string(v.URI))
	if v.Kind != "" {
		b = appendJSONKey(b, &first, "\"kind\":")
		b = appendJSONString(b, string(v.Kind))
	}
	if v.SHA256 != "" {
		b = appendJSONKey(b, &first, "\"sha256\":")
		b = appendJSONString(b, string(v.SHA256))
	}
	if v.SizeBytes != 0 {
		b = appendJSONKey(b, &first, "\"size_bytes\":")
		b = strconv.AppendUint(b, v.SizeBytes, 10)
	}
	if !v.ExpiresAt.IsZero() {
		b = appendJSONKey(b, &first, "\"expires_at\":")
		if b, err = appendJSONTime(b, v.ExpiresAt); err != nil {
			return b, err
		}
	}
	return append(b, '}'), nil
}

// appendJSONStepError appends a StepError as encoding/json writes it.
func appendJSONStepError(b []byte, v *runstate.StepError) ([]byte, error) {
	b = append(b, '{')
	first := true
	b = appendJSONKey(b, &first, "\"class\":")
	b = appendJSONString(b, string(v.Class))
	if v.Code != "" {
		b = appendJSONKey(b, &first, "\"code\":")
		b = appendJSONString(b, string(v.Code))
	}
	if v.Message != "" {
		b = appendJSONKey(b, &first, "\"message\":")
		b = appendJSONString(b, string(v.Message))
	}
	if v.Retryable {
		b = appendJSONKey(b, &first, "\"retryable\":")
		b = strconv.AppendBool(b, v.Retryable)
	}
	return append(b, '}'), nil
}

// appendJSONRunError appends a RunError as encoding/json writes it.
func appendJSONRunError(b []byte, v *runstate.RunError) ([]byte, error) {
	var err error
	b = append(b, '{')
	first := true
	if v.ActionID != "" {
		b = appendJSONKey(b, &first, "\"action_id\":")
		b = appendJSONString(b, string(v.ActionID))
	}
	if v.Error != nil {
		b = appendJSONKey(b, &first, "\"error\":")
		if b, err = appendJSONStepError(b, v.Error); err != nil {
			return b, err
		}
	}
	if v.WorkflowTimeout {
		b = appendJSONKey(b, &first, "\"workflow_timeout\":")
		b = strconv.AppendBool(b, v.WorkflowTimeout)
	}
	return append(b, '}'), nil
}

// appendJSONAttempt appends a Attempt as encoding/json writes it.
func appendJSONAttempt(b []byte, v *runstate.Attempt) ([]byte, error) {
	var err error
	b = append(b, '{')
	first := true
	b = appendJSONKey(b, &first, "\"logical_attempt\":")
	b = strconv.AppendInt(b, int64(v.LogicalAttempt), 10)
	b = appendJSONKey(b, &first, "\"engine_attempt\":")
	b = strconv.AppendInt(b, int64(v.EngineAttempt), 10)
	if v.Outcome != "" {
		b = appendJSONKey(b, &first, "\"outcome\":")
		b = appendJSONString(b, string(v.Outcome))
	}
	if v.Error != nil {
		b = appendJSONKey(b, &first, "\"error\":")
		if b, err = appendJSONStepError(b, v.Error); err != nil {
			return b, err
		}
	}
	if !v.StartedAt.IsZero() {
		b = appendJSONKey(b, &first, "\"started_at\":")
		if b, err = appendJSONTime(b, v.StartedAt); err != nil {
			return b, err
		}
	}
	if !v.CompletedAt.IsZero() {
		b = appendJSONKey(b, &first, "\"completed_at\":")
		if b, err = appendJSONTime(b, v.CompletedAt); err != nil {
			return b, err
		}
	}
	if v.WorkerID != "" {
		b = appendJSONKey(b, &first, "\"worker_id\":")
		b = appendJSONString(b, string(v.WorkerID))
	}
	return append(b, '}'), nil
}

// appendJSONCancellation appends a Cancellation as encoding/json writes it.
func appendJSONCancellation(b []byte, v *runstate.Cancellation) ([]byte, error) {
	var err error
	b = append(b, '{')
	first := true
	b = appendJSONKey(b, &first, "\"cancelled_by\":")
	b = appendJSONString(b, string(v.CancelledBy))
	if v.Reason != "" {
		b = appendJSONKey(b, &first, "\"reason\":")
		b = appendJSONString(b, string(v.Reason))
	}
	b = appendJSONKey(b, &first, "\"requested_at\":")
	if b, err = appendJSONTime(b, v.RequestedAt); err != nil {
		return b, err
	}
	if v.Compensate {
		b = appendJSONKey(b, &first, "\"compensate\":")
		b = strconv.AppendBool(b, v.Compensate)
	}
	return append(b, '}'), nil
}

// appendJSONRunContext appends a RunContext as encoding/json writes it.
func appendJSONRunContext(b []byte, v *runstate.RunContext) ([]byte, error) {
	b = append(b, '{')
	first := true
	b = appendJSONKey(b, &first, "\"tenant_id\":")
	b = appendJSONString(b, string(v.TenantID))
	b = appendJSONKey(b, &first, "\"project_id\":")
	b = appendJSONString(b, string(v.ProjectID))
	b = appendJSONKey(b, &first, "\"environment_id\":")
	b = appendJSONString(b, string(v.EnvironmentID))
	if v.TriggeredBy != "" {
		b = appendJSONKey(b, &first, "\"triggered_by\":")
		b = appendJSONString(b, string(v.TriggeredBy))
	}
	if v.TriggerSource != "" {
		b = appendJSONKey(b, &first, "\"trigger_source\":")
		b = appendJSONString(b, string(v.TriggerSource))
	}
	return append(b, '}'), nil
}
