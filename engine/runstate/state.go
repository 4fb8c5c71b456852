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
	FormatVersion int       `json:"version" wire:"1"`
	RunID         string    `json:"run_id" wire:"2"`
	Status        RunStatus `json:"status" wire:"3"`
	Substatus     string    `json:"substatus,omitempty" wire:"4"`
	Message       string    `json:"message,omitempty" wire:"5"`
	// Steps in definition order.
	Steps []*StepState `json:"steps" wire:"6"`
	// LastSeq is the highest run_seq appended.
	LastSeq uint64 `json:"last_seq" wire:"7"`
	// Epoch is the fencing epoch of the run's current owner.
	Epoch       uint64    `json:"epoch,omitempty" wire:"8"`
	CreatedAt   time.Time `json:"created_at" wire:"9"`
	StartedAt   time.Time `json:"started_at,omitzero" wire:"10"`
	CompletedAt time.Time `json:"completed_at,omitzero" wire:"11"`
	// Deadline is when the workflow timeout fires; zero without one.
	Deadline time.Time `json:"deadline,omitzero" wire:"12"`
	// CompletionOrder lists succeeded steps in the order they succeeded.
	CompletionOrder []string `json:"completion_order,omitempty" wire:"13"`
	// Failing is the step whose failure stopped scheduling (fail-fast); the
	// run applies its on_failure once nothing is in flight.
	Failing string `json:"failing,omitempty" wire:"14"`
	// HeldOn is the failed step a HOLD run waits on.
	HeldOn string `json:"held_on,omitempty" wire:"15"`
	// Compensation is the rollback in progress or done.
	Compensation *CompensationState `json:"compensation,omitempty" wire:"16"`
	Error        *RunError          `json:"error,omitempty" wire:"17"`
	Cancellation *Cancellation      `json:"cancellation,omitempty" wire:"18"`
	// Pauses and Resumes count accepted pauses and resumes, for event keys.
	Pauses  int `json:"pauses,omitempty" wire:"19"`
	Resumes int `json:"resumes,omitempty" wire:"20"`
	// Blocks counts RunBlocked/RunUnblocked pairs, for event keys.
	Blocks int `json:"blocks,omitempty" wire:"21"`
	// SignalCount counts SignalAccepted and SignalRejected events, for their keys.
	SignalCount int `json:"signal_count,omitempty" wire:"22"`
	// Slots are the concurrency slots the started run holds.
	Slots []string `json:"slots,omitempty" wire:"23"`
	// QueuedAt is when the run was queued for lack of a slot.
	QueuedAt time.Time `json:"queued_at,omitzero" wire:"24"`
	// DelayUntil pushes the run's first activities into the future (DELAY backpressure).
	DelayUntil time.Time `json:"delay_until,omitzero" wire:"25"`
	// PausedFrom is the status a pause interrupted.
	PausedFrom RunStatus `json:"paused_from,omitempty" wire:"26"`
	// Signals are accepted user signals not yet consumed, in acceptance order.
	Signals []PendingSignal `json:"signals,omitempty" wire:"27"`
	// RetainUntil is when retention removes the finished run (its rx: index
	// entry's time); zero while the run is not finished, or kept forever
	// (docs/semantics.md#retention).
	RetainUntil time.Time `json:"retain_until,omitzero" wire:"28"`
	// Removing says retention or DeleteRun has begun removing the run: it is
	// invisible from then on, and the removal is resumed until its last
	// record is gone.
	Removing bool `json:"removing,omitempty" wire:"29"`
	// KeysTracked says the checkpoint records the idempotency keys of the
	// events its run has appended (RunKeys, StepState.Keys), exactly: an
	// event whose key is there is not appended, and events are written
	// without a key row (docs/semantics.md#event-idempotency-key). Set at
	// submission; a checkpoint stored by an older engine has no record, and
	// its run's events keep their key rows.
	KeysTracked bool `json:"keys_tracked,omitempty" wire:"30"`
	// RunKeys are the keys of the run-level events appended (KeySpan).
	RunKeys []KeySpan `json:"run_keys,omitempty" wire:"31"`
	// StepFailures is the run's failed-steps counter (docs/semantics.md#resync):
	// every StepFailed adds one — a step that failed and was then skipped
	// still counts — and a RETRY_STEP that reopens a failed step takes one
	// away. A checkpoint stored before the counter counts its FAILED steps
	// (CountFailedSteps).
	StepFailures int `json:"step_failures,omitempty" wire:"32"`
	// Reruns counts the RerunRun calls that reopened the ended run
	// (docs/semantics.md#rerun): the n-th rerun's RunRerun, and the end
	// events after it, are keyed n+1 (RunEnds).
	Reruns int `json:"reruns,omitempty" wire:"33"`
	// SearchAttributes are the run's search attributes, sorted by name
	// (docs/semantics.md#search-attributes). A decision that sets them
	// replaces the slice (UpsertAttributes), never an element of it.
	SearchAttributes []SearchAttribute `json:"search_attributes,omitempty" wire:"38"`
	// CompactIndex says the run's index entries are in the present layout
	// (docs/persisted-format.md): its status in rs: by its place in the run
	// index, and its plan version in the value of its sx: plan entry,
	// with no sx: status or planVersion entries. Set at submission, and by
	// the first decision that moves an older run's indexed fields; a
	// checkpoint stored by an older engine has none, and its run keeps its
	// rs: entry by run id and its sx: status, plan and planVersion entries
	// until then.
	CompactIndex bool `json:"compact_index,omitempty" wire:"39"`
	// StartedByCreated says the run's startedAt has no sx: entry while it
	// equals its creation time: the run index by creation time answers a
	// query's startedAt scan for it (docs/persisted-format.md). Set with
	// CompactIndex; a checkpoint without it has an sx: startedAt entry
	// whenever it has a startedAt, until its next decision that moves its
	// indexed fields.
	StartedByCreated bool `json:"started_by_created,omitempty" wire:"40"`
	// Deadlines are the run's deadline index entries (tmd:, one per 10 s
	// bucket of attempt deadlines; docs/persisted-format.md): each names
	// the earliest deadline among the claims it indexes, which is also
	// the value of its entry. A claim indexed there stores no attempt
	// timer (Task.DeadlineIndexed); the run's end deletes every entry.
	Deadlines []DeadlineEntry `json:"deadlines,omitempty" wire:"50"`
}

