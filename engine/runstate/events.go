package runstate

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"time"
)

// The event types (docs/semantics.md has the catalog and each one's effect).
const (
	EvRunSubmitted          = "RunSubmitted"
	EvRunApproved           = "RunApproved"
	EvRunQueued             = "RunQueued"
	EvRunStarted            = "RunStarted"
	EvRunBlocked            = "RunBlocked"
	EvRunUnblocked          = "RunUnblocked"
	EvRunPaused             = "RunPaused"
	EvRunDrained            = "RunDrained"
	EvRunResumed            = "RunResumed"
	EvRunCompensating       = "RunCompensating"
	EvRunCompleted          = "RunCompleted"
	EvRunFailed             = "RunFailed"
	EvRunCancelled          = "RunCancelled"
	EvStepScheduled         = "StepScheduled"
	EvStepStarted           = "StepStarted"
	EvStepCompleted         = "StepCompleted"
	EvStepFailed            = "StepFailed"
	EvStepSkipped           = "StepSkipped"
	EvStepCancelled         = "StepCancelled"
	EvStepWaiting           = "StepWaiting"
	EvStepRetried           = "StepRetried"
	EvStepAttemptRecorded   = "StepAttemptRecorded"
	EvStepVerified          = "StepVerified"
	EvCompensationStarted   = "CompensationStarted"
	EvCompensationSucceeded = "CompensationSucceeded"
	EvCompensationFailed    = "CompensationFailed"
	EvSignalAccepted        = "SignalAccepted"
	EvSignalRejected        = "SignalRejected"
	EvSignalConsumed        = "SignalConsumed"
)

// RunStepID is the step id of run-level events (docs/semantics.md#event-idempotency-key).
const RunStepID = "RUN"

// Event is one entry of a run's append-only log, with the envelope of docs/semantics.md#events.
type Event struct {
	Type           string    `json:"event_type"`
	ID             string    `json:"event_id"`
	RunID          string    `json:"run_id"`
	Seq            uint64    `json:"run_seq"`
	IdempotencyKey string    `json:"idempotency_key"`
	EmittedAt      time.Time `json:"emitted_at"`
	OccurredAt     time.Time `json:"occurred_at,omitzero"`
	EmittedBy      string    `json:"emitted_by"`
	StepID         string    `json:"step_id"`
	LogicalAttempt int       `json:"logical_attempt_id"`
	EngineAttempt  int       `json:"engine_attempt_id,omitempty"`
	PlanVersion    string    `json:"plan_version"`
	Data           EventData `json:"data"`
}

