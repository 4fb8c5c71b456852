package runstate

import (
	"encoding/json"
	"time"

	"github.com/weft-dev/weft/engine/definition"
)

// CheckpointVersion is the persisted format version of State.
const CheckpointVersion = 1

// State is a run's checkpoint: the authoritative state the engine drives,
// stored as one record and replaced only by a conditional batch on its
// version, together with the events that describe the change.
type State struct {
	FormatVersion int       `json:"version"`
	RunID         string    `json:"run_id"`
	Status        RunStatus `json:"status"`
	Substatus     string    `json:"substatus,omitempty"`
	Message       string    `json:"message,omitempty"`
	// Steps in definition order.
	Steps []*StepState `json:"steps"`
	// LastSeq is the highest run_seq appended.
	LastSeq uint64 `json:"last_seq"`
	// Epoch is the fencing epoch of the run's current owner.
	Epoch       uint64    `json:"epoch,omitempty"`
	CreatedAt   time.Time `json:"created_at"`
	StartedAt   time.Time `json:"started_at,omitzero"`
	CompletedAt time.Time `json:"completed_at,omitzero"`
	// Deadline is when the workflow timeout fires; zero without one.
	Deadline time.Time `json:"deadline,omitzero"`
	// CompletionOrder lists succeeded steps in the order they succeeded.
	CompletionOrder []string `json:"completion_order,omitempty"`
	// Failing is the step whose failure stopped scheduling (fail-fast); the
	// run applies its on_failure once nothing is in flight.
	Failing string `json:"failing,omitempty"`
	// HeldOn is the failed step a HOLD run waits on.
	HeldOn string `json:"held_on,omitempty"`
	// Compensation is the rollback in progress or done.
	Compensation *CompensationState `json:"compensation,omitempty"`
	Error        *RunError          `json:"error,omitempty"`
	Cancellation *Cancellation      `json:"cancellation,omitempty"`
	// Pauses and Resumes count accepted pauses and resumes, for event keys.
	Pauses  int `json:"pauses,omitempty"`
	Resumes int `json:"resumes,omitempty"`
	// Blocks counts RunBlocked/RunUnblocked pairs, for event keys.
	Blocks int `json:"blocks,omitempty"`
	// SignalCount counts SignalAccepted and SignalRejected events, for their keys.
	SignalCount int `json:"signal_count,omitempty"`
	// Slots are the concurrency slots the started run holds.
	Slots []string `json:"slots,omitempty"`
	// QueuedAt is when the run was queued for lack of a slot.
	QueuedAt time.Time `json:"queued_at,omitzero"`
	// DelayUntil pushes the run's first activities into the future (DELAY backpressure).
	DelayUntil time.Time `json:"delay_until,omitzero"`
	// PausedFrom is the status a pause interrupted.
	PausedFrom RunStatus `json:"paused_from,omitempty"`
	// Signals are accepted user signals not yet consumed, in acceptance order.
	Signals []PendingSignal `json:"signals,omitempty"`
	// RetainUntil is when retention removes the finished run (its rx: index
	// entry's time); zero while the run is not finished, or kept forever
	// (docs/semantics.md#retention).
	RetainUntil time.Time `json:"retain_until,omitzero"`
	// Removing says retention or DeleteRun has begun removing the run: it is
	// invisible from then on, and the removal is resumed until its last
	// record is gone.
	Removing bool `json:"removing,omitempty"`
	// KeysTracked says the checkpoint records the idempotency keys of the
	// events its run has appended (RunKeys, StepState.Keys), exactly: an
	// event whose key is there is not appended, and events are written
	// without a key row (docs/semantics.md#event-idempotency-key). Set at
	// submission; a checkpoint stored by an older engine has no record, and
	// its run's events keep their key rows.
	KeysTracked bool `json:"keys_tracked,omitempty"`
	// RunKeys are the keys of the run-level events appended (KeySpan).
	RunKeys []KeySpan `json:"run_keys,omitempty"`
	// StepFailures is the run's failed-steps counter (docs/semantics.md#resync):
	// every StepFailed adds one — a step that failed and was then skipped
	// still counts — and a RETRY_STEP that reopens a failed step takes one
	// away. A checkpoint stored before the counter counts its FAILED steps
	// (CountFailedSteps).
	StepFailures int `json:"step_failures,omitempty"`
}

// CountFailedSteps answers how many steps are FAILED: the failed-steps
// counter of a checkpoint stored before it kept one (State.StepFailures).
func (s *State) CountFailedSteps() int {
	n := 0
	for _, st := range s.Steps {
		if st.Status == StepFailed {
			n++
		}
	}
	return n
}

// PendingSignal is an accepted signal waiting for a wait-for-signal step.
type PendingSignal struct {
	Name       string `json:"name"`
	ID         string `json:"id"`
	StorageKey string `json:"storage_key"`
}