// DeadlineEntry is one of a run's deadline index entries: the bucket of
// Earliest (DeadlineBucket) is its key's time.
type DeadlineEntry struct {
	Earliest time.Time `json:"earliest" wire:"1"`
}

// RunEnds answers the logical attempt of the run-level events that end the
// run or start its rollback (RunCompensating, RunCompleted, RunFailed,
// RunCancelled): 1, and one more after each rerun, so that a rerun run's
// second end is a new event with a key of its own.
func (s *State) RunEnds() int { return s.Reruns + 1 }

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
	Name       string `json:"name" wire:"1"`
	ID         string `json:"id" wire:"2"`
	StorageKey string `json:"storage_key" wire:"3"`
}

// StepState is one action's state within a checkpoint.
type StepState struct {
	ActionID       string     `json:"action_id" wire:"1"`
	Status         StepStatus `json:"status" wire:"2"`
	LogicalAttempt int        `json:"logical_attempt" wire:"3"`
	EngineAttempt  int        `json:"engine_attempt" wire:"4"`
	Attempts       []Attempt  `json:"attempts,omitempty" wire:"5"`
	// TaskID is the current task, while one exists.
	TaskID          string          `json:"task_id,omitempty" wire:"6"`
	ReadyKey        string          `json:"ready_key,omitempty" wire:"7"`
	ScheduledAt     time.Time       `json:"scheduled_at,omitzero" wire:"8"`
	StartedAt       time.Time       `json:"started_at,omitzero" wire:"9"`
	CompletedAt     time.Time       `json:"completed_at,omitzero" wire:"10"`
	Output          json.RawMessage `json:"output,omitempty" wire:"11"`
	Artifacts       []ArtifactRef   `json:"artifacts,omitempty" wire:"12"`
	Error           *StepError      `json:"error,omitempty" wire:"13"`
	CompletionToken string          `json:"completion_token,omitempty" wire:"14"`
	WaitingSignal   string          `json:"waiting_signal,omitempty" wire:"15"`
	NextAttemptAt   time.Time       `json:"next_attempt_at,omitzero" wire:"16"`
	Reason          string          `json:"reason,omitempty" wire:"17"`
	// Manual is the accepted manual completion that ended the step's wait.
	Manual *ManualResult `json:"manual,omitempty" wire:"18"`
	// Compensation of this step.
	CompStatus   CompensationStatus `json:"comp_status,omitempty" wire:"19"`
	CompAttempt  int                `json:"comp_attempt,omitempty" wire:"20"`
	CompError    *StepError         `json:"comp_error,omitempty" wire:"21"`
	CompTaskID   string             `json:"comp_task_id,omitempty" wire:"22"`
	CompReadyKey string             `json:"comp_ready_key,omitempty" wire:"23"`
	// Reconcile: the activity was claimed by a worker that can verify it, so
	// its operation has a reconciliation record (docs/semantics.md#reconciliation).
	Reconcile bool `json:"reconcile,omitempty" wire:"24"`
	// Verifying: the current task is a verify task.
	Verifying bool `json:"verifying,omitempty" wire:"25"`
	// Keys are the keys of the step's events appended, while the run's
	// checkpoint has KeysTracked (KeySpan).
	Keys []KeySpan `json:"keys,omitempty" wire:"26"`
	// HeartbeatDetails are the details of the last heartbeat that carried
	// any, of the engine attempts of this logical attempt that have ended;
	// the next attempt's task carries them (docs/semantics.md#heartbeat-details).
	HeartbeatDetails json.RawMessage `json:"heartbeat_details,omitempty" wire:"27"`
	// Input is the step's input with its ${{ }} expressions evaluated, as
	// its first task recorded it (docs/semantics.md#input-expressions);
	// every later attempt runs with it. Nil: the input has no expression.
	Input json.RawMessage `json:"input,omitempty" wire:"28"`
	// WakeAt is when a sleep step completes, while it sleeps
	// (docs/semantics.md#sleep).
	WakeAt time.Time `json:"wake_at,omitzero" wire:"29"`
	// Iteration is a repeat step's current iteration, from 1
	// (docs/semantics.md#repeat); 0 for a step without repeat.
	Iteration int `json:"iteration,omitempty" wire:"30"`
	// FlowSlot is the store key of the step concurrency slot its current
	// task holds while claimed (docs/semantics.md#step-concurrency): every
	// way out of the claim gives it back in the same batch.
	FlowSlot string `json:"flow_slot,omitempty" wire:"36"`
	// ChildRunID is the child run of a sub-workflow step's current logical
	// attempt, once it exists (docs/semantics.md#sub-workflows).
	ChildRunID string `json:"child_run_id,omitempty" wire:"38"`
	// Parent and Index make the step an item of a fan-out
	// (docs/semantics.md#for-each): the forEach step it belongs to and its
	// position in the list; its id is Parent[Index] (definition.ItemID).
	// Item is the list's element the item runs with, which its input's
	// expressions read as item.
	Item   json.RawMessage `json:"item,omitempty" wire:"32"`
	Parent string          `json:"parent,omitempty" wire:"33"`
	Index  int             `json:"index,omitempty" wire:"34"`
	// ItemCount is a forEach step's list length once it fanned out: its
	// items are those of index 0 to ItemCount-1 (a rerun over a shorter
	// list skips the others).
	ItemCount int `json:"item_count,omitempty" wire:"35"`
	// CompInput is the compensation hook's input with its ${{ }}
	// expressions evaluated, as its CompensationStarted recorded it
	// (docs/semantics.md#compensation-input); every attempt of the hook runs
	// with it. Nil: the hook's input has no expression.
	CompInput json.RawMessage `json:"comp_input,omitempty" wire:"41"`
	// EagerTokens are the claim tokens of the tasks eager dispatch claimed
	// for the worker with the completion of the step's last attempt, while
	// they are claimed, so that a retried completion gives them back
	// (docs/semantics.md#give-back): that completion wrote no task record
	// to hold them (claimEnded). Each eager task's report takes its token
	// out (record.Task.EagerOf). A token is kept without the run's id and
	// the "/" that begin it.
	EagerTokens []string `json:"eager_tokens,omitempty" wire:"37,token=48"`
	// ClaimToken, ClaimWorker, ClaimedAt, ClaimDeadline and
	// ClaimHeartbeatDue are the claim of the step's task that a hand-off
	// made without writing its task record (record.Task, built from them by
	// cache.CheckpointClaim): its token without the run's id and the "/"
	// that begin it, the worker, when, and when its attempt and its
	// heartbeat time out (zero: no heartbeat timeout). Its deadline is
	// always indexed (runstate.State.Deadlines). The first write of the
	// task's record (a heartbeat, a timeout, a give-back, a retirement)
	// supersedes them; a report writes none, and they stay, so that a
	// duplicate report is recognised (claimEnded), until the step's next
	// such claim.
	ClaimToken        string    `json:"claim_token,omitempty" wire:"39,token=46"`
	ClaimWorker       string    `json:"claim_worker,omitempty" wire:"40"`
	ClaimedAt         time.Time `json:"claimed_at,omitzero" wire:"42"`
	ClaimDeadline     time.Time `json:"claim_deadline,omitzero" wire:"43"`
	ClaimHeartbeatDue time.Time `json:"claim_heartbeat_due,omitzero" wire:"45"`
	// EndedClaimToken is the ClaimToken the step's next such claim
	// replaced, so that a report retried after the attempt it ended was
	// retried is still recognised as a duplicate.
	EndedClaimToken string `json:"ended_claim_token,omitempty" wire:"44,token=47"`
}