// EventData is the payload of every event type, flat: each type uses the
// fields its proto payload names, and leaves the others empty.
type EventData struct {
	Status              string              `json:"status,omitempty"`
	Substatus           string              `json:"substatus,omitempty"`
	Reason              string              `json:"reason,omitempty"`
	Actor               string              `json:"actor,omitempty"`
	WorkerID            string              `json:"worker_id,omitempty"`
	TaskID              string              `json:"task_id,omitempty"`
	Queue               string              `json:"queue,omitempty"`
	NotBefore           time.Time           `json:"not_before,omitzero"`
	StartedAt           time.Time           `json:"started_at,omitzero"`
	CompletedAt         time.Time           `json:"completed_at,omitzero"`
	Deadline            time.Time           `json:"deadline,omitzero"`
	Output              json.RawMessage     `json:"output,omitempty"`
	Artifacts           []ArtifactRef       `json:"artifacts,omitempty"`
	Error               *StepError          `json:"error,omitempty"`
	RunError            *RunError           `json:"run_error,omitempty"`
	Attempt             *Attempt            `json:"attempt,omitempty"`
	WillRetry           bool                `json:"will_retry,omitempty"`
	NextAttemptAt       time.Time           `json:"next_attempt_at,omitzero"`
	CompletionToken     string              `json:"completion_token,omitempty"`
	SignalKind          SignalKind          `json:"signal_kind,omitempty"`
	SignalName          string              `json:"signal_name,omitempty"`
	SignalID            string              `json:"signal_id,omitempty"`
	SignalStorageKey    string              `json:"signal_storage_key,omitempty"`
	AcceptedAt          time.Time           `json:"accepted_at,omitzero"`
	ManualOutcome       string              `json:"manual_outcome,omitempty"`
	Principal           string              `json:"principal,omitempty"`
	CorrelationID       string              `json:"correlation_id,omitempty"`
	Notes               string              `json:"notes,omitempty"`
	EvidenceRefs        []string            `json:"evidence_refs,omitempty"`
	InFlightTasks       int                 `json:"in_flight_tasks,omitempty"`
	TimedOut            bool                `json:"timed_out,omitempty"`
	NewLogicalAttempt   int                 `json:"new_logical_attempt,omitempty"`
	Operation           string              `json:"operation,omitempty"`
	OperationKey        string              `json:"operation_key,omitempty"`
	FailedActionID      string              `json:"failed_action_id,omitempty"`
	CompensationOrder   []string            `json:"compensation_order,omitempty"`
	CompensationOutcome CompensationOutcome `json:"compensation_outcome,omitempty"`
	Cancellation        *Cancellation       `json:"cancellation,omitempty"`
	WaitingOn           []string            `json:"waiting_on,omitempty"`
	Source              string              `json:"source,omitempty"`
	Context             *RunContext         `json:"context,omitempty"`
	PlanID              string              `json:"plan_id,omitempty"`
	PlanSHA256          string              `json:"plan_sha256,omitempty"`
	RunRequestID        string              `json:"run_request_id,omitempty"`
	VerifyState         string              `json:"verify_state,omitempty"`
	ReconciliationKey   string              `json:"reconciliation_key,omitempty"`
	// Compensate marks a cancel's SignalAccepted that asked for compensation (docs/semantics.md#cancel-compensation).
	Compensate bool `json:"compensate,omitempty"`
	// CancelRequested marks a RunCompensating that a cancel asked for; its Cancellation says who and why.
	CancelRequested bool `json:"cancel_requested,omitempty"`
}

// RunContext is who and where a run belongs to.
type RunContext struct {
	TenantID      string `json:"tenant_id"`
	ProjectID     string `json:"project_id"`
	EnvironmentID string `json:"environment_id"`
	TriggeredBy   string `json:"triggered_by,omitempty"`
	TriggerSource string `json:"trigger_source,omitempty"`
}

// SignalKind says what a signal asked for.
type SignalKind string

// The signal kinds; a user signal has none.
const (
	SignalUser      SignalKind = ""
	SignalPause     SignalKind = "PAUSE"
	SignalResume    SignalKind = "RESUME"
	SignalCancel    SignalKind = "CANCEL"
	SignalRetryStep SignalKind = "RETRY_STEP"
	SignalSkipStep  SignalKind = "SKIP_STEP"
	SignalManual    SignalKind = "MANUAL_COMPLETION"
	SignalApprove   SignalKind = "APPROVE"
)

// IdempotencyKey answers the key of docs/semantics.md#event-idempotency-key:
// hex(SHA-256(runId | stepId | logicalAttemptId | eventType | planVersion)),
// with stepId "RUN" and logicalAttemptId 1 for run-level events that do not
// repeat. Attempt-level evidence (StepAttemptRecorded) appends the engine
// attempt, so that every attempt is kept.
func IdempotencyKey(runID, stepID string, logicalAttempt int, eventType, planVersion string, engineAttempt int) string {
	if stepID == "" {
		stepID = RunStepID
	}
	if logicalAttempt < 1 {
		logicalAttempt = 1
	}
	// The hashed text is built in a buffer on the stack when it fits, and
	// the key is the one allocation.
	var buf [256]byte
	b := append(buf[:0], runID...)
	b = append(append(b, '|'), stepID...)
	b = strconv.AppendInt(append(b, '|'), int64(logicalAttempt), 10)
	b = append(append(b, '|'), eventType...)
	b = append(append(b, '|'), planVersion...)
	if KeyHasEngineAttempt(eventType) {
		b = strconv.AppendInt(append(b, '|'), int64(engineAttempt), 10)
	}
	sum := sha256.Sum256(b)
	var out [sha256.Size * 2]byte
	hex.Encode(out[:], sum[:])
	return string(out[:])
}
