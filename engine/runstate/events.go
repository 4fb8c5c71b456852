package runstate

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"time"

	"github.com/google/uuid"
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
	EvRunRerun              = "RunRerun"
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
	EvStepSleeping          = "StepSleeping"
	EvStepIterated          = "StepIterated"
	EvCompensationStarted   = "CompensationStarted"
	EvCompensationSucceeded = "CompensationSucceeded"
	EvCompensationFailed    = "CompensationFailed"
	EvSignalAccepted        = "SignalAccepted"
	EvSignalRejected        = "SignalRejected"
	EvSignalConsumed        = "SignalConsumed"
	// EvChildRunStarted: a sub-workflow step's child run exists (its id in
	// ChildRunID); EvChildRunEnded: the child ended (Status is the child's).
	EvChildRunStarted = "ChildRunStarted"
	EvChildRunEnded   = "ChildRunEnded"
	// EvStepFannedOut: a forEach step evaluated its list and runs its
	// ItemCount items (docs/semantics.md#for-each).
	EvStepFannedOut = "StepFannedOut"
)

// RunStepID is the step id of run-level events (docs/semantics.md#event-idempotency-key).
const RunStepID = "RUN"

// Event is one entry of a run's append-only log, with the envelope of docs/semantics.md#events.
type Event struct {
	Type           string    `json:"event_type" wire:"1"`
	ID             string    `json:"event_id" wire:"2,uuid=14"`
	RunID          string    `json:"run_id" wire:"3"`
	Seq            uint64    `json:"run_seq" wire:"4"`
	IdempotencyKey string    `json:"idempotency_key" wire:"5,sha256=15"`
	EmittedAt      time.Time `json:"emitted_at" wire:"6"`
	OccurredAt     time.Time `json:"occurred_at,omitzero" wire:"7"`
	EmittedBy      string    `json:"emitted_by" wire:"8"`
	StepID         string    `json:"step_id" wire:"9"`
	LogicalAttempt int       `json:"logical_attempt_id" wire:"10"`
	EngineAttempt  int       `json:"engine_attempt_id,omitempty" wire:"11"`
	PlanVersion    string    `json:"plan_version" wire:"12"`
	Data           EventData `json:"data" wire:"13"`
}