// IsItem reports whether the step is an item of a fan-out.
func (st *StepState) IsItem() bool { return st.Parent != "" }

// ReopenItem opens a new logical attempt for an item of a fan-out its
// step reopened (docs/semantics.md#for-each): a RETRY_STEP's runs again
// an item that did not succeed, and one that did keeps its output; a
// rerun's (rerun) runs every item again, over the list evaluated again
// (the item's element goes: nil until then).
func (st *StepState) ReopenItem(logical int, rerun bool) {
	if st.Status == StepSucceeded && !rerun {
		return
	}
	st.Status, st.LogicalAttempt, st.EngineAttempt = StepPending, logical, 0
	st.Error, st.Reason, st.Input = nil, "", nil
	st.TaskID, st.ReadyKey, st.ChildRunID, st.Reconcile, st.Verifying = "", "", "", false, false
	st.SetAside()
	if rerun {
		st.Item = nil
	}
}

// Attempt is the evidence of one execution attempt (docs/semantics.md#attempt-evidence).
type Attempt struct {
	LogicalAttempt int            `json:"logical_attempt" wire:"1"`
	EngineAttempt  int            `json:"engine_attempt" wire:"2"`
	Outcome        AttemptOutcome `json:"outcome,omitempty" wire:"3"`
	Error          *StepError     `json:"error,omitempty" wire:"4"`
	StartedAt      time.Time      `json:"started_at,omitzero" wire:"5"`
	CompletedAt    time.Time      `json:"completed_at,omitzero" wire:"6"`
	WorkerID       string         `json:"worker_id,omitempty" wire:"7"`
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
	Class     definition.ErrorClass `json:"class" wire:"1"`
	Code      string                `json:"code,omitempty" wire:"2"`
	Message   string                `json:"message,omitempty" wire:"3"`
	Retryable bool                  `json:"retryable,omitempty" wire:"4"`
}