// StepState is one action's state within a checkpoint.
type StepState struct {
	ActionID       string     `json:"action_id"`
	Status         StepStatus `json:"status"`
	LogicalAttempt int        `json:"logical_attempt"`
	EngineAttempt  int        `json:"engine_attempt"`
	Attempts       []Attempt  `json:"attempts,omitempty"`
	// TaskID is the current task, while one exists.
	TaskID          string          `json:"task_id,omitempty"`
	ReadyKey        string          `json:"ready_key,omitempty"`
	ScheduledAt     time.Time       `json:"scheduled_at,omitzero"`
	StartedAt       time.Time       `json:"started_at,omitzero"`
	CompletedAt     time.Time       `json:"completed_at,omitzero"`
	Output          json.RawMessage `json:"output,omitempty"`
	Artifacts       []ArtifactRef   `json:"artifacts,omitempty"`
	Error           *StepError      `json:"error,omitempty"`
	CompletionToken string          `json:"completion_token,omitempty"`
	WaitingSignal   string          `json:"waiting_signal,omitempty"`
	NextAttemptAt   time.Time       `json:"next_attempt_at,omitzero"`
	Reason          string          `json:"reason,omitempty"`
	// Manual is the accepted manual completion that ended the step's wait.
	Manual *ManualResult `json:"manual,omitempty"`
	// Compensation of this step.
	CompStatus   CompensationStatus `json:"comp_status,omitempty"`
	CompAttempt  int                `json:"comp_attempt,omitempty"`
	CompError    *StepError         `json:"comp_error,omitempty"`
	CompTaskID   string             `json:"comp_task_id,omitempty"`
	CompReadyKey string             `json:"comp_ready_key,omitempty"`
	// Reconcile: the activity was claimed by a worker that can verify it, so
	// its operation has a reconciliation record (docs/semantics.md#reconciliation).
	Reconcile bool `json:"reconcile,omitempty"`
	// Verifying: the current task is a verify task.
	Verifying bool `json:"verifying,omitempty"`
	// Keys are the keys of the step's events appended, while the run's
	// checkpoint has KeysTracked (KeySpan).
	Keys []KeySpan `json:"keys,omitempty"`
}

// Attempt is the evidence of one execution attempt (docs/semantics.md#attempt-evidence).
type Attempt struct {
	LogicalAttempt int            `json:"logical_attempt"`
	EngineAttempt  int            `json:"engine_attempt"`
	Outcome        AttemptOutcome `json:"outcome,omitempty"`
	Error          *StepError     `json:"error,omitempty"`
	StartedAt      time.Time      `json:"started_at,omitzero"`
	CompletedAt    time.Time      `json:"completed_at,omitzero"`
	WorkerID       string         `json:"worker_id,omitempty"`
}

// AttemptOutcome is how an attempt ended.
type AttemptOutcome string

// The attempt outcomes.
const (
	AttemptSucceeded  AttemptOutcome = "succeeded"
	AttemptFailed     AttemptOutcome = "failed"
	AttemptTimedOut   AttemptOutcome = "timed_out"
	AttemptCancelled  AttemptOutcome = "cancelled"
	AttemptReconciled AttemptOutcome = "reconciled"
)

// StepError describes a failure without its payload.
type StepError struct {
	Class     definition.ErrorClass `json:"class"`
	Code      string                `json:"code,omitempty"`
	Message   string                `json:"message,omitempty"`
	Retryable bool                  `json:"retryable,omitempty"`
}

// RunError is a run's terminal failure.
type RunError struct {
	ActionID        string     `json:"action_id,omitempty"`
	Error           *StepError `json:"error,omitempty"`
	WorkflowTimeout bool       `json:"workflow_timeout,omitempty"`
}

// Cancellation records who cancelled a run and why (docs/semantics.md#cancellation).
type Cancellation struct {
	CancelledBy string    `json:"cancelled_by"`
	Reason      string    `json:"reason,omitempty"`
	RequestedAt time.Time `json:"requested_at"`
	// Compensate is set when the cancel asked for compensation (docs/semantics.md#cancel-compensation).
	Compensate bool `json:"compensate,omitempty"`
}

// CompensationState is a run's rollback.
type CompensationState struct {
	// Order is the steps to compensate, in reverse completion order.
	Order []string `json:"order"`
	// Next indexes the next step of Order to start.
	Next    int                 `json:"next"`
	Outcome CompensationOutcome `json:"outcome,omitempty"`
	// ForCancel is set when a cancel asked for this rollback: the run then
	// ends CANCELLED, not FAILED (docs/semantics.md#cancel-compensation).
	ForCancel bool `json:"for_cancel,omitempty"`
}

// CompensationStatus is one step's rollback status.
type CompensationStatus string

// The compensation statuses.
const (
	CompPending   CompensationStatus = "PENDING"
	CompRunning   CompensationStatus = "RUNNING"
	CompSucceeded CompensationStatus = "SUCCEEDED"
	CompFailed    CompensationStatus = "FAILED"
)

// CompensationOutcome summarises a rollback (docs/semantics.md#compensation-outcome).
type CompensationOutcome string

// The compensation outcomes.
const (
	CompensationRolledBack CompensationOutcome = "ROLLED_BACK"
	CompensationPartial    CompensationOutcome = "PARTIAL"
)

// ArtifactRef points at an output stored outside Weft (docs/semantics.md#artifacts-and-secrets).
type ArtifactRef struct {
	URI       string    `json:"uri"`
	Kind      string    `json:"kind,omitempty"`
	SHA256    string    `json:"sha256,omitempty"`
	SizeBytes uint64    `json:"size_bytes,omitempty"`
	ExpiresAt time.Time `json:"expires_at,omitzero"`
}

// Step answers the state of one action, or nil.
func (s *State) Step(actionID string) *StepState {
	for _, st := range s.Steps {
		if st.ActionID == actionID {
			return st
		}
	}
	return nil
}
