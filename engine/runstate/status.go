package runstate

// RunStatus is the canonical run status (docs/semantics.md#run-status).
type RunStatus string

// The run statuses.
const (
	RunPending      RunStatus = "PENDING"
	RunApproved     RunStatus = "APPROVED"
	RunQueued       RunStatus = "QUEUED"
	RunRunning      RunStatus = "RUNNING"
	RunBlocked      RunStatus = "BLOCKED"
	RunPaused       RunStatus = "PAUSED"
	RunCompensating RunStatus = "COMPENSATING"
	RunCompleted    RunStatus = "COMPLETED"
	RunFailed       RunStatus = "FAILED"
	RunCancelled    RunStatus = "CANCELLED"
)

// Terminal reports whether the run has ended: nothing changes it again but
// RerunRun, which takes an ended run back to RUNNING (docs/semantics.md#rerun).
func (s RunStatus) Terminal() bool {
	return s == RunCompleted || s == RunFailed || s == RunCancelled
}

// StepStatus is the canonical step (action) status.
type StepStatus string

// The step statuses.
const (
	StepPending       StepStatus = "PENDING"
	StepScheduled     StepStatus = "SCHEDULED"
	StepRunning       StepStatus = "RUNNING"
	StepWaitingManual StepStatus = "WAITING_FOR_MANUAL_COMPLETION"
	StepWaitingSignal StepStatus = "WAITING_FOR_SIGNAL"
	StepSucceeded     StepStatus = "SUCCEEDED"
	StepFailed        StepStatus = "FAILED"
	StepSkipped       StepStatus = "SKIPPED"
	StepCancelled     StepStatus = "CANCELLED"
)

// Terminal reports whether the step is done for its logical attempt. A FAILED
// step is terminal unless an operator opens a new logical attempt.
func (s StepStatus) Terminal() bool {
	return s == StepSucceeded || s == StepFailed || s == StepSkipped || s == StepCancelled
}