// RunError is a run's terminal failure.
type RunError struct {
	ActionID        string     `json:"action_id,omitempty" wire:"1"`
	Error           *StepError `json:"error,omitempty" wire:"2"`
	WorkflowTimeout bool       `json:"workflow_timeout,omitempty" wire:"3"`
}

// Cancellation records who cancelled a run and why (docs/semantics.md#cancellation).
type Cancellation struct {
	CancelledBy string    `json:"cancelled_by" wire:"1"`
	Reason      string    `json:"reason,omitempty" wire:"2"`
	RequestedAt time.Time `json:"requested_at" wire:"3"`
	// Compensate is set when the cancel asked for compensation (docs/semantics.md#cancel-compensation).
	Compensate bool `json:"compensate,omitempty" wire:"4"`
}

// CompensationState is a run's rollback.
type CompensationState struct {
	// Order is the steps to compensate, in reverse completion order.
	Order []string `json:"order" wire:"1"`
	// Next indexes the next step of Order to start.
	Next    int                 `json:"next" wire:"2"`
	Outcome CompensationOutcome `json:"outcome,omitempty" wire:"3"`
	// ForCancel is set when a cancel asked for this rollback: the run then
	// ends CANCELLED, not FAILED (docs/semantics.md#cancel-compensation).
	ForCancel bool `json:"for_cancel,omitempty" wire:"4"`
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
	URI       string    `json:"uri" wire:"1"`
	Kind      string    `json:"kind,omitempty" wire:"2"`
	SHA256    string    `json:"sha256,omitempty" wire:"3"`
	SizeBytes uint64    `json:"size_bytes,omitempty" wire:"4"`
	ExpiresAt time.Time `json:"expires_at,omitzero" wire:"5"`
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