// EventData is the payload of every event type, flat: each type uses the
// fields its proto payload names, and leaves the others empty.
type EventData struct {
	Status              string              `json:"status,omitempty" wire:"1"`
	Substatus           string              `json:"substatus,omitempty" wire:"2"`
	Reason              string              `json:"reason,omitempty" wire:"3"`
	Actor               string              `json:"actor,omitempty" wire:"4"`
	WorkerID            string              `json:"worker_id,omitempty" wire:"5"`
	TaskID              string              `json:"task_id,omitempty" wire:"6"`
	Queue               string              `json:"queue,omitempty" wire:"7"`
	NotBefore           time.Time           `json:"not_before,omitzero" wire:"8"`
	StartedAt           time.Time           `json:"started_at,omitzero" wire:"9"`
	CompletedAt         time.Time           `json:"completed_at,omitzero" wire:"10"`
	Deadline            time.Time           `json:"deadline,omitzero" wire:"11"`
	Output              json.RawMessage     `json:"output,omitempty" wire:"12"`
	Artifacts           []ArtifactRef       `json:"artifacts,omitempty" wire:"13"`
	Error               *StepError          `json:"error,omitempty" wire:"14"`
	RunError            *RunError           `json:"run_error,omitempty" wire:"15"`
	Attempt             *Attempt            `json:"attempt,omitempty" wire:"16"`
	WillRetry           bool                `json:"will_retry,omitempty" wire:"17"`
	NextAttemptAt       time.Time           `json:"next_attempt_at,omitzero" wire:"18"`
	CompletionToken     string              `json:"completion_token,omitempty" wire:"19"`
	SignalKind          SignalKind          `json:"signal_kind,omitempty" wire:"20"`
	SignalName          string              `json:"signal_name,omitempty" wire:"21"`
	SignalID            string              `json:"signal_id,omitempty" wire:"22"`
	SignalStorageKey    string              `json:"signal_storage_key,omitempty" wire:"23"`
	AcceptedAt          time.Time           `json:"accepted_at,omitzero" wire:"24"`
	ManualOutcome       string              `json:"manual_outcome,omitempty" wire:"25"`
	Principal           string              `json:"principal,omitempty" wire:"26"`
	CorrelationID       string              `json:"correlation_id,omitempty" wire:"27"`
	Notes               string              `json:"notes,omitempty" wire:"28"`
	EvidenceRefs        []string            `json:"evidence_refs,omitempty" wire:"29"`
	InFlightTasks       int                 `json:"in_flight_tasks,omitempty" wire:"30"`
	TimedOut            bool                `json:"timed_out,omitempty" wire:"31"`
	NewLogicalAttempt   int                 `json:"new_logical_attempt,omitempty" wire:"32"`
	Operation           string              `json:"operation,omitempty" wire:"33"`
	OperationKey        string              `json:"operation_key,omitempty" wire:"34"`
	FailedActionID      string              `json:"failed_action_id,omitempty" wire:"35"`
	CompensationOrder   []string            `json:"compensation_order,omitempty" wire:"36"`
	CompensationOutcome CompensationOutcome `json:"compensation_outcome,omitempty" wire:"37"`
	Cancellation        *Cancellation       `json:"cancellation,omitempty" wire:"38"`
	WaitingOn           []string            `json:"waiting_on,omitempty" wire:"39"`
	Source              string              `json:"source,omitempty" wire:"40"`
	Context             *RunContext         `json:"context,omitempty" wire:"41"`
	PlanID              string              `json:"plan_id,omitempty" wire:"42"`
	PlanSHA256          string              `json:"plan_sha256,omitempty" wire:"43"`
	RunRequestID        string              `json:"run_request_id,omitempty" wire:"44"`
	VerifyState         string              `json:"verify_state,omitempty" wire:"45"`
	ReconciliationKey   string              `json:"reconciliation_key,omitempty" wire:"46"`
	// Compensate marks a cancel's SignalAccepted that asked for compensation (docs/semantics.md#cancel-compensation).
	Compensate bool `json:"compensate,omitempty" wire:"47"`
	// CancelRequested marks a RunCompensating that a cancel asked for; its Cancellation says who and why.
	CancelRequested bool `json:"cancel_requested,omitempty" wire:"48"`
	// RerunFrom is the step a RunRerun reran from; Reopened the steps it
	// opened new logical attempts for, in definition order (docs/semantics.md#rerun).
	RerunFrom string   `json:"rerun_from,omitempty" wire:"49"`
	Reopened  []string `json:"reopened,omitempty" wire:"50"`
	// Rerun marks a StepRetried that a rerun made: the step's earlier
	// output, artifacts and compensation are set aside with its attempt.
	Rerun bool `json:"rerun,omitempty" wire:"51"`
	// Input is a StepScheduled's input with its ${{ }} expressions
	// evaluated (docs/semantics.md#input-expressions), or a
	// CompensationStarted's hook's (docs/semantics.md#compensation-input).
	Input json.RawMessage `json:"input,omitempty" wire:"52"`
	// WakeAt is when a StepSleeping's sleep ends (docs/semantics.md#sleep).
	WakeAt time.Time `json:"wake_at,omitzero" wire:"53"`
	// Iteration is the repeat iteration a StepIterated ended
	// (docs/semantics.md#repeat).
	Iteration int `json:"iteration,omitempty" wire:"54"`
	// Attributes are the search attributes a SearchAttributesUpserted set,
	// sorted by name (docs/semantics.md#search-attributes).
	Attributes []SearchAttribute `json:"attributes,omitempty" wire:"64"`
	// ChildRunID is the child run a ChildRunStarted or ChildRunEnded names
	// (docs/semantics.md#sub-workflows).
	ChildRunID string `json:"child_run_id,omitempty" wire:"62"`
	// ItemCount is how many items a StepFannedOut's list holds; MaxConcurrency
	// how many of them may be in flight at once (docs/semantics.md#for-each).
	ItemCount      int `json:"item_count,omitempty" wire:"56"`
	MaxConcurrency int `json:"max_concurrency,omitempty" wire:"57"`
}

// RunContext is who and where a run belongs to.
type RunContext struct {
	TenantID      string `json:"tenant_id" wire:"1"`
	ProjectID     string `json:"project_id" wire:"2"`
	EnvironmentID string `json:"environment_id" wire:"3"`
	TriggeredBy   string `json:"triggered_by,omitempty" wire:"4"`
	TriggerSource string `json:"trigger_source,omitempty" wire:"5"`
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
	SignalRerun     SignalKind = "RERUN"
)

// EventID answers the event_id of the event at runSeq of a run
// (docs/semantics.md#events): a UUID of version 8 (RFC 9562's custom
// version) whose other bits are the first 16 bytes of
// SHA-256("event|" runId "|" runSeq in decimal), in the canonical
// lowercase text. A run's events so have ids no other event has, and a
// stored event group need not hold them (engine/runcodec derives them).
func EventID(runID string, runSeq uint64) string {
	var buf [128]byte
	b := append(append(buf[:0], "event|"...), runID...)
	b = strconv.AppendUint(append(b, '|'), runSeq, 10)
	sum := sha256.Sum256(b)
	id := uuid.UUID(sum[:16])
	id[6] = id[6]&0x0f | 0x80 // version 8
	id[8] = id[8]&0x3f | 0x80 // variant RFC 9562
	return id.String()
}

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
